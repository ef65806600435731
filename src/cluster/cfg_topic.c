/* Topic config definitions. The key names, types, defaults, ranges and
 * broker synonyms are Kafka 4.x's (checked against DescribeConfigs and
 * CreateTopics answers of Kafka 4.4); the documentation lines are ours. */
#include "cluster/cfg_topic.h"

#include <ctype.h>
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cfg_broker.h"
#include "cluster/cfg_val.h"
#include "util/compress.h"

#define NONE_MIN INT64_MIN
#define NONE_MAX INT64_MAX
#define H 3600000LL
#define M 60000LL

static const char *const cfg_policies[] = {"compact", "delete", NULL};
static const char *const cfg_codecs[] = {"uncompressed", "zstd", "lz4", "snappy", "gzip",
                                         "producer", NULL};
static const char *const cfg_ts_types[] = {"CreateTime", "LogAppendTime", NULL};

#define KEY(n, t, d, ch, lo, hi, s0, s1, s2, k1, k2, doc)                                          \
    {n, CFG_T_##t, d, ch, lo, hi, {s0, s1, s2}, {1, k1, k2}, doc}
#define KEY1(n, t, d, lo, hi, s0, doc) KEY(n, t, d, NULL, lo, hi, s0, NULL, NULL, 0, 0, doc)

static const cfg_topic_key_t cfg_topic_table[] = {
    KEY("cleanup.policy", LIST, "delete", cfg_policies, NONE_MIN, NONE_MAX, "log.cleanup.policy",
        NULL, NULL, 0, 0,
        "What happens to old segments: \"delete\" removes them by retention.ms and "
        "retention.bytes, \"compact\" keeps the latest record of every key; both may be given."),
    KEY1("compression.gzip.level", INT, "-1", -1, 9, "compression.gzip.level",
         "gzip level (1-9, or -1 for the codec's default) when compression.type is gzip."),
    KEY1("compression.lz4.level", INT, "9", 1, 17, "compression.lz4.level",
         "lz4 level (1-17) when compression.type is lz4."),
    KEY("compression.type", STRING, "producer", cfg_codecs, NONE_MIN, NONE_MAX,
        "compression.type", NULL, NULL, 0, 0,
        "Codec of the stored batches: \"producer\" keeps what the producer used, a codec name "
        "recompresses every produced batch to it, \"uncompressed\" stores them plain."),
    KEY1("compression.zstd.level", INT, "3", -131072, 22, "compression.zstd.level",
         "zstd level (-131072 to 22) when compression.type is zstd."),
    KEY1("delete.retention.ms", LONG, "86400000", 0, NONE_MAX, "log.cleaner.delete.retention.ms",
         "How long tombstones stay readable in a compacted topic."),
    KEY1("errors.deadletterqueue.group.enable", BOOLEAN, "false", NONE_MIN, NONE_MAX, NULL,
         "Whether the topic may serve as a dead-letter queue of share groups."),
    KEY1("file.delete.delay.ms", LONG, "60000", 0, NONE_MAX, "log.segment.delete.delay.ms",
         "How long a deleted segment's files stay on disk before they are removed."),
    KEY1("flush.messages", LONG, "9223372036854775807", 1, NONE_MAX,
         "log.flush.interval.messages",
         "fsync the log after this many records (the default leaves it to the OS)."),
    KEY("flush.ms", LONG, "9223372036854775807", NULL, 0, NONE_MAX, "log.flush.interval.ms",
        "log.flush.scheduler.interval.ms", NULL, 1, 0,
        "fsync the log when its oldest unsynced record is this old."),
    KEY1("follower.replication.throttled.replicas", LIST, "", NONE_MIN, NONE_MAX, NULL,
         "Replicas (partition:broker, or *) whose follower fetching is throttled."),
    KEY1("index.interval.bytes", INT, "4096", 0, NONE_MAX, "log.index.interval.bytes",
         "Bytes of log between two offset index entries."),
    KEY1("leader.replication.throttled.replicas", LIST, "", NONE_MIN, NONE_MAX, NULL,
         "Replicas (partition:broker, or *) whose leader-side replication is throttled."),
    KEY1("local.retention.bytes", LONG, "-2", -2, NONE_MAX, "log.local.retention.bytes",
         "Local size limit with tiered storage (-2 = retention.bytes)."),
    KEY1("local.retention.ms", LONG, "-2", -2, NONE_MAX, "log.local.retention.ms",
         "Local time limit with tiered storage (-2 = retention.ms)."),
    KEY1("max.compaction.lag.ms", LONG, "9223372036854775807", 1, NONE_MAX,
         "log.cleaner.max.compaction.lag.ms",
         "Longest time a record may stay uncompacted in a compacted topic."),
    KEY1("max.decompressed.message.bytes", INT, "2147483639", 1, NONE_MAX,
         "max.decompressed.message.bytes",
         "Largest decompressed size of one batch the broker accepts."),
    KEY1("max.message.bytes", INT, "1048588", 0, NONE_MAX, "message.max.bytes",
         "Largest record batch (after compression, with its log overhead) a produce may "
         "append."),
    KEY1("message.timestamp.after.max.ms", LONG, "3600000", 0, NONE_MAX,
         "log.message.timestamp.after.max.ms",
         "How far in the future a CreateTime timestamp may be."),
    KEY1("message.timestamp.before.max.ms", LONG, "9223372036854775807", 0, NONE_MAX,
         "log.message.timestamp.before.max.ms",
         "How far in the past a CreateTime timestamp may be."),
    KEY("message.timestamp.type", STRING, "CreateTime", cfg_ts_types, NONE_MIN, NONE_MAX,
        "log.message.timestamp.type", NULL, NULL, 0, 0,
        "CreateTime keeps the producer's timestamps; LogAppendTime replaces them with the "
        "broker's clock at append."),
    KEY1("min.cleanable.dirty.ratio", DOUBLE, "0.5", NONE_MIN, NONE_MAX,
         "log.cleaner.min.cleanable.ratio",
         "Share of uncompacted log that makes a compacted topic due for cleaning."),
    KEY1("min.compaction.lag.ms", LONG, "0", 0, NONE_MAX, "log.cleaner.min.compaction.lag.ms",
         "Shortest time a record stays uncompacted in a compacted topic."),
    KEY1("min.insync.replicas", INT, "1", 1, NONE_MAX, "min.insync.replicas",
         "In-sync replicas an acks=all produce needs."),
    KEY1("preallocate", BOOLEAN, "false", NONE_MIN, NONE_MAX, "log.preallocate",
         "Preallocate the file of a new segment."),
    KEY1("remote.copy.lag.bytes", LONG, "-1", -1, NONE_MAX, "log.remote.copy.lag.bytes",
         "Tiered storage: local bytes a segment waits for before upload (-1 = none)."),
    KEY1("remote.copy.lag.ms", LONG, "0", NONE_MIN, NONE_MAX, "log.remote.copy.lag.ms",
         "Tiered storage: how long a rolled segment waits before upload."),
    KEY1("remote.log.copy.disable", BOOLEAN, "false", NONE_MIN, NONE_MAX, NULL,
         "Tiered storage: stop uploading segments of this topic."),
    KEY1("remote.log.delete.on.disable", BOOLEAN, "false", NONE_MIN, NONE_MAX, NULL,
         "Tiered storage: delete the uploaded data when tiering is turned off."),
    KEY1("remote.storage.enable", BOOLEAN, "false", NONE_MIN, NONE_MAX, NULL,
         "Tiered storage for this topic (not available on this broker)."),
    KEY1("retention.bytes", LONG, "-1", NONE_MIN, NONE_MAX, "log.retention.bytes",
         "Size a partition may grow to before its oldest segments are deleted (-1 = no "
         "limit)."),
    KEY("retention.ms", LONG, "604800000", NULL, -1, NONE_MAX, "log.retention.ms",
        "log.retention.minutes", "log.retention.hours", M, H,
        "Age after which a segment is deleted, by its newest timestamp (-1 = forever)."),
    KEY1("segment.bytes", INT, "1073741824", 1048576, NONE_MAX, "log.segment.bytes",
         "Size at which the active segment is rolled."),
    KEY1("segment.index.bytes", INT, "10485760", 4, NONE_MAX, "log.index.size.max.bytes",
         "Size of the offset and time index files of a segment."),
    KEY("segment.jitter.ms", LONG, "0", NULL, 0, NONE_MAX, "log.roll.jitter.ms",
        "log.roll.jitter.hours", NULL, H, 0,
        "Random time taken off segment.ms so that segments do not all roll together."),
    KEY("segment.ms", LONG, "604800000", NULL, 1, NONE_MAX, "log.roll.ms", "log.roll.hours",
        NULL, H, 0, "Age at which the active segment is rolled even if it is not full."),
    KEY1("unclean.leader.election.enable", BOOLEAN, "false", NONE_MIN, NONE_MAX,
         "unclean.leader.election.enable",
         "Whether a replica outside the ISR may become leader, losing data."),
};

#define CFG_NTOPIC ((int)(sizeof(cfg_topic_table) / sizeof(cfg_topic_table[0])))

const cfg_topic_key_t *cfg_topic_keys(int *n)
{
    *n = CFG_NTOPIC;
    return cfg_topic_table;
}

const cfg_topic_key_t *cfg_topic_find(const char *name, size_t len)
{
    for (int i = 0; i < CFG_NTOPIC; i++)
        if (strlen(cfg_topic_table[i].name) == len && !memcmp(cfg_topic_table[i].name, name, len))
            return &cfg_topic_table[i];
    return NULL;
}

void cfg_topic_defaults(topic_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    log_config_defaults(&cfg->log);
    cfg->max_message_bytes = 1048588;
    cfg->min_insync_replicas = 1;
    cfg->ts_before_max_ms = INT64_MAX;
    cfg->ts_after_max_ms = 3600000;
    cfg->cleanup_delete = true;
    cfg->flush_messages = INT64_MAX;
    cfg->flush_ms = INT64_MAX;
    cfg->compression = TOPIC_COMPRESSION_PRODUCER;
    cfg->gzip_level = -1;
    cfg->lz4_level = 9;
    cfg->zstd_level = 3;
    cfg->min_compaction_lag_ms = 0;
    cfg->max_compaction_lag_ms = INT64_MAX;
}

/* ---- checks (values parsed by cfg_val.h, as Kafka's ConfigDef does) ---- */

/* Kafka's ThrottledReplicaListValidator: the literal "*", or elements
 * that are each empty or "<digits>:<digits>" once trimmed. */
static int cfg_throttle_ok(const char *v)
{
    if (!strcmp(v, "*"))
        return 1;
    for (const char *p = v;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p), i = 0, a = 0, b = 0;
        while (n && isspace((unsigned char)*p))
            p++, n--;
        while (n && isspace((unsigned char)p[n - 1]))
            n--;
        while (i < n && isdigit((unsigned char)p[i]))
            i++, a++;
        if (i < n && p[i] == ':')
            for (i++; i < n && isdigit((unsigned char)p[i]); i++)
                b++;
        if (n && (i != n || !a || !b))
            return 0;
        if (!e)
            return 1;
        p = e + 1;
    }
}

/* Java's list parsing: elements split on commas and trimmed; an empty
 * string is the empty list, an empty element is an error. */
static int16_t cfg_check_list(const cfg_topic_key_t *k, const char *v, char *err, size_t errlen)
{
    char why[256];
    if (!k->choices) {
        if (cfg_throttle_ok(v))
            return 0;
        snprintf(why, sizeof(why),
                 "%s must be the literal '*' or a list of replicas in the following format: "
                 "[partitionId]:[brokerId],[partitionId]:[brokerId],...",
                 k->name);
        char shown[300];
        snprintf(shown, sizeof(shown), "[%.200s]", v);
        return cfg_val_bad(err, errlen, shown, k->name, why);
    }
    if (!*v)
        return 0;
    for (const char *p = v;;) {
        const char *e = strchr(p, ',');
        size_t n = e ? (size_t)(e - p) : strlen(p);
        while (n && isspace((unsigned char)*p))
            p++, n--;
        while (n && isspace((unsigned char)p[n - 1]))
            n--;
        if (n == 0) {
            snprintf(err, errlen, "Configuration '%s' values must not be empty.", k->name);
            return KERR_INVALID_CONFIG;
        }
        if (!cfg_val_in(k->choices, p, n, 0)) {
            char item[256];
            snprintf(item, sizeof(item), "%.*s", (int)n, p);
            cfg_val_choices_text(k->choices, 0, why, sizeof(why));
            return cfg_val_bad(err, errlen, item, k->name, why);
        }
        if (!e)
            return 0;
        p = e + 1;
    }
}

static int16_t cfg_check_range(const cfg_topic_key_t *k, int64_t v, const char *raw, char *err,
                               size_t errlen)
{
    char why[96];
    if (!strcmp(k->name, "compression.gzip.level") && v != -1 && (v < 1 || v > 9))
        return cfg_val_bad(err, errlen, raw, k->name,
                           "Value must be between 1 and 9 or equal to -1");
    if (v < k->min) {
        snprintf(why, sizeof(why), "Value must be at least %" PRId64, k->min);
        return cfg_val_bad(err, errlen, raw, k->name, why);
    }
    if (v > k->max) {
        snprintf(why, sizeof(why), "Value must be no more than %" PRId64, k->max);
        return cfg_val_bad(err, errlen, raw, k->name, why);
    }
    return 0;
}

int16_t cfg_topic_check(const cfg_topic_key_t *k, const char *value, char *err, size_t errlen)
{
    char t[1024], why[256];
    int64_t l;
    int16_t e;

    if (!value) {
        snprintf(err, errlen, "Null value not supported for topic configs: %s", k->name);
        return KERR_INVALID_CONFIG;
    }
    cfg_val_trim(value, t, sizeof(t));
    switch (k->type) {
    case CFG_T_BOOLEAN:
        return cfg_val_parse_int(k->type, t, value, k->name, &l, err, errlen);
    case CFG_T_INT:
    case CFG_T_LONG:
        e = cfg_val_parse_int(k->type, t, value, k->name, &l, err, errlen);
        return e ? e : cfg_check_range(k, l, value, err, errlen);
    case CFG_T_DOUBLE: /* min.cleanable.dirty.ratio, the only one */
        return cfg_val_parse_double(t, value, k->name, 1, err, errlen);
    case CFG_T_LIST:
        return cfg_check_list(k, t, err, errlen);
    default:
        if (k->choices && !cfg_val_in(k->choices, t, strlen(t), 0)) {
            cfg_val_choices_text(k->choices, 0, why, sizeof(why));
            return cfg_val_bad(err, errlen, value, k->name, why);
        }
        return 0;
    }
}

static int8_t cfg_codec_of(const char *s)
{
    static const struct {
        const char *name;
        int8_t codec;
    } map[] = {{"uncompressed", COMPRESS_NONE}, {"gzip", COMPRESS_GZIP},
               {"snappy", COMPRESS_SNAPPY},     {"lz4", COMPRESS_LZ4},
               {"zstd", COMPRESS_ZSTD}};
    for (size_t i = 0; i < sizeof(map) / sizeof(map[0]); i++)
        if (!strcmp(s, map[i].name))
            return map[i].codec;
    return TOPIC_COMPRESSION_PRODUCER;
}

static void cfg_apply_policy(topic_cfg_t *cfg, const char *v)
{
    cfg->compacted = strstr(v, "compact") != NULL;
    cfg->cleanup_delete = strstr(v, "delete") != NULL;
}

/* Fields that are not numbers; returns 1 if k was one of them. */
static int cfg_apply_text(topic_cfg_t *cfg, const char *name, const char *t)
{
    if (!strcmp(name, "cleanup.policy"))
        cfg_apply_policy(cfg, t);
    else if (!strcmp(name, "compression.type"))
        cfg->compression = cfg_codec_of(t);
    else if (!strcmp(name, "message.timestamp.type"))
        cfg->log.timestamp_type = strcmp(t, "LogAppendTime") == 0;
    else if (!strcmp(name, "remote.storage.enable"))
        cfg->remote_storage = strcasecmp(t, "true") == 0;
    else
        return 0;
    return 1;
}

void cfg_topic_apply(topic_cfg_t *cfg, const cfg_topic_key_t *k, const char *value)
{
    char t[1024];
    int64_t v;
    const char *n = k->name;

    cfg_val_trim(value, t, sizeof(t));
    if (cfg_apply_text(cfg, n, t) || cfg_val_long(t, &v) < 0)
        return;
    if (!strcmp(n, "segment.bytes"))
        cfg->log.segment_bytes = v;
    else if (!strcmp(n, "segment.ms"))
        cfg->log.segment_ms = v;
    else if (!strcmp(n, "retention.ms"))
        cfg->log.retention_ms = v;
    else if (!strcmp(n, "retention.bytes"))
        cfg->log.retention_bytes = v;
    else if (!strcmp(n, "index.interval.bytes"))
        cfg->log.index_interval_bytes = (int32_t)v;
    else if (!strcmp(n, "segment.index.bytes"))
        cfg->log.segment_index_bytes = (int32_t)v;
    else if (!strcmp(n, "file.delete.delay.ms"))
        cfg->log.file_delete_delay_ms = v;
    else if (!strcmp(n, "flush.messages"))
        cfg->log.flush_messages = cfg->flush_messages = v;
    else if (!strcmp(n, "flush.ms"))
        cfg->log.flush_ms = cfg->flush_ms = v;
    else if (!strcmp(n, "max.message.bytes"))
        cfg->max_message_bytes = (int32_t)v;
    else if (!strcmp(n, "min.insync.replicas"))
        cfg->min_insync_replicas = (int32_t)v;
    else if (!strcmp(n, "message.timestamp.before.max.ms"))
        cfg->ts_before_max_ms = v;
    else if (!strcmp(n, "message.timestamp.after.max.ms"))
        cfg->ts_after_max_ms = v;
    else if (!strcmp(n, "compression.gzip.level"))
        cfg->gzip_level = (int32_t)v;
    else if (!strcmp(n, "compression.lz4.level"))
        cfg->lz4_level = (int32_t)v;
    else if (!strcmp(n, "compression.zstd.level"))
        cfg->zstd_level = (int32_t)v;
    else if (!strcmp(n, "min.compaction.lag.ms"))
        cfg->min_compaction_lag_ms = v;
    else if (!strcmp(n, "max.compaction.lag.ms"))
        cfg->max_compaction_lag_ms = v;
}

void cfg_topic_build(topic_cfg_t *out, const topic_cfg_t *base, const mi_config_t *dyn)
{
    char err[256];
    *out = *base;
    for (int i = 0; dyn && i < dyn->n; i++) {
        const cfg_topic_key_t *k = cfg_topic_find(dyn->v[i].key, strlen(dyn->v[i].key));
        if (k && cfg_topic_check(k, dyn->v[i].value, err, sizeof(err)) == 0)
            cfg_topic_apply(out, k, dyn->v[i].value);
    }
}

int16_t cfg_topic_check_all(const topic_cfg_t *cfg, char *err, size_t errlen)
{
    if (cfg->min_compaction_lag_ms > cfg->max_compaction_lag_ms) {
        snprintf(err, errlen,
                 "conflict topic config setting min.compaction.lag.ms (%" PRId64
                 ") > max.compaction.lag.ms (%" PRId64 ")",
                 cfg->min_compaction_lag_ms, cfg->max_compaction_lag_ms);
        return KERR_INVALID_CONFIG;
    }
    if (cfg->remote_storage) {
        snprintf(err, errlen, "Tiered Storage functionality is disabled in the broker. Topic "
                              "cannot be configured with remote log storage.");
        return KERR_INVALID_CONFIG;
    }
    return 0;
}

void cfg_topic_log_config(const topic_cfg_t *cfg, log_config_t *out)
{
    *out = cfg->log;
    if (!cfg->cleanup_delete) {
        out->retention_ms = -1;
        out->retention_bytes = -1;
    }
}

/* ---- DescribeConfigs ---- */

const char *cfg_props_peek(const props_t *props, const char *key)
{
    for (int i = 0; props && i < props->n; i++)
        if (!strcmp(props->v[i].key, key))
            return props->v[i].value;
    return NULL;
}

/* A key's value in its own unit from broker synonym i: hours and minutes
 * scaled to ms, numbers as Kafka prints them. NULL if it does not parse. */
static const char *cfg_topic_scaled(const cfg_topic_key_t *k, int i, const char *v, char *buf,
                                    size_t cap)
{
    char t[256];
    int64_t n, sc = k->syn_scale[i] > 1 ? k->syn_scale[i] : 1;

    cfg_val_trim(v, t, sizeof(t));
    if (k->type != CFG_T_INT && k->type != CFG_T_LONG) {
        snprintf(buf, cap, "%s", t);
        return buf;
    }
    if (cfg_val_long(t, &n) < 0)
        return NULL;
    if (sc > 1)
        n = n < 0 ? -1 : n > INT64_MAX / sc ? INT64_MAX : n * sc;
    snprintf(buf, cap, "%" PRId64, n);
    return buf;
}

/* The value the broker's layers give the key: its first synonym set. */
static const char *cfg_topic_from_broker(const cfg_topic_key_t *k, const cfg_bview_t *bv,
                                         char *buf, size_t cap)
{
    for (int i = 0; bv && i < 3 && k->syn[i]; i++) {
        const char *v = cfg_bview_set(bv, k->syn[i], NULL);
        if (v)
            return cfg_topic_scaled(k, i, v, buf, cap);
    }
    return NULL;
}

void cfg_topic_resolve(const cfg_topic_key_t *k, const mi_config_t *dyn, const cfg_bview_t *bv,
                       cfg_resolved_t *out)
{
    static const cfg_bview_t none = {NULL, NULL, NULL};
    const char *v = NULL;

    memset(out, 0, sizeof(*out));
    out->name = k->name;
    out->type = k->type;
    out->doc = k->doc;
    for (int i = 0; dyn && i < dyn->n; i++)
        if (!strcmp(dyn->v[i].key, k->name))
            v = dyn->v[i].value;
    if (v) {
        out->syn[0].name = k->name;
        out->syn[0].value = v;
        out->syn[0].source = CFG_SRC_DYNAMIC_TOPIC;
        out->nsyn = 1;
    }
    if (k->syn[0]) {
        const char *names[3];
        int n = cfg_broker_synonyms(k->syn[0], names);
        cfg_broker_synlist(bv ? bv : &none, k->syn[0], names, n, true, false, out);
    }
    out->source = out->nsyn ? out->syn[0].source : CFG_SRC_DEFAULT;
    if (!v)
        v = cfg_topic_from_broker(k, bv, out->scaled, sizeof(out->scaled));
    out->value = v ? v : k->dflt;
}

/* ---- the broker's topic defaults, and diffs ---- */

void cfg_topic_apply_broker(topic_cfg_t *cfg, const cfg_bview_t *bv)
{
    char err[256], val[256], t[64];
    const char *v;
    int64_t n;

    for (int i = 0; i < CFG_NTOPIC; i++) {
        const cfg_topic_key_t *k = &cfg_topic_table[i];
        for (int s = 0; s < 3 && k->syn[s]; s++) {
            if (!(v = cfg_bview_set(bv, k->syn[s], NULL)))
                continue;
            v = cfg_topic_scaled(k, s, v, val, sizeof(val));
            if (v && cfg_topic_check(k, v, err, sizeof(err)) == 0)
                cfg_topic_apply(cfg, k, v);
            break;
        }
    }
    v = cfg_bview_set(bv, "producer.id.expiration.ms", NULL);
    if (v && cfg_val_long(cfg_val_trim(v, t, sizeof(t)), &n) == 0 && n >= 1 && n <= INT32_MAX)
        cfg->log.producer_id_expiration_ms = (int32_t)n;
}

void cfg_topic_apply_static(topic_cfg_t *cfg, const props_t *props)
{
    cfg_bview_t bv = {NULL, NULL, props};
    cfg_topic_apply_broker(cfg, &bv);
}

static int cfg_diff_i64(cfg_kv_t *out, int n, int max, const char *key, int64_t a, int64_t b)
{
    if (a == b || n >= max)
        return n;
    out[n].key = key;
    snprintf(out[n].value, sizeof(out[n].value), "%" PRId64, b);
    return n + 1;
}

static int cfg_diff_str(cfg_kv_t *out, int n, int max, const char *key, const char *a,
                        const char *b)
{
    if (!strcmp(a, b) || n >= max)
        return n;
    out[n].key = key;
    snprintf(out[n].value, sizeof(out[n].value), "%s", b);
    return n + 1;
}

static const char *cfg_policy_text(const topic_cfg_t *c)
{
    if (c->compacted && c->cleanup_delete)
        return "compact,delete";
    return c->compacted ? "compact" : c->cleanup_delete ? "delete" : "";
}

static const char *cfg_codec_text(int8_t codec)
{
    static const char *const names[] = {"uncompressed", "gzip", "snappy", "lz4", "zstd"};
    return codec >= 0 && codec <= 4 ? names[codec] : "producer";
}

int cfg_topic_diff(const topic_cfg_t *a, const topic_cfg_t *b, cfg_kv_t *out, int max)
{
    int n = 0;
    n = cfg_diff_str(out, n, max, "cleanup.policy", cfg_policy_text(a), cfg_policy_text(b));
    n = cfg_diff_str(out, n, max, "compression.type", cfg_codec_text(a->compression),
                     cfg_codec_text(b->compression));
    n = cfg_diff_str(out, n, max, "message.timestamp.type",
                     a->log.timestamp_type ? "LogAppendTime" : "CreateTime",
                     b->log.timestamp_type ? "LogAppendTime" : "CreateTime");
#define D(key, f) n = cfg_diff_i64(out, n, max, key, (int64_t)a->f, (int64_t)b->f)
    D("segment.bytes", log.segment_bytes);
    D("segment.ms", log.segment_ms);
    D("retention.ms", log.retention_ms);
    D("retention.bytes", log.retention_bytes);
    D("index.interval.bytes", log.index_interval_bytes);
    D("segment.index.bytes", log.segment_index_bytes);
    D("file.delete.delay.ms", log.file_delete_delay_ms);
    D("flush.messages", flush_messages);
    D("flush.ms", flush_ms);
    D("max.message.bytes", max_message_bytes);
    D("min.insync.replicas", min_insync_replicas);
    D("message.timestamp.before.max.ms", ts_before_max_ms);
    D("message.timestamp.after.max.ms", ts_after_max_ms);
    D("compression.gzip.level", gzip_level);
    D("compression.lz4.level", lz4_level);
    D("compression.zstd.level", zstd_level);
    D("min.compaction.lag.ms", min_compaction_lag_ms);
    D("max.compaction.lag.ms", max_compaction_lag_ms);
#undef D
    return n;
}
