/* 0710-quorum-controllers: three controller-only nodes form a Raft
 * metadata quorum over their controller listeners (KRaft's Vote,
 * BeginQuorumEpoch, Fetch), each its own process with its own data dir:
 *   - a leader is elected (the time from start is logged), and
 *     DescribeQuorum on it shows the three voters with their endpoints,
 *     all caught up to its high watermark; DescribeCluster on the
 *     controller listener names it the active controller;
 *   - the others answer DescribeQuorum with NOT_LEADER_OR_FOLLOWER (the
 *     leader id and epoch they answer with are logged: Kafka's error
 *     answer leaves them at 0);
 *   - kill -9 of the leader: the other two elect another at a higher epoch
 *     (the failover time is logged), and the high watermark does not go
 *     back;
 *   - the killed node restarts on its directory and catches up: the leader
 *     sees its log end reach the high watermark;
 *   - a SIGSTOPped follower stops fetching (its last fetch time stands
 *     still at the leader) and fetches again after SIGCONT;
 *   - changes commit through the quorum: a cluster-wide broker config set
 *     on the leader (IncrementalAlterConfigs) is described by every
 *     controller; set on another controller it is refused with
 *     NOT_CONTROLLER; after the failover the new leader takes changes and
 *     the restarted node has them; CreateTopics with no broker registered
 *     is INVALID_REPLICATION_FACTOR;
 *   - every node exits cleanly on SIGTERM.
 * With KAFKA_REF=1 the same runs against three Apache Kafka 4.4
 * controllers. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "util/kerr.h"

#define N 3

static void check_leader_view(const tl_kraft_view *v)
{
    TL_ASSERT_EQ(v->nvoters, N);
    TL_ASSERT(v->nnodes == N, "Nodes: %d endpoints, want one per voter", v->nnodes);
    TL_ASSERT(v->hw >= 1, "high watermark %lld: the epoch's first record commits",
              (long long)v->hw);
}

static void check_follower_answer(tl_cluster *c, int leader)
{
    for (int id = 1; id <= N; id++) {
        tl_kraft_view v;
        if (id == leader || tl_kraft_describe(tl_cluster_node(c, id), &v) < 0)
            continue;
        TL_ASSERT(v.err == KERR_NOT_LEADER_OR_FOLLOWER, "node %d: DescribeQuorum error %d", id,
                  v.err);
        tl_log("node %d: DescribeQuorum NOT_LEADER_OR_FOLLOWER, leader %d, epoch %d", id,
               v.leader, v.epoch);
    }
}

/* DescribeCluster on the controller listener: the active controller and
 * the controllers, once each has registered (Kafka lists a controller from
 * its ControllerRegistrationRecord, which it sends after it starts, names
 * the leader as the active controller only once it is listed, and answers
 * UNSUPPORTED_VERSION until it has applied a metadata.version). */
static void check_describe_cluster(tl_cluster *c, int leader)
{
    tl_kraft_nodes v;
    double until = tl_now() + 20;
    for (;;) {
        TL_ASSERT(tl_kraft_describe_cluster(tl_cluster_node(c, leader), 1, &v) == 0, "connect");
        if ((!v.err && v.controller == leader && v.n == N) || tl_now() > until)
            break;
        usleep(50000);
    }
    TL_ASSERT_EQ(v.err, 0);
    TL_ASSERT(v.controller == leader, "active controller %d, leader %d", v.controller, leader);
    TL_ASSERT_EQ(v.n, N);
}

/* CreateTopics on the leader: no broker is registered with this quorum. */
static void check_create_without_brokers(tl_node *node)
{
    int16_t err = tl_kraft_create_topic(node->controller, "no-brokers", 1, 1);
    TL_ASSERT(err == KERR_INVALID_REPLICATION_FACTOR, "CreateTopics without brokers: error %d",
              err);
}

int main(void)
{
    tl_kraft_view v, w;
    tl_init("0710-quorum-controllers");
    tl_cluster *c = tl_cluster_new("0710-quorum", TL_QUORUM_SHARED);
    tl_cluster_add_n(c, N, TL_ROLE_CONTROLLER, NULL);
    int leader = tl_kraft_start(c, &v);
    check_leader_view(&v);
    check_follower_answer(c, leader);
    check_describe_cluster(c, leader);
    TL_ASSERT_EQ(tl_kraft_alter_default(tl_cluster_node(c, leader % N + 1), "1111111"),
                 KERR_NOT_CONTROLLER);
    TL_ASSERT_EQ(tl_kraft_alter_default(tl_cluster_node(c, leader), "2222222"), 0);
    tl_kraft_wait_default(c, "2222222");
    check_create_without_brokers(tl_cluster_node(c, leader));

    /* kill -9 of the leader */
    int64_t old_hw = v.hw;
    int old = leader;
    leader = tl_kraft_failover(c, old, &v);
    tl_kraft_wait_hw(c, leader, &v);
    TL_ASSERT(v.hw >= old_hw, "high watermark went back: %lld < %lld", (long long)v.hw,
              (long long)old_hw);
    /* the new leader is the active controller once it has applied its
     * predecessors' records: it may refuse for a moment */
    TL_ASSERT_EQ(tl_kraft_alter_default_retry(tl_cluster_node(c, leader), "3333333"), 0);
    tl_kraft_wait_default(c, "3333333");

    /* it comes back and catches up */
    tl_node_restart(tl_cluster_node(c, old));
    tl_kraft_wait_caught_up(c, old, 30);
    tl_kraft_wait_default(c, "3333333");
    tl_log("node %d restarted and caught up", old);

    /* a paused follower stops fetching */
    int f = leader % N + 1;
    TL_ASSERT(tl_kraft_find_leader(c, -1, 10, &v) == leader, "leader moved");
    tl_node_pause(tl_cluster_node(c, f));
    /* past the longest a fetch sent before the pause can wait at the
     * leader (its 500 ms long poll) */
    usleep(1000000);
    tl_kraft_find_leader(c, -1, 10, &v);
    usleep(1200000);
    tl_kraft_find_leader(c, -1, 10, &w);
    TL_ASSERT(w.fetch[f] == v.fetch[f], "paused node %d fetched: %lld -> %lld", f,
              (long long)v.fetch[f], (long long)w.fetch[f]);
    tl_node_resume(tl_cluster_node(c, f));
    usleep(1500000);
    tl_kraft_find_leader(c, -1, 10, &w);
    TL_ASSERT(w.fetch[f] > v.fetch[f], "resumed node %d does not fetch", f);
    tl_kraft_wait_caught_up(c, f, 20);

    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
