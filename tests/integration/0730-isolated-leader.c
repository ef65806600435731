/* 0730-isolated-leader: a partition's leader cut off from the other nodes
 * and from the controller, under load, can acknowledge nothing; a new
 * leader takes over, and after the heal the old one truncates what only
 * it had. Three combined nodes; every link between them and every
 * client's link to a node pass a proxy (testlib/proxy.h); a topic of
 * replication factor 3, min.insync.replicas=2, an idempotent acks=all
 * librdkafka producer and a consumer alongside (testlib/load.h):
 *   - the leader V of one partition (not the active controller) is
 *     isolated: the proxy in front of it (clients, followers' fetches)
 *     and the links from and to its controller cut. Only V's own new
 *     connections to the quorum's leader pass: a node follows the
 *     leader at the address the leader advertises (BeginQuorumEpoch,
 *     Fetch's NodeEndpoints), as Kafka's does, and that is no proxy of
 *     V's, so the partition is one way (nothing reaches V);
 *   - a Produce acks=-1 sent to V directly (past its proxy) is appended
 *     there and never acknowledged: no follower can fetch it, and it is
 *     answered REQUEST_TIMED_OUT, or NOT_LEADER_OR_FOLLOWER once V has
 *     learned from the quorum that it no longer leads;
 *   - V's heartbeat link closed, the controller fences it, another
 *     replica leads, and the producer goes on there;
 *   - healed, V follows again: it truncates the record only it had
 *     (diverging epoch) and rejoins the ISR; the segment files of every
 *     partition end up the same bytes on the three nodes;
 *   - every acknowledgement at its place, every message consumed once and
 *     in order, the isolated record never among them.
 * With KAFKA_REF=1 the same runs against three Apache Kafka 4.4 combined
 * nodes. */
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

#define N 3
#define TOPIC "i0730"
#define NPART 3
#define RATE 2000

static tl_cluster *c;
static tl_proxy *front[N + 1], *link_px[N + 1][N + 1];

static void set_isolated(int v, int cut)
{
    void (*fn)(tl_proxy *) = cut ? tl_proxy_cut : tl_proxy_heal;
    fn(front[v]);
    for (int x = 1; x <= N; x++)
        if (x != v) {
            fn(link_px[v][x]);
            fn(link_px[x][v]);
        }
}

/* A partition led by a node that is not the active controller. */
static int32_t pick_partition(int ctl, int *leader)
{
    for (int32_t p = 0; p < NPART; p++) {
        int32_t l = tl_kraft_leader_of(c, TOPIC, p);
        if (l > 0 && l != ctl) {
            *leader = l;
            return p;
        }
    }
    return -1;
}

/* Produce acks=-1 of one record to p at v's own port (past its proxy). */
static int16_t produce_direct(tl_node *v, int32_t p, int32_t timeout_ms)
{
    char addr[64];
    snprintf(addr, sizeof(addr), "%s:%d", v->host, v->port);
    return tl_raw_produce(addr, TOPIC, p, -1, timeout_ms, "isolated");
}

/* The leader of p as the nodes but v see it, once they agree on one that
 * is not v (60 s at most, the load going on meanwhile). */
static int32_t new_leader(tl_load *l, int v, int32_t p)
{
    double until = tl_now() + 60;
    for (;;) {
        int32_t seen = -1;
        for (int x = 1; x <= N; x++) {
            tl_kraft_topic t;
            if (x == v || tl_kraft_metadata(tl_cluster_node(c, x), TOPIC, &t) || t.npart <= p)
                continue;
            seen = seen == -1 || seen == t.leader[p] ? t.leader[p] : -2;
        }
        if (seen > 0 && seen != v)
            return seen;
        TL_ASSERT(tl_now() < until, "%s-%d: no new leader (%d)", TOPIC, (int)p, (int)seen);
        tl_load_pump(l, 1, 100);
    }
}

int main(void)
{
    tl_init("0730-isolated-leader");
    c = tl_cluster_new("0730-isolated", TL_QUORUM_SHARED);
    tl_cluster_set(c, "broker.session.timeout.ms=4000");
    tl_cluster_set(c, "broker.heartbeat.interval.ms=500");
    tl_cluster_set(c, "min.insync.replicas=2");
    tl_cluster_add_n(c, N, TL_ROLE_COMBINED, NULL);
    for (int a = 1; a <= N; a++) {
        front[a] = tl_node_front(tl_cluster_node(c, a));
        for (int b = 1; b <= N; b++)
            if (a != b)
                link_px[a][b] = tl_cluster_link(c, tl_cluster_node(c, a), tl_cluster_node(c, b));
    }
    tl_kraft_start_topic(c, TOPIC, NPART, 3);

    tl_load *l = tl_load_new(tl_cluster_bootstrap(c), TOPIC, NPART, RATE);
    double until = tl_now() + 60;
    int ctl = 0, v = 0;
    int32_t p = -1;
    tl_load_mark(l);
    while (!tl_kraft_isr_whole(c, TOPIC, NPART, N) || !tl_load_moved(l, 200) ||
           !(ctl = tl_kraft_active_controller(c)) || (p = pick_partition(ctl, &v)) < 0) {
        TL_ASSERT(tl_now() < until, "no partition led apart from the controller (%d)", ctl);
        tl_load_pump(l, 1, 200);
    }
    tl_log("%s-%d: leader %d, isolated now (the active controller is %d)", TOPIC, (int)p, v,
           ctl);
    tl_load_watch(l, p, v);
    set_isolated(v, 1);
    tl_load_bg_start(l, 1);
    double t0 = tl_now();
    int16_t err = produce_direct(tl_cluster_node(c, v), p, 3000);
    tl_load_bg_stop(l);
    TL_ASSERT(err == KERR_REQUEST_TIMED_OUT || err == KERR_NOT_LEADER_OR_FOLLOWER,
              "the isolated leader answered %d, want %d or %d", err, KERR_REQUEST_TIMED_OUT,
              KERR_NOT_LEADER_OR_FOLLOWER);
    tl_log("Produce acks=-1 at the isolated leader: %s after %.1f s",
           err == KERR_REQUEST_TIMED_OUT ? "REQUEST_TIMED_OUT" : "NOT_LEADER_OR_FOLLOWER",
           tl_now() - t0);
    int32_t nl = new_leader(l, v, p);
    while (tl_load_failover(l) < 0) {
        TL_ASSERT(tl_now() < t0 + 60, "no acknowledgement of %s-%d from another broker", TOPIC,
                  (int)p);
        tl_load_pump(l, 1, 100);
    }
    tl_log("%s-%d: broker %d leads; the first acknowledgement from it %.2f s after the cut",
           TOPIC, (int)p, (int)nl, tl_load_failover(l));
    tl_load_pump(l, 1, 1000);
    set_isolated(v, 0);
    until = tl_now() + 60;
    while (!tl_kraft_isr_whole(c, TOPIC, NPART, N)) {
        TL_ASSERT(tl_now() < until, "%d is not back in the ISRs after the heal", v);
        tl_load_pump(l, 1, 200);
    }
    tl_log("healed: broker %d back in every ISR %.1f s later", v, 60 - (until - tl_now()));
    tl_load_pump(l, 1, 1000);
    tl_load_drain(l, 120);
    tl_load_free(l);
    tl_logfiles_wait_same(c, TOPIC, NPART, 60);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
