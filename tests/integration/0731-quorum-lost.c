/* 0731-quorum-lost: the metadata quorum loses its majority while a broker
 * dies, the compound failure: nothing moves until the quorum is back, then
 * everything recovers with nothing acknowledged lost. Three controllers
 * and three brokers; a topic of replication factor 3 on the brokers,
 * min.insync.replicas=2, an idempotent acks=all librdkafka producer and a
 * consumer alongside (testlib/load.h):
 *   - kill -9 of the active controller and of another one (no majority),
 *     then of the broker leading partition 0;
 *   - for some seconds nothing is acknowledged on partition 0: its leader
 *     is gone and no controller can elect another (the other partitions'
 *     ISRs hold the dead broker too, and no controller can take it out);
 *   - the two controllers start again: a new active controller fences the
 *     dead broker at the end of its session, partition 0 gets a leader
 *     from its ISR and the producer goes on, the time from the quorum's
 *     return logged;
 *   - the broker starts again and rejoins the ISRs; every acknowledgement
 *     at its place, every message consumed once and in order, the segment
 *     files the same bytes on the three brokers.
 * With KAFKA_REF=1 the same runs against Apache Kafka 4.4 nodes. */
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
#define NB 3
#define TOPIC "q0731"
#define NPART 3
#define RATE 2000
#define OUTAGE_MS 5000

static tl_cluster *c;

static void settle(tl_load *l)
{
    double until = tl_now() + 120;
    tl_load_mark(l);
    while (!tl_kraft_isr_whole(c, TOPIC, NPART, NB) || !tl_load_moved(l, 100)) {
        TL_ASSERT(tl_now() < until, "the ISRs are not whole, or no progress");
        tl_load_pump(l, 1, 200);
    }
}

int main(void)
{
    tl_init("0731-quorum-lost");
    c = tl_cluster_new("0731-quorum", TL_QUORUM_SHARED);
    tl_cluster_set(c, "min.insync.replicas=2");
    tl_cluster_add_n(c, NC, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_add_n(c, NB, TL_ROLE_BROKER, NULL);
    tl_kraft_start_topic(c, TOPIC, NPART, 3);

    char bs[256] = "";
    for (int id = NC + 1; id <= NC + NB; id++)
        snprintf(bs + strlen(bs), sizeof(bs) - strlen(bs), "%s%s", *bs ? "," : "",
                 tl_cluster_node(c, id)->bootstrap);
    tl_load *l = tl_load_new(bs, TOPIC, NPART, RATE);
    settle(l);
    int ctl = 0;
    double until = tl_now() + 30;
    while (!(ctl = tl_kraft_active_controller(c))) {
        TL_ASSERT(tl_now() < until, "no active controller");
        tl_load_pump(l, 1, 100);
    }
    int other = ctl % NC + 1, victim = tl_kraft_leader_of(c, TOPIC, 0);
    TL_ASSERT(victim > NC, "%s-0 led by %d", TOPIC, victim);
    tl_node_kill9(tl_cluster_node(c, ctl));
    tl_node_kill9(tl_cluster_node(c, other));
    tl_node_kill9(tl_cluster_node(c, victim));
    int64_t at_kill = tl_load_acked(l, 0);
    tl_log("controllers %d and %d killed (no majority), then broker %d, leader of %s-0, with %lld "
           "acknowledged there", ctl, other, victim, TOPIC, (long long)at_kill);
    tl_load_pump(l, 1, 500); /* what was answered before the kill comes in */
    int64_t stalled = tl_load_acked(l, 0);
    tl_load_pump(l, 1, OUTAGE_MS);
    TL_ASSERT(tl_load_acked(l, 0) == stalled, "%s-0 took %lld writes without a quorum", TOPIC,
              (long long)(tl_load_acked(l, 0) - stalled));
    tl_log("%.1f s without a quorum: nothing acknowledged on %s-0", OUTAGE_MS / 1000.0, TOPIC);

    tl_load_watch(l, 0, victim);
    tl_load_bg_start(l, 1);
    tl_node_start(tl_cluster_node(c, ctl));
    tl_node_start(tl_cluster_node(c, other));
    tl_load_bg_stop(l);
    until = tl_now() + 120;
    while (tl_load_failover(l) < 0) {
        TL_ASSERT(tl_now() < until, "%s-0: no acknowledgement after the quorum came back", TOPIC);
        tl_load_pump(l, 1, 100);
    }
    tl_log("the quorum back: %s-0 acknowledged by another broker %.1f s after the controllers' "
           "start", TOPIC, tl_load_failover(l));
    until = tl_now() + 60;
    while (!tl_kraft_is_fenced(c, victim)) {
        TL_ASSERT(tl_now() < until, "broker %d not fenced", victim);
        tl_load_pump(l, 1, 100);
    }
    tl_load_bg_start(l, 1);
    tl_node_start(tl_cluster_node(c, victim));
    tl_load_bg_stop(l);
    settle(l);
    tl_load_drain(l, 120);
    tl_load_free(l);
    tl_logfiles_wait_same(c, TOPIC, NPART, 60);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
