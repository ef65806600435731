/* The Raft core's messages on the wire (cluster/raft_wire.c): every
 * message at every version Kafka 4.4 accepts goes through the generated
 * encoder and back through the decoder with its fields intact; the
 * receiver's checks (cluster id, the metadata partition, the voter key);
 * a top-level error; the batch headers of a run of records; FetchSnapshot
 * both ways at both versions, and its checks; the leader endpoints of
 * responses (NodeEndpoints) and of requests (LeaderEndpoints). */
#include <string.h>

#include "cluster/meta_log.h"
#include "cluster/raft_wire.h"
#include "cluster/raft_wire_snap.h"
#include "proto/proto.h"
#include "tests/unit/unit.h"
#include "util/kerr.h"

static arena_t arena;

static raft_wire_t wire(int32_t id)
{
    raft_wire_t w;
    memset(&w, 0, sizeof(w));
    w.cluster_id = "MkU3OEVBNTcwNTJENDM2Qg";
    w.node_id = id;
    w.dir_id[15] = (uint8_t)id;
    w.listener = "CONTROLLER";
    w.host = "127.0.0.1";
    w.port = 9093;
    w.max_bytes = 1 << 20;
    return w;
}

static raft_msg_t req_of(int type)
{
    raft_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = type;
    m.src = 1;
    m.dst = 2;
    m.epoch = 7;
    m.last_epoch = 6;
    m.last_offset = 1234;
    m.prevote = type == RAFT_VOTE_REQ;
    m.nsuccessors = 2;
    m.successors[0] = 3;
    m.successors[1] = 2;
    m.fetch_offset = 99;
    m.last_fetched_epoch = 5;
    m.max_wait_ms = 500;
    return m;
}

/* Encodes req as node 1, decodes it as node 2. */
static int round_req(int type, int16_t v, raft_msg_t *out)
{
    raft_wire_t w1 = wire(1), w2 = wire(2);
    raft_msg_t m = req_of(type);
    buf_t b;
    buf_init(&b);
    raft_wire_encode_req(&w1, &m, v, &b);
    int rc = raft_wire_decode_req(&w2, raft_wire_api_key(type), v, b.p, b.len, &arena, out);
    buf_free(&b);
    return rc;
}

static void check_req(int type, int16_t vmin, int16_t vmax)
{
    for (int16_t v = vmin; v <= vmax; v++) {
        raft_msg_t d;
        CU_ASSERT_EQUAL_FATAL(round_req(type, v, &d), 0);
        CU_ASSERT_EQUAL(d.type, type);
        CU_ASSERT_EQUAL(d.src, 1);
        CU_ASSERT_EQUAL(d.dst, 2);
        /* a fetch carries its epoch from v9 (current_leader_epoch) */
        CU_ASSERT_EQUAL(d.epoch, type == RAFT_FETCH_REQ && v < 9 ? -1 : 7);
        if (type == RAFT_VOTE_REQ) {
            CU_ASSERT_EQUAL(d.last_epoch, 6);
            CU_ASSERT_EQUAL(d.last_offset, 1234);
            CU_ASSERT_EQUAL(d.prevote, v >= 2);
        } else if (type == RAFT_END_REQ) {
            CU_ASSERT_EQUAL(d.nsuccessors, 2);
            CU_ASSERT_EQUAL(d.successors[0], 3);
        } else if (type == RAFT_FETCH_REQ) {
            CU_ASSERT_EQUAL(d.fetch_offset, 99);
            CU_ASSERT_EQUAL(d.last_fetched_epoch, v >= 12 ? 5 : -1);
            CU_ASSERT_EQUAL(d.max_wait_ms, 500);
        }
        arena_reset(&arena);
    }
}

static void test_requests(void)
{
    check_req(RAFT_VOTE_REQ, 0, 2);
    check_req(RAFT_BEGIN_REQ, 0, 1);
    check_req(RAFT_END_REQ, 0, 1);
    check_req(RAFT_FETCH_REQ, 4, 18);
}

static void check_resp(int type, int16_t v)
{
    raft_wire_t w2 = wire(2);
    raft_msg_t req = req_of(type), m, d;
    static const uint8_t recs[] = "not parsed here";
    const uint8_t *rp;
    size_t rl;
    buf_t b;
    memset(&m, 0, sizeof(m));
    m.type = type + 1;
    m.err = KERR_FENCED_LEADER_EPOCH;
    m.epoch = 9;
    m.leader_id = 3;
    m.granted = 1;
    m.hw = 77;
    m.log_start = 10;
    m.div_epoch = 4;
    m.div_end = 50;
    m.snap_end = -1;
    buf_init(&b);
    raft_wire_encode_resp(&w2, &m, v, recs, sizeof(recs), &b);
    CU_ASSERT_EQUAL_FATAL(raft_wire_decode_resp(&req, v, b.p, b.len, &arena, &d, &rp, &rl), 0);
    CU_ASSERT_EQUAL(d.type, type + 1);
    CU_ASSERT_EQUAL(d.src, 2);
    CU_ASSERT_EQUAL(d.err, KERR_FENCED_LEADER_EPOCH);
    if (type != RAFT_FETCH_REQ || v >= 12) {
        CU_ASSERT_EQUAL(d.epoch, 9);
        CU_ASSERT_EQUAL(d.leader_id, 3);
    }
    if (type == RAFT_VOTE_REQ) {
        CU_ASSERT_EQUAL(d.granted, 1);
        CU_ASSERT_EQUAL(d.prevote, 1);
    }
    if (type == RAFT_FETCH_REQ) {
        CU_ASSERT_EQUAL(d.hw, 77);
        CU_ASSERT_EQUAL(d.fetch_offset, 99);
        CU_ASSERT_EQUAL(rl, sizeof(recs));
        if (v >= 12) {
            CU_ASSERT_EQUAL(d.div_epoch, 4);
            CU_ASSERT_EQUAL(d.div_end, 50);
            CU_ASSERT_EQUAL(d.snap_end, -1);
        }
    }
    buf_free(&b);
    arena_reset(&arena);
}

static void test_responses(void)
{
    for (int16_t v = 0; v <= 2; v++)
        check_resp(RAFT_VOTE_REQ, v);
    for (int16_t v = 0; v <= 1; v++) {
        check_resp(RAFT_BEGIN_REQ, v);
        check_resp(RAFT_END_REQ, v);
    }
    for (int16_t v = 4; v <= 18; v++)
        check_resp(RAFT_FETCH_REQ, v);
}

/* The voter key of a Vote and a BeginQuorumEpoch: none (-1), this id with
 * a zero or this node's directory id; another id or directory is another
 * voter. */
static void check_voter_keys(void)
{
    raft_wire_t w2 = wire(2);
    raft_msg_t d;
    proto_vote_req_t r;
    proto_vote_req_topic_data_t t;
    proto_vote_req_partition_data_t p;
    proto_begin_quorum_epoch_req_t br;
    proto_begin_quorum_epoch_req_topic_data_t bt;
    proto_begin_quorum_epoch_req_partition_data_t bp;
    static const struct {
        int32_t id;
        uint8_t dir15;
        int8_t other;
    } cases[] = {{-1, 9, 0}, {2, 0, 0}, {2, 2, 0}, {2, 9, 1}, {3, 0, 1}};
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        buf_t b;
        proto_vote_req_init(&r);
        proto_vote_req_topic_data_init(&t);
        proto_vote_req_partition_data_init(&p);
        r.voter_id = cases[i].id;
        p.voter_directory_id.b[15] = cases[i].dir15;
        t.topic_name = PROTO_STR(META_LOG_TOPIC);
        t.partitions.n = 1;
        t.partitions.v = &p;
        r.topics.n = 1;
        r.topics.v = &t;
        buf_init(&b);
        proto_vote_req_encode(&r, 2, &b);
        CU_ASSERT_EQUAL(raft_wire_decode_req(&w2, PROTO_API_VOTE, 2, b.p, b.len, &arena, &d), 0);
        CU_ASSERT_EQUAL(d.other_voter, cases[i].other);
        buf_free(&b);
        proto_begin_quorum_epoch_req_init(&br);
        proto_begin_quorum_epoch_req_topic_data_init(&bt);
        proto_begin_quorum_epoch_req_partition_data_init(&bp);
        br.voter_id = cases[i].id;
        bp.voter_directory_id.b[15] = cases[i].dir15;
        bt.topic_name = PROTO_STR(META_LOG_TOPIC);
        bt.partitions.n = 1;
        bt.partitions.v = &bp;
        br.topics.n = 1;
        br.topics.v = &bt;
        buf_init(&b);
        proto_begin_quorum_epoch_req_encode(&br, 1, &b);
        CU_ASSERT_EQUAL(
            raft_wire_decode_req(&w2, PROTO_API_BEGIN_QUORUM_EPOCH, 1, b.p, b.len, &arena, &d), 0);
        CU_ASSERT_EQUAL(d.other_voter, cases[i].other);
        buf_free(&b);
    }
}

static void test_checks(void)
{
    raft_wire_t w1 = wire(1), w2 = wire(2), w3 = wire(3);
    raft_msg_t m = req_of(RAFT_VOTE_REQ), d;
    buf_t b;
    buf_init(&b);
    raft_wire_encode_req(&w1, &m, 2, &b);
    /* addressed to voter 2: voter 3 decodes it as naming another voter
     * (the core answers INVALID_VOTER_KEY in the partition, as KRaft) */
    CU_ASSERT_EQUAL(raft_wire_decode_req(&w3, PROTO_API_VOTE, 2, b.p, b.len, &arena, &d), 0);
    CU_ASSERT_EQUAL(d.other_voter, 1);
    CU_ASSERT_EQUAL(raft_wire_decode_req(&w2, PROTO_API_VOTE, 2, b.p, b.len, &arena, &d), 0);
    CU_ASSERT_EQUAL(d.other_voter, 0);
    w2.cluster_id = "AAAAAAAAAAAAAAAAAAAAAA";
    CU_ASSERT_EQUAL(raft_wire_decode_req(&w2, PROTO_API_VOTE, 2, b.p, b.len, &arena, &d),
                    KERR_INCONSISTENT_CLUSTER_ID);
    w2.cluster_id = NULL;
    CU_ASSERT_EQUAL(raft_wire_decode_req(&w2, PROTO_API_VOTE, 2, b.p, b.len, &arena, &d), 0);
    CU_ASSERT_EQUAL(raft_wire_decode_req(&w2, PROTO_API_VOTE, 2, b.p, b.len - 3, &arena, &d), -1);
    buf_free(&b);
    /* a null cluster id passes */
    w1.cluster_id = NULL;
    w2 = wire(2);
    buf_init(&b);
    raft_wire_encode_req(&w1, &m, 2, &b);
    CU_ASSERT_EQUAL(raft_wire_decode_req(&w2, PROTO_API_VOTE, 2, b.p, b.len, &arena, &d), 0);
    buf_free(&b);
    check_voter_keys();
    /* another topic than the metadata log */
    proto_vote_req_t r;
    proto_vote_req_topic_data_t t;
    proto_vote_req_init(&r);
    proto_vote_req_topic_data_init(&t);
    t.topic_name = PROTO_STR("other");
    r.topics.n = 1;
    r.topics.v = &t;
    buf_init(&b);
    proto_vote_req_encode(&r, 2, &b);
    CU_ASSERT_EQUAL(raft_wire_decode_req(&w2, PROTO_API_VOTE, 2, b.p, b.len, &arena, &d),
                    KERR_INVALID_REQUEST);
    buf_free(&b);
    arena_reset(&arena);
}

static void test_error(void)
{
    raft_msg_t req = req_of(RAFT_FETCH_REQ), d;
    const uint8_t *rp;
    size_t rl;
    buf_t b;
    buf_init(&b);
    raft_wire_encode_error(PROTO_API_FETCH, 17, KERR_INCONSISTENT_CLUSTER_ID, &b);
    CU_ASSERT_EQUAL(raft_wire_decode_resp(&req, 17, b.p, b.len, &arena, &d, &rp, &rl), 0);
    CU_ASSERT_EQUAL(d.err, KERR_INCONSISTENT_CLUSTER_ID);
    buf_free(&b);
    arena_reset(&arena);
}

static void test_batches(void)
{
    meta_rec_t recs[3];
    buf_t b;
    raft_batch_t out[4];
    buf_init(&b);
    for (int i = 0; i < 3; i++)
        meta_rec_init(&recs[i], PROTO_REC_NO_OP_RECORD);
    CU_ASSERT_EQUAL_FATAL(meta_log_build_batch(&b, recs, 3, 1000), 0);
    size_t one = b.len;
    CU_ASSERT_EQUAL_FATAL(meta_log_build_batch(&b, recs, 1, 1000), 0);
    /* the second batch's base offset and epoch, as a log would set them */
    b.p[one + 7] = 3;
    memcpy(b.p + one + 12, "\0\0\0\5", 4);
    CU_ASSERT_EQUAL(raft_wire_batches(b.p, b.len, out, 4), 2);
    CU_ASSERT_EQUAL(out[0].base, 0);
    CU_ASSERT_EQUAL(out[0].last, 2);
    CU_ASSERT_EQUAL(out[1].base, 3);
    CU_ASSERT_EQUAL(out[1].last, 3);
    CU_ASSERT_EQUAL(out[1].epoch, 5);
    CU_ASSERT_EQUAL(raft_wire_batches(b.p, b.len - 1, out, 4), 1);
    CU_ASSERT_EQUAL(raft_wire_batches(b.p, b.len, out, 1), 1);
    b.p[16] = 1;
    CU_ASSERT_EQUAL(raft_wire_batches(b.p, b.len, out, 4), -1);
    buf_free(&b);
}

static void test_fetch_snapshot(void)
{
    raft_wire_t w1 = wire(1), w2 = wire(2);
    static const uint8_t slice[5] = {1, 2, 3, 4, 5};
    for (int16_t v = 0; v <= 1; v++) {
        raft_snap_req_t q = {3, 4096, 7, 1234, 6, 100}, got;
        buf_t b;
        int other = -1;
        buf_init(&b);
        raft_wire_snap_req(&w1, &q, v, &b);
        CU_ASSERT_EQUAL(raft_wire_snap_req_decode(&w2, v, b.p, b.len, &arena, &got, &other), 0);
        CU_ASSERT_EQUAL(other, 0);
        CU_ASSERT(got.replica_id == 3 && got.max_bytes == 4096 && got.leader_epoch == 7 &&
                  got.end_offset == 1234 && got.epoch == 6 && got.position == 100);
        b.len = 0;
        raft_snap_resp_t r = {0, 2, 7, 1234, 6, 105, 100, slice, 5}, back;
        raft_wire_snap_resp(&w2, &r, v, &b);
        CU_ASSERT_EQUAL(raft_wire_snap_resp_decode(v, b.p, b.len, &arena, &back), 0);
        CU_ASSERT_EQUAL(back.err, 0);
        CU_ASSERT_EQUAL(back.leader_id, 2);
        CU_ASSERT_EQUAL(back.leader_epoch, 7);
        CU_ASSERT_EQUAL(back.end_offset, 1234);
        CU_ASSERT_EQUAL(back.epoch, 6);
        CU_ASSERT_EQUAL(back.size, 105);
        CU_ASSERT_EQUAL(back.position, 100);
        CU_ASSERT(back.len == 5 && memcmp(back.bytes, slice, 5) == 0);
        b.len = 0;
        raft_wire_snap_error(v, KERR_INVALID_REQUEST, &b);
        CU_ASSERT_EQUAL(raft_wire_snap_resp_decode(v, b.p, b.len, &arena, &back), 0);
        CU_ASSERT_EQUAL(back.err, KERR_INVALID_REQUEST);
        /* another cluster's request */
        raft_wire_t stranger = wire(1);
        stranger.cluster_id = "AAAAAAAAAAAAAAAAAAAAAA";
        b.len = 0;
        raft_wire_snap_req(&stranger, &q, v, &b);
        CU_ASSERT_EQUAL(raft_wire_snap_req_decode(&w2, v, b.p, b.len, &arena, &got, &other),
                        KERR_INCONSISTENT_CLUSTER_ID);
        CU_ASSERT_EQUAL(raft_wire_snap_req_decode(&w2, v, b.p, 3, &arena, &got, &other), -1);
        buf_free(&b);
        arena_reset(&arena);
    }
}

/* One response of type (a *_REQ) at v from node 2 naming leader, its
 * endpoint (for another node than 2) at host:port; decoded back. */
static void round_leader(int type, int16_t v, int32_t leader, const char *host, int32_t port,
                         raft_msg_t *d, buf_t *b)
{
    raft_wire_t w2 = wire(2);
    raft_msg_t req = req_of(type), m;
    const uint8_t *rp;
    size_t rl;
    memset(&m, 0, sizeof(m));
    m.type = type + 1;
    m.epoch = 9;
    m.leader_id = leader;
    m.granted = 1;
    m.snap_end = m.div_end = -1;
    m.leader_host = host;
    m.leader_host_len = host ? (int32_t)strlen(host) : 0;
    m.leader_port = port;
    buf_init(b);
    raft_wire_encode_resp(&w2, &m, v, NULL, 0, b);
    CU_ASSERT_EQUAL_FATAL(raft_wire_decode_resp(&req, v, b->p, b->len, &arena, d, &rp, &rl), 0);
    CU_ASSERT_EQUAL(d->leader_id, leader);
}

static int ep_is(const raft_msg_t *d, const char *host, int32_t port)
{
    if (!host)
        return d->leader_host == NULL;
    return d->leader_host && d->leader_host_len == (int32_t)strlen(host) &&
           !memcmp(d->leader_host, host, strlen(host)) && d->leader_port == port;
}

/* Vote, BeginQuorumEpoch and EndQuorumEpoch responses name the leader's
 * endpoint from v1 (NodeEndpoints, tag 0): this node's own when it leads,
 * another leader's as the driver gave it, none without a leader or an
 * endpoint; v0 has no such field. */
static void test_response_endpoints(void)
{
    static const int types[] = {RAFT_VOTE_REQ, RAFT_BEGIN_REQ, RAFT_END_REQ};
    for (size_t i = 0; i < 3; i++) {
        int16_t vmax = types[i] == RAFT_VOTE_REQ ? 2 : 1;
        for (int16_t v = 0; v <= vmax; v++) {
            raft_msg_t d;
            buf_t b;
            round_leader(types[i], v, 2, NULL, 0, &d, &b);
            CU_ASSERT(ep_is(&d, v ? "127.0.0.1" : NULL, 9093));
            buf_free(&b);
            round_leader(types[i], v, 3, "10.0.0.3", 9095, &d, &b);
            CU_ASSERT(ep_is(&d, v ? "10.0.0.3" : NULL, 9095));
            buf_free(&b);
            round_leader(types[i], v, 3, NULL, 0, &d, &b);
            CU_ASSERT(ep_is(&d, NULL, 0));
            buf_free(&b);
            round_leader(types[i], v, -1, "10.0.0.3", 9095, &d, &b);
            CU_ASSERT(ep_is(&d, NULL, 0));
            buf_free(&b);
            arena_reset(&arena);
        }
    }
    /* a Fetch response names another leader too (v16+) */
    raft_msg_t d;
    buf_t b;
    round_leader(RAFT_FETCH_REQ, 17, 3, "10.0.0.3", 9095, &d, &b);
    CU_ASSERT(ep_is(&d, "10.0.0.3", 9095));
    buf_free(&b);
    arena_reset(&arena);
}

/* The bytes of a Vote v1 response of leader 2 (this node): the partition
 * as before, then the tagged field 0 with the one NodeEndpoint. */
static void test_vote_endpoint_bytes(void)
{
    static const uint8_t want[] = {
        0, 0,                                     /* ErrorCode */
        2,                                        /* Topics: 1 */
        19, '_', '_', 'c', 'l', 'u', 's', 't', 'e', 'r', '_', 'm', 'e', 't', 'a', 'd', 'a', 't',
        'a',                                      /* TopicName */
        2,                                        /* Partitions: 1 */
        0, 0, 0, 0,                               /* PartitionIndex */
        0, 0,                                     /* ErrorCode */
        0, 0, 0, 2,                               /* LeaderId */
        0, 0, 0, 9,                               /* LeaderEpoch */
        1,                                        /* VoteGranted */
        0,                                        /* partition's tagged fields */
        0,                                        /* topic's tagged fields */
        1, 0, 18,                                 /* 1 tagged field: tag 0, 18 bytes */
        2,                                        /* NodeEndpoints: 1 */
        0, 0, 0, 2,                               /* NodeId */
        10, '1', '2', '7', '.', '0', '.', '0', '.', '1', /* Host */
        0x23, 0x85,                               /* Port 9093 */
        0,                                        /* endpoint's tagged fields */
    };
    raft_msg_t d;
    buf_t b;
    round_leader(RAFT_VOTE_REQ, 1, 2, NULL, 0, &d, &b);
    CU_ASSERT_EQUAL(b.len, sizeof(want));
    CU_ASSERT(b.len == sizeof(want) && !memcmp(b.p, want, sizeof(want)));
    buf_free(&b);
    arena_reset(&arena);
}

/* BeginQuorumEpoch and EndQuorumEpoch requests carry the leader's
 * controller listener (LeaderEndpoints, v1+), which the receiver takes
 * as where the sender is reached: only under its own listener's name. */
static void test_request_endpoints(void)
{
    static const int types[] = {RAFT_BEGIN_REQ, RAFT_END_REQ};
    for (size_t i = 0; i < 2; i++) {
        for (int16_t v = 0; v <= 1; v++) {
            raft_wire_t w1 = wire(1), w2 = wire(2), other = wire(2);
            raft_msg_t m = req_of(types[i]), d;
            buf_t b;
            w1.host = "10.0.0.1";
            w1.port = 19093;
            other.listener = "OTHER";
            buf_init(&b);
            raft_wire_encode_req(&w1, &m, v, &b);
            CU_ASSERT_EQUAL_FATAL(raft_wire_decode_req(&w2, raft_wire_api_key(types[i]), v, b.p,
                                                       b.len, &arena, &d), 0);
            CU_ASSERT_EQUAL(d.src, 1);
            CU_ASSERT(ep_is(&d, v ? "10.0.0.1" : NULL, 19093));
            CU_ASSERT_EQUAL_FATAL(raft_wire_decode_req(&other, raft_wire_api_key(types[i]), v,
                                                       b.p, b.len, &arena, &d), 0);
            CU_ASSERT(ep_is(&d, NULL, 0));
            buf_free(&b);
            arena_reset(&arena);
        }
    }
}

int main(void)
{
    arena_init(&arena, 4096);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("raft_wire", NULL, NULL);
    CU_add_test(s, "requests at every version", test_requests);
    CU_add_test(s, "responses at every version", test_responses);
    CU_add_test(s, "the receiver's checks", test_checks);
    CU_add_test(s, "top-level error", test_error);
    CU_add_test(s, "batch headers", test_batches);
    CU_add_test(s, "FetchSnapshot", test_fetch_snapshot);
    CU_add_test(s, "leader endpoints of responses", test_response_endpoints);
    CU_add_test(s, "a Vote v1 response's bytes", test_vote_endpoint_bytes);
    CU_add_test(s, "leader endpoints of requests", test_request_endpoints);
    int rc = unit_run();
    arena_destroy(&arena);
    return rc;
}
