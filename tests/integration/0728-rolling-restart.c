/* 0728-rolling-restart: every broker of a cluster stopped (SIGTERM: a
 * controlled shutdown) and started again in turn, under load, and the
 * producer sees nothing of it but the wait. Three combined nodes, a topic
 * of replication factor 3, min.insync.replicas=2, an idempotent acks=all
 * librdkafka producer and a consumer alongside (testlib/load.h: every
 * acknowledgement without error and at its place, every message consumed
 * once and in order). For each node in turn, once the ISRs are whole and
 * every partition takes writes:
 *   - SIGTERM: it must exit 0, its leaderships moved away first (the
 *     controlled shutdown), so no partition waits for a broker that is
 *     gone: the longest time without an acknowledgement around the stop
 *     stays under the session (broker.session.timeout.ms, 9 s: a crash
 *     would have the producer wait that long);
 *   - started again, it catches up and rejoins the ISRs.
 * The active controller's node goes too, in its turn. The longest pause
 * of each stop and the counts are logged. With KAFKA_REF=1 the same runs
 * against three Apache Kafka 4.4 combined nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/load.h"
#include "testlib/testlib.h"

#define N 3
#define TOPIC "r0728"
#define NPART 6
#define RATE 2000 /* messages per second, over every partition */
#define SESSION_S 9.0

static tl_cluster *c;

/* Loads until the ISRs are whole and every partition has taken writes. */
static void settle(tl_load *l, const char *what)
{
    double until = tl_now() + 120;
    tl_load_mark(l);
    while (!tl_kraft_isr_whole(c, TOPIC, NPART, N) || !tl_load_moved(l, 100)) {
        TL_ASSERT(tl_now() < until, "%s: the ISRs are not whole, or no progress", what);
        tl_load_pump(l, 1, 200);
    }
}

static int leads(int id)
{
    int n = 0;
    for (int32_t p = 0; p < NPART; p++)
        n += tl_kraft_leader_of(c, TOPIC, p) == id;
    return n;
}

static void restart_one(tl_load *l, int id)
{
    char what[32];
    snprintf(what, sizeof(what), "before node %d", id);
    settle(l, what);
    int nled = leads(id), ctl = tl_kraft_active_controller(c);
    tl_load_max_gap(l);
    double t0 = tl_now();
    tl_load_bg_start(l, 1);
    int status = tl_node_stop(tl_cluster_node(c, id));
    double stop_s = tl_now() - t0;
    tl_load_bg_stop(l);
    TL_ASSERT(status == 0, "node %d exited %d on SIGTERM", id, status);
    tl_load_pump(l, 1, 1000);
    tl_load_bg_start(l, 1);
    tl_node_start(tl_cluster_node(c, id));
    tl_load_bg_stop(l);
    snprintf(what, sizeof(what), "after node %d", id);
    settle(l, what);
    double gap = tl_load_max_gap(l);
    tl_log("node %d (leader of %d of %d partitions%s) stopped in %.2f s, started again: the "
           "longest wait for an acknowledgement %.2f s", id, nled, NPART,
           ctl == id ? ", the active controller" : "", stop_s, gap);
    TL_ASSERT(gap < SESSION_S, "node %d: %.1f s without an acknowledgement", id, gap);
}

int main(void)
{
    tl_init("0728-rolling-restart");
    c = tl_cluster_new("0728-rolling", TL_QUORUM_SHARED);
    tl_cluster_set(c, "min.insync.replicas=2");
    tl_cluster_add_n(c, N, TL_ROLE_COMBINED, NULL);
    tl_kraft_start_topic(c, TOPIC, NPART, 3);

    tl_load *l = tl_load_new(tl_cluster_bootstrap(c), TOPIC, NPART, RATE);
    for (int id = 1; id <= N; id++)
        restart_one(l, id);
    tl_load_pump(l, 1, 1000);
    tl_load_drain(l, 120);
    tl_load_free(l);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
