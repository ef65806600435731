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
 * two heartbeat intervals later, one that was the active controller
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
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"

#define N 3
#define TOPIC "f0726"
#define NPART 3
#define RATE 3000      /* messages per second, over every partition */
#define INFLIGHT 4000  /* produced and not yet acknowledged, at most */

static tl_cluster *c;
static int64_t sent[NPART], acked[NPART];
static int64_t next_seq[NPART], next_off[NPART], consumed, lost, dups;
static int victim = -1;        /* the node killed this round (-1: none) */
static double killed_at, failover_s; /* failover_s < 0: not yet over */

static void value_of(int32_t p, int64_t i, char *out, size_t cap)
{
    snprintf(out, cap, "p%d-m%lld-%08x", (int)p, (long long)i,
             tl_mix32((uint32_t)(p * 1000003 + i)));
}

/* Idempotence with acks=all: message i of p is acknowledged at offset i,
 * after i - 1; anything else is a duplicate or a hole. */
static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    int32_t p = m->partition;
    int64_t i = (int64_t)(intptr_t)m->_private;
    TL_ASSERT(m->err == RD_KAFKA_RESP_ERR_NO_ERROR, "%d/%lld: delivery: %s", (int)p,
              (long long)i, rd_kafka_err2str(m->err));
    TL_ASSERT(i == acked[p] && m->offset == i, "%d: message %lld acknowledged at offset %lld, "
              "%lld acknowledged before it", (int)p, (long long)i, (long long)m->offset,
              (long long)acked[p]);
    acked[p]++;
    if (p == 0 && victim > 0 && failover_s < 0 && rd_kafka_message_broker_id(m) != victim)
        failover_s = tl_now() - killed_at;
}

/* The seq of a consumed value, checked whole; -1 when it is not one of ours. */
static int64_t seq_of(const rd_kafka_message_t *m)
{
    char want[64];
    long long i;
    int pp;
    if (m->len >= sizeof(want) || sscanf((const char *)m->payload, "p%d-m%lld-", &pp, &i) != 2)
        return -1;
    value_of(m->partition, i, want, sizeof(want));
    if (pp != m->partition || m->len != strlen(want) || memcmp(m->payload, want, m->len))
        return -1;
    return i;
}

static void consume_one(const rd_kafka_message_t *m)
{
    int32_t p = m->partition;
    if (m->err) {
        TL_ASSERT(m->err != RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE &&
                  m->err != RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET,
                  "consume %d: %s", (int)p, rd_kafka_message_errstr(m));
        tl_log("consume: %s (passed over)", rd_kafka_message_errstr(m));
        return;
    }
    TL_ASSERT(m->offset == next_off[p], "%d: consumed offset %lld, want %lld", (int)p,
              (long long)m->offset, (long long)next_off[p]);
    next_off[p]++;
    int64_t i = seq_of(m);
    TL_ASSERT(i >= 0, "%d/%lld: not a value of ours: '%.*s'", (int)p, (long long)m->offset,
              (int)m->len, (const char *)m->payload);
    if (i < next_seq[p])
        dups++;
    else {
        lost += i - next_seq[p];
        next_seq[p] = i + 1;
    }
    consumed++;
}

static int64_t total(const int64_t *v)
{
    int64_t n = 0;
    for (int32_t p = 0; p < NPART; p++)
        n += v[p];
    return n;
}

static void produce_one(rd_kafka_t *rk, int32_t p)
{
    char v[64];
    value_of(p, sent[p], v, sizeof(v));
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(TOPIC), RD_KAFKA_V_PARTITION(p), RD_KAFKA_V_VALUE(v, strlen(v)),
        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_OPAQUE((void *)(intptr_t)sent[p]),
        RD_KAFKA_V_END);
    TL_ASSERT(err == RD_KAFKA_RESP_ERR_NO_ERROR, "produce: %s", rd_kafka_err2str(err));
    sent[p]++;
}

/* Produces at RATE (unless producing is 0) and consumes for ms. */
static void pump(rd_kafka_t *rk, rd_kafka_t *cons, int producing, int ms)
{
    static double t0;
    static int64_t budget_base;
    double until = tl_now() + ms / 1000.0;
    if (!t0) {
        t0 = tl_now();
        budget_base = 0;
    }
    do {
        int64_t budget = budget_base + (int64_t)((tl_now() - t0) * RATE);
        while (producing && total(sent) < budget && total(sent) - total(acked) < INFLIGHT)
            produce_one(rk, (int32_t)(total(sent) % NPART));
        if (!producing) { /* no catching up on the pause later */
            t0 = tl_now();
            budget_base = total(sent);
        }
        rd_kafka_poll(rk, 0);
        rd_kafka_message_t *m = rd_kafka_consumer_poll(cons, 10);
        if (m) {
            consume_one(m);
            rd_kafka_message_destroy(m);
        }
    } while (tl_now() < until);
}

/* A running node other than skip, to ask. */
static tl_node *via_other(int skip)
{
    for (int id = 1; id <= N; id++)
        if (id != skip && tl_node_running(tl_cluster_node(c, id)))
            return tl_cluster_node(c, id);
    tl_fail("no running node");
}

/* Metadata of TOPIC at a node other than skip; 0 when it has every partition. */
static int topic_view(int skip, tl_kraft_topic *t)
{
    memset(t, 0, sizeof(*t));
    return tl_kraft_metadata(via_other(skip), TOPIC, t) == 0 && t->npart == NPART ? 0 : -1;
}

/* Whether every partition has a leader and an ISR of n. */
static int all_isr(int n)
{
    tl_kraft_topic t;
    if (topic_view(-1, &t))
        return 0;
    for (int32_t p = 0; p < NPART; p++)
        if (t.leader[p] < 0 || t.nisr[p] != n)
            return 0;
    return 1;
}

static int fenced_as_seen(int id)
{
    tl_kraft_nodes n;
    return tl_kraft_describe_cluster(via_other(id), 0, &n) == 0 && n.state[id] == 1;
}

/* Whether every partition has had n acknowledgements since from. */
static int each_moved(const int64_t *from, int64_t n)
{
    for (int32_t p = 0; p < NPART; p++)
        if (acked[p] < from[p] + n)
            return 0;
    return 1;
}

/* One round: once the ISRs are whole again and every partition takes
 * writes, kill -9 of partition 0's leader, its fencing, its start. */
static void round_once(rd_kafka_t *rk, rd_kafka_t *cons, int r)
{
    tl_kraft_topic t;
    int64_t from[NPART];
    double until = tl_now() + 120;
    memcpy(from, acked, sizeof(from));
    while (!all_isr(N) || !each_moved(from, 200)) {
        TL_ASSERT(tl_now() < until, "round %d: the ISRs are not whole, or no progress", r);
        pump(rk, cons, 1, 200);
    }
    TL_ASSERT(topic_view(-1, &t) == 0, "no Metadata");
    pump(rk, cons, 1, 300); /* messages on the wire at the kill */
    rd_kafka_poll(rk, 0);
    victim = t.leader[0];
    int ctl = tl_kraft_active_controller(c);
    failover_s = -1;
    killed_at = tl_now();
    tl_node_kill9(tl_cluster_node(c, victim));
    int64_t at_kill = total(acked);
    while (failover_s < 0 || !fenced_as_seen(victim)) {
        TL_ASSERT(tl_now() < until + 120, "round %d: node %d not fenced, or no failover (%.1f)",
                  r, victim, failover_s);
        pump(rk, cons, 1, 100);
    }
    double fenced_s = tl_now() - killed_at;
    tl_node_start(tl_cluster_node(c, victim));
    tl_log("round %d: node %d (led %s-0%s) killed with %lld acknowledged; the next "
           "acknowledgement of %s-0 %.2f s later; fenced by %.1f s; started again", r, victim,
           TOPIC, ctl == victim ? ", and the quorum" : "", (long long)at_kill, TOPIC,
           failover_s, fenced_s);
    victim = -1;
}

static rd_kafka_t *consumer_new(void)
{
    rd_kafka_conf_t *conf = tl_conf(tl_cluster_bootstrap(c));
    tl_conf_set(conf, "group.id", TOPIC);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "auto.offset.reset", "error"); /* a truncation below what we read shows */
    rd_kafka_t *cons = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(NPART);
    for (int32_t p = 0; p < NPART; p++)
        rd_kafka_topic_partition_list_add(parts, TOPIC, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    TL_ASSERT_EQ(rd_kafka_assign(cons, parts), 0);
    rd_kafka_topic_partition_list_destroy(parts);
    return cons;
}

static rd_kafka_t *producer_new(void)
{
    rd_kafka_conf_t *conf = tl_conf(tl_cluster_bootstrap(c));
    tl_conf_set(conf, "acks", "all");
    tl_conf_set(conf, "enable.idempotence", "true");
    tl_conf_set(conf, "linger.ms", "5");
    tl_conf_set(conf, "message.timeout.ms", "300000");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

/* Every acknowledged message consumed; the counts logged. */
static void drain(rd_kafka_t *rk, rd_kafka_t *cons)
{
    double until = tl_now() + 120;
    while (rd_kafka_outq_len(rk) > 0) {
        TL_ASSERT(tl_now() < until, "%d messages not acknowledged", rd_kafka_outq_len(rk));
        pump(rk, cons, 0, 100);
    }
    TL_ASSERT(total(acked) == total(sent), "%lld sent, %lld acknowledged",
              (long long)total(sent), (long long)total(acked));
    while (consumed < total(acked) && tl_now() < until)
        pump(rk, cons, 0, 100);
    for (int32_t p = 0; p < NPART; p++)
        if (next_seq[p] < acked[p])
            lost += acked[p] - next_seq[p];
    tl_log("acknowledged %lld, consumed %lld, lost %lld, duplicated %lld",
           (long long)total(acked), (long long)consumed, (long long)lost, (long long)dups);
    TL_ASSERT(lost == 0 && dups == 0, "lost %lld, duplicated %lld", (long long)lost,
              (long long)dups);
    TL_ASSERT_EQ(consumed, total(acked));
}

int main(void)
{
    tl_kraft_view v;
    tl_init("0726-failover-loop");
    int rounds = getenv("T0726_ROUNDS") ? atoi(getenv("T0726_ROUNDS")) : 3;
    c = tl_cluster_new("0726-failover", TL_QUORUM_SHARED);
    tl_cluster_set(c, "broker.session.timeout.ms=4000");
    tl_cluster_set(c, "broker.heartbeat.interval.ms=500"); /* fenced 1 s after its link closed */
    tl_cluster_set(c, "min.insync.replicas=2");
    tl_cluster_add_n(c, N, TL_ROLE_COMBINED, NULL);
    int leader = tl_kraft_start(c, &v);
    for (int id = 1; id <= N; id++)
        tl_kraft_wait_fenced(tl_cluster_node(c, leader), id, 0, 60);
    int16_t err = tl_kraft_create_topic(tl_cluster_node(c, leader)->bootstrap, TOPIC, NPART, 3);
    TL_ASSERT(err == 0, "CreateTopics: error %d", err);

    rd_kafka_t *rk = producer_new(), *cons = consumer_new();
    for (int r = 1; r <= rounds; r++)
        round_once(rk, cons, r);
    pump(rk, cons, 1, 2000);
    drain(rk, cons);
    rd_kafka_destroy(cons);
    rd_kafka_destroy(rk);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
