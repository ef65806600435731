/* Topic configs: every key Kafka 4.x defines for a topic, with its type,
 * default, validation and broker-level synonyms; the parsed form the
 * produce path and the logs use (topic_cfg_t); and the resolution of a
 * key's value and source for DescribeConfigs.
 *
 * A topic's effective config is: the broker's defaults (server.properties
 * and the dynamic broker configs, computed into a topic_cfg_t),
 * overridden by the topic's dynamic configs (ConfigRecords in the
 * metadata log). */
#ifndef STRAND_CLUSTER_CFG_TOPIC_H
#define STRAND_CLUSTER_CFG_TOPIC_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/cfg_broker.h"
#include "cluster/cfg_def.h"
#include "cluster/meta_image.h"
#include "log/log.h"
#include "util/props.h"

/* compression.type = producer: batches are kept as the producer sent
 * them. Other values are codec ids (util/compress.h; 0 = uncompressed). */
#define TOPIC_COMPRESSION_PRODUCER (-1)

/* Topic-level settings beyond the log's own. */
typedef struct topic_cfg_s {
    log_config_t log;            /* as configured; see cfg_topic_log_config */
    int32_t max_message_bytes;   /* max.message.bytes */
    int32_t min_insync_replicas; /* min.insync.replicas */
    int64_t ts_before_max_ms;    /* message.timestamp.before.max.ms */
    int64_t ts_after_max_ms;     /* message.timestamp.after.max.ms */
    bool compacted;              /* cleanup.policy has compact */
    bool cleanup_delete;         /* cleanup.policy has delete */
    int64_t flush_messages;      /* flush.messages */
    int64_t flush_ms;            /* flush.ms */
    int8_t compression;          /* compression.type: codec or _PRODUCER */
    int32_t gzip_level;          /* compression.gzip.level (-1 = default) */
    int32_t lz4_level;           /* compression.lz4.level */
    int32_t zstd_level;          /* compression.zstd.level */
    int64_t min_compaction_lag_ms; /* min.compaction.lag.ms */
    int64_t max_compaction_lag_ms; /* max.compaction.lag.ms */
    bool remote_storage;         /* remote.storage.enable */
} topic_cfg_t;

typedef struct cfg_topic_key_s {
    const char *name;
    int8_t type;               /* enum cfg_type */
    const char *dflt;          /* Kafka's default at topic level */
    const char *const *choices; /* allowed strings (STRING, LIST), or NULL */
    int64_t min, max;          /* range for INT/LONG (INT64_MIN/MAX = none) */
    /* Broker keys that set this key's default, in precedence order, and
     * what one unit of each is in the topic key's unit (hours -> ms). */
    const char *syn[3];
    int64_t syn_scale[3];
    const char *doc;
} cfg_topic_key_t;

/* The table, in name order; *n gets its length. */
const cfg_topic_key_t *cfg_topic_keys(int *n);
/* NULL when Kafka defines no topic key of that name. */
const cfg_topic_key_t *cfg_topic_find(const char *name, size_t len);

/* Kafka's defaults (what a topic has with an empty server.properties). */
void cfg_topic_defaults(topic_cfg_t *cfg);

/* Checks one value (NULL = null) as Kafka's ConfigDef does: trimmed, then
 * parsed by type, then the range or choices. Returns 0, or INVALID_CONFIG
 * (40) with Kafka's message in err. */
int16_t cfg_topic_check(const cfg_topic_key_t *k, const char *value, char *err, size_t errlen);

/* Sets the field(s) of cfg for a value that passed cfg_topic_check. */
void cfg_topic_apply(topic_cfg_t *cfg, const cfg_topic_key_t *k, const char *value);

/* Applies a resource's dynamic configs (NULL = none) to a copy of base;
 * keys that are unknown or invalid are skipped. */
void cfg_topic_build(topic_cfg_t *out, const topic_cfg_t *base, const mi_config_t *dyn);

/* Checks that hold between keys (min.compaction.lag.ms <= max.compaction.
 * lag.ms; no tiered storage on this broker). Returns 0 or INVALID_CONFIG
 * with the message in err. */
int16_t cfg_topic_check_all(const topic_cfg_t *cfg, char *err, size_t errlen);

/* Applies the broker keys that set topic defaults, as the broker's layers
 * bv give them (its dynamic configs over server.properties), converted to
 * the topic keys' units, to cfg: the first synonym of each key that is set
 * and valid wins, as in Kafka. producer.id.expiration.ms, a broker key
 * every log runs with, too. */
void cfg_topic_apply_broker(topic_cfg_t *cfg, const cfg_bview_t *bv);
/* The same with server.properties alone. */
void cfg_topic_apply_static(topic_cfg_t *cfg, const props_t *props);

/* A key and a value rendered into the entry itself. */
typedef struct cfg_kv_s {
    const char *key;
    char value[32];
} cfg_kv_t;

/* The topic keys whose topic_cfg_t field differs between base and cfg,
 * rendered as Kafka values (at most max). Returns the count. For callers
 * that build a topic_cfg_t in code and need it persisted as configs. */
int cfg_topic_diff(const topic_cfg_t *base, const topic_cfg_t *cfg, cfg_kv_t *out, int max);

/* The log_config_t the topic's logs run with: as configured, except that
 * retention is off when cleanup.policy does not include delete. */
void cfg_topic_log_config(const topic_cfg_t *cfg, log_config_t *out);

/* Where a key's value comes from, for DescribeConfigs: the topic's dynamic
 * configs (dyn, NULL = none), then the broker's layers bv (NULL = none):
 * its synonyms as Kafka lists them (cfg_broker_synlist). The value is the
 * topic's own, else the first broker synonym set (hours and minutes in
 * ms), else Kafka's default. out's strings point into the table, dyn, bv's
 * layers or out itself. */
void cfg_topic_resolve(const cfg_topic_key_t *k, const mi_config_t *dyn, const cfg_bview_t *bv,
                       cfg_resolved_t *out);

/* A key of props, without marking it used (props_get would). */
const char *cfg_props_peek(const props_t *props, const char *key);

#endif
