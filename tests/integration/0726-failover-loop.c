/* 0726-failover-loop: the leader of a partition killed with kill -9 under
 * load, again and again, loses nothing acknowledged. Three combined nodes
 * (one static quorum, each node also a broker), a topic of replication
 * factor 3 and min.insync.replicas=2; an idempotent acks=all librdkafka
 * producer writes to every partition all along, and a consumer reads
 * alongside it. Each round:
 *   - the leader of partition 0 (whichever node it is, the quorum's
 *     leader too at times) is killed with kill -9 while messages are on
 *     the wire; the producer goes on: the first acknowledgement of
 *     partition 0 by another broker ends the failover, which is logged;
 *   - once the controller has fenced it, it is started again, and the
 *     next round waits until every partition's ISR has the three again.
 * broker.session.timeout.ms=4000, and heartbeats every 500 ms: a killed
 * broker whose heartbeat link to the active controller closed is fenced
 * one and a half heartbeat intervals later, one that was the active controller
 * itself when the new one's fresh sessions expire.
 * Every acknowledgement must come at the offset of its message's place in
 * its partition, in order (nothing duplicated, nothing skipped); the
 * consumer must read every message once, in order, up to the last one
 * acknowledged (nothing lost). The counts are logged: acknowledged,
 * consumed, lost, duplicated.
 * T0726_ROUNDS sets the rounds (3 by default; the long run is 20).
 * With KAFKA_REF=1 the same runs against three Apache Kafka 4.4 combined
 * nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/load.h"
#include "testlib/testlib.h"

#define N 3
#define TOPIC "f0726"
#define NPART 3
#define RATE 3000 /* messages per second, over every partition */

static tl_cluster *c;

/* One round: once the ISRs are whole again and every partition takes
 * writes, kill -9 of partition 0's leader, its fencing, its start. */
static void round_once(tl_load *l, int r)
{
    double until = tl_now() + 120;
    tl_load_mark(l);
    while (!tl_kraft_isr_whole(c, TOPIC, NPART, N) || !tl_load_moved(l, 200)) {
        TL_ASSERT(tl_now() < until, "round %d: the ISRs are not whole, or no progress", r);
        tl_load_pump(l, 1, 200);
    }
    tl_load_pump(l, 1, 300); /* messages on the wire at the kill */
    int victim = tl_kraft_leader_of(c, TOPIC, 0), ctl = tl_kraft_active_controller(c);
    TL_ASSERT(victim > 0, "%s-0 has no leader", TOPIC);
    int64_t at_kill = tl_load_acked(l, -1);
    tl_load_watch(l, 0, victim);
    tl_node_kill9(tl_cluster_node(c, victim));
    double killed_at = tl_now();
    while (tl_load_failover(l) < 0 || !tl_kraft_is_fenced(c, victim)) {
        TL_ASSERT(tl_now() < until + 120, "round %d: node %d not fenced, or no failover (%.1f)",
                  r, victim, tl_load_failover(l));
        tl_load_pump(l, 1, 100);
    }
    double fenced_s = tl_now() - killed_at;
    tl_node_start(tl_cluster_node(c, victim));
    tl_log("round %d: node %d (led %s-0%s) killed with %lld acknowledged; the next "
           "acknowledgement of %s-0 %.2f s later; fenced by %.1f s; started again", r, victim,
           TOPIC, ctl == victim ? ", and the quorum" : "", (long long)at_kill, TOPIC,
           tl_load_failover(l), fenced_s);
}

int main(void)
{
    tl_init("0726-failover-loop");
    int rounds = getenv("T0726_ROUNDS") ? atoi(getenv("T0726_ROUNDS")) : 3;
    c = tl_cluster_new("0726-failover", TL_QUORUM_SHARED);
    tl_cluster_set(c, "broker.session.timeout.ms=4000");
    tl_cluster_set(c, "broker.heartbeat.interval.ms=500"); /* fenced 0.75 s after its link closed */
    tl_cluster_set(c, "min.insync.replicas=2");
    tl_cluster_add_n(c, N, TL_ROLE_COMBINED, NULL);
    tl_kraft_start_topic(c, TOPIC, NPART, 3);

    tl_load *l = tl_load_new(tl_cluster_bootstrap(c), TOPIC, NPART, RATE);
    for (int r = 1; r <= rounds; r++)
        round_once(l, r);
    tl_load_pump(l, 1, 2000);
    tl_load_drain(l, 120);
    tl_load_free(l);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
