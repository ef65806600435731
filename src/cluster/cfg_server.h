/* The server's configuration as parsed from server.properties (Kafka's
 * keys, defaults and meanings; src/cluster/cfg_broker_table.c has every
 * key): the types only, so that every layer may read the configuration
 * the broker layer parses (src/broker/broker_config.h). */
#ifndef STRAND_CLUSTER_CFG_SERVER_H
#define STRAND_CLUSTER_CFG_SERVER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/props.h"

typedef struct bcfg_listener_s {
    char *name;      /* listener name in upper case, e.g. PLAINTEXT, CONTROLLER */
    char *host;      /* "" means all interfaces */
    int port;
    char *protocol;  /* security protocol from listener.security.protocol.map */
    bool controller; /* one of controller.listener.names */
} bcfg_listener_t;

typedef struct broker_config_s {
    props_t props;

    bool role_broker;
    bool role_controller;
    int32_t node_id;
    char **log_dirs;
    int nlog_dirs;
    bcfg_listener_t *listeners;
    int nlisteners;
    bcfg_listener_t *advertised; /* advertised.listeners, or listeners */
    int nadvertised;
    char *controller_listener_names;
    char *inter_broker_listener_name;

    int32_t num_partitions;
    int32_t num_io_threads; /* produce validation threads, at most one per CPU */
    int32_t default_replication_factor;
    bool auto_create_topics_enable;
    bool delete_topic_enable;
    int32_t socket_request_max_bytes;
    int32_t socket_send_buffer_bytes;
    int32_t socket_receive_buffer_bytes;
    int64_t connections_max_idle_ms;
    int32_t max_connections;

    int32_t message_max_bytes;
    int64_t log_segment_bytes;
    int64_t log_roll_ms;
    int64_t log_retention_ms;
    int64_t log_retention_bytes;
    int64_t log_retention_check_interval_ms;
    int32_t log_index_interval_bytes;
    int32_t log_index_size_max_bytes;
    int64_t log_flush_interval_messages;
    int64_t log_flush_interval_ms;
    int64_t log_flush_scheduler_interval_ms;
    int64_t log_flush_offset_checkpoint_interval_ms;
    int64_t log_segment_delete_delay_ms;
    bool log_message_timestamp_log_append;
    int64_t log_message_timestamp_before_max_ms;
    int64_t log_message_timestamp_after_max_ms;
    int32_t min_insync_replicas;
    char *compression_type;
    char *log_cleanup_policy;
    int32_t producer_id_expiration_ms;
    int32_t transactional_id_expiration_ms;
    int64_t group_initial_rebalance_delay_ms;
    int32_t offsets_topic_num_partitions;
    int32_t max_incremental_fetch_session_cache_slots;
    int32_t log_level; /* lg_level; strand-only key "log.level" */
    /* While a dynamic change is checked (broker_config_check): where the
     * first reason for a refusal goes instead of the log. */
    char *err;
    size_t errlen;
} broker_config_t;

#endif
