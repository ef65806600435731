/* 0721-replication: ISR replication on three combined nodes (one static
 * quorum, each node also a broker):
 *   - a topic with replication factor 3 and several partitions; an
 *     idempotent acks=all librdkafka producer writes to every partition,
 *     and each message is delivered at the offset of its place in its
 *     partition (nothing lost, nothing duplicated, order kept);
 *   - under that load (every partition has acknowledged messages, more
 *     are on the wire) a node that is not the quorum leader is killed
 *     with kill -9 (the leadership of the partitions it led moves to the
 *     others once it is fenced) and started again; the producer goes on;
 *     what the killed node had appended as leader and nobody else had
 *     (never acknowledged) is truncated away when it follows again
 *     (diverging epoch);
 *   - a consumer through another node reads every message once and in
 *     order, partition by partition;
 *   - the restarted node catches up: every segment .log file of the
 *     topic is byte-identical on the three nodes;
 *   - after a clean stop, the replication-offset-checkpoint of every node
 *     holds the same high watermark for each partition: every message.
 * With KAFKA_REF=1 the same runs against three Apache Kafka 4.4 combined
 * nodes. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/logfiles.h"
#include "testlib/testlib.h"

#define N 3
#define TOPIC "r0721"
#define NPART 3
#define NROUND 3   /* produce, kill, produce, restart, produce */
#define PER_ROUND 400 /* messages per partition and round */
#define NMSG (NROUND * PER_ROUND)

static void value_of(int32_t p, int64_t i, char *out, size_t cap)
{
    snprintf(out, cap, "p%d-m%lld-%08x", (int)p, (long long)i,
             tl_mix32((uint32_t)(p * 100000 + i)));
}

static int delivered;
static int delivered_in[NPART];

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    TL_ASSERT(m->err == RD_KAFKA_RESP_ERR_NO_ERROR, "delivery: %s", rd_kafka_err2str(m->err));
    int64_t want = (int64_t)(intptr_t)m->_private;
    TL_ASSERT(m->offset == want, "%d: message %lld delivered at offset %lld", (int)m->partition,
              (long long)want, (long long)m->offset);
    delivered++;
    delivered_in[m->partition]++;
}

/* Whether every partition has at least n messages delivered. */
static int each_has(int n)
{
    for (int32_t p = 0; p < NPART; p++)
        if (delivered_in[p] < n)
            return 0;
    return 1;
}

static void produce_round(rd_kafka_t *rk, int round)
{
    for (int64_t i = (int64_t)round * PER_ROUND; i < (int64_t)(round + 1) * PER_ROUND; i++)
        for (int32_t p = 0; p < NPART; p++) {
            char v[64];
            value_of(p, i, v, sizeof(v));
            rd_kafka_resp_err_t err;
            while ((err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(TOPIC), RD_KAFKA_V_PARTITION(p),
                                            RD_KAFKA_V_VALUE(v, strlen(v)),
                                            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                            RD_KAFKA_V_OPAQUE((void *)(intptr_t)i),
                                            RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                rd_kafka_poll(rk, 10);
            TL_ASSERT(err == RD_KAFKA_RESP_ERR_NO_ERROR, "produce: %s", rd_kafka_err2str(err));
        }
    rd_kafka_poll(rk, 0);
}

/* Serves the producer's callbacks for ms. */
static void poll_for(rd_kafka_t *rk, int ms)
{
    double until = tl_now() + ms / 1000.0;
    while (tl_now() < until)
        rd_kafka_poll(rk, 20);
}

static void check_msg(const rd_kafka_message_t *m, void *arg)
{
    char want[64];
    int64_t *next = arg;
    TL_ASSERT(m->offset == next[m->partition], "%d: offset %lld, want %lld", (int)m->partition,
              (long long)m->offset, (long long)next[m->partition]);
    value_of(m->partition, m->offset, want, sizeof(want));
    TL_ASSERT(m->len == strlen(want) && !memcmp(m->payload, want, m->len),
              "%d/%lld: '%.*s', want '%s'", (int)m->partition, (long long)m->offset, (int)m->len,
              (const char *)m->payload, want);
    next[m->partition]++;
}

/* The high watermark of TOPIC-p in node's replication-offset-checkpoint
 * ("0\n<count>\n<topic> <partition> <offset>\n..."), -1 if absent. */
static int64_t ckpt_hw(tl_node *node, int32_t p)
{
    char path[PATH_MAX + 64], line[512], t[256];
    int part;
    long long off;
    int64_t hw = -1;
    snprintf(path, sizeof(path), "%s/data/replication-offset-checkpoint", node->dir);
    FILE *f = fopen(path, "r");
    TL_ASSERT(f != NULL, "no %s", path);
    TL_ASSERT(fgets(line, sizeof(line), f) && !strcmp(line, "0\n"), "%s: version", path);
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "%255s %d %lld", t, &part, &off) == 3 && !strcmp(t, TOPIC) && part == p)
            hw = off;
    fclose(f);
    return hw;
}

/* A node that is not the quorum leader. */
static int victim_of(int leader)
{
    return leader % N + 1;
}

int main(void)
{
    tl_kraft_view v;
    tl_init("0721-replication");
    tl_cluster *c = tl_cluster_new("0721-repl", TL_QUORUM_SHARED);
    tl_cluster_set(c, "broker.session.timeout.ms=4000");
    tl_cluster_add_n(c, N, TL_ROLE_COMBINED, NULL);
    int leader = tl_kraft_start(c, &v);
    for (int id = 1; id <= N; id++)
        tl_kraft_wait_fenced(tl_cluster_node(c, leader), id, 0, 60);
    int victim = victim_of(leader), other = victim % N + 1;
    if (other == victim)
        other = leader;
    int16_t err = tl_kraft_create_topic(tl_cluster_node(c, leader)->bootstrap, TOPIC, NPART, 3);
    TL_ASSERT(err == 0, "CreateTopics: error %d", err);

    rd_kafka_conf_t *conf = tl_conf(tl_cluster_node(c, other)->bootstrap);
    tl_conf_set(conf, "acks", "all");
    tl_conf_set(conf, "enable.idempotence", "true");
    tl_conf_set(conf, "linger.ms", "5");
    tl_conf_set(conf, "message.timeout.ms", "120000");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    produce_round(rk, 0);
    double until = tl_now() + 60;
    while (!each_has(PER_ROUND / 2) && tl_now() < until)
        rd_kafka_poll(rk, 5); /* the kill comes with the rest of the round on the wire */
    TL_ASSERT(each_has(PER_ROUND / 2), "round 0 not half delivered: %d", delivered);
    produce_round(rk, 1);
    poll_for(rk, 50);
    tl_node_kill9(tl_cluster_node(c, victim));
    tl_log("node %d killed with %d of %d messages delivered", victim, delivered, NPART * NMSG);
    poll_for(rk, 6000); /* past broker.session.timeout.ms: fenced, out of the ISRs */
    tl_node_start(tl_cluster_node(c, victim));
    tl_log("node %d started again with %d messages delivered", victim, delivered);
    produce_round(rk, 2);
    TL_ASSERT(rd_kafka_flush(rk, 120000) == RD_KAFKA_RESP_ERR_NO_ERROR, "flush");
    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(delivered, NPART * NMSG);
    tl_log("%d messages delivered (idempotent, acks=all), each at its place", delivered);

    int64_t next[NPART] = {0};
    rd_kafka_t *cons = tl_consume_from_start(tl_conf(tl_cluster_node(c, leader)->bootstrap),
                                             TOPIC, NPART, (int64_t)NPART * NMSG, 60, check_msg,
                                             next);
    rd_kafka_destroy(cons);
    for (int32_t p = 0; p < NPART; p++)
        TL_ASSERT(next[p] == NMSG, "%s-%d: %lld messages consumed, want %d", TOPIC, (int)p,
                  (long long)next[p], NMSG);
    tl_log("%d messages consumed once and in order", NPART * NMSG);

    tl_logfiles_wait_same(c, TOPIC, NPART, 60);
    tl_cluster_stop(c);
    for (int32_t p = 0; p < NPART; p++)
        for (int id = 1; id <= N; id++) {
            int64_t hw = ckpt_hw(tl_cluster_node(c, id), p);
            TL_ASSERT(hw == NMSG, "node %d: %s-%d checkpointed at %lld, want %d", id, TOPIC,
                      (int)p, (long long)hw, NMSG);
        }
    tl_log("replication-offset-checkpoint: %s at %d on every node", TOPIC, NMSG);
    tl_cluster_free(c);
    return tl_done();
}
