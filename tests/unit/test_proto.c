/* Protocol layer tests: exact bytes for hand-checked messages, generic
 * round trips and truncation for every message and version we define,
 * header version selection, tagged fields, zero-copy records. */
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

#define CHECK_BUF(b, exp) CU_ASSERT(unit_bytes_eq((b)->p, (b)->len, (exp), sizeof(exp)))

static int str_is(proto_str_t s, const char *c)
{
    return s.len == (int32_t)strlen(c) && !memcmp(s.p, c, (size_t)s.len);
}

/* ---- headers and the API table ---- */

static void test_api_info(void)
{
    const proto_api_info_t *api = proto_api_info(PROTO_API_PRODUCE);
    CU_ASSERT_PTR_NOT_NULL_FATAL(api);
    CU_ASSERT_EQUAL(api->key, 0);
    CU_ASSERT_STRING_EQUAL(api->name, "Produce");
    CU_ASSERT_EQUAL(api->min_ver, 0);
    CU_ASSERT_EQUAL(api->max_ver, 13);
    CU_ASSERT_EQUAL(api->flex_min, 9);
    api = proto_api_info(PROTO_API_METADATA);
    CU_ASSERT_EQUAL(api->max_ver, 13);
    CU_ASSERT_EQUAL(proto_api_info(PROTO_API_OFFSET_DELETE)->flex_min, -1);
    CU_ASSERT_PTR_NULL(proto_api_info(4));
    CU_ASSERT_PTR_NULL(proto_api_info(-1));
    CU_ASSERT_PTR_NULL(proto_api_info(9999));
    CU_ASSERT_EQUAL(proto_is_flexible(PROTO_API_PRODUCE, 8), 0);
    CU_ASSERT_EQUAL(proto_is_flexible(PROTO_API_PRODUCE, 9), 1);
    CU_ASSERT_EQUAL(proto_is_flexible(PROTO_API_FETCH, 12), 1);
    CU_ASSERT_EQUAL(proto_is_flexible(PROTO_API_OFFSET_DELETE, 0), 0);
    CU_ASSERT_EQUAL(proto_is_flexible(4, 9), 0);
}

static void test_req_header_v1(void)
{
    /* ApiVersions v0, correlation 7, client "kct" */
    static const uint8_t wire[] = { 0x00, 0x12, 0x00, 0x00, 0x00, 0x00, 0x00,
                                    0x07, 0x00, 0x03, 'k', 'c', 't' };
    proto_req_header_t h;
    size_t hl = 0;
    CU_ASSERT_EQUAL_FATAL(proto_req_header_decode(&h, wire, sizeof(wire), &hl), 0);
    CU_ASSERT_EQUAL(hl, 13);
    CU_ASSERT_EQUAL(h.api_key, 18);
    CU_ASSERT_EQUAL(h.api_version, 0);
    CU_ASSERT_EQUAL(h.correlation_id, 7);
    CU_ASSERT(str_is(h.client_id, "kct"));
    buf_t b;
    buf_init(&b);
    proto_req_header_encode(&b, &h);
    CHECK_BUF(&b, wire);
    buf_free(&b);
    for (size_t n = 0; n < sizeof(wire); n++) {
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, wire, n);
        CU_ASSERT_EQUAL(proto_req_header_decode(&h, cut, n, &hl), -1);
        free(cut);
    }
}

static void test_req_header_v2(void)
{
    /* Produce v9: null client id, then one unknown tagged field */
    static const uint8_t wire[] = { 0x00, 0x00, 0x00, 0x09, 0x00, 0x00, 0x00,
                                    0x01, 0xff, 0xff, 0x01, 0x05, 0x01, 0xaa,
                                    0x77 /* first body byte */ };
    proto_req_header_t h;
    size_t hl = 0;
    CU_ASSERT_EQUAL_FATAL(proto_req_header_decode(&h, wire, sizeof(wire), &hl), 0);
    CU_ASSERT_EQUAL(hl, 14);
    CU_ASSERT_EQUAL(h.api_key, 0);
    CU_ASSERT_EQUAL(h.api_version, 9);
    CU_ASSERT_EQUAL(h.correlation_id, 1);
    CU_ASSERT_EQUAL(h.client_id.len, -1);
    /* re-encoded without the unknown tag */
    static const uint8_t enc[] = { 0x00, 0x00, 0x00, 0x09, 0x00, 0x00,
                                   0x00, 0x01, 0xff, 0xff, 0x00 };
    buf_t b;
    buf_init(&b);
    proto_req_header_encode(&b, &h);
    CHECK_BUF(&b, enc);
    buf_free(&b);
    for (size_t n = 0; n < 14; n++) {
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, wire, n);
        CU_ASSERT_EQUAL(proto_req_header_decode(&h, cut, n, &hl), -1);
        free(cut);
    }
}

static void test_req_header_fallbacks(void)
{
    /* ApiVersions v9 (newer than ours) and unknown key 999 parse as v1:
     * the byte after client_id is body, not a tagged section. */
    static const uint8_t av9[] = { 0x00, 0x12, 0x00, 0x09, 0x00, 0x00, 0x00,
                                   0x02, 0x00, 0x01, 'a', 0x05 };
    static const uint8_t k999[] = { 0x03, 0xe7, 0x00, 0x0c, 0x00, 0x00, 0x00,
                                    0x03, 0x00, 0x00, 0x05 };
    proto_req_header_t h;
    size_t hl = 0;
    CU_ASSERT_EQUAL(proto_req_header_decode(&h, av9, sizeof(av9), &hl), 0);
    CU_ASSERT_EQUAL(hl, 11);
    CU_ASSERT_EQUAL(h.api_version, 9);
    CU_ASSERT(str_is(h.client_id, "a"));
    CU_ASSERT_EQUAL(proto_req_header_decode(&h, k999, sizeof(k999), &hl), 0);
    CU_ASSERT_EQUAL(hl, 10);
    CU_ASSERT_EQUAL(h.api_key, 999);
    CU_ASSERT_EQUAL(h.client_id.len, 0);
    /* ApiVersions v3 is flexible: header v2 */
    static const uint8_t av3[] = { 0x00, 0x12, 0x00, 0x03, 0x00, 0x00, 0x00,
                                   0x02, 0x00, 0x01, 'a', 0x00 };
    CU_ASSERT_EQUAL(proto_req_header_decode(&h, av3, sizeof(av3), &hl), 0);
    CU_ASSERT_EQUAL(hl, 12);
}

static void test_resp_header(void)
{
    static const uint8_t v0[] = { 0x00, 0x00, 0x01, 0x02 };
    static const uint8_t v1[] = { 0x00, 0x00, 0x01, 0x02, 0x00 };
    buf_t b;
    buf_init(&b);
    proto_resp_header_encode(&b, PROTO_API_PRODUCE, 8, 0x102);
    CHECK_BUF(&b, v0);
    b.len = 0;
    proto_resp_header_encode(&b, PROTO_API_PRODUCE, 9, 0x102);
    CHECK_BUF(&b, v1);
    b.len = 0;
    proto_resp_header_encode(&b, PROTO_API_API_VERSIONS, 3, 0x102);
    CHECK_BUF(&b, v0);
    b.len = 0;
    proto_resp_header_encode(&b, 999, 3, 0x102);
    CHECK_BUF(&b, v0);
    buf_free(&b);
}

/* ---- defaults ---- */

static void test_init_defaults(void)
{
    proto_metadata_resp_t mr;
    memset(&mr, 0x5a, sizeof(mr));
    proto_metadata_resp_init(&mr);
    CU_ASSERT_EQUAL(mr.controller_id, -1);
    CU_ASSERT_EQUAL(mr.cluster_id.len, -1);
    CU_ASSERT_EQUAL(mr.cluster_authorized_operations, INT32_MIN);
    CU_ASSERT_EQUAL(mr.brokers.n, 0);
    CU_ASSERT_PTR_NULL(mr.brokers.v);
    CU_ASSERT_EQUAL(mr.throttle_time_ms, 0);
    proto_metadata_req_t mq;
    proto_metadata_req_init(&mq);
    CU_ASSERT_EQUAL(mq.allow_auto_topic_creation, true);
    proto_fetch_req_t fq;
    proto_fetch_req_init(&fq);
    CU_ASSERT_EQUAL(fq.max_bytes, 0x7fffffff);
    CU_ASSERT_EQUAL(fq.replica_state.replica_id, -1);
    CU_ASSERT_EQUAL(fq.replica_state.replica_epoch, -1);
    CU_ASSERT_EQUAL(fq.cluster_id.len, -1);
    proto_fetch_resp_partition_data_t pd;
    proto_fetch_resp_partition_data_init(&pd);
    CU_ASSERT_EQUAL(pd.records.fd, -1);
    CU_ASSERT_EQUAL(pd.records.len, 0);
    CU_ASSERT_EQUAL(pd.preferred_read_replica, -1);
    CU_ASSERT_EQUAL(pd.current_leader.leader_id, -1);
    proto_create_topics_req_t ct;
    proto_create_topics_req_init(&ct);
    CU_ASSERT_EQUAL(ct.timeout_ms, 60000);
    proto_produce_req_t pq;
    proto_produce_req_init(&pq);
    CU_ASSERT_EQUAL(pq.transactional_id.len, -1);
}

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
    CHECK_BUF(&b, resp);

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
    CU_ASSERT(str_is(rq.client_software_name, "librdkafka"));
    CU_ASSERT(str_is(rq.client_software_version, "2.0.2"));
    buf_t b;
    buf_init(&b);
    proto_api_versions_req_encode(&rq, 3, &b);
    CHECK_BUF(&b, req);
    b.len = 0;

    proto_api_versions_resp_t r;
    proto_api_versions_resp_api_version_t keys[2] = { { 0, 0, 12 }, { 18, 0, 4 } };
    proto_api_versions_resp_init(&r);
    r.api_keys.n = 2;
    r.api_keys.v = keys;
    r.finalized_features_epoch = 5; /* tagged, not default: written */
    proto_api_versions_resp_encode(&r, 3, &b);
    CHECK_BUF(&b, resp);
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
    CU_ASSERT(str_is(rq.cluster_id, "cX"));
    CU_ASSERT_EQUAL(rq.node_id, 7);
    buf_t b;
    buf_init(&b);
    proto_api_versions_req_encode(&rq, 5, &b);
    CHECK_BUF(&b, req);
    b.len = 0;
    proto_api_versions_req_init(&rq);
    CU_ASSERT_EQUAL(rq.cluster_id.len, -1);
    CU_ASSERT_EQUAL(rq.node_id, -1);
    rq.client_software_name = PROTO_STR("j");
    rq.client_software_version = PROTO_STR("4.4");
    proto_api_versions_req_encode(&rq, 5, &b);
    CHECK_BUF(&b, unknown);
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
    CU_ASSERT(str_is(m.topics.v[0].name, "a"));
    CU_ASSERT(str_is(m.topics.v[1].name, "bc"));
    CU_ASSERT_EQUAL(m.allow_auto_topic_creation, true); /* default: not in v1 */
    buf_t b;
    buf_init(&b);
    proto_metadata_req_encode(&m, 1, &b);
    CHECK_BUF(&b, req);
    CU_ASSERT_EQUAL_FATAL(proto_metadata_req_decode(&m, 1, all, sizeof(all), &arena), 0);
    CU_ASSERT_EQUAL(m.topics.n, -1);
    b.len = 0;
    proto_metadata_req_encode(&m, 1, &b);
    CHECK_BUF(&b, all);
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
        CU_ASSERT(str_is(m.topics.v[0].name, "t1"));
        CU_ASSERT_EQUAL(m.topics.v[1].name.len, -1);
        CU_ASSERT_EQUAL(m.topics.v[1].topic_id.b[15], 0x11);
        CU_ASSERT_EQUAL(m.allow_auto_topic_creation, true);
        CU_ASSERT_EQUAL(m.include_topic_authorized_operations, false);
        buf_t b;
        buf_init(&b);
        proto_metadata_req_encode(&m, 12, &b);
        CHECK_BUF(&b, req);
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
    CU_ASSERT(str_is(m.topic_data.v[0].name, "t"));
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
    CHECK_BUF(&b, req);
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
    CU_ASSERT(str_is(m.transactional_id, "tx"));
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
    CHECK_BUF(&b, req);
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
    CHECK_BUF(&b, req);
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
    CHECK_BUF(&b, resp);
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
    CU_ASSERT(str_is(m.topics.v[0].topic, "t"));
    CU_ASSERT_EQUAL_FATAL(m.topics.v[0].partitions.n, 1);
    CU_ASSERT_EQUAL(m.topics.v[0].partitions.v[0].fetch_offset, 10);
    CU_ASSERT_EQUAL(m.topics.v[0].partitions.v[0].partition_max_bytes, 0x100000);
    CU_ASSERT_EQUAL(m.topics.v[0].partitions.v[0].log_start_offset, -1);
    CU_ASSERT_EQUAL(m.forgotten_topics_data.n, 0);
    buf_t b;
    buf_init(&b);
    proto_fetch_req_encode(&m, 4, &b);
    CHECK_BUF(&b, req);
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
    CU_ASSERT(str_is(m.cluster_id, "c"));
    CU_ASSERT_EQUAL(m.session_epoch, -1);
    CU_ASSERT_EQUAL(m.max_bytes, 0x7fffffff);
    CU_ASSERT_EQUAL_FATAL(m.topics.n, 1);
    proto_fetch_req_fetch_partition_t *p = &m.topics.v[0].partitions.v[0];
    CU_ASSERT_EQUAL(p->partition, 1);
    CU_ASSERT_EQUAL(p->current_leader_epoch, 5);
    CU_ASSERT_EQUAL(p->fetch_offset, 100);
    CU_ASSERT_EQUAL_FATAL(m.forgotten_topics_data.n, 1);
    CU_ASSERT(str_is(m.forgotten_topics_data.v[0].topic, "u"));
    CU_ASSERT_EQUAL_FATAL(m.forgotten_topics_data.v[0].partitions.n, 2);
    CU_ASSERT_EQUAL(m.forgotten_topics_data.v[0].partitions.v[1], 8);
    CU_ASSERT(str_is(m.rack_id, ""));
    buf_t b;
    buf_init(&b);
    proto_fetch_req_encode(&m, 12, &b);
    CHECK_BUF(&b, req);
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

/* ---- every message, every version: generic round trips ---- */

/* Encodes a filled message, decodes it from an exactly sized heap copy,
 * compares, re-encodes and compares the bytes; then every truncation of
 * the encoding must fail (ASan catches any read past the copy's end). */
static int round_trip(const proto_msg_t *msg, int16_t v, int seed)
{
    int ok = 1;
    void *m = arena_calloc(&arena, 1, msg->st->size);
    void *d = arena_calloc(&arena, 1, msg->st->size);
    buf_t b1, b2;
    size_t used = 0;
    unit_fill_t fl;
    unit_fill_init(&fl, 2654435761u * (uint32_t)(seed + 1), &arena);
    unit_fill_struct(&fl, msg->st, m, v);
    buf_init(&b1);
    buf_init(&b2);
    proto_msg_encode(msg, m, v, &b1);
    uint8_t *copy = malloc(b1.len ? b1.len : 1);
    if (b1.len)
        memcpy(copy, b1.p, b1.len);
    if (proto_msg_decode(msg, d, v, copy, b1.len, &arena, &used) || used != b1.len) {
        fprintf(stderr, "\n  decode failed");
        ok = 0;
    } else if (!unit_same_struct(msg->st, m, d, v)) {
        ok = 0;
    } else {
        proto_msg_encode(msg, d, v, &b2);
        ok = b1.len == b2.len && (!b1.len || !memcmp(b1.p, b2.p, b1.len));
    }
    for (size_t n = 0; ok && n < b1.len; n++) {
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, b1.p, n);
        if (proto_msg_decode(msg, d, v, cut, n, &arena, NULL) != -1) {
            fprintf(stderr, "\n  truncation to %zu of %zu bytes accepted", n, b1.len);
            ok = 0;
        }
        free(cut);
    }
    if (!ok)
        fprintf(stderr, "\n  %s v%d seed %d: round trip failed\n", msg->name, v, seed);
    free(copy);
    buf_free(&b1);
    buf_free(&b2);
    return ok;
}

static void test_round_trip_all(void)
{
    int nmsg = 0, runs = 0;
    for (const proto_msg_t *const *mp = proto_msg_all; *mp; mp++, nmsg++) {
        const proto_msg_t *msg = *mp;
        for (int16_t v = msg->vmin; v <= msg->vmax; v++) {
            for (int seed = 0; seed < 4; seed++, runs++) {
                CU_ASSERT(round_trip(msg, v, seed));
                arena_reset(&arena);
            }
        }
    }
    /* 35 APIs x 2 + the two headers */
    CU_ASSERT_EQUAL(nmsg, 72);
    CU_ASSERT(runs > 1000);
}

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
                CU_ASSERT(round_trip(msg, v, seed));
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
    CHECK_BUF(&b, topic);
    b.len = 0;
    proto_rec_offset_commit_key_init(&k);
    k.group = PROTO_STR("g1");
    k.topic = PROTO_STR("tp");
    k.partition = 7;
    proto_rec_offset_commit_key_write(&k, 0, &b);
    CHECK_BUF(&b, okey);
    b.len = 0;
    proto_rec_offset_commit_value_init(&v);
    v.offset = 42;
    v.leader_epoch = 5;
    v.commit_timestamp = 1000;
    proto_rec_offset_commit_value_write(&v, 3, &b);
    CHECK_BUF(&b, oval);
    b.len = 0;
    proto_rec_control_record_type_schema_init(&c);
    c.type = PROTO_REC_K_RAFT_VERSION_RECORD;
    proto_rec_control_record_type_schema_write(&c, 0, &b);
    CHECK_BUF(&b, ctlkey);
    b.len = 0;
    proto_rec_end_txn_marker_init(&e);
    e.coordinator_epoch = 7;
    proto_rec_end_txn_marker_write(&e, 0, &b);
    CHECK_BUF(&b, marker);
    b.len = 0;
    proto_rec_k_raft_version_record_init(&kr);
    kr.k_raft_version = 1;
    proto_rec_k_raft_version_record_write(&kr, 0, &b);
    CHECK_BUF(&b, kraft);
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

/* Each API's request and response are reachable by key. */
static void test_msg_lookup(void)
{
    int n = 0;
    for (int16_t k = 0; k < 100; k++) {
        const proto_api_info_t *api = proto_api_info(k);
        const proto_msg_t *rq = proto_msg_lookup(k, 0), *rs = proto_msg_lookup(k, 1);
        CU_ASSERT((api == NULL) == (rq == NULL));
        if (!api)
            continue;
        n++;
        CU_ASSERT_PTR_NOT_NULL_FATAL(rs);
        CU_ASSERT_EQUAL(rq->key, k);
        CU_ASSERT_EQUAL(rs->key, k);
        CU_ASSERT_EQUAL(rq->vmin, api->min_ver);
        CU_ASSERT_EQUAL(rs->vmax, api->max_ver);
        CU_ASSERT_EQUAL(rq->flex_min, api->flex_min);
        CU_ASSERT(strncmp(rq->name, api->name, strlen(api->name)) == 0);
    }
    CU_ASSERT_EQUAL(n, 35);
}

int main(void)
{
    arena_init(&arena, 4096);
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("proto", NULL, NULL);
    CU_add_test(s, "api_info", test_api_info);
    CU_add_test(s, "req_header_v1", test_req_header_v1);
    CU_add_test(s, "req_header_v2", test_req_header_v2);
    CU_add_test(s, "req_header_fallbacks", test_req_header_fallbacks);
    CU_add_test(s, "resp_header", test_resp_header);
    CU_add_test(s, "init_defaults", test_init_defaults);
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
    CU_add_test(s, "msg_lookup", test_msg_lookup);
    CU_add_test(s, "round_trip_all", test_round_trip_all);
    CU_add_test(s, "rec_round_trip_all", test_rec_round_trip_all);
    CU_add_test(s, "rec_find", test_rec_find);
    CU_add_test(s, "rec_framing", test_rec_framing);
    CU_add_test(s, "rec_unknown", test_rec_unknown);
    int rc = unit_run();
    arena_destroy(&arena);
    return rc;
}
