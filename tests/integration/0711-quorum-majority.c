/* 0711-quorum-majority: a metadata quorum of three controller-only nodes
 * (as 0710) loses its majority and gets it back:
 *   - kill -9 of a follower, then of the leader: the survivor cannot
 *     commit: a cluster-wide broker config set on it (IncrementalAlter-
 *     Configs) is refused with NOT_CONTROLLER, and its DescribeQuorum
 *     never shows it as a leader (NOT_LEADER_OR_FOLLOWER), however long
 *     it waits (pre-vote keeps a lone voter from even raising the epoch);
 *   - one node restarts: a leader is elected at a higher epoch, takes the
 *     change, and both running nodes describe it; the third restarts and
 *     catches up, with every change;
 *   - SIGSTOP of the leader: the other two elect a new leader within
 *     about the fetch timeout (logged) and commit a change; SIGCONT: the
 *     old leader steps down (NOT_LEADER_OR_FOLLOWER, or it names the new
 *     leader), follows, catches up, and no change is lost.
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
#define FETCH_TIMEOUT_MS 2000
#define ELECTION_TIMEOUT_MS 1000

/* The survivor alone, for longer than the fetch and election timeouts
 * together: never a leader, and every change refused. */
static void check_no_majority(tl_node *node)
{
    double until = tl_now() + (FETCH_TIMEOUT_MS + 3 * ELECTION_TIMEOUT_MS) / 1000.0;
    int16_t err;
    tl_kraft_view v;
    while (tl_now() < until) {
        TL_ASSERT(tl_kraft_describe(node, &v) == 0, "node %d unreachable", node->id);
        TL_ASSERT(v.err == KERR_NOT_LEADER_OR_FOLLOWER,
                  "alone, node %d: DescribeQuorum error %d (leader %d, epoch %d)", node->id,
                  v.err, v.leader, v.epoch);
        err = tl_kraft_alter_default(node, "4444444");
        TL_ASSERT(err == KERR_NOT_CONTROLLER, "alone, node %d takes a change: error %d",
                  node->id, err);
        usleep(200000);
    }
    tl_log("alone, node %d: DescribeQuorum NOT_LEADER_OR_FOLLOWER (leader %d, epoch %d); "
           "IncrementalAlterConfigs NOT_CONTROLLER",
           node->id, v.leader, v.epoch);
}

/* The resumed old leader no longer claims leadership: it answers
 * NOT_LEADER_OR_FOLLOWER or names the new leader, within 10 s. */
static void wait_stepped_down(tl_node *node, int leader, int32_t epoch)
{
    double until = tl_now() + 10;
    tl_kraft_view v;
    memset(&v, 0, sizeof(v));
    while (tl_now() < until) {
        if (tl_kraft_describe(node, &v) == 0 &&
            (v.err == KERR_NOT_LEADER_OR_FOLLOWER || (v.leader == leader && v.epoch >= epoch)))
            return;
        usleep(50000);
    }
    tl_fail("resumed node %d still answers: error %d, leader %d at epoch %d", node->id, v.err,
            v.leader, v.epoch);
}

/* Loses the majority (a follower, then the leader, killed), checks the
 * survivor, and brings the two back one by one. Returns the new leader. */
static int lose_majority(tl_cluster *c, int leader, tl_kraft_view *v)
{
    int follower = leader % N + 1, survivor = follower % N + 1;
    int32_t epoch = v->epoch;
    tl_node_kill9(tl_cluster_node(c, follower));
    tl_node_kill9(tl_cluster_node(c, leader));
    check_no_majority(tl_cluster_node(c, survivor));

    tl_node_start(tl_cluster_node(c, follower));
    int now = tl_kraft_find_leader(c, epoch, 60, v);
    TL_ASSERT(now == follower || now == survivor, "no leader with the majority back");
    tl_log("majority back: leader %d at epoch %d (was %d at %d)", now, v->epoch, leader, epoch);
    TL_ASSERT_EQ(tl_kraft_alter_default_retry(tl_cluster_node(c, now), "2222222"), 0);
    tl_kraft_wait_default(c, "2222222");

    tl_node_start(tl_cluster_node(c, leader));
    tl_kraft_wait_caught_up(c, leader, 30);
    tl_kraft_wait_default(c, "2222222");
    tl_log("node %d restarted and caught up", leader);
    return now;
}

/* Pauses the leader: the others take over and commit; the old one comes
 * back as a follower with every change. */
static void pause_leader(tl_cluster *c, int leader, tl_kraft_view *v)
{
    tl_node *old = tl_cluster_node(c, leader);
    int32_t epoch = v->epoch;
    double t0 = tl_now();
    tl_node_pause(old);
    int now = tl_kraft_find_leader(c, epoch, 30, v);
    double ms = (tl_now() - t0) * 1000;
    TL_ASSERT(now && now != leader, "no new leader while %d is paused", leader);
    tl_log("leader %d paused: leader %d at epoch %d after %.0f ms", leader, now, v->epoch, ms);
    TL_ASSERT(ms < 4 * FETCH_TIMEOUT_MS, "new leader after %.0f ms, fetch timeout %d ms", ms,
              FETCH_TIMEOUT_MS);
    TL_ASSERT_EQ(tl_kraft_alter_default_retry(tl_cluster_node(c, now), "3333333"), 0);
    tl_kraft_wait_default(c, "3333333");

    tl_node_resume(old);
    wait_stepped_down(old, now, v->epoch);
    tl_kraft_wait_caught_up(c, leader, 30);
    tl_kraft_wait_default(c, "3333333");
    TL_ASSERT(tl_kraft_find_leader(c, -1, 10, v) == now, "leader moved after the resume");
    tl_log("node %d resumed, follows %d and has every change", leader, now);
}

int main(void)
{
    tl_kraft_view v;
    char kv[64];
    tl_init("0711-quorum-majority");
    tl_cluster *c = tl_cluster_new("0711-majority", TL_QUORUM_SHARED);
    snprintf(kv, sizeof(kv), "controller.quorum.fetch.timeout.ms=%d", FETCH_TIMEOUT_MS);
    tl_cluster_set(c, kv);
    snprintf(kv, sizeof(kv), "controller.quorum.election.timeout.ms=%d", ELECTION_TIMEOUT_MS);
    tl_cluster_set(c, kv);
    tl_cluster_add_n(c, N, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_start(c);
    int leader = tl_kraft_find_leader(c, -1, 60, &v);
    TL_ASSERT(leader, "no leader elected within 60 s");
    for (int id = 1; id <= N; id++)
        tl_kraft_wait_caught_up(c, id, 20);
    TL_ASSERT_EQ(tl_kraft_alter_default_retry(tl_cluster_node(c, leader), "1111111"), 0);
    tl_kraft_wait_default(c, "1111111");
    TL_ASSERT(tl_kraft_find_leader(c, -1, 10, &v) == leader, "leader moved");

    leader = lose_majority(c, leader, &v);
    pause_leader(c, leader, &v);

    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
