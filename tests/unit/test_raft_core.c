/* The Raft core (cluster/raft*.c) driven by hand, one node of three
 * voters, for the exact messages of one exchange that the seeded
 * simulation (test_raft_sim.c) only checks in bulk:
 *   - a resigned leader sends EndQuorumEpoch to every other voter and
 *     again each request timeout to those that have not acknowledged it,
 *     until they do or the epoch ends; whether it resigned gracefully,
 *     after a failed check-quorum, or found itself the leader of its last
 *     epoch at a restart (as KRaft's resigned state does);
 *   - Vote, BeginQuorumEpoch, EndQuorumEpoch and Fetch requests with
 *     impossible epochs, offsets or ids are answered INVALID_REQUEST, in
 *     the partition, in KRaft's order of checks; a request naming another
 *     voter (INVALID_VOTER_KEY) is answered in the partition too, once
 *     its epoch has been taken. */
#include <string.h>

#include "cluster/raft.h"
#include "tests/unit/unit.h"
#include "util/kerr.h"

#define REQ_TIMEOUT 300 /* within the election timeout (1000), so resends show */
#define MAX_SENT 64

static raft_msg_t sent[MAX_SENT];
static int nsent;

static uint64_t zero_rand(void *arg)
{
    (void)arg;
    return 0;
}

/* Takes every output: quorum-state writes are durable at once, sent
 * messages are kept in sent[]. */
static void drain(raft_t *raft, int64_t now)
{
    raft_out_t out;
    nsent = 0;
    while (raft_poll(raft, &out)) {
        if (out.kind == RAFT_OUT_PERSIST)
            raft_persisted(raft, out.seq, now);
        else if (out.kind == RAFT_OUT_SEND && nsent < MAX_SENT)
            sent[nsent++] = out.msg;
    }
}

static int count_sent(int type, int32_t dst)
{
    int n = 0;
    for (int i = 0; i < nsent; i++)
        if (sent[i].type == type && sent[i].dst == dst)
            n++;
    return n;
}

static const raft_msg_t *last_sent(int type)
{
    for (int i = nsent - 1; i >= 0; i--)
        if (sent[i].type == type)
            return &sent[i];
    return NULL;
}

static raft_t *new_node(int32_t epoch, int32_t leader, int64_t log_end, const raft_batch_t *epochs,
                        int nepochs)
{
    raft_config_t cfg;
    raft_disk_t disk;
    memset(&cfg, 0, sizeof(cfg));
    memset(&disk, 0, sizeof(disk));
    cfg.node_id = 1;
    cfg.voters[0] = 1;
    cfg.voters[1] = 2;
    cfg.voters[2] = 3;
    cfg.nvoters = 3;
    cfg.election_timeout_ms = 1000;
    cfg.fetch_timeout_ms = 2000;
    cfg.election_backoff_max_ms = 1000;
    cfg.request_timeout_ms = REQ_TIMEOUT;
    disk.epoch = epoch;
    disk.leader_id = leader;
    disk.voted_id = -1;
    disk.log_end = log_end;
    disk.epochs = epochs;
    disk.nepochs = nepochs;
    raft_t *raft = raft_new(&cfg, &disk, zero_rand, NULL, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(raft);
    drain(raft, 0);
    return raft;
}

static raft_msg_t msg_of(int type, int32_t src, int32_t epoch)
{
    raft_msg_t m;
    memset(&m, 0, sizeof(m));
    m.type = type;
    m.src = src;
    m.dst = 1;
    m.epoch = epoch;
    m.leader_id = -1;
    m.div_end = m.snap_end = -1;
    m.snap_epoch = -1;
    return m;
}

/* Node 1 wins the election of epoch 1 with node 2's votes (at t = 1000,
 * its election timeout with no randomness). */
static raft_t *new_leader(void)
{
    raft_t *raft = new_node(0, -1, 0, NULL, 0);
    raft_tick(raft, 1000); /* unattached -> prospective */
    raft_tick(raft, 1000); /* its pre-votes */
    drain(raft, 1000);
    raft_msg_t m = msg_of(RAFT_VOTE_RESP, 2, 0);
    m.prevote = 1;
    m.granted = 1;
    raft_recv(raft, &m, 1001);
    drain(raft, 1001);
    m = msg_of(RAFT_VOTE_RESP, 2, 1);
    m.granted = 1;
    raft_recv(raft, &m, 1002);
    drain(raft, 1002);
    CU_ASSERT_EQUAL_FATAL(raft_role(raft), RAFT_LEADER);
    CU_ASSERT_EQUAL_FATAL(raft_epoch(raft), 1);
    return raft;
}

static void ack_end(raft_t *raft, int32_t src, int32_t epoch, int16_t err, int64_t now)
{
    raft_msg_t m = msg_of(RAFT_END_RESP, src, epoch);
    m.err = err;
    m.leader_id = err ? -1 : 1;
    raft_recv(raft, &m, now);
}

/* Sent at once to both, again after a request timeout to both, then only
 * to the one that has not acknowledged; an error answer is no
 * acknowledgement. */
static void test_end_resent_until_acked(void)
{
    raft_t *raft = new_leader();
    raft_resign(raft, 1100);
    drain(raft, 1100);
    CU_ASSERT_EQUAL(raft_role(raft), RAFT_RESIGNED);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 2), 1);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 3), 1);
    raft_tick(raft, 1100 + REQ_TIMEOUT - 1);
    drain(raft, 1100 + REQ_TIMEOUT - 1);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 2) + count_sent(RAFT_END_REQ, 3), 0);
    CU_ASSERT(raft_next_deadline(raft) <= 1100 + REQ_TIMEOUT);
    ack_end(raft, 2, 1, KERR_NONE, 1200);
    ack_end(raft, 3, 1, KERR_BROKER_NOT_AVAILABLE, 1200);
    raft_tick(raft, 1100 + REQ_TIMEOUT);
    drain(raft, 1100 + REQ_TIMEOUT);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 2), 0);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 3), 1);
    const raft_msg_t *end = last_sent(RAFT_END_REQ);
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    CU_ASSERT_EQUAL(end->epoch, 1);
    CU_ASSERT_EQUAL(end->nsuccessors, 2); /* the same successors each time */
    ack_end(raft, 3, 1, KERR_NONE, 3200);
    raft_tick(raft, 1100 + 2 * REQ_TIMEOUT);
    drain(raft, 1100 + 2 * REQ_TIMEOUT);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 3), 0);
    raft_free(raft);
}

/* A newer epoch ends the resignation: nothing more is sent. */
static void test_end_stops_with_epoch(void)
{
    raft_t *raft = new_leader();
    raft_resign(raft, 1100);
    drain(raft, 1100);
    raft_msg_t m = msg_of(RAFT_BEGIN_REQ, 3, 2);
    raft_recv(raft, &m, 1200);
    drain(raft, 1200);
    CU_ASSERT_EQUAL(raft_role(raft), RAFT_FOLLOWER);
    raft_tick(raft, 1100 + REQ_TIMEOUT);
    drain(raft, 1100 + REQ_TIMEOUT);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 2) + count_sent(RAFT_END_REQ, 3), 0);
    raft_free(raft);
}

/* A leader that no majority fetches from resigns with EndQuorumEpoch. */
static void test_end_on_check_quorum(void)
{
    raft_t *raft = new_leader();
    int64_t t = 1002 + 3000; /* 1.5 fetch timeouts after its election */
    raft_tick(raft, t);
    drain(raft, t);
    CU_ASSERT_EQUAL(raft_role(raft), RAFT_RESIGNED);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 2), 1);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 3), 1);
    raft_free(raft);
}

/* Restarted as the leader of its last epoch: resigned, EndQuorumEpoch to
 * both with no successors; an error answer is tried again after a short
 * backoff, to that voter only once the other has acknowledged. */
static void test_end_on_restart(void)
{
    raft_batch_t ep = {0, 0, 4};
    raft_t *raft = new_node(4, 1, 1, &ep, 1);
    CU_ASSERT_EQUAL(raft_role(raft), RAFT_RESIGNED);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 2), 1);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 3), 1);
    const raft_msg_t *end = last_sent(RAFT_END_REQ);
    CU_ASSERT_PTR_NOT_NULL_FATAL(end);
    CU_ASSERT_EQUAL(end->nsuccessors, 0);
    CU_ASSERT_EQUAL(end->epoch, 4);
    ack_end(raft, 2, 4, KERR_NONE, 10);
    ack_end(raft, 3, 4, KERR_BROKER_NOT_AVAILABLE, 10);
    CU_ASSERT(raft_next_deadline(raft) < 10 + REQ_TIMEOUT);
    raft_tick(raft, raft_next_deadline(raft));
    drain(raft, raft_next_deadline(raft));
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 2), 0);
    CU_ASSERT_EQUAL(count_sent(RAFT_END_REQ, 3), 1);
    raft_free(raft);
}

/* A follower of node 2 at epoch 3, its log [0, 5) of epoch 3. */
static raft_t *new_follower(void)
{
    static const raft_batch_t ep = {0, 4, 3};
    raft_t *raft = new_node(3, 2, 5, &ep, 1);
    CU_ASSERT_EQUAL_FATAL(raft_role(raft), RAFT_FOLLOWER);
    return raft;
}

/* The one answer of type to a request, which must be the only output. */
static const raft_msg_t *answer(raft_t *raft, const raft_msg_t *req, int type)
{
    raft_recv(raft, req, 100);
    drain(raft, 100);
    CU_ASSERT_EQUAL(nsent, 1);
    const raft_msg_t *resp = last_sent(type);
    CU_ASSERT_PTR_NOT_NULL_FATAL(resp);
    CU_ASSERT_EQUAL(resp->dst, req->src);
    return resp;
}

static raft_msg_t vote_req(int32_t src, int32_t epoch, int32_t last_epoch, int64_t last_offset,
                           int prevote)
{
    raft_msg_t m = msg_of(RAFT_VOTE_REQ, src, epoch);
    m.last_epoch = last_epoch;
    m.last_offset = last_offset;
    m.prevote = (int8_t)prevote;
    return m;
}

/* Impossible offsets and epochs, an older epoch, no candidate id: refused
 * in KRaft's order, and a newer epoch in an impossible request is not
 * taken. */
static void test_vote_checks(void)
{
    static const struct {
        int32_t src, epoch, last_epoch;
        int64_t last_offset;
        int prevote;
        int16_t err;
    } cases[] = {
        {3, 9, 3, -1, 0, KERR_INVALID_REQUEST},        /* negative last offset */
        {3, 9, -1, 5, 0, KERR_INVALID_REQUEST},        /* negative last epoch */
        {3, 9, 9, 5, 0, KERR_INVALID_REQUEST},         /* a vote's last epoch = its epoch */
        {3, 9, 10, 5, 1, KERR_INVALID_REQUEST},        /* a pre-vote's last epoch above it */
        {3, 2, 3, 5, 1, KERR_INVALID_REQUEST},         /* impossible before fenced */
        {3, 2, 1, 5, 1, KERR_FENCED_LEADER_EPOCH},     /* an older epoch */
        {-1, 3, 3, 5, 1, KERR_INVALID_REQUEST},        /* no candidate id */
        {-1, 1, 1, 5, 1, KERR_FENCED_LEADER_EPOCH},    /* fenced before the id */
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        raft_t *raft = new_follower();
        raft_msg_t req = vote_req(cases[i].src, cases[i].epoch, cases[i].last_epoch,
                                  cases[i].last_offset, cases[i].prevote);
        const raft_msg_t *resp = answer(raft, &req, RAFT_VOTE_RESP);
        CU_ASSERT_EQUAL(resp->err, cases[i].err);
        CU_ASSERT_EQUAL(resp->granted, 0);
        CU_ASSERT_EQUAL(resp->epoch, 3);
        CU_ASSERT_EQUAL(resp->leader_id, 2);
        CU_ASSERT_EQUAL(raft_epoch(raft), 3);
        CU_ASSERT_EQUAL(raft_role(raft), RAFT_FOLLOWER);
        raft_free(raft);
    }
    /* a good one for contrast: granted at the new epoch */
    raft_t *raft = new_follower();
    raft_msg_t req = vote_req(3, 4, 3, 5, 0);
    raft_recv(raft, &req, 100);
    drain(raft, 100);
    CU_ASSERT_EQUAL(last_sent(RAFT_VOTE_RESP)->err, 0);
    CU_ASSERT_EQUAL(last_sent(RAFT_VOTE_RESP)->granted, 1);
    raft_free(raft);
}

/* A vote naming another voter: the epoch is taken (no leader known at
 * it), the answer INVALID_VOTER_KEY at it, no vote given. */
static void test_vote_other_voter(void)
{
    raft_t *raft = new_follower();
    raft_msg_t req = vote_req(3, 4, 3, 5, 0);
    req.other_voter = 1;
    raft_recv(raft, &req, 100);
    drain(raft, 100);
    const raft_msg_t *resp = last_sent(RAFT_VOTE_RESP);
    CU_ASSERT_PTR_NOT_NULL_FATAL(resp);
    CU_ASSERT_EQUAL(resp->err, KERR_INVALID_VOTER_KEY);
    CU_ASSERT_EQUAL(resp->granted, 0);
    CU_ASSERT_EQUAL(resp->epoch, 4);
    CU_ASSERT_EQUAL(resp->leader_id, -1);
    CU_ASSERT_EQUAL(raft_epoch(raft), 4);
    CU_ASSERT_EQUAL(raft_voted(raft), -1);
    raft_free(raft);
}

/* BeginQuorumEpoch and EndQuorumEpoch without a leader id are refused;
 * a BeginQuorumEpoch naming another voter is followed all the same (its
 * leader is the epoch's) and answered INVALID_VOTER_KEY. */
static void test_notice_checks(void)
{
    raft_t *raft = new_follower();
    raft_msg_t req = msg_of(RAFT_BEGIN_REQ, -1, 5);
    const raft_msg_t *resp = answer(raft, &req, RAFT_BEGIN_RESP);
    CU_ASSERT_EQUAL(resp->err, KERR_INVALID_REQUEST);
    CU_ASSERT_EQUAL(resp->epoch, 3);
    CU_ASSERT_EQUAL(raft_epoch(raft), 3);
    req = msg_of(RAFT_END_REQ, -1, 5);
    resp = answer(raft, &req, RAFT_END_RESP);
    CU_ASSERT_EQUAL(resp->err, KERR_INVALID_REQUEST);
    req = msg_of(RAFT_END_REQ, -1, 2);
    resp = answer(raft, &req, RAFT_END_RESP);
    CU_ASSERT_EQUAL(resp->err, KERR_FENCED_LEADER_EPOCH);
    req = msg_of(RAFT_BEGIN_REQ, 3, 5);
    req.other_voter = 1;
    raft_recv(raft, &req, 100);
    drain(raft, 100);
    resp = last_sent(RAFT_BEGIN_RESP);
    CU_ASSERT_PTR_NOT_NULL_FATAL(resp);
    CU_ASSERT_EQUAL(resp->err, KERR_INVALID_VOTER_KEY);
    CU_ASSERT_EQUAL(resp->epoch, 5);
    CU_ASSERT_EQUAL(resp->leader_id, 3);
    CU_ASSERT_EQUAL(raft_leader(raft), 3);
    raft_free(raft);
}

/* A fetch with a negative wait, offset or last epoch, or a last epoch
 * above its own, is INVALID_REQUEST before its epoch is looked at; every
 * refused fetch carries high watermark -1. */
static void test_fetch_checks(void)
{
    static const struct {
        int32_t epoch, last_epoch, wait;
        int64_t offset;
        int16_t err;
    } cases[] = {
        {1, 2, 500, 5, KERR_INVALID_REQUEST},     /* last epoch above its epoch */
        {1, 0, -1, 5, KERR_INVALID_REQUEST},      /* negative wait */
        {9, 1, 500, -1, KERR_INVALID_REQUEST},    /* negative offset, newer epoch */
        {9, -1, 500, 0, KERR_INVALID_REQUEST},    /* negative last epoch */
        {0, 0, 500, 0, KERR_FENCED_LEADER_EPOCH}, /* valid, older epoch */
    };
    raft_t *raft = new_leader();
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        raft_msg_t req = msg_of(RAFT_FETCH_REQ, 3, cases[i].epoch);
        req.last_fetched_epoch = cases[i].last_epoch;
        req.max_wait_ms = cases[i].wait;
        req.fetch_offset = cases[i].offset;
        const raft_msg_t *resp = answer(raft, &req, RAFT_FETCH_RESP);
        CU_ASSERT_EQUAL(resp->err, cases[i].err);
        CU_ASSERT_EQUAL(resp->hw, -1);
        CU_ASSERT_EQUAL(resp->epoch, 1);
        CU_ASSERT_EQUAL(resp->leader_id, 1);
        CU_ASSERT_EQUAL(resp->rec_to, resp->rec_from);
        CU_ASSERT_EQUAL(raft_role(raft), RAFT_LEADER);
    }
    raft_free(raft);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("raft_core", NULL, NULL);
    CU_add_test(s, "EndQuorumEpoch resent until acknowledged", test_end_resent_until_acked);
    CU_add_test(s, "EndQuorumEpoch stops with a newer epoch", test_end_stops_with_epoch);
    CU_add_test(s, "EndQuorumEpoch after a failed check-quorum", test_end_on_check_quorum);
    CU_add_test(s, "EndQuorumEpoch after a restart as leader", test_end_on_restart);
    CU_add_test(s, "Vote: impossible epochs and offsets", test_vote_checks);
    CU_add_test(s, "Vote: another voter's key", test_vote_other_voter);
    CU_add_test(s, "Begin/EndQuorumEpoch: checks", test_notice_checks);
    CU_add_test(s, "Fetch: impossible positions", test_fetch_checks);
    return unit_run();
}
