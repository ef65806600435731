/* The cluster layer without disks: metadata record codecs (exact bytes,
 * sizes equal to what Kafka 4.4 wrote for the same records, malformed
 * input), image replay, batches of records, topic config validation with
 * Kafka's messages, config resolution for DescribeConfigs. */
#include <stdlib.h>
#include <string.h>

#include "cluster/cfg_broker.h"
#include "cluster/cfg_topic.h"
#include "cluster/meta_image.h"
#include "cluster/meta_log.h"
#include "cluster/meta_rec.h"
#include "log/log_batch.h"
#include "tests/unit/unit.h"
#include "util/logging.h"

static const uint8_t ID1[16] = {0x84, 0x90, 0xd2, 0xf3, 0xc0, 0x8e, 0x4e, 0x3c,
                                0xa6, 0x9b, 0x41, 0xf1, 0xb4, 0xe8, 0x5d, 0x79};
static const uint8_t ID2[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};
static int32_t NODE = 1;
static proto_uuid_t DIR[1] = {{{0x17, 0x12, 0x9f, 0x0d, 0x2f, 0xeb, 0x4f, 0x8f,
                               0xba, 0xe4, 0xc3, 0x4d, 0x6a, 0xc2, 0x96, 0xa7}}};

static meta_str_t S(const char *s)
{
    meta_str_t m = {s, s ? (int32_t)strlen(s) : -1};
    return m;
}

static meta_rec_t topic_rec(const char *name, const uint8_t id[16])
{
    meta_rec_t r;
    meta_rec_init(&r, META_REC_TOPIC);
    r.u.topic.name = S(name);
    memcpy(r.u.topic.topic_id.b, id, 16);
    return r;
}

static meta_rec_t part_rec(const uint8_t id[16], int32_t p)
{
    meta_rec_t r;
    meta_rec_init(&r, META_REC_PARTITION);
    r.u.part.partition_id = p;
    memcpy(r.u.part.topic_id.b, id, 16);
    r.u.part.replicas = (meta_i32s_t){1, &NODE};
    r.u.part.isr = (meta_i32s_t){1, &NODE};
    r.u.part.removing_replicas = r.u.part.adding_replicas = (meta_i32s_t){0, NULL};
    r.u.part.leader = 1;
    r.u.part.leader_epoch = 0;
    r.u.part.partition_epoch = 0;
    r.u.part.directories = (meta_uuids_t){1, DIR};
    return r;
}

static meta_rec_t config_rec(const char *topic, const char *key, const char *value)
{
    meta_rec_t r;
    meta_rec_init(&r, META_REC_CONFIG);
    r.u.config.resource_type = META_RES_TOPIC;
    r.u.config.resource_name = S(topic);
    r.u.config.name = S(key);
    r.u.config.value = S(value);
    return r;
}

static meta_rec_t remove_rec(const uint8_t id[16])
{
    meta_rec_t r;
    meta_rec_init(&r, META_REC_REMOVE_TOPIC);
    memcpy(r.u.remove_topic.topic_id.b, id, 16);
    return r;
}

/* ---- codecs ---- */

static void test_topic_record_bytes(void)
{
    static const uint8_t want[] = {0x01, 0x02, 0x00, 0x06, 'a', 'u', 't', 'o', '1', 0x84, 0x90,
                                   0xd2, 0xf3, 0xc0, 0x8e, 0x4e, 0x3c, 0xa6, 0x9b, 0x41, 0xf1,
                                   0xb4, 0xe8, 0x5d, 0x79, 0x00};
    meta_rec_t r = topic_rec("auto1", ID1), d;
    buf_t b;
    arena_t a;

    buf_init(&b);
    arena_init(&a, 1024);
    meta_rec_encode(&r, &b);
    /* Kafka wrote valueSize 26 for TopicRecord "auto1". */
    CU_ASSERT_EQUAL_FATAL(b.len, sizeof(want));
    CU_ASSERT(memcmp(b.p, want, sizeof(want)) == 0);
    CU_ASSERT_EQUAL(meta_rec_decode(&d, b.p, b.len, &a), 0);
    CU_ASSERT_EQUAL(d.type, META_REC_TOPIC);
    CU_ASSERT_EQUAL(d.u.topic.name.len, 5);
    CU_ASSERT(memcmp(d.u.topic.name.p, "auto1", 5) == 0);
    CU_ASSERT(memcmp(d.u.topic.topic_id.b, ID1, 16) == 0);
    buf_free(&b);
    arena_destroy(&a);
}

static void test_partition_record_bytes(void)
{
    meta_rec_t r = part_rec(ID1, 1), d;
    buf_t b;
    arena_t a;

    buf_init(&b);
    arena_init(&a, 1024);
    meta_rec_encode(&r, &b);
    /* Kafka's PartitionRecord v2 for one replica with a directory: 65. */
    CU_ASSERT_EQUAL_FATAL(b.len, 65);
    CU_ASSERT_EQUAL(b.p[0], 1);
    CU_ASSERT_EQUAL(b.p[1], 3);
    CU_ASSERT_EQUAL(b.p[2], 2);
    CU_ASSERT_EQUAL(b.p[6], 1); /* partition id, big-endian */
    CU_ASSERT_EQUAL(b.p[23], 2); /* replicas: 1 element */
    CU_ASSERT_EQUAL(b.p[64], 0); /* no tagged fields */
    CU_ASSERT_EQUAL_FATAL(meta_rec_decode(&d, b.p, b.len, &a), 0);
    CU_ASSERT_EQUAL(d.u.part.partition_id, 1);
    CU_ASSERT_EQUAL(d.u.part.replicas.n, 1);
    CU_ASSERT_EQUAL(d.u.part.replicas.v[0], 1);
    CU_ASSERT_EQUAL(d.u.part.isr.n, 1);
    CU_ASSERT_EQUAL(d.u.part.removing_replicas.n, 0);
    CU_ASSERT_EQUAL(d.u.part.leader, 1);
    CU_ASSERT_EQUAL(d.u.part.leader_epoch, 0);
    CU_ASSERT_EQUAL(d.u.part.directories.n, 1);
    CU_ASSERT(memcmp(d.u.part.directories.v[0].b, DIR[0].b, 16) == 0);
    CU_ASSERT_EQUAL(d.u.part.eligible_leader_replicas.n, -1);
    CU_ASSERT_EQUAL(d.u.part.leader_recovery_state, 0);

    /* A tagged field that differs from its default is written. */
    buf_free(&b);
    buf_init(&b);
    r.u.part.leader_recovery_state = 1;
    meta_rec_encode(&r, &b);
    CU_ASSERT_EQUAL_FATAL(b.len, 68);
    CU_ASSERT(memcmp(b.p + 64, "\x01\x00\x01\x01", 4) == 0);
    CU_ASSERT_EQUAL(meta_rec_decode(&d, b.p, b.len, &a), 0);
    CU_ASSERT_EQUAL(d.u.part.leader_recovery_state, 1);
    buf_free(&b);
    arena_destroy(&a);
}

static void test_config_record_bytes(void)
{
    static const uint8_t want[] = {0x01, 0x04, 0x00, 0x02, 0x03, 't', '1', 0x0d, 'r', 'e', 't',
                                   'e', 'n', 't', 'i', 'o', 'n', '.', 'm', 's', 0x05, '1', '0',
                                   '0', '0', 0x00};
    meta_rec_t r = config_rec("t1", "retention.ms", "1000"), d;
    buf_t b;
    arena_t a;

    buf_init(&b);
    arena_init(&a, 1024);
    meta_rec_encode(&r, &b);
    CU_ASSERT_EQUAL_FATAL(b.len, sizeof(want)); /* Kafka: 26 */
    CU_ASSERT(memcmp(b.p, want, sizeof(want)) == 0);
    CU_ASSERT_EQUAL(meta_rec_decode(&d, b.p, b.len, &a), 0);
    CU_ASSERT_EQUAL(d.u.config.resource_type, 2);
    CU_ASSERT_EQUAL(d.u.config.value.len, 4);
    /* A null value (delete) is a 0 length byte. */
    buf_free(&b);
    buf_init(&b);
    r.u.config.value = S(NULL);
    meta_rec_encode(&r, &b);
    CU_ASSERT_EQUAL(b.len, sizeof(want) - 4);
    CU_ASSERT_EQUAL(b.p[b.len - 2], 0);
    CU_ASSERT_EQUAL(meta_rec_decode(&d, b.p, b.len, &a), 0);
    CU_ASSERT_EQUAL(d.u.config.value.len, -1);
    buf_free(&b);
    arena_destroy(&a);
}

static void test_other_records(void)
{
    meta_rec_t r, d;
    buf_t b;
    arena_t a;
    int32_t isr[2] = {1, 2};

    buf_init(&b);
    arena_init(&a, 1024);
    r = remove_rec(ID2);
    meta_rec_encode(&r, &b);
    CU_ASSERT_EQUAL(b.len, 3 + 16 + 1);
    CU_ASSERT_EQUAL(meta_rec_decode(&d, b.p, b.len, &a), 0);
    CU_ASSERT(memcmp(d.u.remove_topic.topic_id.b, ID2, 16) == 0);

    buf_free(&b);
    buf_init(&b);
    meta_rec_init(&r, META_REC_FEATURE_LEVEL);
    r.u.feature.name = S("metadata.version");
    r.u.feature.feature_level = 25;
    meta_rec_encode(&r, &b);
    CU_ASSERT_EQUAL(b.len, 23); /* Kafka: valueSize 23 */
    CU_ASSERT_EQUAL(meta_rec_decode(&d, b.p, b.len, &a), 0);
    CU_ASSERT_EQUAL(d.u.feature.feature_level, 25);

    buf_free(&b);
    buf_init(&b);
    meta_rec_init(&r, META_REC_PARTITION_CHANGE);
    memcpy(r.u.change.topic_id.b, ID2, 16);
    r.u.change.partition_id = 3;
    r.u.change.leader = 2;
    r.u.change.isr = (meta_i32s_t){2, isr};
    meta_rec_encode(&r, &b);
    /* header 3, id 4 + 16, tags: count, [0] isr 1+1+9, [1] leader 1+1+4 */
    CU_ASSERT_EQUAL(b.len, 3 + 20 + 1 + 11 + 6);
    CU_ASSERT_EQUAL(meta_rec_decode(&d, b.p, b.len, &a), 0);
    CU_ASSERT_EQUAL(d.u.change.leader, 2);
    CU_ASSERT_EQUAL(d.u.change.isr.n, 2);
    CU_ASSERT_EQUAL(d.u.change.isr.v[1], 2);
    CU_ASSERT_EQUAL(d.u.change.replicas.n, -1);
    CU_ASSERT_EQUAL(d.u.change.leader_recovery_state, -1);
    buf_free(&b);
    arena_destroy(&a);
}

static void test_decode_malformed(void)
{
    meta_rec_t r = part_rec(ID1, 0), d;
    buf_t b;
    arena_t a;

    buf_init(&b);
    arena_init(&a, 1024);
    meta_rec_encode(&r, &b);
    for (size_t n = 0; n < b.len; n++) /* every truncation fails */
        CU_ASSERT_EQUAL(meta_rec_decode(&d, b.p, n, &a), -1);
    b.p[23] = 0x7f; /* replicas claims 126 elements */
    CU_ASSERT_EQUAL(meta_rec_decode(&d, b.p, b.len, &a), -1);
    /* Unknown frame version; unknown type and version are skippable. */
    CU_ASSERT_EQUAL(meta_rec_decode(&d, (const uint8_t *)"\x02\x02\x00", 3, &a), -1);
    CU_ASSERT_EQUAL(meta_rec_decode(&d, (const uint8_t *)"\x01\x63\x00\xff", 4, &a), 1);
    CU_ASSERT_EQUAL(d.type, 99);
    CU_ASSERT_EQUAL(meta_rec_decode(&d, (const uint8_t *)"\x01\x02\x05", 3, &a), 1);
    /* A null topic name is not a TopicRecord. */
    CU_ASSERT_EQUAL(meta_rec_decode(&d, (const uint8_t *)"\x01\x02\x00\x00"
                                                         "0123456789abcdef\x00",
                                    21, &a),
                    -1);
    buf_free(&b);
    arena_destroy(&a);
}

/* ---- image ---- */

/* Each replica keeps its own log dir, through a change of the replicas
 * and into the records a snapshot is written from (a broker that is not
 * the first replica finds its replica's dir at start). */
static void test_image_replica_dirs(void)
{
    static int32_t reps[3] = {4, 5, 6}, reps2[2] = {6, 7};
    static proto_uuid_t dirs[3] = {{{1}}, {{2}}, {{3}}}, dirs2[2] = {{{3}}, {{9}}};
    meta_image_t img;
    char err[256];
    meta_rec_t t = topic_rec("r", ID1), p = part_rec(ID1, 0), c;

    p.u.part.replicas = p.u.part.isr = (meta_i32s_t){3, reps};
    p.u.part.directories = (meta_uuids_t){3, dirs};
    meta_image_init(&img);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &t, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &p, err, sizeof(err)), 0);
    mi_part_t *mp = &meta_image_topic(&img, "r", 1)->parts[0];
    for (int i = 0; i < 3; i++)
        CU_ASSERT(mi_part_dir_of(mp, reps[i]) && mi_part_dir_of(mp, reps[i])[0] == i + 1);
    CU_ASSERT_PTR_NULL(mi_part_dir_of(mp, 7));

    meta_rec_init(&c, META_REC_PARTITION_CHANGE);
    memcpy(c.u.change.topic_id.b, ID1, 16);
    c.u.change.partition_id = 0;
    c.u.change.replicas = (meta_i32s_t){2, reps2};
    c.u.change.directories = (meta_uuids_t){2, dirs2};
    CU_ASSERT_EQUAL(meta_image_apply(&img, &c, err, sizeof(err)), 0);
    CU_ASSERT_PTR_NULL(mi_part_dir_of(mp, 4));
    CU_ASSERT(mi_part_dir_of(mp, 6)[0] == 3 && mi_part_dir_of(mp, 7)[0] == 9);
    meta_image_free(&img);
}

static void test_image_apply(void)
{
    meta_image_t img;
    char err[256];
    meta_rec_t recs[] = {topic_rec("a", ID1), config_rec("a", "retention.ms", "5"),
                         part_rec(ID1, 0), part_rec(ID1, 1)};

    meta_image_init(&img);
    for (size_t i = 0; i < sizeof(recs) / sizeof(recs[0]); i++)
        CU_ASSERT_EQUAL(meta_image_apply(&img, &recs[i], err, sizeof(err)), 0);
    mi_topic_t *t = meta_image_topic(&img, "a", 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t, meta_image_topic_by_id(&img, ID1));
    CU_ASSERT_EQUAL(t->nparts, 2);
    CU_ASSERT(t->parts[1].present);
    CU_ASSERT_EQUAL(t->parts[1].leader, 1);
    CU_ASSERT(memcmp(mi_part_dir_of(&t->parts[1], NODE), DIR[0].b, 16) == 0);
    CU_ASSERT_PTR_NULL(mi_part_dir_of(&t->parts[1], NODE + 1));
    CU_ASSERT_STRING_EQUAL(meta_image_config_get(&img, META_RES_TOPIC, "a", 1, "retention.ms"),
                           "5");

    /* Overwrite, add, delete one key. */
    meta_rec_t c1 = config_rec("a", "retention.ms", "7"), c2 = config_rec("a", "segment.ms", "9"),
               c3 = config_rec("a", "retention.ms", NULL);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &c1, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &c2, err, sizeof(err)), 0);
    CU_ASSERT_STRING_EQUAL(meta_image_config_get(&img, META_RES_TOPIC, "a", 1, "retention.ms"),
                           "7");
    CU_ASSERT_EQUAL(meta_image_apply(&img, &c3, err, sizeof(err)), 0);
    CU_ASSERT_PTR_NULL(meta_image_config_get(&img, META_RES_TOPIC, "a", 1, "retention.ms"));
    CU_ASSERT_EQUAL(meta_image_config(&img, META_RES_TOPIC, "a", 1)->n, 1);

    /* Records that do not fit leave the image as it was. */
    meta_rec_t dup_name = topic_rec("a", ID2), orphan = part_rec(ID2, 0), rm2 = remove_rec(ID2);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &dup_name, err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &orphan, err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &rm2, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NULL(meta_image_topic_by_id(&img, ID2));

    /* Removing a topic removes its configs; the name is free again. */
    meta_rec_t rm = remove_rec(ID1), again = topic_rec("a", ID2);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &rm, err, sizeof(err)), 0);
    CU_ASSERT_PTR_NULL(meta_image_topic(&img, "a", 1));
    CU_ASSERT_PTR_NULL(meta_image_config(&img, META_RES_TOPIC, "a", 1));
    CU_ASSERT_EQUAL(meta_image_apply(&img, &again, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(meta_image_topic(&img, "a", 1)->nparts, 0);
    meta_image_free(&img);
}

static void test_image_partition_change(void)
{
    meta_image_t img;
    char err[256];
    meta_rec_t t = topic_rec("b", ID2), p = part_rec(ID2, 0), c;

    meta_image_init(&img);
    meta_image_apply(&img, &t, err, sizeof(err));
    meta_image_apply(&img, &p, err, sizeof(err));
    meta_rec_init(&c, META_REC_PARTITION_CHANGE);
    memcpy(c.u.change.topic_id.b, ID2, 16);
    c.u.change.partition_id = 0;
    c.u.change.leader = -1;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &c, err, sizeof(err)), 0);
    mi_part_t *mp = &meta_image_topic(&img, "b", 1)->parts[0];
    CU_ASSERT_EQUAL(mp->leader, -1);
    CU_ASSERT_EQUAL(mp->leader_epoch, 1);
    CU_ASSERT_EQUAL(mp->partition_epoch, 1);
    c.u.change.partition_id = 1; /* no such partition */
    CU_ASSERT_EQUAL(meta_image_apply(&img, &c, err, sizeof(err)), -1);
    meta_image_free(&img);
}

/* Records -> batch -> replay gives the same image; a flipped byte is
 * caught by the CRC. */
static void test_batch_replay(void)
{
    meta_rec_t recs[] = {topic_rec("x", ID1), config_rec("x", "cleanup.policy", "compact"),
                         part_rec(ID1, 0)};
    meta_rec_t rm = remove_rec(ID1);
    buf_t b;
    meta_image_t img;
    log_batch_hdr_t h;

    buf_init(&b);
    CU_ASSERT_EQUAL_FATAL(meta_log_build_batch(&b, recs, 3, 1700000000000LL), 0);
    CU_ASSERT_EQUAL_FATAL(log_batch_hdr_parse(b.p, b.len, &h), 0);
    CU_ASSERT_EQUAL(h.records_count, 3);
    CU_ASSERT_EQUAL(h.producer_id, -1);
    CU_ASSERT_EQUAL(LOG_BATCH_ATTR_CODEC(h.attributes), 0);
    CU_ASSERT(log_batch_crc_ok(b.p, b.len));
    size_t first = b.len;
    CU_ASSERT_EQUAL_FATAL(meta_log_build_batch(&b, &rm, 1, 1700000000001LL), 0);

    meta_image_init(&img);
    CU_ASSERT_EQUAL(meta_log_replay(&img, b.p, first), 3);
    CU_ASSERT_PTR_NOT_NULL(meta_image_topic(&img, "x", 1));
    CU_ASSERT_STRING_EQUAL(meta_image_config_get(&img, META_RES_TOPIC, "x", 1, "cleanup.policy"),
                           "compact");
    meta_image_free(&img);

    meta_image_init(&img);
    CU_ASSERT_EQUAL(meta_log_replay(&img, b.p, b.len), 4);
    CU_ASSERT_PTR_NULL(meta_image_topic(&img, "x", 1));
    meta_image_free(&img);

    b.p[first - 3] ^= 0x40;
    meta_image_init(&img);
    CU_ASSERT_EQUAL(meta_log_replay(&img, b.p, b.len), -1);
    meta_image_free(&img);
    buf_free(&b);
}

/* ---- topic configs ---- */

static const char *check(const char *key, const char *value)
{
    static char err[512];
    const cfg_topic_key_t *k = cfg_topic_find(key, strlen(key));
    if (!k)
        return "unknown";
    err[0] = '\0';
    return cfg_topic_check(k, value, err, sizeof(err)) ? err : NULL;
}

static void test_topic_config_check(void)
{
    int n;
    cfg_topic_keys(&n);
    CU_ASSERT_EQUAL(n, 37);
    CU_ASSERT_PTR_NULL(check("retention.ms", "-1"));
    CU_ASSERT_PTR_NULL(check("retention.ms", " 5 "));
    CU_ASSERT_PTR_NULL(check("retention.ms", "+5"));
    CU_ASSERT_STRING_EQUAL(check("retention.ms", "-2"),
                           "Invalid value -2 for configuration retention.ms: Value must be at "
                           "least -1");
    CU_ASSERT_STRING_EQUAL(check("retention.ms", "1e3"),
                           "Invalid value 1e3 for configuration retention.ms: Not a number of "
                           "type LONG");
    CU_ASSERT_STRING_EQUAL(check("retention.ms", "9223372036854775808"),
                           "Invalid value 9223372036854775808 for configuration retention.ms: "
                           "Not a number of type LONG");
    CU_ASSERT_STRING_EQUAL(check("segment.bytes", "1000"),
                           "Invalid value 1000 for configuration segment.bytes: Value must be at "
                           "least 1048576");
    CU_ASSERT_STRING_EQUAL(check("max.message.bytes", "2147483648"),
                           "Invalid value 2147483648 for configuration max.message.bytes: Not a "
                           "number of type INT");
    CU_ASSERT_STRING_EQUAL(check("compression.gzip.level", "0"),
                           "Invalid value 0 for configuration compression.gzip.level: Value must "
                           "be between 1 and 9 or equal to -1");
    CU_ASSERT_PTR_NULL(check("compression.gzip.level", "-1"));
    CU_ASSERT_STRING_EQUAL(check("compression.zstd.level", "23"),
                           "Invalid value 23 for configuration compression.zstd.level: Value must "
                           "be no more than 22");
    CU_ASSERT_STRING_EQUAL(check("compression.type", "ZSTD"),
                           "Invalid value ZSTD for configuration compression.type: String must be "
                           "one of: uncompressed, zstd, lz4, snappy, gzip, producer");
    CU_ASSERT_STRING_EQUAL(check("preallocate", "yes"),
                           "Invalid value yes for configuration preallocate: Expected value to be "
                           "either true or false");
    CU_ASSERT_PTR_NULL(check("preallocate", "TRUE"));
    CU_ASSERT_STRING_EQUAL(check("min.cleanable.dirty.ratio", "1.5"),
                           "Invalid value 1.5 for configuration min.cleanable.dirty.ratio: Value "
                           "must be no more than 1");
    CU_ASSERT_PTR_NULL(check("min.cleanable.dirty.ratio", "1e-1"));
    /* the parsed value, as Java writes a double (Kafka 4.4's message) */
    CU_ASSERT_STRING_EQUAL(check("min.cleanable.dirty.ratio", "2"),
                           "Invalid value 2.0 for configuration min.cleanable.dirty.ratio: Value "
                           "must be no more than 1");
    CU_ASSERT_STRING_EQUAL(check("min.cleanable.dirty.ratio", "-1"),
                           "Invalid value -1.0 for configuration min.cleanable.dirty.ratio: Value "
                           "must be at least 0");
    CU_ASSERT_PTR_NULL(check("cleanup.policy", "compact, delete"));
    CU_ASSERT_PTR_NULL(check("cleanup.policy", ""));
    CU_ASSERT_STRING_EQUAL(check("cleanup.policy", "Compact"),
                           "Invalid value Compact for configuration cleanup.policy: String must "
                           "be one of: compact, delete");
    CU_ASSERT_STRING_EQUAL(check("cleanup.policy", "compact,,delete"),
                           "Configuration 'cleanup.policy' values must not be empty.");
    CU_ASSERT_PTR_NULL(check("leader.replication.throttled.replicas", "*"));
    CU_ASSERT_PTR_NULL(check("leader.replication.throttled.replicas", "0:1, 1:1"));
    CU_ASSERT_PTR_NOT_NULL(check("leader.replication.throttled.replicas", "0:1:2"));
    CU_ASSERT_PTR_NOT_NULL(check("follower.replication.throttled.replicas", "foo"));
    CU_ASSERT_STRING_EQUAL(check("retention.ms", NULL),
                           "Null value not supported for topic configs: retention.ms");
    CU_ASSERT_STRING_EQUAL(check("foo.bar", "1"), "unknown");
}

static void test_topic_config_apply(void)
{
    topic_cfg_t c, d;
    log_config_t lc;
    char err[256];
    cfg_kv_t kv[32];

    cfg_topic_defaults(&c);
    d = c;
    CU_ASSERT_EQUAL(c.compression, TOPIC_COMPRESSION_PRODUCER);
    cfg_topic_apply(&c, cfg_topic_find("cleanup.policy", 14), "compact");
    cfg_topic_apply(&c, cfg_topic_find("retention.ms", 12), "1000");
    cfg_topic_apply(&c, cfg_topic_find("compression.type", 16), "zstd");
    cfg_topic_apply(&c, cfg_topic_find("message.timestamp.type", 22), "LogAppendTime");
    CU_ASSERT(c.compacted && !c.cleanup_delete);
    CU_ASSERT_EQUAL(c.log.retention_ms, 1000);
    CU_ASSERT_EQUAL(c.compression, 4);
    CU_ASSERT_EQUAL(c.log.timestamp_type, 1);
    /* compact without delete: the log keeps everything */
    cfg_topic_log_config(&c, &lc);
    CU_ASSERT_EQUAL(lc.retention_ms, -1);
    CU_ASSERT_EQUAL(lc.retention_bytes, -1);
    /* the diff names exactly what changed, as Kafka values */
    int n = cfg_topic_diff(&d, &c, kv, 32);
    CU_ASSERT_EQUAL_FATAL(n, 4);
    CU_ASSERT_STRING_EQUAL(kv[0].key, "cleanup.policy");
    CU_ASSERT_STRING_EQUAL(kv[0].value, "compact");
    CU_ASSERT_STRING_EQUAL(kv[1].value, "zstd");
    CU_ASSERT_STRING_EQUAL(kv[2].value, "LogAppendTime");
    CU_ASSERT_STRING_EQUAL(kv[3].key, "retention.ms");
    CU_ASSERT_STRING_EQUAL(kv[3].value, "1000");

    c.min_compaction_lag_ms = 10;
    c.max_compaction_lag_ms = 5;
    CU_ASSERT_EQUAL(cfg_topic_check_all(&c, err, sizeof(err)), 40);
    CU_ASSERT_STRING_EQUAL(err, "conflict topic config setting min.compaction.lag.ms (10) > "
                                "max.compaction.lag.ms (5)");
}

static void test_resolve(void)
{
    props_t props;
    cfg_resolved_t r;
    mi_kv_t kvs[] = {{(char *)"cleanup.policy", (char *)"compact"}};
    mi_config_t dyn = {META_RES_TOPIC, (char *)"t", 1, 1, kvs};
    const char *text = "log.retention.hours=2\nlog.cleanup.policy=delete\nmessage.max.bytes=99\n";
    topic_cfg_t c;

    props_init(&props);
    CU_ASSERT_EQUAL_FATAL(props_parse(&props, text, strlen(text), NULL), 0);
    cfg_bview_t bv = {NULL, NULL, &props};
    /* dynamic topic value first, then the static synonym, then default */
    cfg_topic_resolve(cfg_topic_find("cleanup.policy", 14), &dyn, &bv, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "compact");
    CU_ASSERT_EQUAL(r.source, CFG_SRC_DYNAMIC_TOPIC);
    CU_ASSERT_EQUAL_FATAL(r.nsyn, 3);
    CU_ASSERT_STRING_EQUAL(r.syn[1].name, "log.cleanup.policy");
    CU_ASSERT_EQUAL(r.syn[1].source, CFG_SRC_STATIC_BROKER);
    CU_ASSERT_EQUAL(r.syn[2].source, CFG_SRC_DEFAULT);
    /* hours are shown in ms; the synonyms start at log.retention.ms,
     * which nothing sets, so there are none and the source is the
     * default, as Kafka 4.4 answers */
    cfg_topic_resolve(cfg_topic_find("retention.ms", 12), NULL, &bv, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "7200000");
    CU_ASSERT_EQUAL(r.source, CFG_SRC_DEFAULT);
    CU_ASSERT_EQUAL(r.nsyn, 0);
    cfg_topic_resolve(cfg_topic_find("segment.ms", 10), NULL, NULL, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "604800000");
    CU_ASSERT_EQUAL(r.source, CFG_SRC_DEFAULT);
    CU_ASSERT_EQUAL(r.nsyn, 0);
    CU_ASSERT_EQUAL(r.type, CFG_T_LONG);
    /* static keys applied to the topic defaults */
    cfg_topic_defaults(&c);
    cfg_topic_apply_static(&c, &props);
    CU_ASSERT_EQUAL(c.log.retention_ms, 7200000);
    CU_ASSERT_EQUAL(c.max_message_bytes, 99);
    props_free(&props);
}

static void test_broker_keys(void)
{
    int n;
    const cfg_broker_key_t *keys = cfg_broker_keys(&n);
    props_t props;
    cfg_resolved_t r;
    const char *text = "num.partitions=3\nssl.key.password=secret\n";

    CU_ASSERT(n > 300);
    for (int i = 1; i < n; i++) /* sorted, for the binary search */
        CU_ASSERT(strcmp(keys[i - 1].name, keys[i].name) < 0);
    const cfg_broker_key_t *k = cfg_broker_find("num.partitions");
    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    CU_ASSERT_STRING_EQUAL(k->dflt, "1");
    CU_ASSERT(k->flags & CFG_RO);
    CU_ASSERT_PTR_NULL(cfg_broker_find("no.such.key"));
    props_init(&props);
    props_parse(&props, text, strlen(text), NULL);
    cfg_bview_t bv = {NULL, NULL, &props};
    cfg_broker_resolve("num.partitions", &bv, true, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "3");
    CU_ASSERT_EQUAL(r.source, CFG_SRC_STATIC_BROKER);
    CU_ASSERT_EQUAL(r.nsyn, 2);
    cfg_broker_resolve("ssl.key.password", &bv, true, &r);
    CU_ASSERT_PTR_NULL(r.value);
    CU_ASSERT(r.flags & CFG_SENS);
    CU_ASSERT_EQUAL(r.source, CFG_SRC_STATIC_BROKER);
    cfg_broker_resolve("broker.rack", &bv, true, &r);
    CU_ASSERT_PTR_NULL(r.value);
    CU_ASSERT_EQUAL(r.source, CFG_SRC_DEFAULT);
    CU_ASSERT_EQUAL(r.nsyn, 0);
    props_free(&props);
}

int main(void)
{
    lg_set_level(LG_ERROR);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("cluster", NULL, NULL);
    CU_add_test(s, "TopicRecord bytes", test_topic_record_bytes);
    CU_add_test(s, "PartitionRecord bytes", test_partition_record_bytes);
    CU_add_test(s, "ConfigRecord bytes", test_config_record_bytes);
    CU_add_test(s, "other records", test_other_records);
    CU_add_test(s, "malformed records", test_decode_malformed);
    CU_add_test(s, "image apply", test_image_apply);
    CU_add_test(s, "image replica dirs", test_image_replica_dirs);
    CU_add_test(s, "image partition change", test_image_partition_change);
    CU_add_test(s, "batch and replay", test_batch_replay);
    CU_add_test(s, "topic config check", test_topic_config_check);
    CU_add_test(s, "topic config apply and diff", test_topic_config_apply);
    CU_add_test(s, "config resolution", test_resolve);
    CU_add_test(s, "broker keys", test_broker_keys);
    return unit_run();
}
