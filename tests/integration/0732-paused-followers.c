/* 0732-paused-followers: followers stopped with SIGSTOP longer than
 * replica.lag.time.max.ms, under load. Three controllers and three
 * brokers (the quorum apart, so a paused broker takes no controller
 * with it); a topic of one partition, replication factor 3,
 * min.insync.replicas=2, replica.lag.time.max.ms=3000, sessions of 12 s
 * (no fencing while paused); an idempotent acks=all librdkafka producer
 * and a consumer alongside (testlib/load.h):
 *   - one follower paused: the leader takes it out of the ISR, and the
 *     producer goes on with the two left (the longest wait for an
 *     acknowledgement logged, under the lag and a margin); resumed, it
 *     catches up and is back in the ISR;
 *   - both followers paused: once the ISR is the leader alone, nothing
 *     more is acknowledged (what is acknowledged is on two replicas at
 *     least), and a Produce acks=-1 sent to the leader is refused
 *     NOT_ENOUGH_REPLICAS before its append; resumed, both rejoin and the
 *     messages that waited are acknowledged;
 *   - every acknowledgement at its place, every message consumed once and
 *     in order, the segment files the same bytes on the three brokers.
 * With KAFKA_REF=1 the same runs against Apache Kafka 4.4 nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/load.h"
#include "testlib/logfiles.h"
#include "testlib/rawproduce.h"
#include "testlib/testlib.h"
#include "util/kerr.h"

#define NC 3
#define NB 3
#define TOPIC "p0732"
#define RATE 1000
#define LAG_S 3.0

static tl_cluster *c;
static int leader;

/* The ISR of TOPIC-0 as its leader describes it (a broker just resumed
 * still has the image it was paused with): its size, and whether id is
 * in it. */
static int isr_of(int id, int *has)
{
    tl_kraft_topic t;
    *has = 0;
    if (tl_kraft_metadata(tl_cluster_node(c, leader), TOPIC, &t) || t.npart != 1)
        return -1;
    for (int i = 0; i < t.nisr[0]; i++)
        *has |= t.isr[0][i] == id;
    return t.nisr[0];
}

/* Loads until TOPIC-0's ISR has n members, id among them or not. */
static double wait_isr(tl_load *l, int n, int id, int in)
{
    double t0 = tl_now();
    int has;
    while (isr_of(id, &has) != n || has != in) {
        TL_ASSERT(tl_now() < t0 + 60, "the ISR is not %d %s %d", n, in ? "with" : "without", id);
        tl_load_pump(l, 1, 100);
    }
    return tl_now() - t0;
}

int main(void)
{
    tl_init("0732-paused-followers");
    c = tl_cluster_new("0732-paused", TL_QUORUM_SHARED);
    tl_cluster_set(c, "min.insync.replicas=2");
    tl_cluster_set(c, "replica.lag.time.max.ms=3000");
    tl_cluster_set(c, "broker.session.timeout.ms=12000");
    tl_cluster_add_n(c, NC, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_add_n(c, NB, TL_ROLE_BROKER, NULL);
    tl_kraft_start_topic(c, TOPIC, 1, 3);
    char bs[256] = "";
    for (int id = NC + 1; id <= NC + NB; id++)
        snprintf(bs + strlen(bs), sizeof(bs) - strlen(bs), "%s%s", *bs ? "," : "",
                 tl_cluster_node(c, id)->bootstrap);
    tl_load *l = tl_load_new(bs, TOPIC, 1, RATE);
    tl_load_mark(l);
    while (!tl_kraft_isr_whole(c, TOPIC, 1, NB) || !tl_load_moved(l, 100))
        tl_load_pump(l, 1, 100);
    leader = tl_kraft_leader_of(c, TOPIC, 0);
    int f1 = leader == NC + 1 ? NC + 2 : NC + 1, f2 = NC + 1 + NC + 2 + NC + 3 - leader - f1;

    tl_load_max_gap(l);
    tl_node_pause(tl_cluster_node(c, f1));
    double took = wait_isr(l, 2, f1, 0);
    tl_load_pump(l, 1, 1000);
    double gap = tl_load_max_gap(l);
    tl_log("follower %d paused: out of the ISR %.1f s later; the longest wait for an "
           "acknowledgement %.1f s", f1, took, gap);
    TL_ASSERT(gap < 2 * LAG_S + 2, "%.1f s without an acknowledgement", gap);
    tl_node_resume(tl_cluster_node(c, f1));
    took = wait_isr(l, 3, f1, 1);
    tl_log("follower %d resumed: back in the ISR %.1f s later", f1, took);

    tl_node_pause(tl_cluster_node(c, f1));
    tl_node_pause(tl_cluster_node(c, f2));
    double t0 = tl_now();
    int has;
    while (isr_of(f1, &has) != 1) {
        TL_ASSERT(tl_now() < t0 + 60, "the ISR is not the leader alone");
        tl_load_pump(l, 1, 100);
    }
    tl_load_pump(l, 1, 500); /* what the leader answered before it shrank comes in */
    int64_t stalled = tl_load_acked(l, 0);
    tl_load_bg_start(l, 1);
    int16_t err = tl_raw_produce(tl_cluster_node(c, leader)->bootstrap, TOPIC, 0, -1, 3000, "alone");
    usleep(2000 * 1000);
    tl_load_bg_stop(l);
    TL_ASSERT(err == KERR_NOT_ENOUGH_REPLICAS, "acks=-1 to the leader alone: %d, want %d", err,
              KERR_NOT_ENOUGH_REPLICAS);
    TL_ASSERT(tl_load_acked(l, 0) == stalled, "%lld acknowledged by the leader alone",
              (long long)(tl_load_acked(l, 0) - stalled));
    tl_log("followers %d and %d paused: the ISR is the leader alone %.1f s later; nothing "
           "acknowledged since, acks=-1 refused NOT_ENOUGH_REPLICAS", f1, f2, tl_now() - t0);
    tl_node_resume(tl_cluster_node(c, f1));
    tl_node_resume(tl_cluster_node(c, f2));
    took = wait_isr(l, 3, f2, 1);
    tl_log("both resumed: the ISR whole again %.1f s later, %lld acknowledged meanwhile", took,
           (long long)(tl_load_acked(l, 0) - stalled));
    tl_load_pump(l, 1, 1000);
    tl_load_drain(l, 120);
    tl_load_free(l);
    tl_logfiles_wait_same(c, TOPIC, 1, 60);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
