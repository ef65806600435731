/* Internal records (proto/proto_rec.h): every record at every version
 * round-trips framed by its kind and unframed, keyed records are found by
 * kind and type, the framing of each kind is exact to the byte, and types
 * or versions we do not define are skipped, not errors. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/proto.h"
#include "proto/proto_desc.h"
#include "proto/proto_rec.h"
#include "tests/unit/unit_proto.h"
#include "unit.h"

static arena_t arena;

/* ---- internal records ---- */

/* A filled record, framed by its kind, read back by its schema and (a
 * keyed kind) found by its type; every truncation of the framed bytes
 * fails. A control record's leading Version field is the version. */
static int rec_round_trip(const proto_msg_t *msg, int16_t v, int seed)
{
    void *m = arena_calloc(&arena, 1, msg->st->size);
    void *d = arena_calloc(&arena, 1, msg->st->size);
    proto_rec_info_t info;
    unit_fill_t fl;
    int16_t ver = -9;
    buf_t b;
    int ok = 1;

    unit_fill_init(&fl, 0x9e3779b9u * (uint32_t)(seed + 1), &arena);
    unit_fill_struct(&fl, msg->st, m, v);
    if (msg->kind == PROTO_REC_KIND_CONTROL)
        *(int16_t *)m = (int16_t)(v + 1); /* the encoder writes v */
    buf_init(&b);
    proto_rec_encode(msg, m, v, &b);
    if (msg->kind == PROTO_REC_KIND_CONTROL)
        *(int16_t *)m = v;
    uint8_t *copy = malloc(b.len ? b.len : 1);
    memcpy(copy, b.p, b.len);
    if (proto_rec_read(msg, d, &ver, copy, b.len, &arena) || ver != v ||
        !unit_same_struct(msg->st, m, d, v))
        ok = 0;
    if (ok && msg->kind != PROTO_REC_KIND_DATA &&
        (proto_rec_decode(msg->kind, msg->key, copy, b.len, d, msg->st->size, &arena, &info) ||
         info.msg != msg || info.type != msg->key || info.version != v ||
         !unit_same_struct(msg->st, m, d, v)))
        ok = 0;
    for (size_t n = 0; ok && n < b.len; n++) {
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, copy, n);
        if (proto_rec_read(msg, d, NULL, cut, n, &arena) != -1) {
            fprintf(stderr, "\n  truncation to %zu of %zu bytes accepted", n, b.len);
            ok = 0;
        }
        free(cut);
    }
    if (!ok)
        fprintf(stderr, "\n  %s v%d seed %d: framed round trip failed\n", msg->name, v, seed);
    free(copy);
    buf_free(&b);
    return ok;
}

static void test_rec_round_trip_all(void)
{
    int nrec = 0, nkind[PROTO_REC_KIND_TXN_VALUE + 1] = {0}, runs = 0;
    for (const proto_msg_t *const *mp = proto_rec_all; *mp; mp++, nrec++) {
        const proto_msg_t *msg = *mp;
        CU_ASSERT_FATAL(msg->kind > PROTO_REC_KIND_NONE && msg->kind <= PROTO_REC_KIND_TXN_VALUE);
        nkind[msg->kind]++;
        for (int16_t v = msg->vmin; v <= msg->vmax; v++) {
            for (int seed = 0; seed < 4; seed++, runs++) {
                CU_ASSERT(unit_round_trip(msg, v, seed, &arena));
                CU_ASSERT(rec_round_trip(msg, v, seed));
                arena_reset(&arena);
            }
        }
    }
    /* Kafka 4.4's 27 metadata records; 5 KRaft control records with the
     * control key and the transaction marker; classic group records;
     * the transaction log. */
    CU_ASSERT_EQUAL(nkind[PROTO_REC_KIND_METADATA], 27);
    CU_ASSERT_EQUAL(nkind[PROTO_REC_KIND_CONTROL], 5);
    CU_ASSERT_EQUAL(nkind[PROTO_REC_KIND_DATA], 2);
    CU_ASSERT_EQUAL(nkind[PROTO_REC_KIND_GROUP_KEY], 3);
    CU_ASSERT_EQUAL(nkind[PROTO_REC_KIND_GROUP_VALUE], 3);
    CU_ASSERT_EQUAL(nkind[PROTO_REC_KIND_TXN_KEY], 1);
    CU_ASSERT_EQUAL(nkind[PROTO_REC_KIND_TXN_VALUE], 1);
    CU_ASSERT_EQUAL(nrec, 42);
    CU_ASSERT(runs > 200);
}

/* Every keyed record is found by kind and type, and nothing else is. */
static void test_rec_find(void)
{
    int found = 0;
    for (int kind = PROTO_REC_KIND_NONE; kind <= PROTO_REC_KIND_TXN_VALUE + 1; kind++)
        for (int16_t t = -1; t < 64; t++) {
            const proto_msg_t *msg = proto_rec_find(kind, t);
            if (!msg)
                continue;
            found++;
            CU_ASSERT_EQUAL(msg->kind, kind);
            CU_ASSERT_EQUAL(msg->key, t);
        }
    CU_ASSERT_EQUAL(found, 40);
    CU_ASSERT_PTR_EQUAL(proto_rec_find(PROTO_REC_KIND_METADATA, PROTO_REC_TOPIC_RECORD),
                        &proto_msg_rec_topic_record);
    CU_ASSERT_PTR_EQUAL(proto_rec_find(PROTO_REC_KIND_TXN_KEY, 0), &proto_msg_rec_transaction_log_key);
    CU_ASSERT_PTR_EQUAL(proto_rec_find(PROTO_REC_KIND_GROUP_KEY, 0),
                        &proto_msg_rec_legacy_offset_commit_key);
    CU_ASSERT_PTR_NULL(proto_rec_find(PROTO_REC_KIND_GROUP_KEY, 3)); /* KIP-848: not defined */
    CU_ASSERT_PTR_NULL(proto_rec_find(PROTO_REC_KIND_DATA, -1));
}

static const uint8_t TID[16] = { 0x84, 0x90, 0xd2, 0xf3, 0xc0, 0x8e, 0x4e, 0x3c,
                                 0xa6, 0x9b, 0x41, 0xf1, 0xb4, 0xe8, 0x5d, 0x79 };

/* The framing of each kind, byte for byte. */
static void test_rec_framing(void)
{
    /* TopicRecord "auto1" as Kafka 4.4 wrote it (valueSize 26). */
    static const uint8_t topic[] = { 0x01, 0x02, 0x00, 0x06, 'a', 'u', 't', 'o', '1',
                                     0x84, 0x90, 0xd2, 0xf3, 0xc0, 0x8e, 0x4e, 0x3c,
                                     0xa6, 0x9b, 0x41, 0xf1, 0xb4, 0xe8, 0x5d, 0x79, 0x00 };
    static const uint8_t okey[] = { 0x00, 0x01, 0x00, 0x02, 'g', '1', 0x00, 0x02, 't', 'p',
                                    0x00, 0x00, 0x00, 0x07 };
    static const uint8_t oval[] = { 0x00, 0x03, 0, 0, 0, 0, 0, 0, 0, 0x2a, 0, 0, 0, 5,
                                    0x00, 0x00, 0, 0, 0, 0, 0, 0, 0x03, 0xe8 };
    static const uint8_t ctlkey[] = { 0x00, 0x00, 0x00, 0x05 };
    static const uint8_t marker[] = { 0x00, 0x00, 0x00, 0x00, 0x00, 0x07 };
    static const uint8_t kraft[] = { 0x00, 0x00, 0x00, 0x01, 0x00 };
    proto_rec_topic_record_t t;
    proto_rec_offset_commit_key_t k;
    proto_rec_offset_commit_value_t v;
    proto_rec_control_record_type_schema_t c;
    proto_rec_end_txn_marker_t e;
    proto_rec_k_raft_version_record_t kr;
    buf_t b;

    buf_init(&b);
    proto_rec_topic_record_init(&t);
    t.name = PROTO_STR("auto1");
    memcpy(t.topic_id.b, TID, 16);
    proto_rec_topic_record_write(&t, 0, &b);
    UNIT_CHECK_BUF(&b, topic);
    b.len = 0;
    proto_rec_offset_commit_key_init(&k);
    k.group = PROTO_STR("g1");
    k.topic = PROTO_STR("tp");
    k.partition = 7;
    proto_rec_offset_commit_key_write(&k, 0, &b);
    UNIT_CHECK_BUF(&b, okey);
    b.len = 0;
    proto_rec_offset_commit_value_init(&v);
    v.offset = 42;
    v.leader_epoch = 5;
    v.commit_timestamp = 1000;
    proto_rec_offset_commit_value_write(&v, 3, &b);
    UNIT_CHECK_BUF(&b, oval);
    b.len = 0;
    proto_rec_control_record_type_schema_init(&c);
    c.type = PROTO_REC_K_RAFT_VERSION_RECORD;
    proto_rec_control_record_type_schema_write(&c, 0, &b);
    UNIT_CHECK_BUF(&b, ctlkey);
    b.len = 0;
    proto_rec_end_txn_marker_init(&e);
    e.coordinator_epoch = 7;
    proto_rec_end_txn_marker_write(&e, 0, &b);
    UNIT_CHECK_BUF(&b, marker);
    b.len = 0;
    proto_rec_k_raft_version_record_init(&kr);
    kr.k_raft_version = 1;
    proto_rec_k_raft_version_record_write(&kr, 0, &b);
    UNIT_CHECK_BUF(&b, kraft);
    buf_free(&b);
}

/* Types and versions we do not define are skipped (1), not errors. */
static void test_rec_unknown(void)
{
    proto_rec_metadata_any_t mu;
    proto_rec_group_value_any_t gv;
    proto_rec_info_t info;
    proto_rec_offset_commit_key_t k;
    int16_t ver;

    CU_ASSERT_EQUAL(proto_rec_decode(PROTO_REC_KIND_METADATA, 0, (const uint8_t *)"\x01\x63\x00\xff",
                                     4, &mu, sizeof(mu), &arena, &info), 1);
    CU_ASSERT_EQUAL(info.type, 99);
    CU_ASSERT_PTR_NULL(info.msg);
    CU_ASSERT_EQUAL(proto_rec_decode(PROTO_REC_KIND_METADATA, 0, (const uint8_t *)"\x01\x02\x05",
                                     3, &mu, sizeof(mu), &arena, &info), 1);
    CU_ASSERT_PTR_EQUAL(info.msg, &proto_msg_rec_topic_record);
    CU_ASSERT_EQUAL(info.version, 5);
    /* frame version 2; a cut frame; a type beyond int16 */
    CU_ASSERT_EQUAL(proto_rec_decode(PROTO_REC_KIND_METADATA, 0, (const uint8_t *)"\x02\x02\x00",
                                     3, &mu, sizeof(mu), &arena, NULL), -1);
    CU_ASSERT_EQUAL(proto_rec_decode(PROTO_REC_KIND_METADATA, 0, (const uint8_t *)"\x01\x82",
                                     2, &mu, sizeof(mu), &arena, NULL), -1);
    CU_ASSERT_EQUAL(proto_rec_decode(PROTO_REC_KIND_METADATA, 0,
                                     (const uint8_t *)"\x01\x80\x80\x02\x00", 5, &mu,
                                     sizeof(mu), &arena, NULL), -1);
    /* m too small for the record found */
    CU_ASSERT_EQUAL(proto_rec_decode(PROTO_REC_KIND_METADATA, 0, (const uint8_t *)"\x01\x14\x00\x00",
                                     4, &mu, 0, &arena, NULL), -1);
    /* a group value of a version beyond ours; of a type we lack */
    CU_ASSERT_EQUAL(proto_rec_decode(PROTO_REC_KIND_GROUP_VALUE, 1, (const uint8_t *)"\x00\x09",
                                     2, &gv, sizeof(gv), &arena, &info), 1);
    CU_ASSERT_EQUAL(info.version, 9);
    CU_ASSERT_EQUAL(proto_rec_decode(PROTO_REC_KIND_GROUP_VALUE, 5, (const uint8_t *)"\x00\x00",
                                     2, &gv, sizeof(gv), &arena, &info), 1);
    CU_ASSERT_PTR_NULL(info.msg);
    /* a GroupMetadataKey is not an OffsetCommitKey */
    CU_ASSERT_EQUAL(proto_rec_offset_commit_key_read(&k, &ver, (const uint8_t *)"\x00\x02\x00\x01g",
                                                     5, &arena), 1);
    CU_ASSERT_EQUAL(proto_rec_offset_commit_key_read(&k, &ver, (const uint8_t *)"\x00", 1, &arena),
                    -1);
}

int main(void)
{
    arena_init(&arena, 4096);
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("proto records", NULL, NULL);
    CU_add_test(s, "rec_round_trip_all", test_rec_round_trip_all);
    CU_add_test(s, "rec_find", test_rec_find);
    CU_add_test(s, "rec_framing", test_rec_framing);
    CU_add_test(s, "rec_unknown", test_rec_unknown);
    int rc = unit_run();
    arena_destroy(&arena);
    return rc;
}
