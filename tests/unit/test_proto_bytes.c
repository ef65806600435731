/* Exact bytes of hand-checked messages, both ways: ApiVersions v0, v3 and
 * v5, Metadata v1 and v12, Produce v3, v9 and v13 (topics by id), Fetch v4
 * and v12, with lying lengths, nulls a version does not allow and tagged
 * fields; and a Fetch response whose records are spliced from an fd. */
#include <fcntl.h>
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

/* ---- exact bytes ---- */

static void test_api_versions_v0(void)
{
    static const uint8_t resp[] = {
        0x00, 0x00,             /* error_code */
        0x00, 0x00, 0x00, 0x02, /* api_keys: 2 */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x0c,
        0x00, 0x12, 0x00, 0x00, 0x00, 0x04,
    };
    proto_api_versions_req_t rq;
    CU_ASSERT_EQUAL(proto_api_versions_req_decode(&rq, 0, (const uint8_t *)"", 0, &arena), 0);
    buf_t b;
    buf_init(&b);
    proto_api_versions_req_encode(&rq, 0, &b);
    CU_ASSERT_EQUAL(b.len, 0);

    proto_api_versions_resp_t r;
    proto_api_versions_resp_api_version_t keys[2] = { { 0, 0, 12 }, { 18, 0, 4 } };
    proto_api_versions_resp_init(&r);
    r.api_keys.n = 2;
    r.api_keys.v = keys;
    r.throttle_time_ms = 99; /* not in v0 */
    proto_api_versions_resp_encode(&r, 0, &b);
    UNIT_CHECK_BUF(&b, resp);

    proto_api_versions_resp_t d;
    CU_ASSERT_EQUAL_FATAL(proto_api_versions_resp_decode(&d, 0, resp, sizeof(resp), &arena), 0);
    CU_ASSERT_EQUAL(d.error_code, 0);
    CU_ASSERT_EQUAL_FATAL(d.api_keys.n, 2);
    CU_ASSERT_EQUAL(d.api_keys.v[1].api_key, 18);
    CU_ASSERT_EQUAL(d.api_keys.v[1].max_version, 4);
    CU_ASSERT_EQUAL(d.throttle_time_ms, 0);
    buf_free(&b);
}

static void test_api_versions_v3(void)
{
    static const uint8_t req[] = {
        0x0b, 'l', 'i', 'b', 'r', 'd', 'k', 'a', 'f', 'k', 'a',
        0x06, '2', '.', '0', '.', '2',
        0x00, /* tagged fields */
    };
    static const uint8_t resp[] = {
        0x00, 0x00,                               /* error_code */
        0x03,                                     /* api_keys: 2 (compact) */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x0c, 0x00, /* ... + empty tags */
        0x00, 0x12, 0x00, 0x00, 0x00, 0x04, 0x00,
        0x00, 0x00, 0x00, 0x00,                   /* throttle_time_ms */
        0x01,                                     /* one tagged field */
        0x01, 0x08,                               /* tag 1, 8 bytes */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x05,
    };
    proto_api_versions_req_t rq;
    CU_ASSERT_EQUAL_FATAL(proto_api_versions_req_decode(&rq, 3, req, sizeof(req), &arena), 0);
    CU_ASSERT(unit_str_is(rq.client_software_name, "librdkafka"));
    CU_ASSERT(unit_str_is(rq.client_software_version, "2.0.2"));
    buf_t b;
    buf_init(&b);
    proto_api_versions_req_encode(&rq, 3, &b);
    UNIT_CHECK_BUF(&b, req);
    b.len = 0;

    proto_api_versions_resp_t r;
    proto_api_versions_resp_api_version_t keys[2] = { { 0, 0, 12 }, { 18, 0, 4 } };
    proto_api_versions_resp_init(&r);
    r.api_keys.n = 2;
    r.api_keys.v = keys;
    r.finalized_features_epoch = 5; /* tagged, not default: written */
    proto_api_versions_resp_encode(&r, 3, &b);
    UNIT_CHECK_BUF(&b, resp);
    proto_api_versions_resp_t d;
    CU_ASSERT_EQUAL_FATAL(proto_api_versions_resp_decode(&d, 3, resp, sizeof(resp), &arena), 0);
    CU_ASSERT_EQUAL(d.api_keys.n, 2);
    CU_ASSERT_EQUAL(d.api_keys.v[0].max_version, 12);
    CU_ASSERT_EQUAL(d.finalized_features_epoch, 5);
    CU_ASSERT_EQUAL(d.supported_features.n, 0);
    CU_ASSERT_EQUAL(d.zk_migration_ready, false);

    /* all tagged fields at their defaults: an empty section */
    b.len = 0;
    r.finalized_features_epoch = -1;
    proto_api_versions_resp_encode(&r, 3, &b);
    CU_ASSERT_EQUAL(b.len, sizeof(resp) - 11 + 1);
    CU_ASSERT_EQUAL(b.p[b.len - 1], 0x00);
    /* a known tag whose data is too short is an error */
    uint8_t bad[sizeof(resp)];
    memcpy(bad, resp, sizeof(resp));
    bad[sizeof(resp) - 7] = 0x02; /* size 2: an int64 cannot fit */
    CU_ASSERT_EQUAL(proto_api_versions_resp_decode(&d, 3, bad, sizeof(resp) - 4, &arena), -1);
    buf_free(&b);
}

/* v5 adds the cluster and node the client means to reach (null, -1 when
 * it does not know them). */
static void test_api_versions_v5(void)
{
    static const uint8_t req[] = {
        0x02, 'j',                /* client_software_name */
        0x04, '4', '.', '4',      /* client_software_version */
        0x03, 'c', 'X',           /* cluster_id "cX" */
        0x00, 0x00, 0x00, 0x07,   /* node_id 7 */
        0x00,                     /* tagged fields */
    };
    static const uint8_t unknown[] = {0x02, 'j', 0x04, '4', '.', '4', 0x00, 0xff, 0xff, 0xff,
                                      0xff, 0x00};
    proto_api_versions_req_t rq;
    CU_ASSERT_EQUAL_FATAL(proto_api_versions_req_decode(&rq, 5, req, sizeof(req), &arena), 0);
    CU_ASSERT(unit_str_is(rq.cluster_id, "cX"));
    CU_ASSERT_EQUAL(rq.node_id, 7);
    buf_t b;
    buf_init(&b);
    proto_api_versions_req_encode(&rq, 5, &b);
    UNIT_CHECK_BUF(&b, req);
    b.len = 0;
    proto_api_versions_req_init(&rq);
    CU_ASSERT_EQUAL(rq.cluster_id.len, -1);
    CU_ASSERT_EQUAL(rq.node_id, -1);
    rq.client_software_name = PROTO_STR("j");
    rq.client_software_version = PROTO_STR("4.4");
    proto_api_versions_req_encode(&rq, 5, &b);
    UNIT_CHECK_BUF(&b, unknown);
    /* v4 has neither field: the same request is 5 bytes shorter */
    b.len = 0;
    proto_api_versions_req_encode(&rq, 4, &b);
    CU_ASSERT_EQUAL(b.len, sizeof(unknown) - 5);
    buf_free(&b);
}

static void test_metadata_v1(void)
{
    static const uint8_t req[] = {
        0x00, 0x00, 0x00, 0x02, /* topics: 2 */
        0x00, 0x01, 'a',
        0x00, 0x02, 'b', 'c',
    };
    static const uint8_t all[] = { 0xff, 0xff, 0xff, 0xff }; /* null: all topics */
    proto_metadata_req_t m;
    CU_ASSERT_EQUAL_FATAL(proto_metadata_req_decode(&m, 1, req, sizeof(req), &arena), 0);
    CU_ASSERT_EQUAL_FATAL(m.topics.n, 2);
    CU_ASSERT(unit_str_is(m.topics.v[0].name, "a"));
    CU_ASSERT(unit_str_is(m.topics.v[1].name, "bc"));
    CU_ASSERT_EQUAL(m.allow_auto_topic_creation, true); /* default: not in v1 */
    buf_t b;
    buf_init(&b);
    proto_metadata_req_encode(&m, 1, &b);
    UNIT_CHECK_BUF(&b, req);
    CU_ASSERT_EQUAL_FATAL(proto_metadata_req_decode(&m, 1, all, sizeof(all), &arena), 0);
    CU_ASSERT_EQUAL(m.topics.n, -1);
    b.len = 0;
    proto_metadata_req_encode(&m, 1, &b);
    UNIT_CHECK_BUF(&b, all);
    /* v0 has no null array */
    CU_ASSERT_EQUAL(proto_metadata_req_decode(&m, 0, all, sizeof(all), &arena), -1);
    /* a lying count fails before any allocation of that size */
    static const uint8_t lie[] = { 0x7f, 0xff, 0xff, 0xff, 0x00, 0x01, 'a' };
    CU_ASSERT_EQUAL(proto_metadata_req_decode(&m, 1, lie, sizeof(lie), &arena), -1);
    static const uint8_t lie12[] = { 0xff, 0xff, 0xff, 0xff, 0x0f, 0x00, 0x01, 0x00, 0x00 };
    CU_ASSERT_EQUAL(proto_metadata_req_decode(&m, 12, lie12, sizeof(lie12), &arena), -1);
    /* version outside our range */
    CU_ASSERT_EQUAL(proto_metadata_req_decode(&m, 14, req, sizeof(req), &arena), -1);
    buf_free(&b);
}

static void test_metadata_v12(void)
{
    static const uint8_t req[] = {
        0x03, /* topics: 2 */
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, /* topic_id */
        0x03, 't', '1',                                 /* name */
        0x00,                                           /* tags */
        0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
        0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
        0x00,       /* name: null */
        0x00,       /* tags */
        0x01,       /* allow_auto_topic_creation */
        0x00,       /* include_topic_authorized_operations */
        0x00,       /* tags */
    };
    /* the same with unknown tagged fields inside the first topic and at
     * the top level (tag 128 has a two-byte uvarint) */
    static const uint8_t unk[] = {
        0x03,
        0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
        0x03, 't', '1',
        0x01, 0x63, 0x02, 0xaa, 0xbb,
        0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
        0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11, 0x11,
        0x00, 0x00,
        0x01, 0x00,
        0x02, 0x80, 0x01, 0x01, 0xff, 0x05, 0x00,
    };
    proto_metadata_req_t m;
    for (int pass = 0; pass < 2; pass++) {
        const uint8_t *w = pass ? unk : req;
        size_t wl = pass ? sizeof(unk) : sizeof(req);
        CU_ASSERT_EQUAL_FATAL(proto_metadata_req_decode(&m, 12, w, wl, &arena), 0);
        CU_ASSERT_EQUAL_FATAL(m.topics.n, 2);
        CU_ASSERT(unit_str_is(m.topics.v[0].name, "t1"));
        CU_ASSERT_EQUAL(m.topics.v[1].name.len, -1);
        CU_ASSERT_EQUAL(m.topics.v[1].topic_id.b[15], 0x11);
        CU_ASSERT_EQUAL(m.allow_auto_topic_creation, true);
        CU_ASSERT_EQUAL(m.include_topic_authorized_operations, false);
        buf_t b;
        buf_init(&b);
        proto_metadata_req_encode(&m, 12, &b);
        UNIT_CHECK_BUF(&b, req);
        buf_free(&b);
    }
    /* topic names are nullable from v10 only */
    static const uint8_t null9[] = { 0x02, 0x00, 0x00, 0x01, 0x00, 0x00 };
    CU_ASSERT_EQUAL(proto_metadata_req_decode(&m, 9, null9, sizeof(null9), &arena), -1);
}

static const uint8_t batch4[] = { 0xde, 0xad, 0xbe, 0xef };

static void test_produce_v3(void)
{
    static const uint8_t req[] = {
        0xff, 0xff,             /* transactional_id: null */
        0xff, 0xff,             /* acks -1 */
        0x00, 0x00, 0x75, 0x30, /* timeout_ms 30000 */
        0x00, 0x00, 0x00, 0x01, /* topic_data: 1 */
        0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, /* partition_data: 1 */
        0x00, 0x00, 0x00, 0x00, /* index */
        0x00, 0x00, 0x00, 0x04, 0xde, 0xad, 0xbe, 0xef,
    };
    proto_produce_req_t m;
    CU_ASSERT_EQUAL_FATAL(proto_produce_req_decode(&m, 3, req, sizeof(req), &arena), 0);
    CU_ASSERT_EQUAL(m.transactional_id.len, -1);
    CU_ASSERT_EQUAL(m.acks, -1);
    CU_ASSERT_EQUAL(m.timeout_ms, 30000);
    CU_ASSERT_EQUAL_FATAL(m.topic_data.n, 1);
    CU_ASSERT(unit_str_is(m.topic_data.v[0].name, "t"));
    CU_ASSERT_EQUAL_FATAL(m.topic_data.v[0].partition_data.n, 1);
    proto_records_t *r = &m.topic_data.v[0].partition_data.v[0].records;
    CU_ASSERT_EQUAL(r->len, 4);
    CU_ASSERT_PTR_EQUAL(r->p, req + sizeof(req) - 4); /* zero copy */
    CU_ASSERT_EQUAL(r->fd, -1);

    proto_produce_req_t e;
    proto_produce_req_topic_produce_data_t td;
    proto_produce_req_partition_produce_data_t pd;
    proto_produce_req_init(&e);
    proto_produce_req_topic_produce_data_init(&td);
    proto_produce_req_partition_produce_data_init(&pd);
    e.acks = -1;
    e.timeout_ms = 30000;
    e.topic_data.n = 1;
    e.topic_data.v = &td;
    td.name = PROTO_STR("t");
    td.partition_data.n = 1;
    td.partition_data.v = &pd;
    pd.records.p = batch4;
    pd.records.len = 4;
    buf_t b;
    buf_init(&b);
    proto_produce_req_encode(&e, 3, &b);
    UNIT_CHECK_BUF(&b, req);
    buf_free(&b);
}

static void test_produce_v9(void)
{
    static const uint8_t req[] = {
        0x03, 't', 'x',         /* transactional_id "tx" */
        0x00, 0x01,             /* acks 1 */
        0x00, 0x00, 0x03, 0xe8, /* timeout_ms 1000 */
        0x02,                   /* topic_data: 1 */
        0x02, 't',
        0x03,                   /* partition_data: 2 */
        0x00, 0x00, 0x00, 0x02,
        0x05, 0xde, 0xad, 0xbe, 0xef,
        0x00,                   /* tags */
        0x00, 0x00, 0x00, 0x03,
        0x00,                   /* records: null */
        0x00,                   /* tags */
        0x00,                   /* topic tags */
        0x00,                   /* tags */
    };
    proto_produce_req_t m;
    CU_ASSERT_EQUAL_FATAL(proto_produce_req_decode(&m, 9, req, sizeof(req), &arena), 0);
    CU_ASSERT(unit_str_is(m.transactional_id, "tx"));
    CU_ASSERT_EQUAL(m.acks, 1);
    CU_ASSERT_EQUAL(m.timeout_ms, 1000);
    CU_ASSERT_EQUAL_FATAL(m.topic_data.n, 1);
    CU_ASSERT_EQUAL_FATAL(m.topic_data.v[0].partition_data.n, 2);
    proto_produce_req_partition_produce_data_t *pd = m.topic_data.v[0].partition_data.v;
    CU_ASSERT_EQUAL(pd[0].index, 2);
    CU_ASSERT_EQUAL(pd[0].records.len, 4);
    CU_ASSERT(!memcmp(pd[0].records.p, batch4, 4));
    CU_ASSERT_EQUAL(pd[1].index, 3);
    CU_ASSERT_EQUAL(pd[1].records.len, -1);
    buf_t b;
    buf_init(&b);
    proto_produce_req_encode(&m, 9, &b);
    UNIT_CHECK_BUF(&b, req);
    buf_free(&b);
}

/* v13 names the topic by its id (16 bytes) where v12 has its name, in
 * the request and in the answer. */
static void test_produce_v13(void)
{
    static const uint8_t req[] = {
        0x00,                   /* transactional_id: null */
        0xff, 0xff,             /* acks -1 */
        0x00, 0x00, 0x03, 0xe8, /* timeout_ms 1000 */
        0x02,                   /* topic_data: 1 */
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08, /* topic_id */
        0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
        0x02,                   /* partition_data: 1 */
        0x00, 0x00, 0x00, 0x01,
        0x05, 0xde, 0xad, 0xbe, 0xef,
        0x00, 0x00, 0x00,       /* partition, topic, request tags */
    };
    static const uint8_t resp[] = {
        0x02,                   /* responses: 1 */
        0x01, 0x02, 0x03, 0x04, 0x05, 0x06, 0x07, 0x08,
        0x09, 0x0a, 0x0b, 0x0c, 0x0d, 0x0e, 0x0f, 0x10,
        0x02,                   /* partition_responses: 1 */
        0x00, 0x00, 0x00, 0x01, /* index */
        0x00, 0x64,             /* error_code 100 UNKNOWN_TOPIC_ID */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* base_offset -1 */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* log_append_time_ms */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* log_start_offset */
        0x01,                   /* record_errors: 0 */
        0x00,                   /* error_message: null */
        0x00, 0x00,             /* partition, topic tags */
        0x00, 0x00, 0x00, 0x00, /* throttle_time_ms */
        0x00,                   /* tags */
    };
    proto_produce_req_t m;
    CU_ASSERT_EQUAL_FATAL(proto_produce_req_decode(&m, 13, req, sizeof(req), &arena), 0);
    CU_ASSERT_EQUAL_FATAL(m.topic_data.n, 1);
    CU_ASSERT_EQUAL(m.topic_data.v[0].topic_id.b[0], 0x01);
    CU_ASSERT_EQUAL(m.topic_data.v[0].topic_id.b[15], 0x10);
    CU_ASSERT_EQUAL(m.topic_data.v[0].name.len, 0); /* not in v13 */
    CU_ASSERT_EQUAL(m.topic_data.v[0].partition_data.v[0].records.len, 4);
    buf_t b;
    buf_init(&b);
    proto_produce_req_encode(&m, 13, &b);
    UNIT_CHECK_BUF(&b, req);
    b.len = 0;

    proto_produce_resp_t r;
    proto_produce_resp_topic_produce_response_t t;
    proto_produce_resp_partition_produce_response_t p;
    proto_produce_resp_init(&r);
    proto_produce_resp_topic_produce_response_init(&t);
    proto_produce_resp_partition_produce_response_init(&p);
    t.topic_id = m.topic_data.v[0].topic_id;
    t.name = PROTO_STR("ignored in v13");
    p.index = 1;
    p.error_code = 100;
    p.base_offset = -1;
    t.partition_responses.n = 1;
    t.partition_responses.v = &p;
    r.responses.n = 1;
    r.responses.v = &t;
    proto_produce_resp_encode(&r, 13, &b);
    UNIT_CHECK_BUF(&b, resp);
    buf_free(&b);
}

static void test_fetch_v4(void)
{
    static const uint8_t req[] = {
        0xff, 0xff, 0xff, 0xff, /* replica_id -1 */
        0x00, 0x00, 0x01, 0xf4, /* max_wait_ms 500 */
        0x00, 0x00, 0x00, 0x01, /* min_bytes */
        0x03, 0x20, 0x00, 0x00, /* max_bytes 52428800 */
        0x01,                   /* isolation_level */
        0x00, 0x00, 0x00, 0x01, /* topics: 1 */
        0x00, 0x01, 't',
        0x00, 0x00, 0x00, 0x01, /* partitions: 1 */
        0x00, 0x00, 0x00, 0x00,
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x0a, /* fetch_offset */
        0x00, 0x10, 0x00, 0x00, /* partition_max_bytes */
    };
    proto_fetch_req_t m;
    CU_ASSERT_EQUAL_FATAL(proto_fetch_req_decode(&m, 4, req, sizeof(req), &arena), 0);
    CU_ASSERT_EQUAL(m.replica_id, -1);
    CU_ASSERT_EQUAL(m.max_wait_ms, 500);
    CU_ASSERT_EQUAL(m.max_bytes, 52428800);
    CU_ASSERT_EQUAL(m.isolation_level, 1);
    CU_ASSERT_EQUAL(m.session_epoch, -1); /* v7+: default */
    CU_ASSERT_EQUAL_FATAL(m.topics.n, 1);
    CU_ASSERT(unit_str_is(m.topics.v[0].topic, "t"));
    CU_ASSERT_EQUAL_FATAL(m.topics.v[0].partitions.n, 1);
    CU_ASSERT_EQUAL(m.topics.v[0].partitions.v[0].fetch_offset, 10);
    CU_ASSERT_EQUAL(m.topics.v[0].partitions.v[0].partition_max_bytes, 0x100000);
    CU_ASSERT_EQUAL(m.topics.v[0].partitions.v[0].log_start_offset, -1);
    CU_ASSERT_EQUAL(m.forgotten_topics_data.n, 0);
    buf_t b;
    buf_init(&b);
    proto_fetch_req_encode(&m, 4, &b);
    UNIT_CHECK_BUF(&b, req);
    buf_free(&b);
}

static void test_fetch_v12(void)
{
    static const uint8_t req[] = {
        0xff, 0xff, 0xff, 0xff, /* replica_id -1 */
        0x00, 0x00, 0x01, 0xf4, /* max_wait_ms */
        0x00, 0x00, 0x00, 0x01, /* min_bytes */
        0x7f, 0xff, 0xff, 0xff, /* max_bytes */
        0x00,                   /* isolation_level */
        0x00, 0x00, 0x00, 0x00, /* session_id */
        0xff, 0xff, 0xff, 0xff, /* session_epoch */
        0x02,                   /* topics: 1 */
        0x02, 't',
        0x02,                   /* partitions: 1 */
        0x00, 0x00, 0x00, 0x01, /* partition */
        0x00, 0x00, 0x00, 0x05, /* current_leader_epoch */
        0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x64, /* fetch_offset */
        0xff, 0xff, 0xff, 0xff, /* last_fetched_epoch */
        0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* log_start_offset */
        0x00, 0x10, 0x00, 0x00, /* partition_max_bytes */
        0x00,                   /* partition tags */
        0x00,                   /* topic tags */
        0x02,                   /* forgotten_topics_data: 1 */
        0x02, 'u',
        0x03, 0x00, 0x00, 0x00, 0x07, 0x00, 0x00, 0x00, 0x08, /* [7, 8] */
        0x00,
        0x01,                   /* rack_id "" */
        0x01, 0x00, 0x02, 0x02, 'c', /* tag 0 cluster_id "c" */
    };
    proto_fetch_req_t m;
    CU_ASSERT_EQUAL_FATAL(proto_fetch_req_decode(&m, 12, req, sizeof(req), &arena), 0);
    CU_ASSERT(unit_str_is(m.cluster_id, "c"));
    CU_ASSERT_EQUAL(m.session_epoch, -1);
    CU_ASSERT_EQUAL(m.max_bytes, 0x7fffffff);
    CU_ASSERT_EQUAL_FATAL(m.topics.n, 1);
    proto_fetch_req_fetch_partition_t *p = &m.topics.v[0].partitions.v[0];
    CU_ASSERT_EQUAL(p->partition, 1);
    CU_ASSERT_EQUAL(p->current_leader_epoch, 5);
    CU_ASSERT_EQUAL(p->fetch_offset, 100);
    CU_ASSERT_EQUAL_FATAL(m.forgotten_topics_data.n, 1);
    CU_ASSERT(unit_str_is(m.forgotten_topics_data.v[0].topic, "u"));
    CU_ASSERT_EQUAL_FATAL(m.forgotten_topics_data.v[0].partitions.n, 2);
    CU_ASSERT_EQUAL(m.forgotten_topics_data.v[0].partitions.v[1], 8);
    CU_ASSERT(unit_str_is(m.rack_id, ""));
    buf_t b;
    buf_init(&b);
    proto_fetch_req_encode(&m, 12, &b);
    UNIT_CHECK_BUF(&b, req);
    buf_free(&b);
}

/* A records field with an fd is spliced, not copied, and its length
 * prefix counts the spliced bytes; a tagged section after it must not
 * move the splice. */
static void test_fetch_resp_splice(void)
{
    for (int16_t v = 4; v <= 16; v += 12) {
        proto_fetch_resp_t r;
        proto_fetch_resp_fetchable_topic_response_t t;
        proto_fetch_resp_partition_data_t pd;
        proto_fetch_resp_node_endpoint_t ne;
        proto_fetch_resp_init(&r);
        proto_fetch_resp_fetchable_topic_response_init(&t);
        proto_fetch_resp_partition_data_init(&pd);
        proto_fetch_resp_node_endpoint_init(&ne);
        r.responses.n = 1;
        r.responses.v = &t;
        t.topic = PROTO_STR("t");
        t.partitions.n = 1;
        t.partitions.v = &pd;
        pd.current_leader.leader_id = 3; /* tagged, after the records */
        pd.records.fd = open("/dev/null", O_RDONLY);
        CU_ASSERT_FATAL(pd.records.fd >= 0);
        pd.records.file_pos = 4096;
        pd.records.len = 300;
        ne.host = PROTO_STR("h");
        r.node_endpoints.n = 1;
        r.node_endpoints.v = &ne;
        buf_t b;
        buf_init(&b);
        b.len = 0;
        proto_fetch_resp_encode(&r, v, &b);
        CU_ASSERT_EQUAL_FATAL(b.nspl, 1);
        CU_ASSERT_EQUAL(b.spl[0].off, 4096);
        CU_ASSERT_EQUAL(b.spl[0].len, 300);
        size_t at = b.spl[0].mem_pos;
        if (v < 12) {
            /* int32 prefix, and the records end the message */
            CU_ASSERT_EQUAL(at, b.len);
            CU_ASSERT(b.p[at - 4] == 0 && b.p[at - 3] == 0 && b.p[at - 2] == 1 &&
                      b.p[at - 1] == 0x2c);
        } else {
            /* uvarint 301 = ad 02, then the partition's tagged section:
             * 1 field, tag 1, 9 bytes: leader 3, epoch -1, no tags */
            static const uint8_t after[] = { 0x01, 0x01, 0x09, 0x00, 0x00, 0x00,
                                             0x03, 0xff, 0xff, 0xff, 0xff, 0x00 };
            CU_ASSERT(b.p[at - 2] == 0xad && b.p[at - 1] == 0x02);
            CU_ASSERT(unit_bytes_eq(b.p + at, sizeof(after), after, sizeof(after)));
        }
        CU_ASSERT_EQUAL(buf_total(&b), b.len + 300);
        buf_free(&b); /* closes the fd */
    }
}

int main(void)
{
    arena_init(&arena, 4096);
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("proto bytes", NULL, NULL);
    CU_add_test(s, "api_versions_v0", test_api_versions_v0);
    CU_add_test(s, "api_versions_v3", test_api_versions_v3);
    CU_add_test(s, "api_versions_v5", test_api_versions_v5);
    CU_add_test(s, "metadata_v1", test_metadata_v1);
    CU_add_test(s, "metadata_v12", test_metadata_v12);
    CU_add_test(s, "produce_v3", test_produce_v3);
    CU_add_test(s, "produce_v9", test_produce_v9);
    CU_add_test(s, "produce_v13", test_produce_v13);
    CU_add_test(s, "fetch_v4", test_fetch_v4);
    CU_add_test(s, "fetch_v12", test_fetch_v12);
    CU_add_test(s, "fetch_resp_splice", test_fetch_resp_splice);
    int rc = unit_run();
    arena_destroy(&arena);
    return rc;
}
