/* 0716-quorum-bad-requests: hand-made KRaft requests that no voter would
 * send, to a follower and to the leader of a quorum of three controllers,
 * answered as a Kafka 4.4 controller answers them: with no error at the
 * top level and the refusal in the one partition, with the receiver's
 * epoch and leader, and without disturbing the quorum:
 *   - Vote naming another voter (voter id 99): INVALID_VOTER_KEY;
 *   - Vote with a last epoch a candidate cannot have (above a pre-vote's
 *     epoch, equal to a vote's), a negative last offset, or no candidate
 *     id: INVALID_REQUEST, even at a newer epoch, which is not taken;
 *     an older epoch: FENCED_LEADER_EPOCH;
 *   - BeginQuorumEpoch naming another voter: INVALID_VOTER_KEY; Begin- and
 *     EndQuorumEpoch with no leader id: INVALID_REQUEST;
 *   - Fetch with a last fetched epoch above its epoch, a negative fetch
 *     offset or a negative wait: INVALID_REQUEST; a Fetch to a follower:
 *     NOT_LEADER_OR_FOLLOWER; each refused Fetch with high watermark -1.
 * Afterwards the same leader leads at the same epoch.
 * With KAFKA_REF=1 the same runs against three Apache Kafka 4.4
 * controllers. */
#include <string.h>
#include <unistd.h>

#include "proto/proto.h"
#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"
#include "util/kerr.h"

#define N 3
#define META "__cluster_metadata"

static arena_t arena;

/* What the one partition of an answer says. */
typedef struct answer_s {
    int16_t top, err;
    int32_t epoch, leader;
    int granted;
    int64_t hw;
} answer_t;

static int connect_to(tl_cluster *c, int id)
{
    int fd = tl_connect(tl_cluster_node(c, id)->controller, 2000);
    TL_ASSERT(fd >= 0, "connect to node %d", id);
    return fd;
}

static answer_t vote(tl_cluster *c, int to, int32_t voter, int32_t cand, int32_t epoch,
                     int32_t last_epoch, int64_t last_offset, int prevote)
{
    proto_vote_req_t req;
    proto_vote_req_topic_data_t t;
    proto_vote_req_partition_data_t p;
    proto_vote_resp_t resp;
    answer_t a = {0};
    proto_vote_req_init(&req);
    proto_vote_req_topic_data_init(&t);
    proto_vote_req_partition_data_init(&p);
    req.voter_id = voter;
    p.replica_epoch = epoch;
    p.replica_id = cand;
    p.last_offset_epoch = last_epoch;
    p.last_offset = last_offset;
    p.pre_vote = prevote != 0;
    t.topic_name = tl_wire_str(META);
    t.partitions.n = 1;
    t.partitions.v = &p;
    req.topics.n = 1;
    req.topics.v = &t;
    int fd = connect_to(c, to);
    TL_WIRE_CALL(fd, &arena, vote, 52, 2, &req, &resp);
    close(fd);
    a.top = resp.error_code;
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == 1,
              "Vote: %d topics in the answer (top-level error %d)", resp.topics.n, a.top);
    const proto_vote_resp_partition_data_t *rp = &resp.topics.v[0].partitions.v[0];
    a.err = rp->error_code;
    a.epoch = rp->leader_epoch;
    a.leader = rp->leader_id;
    a.granted = rp->vote_granted;
    tl_log("Vote to %d (voter %d, candidate %d, epoch %d, last %d/%lld, prevote %d): "
           "error %d, epoch %d, leader %d, granted %d, %d node endpoints",
           to, voter, cand, epoch, last_epoch, (long long)last_offset, prevote, a.err, a.epoch,
           a.leader, a.granted, resp.node_endpoints.n);
    arena_reset(&arena);
    return a;
}

static answer_t begin(tl_cluster *c, int to, int32_t voter, int32_t leader, int32_t epoch)
{
    proto_begin_quorum_epoch_req_t req;
    proto_begin_quorum_epoch_req_topic_data_t t;
    proto_begin_quorum_epoch_req_partition_data_t p;
    proto_begin_quorum_epoch_resp_t resp;
    answer_t a = {0};
    proto_begin_quorum_epoch_req_init(&req);
    proto_begin_quorum_epoch_req_topic_data_init(&t);
    proto_begin_quorum_epoch_req_partition_data_init(&p);
    req.voter_id = voter;
    p.leader_id = leader;
    p.leader_epoch = epoch;
    t.topic_name = tl_wire_str(META);
    t.partitions.n = 1;
    t.partitions.v = &p;
    req.topics.n = 1;
    req.topics.v = &t;
    int fd = connect_to(c, to);
    TL_WIRE_CALL(fd, &arena, begin_quorum_epoch, 53, 1, &req, &resp);
    close(fd);
    a.top = resp.error_code;
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == 1,
              "BeginQuorumEpoch: %d topics in the answer (top-level error %d)", resp.topics.n,
              a.top);
    a.err = resp.topics.v[0].partitions.v[0].error_code;
    a.epoch = resp.topics.v[0].partitions.v[0].leader_epoch;
    a.leader = resp.topics.v[0].partitions.v[0].leader_id;
    tl_log("BeginQuorumEpoch to %d (voter %d, leader %d, epoch %d): error %d, epoch %d, leader %d",
           to, voter, leader, epoch, a.err, a.epoch, a.leader);
    arena_reset(&arena);
    return a;
}

static answer_t end(tl_cluster *c, int to, int32_t leader, int32_t epoch)
{
    proto_end_quorum_epoch_req_t req;
    proto_end_quorum_epoch_req_topic_data_t t;
    proto_end_quorum_epoch_req_partition_data_t p;
    proto_end_quorum_epoch_resp_t resp;
    answer_t a = {0};
    proto_end_quorum_epoch_req_init(&req);
    proto_end_quorum_epoch_req_topic_data_init(&t);
    proto_end_quorum_epoch_req_partition_data_init(&p);
    p.leader_id = leader;
    p.leader_epoch = epoch;
    t.topic_name = tl_wire_str(META);
    t.partitions.n = 1;
    t.partitions.v = &p;
    req.topics.n = 1;
    req.topics.v = &t;
    int fd = connect_to(c, to);
    TL_WIRE_CALL(fd, &arena, end_quorum_epoch, 54, 1, &req, &resp);
    close(fd);
    a.top = resp.error_code;
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == 1,
              "EndQuorumEpoch: %d topics in the answer (top-level error %d)", resp.topics.n,
              a.top);
    a.err = resp.topics.v[0].partitions.v[0].error_code;
    a.epoch = resp.topics.v[0].partitions.v[0].leader_epoch;
    a.leader = resp.topics.v[0].partitions.v[0].leader_id;
    tl_log("EndQuorumEpoch to %d (leader %d, epoch %d): error %d, epoch %d, leader %d", to,
           leader, epoch, a.err, a.epoch, a.leader);
    arena_reset(&arena);
    return a;
}

/* Fetch v18 of the metadata topic (by its fixed id) from replica 99, an
 * observer no one knows. */
static answer_t fetch(tl_cluster *c, int to, int32_t epoch, int64_t offset, int32_t last_epoch,
                      int32_t wait_ms)
{
    proto_fetch_req_t req;
    proto_fetch_req_fetch_topic_t t;
    proto_fetch_req_fetch_partition_t p;
    proto_fetch_resp_t resp;
    answer_t a = {0};
    proto_fetch_req_init(&req);
    proto_fetch_req_fetch_topic_init(&t);
    proto_fetch_req_fetch_partition_init(&p);
    req.replica_state.replica_id = 99;
    req.max_wait_ms = wait_ms;
    req.max_bytes = 1 << 20;
    p.current_leader_epoch = epoch;
    p.fetch_offset = offset;
    p.last_fetched_epoch = last_epoch;
    p.partition_max_bytes = 1 << 20;
    t.topic_id.b[15] = 1;
    t.partitions.n = 1;
    t.partitions.v = &p;
    req.topics.n = 1;
    req.topics.v = &t;
    int fd = connect_to(c, to);
    TL_WIRE_CALL(fd, &arena, fetch, 1, 18, &req, &resp);
    close(fd);
    a.top = resp.error_code;
    TL_ASSERT(resp.responses.n == 1 && resp.responses.v[0].partitions.n == 1,
              "Fetch: %d topics in the answer (top-level error %d)", resp.responses.n, a.top);
    const proto_fetch_resp_partition_data_t *rp = &resp.responses.v[0].partitions.v[0];
    a.err = rp->error_code;
    a.epoch = rp->current_leader.leader_epoch;
    a.leader = rp->current_leader.leader_id;
    a.hw = rp->high_watermark;
    tl_log("Fetch to %d (epoch %d, offset %lld, last epoch %d, wait %d): error %d, epoch %d, "
           "leader %d, high watermark %lld, log start %lld, %d record bytes",
           to, epoch, (long long)offset, last_epoch, wait_ms, a.err, a.epoch, a.leader,
           (long long)a.hw, (long long)rp->log_start_offset, rp->records.len);
    arena_reset(&arena);
    return a;
}

static void expect(const char *what, answer_t a, int16_t err, int32_t epoch, int32_t leader)
{
    TL_ASSERT(a.top == 0, "%s: top-level error %d (the refusal belongs in the partition)", what,
              a.top);
    TL_ASSERT(a.err == err, "%s: error %d, want %d", what, a.err, err);
    TL_ASSERT(a.epoch == epoch, "%s: epoch %d, want %d", what, a.epoch, epoch);
    TL_ASSERT(a.leader == leader, "%s: leader %d, want %d", what, a.leader, leader);
}

static void check_votes(tl_cluster *c, int f, int other, int32_t e, int leader)
{
    answer_t a = vote(c, f, 99, other, e, e, 0, 1);
    expect("Vote naming voter 99", a, KERR_INVALID_VOTER_KEY, e, leader);
    TL_ASSERT(!a.granted, "granted");
    expect("pre-vote with a last epoch above its epoch", vote(c, f, f, other, e + 5, e + 6, 0, 1),
           KERR_INVALID_REQUEST, e, leader);
    expect("vote with a last epoch equal to its epoch", vote(c, f, f, other, e + 5, e + 5, 0, 0),
           KERR_INVALID_REQUEST, e, leader);
    expect("vote with a negative last offset", vote(c, f, f, other, e + 5, 0, -1, 0),
           KERR_INVALID_REQUEST, e, leader);
    expect("pre-vote with no candidate id", vote(c, f, f, -1, e, 0, 0, 1), KERR_INVALID_REQUEST, e,
           leader);
    expect("pre-vote at an older epoch", vote(c, f, f, other, e - 1, 0, 0, 1),
           KERR_FENCED_LEADER_EPOCH, e, leader);
}

static void check_notices(tl_cluster *c, int f, int32_t e, int leader)
{
    expect("BeginQuorumEpoch naming voter 99", begin(c, f, 99, leader, e), KERR_INVALID_VOTER_KEY,
           e, leader);
    expect("BeginQuorumEpoch with no leader id", begin(c, f, f, -1, e + 5), KERR_INVALID_REQUEST,
           e, leader);
    expect("EndQuorumEpoch with no leader id", end(c, f, -1, e + 5), KERR_INVALID_REQUEST, e,
           leader);
}

static void check_fetches(tl_cluster *c, int f, int32_t e, int leader)
{
    struct {
        const char *what;
        int to;
        int32_t epoch, last_epoch, wait;
        int64_t offset;
        int16_t err;
    } cases[] = {
        {"Fetch with a last epoch above its epoch", leader, e, e + 1, 0, 0, KERR_INVALID_REQUEST},
        {"Fetch at a negative offset", leader, e, 0, 0, -1, KERR_INVALID_REQUEST},
        {"Fetch with a negative wait", leader, e, 0, -1, 0, KERR_INVALID_REQUEST},
        {"Fetch at a newer epoch, negative offset", leader, e + 5, 0, 0, -1, KERR_INVALID_REQUEST},
        {"Fetch from a follower", f, e, 0, 0, 0, KERR_NOT_LEADER_OR_FOLLOWER},
    };
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        answer_t a = fetch(c, cases[i].to, cases[i].epoch, cases[i].offset, cases[i].last_epoch,
                           cases[i].wait);
        expect(cases[i].what, a, cases[i].err, e, leader);
        TL_ASSERT(a.hw == -1, "%s: high watermark %lld, want -1", cases[i].what, (long long)a.hw);
    }
}

int main(void)
{
    tl_kraft_view v;
    tl_init("0716-quorum-bad-requests");
    arena_init(&arena, 1 << 16);
    tl_cluster *c = tl_cluster_new("0716-bad-requests", TL_QUORUM_SHARED);
    tl_cluster_add_n(c, N, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_start(c);
    int leader = tl_kraft_find_leader(c, -1, 60, &v);
    TL_ASSERT(leader, "no leader elected within 60 s");
    for (int id = 1; id <= N; id++)
        tl_kraft_wait_caught_up(c, id, 20);
    leader = tl_kraft_find_leader(c, -1, 10, &v);
    int32_t e = v.epoch;
    int f = leader % N + 1, other = f % N + 1;
    tl_log("leader %d at epoch %d; requests to follower %d and the leader", leader, e, f);
    check_votes(c, f, other, e, leader);
    check_notices(c, f, e, leader);
    check_fetches(c, f, e, leader);
    TL_ASSERT(tl_kraft_find_leader(c, -1, 10, &v) == leader && v.epoch == e,
              "the quorum moved: leader %d at epoch %d", v.leader, v.epoch);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    arena_destroy(&arena);
    return tl_done();
}
