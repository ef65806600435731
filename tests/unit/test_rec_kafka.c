/* Records Apache Kafka 4.4 wrote, decoded by the generated codecs: the
 * bytes below were read out of a Kafka 4.4.0 broker's files after test
 * 0207-dump-log-segments ran against it (KAFKA_REF=1): its
 * __cluster_metadata-0 log (control and metadata records),
 * __consumer_offsets (a classic group of librdkafka committing offsets,
 * OffsetCommitValue v4 with a topic id), and the bootstrap checkpoint of
 * `kafka-storage format --standalone` (SnapshotHeader, KRaftVersion,
 * Voters, SnapshotFooter). Each decodes, holds the values Kafka's
 * DumpLogSegments printed for it, and encodes again to the same bytes;
 * the cluster layer and the group coordinator read them through their own
 * decoders. Values not produced by Strand, so the schemas of the records
 * Strand does not write yet (broker registration, the KRaft control
 * records) are held to Kafka's bytes too. */
#include <string.h>

#include "cluster/meta_rec.h"
#include "coord/grp_rec.h"
#include "proto/proto_rec.h"
#include "tests/unit/unit_proto.h"
#include "unit.h"

typedef struct kvec_s {
    const char *name;
    int kind;
    int16_t type; /* values and control records: the type their key gives */
    size_t len;
    const char *bytes;
} kvec_t;

static const kvec_t vecs[] = {
    { "LeaderChangeMessage v0", PROTO_REC_KIND_CONTROL, PROTO_REC_LEADER_CHANGE_MESSAGE, 19,
      "\x00\x00\x00\x00\x00\x01\x02\x00\x00\x00\x01\x00\x02\x00\x00\x00\x01\x00\x00" },
    { "SnapshotHeaderRecord v0", PROTO_REC_KIND_CONTROL, PROTO_REC_SNAPSHOT_HEADER_RECORD, 11,
      "\x00\x00\x00\x00\x01\xa2\x30\xf0\xc0\x72\x00" },
    { "KRaftVersionRecord v0", PROTO_REC_KIND_CONTROL, PROTO_REC_K_RAFT_VERSION_RECORD, 5,
      "\x00\x00\x00\x01\x00" },
    { "VotersRecord v0", PROTO_REC_KIND_CONTROL, PROTO_REC_VOTERS_RECORD, 55,
      "\x00\x00\x02\x00\x00\x00\x01\x21\x9f\x28\x74\x59\x97\x48\x83\xad\x21\x0a\xe2"
      "\x75\xe9\xa0\xc5\x02\x0b\x43\x4f\x4e\x54\x52\x4f\x4c\x4c\x45\x52\x0a\x31\x32"
      "\x37\x2e\x30\x2e\x30\x2e\x31\x71\xa5\x00\x00\x00\x00\x01\x00\x00\x00" },
    { "SnapshotFooterRecord v0", PROTO_REC_KIND_CONTROL, PROTO_REC_SNAPSHOT_FOOTER_RECORD, 3,
      "\x00\x00\x00" },
    { "control key LEADER_CHANGE", PROTO_REC_KIND_DATA, 0, 4,
      "\x00\x00\x00\x02" },
    { "BeginTransactionRecord v0", PROTO_REC_KIND_METADATA, 0, 24,
      "\x01\x17\x00\x01\x00\x12\x12\x42\x6f\x6f\x74\x73\x74\x72\x61\x70\x20\x72\x65"
      "\x63\x6f\x72\x64\x73" },
    { "FeatureLevelRecord v0", PROTO_REC_KIND_METADATA, 0, 23,
      "\x01\x0c\x00\x11\x6d\x65\x74\x61\x64\x61\x74\x61\x2e\x76\x65\x72\x73\x69\x6f"
      "\x6e\x00\x21\x00" },
    { "ConfigRecord v0", PROTO_REC_KIND_METADATA, 0, 28,
      "\x01\x04\x00\x04\x01\x14\x6d\x69\x6e\x2e\x69\x6e\x73\x79\x6e\x63\x2e\x72\x65"
      "\x70\x6c\x69\x63\x61\x73\x02\x31\x00" },
    { "EndTransactionRecord v0", PROTO_REC_KIND_METADATA, 0, 4,
      "\x01\x18\x00\x00" },
    { "NoOpRecord v0", PROTO_REC_KIND_METADATA, 0, 4,
      "\x01\x14\x00\x00" },
    { "RegisterControllerRecord v0", PROTO_REC_KIND_METADATA, 0, 216,
      "\x01\x1b\x00\x00\x00\x00\x01\x45\xba\x5e\x7d\x0c\xf2\x4b\x98\xac\x5d\x5a\x1e"
      "\x50\x05\x05\xdb\x00\x02\x0b\x43\x4f\x4e\x54\x52\x4f\x4c\x4c\x45\x52\x0a\x31"
      "\x32\x37\x2e\x30\x2e\x30\x2e\x31\x59\x76\x00\x00\x00\x08\x0e\x67\x72\x6f\x75"
      "\x70\x2e\x76\x65\x72\x73\x69\x6f\x6e\x00\x00\x00\x01\x00\x0e\x6b\x72\x61\x66"
      "\x74\x2e\x76\x65\x72\x73\x69\x6f\x6e\x00\x00\x00\x01\x00\x11\x6d\x65\x74\x61"
      "\x64\x61\x74\x61\x2e\x76\x65\x72\x73\x69\x6f\x6e\x00\x07\x00\x21\x00\x0e\x73"
      "\x68\x61\x72\x65\x2e\x76\x65\x72\x73\x69\x6f\x6e\x00\x00\x00\x02\x00\x10\x73"
      "\x74\x72\x65\x61\x6d\x73\x2e\x76\x65\x72\x73\x69\x6f\x6e\x00\x00\x00\x01\x00"
      "\x14\x74\x72\x61\x6e\x73\x61\x63\x74\x69\x6f\x6e\x2e\x76\x65\x72\x73\x69\x6f"
      "\x6e\x00\x00\x00\x02\x00\x21\x65\x6c\x69\x67\x69\x62\x6c\x65\x2e\x6c\x65\x61"
      "\x64\x65\x72\x2e\x72\x65\x70\x6c\x69\x63\x61\x73\x2e\x76\x65\x72\x73\x69\x6f"
      "\x6e\x00\x00\x00\x01\x00\x00" },
    { "RegisterBrokerRecord v4", PROTO_REC_KIND_METADATA, 0, 245,
      "\x01\x00\x04\x00\x00\x00\x01\x00\x6c\x57\x9a\x76\x4c\x53\x42\x24\x91\xe0\x98"
      "\x97\x46\xe3\x4e\xf2\x00\x00\x00\x00\x00\x00\x00\x14\x02\x0a\x50\x4c\x41\x49"
      "\x4e\x54\x45\x58\x54\x0a\x31\x32\x37\x2e\x30\x2e\x30\x2e\x31\xac\x73\x00\x00"
      "\x00\x08\x0e\x73\x68\x61\x72\x65\x2e\x76\x65\x72\x73\x69\x6f\x6e\x00\x00\x00"
      "\x02\x00\x11\x6d\x65\x74\x61\x64\x61\x74\x61\x2e\x76\x65\x72\x73\x69\x6f\x6e"
      "\x00\x07\x00\x21\x00\x21\x65\x6c\x69\x67\x69\x62\x6c\x65\x2e\x6c\x65\x61\x64"
      "\x65\x72\x2e\x72\x65\x70\x6c\x69\x63\x61\x73\x2e\x76\x65\x72\x73\x69\x6f\x6e"
      "\x00\x00\x00\x01\x00\x14\x74\x72\x61\x6e\x73\x61\x63\x74\x69\x6f\x6e\x2e\x76"
      "\x65\x72\x73\x69\x6f\x6e\x00\x00\x00\x02\x00\x10\x73\x74\x72\x65\x61\x6d\x73"
      "\x2e\x76\x65\x72\x73\x69\x6f\x6e\x00\x00\x00\x01\x00\x0e\x67\x72\x6f\x75\x70"
      "\x2e\x76\x65\x72\x73\x69\x6f\x6e\x00\x00\x00\x01\x00\x0e\x6b\x72\x61\x66\x74"
      "\x2e\x76\x65\x72\x73\x69\x6f\x6e\x00\x00\x00\x01\x00\x00\x01\x00\x01\x00\x11"
      "\x02\x36\xca\xdc\xb0\xd3\x8b\x35\xb4\x3b\xc9\x49\x0a\x70\x36\x91\x26" },
    { "BrokerRegistrationChangeRecord v3", PROTO_REC_KIND_METADATA, 0, 19,
      "\x01\x11\x03\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x14\x01\x03\x01\x01" },
    { "BrokerRegistrationChangeRecord v0", PROTO_REC_KIND_METADATA, 0, 19,
      "\x01\x11\x00\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x14\x01\x00\x01\xff" },
    { "BrokerRegistrationChangeRecord v1", PROTO_REC_KIND_METADATA, 0, 19,
      "\x01\x11\x01\x00\x00\x00\x01\x00\x00\x00\x00\x00\x00\x00\x14\x01\x01\x01\x01" },
    { "TopicRecord v0", PROTO_REC_KIND_METADATA, 0, 27,
      "\x01\x02\x00\x07\x64\x75\x6d\x70\x2d\x61\xe5\x55\xe9\xd5\x37\xc5\x43\x29\x90"
      "\xdc\xdd\xea\xa6\x32\x5d\x36\x00" },
    { "PartitionRecord v2", PROTO_REC_KIND_METADATA, 0, 65,
      "\x01\x03\x02\x00\x00\x00\x00\xe5\x55\xe9\xd5\x37\xc5\x43\x29\x90\xdc\xdd\xea"
      "\xa6\x32\x5d\x36\x02\x00\x00\x00\x01\x02\x00\x00\x00\x01\x01\x01\x00\x00\x00"
      "\x01\x00\x00\x00\x00\x00\x00\x00\x00\x02\x36\xca\xdc\xb0\xd3\x8b\x35\xb4\x3b"
      "\xc9\x49\x0a\x70\x36\x91\x26\x00" },
    { "RemoveTopicRecord v0", PROTO_REC_KIND_METADATA, 0, 20,
      "\x01\x09\x00\x05\xa4\x54\xc1\x52\x8b\x49\xf9\x80\xa8\x06\x55\x0c\xb0\xf3\xf4"
      "\x00" },
    { "PartitionChangeRecord v2", PROTO_REC_KIND_METADATA, 0, 47,
      "\x01\x05\x02\x00\x00\x00\x00\x8d\xf3\x63\xb5\x0d\x6a\x41\x56\x98\x16\x4e\x10"
      "\x52\xea\xac\x93\x04\x00\x01\x01\x01\x04\xff\xff\xff\xff\x06\x05\x02\x00\x00"
      "\x00\x01\x07\x05\x02\x00\x00\x00\x01" },
    { "GroupMetadata (new group) key", PROTO_REC_KIND_GROUP_KEY, 0, 14,
      "\x00\x02\x00\x0a\x64\x75\x6d\x70\x2d\x67\x72\x6f\x75\x70" },
    { "GroupMetadata (new group) value", PROTO_REC_KIND_GROUP_VALUE, 2, 24,
      "\x00\x03\x00\x00\x00\x00\x00\x00\xff\xff\xff\xff\x00\x00\x01\xa2\x30\xf0\x54"
      "\x1c\x00\x00\x00\x00" },
    { "GroupMetadata (stable) key", PROTO_REC_KIND_GROUP_KEY, 0, 14,
      "\x00\x02\x00\x0a\x64\x75\x6d\x70\x2d\x67\x72\x6f\x75\x70" },
    { "GroupMetadata (stable) value", PROTO_REC_KIND_GROUP_VALUE, 2, 218,
      "\x00\x03\x00\x08\x63\x6f\x6e\x73\x75\x6d\x65\x72\x00\x00\x00\x01\x00\x05\x72"
      "\x61\x6e\x67\x65\x00\x2c\x72\x64\x6b\x61\x66\x6b\x61\x2d\x32\x30\x32\x62\x61"
      "\x39\x38\x64\x2d\x34\x34\x38\x66\x2d\x34\x64\x39\x62\x2d\x39\x64\x65\x33\x2d"
      "\x63\x61\x33\x34\x35\x36\x30\x31\x30\x65\x30\x36\x00\x00\x01\xa2\x30\xf0\x55"
      "\x3c\x00\x00\x00\x01\x00\x2c\x72\x64\x6b\x61\x66\x6b\x61\x2d\x32\x30\x32\x62"
      "\x61\x39\x38\x64\x2d\x34\x34\x38\x66\x2d\x34\x64\x39\x62\x2d\x39\x64\x65\x33"
      "\x2d\x63\x61\x33\x34\x35\x36\x30\x31\x30\x65\x30\x36\xff\xff\x00\x07\x72\x64"
      "\x6b\x61\x66\x6b\x61\x00\x0a\x2f\x31\x32\x37\x2e\x30\x2e\x30\x2e\x31\x00\x04"
      "\x93\xe0\x00\x00\xaf\xc8\x00\x00\x00\x16\x00\x01\x00\x00\x00\x01\x00\x06\x64"
      "\x75\x6d\x70\x2d\x61\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x00\x1e\x00\x00"
      "\x00\x00\x00\x01\x00\x06\x64\x75\x6d\x70\x2d\x61\x00\x00\x00\x02\x00\x00\x00"
      "\x00\x00\x00\x00\x01\x00\x00\x00\x00" },
    { "OffsetCommit p0 key", PROTO_REC_KIND_GROUP_KEY, 0, 26,
      "\x00\x01\x00\x0a\x64\x75\x6d\x70\x2d\x67\x72\x6f\x75\x70\x00\x06\x64\x75\x6d"
      "\x70\x2d\x61\x00\x00\x00\x00" },
    { "OffsetCommit p0 value", PROTO_REC_KIND_GROUP_VALUE, 1, 44,
      "\x00\x04\x00\x00\x00\x00\x00\x00\x00\x03\xff\xff\xff\xff\x03\x6d\x64\x00\x00"
      "\x01\xa2\x30\xf0\x55\xfe\x01\x00\x10\xe5\x55\xe9\xd5\x37\xc5\x43\x29\x90\xdc"
      "\xdd\xea\xa6\x32\x5d\x36" },
    { "OffsetCommit p1 key", PROTO_REC_KIND_GROUP_KEY, 0, 26,
      "\x00\x01\x00\x0a\x64\x75\x6d\x70\x2d\x67\x72\x6f\x75\x70\x00\x06\x64\x75\x6d"
      "\x70\x2d\x61\x00\x00\x00\x01" },
    { "OffsetCommit p1 value", PROTO_REC_KIND_GROUP_VALUE, 1, 42,
      "\x00\x04\x00\x00\x00\x00\x00\x00\x00\x05\xff\xff\xff\xff\x01\x00\x00\x01\xa2"
      "\x30\xf0\x55\xfe\x01\x00\x10\xe5\x55\xe9\xd5\x37\xc5\x43\x29\x90\xdc\xdd\xea"
      "\xa6\x32\x5d\x36" },
    { "GroupMetadata (empty) key", PROTO_REC_KIND_GROUP_KEY, 0, 14,
      "\x00\x02\x00\x0a\x64\x75\x6d\x70\x2d\x67\x72\x6f\x75\x70" },
    { "GroupMetadata (empty) value", PROTO_REC_KIND_GROUP_VALUE, 2, 32,
      "\x00\x03\x00\x08\x63\x6f\x6e\x73\x75\x6d\x65\x72\x00\x00\x00\x02\xff\xff\xff"
      "\xff\x00\x00\x01\xa2\x30\xf0\x56\x66\x00\x00\x00\x00" },
};

#define NVEC (sizeof(vecs) / sizeof(vecs[0]))

static arena_t arena;

/* Room for any record of any kind. */
typedef union kany_u {
    proto_rec_metadata_any_t metadata;
    proto_rec_control_any_t control;
    proto_rec_group_key_any_t group_key;
    proto_rec_group_value_any_t group_value;
    proto_rec_control_record_type_schema_t control_key;
} kany_t;

static const uint8_t *kbytes(const kvec_t *v)
{
    return (const uint8_t *)v->bytes;
}

/* Decodes v into u; returns its schema (NULL on failure) and version. */
static const proto_msg_t *kdecode(const kvec_t *v, kany_t *u, int16_t *ver)
{
    proto_rec_info_t info;
    if (v->kind == PROTO_REC_KIND_DATA) {
        const proto_msg_t *msg = &proto_msg_rec_control_record_type_schema;
        return proto_rec_read(msg, u, ver, kbytes(v), v->len, &arena) ? NULL : msg;
    }
    if (proto_rec_decode(v->kind, v->type, kbytes(v), v->len, u, sizeof(*u), &arena, &info))
        return NULL;
    *ver = info.version;
    return info.msg;
}

static const kvec_t *kfind(const char *name)
{
    for (size_t i = 0; i < NVEC; i++)
        if (!strcmp(vecs[i].name, name))
            return &vecs[i];
    CU_FAIL_FATAL("no such vector");
    return NULL;
}

static int str_is(proto_str_t s, const char *c)
{
    return s.len == (int32_t)strlen(c) && !memcmp(s.p, c, (size_t)s.len);
}

/* Every vector decodes and encodes back to Kafka's bytes. */
static void test_kafka_bytes_again(void)
{
    for (size_t i = 0; i < NVEC; i++) {
        kany_t u;
        int16_t ver = -1;
        buf_t b;
        const proto_msg_t *msg = kdecode(&vecs[i], &u, &ver);
        CU_ASSERT_PTR_NOT_NULL(msg);
        if (!msg) {
            fprintf(stderr, "\n  %s: not decoded\n", vecs[i].name);
            continue;
        }
        buf_init(&b);
        proto_rec_encode(msg, &u, ver, &b);
        if (!unit_bytes_eq(b.p, b.len, kbytes(&vecs[i]), vecs[i].len)) {
            fprintf(stderr, "  %s (%s v%d) encodes differently\n", vecs[i].name, msg->name, ver);
            CU_FAIL("encoded differently");
        }
        buf_free(&b);
        arena_reset(&arena);
    }
}

/* The KRaft control records, with the values DumpLogSegments printed. */
static void test_kafka_control(void)
{
    kany_t u;
    int16_t ver;
    CU_ASSERT_PTR_EQUAL_FATAL(kdecode(kfind("LeaderChangeMessage v0"), &u, &ver),
                              &proto_msg_rec_leader_change_message);
    CU_ASSERT_EQUAL(ver, 0);
    CU_ASSERT_EQUAL(u.control.leader_change_message.leader_id, 1);
    CU_ASSERT_EQUAL_FATAL(u.control.leader_change_message.voters.n, 1);
    CU_ASSERT_EQUAL(u.control.leader_change_message.voters.v[0].voter_id, 1);
    CU_ASSERT_EQUAL(u.control.leader_change_message.granting_voters.n, 1);
    CU_ASSERT_PTR_NOT_NULL(kdecode(kfind("control key LEADER_CHANGE"), &u, &ver));
    CU_ASSERT_EQUAL(u.control_key.type, PROTO_REC_LEADER_CHANGE_MESSAGE);
    kdecode(kfind("SnapshotHeaderRecord v0"), &u, &ver);
    CU_ASSERT_EQUAL(u.control.snapshot_header_record.last_contained_log_timestamp,
                    INT64_C(1796117414002));
    kdecode(kfind("KRaftVersionRecord v0"), &u, &ver);
    CU_ASSERT_EQUAL(u.control.k_raft_version_record.k_raft_version, 1);
    CU_ASSERT_PTR_EQUAL_FATAL(kdecode(kfind("VotersRecord v0"), &u, &ver),
                              &proto_msg_rec_voters_record);
    const proto_rec_voters_record_t *vr = &u.control.voters_record;
    CU_ASSERT_EQUAL_FATAL(vr->voters.n, 1);
    CU_ASSERT_EQUAL(vr->voters.v[0].voter_id, 1);
    CU_ASSERT_EQUAL_FATAL(vr->voters.v[0].endpoints.n, 1);
    CU_ASSERT(str_is(vr->voters.v[0].endpoints.v[0].name, "CONTROLLER"));
    CU_ASSERT(str_is(vr->voters.v[0].endpoints.v[0].host, "127.0.0.1"));
    CU_ASSERT_EQUAL(vr->voters.v[0].endpoints.v[0].port, 29093);
    CU_ASSERT_EQUAL(vr->voters.v[0].k_raft_version_feature.max_supported_version, 1);
    arena_reset(&arena);
}

/* Broker registration and the other records Strand does not write yet. */
static void test_kafka_metadata(void)
{
    kany_t u;
    int16_t ver;
    kdecode(kfind("RegisterBrokerRecord v4"), &u, &ver);
    const proto_rec_register_broker_record_t *rb = &u.metadata.register_broker_record;
    CU_ASSERT_EQUAL(ver, 4);
    CU_ASSERT_EQUAL(rb->broker_id, 1);
    CU_ASSERT_EQUAL(rb->broker_epoch, 20);
    CU_ASSERT_EQUAL_FATAL(rb->end_points.n, 1);
    CU_ASSERT(str_is(rb->end_points.v[0].name, "PLAINTEXT"));
    CU_ASSERT_EQUAL(rb->end_points.v[0].port, 44147);
    CU_ASSERT_EQUAL(rb->features.n, 7);
    CU_ASSERT_EQUAL(rb->rack.len, -1);
    CU_ASSERT(rb->fenced);
    CU_ASSERT(!rb->in_controlled_shutdown);
    CU_ASSERT_EQUAL(rb->log_dirs.n, 1);
    CU_ASSERT_EQUAL(rb->cordoned_log_dirs.n, -1);
    kdecode(kfind("RegisterControllerRecord v0"), &u, &ver);
    CU_ASSERT_EQUAL(u.metadata.register_controller_record.controller_id, 1);
    CU_ASSERT_EQUAL(u.metadata.register_controller_record.end_points.v[0].port, 22902);
    kdecode(kfind("BrokerRegistrationChangeRecord v0"), &u, &ver);
    CU_ASSERT_EQUAL(u.metadata.broker_registration_change_record.fenced, -1);
    kdecode(kfind("BrokerRegistrationChangeRecord v3"), &u, &ver);
    CU_ASSERT_EQUAL(u.metadata.broker_registration_change_record.cordoned_log_dirs.n, 0);
    kdecode(kfind("BeginTransactionRecord v0"), &u, &ver);
    CU_ASSERT(str_is(u.metadata.begin_transaction_record.name, "Bootstrap records"));
    kdecode(kfind("PartitionChangeRecord v2"), &u, &ver);
    const proto_rec_partition_change_record_t *pc = &u.metadata.partition_change_record;
    CU_ASSERT_EQUAL(pc->isr.n, 0);
    CU_ASSERT_EQUAL(pc->leader, -1);
    CU_ASSERT_EQUAL(pc->replicas.n, -1);
    CU_ASSERT_EQUAL_FATAL(pc->eligible_leader_replicas.n, 1);
    CU_ASSERT_EQUAL(pc->eligible_leader_replicas.v[0], 1);
    CU_ASSERT_EQUAL(pc->last_known_elr.n, 1);
    arena_reset(&arena);
}

/* The cluster layer's decoder reads every metadata record Kafka wrote
 * (no longer skipping broker registrations as types it does not know). */
static void test_kafka_meta_rec(void)
{
    int n = 0;
    for (size_t i = 0; i < NVEC; i++) {
        meta_rec_t r;
        if (vecs[i].kind != PROTO_REC_KIND_METADATA)
            continue;
        n++;
        CU_ASSERT_EQUAL(meta_rec_decode(&r, kbytes(&vecs[i]), vecs[i].len, &arena), 0);
        if (!strcmp(vecs[i].name, "ConfigRecord v0")) {
            CU_ASSERT_EQUAL(r.u.config.resource_type, META_RES_BROKER);
            CU_ASSERT(str_is(r.u.config.name, "min.insync.replicas"));
            CU_ASSERT(str_is(r.u.config.value, "1"));
        } else if (!strcmp(vecs[i].name, "FeatureLevelRecord v0")) {
            CU_ASSERT_EQUAL(r.u.feature.feature_level, 33);
        } else if (!strcmp(vecs[i].name, "PartitionRecord v2")) {
            CU_ASSERT_EQUAL(r.u.part.leader, 1);
            CU_ASSERT_EQUAL(r.u.part.directories.n, 1);
        }
        arena_reset(&arena);
    }
    CU_ASSERT_EQUAL(n, 14);
}

/* The group coordinator's decoders read Kafka's records: the stable
 * group, and offsets committed as OffsetCommitValue v4. */
static void test_kafka_grp_rec(void)
{
    grp_rec_key_t k;
    grp_rec_group_t g;
    grp_rec_offset_t o;
    const kvec_t *v = kfind("GroupMetadata (stable) key");
    CU_ASSERT_EQUAL(grp_rec_key_decode(kbytes(v), v->len, &k), 0);
    CU_ASSERT_EQUAL(k.version, GRP_REC_KEY_GROUP);
    CU_ASSERT(str_is(k.group, "dump-group"));
    v = kfind("GroupMetadata (stable) value");
    CU_ASSERT_EQUAL_FATAL(grp_rec_group_decode(kbytes(v), v->len, &g, &arena), 0);
    CU_ASSERT(str_is(g.protocol_type, "consumer"));
    CU_ASSERT_EQUAL(g.generation, 1);
    CU_ASSERT(str_is(g.protocol, "range"));
    CU_ASSERT_EQUAL_FATAL(g.nmembers, 1);
    CU_ASSERT(str_is(g.members[0].client_id, "rdkafka"));
    CU_ASSERT(str_is(g.members[0].client_host, "/127.0.0.1"));
    CU_ASSERT_EQUAL(g.members[0].instance_id.len, -1);
    CU_ASSERT_EQUAL(g.members[0].rebalance_timeout, 300000);
    CU_ASSERT_EQUAL(g.members[0].session_timeout, 45000);
    CU_ASSERT_EQUAL(g.members[0].subscription.len, 22);
    v = kfind("OffsetCommit p0 key");
    CU_ASSERT_EQUAL(grp_rec_key_decode(kbytes(v), v->len, &k), 0);
    CU_ASSERT_EQUAL(k.version, GRP_REC_KEY_OFFSET);
    CU_ASSERT(str_is(k.topic, "dump-a"));
    CU_ASSERT_EQUAL(k.partition, 0);
    v = kfind("OffsetCommit p0 value");
    CU_ASSERT_EQUAL(grp_rec_offset_decode(kbytes(v), v->len, &o), 0);
    CU_ASSERT_EQUAL(o.offset, 3);
    CU_ASSERT_EQUAL(o.leader_epoch, -1);
    CU_ASSERT(str_is(o.metadata, "md"));
    CU_ASSERT_EQUAL(o.commit_ts, INT64_C(1796117386750));
    CU_ASSERT_EQUAL(o.expire_ts, -1);
    arena_reset(&arena);
}

int main(void)
{
    arena_init(&arena, 1 << 14);
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("rec_kafka", NULL, NULL);
    CU_add_test(s, "Kafka's bytes decode and encode again", test_kafka_bytes_again);
    CU_add_test(s, "KRaft control records", test_kafka_control);
    CU_add_test(s, "metadata records", test_kafka_metadata);
    CU_add_test(s, "meta_rec_decode", test_kafka_meta_rec);
    CU_add_test(s, "grp_rec decoders", test_kafka_grp_rec);
    int rc = unit_run();
    arena_destroy(&arena);
    return rc;
}
