/* 0735-mixed-replication: the data plane is Kafka's on the wire both ways.
 * Three Strand controllers, a Strand broker (4) and an Apache Kafka 4.4
 * broker (5); a topic of two partitions with replication factor 2, one led
 * by each broker, so each follows the other's leader with replica Fetch
 * (divergence, truncation and all); min.insync.replicas=2 and an
 * idempotent acks=all librdkafka producer with a consumer alongside
 * (testlib/load.h):
 *   - both ISRs hold both brokers: each has caught up with the other;
 *   - the Strand broker killed with kill -9: its partition moves to the
 *     Kafka broker (and the ISR to it alone, so acks=all waits), it starts
 *     again and catches up from the Kafka leader, back in the ISR;
 *   - the same with the Kafka broker killed;
 *   - every acknowledgement at its place, every message consumed once and
 *     in order, and the segment files of both partitions are the same
 *     bytes on the two brokers.
 * Strand-specific (it mixes the two), and it needs Kafka: it runs only
 * with KAFKA_REF=1. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/load.h"
#include "testlib/logfiles.h"
#include "testlib/testlib.h"

#define NC 3
#define TOPIC "m0735"
#define NPART 2
#define RATE 1000

static tl_cluster *c;

static void settle(tl_load *l, const char *what)
{
    double until = tl_now() + 120;
    tl_load_mark(l);
    while (!tl_kraft_isr_whole(c, TOPIC, NPART, 2) || !tl_load_moved(l, 50)) {
        TL_ASSERT(tl_now() < until, "%s: the ISRs are not whole, or no progress", what);
        tl_load_pump(l, 1, 200);
    }
}

/* kill -9 of broker id under load, its fencing, its start, the ISRs whole. */
static void bounce(tl_load *l, int id, const char *kind)
{
    double t0 = tl_now();
    tl_node_kill9(tl_cluster_node(c, id));
    while (!tl_kraft_is_fenced(c, id)) {
        TL_ASSERT(tl_now() < t0 + 60, "broker %d not fenced", id);
        tl_load_pump(l, 1, 100);
    }
    tl_load_pump(l, 1, 1000);
    tl_load_bg_start(l, 1);
    tl_node_start(tl_cluster_node(c, id));
    tl_load_bg_stop(l);
    settle(l, kind);
    tl_log("the %s broker %d killed, fenced, started again and caught up: %.1f s", kind, id,
           tl_now() - t0);
}

int main(void)
{
    tl_init("0735-mixed-replication");
    if (!tl_is_kafka())
        tl_skip("runs with KAFKA_REF=1 only (it mixes Strand and Kafka 4.4 nodes)");
    /* as 0714: a cluster of both at 4.0-IV3, group and transaction
     * versions at 0 */
    setenv("KAFKA_REF_FORMAT_ARGS",
           "--release-version=4.0-IV3 --feature=group.version=0 --feature=transaction.version=0",
           1);
    c = tl_cluster_new("0735-mixed", TL_QUORUM_SHARED);
    tl_cluster_set(c, "min.insync.replicas=2");
    tl_cluster_set(c, "broker.session.timeout.ms=6000");
    tl_cluster_add_n(c, NC, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_add_n(c, 2, TL_ROLE_BROKER, NULL);
    for (int id = 1; id <= NC + 2; id++)
        tl_cluster_node(c, id)->kafka = id == NC + 2;
    tl_kraft_start_topic(c, TOPIC, NPART, 2);
    double until = tl_now() + 60;
    while (!tl_kraft_isr_whole(c, TOPIC, NPART, 2)) {
        TL_ASSERT(tl_now() < until, "the ISRs of %s are not whole", TOPIC);
        usleep(100000);
    }
    int l0 = tl_kraft_leader_of(c, TOPIC, 0), l1 = tl_kraft_leader_of(c, TOPIC, 1);
    TL_ASSERT(l0 != l1 && l0 > NC && l1 > NC, "%s led by %d and %d, want one each", TOPIC, l0,
              l1);
    tl_load *l = tl_load_new(tl_cluster_bootstrap(c), TOPIC, NPART, RATE);
    settle(l, "start");
    tl_log("%s-0 led by %d, %s-1 by %d: each broker in the other's ISR", TOPIC, l0, TOPIC, l1);
    bounce(l, NC + 1, "Strand");
    bounce(l, NC + 2, "Kafka");
    tl_load_pump(l, 1, 1000);
    tl_load_drain(l, 120);
    tl_load_free(l);
    tl_logfiles_wait_same(c, TOPIC, NPART, 60);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
