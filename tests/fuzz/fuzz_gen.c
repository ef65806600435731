/* Random valid requests from the codec's descriptor tables. The field's
 * struct and name pick a "hint" (what the value means to the broker);
 * the hint picks the distribution. Unknown fields get small integers,
 * limits and short random strings, which is what a hand-written
 * generator would do for them anyway. */
#include "fuzz/fuzz_gen.h"

#include <stdlib.h>
#include <string.h>

#include "log/log_batch.h"
#include "util/compress.h"
#include "util/mem.h"

enum fuzz_hint {
    H_NONE,
    H_TOPIC,
    H_GROUP,
    H_MEMBER,
    H_INSTANCE,
    H_CFG_KEY,
    H_CFG_VALUE,
    H_RESOURCE_NAME,
    H_PARTITION,
    H_TIMEOUT,
    H_OFFSET,
    H_ACKS,
    H_REPLICA,
    H_NPARTS,
    H_RF,
    H_PRODUCER_ID,
    H_EPOCH,
    H_BYTES_LIMIT,
    H_RES_TYPE,
    H_CFG_OP,
    H_ISOLATION,
    H_PROTO_TYPE,
    H_PROTO_NAME,
    H_CLIENT_SW,
    H_TXN_ID,
    H_BROKER_ID,
    H_SESSION_ID,
    H_KEY_TYPE,
    H_NULLISH,      /* rack, reason, cluster id: null or short */
    H_SUBSCRIPTION, /* JoinGroup protocol metadata */
    H_ASSIGNMENT,   /* SyncGroup assignment */
};

/* What a field means, from its name (exact, or a part of it when exact
 * is 0) and a part of its struct's name (NULL: any struct). The first
 * matching row wins, so the narrower rows come first. */
static const struct {
    const char *st, *field;
    int exact, hint;
} fuzz_hints[] = {
    { "Config", "Name", 1, H_CFG_KEY },
    { NULL, "ConfigurationKeys", 1, H_CFG_KEY },
    { "Config", "Value", 1, H_CFG_VALUE },
    { NULL, "ResourceName", 1, H_RESOURCE_NAME },
    { NULL, "Topic", 1, H_TOPIC },
    { NULL, "TopicNames", 1, H_TOPIC },
    { "Topic", "Name", 1, H_TOPIC },
    { "Protocol", "Name", 1, H_PROTO_NAME },
    { "Protocol", "Metadata", 1, H_SUBSCRIPTION },
    { NULL, "GroupId", 1, H_GROUP },
    { NULL, "Groups", 1, H_GROUP },
    { NULL, "GroupsNames", 1, H_GROUP },
    { NULL, "CoordinatorKeys", 1, H_GROUP },
    { "FindCoordinator", "Key", 1, H_GROUP },
    { NULL, "MemberId", 1, H_MEMBER },
    { NULL, "GroupInstanceId", 1, H_INSTANCE },
    { NULL, "PartitionIndex", 1, H_PARTITION },
    { NULL, "Partition", 1, H_PARTITION },
    { NULL, "Index", 1, H_PARTITION },
    { NULL, "Partitions", 1, H_PARTITION },
    { NULL, "PartitionIndexes", 1, H_PARTITION },
    { NULL, "TimeoutMs", 0, H_TIMEOUT },
    { NULL, "MaxWaitMs", 1, H_TIMEOUT },
    { NULL, "Offset", 0, H_OFFSET },
    { NULL, "Timestamp", 0, H_OFFSET },
    { NULL, "RetentionTimeMs", 1, H_OFFSET },
    { NULL, "Acks", 1, H_ACKS },
    { NULL, "ReplicaId", 1, H_REPLICA },
    { NULL, "NumPartitions", 1, H_NPARTS },
    { NULL, "Count", 1, H_NPARTS },
    { NULL, "MaxNumOffsets", 1, H_NPARTS },
    { NULL, "ReplicationFactor", 1, H_RF },
    { NULL, "ProducerId", 1, H_PRODUCER_ID },
    { NULL, "Epoch", 0, H_EPOCH },
    { NULL, "GenerationId", 0, H_EPOCH },
    { NULL, "Bytes", 0, H_BYTES_LIMIT },
    { NULL, "ResourceType", 1, H_RES_TYPE },
    { NULL, "ConfigOperation", 1, H_CFG_OP },
    { NULL, "IsolationLevel", 1, H_ISOLATION },
    { NULL, "EndpointType", 1, H_ISOLATION },
    { NULL, "ProtocolType", 1, H_PROTO_TYPE },
    { NULL, "ProtocolName", 1, H_PROTO_NAME },
    { NULL, "ClientSoftware", 0, H_CLIENT_SW },
    { NULL, "TransactionalId", 1, H_TXN_ID },
    { NULL, "BrokerIds", 1, H_BROKER_ID },
    { NULL, "SessionId", 1, H_SESSION_ID },
    { NULL, "KeyType", 1, H_KEY_TYPE },
    { NULL, "RackId", 1, H_NULLISH },
    { NULL, "Reason", 1, H_NULLISH },
    { NULL, "ClusterId", 1, H_NULLISH },
    { NULL, "CommittedMetadata", 1, H_NULLISH },
    { NULL, "Assignment", 1, H_ASSIGNMENT },
};

static int fuzz_hint(const proto_struct_t *st, const proto_field_t *f)
{
    for (size_t i = 0; i < sizeof(fuzz_hints) / sizeof(fuzz_hints[0]); i++) {
        const char *want = fuzz_hints[i].field;
        if (fuzz_hints[i].st && !strstr(st->name, fuzz_hints[i].st))
            continue;
        if (fuzz_hints[i].exact ? !strcmp(f->name, want) : strstr(f->name, want) != NULL)
            return fuzz_hints[i].hint;
    }
    return H_NONE;
}

/* ---- pools ---- */

static const char *const fuzz_odd_topics[] = {
    "", ".", "..", "../escape", "a/b", "with space", "tab\there", "nul\0in",
    "__consumer_offsets", "__transaction_state", "__cluster_metadata",
    "fuzz.dot", "fuzz_dot", "-", "_", "t\xc3\xb6pic", "%s%n%x", "topic\n",
};

static const char *const fuzz_cfg_keys[] = {
    "cleanup.policy", "compression.type", "retention.ms", "retention.bytes",
    "segment.bytes", "segment.ms", "max.message.bytes", "min.insync.replicas",
    "message.timestamp.type", "message.timestamp.before.max.ms",
    "message.timestamp.after.max.ms", "flush.messages", "flush.ms",
    "segment.index.bytes", "delete.retention.ms", "file.delete.delay.ms",
    "unclean.leader.election.enable", "log.retention.ms", "log.retention.bytes",
    "log.segment.bytes", "num.partitions", "log.cleaner.threads", "log.flush.interval.ms",
    "message.max.bytes", "auto.create.topics.enable", "no.such.key", "",
    "segment.jitter.ms", "index.interval.bytes", "min.compaction.lag.ms",
    "max.compaction.lag.ms", "local.retention.ms", "local.retention.bytes",
    "min.cleanable.dirty.ratio", "preallocate", "log.segment.delete.delay.ms",
    "log.roll.ms", "log.roll.jitter.ms", "log.flush.interval.ms", "log.flush.interval.messages",
    "log.message.timestamp.before.max.ms", "log.message.timestamp.after.max.ms",
    "log.cleanup.policy", "log.index.interval.bytes", "log.retention.minutes",
    "log.retention.hours", "compression.gzip.level", "compression.zstd.level",
    "compression.lz4.level", "log.local.retention.ms",
};

static const char *const fuzz_cfg_values[] = {
    "0", "1", "-1", "-2", "100", "1024", "1048576", "9223372036854775807",
    "9223372036854775808", "2147483648", "delete", "compact", "compact,delete",
    "gzip", "snappy", "lz4", "zstd", "producer", "uncompressed", "CreateTime",
    "LogAppendTime", "true", "false", "", " ", "1e3", "0x10", "abc", "14",
    "-9223372036854775808", "2147483647", "-2147483648", "0.5", "NaN", "1.7976931348623157E309",
};

static const char *const fuzz_members[] = {
    "", "member-1", "strand-fuzz-0-0000", "consumer-1-a", "x",
};

int64_t fuzz_gen_interesting(fuzz_gen_t *g, int width)
{
    static const int64_t v[] = {
        0, 1, -1, 2, -2, 16, 127, 128, 255, 256, 32767, -32768, 65535, 65536,
        2147483647LL, -2147483647LL - 1, 4294967295LL, INT64_MAX, INT64_MIN,
        1LL << 40, 1000, 100000,
    };
    int64_t x = v[fuzz_below(&g->rng, sizeof(v) / sizeof(v[0]))];
    switch (width) {
    case 1: return (int8_t)x;
    case 2: return (int16_t)x;
    case 4: return (int32_t)x;
    default: return x;
    }
}

uint8_t *fuzz_gen_bytes(fuzz_gen_t *g, size_t n)
{
    uint8_t *p = arena_alloc(g->arena, n + 1);
    for (size_t i = 0; i < n; i++)
        p[i] = (uint8_t)fuzz_rand(&g->rng);
    return p;
}

static proto_str_t fuzz_cstr(const char *s)
{
    return (proto_str_t){ s, (int32_t)strlen(s) };
}

/* Printable junk, now and then long. */
static proto_str_t fuzz_gen_junk(fuzz_gen_t *g)
{
    static const char cs[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-";
    uint32_t r = fuzz_below(&g->rng, 100);
    int32_t n = r < 80 ? (int32_t)fuzz_below(&g->rng, 12) : r < 97 ? 200 + (int32_t)fuzz_below(&g->rng, 100)
                                                                   : 2000 + (int32_t)fuzz_below(&g->rng, 3000);
    char *p = arena_alloc(g->arena, (size_t)n + 1);
    for (int32_t i = 0; i < n; i++)
        p[i] = cs[fuzz_below(&g->rng, sizeof(cs) - 1)];
    p[n] = 0;
    return (proto_str_t){ p, n };
}

proto_str_t fuzz_gen_topic(fuzz_gen_t *g)
{
    proto_str_t s;
    uint32_t r = fuzz_below(&g->rng, 100);
    if (g->ntopics && r < 75) {
        s = fuzz_cstr(g->topics[fuzz_below(&g->rng, (uint32_t)g->ntopics)]);
    } else if (r < 88) {
        size_t i = fuzz_below(&g->rng, sizeof(fuzz_odd_topics) / sizeof(fuzz_odd_topics[0]));
        s = fuzz_cstr(fuzz_odd_topics[i]);
        if (i == 7)
            s.len = 6; /* "nul\0in": the NUL is part of the name */
    } else if (r < 94) {
        /* 249 is Kafka's longest legal name; 250+ must be refused */
        int32_t n = 245 + (int32_t)fuzz_below(&g->rng, 10);
        char *p = arena_alloc(g->arena, (size_t)n + 1);
        memset(p, 'x', (size_t)n);
        p[n] = 0;
        s = (proto_str_t){ p, n };
    } else {
        s = fuzz_gen_junk(g);
    }
    if (g->avoid && s.len == (int32_t)strlen(g->avoid) && !memcmp(s.p, g->avoid, (size_t)s.len))
        s = PROTO_STR("fuzz-avoided");
    return s;
}

static proto_str_t fuzz_pick(fuzz_gen_t *g, const char *const *v, size_t n)
{
    return fuzz_cstr(v[fuzz_below(&g->rng, (uint32_t)n)]);
}

#define FUZZ_PICK(g, arr) fuzz_pick((g), (arr), sizeof(arr) / sizeof((arr)[0]))

/* ---- embedded formats: records and the consumer protocol ---- */

/* Odd timestamps: limits, and the extremes Kafka's default window
 * accepts (message.timestamp.before.max.ms is Long.MAX_VALUE, so the
 * oldest is now - Long.MAX_VALUE; after.max.ms is one hour). */
static int64_t fuzz_gen_timestamp(fuzz_gen_t *g)
{
    switch (fuzz_below(&g->rng, 4)) {
    case 0: return g->now_ms - INT64_MAX + (int64_t)fuzz_below(&g->rng, 3);
    case 1: return g->now_ms + 3600000 - (int64_t)fuzz_below(&g->rng, 3);
    case 2: return (int64_t)fuzz_below(&g->rng, 3) - 2;
    default: return fuzz_gen_interesting(g, 8);
    }
}

void fuzz_gen_batch(fuzz_gen_t *g, buf_t *out)
{
    log_batch_build_t opt;
    log_record_t recs[5];
    buf_t hdrs[5];
    int n = 1 + (int)fuzz_below(&g->rng, 5);

    log_batch_build_init(&opt);
    uint32_t c = fuzz_below(&g->rng, 100);
    opt.attributes = (int16_t)(c < 70 ? 0 : 1 + c % 4);
    if (fuzz_chance(&g->rng, 15)) {
        opt.producer_id = (int64_t)fuzz_below(&g->rng, 4);
        opt.producer_epoch = (int16_t)fuzz_below(&g->rng, 2);
        opt.base_sequence = (int32_t)fuzz_below(&g->rng, 3);
        if (fuzz_chance(&g->rng, 30))
            opt.attributes |= LOG_BATCH_ATTR_TRANSACTIONAL;
    }
    for (int i = 0; i < n; i++) {
        log_record_t *r = &recs[i];
        memset(r, 0, sizeof(*r));
        buf_init(&hdrs[i]);
        r->timestamp = fuzz_chance(&g->rng, 90) ? g->now_ms - (int64_t)fuzz_below(&g->rng, 10000)
                                                : fuzz_gen_timestamp(g);
        r->key_len = fuzz_chance(&g->rng, 30) ? -1 : (int32_t)fuzz_below(&g->rng, 16);
        r->key = r->key_len > 0 ? fuzz_gen_bytes(g, (size_t)r->key_len) : NULL;
        r->value_len = fuzz_chance(&g->rng, 10) ? -1 : (int32_t)fuzz_below(&g->rng, 200);
        r->value = r->value_len > 0 ? fuzz_gen_bytes(g, (size_t)r->value_len) : NULL;
        if (fuzz_chance(&g->rng, 20)) {
            r->headers_count = 1 + (int32_t)fuzz_below(&g->rng, 2);
            for (int h = 0; h < r->headers_count; h++)
                log_record_put_header(&hdrs[i], "h", 1, "v", fuzz_chance(&g->rng, 20) ? -1 : 1);
            r->headers = hdrs[i].p;
            r->headers_len = hdrs[i].len;
        }
    }
    if (log_batch_build(out, &opt, recs, n) < 0) {
        opt.attributes = 0;
        log_batch_build(out, &opt, recs, n);
    }
    for (int i = 0; i < n; i++)
        buf_free(&hdrs[i]);
}

/* A batch whose payload inflates to 96 MiB of zeros (zstd or gzip):
 * above the 64 MiB the broker decompresses for a default topic. The
 * frames are made once per process. */
static void fuzz_gen_bomb(fuzz_gen_t *g, buf_t *out)
{
    static buf_t frames[2];
    static int made;
    static const int codecs[2] = { LOG_BATCH_CODEC_ZSTD, LOG_BATCH_CODEC_GZIP };
    log_batch_build_t opt;
    log_record_t rec = { 0 };
    if (!made) {
        size_t n = (size_t)96 << 20;
        uint8_t *zeros = xcalloc(1, n);
        for (int i = 0; i < 2; i++) {
            buf_init(&frames[i]);
            compress_compress(codecs[i], 0, zeros, n, &frames[i]);
        }
        free(zeros);
        made = 1;
    }
    int i = (int)fuzz_below(&g->rng, 2);
    size_t start = out->len;
    log_batch_build_init(&opt);
    opt.attributes = (int16_t)codecs[i];
    rec.timestamp = g->now_ms;
    rec.key_len = rec.value_len = -1;
    log_batch_build(out, &opt, &rec, 1);
    out->len = start + LOG_BATCH_HDR_SIZE; /* the records: the bomb instead */
    buf_put(out, frames[i].p, frames[i].len);
    buf_set_i32(out, start + LOG_BATCH_OFF_LENGTH, (int32_t)(out->len - start - LOG_BATCH_LOG_OVERHEAD));
    log_batch_update_crc(out->p + start, out->len - start);
}

/* ConsumerProtocolSubscription v0/v1 (what JoinGroup's "consumer"
 * protocols carry): version, topics, user data, [owned partitions]. */
static proto_bytes_t fuzz_gen_subscription(fuzz_gen_t *g)
{
    buf_t b;
    int16_t ver = (int16_t)fuzz_below(&g->rng, 2);
    int32_t n = (int32_t)fuzz_below(&g->rng, 3);
    buf_init(&b);
    buf_put_i16(&b, ver);
    buf_put_i32(&b, n);
    for (int32_t i = 0; i < n; i++) {
        proto_str_t t = fuzz_gen_topic(g);
        buf_put_i16(&b, (int16_t)t.len);
        buf_put(&b, t.p, (size_t)t.len);
    }
    buf_put_i32(&b, -1);
    if (ver >= 1)
        buf_put_i32(&b, 0);
    uint8_t *p = arena_alloc(g->arena, b.len);
    memcpy(p, b.p, b.len);
    proto_bytes_t r = { p, (int32_t)b.len };
    buf_free(&b);
    return r;
}

/* ConsumerProtocolAssignment v0: version, [topic, [partition]], user data. */
static proto_bytes_t fuzz_gen_assignment(fuzz_gen_t *g)
{
    buf_t b;
    int32_t n = (int32_t)fuzz_below(&g->rng, 3);
    buf_init(&b);
    buf_put_i16(&b, 0);
    buf_put_i32(&b, n);
    for (int32_t i = 0; i < n; i++) {
        proto_str_t t = fuzz_gen_topic(g);
        buf_put_i16(&b, (int16_t)t.len);
        buf_put(&b, t.p, (size_t)t.len);
        buf_put_i32(&b, 1);
        buf_put_i32(&b, (int32_t)fuzz_below(&g->rng, 4));
    }
    buf_put_i32(&b, -1);
    uint8_t *p = arena_alloc(g->arena, b.len);
    memcpy(p, b.p, b.len);
    proto_bytes_t r = { p, (int32_t)b.len };
    buf_free(&b);
    return r;
}

/* ---- scalar values ---- */

static int fuzz_width(uint8_t type)
{
    switch (type) {
    case PROTO_T_BOOL: case PROTO_T_INT8: return 1;
    case PROTO_T_INT16: case PROTO_T_UINT16: return 2;
    case PROTO_T_INT32: case PROTO_T_UINT32: return 4;
    default: return 8;
    }
}

/* An integer by hint: mostly what a client would send, at times not. */
static int64_t fuzz_gen_int(fuzz_gen_t *g, int hint, int width)
{
    fuzz_rng_t *r = &g->rng;
    if (fuzz_chance(r, 5))
        return fuzz_gen_interesting(g, width);
    switch (hint) {
    case H_PARTITION: return fuzz_chance(r, 90) ? (int64_t)fuzz_below(r, 5) : -1;
    case H_TIMEOUT: return fuzz_chance(r, 90) ? (int64_t)fuzz_below(r, 100) : 1000;
    case H_OFFSET: {
        uint32_t x = fuzz_below(r, 10);
        return x < 6 ? (int64_t)fuzz_below(r, 30) : -(int64_t)(x - 5); /* -1..-4: ListOffsets specials */
    }
    case H_ACKS: return (int64_t)fuzz_below(r, 3) - 1;
    case H_REPLICA: return fuzz_chance(r, 90) ? -1 : (int64_t)fuzz_below(r, 3);
    case H_NPARTS: return fuzz_chance(r, 30) ? -1 : (int64_t)fuzz_below(r, 6);
    case H_RF: return fuzz_chance(r, 50) ? -1 : (int64_t)fuzz_below(r, 3);
    case H_PRODUCER_ID: return fuzz_chance(r, 60) ? -1 : (int64_t)fuzz_below(r, 5);
    case H_EPOCH: return (int64_t)fuzz_below(r, 4) - 1;
    case H_BYTES_LIMIT: return fuzz_chance(r, 50) ? 1048576 : (int64_t)fuzz_below(r, 5000);
    case H_RES_TYPE: {
        static const int8_t t[] = { 2, 2, 4, 8, 0, 1, 3 };
        return t[fuzz_below(r, sizeof(t))];
    }
    case H_CFG_OP: return (int64_t)fuzz_below(r, 5);
    case H_ISOLATION: return (int64_t)fuzz_below(r, 3);
    case H_BROKER_ID: return fuzz_chance(r, 80) ? 1 : (int64_t)fuzz_below(r, 4) - 1;
    case H_SESSION_ID: return fuzz_chance(r, 80) ? 0 : (int64_t)fuzz_below(r, 10);
    case H_KEY_TYPE: return (int64_t)fuzz_below(r, 3);
    default:
        return fuzz_chance(r, 80) ? (int64_t)fuzz_below(r, 10) - 1 : (int64_t)fuzz_rand(r);
    }
}

static void fuzz_store_int(uint8_t type, void *p, int64_t v)
{
    switch (type) {
    case PROTO_T_BOOL: *(bool *)p = v & 1; break;
    case PROTO_T_INT8: *(int8_t *)p = (int8_t)v; break;
    case PROTO_T_INT16: *(int16_t *)p = (int16_t)v; break;
    case PROTO_T_UINT16: *(uint16_t *)p = (uint16_t)v; break;
    case PROTO_T_INT32: *(int32_t *)p = (int32_t)v; break;
    case PROTO_T_UINT32: *(uint32_t *)p = (uint32_t)v; break;
    default: *(int64_t *)p = v; break;
    }
}

static proto_str_t fuzz_gen_string(fuzz_gen_t *g, int hint, int nullable)
{
    fuzz_rng_t *r = &g->rng;
    if (nullable && fuzz_chance(r, hint == H_NULLISH || hint == H_TXN_ID || hint == H_INSTANCE ? 60 : 10))
        return PROTO_STR_NULL;
    switch (hint) {
    case H_TOPIC: return fuzz_gen_topic(g);
    case H_RESOURCE_NAME:
        return fuzz_chance(r, 70) ? fuzz_gen_topic(g) : fuzz_chance(r, 60) ? PROTO_STR("1") : PROTO_STR("");
    case H_GROUP:
        if (g->ngroups && fuzz_chance(r, 85))
            return fuzz_cstr(g->groups[fuzz_below(r, (uint32_t)g->ngroups)]);
        return fuzz_chance(r, 50) ? PROTO_STR("") : fuzz_gen_junk(g);
    case H_MEMBER: return FUZZ_PICK(g, fuzz_members);
    case H_INSTANCE: return fuzz_chance(r, 80) ? PROTO_STR("instance-1") : fuzz_gen_junk(g);
    case H_CFG_KEY: return FUZZ_PICK(g, fuzz_cfg_keys);
    case H_CFG_VALUE: return FUZZ_PICK(g, fuzz_cfg_values);
    case H_PROTO_TYPE: return fuzz_chance(r, 85) ? PROTO_STR("consumer") : fuzz_gen_junk(g);
    case H_PROTO_NAME:
        return fuzz_chance(r, 50) ? PROTO_STR("range") : fuzz_chance(r, 50) ? PROTO_STR("roundrobin")
                                                                            : fuzz_gen_junk(g);
    case H_CLIENT_SW: return fuzz_chance(r, 85) ? PROTO_STR("strand-fuzz") : fuzz_gen_junk(g);
    case H_TXN_ID: return fuzz_chance(r, 50) ? PROTO_STR("txn-1") : fuzz_gen_junk(g);
    default: return fuzz_gen_junk(g);
    }
}

static void fuzz_gen_struct(fuzz_gen_t *g, const proto_struct_t *st, void *m, int16_t v, int depth);

/* One value (not an array) of f's type at p. */
static void fuzz_gen_value(fuzz_gen_t *g, const proto_struct_t *st, const proto_field_t *f,
                           void *p, int16_t v, int nullable, int depth)
{
    int hint = fuzz_hint(st, f);
    switch (f->type) {
    case PROTO_T_FLOAT64:
        *(double *)p = (double)(int64_t)fuzz_below(&g->rng, 1000) / 7.0;
        break;
    case PROTO_T_UUID:
        if (g->nids && fuzz_chance(&g->rng, 60))
            memcpy(p, &g->topic_ids[fuzz_below(&g->rng, (uint32_t)g->nids)], 16);
        else if (fuzz_chance(&g->rng, 50))
            memset(p, 0, 16);
        else
            memcpy(p, fuzz_gen_bytes(g, 16), 16);
        break;
    case PROTO_T_STRING:
        *(proto_str_t *)p = fuzz_gen_string(g, hint, nullable);
        break;
    case PROTO_T_BYTES: {
        proto_bytes_t *b = p;
        if (nullable && fuzz_chance(&g->rng, 10)) {
            *b = (proto_bytes_t){ NULL, -1 };
        } else if (hint == H_SUBSCRIPTION && fuzz_chance(&g->rng, 80)) {
            *b = fuzz_gen_subscription(g);
        } else if (hint == H_ASSIGNMENT && fuzz_chance(&g->rng, 80)) {
            *b = fuzz_gen_assignment(g);
        } else {
            b->len = (int32_t)fuzz_below(&g->rng, 40);
            b->p = fuzz_gen_bytes(g, (size_t)b->len);
        }
        break;
    }
    case PROTO_T_RECORDS: {
        proto_records_t *rec = p;
        uint32_t x = fuzz_below(&g->rng, 100);
        rec->fd = -1;
        if (x < 85) {
            buf_t b;
            buf_init(&b);
            if (fuzz_chance(&g->rng, 1))
                fuzz_gen_bomb(g, &b);
            else
                fuzz_gen_batch(g, &b);
            if (x < 5) /* two batches where Kafka wants one */
                fuzz_gen_batch(g, &b);
            uint8_t *q = arena_alloc(g->arena, b.len);
            memcpy(q, b.p, b.len);
            rec->p = q;
            rec->len = (int32_t)b.len;
            buf_free(&b);
        } else if (x < 92 && nullable) {
            rec->p = NULL;
            rec->len = -1;
        } else {
            rec->len = (int32_t)fuzz_below(&g->rng, 80);
            rec->p = fuzz_gen_bytes(g, (size_t)rec->len);
        }
        break;
    }
    case PROTO_T_STRUCT:
        fuzz_gen_struct(g, f->sub, p, v, depth + 1);
        break;
    default:
        fuzz_store_int(f->type, p, fuzz_gen_int(g, hint, fuzz_width(f->type)));
        break;
    }
}

static int fuzz_in(int16_t v, int16_t lo, int16_t hi)
{
    return v >= lo && v <= hi;
}

static void fuzz_gen_array(fuzz_gen_t *g, const proto_struct_t *st, const proto_field_t *f,
                           proto_array_t *a, int16_t v, int depth)
{
    uint32_t x = fuzz_below(&g->rng, 100);
    int32_t n = x < 15 ? 0 : x < 60 ? 1 : x < 85 ? 2 : 3 + (int32_t)fuzz_below(&g->rng, 4);
    if (f->array == 2) /* a nullable struct: one or null */
        n = 1;
    if (fuzz_in(v, f->nmin, f->nmax) && fuzz_chance(&g->rng, f->array == 2 ? 2 : 10)) {
        a->n = -1;
        a->v = NULL;
        return;
    }
    if (n > g->budget || depth > 4)
        n = g->budget > 0 && depth <= 4 ? g->budget : 0;
    g->budget -= n;
    a->n = n;
    a->v = n ? arena_calloc(g->arena, (size_t)n, f->elem_size) : NULL;
    for (int32_t i = 0; i < n; i++) {
        char *e = (char *)a->v + (size_t)i * f->elem_size;
        if (f->type == PROTO_T_STRUCT)
            proto_struct_init(f->sub, e);
        fuzz_gen_value(g, st, f, e, v, 0, depth);
    }
}

static void fuzz_gen_struct(fuzz_gen_t *g, const proto_struct_t *st, void *m, int16_t v, int depth)
{
    for (uint16_t i = 0; i < st->nfields; i++) {
        const proto_field_t *f = &st->fields[i];
        void *p = (char *)m + f->off;
        if (!fuzz_in(v, f->vmin, f->vmax))
            continue;
        /* a tagged field stays at its default (not sent) most of the time */
        if (fuzz_in(v, f->tmin, f->tmax) && fuzz_chance(&g->rng, 70))
            continue;
        if (f->array)
            fuzz_gen_array(g, st, f, p, v, depth);
        else
            fuzz_gen_value(g, st, f, p, v, fuzz_in(v, f->nmin, f->nmax), depth);
    }
}

void fuzz_gen_init(fuzz_gen_t *g, uint64_t seed, arena_t *arena)
{
    memset(g, 0, sizeof(*g));
    g->rng.s = seed;
    g->arena = arena;
    g->now_ms = 1700000000000LL;
}

void *fuzz_gen_msg(fuzz_gen_t *g, const proto_msg_t *msg, int16_t version)
{
    void *m = arena_alloc(g->arena, msg->st->size);
    proto_struct_init(msg->st, m);
    g->budget = 24;
    fuzz_gen_struct(g, msg->st, m, version, 0);
    return m;
}
