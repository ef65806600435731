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

/* One voter of a static quorum (controller.quorum.voters: id@host:port). */
typedef struct bcfg_voter_s {
    int32_t id;
    char *host; /* as written, without the brackets of an IPv6 address */
    int port;
} bcfg_voter_t;

/* One controller.quorum.bootstrap.servers entry (host:port). */
typedef struct bcfg_addr_s {
    char *host;
    int port;
} bcfg_addr_t;

/* The metadata quorum as the Raft driver and the broker lifecycle read it:
 * Kafka's KRaft keys, parsed and checked. A voter set makes the quorum
 * static (kraft.version 0); without one the voters are found through the
 * bootstrap servers (a dynamic quorum). */
typedef struct bcfg_quorum_s {
    bcfg_voter_t *voters; /* controller.quorum.voters, in the order given */
    int nvoters;
    bcfg_addr_t *bootstrap; /* controller.quorum.bootstrap.servers */
    int nbootstrap;
    int32_t election_timeout_ms;     /* controller.quorum.election.timeout.ms */
    int32_t fetch_timeout_ms;        /* controller.quorum.fetch.timeout.ms */
    int32_t election_backoff_max_ms; /* controller.quorum.election.backoff.max.ms */
    int32_t request_timeout_ms;      /* controller.quorum.request.timeout.ms */
    int32_t retry_backoff_ms;        /* controller.quorum.retry.backoff.ms */
    int32_t heartbeat_interval_ms;   /* broker.heartbeat.interval.ms */
    int32_t session_timeout_ms;      /* broker.session.timeout.ms */
    int64_t snapshot_max_bytes;      /* metadata.log.max.record.bytes.between.snapshots */
    int64_t snapshot_interval_ms;    /* metadata.log.max.snapshot.interval.ms */
    int32_t max_idle_interval_ms;    /* metadata.max.idle.interval.ms */
    char *rack;                      /* broker.rack, NULL when not set */
} bcfg_quorum_t;

typedef struct broker_config_s {
    props_t props;

    bool role_broker;
    bool role_controller;
    int32_t node_id;
    char **log_dirs;
    int nlog_dirs;
    bcfg_listener_t *listeners;
    int nlisteners;
    /* advertised.listeners, or listeners. A broker registers the entries
     * that are not controller listeners; a controller advertises its
     * controller listeners from here (as Kafka does). */
    bcfg_listener_t *advertised;
    int nadvertised;
    char *controller_listener_names;
    char *inter_broker_listener_name;
    bcfg_quorum_t quorum;

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
    int64_t replica_high_watermark_checkpoint_interval_ms;
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
