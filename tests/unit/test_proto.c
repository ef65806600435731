/* Protocol layer tests: request and response header version selection,
 * the API table, field defaults, lookup of every API's messages, and a
 * generic round trip with every truncation for every message and version
 * we define (unit_round_trip). Hand-checked bytes of single messages are
 * test_proto_bytes.c's, the internal records test_proto_rec.c's. */
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
    CU_ASSERT(unit_str_is(h.client_id, "kct"));
    buf_t b;
    buf_init(&b);
    proto_req_header_encode(&b, &h);
    UNIT_CHECK_BUF(&b, wire);
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
    UNIT_CHECK_BUF(&b, enc);
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
    CU_ASSERT(unit_str_is(h.client_id, "a"));
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
    UNIT_CHECK_BUF(&b, v0);
    b.len = 0;
    proto_resp_header_encode(&b, PROTO_API_PRODUCE, 9, 0x102);
    UNIT_CHECK_BUF(&b, v1);
    b.len = 0;
    proto_resp_header_encode(&b, PROTO_API_API_VERSIONS, 3, 0x102);
    UNIT_CHECK_BUF(&b, v0);
    b.len = 0;
    proto_resp_header_encode(&b, 999, 3, 0x102);
    UNIT_CHECK_BUF(&b, v0);
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


static void test_round_trip_all(void)
{
    int nmsg = 0, runs = 0;
    for (const proto_msg_t *const *mp = proto_msg_all; *mp; mp++, nmsg++) {
        const proto_msg_t *msg = *mp;
        for (int16_t v = msg->vmin; v <= msg->vmax; v++) {
            for (int seed = 0; seed < 4; seed++, runs++) {
                CU_ASSERT(unit_round_trip(msg, v, seed, &arena));
                arena_reset(&arena);
            }
        }
    }
    /* 59 APIs x 2 + the two headers */
    CU_ASSERT_EQUAL(nmsg, 120);
    CU_ASSERT(runs > 1000);
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
    CU_ASSERT_EQUAL(n, 59);
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
    CU_add_test(s, "msg_lookup", test_msg_lookup);
    CU_add_test(s, "round_trip_all", test_round_trip_all);
    int rc = unit_run();
    arena_destroy(&arena);
    return rc;
}
