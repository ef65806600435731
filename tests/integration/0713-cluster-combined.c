/* 0713-cluster-combined: three combined nodes (process.roles=broker,
 * controller), each a voter of one static quorum and a broker that
 * registers with the active controller, itself or another:
 *   - a leader is elected (the time is logged), the three voters catch up,
 *     and Kafka 4.4's kafka-metadata-quorum describe --status (when java
 *     and Kafka's jars are to be had) prints that leader and epoch, three
 *     voters and no observers: a combined node's broker is its voter;
 *   - the three brokers are unfenced, as every node's DescribeCluster says;
 *   - CreateTopics (replication factor 3) through a node that is not the
 *     leader: every node's Metadata has each partition on all three
 *     nodes, one leader each;
 *   - a librdkafka producer (acks=1) bootstrapped from one node writes,
 *     a consumer bootstrapped from another reads the same bytes at the
 *     same offsets, partition by partition;
 *   - kill -9 of the quorum leader: the other two elect another at a
 *     higher epoch (the time is logged) and a topic can be created again
 *     through a survivor;
 *   - the killed node restarts, catches up (the leader sees its log end at
 *     the high watermark), is unfenced again and describes the topic made
 *     while it was down;
 *   - every node exits cleanly on SIGTERM.
 * With KAFKA_REF=1 the same runs against three Apache Kafka 4.4 combined
 * nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "util/kerr.h"

#define N 3
#define TOPIC "c0713"
#define NPART 3
#define NMSG 20 /* per partition */

/* The value of message i of partition p: the consumer rebuilds it. */
static void value_of(int32_t p, int64_t i, char *out, size_t cap)
{
    snprintf(out, cap, "p%d-m%lld-%08x", (int)p, (long long)i,
             tl_mix32((uint32_t)(p * 1000 + i)));
}

/* kafka-metadata-quorum describe --status at node's controller listener:
 * its output (caller frees), NULL when Kafka's tools are not to be had. */
static char *quorum_status(tl_node *node)
{
    const char *src = getenv("STRAND_SRCDIR");
    char cmd[8192], cp[4096] = "", *out = calloc(1, 65536);
    size_t len = 0;
    FILE *f;
    if (!src || system("command -v java >/dev/null 2>&1") != 0)
        goto none;
    snprintf(cmd, sizeof(cmd), "'%s/scripts/kafka-ref.sh' classpath 2>/dev/null", src);
    f = popen(cmd, "r");
    if (!f || !fgets(cp, sizeof(cp), f) || pclose(f) != 0 || !*cp)
        goto none;
    cp[strcspn(cp, "\n")] = 0;
    snprintf(cmd, sizeof(cmd),
             "java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.level=OFF -cp '%s' "
             "org.apache.kafka.tools.MetadataQuorumCommand --bootstrap-controller %s "
             "describe --status 2>&1",
             cp, node->controller);
    f = popen(cmd, "r");
    TL_ASSERT(f != NULL, "popen");
    while (len < 65535 && fgets(out + len, (int)(65536 - len), f))
        len += strlen(out + len);
    TL_ASSERT(pclose(f) == 0, "kafka-metadata-quorum describe --status failed:\n%s", out);
    return out;
none:
    free(out);
    return NULL;
}

/* The value of "Key:" in the tool's output ("" when absent). */
static void status_field(const char *out, const char *key, char *val, size_t cap)
{
    const char *p = strstr(out, key);
    val[0] = '\0';
    if (!p)
        return;
    p += strlen(key);
    p += strspn(p, " \t");
    snprintf(val, cap, "%.*s", (int)strcspn(p, "\n"), p);
}

static int count_of(const char *s, const char *what)
{
    int n = 0;
    for (const char *p = strstr(s, what); p; p = strstr(p + 1, what))
        n++;
    return n;
}

static void check_quorum_tool(tl_cluster *c, int leader, int32_t epoch)
{
    char *out = quorum_status(tl_cluster_node(c, leader % N + 1));
    char val[512], want[32];
    if (!out) {
        tl_log("no java or no Kafka jars: kafka-metadata-quorum not run");
        return;
    }
    status_field(out, "LeaderId:", val, sizeof(val));
    snprintf(want, sizeof(want), "%d", leader);
    TL_ASSERT(!strcmp(val, want), "LeaderId '%s', want %s:\n%s", val, want, out);
    status_field(out, "LeaderEpoch:", val, sizeof(val));
    snprintf(want, sizeof(want), "%d", epoch);
    TL_ASSERT(!strcmp(val, want), "LeaderEpoch '%s', want %s:\n%s", val, want, out);
    status_field(out, "CurrentVoters:", val, sizeof(val));
    TL_ASSERT(count_of(val, "\"id\":") == N, "CurrentVoters %s:\n%s", val, out);
    status_field(out, "CurrentObservers:", val, sizeof(val));
    TL_ASSERT(!strcmp(val, "[]"), "CurrentObservers %s, want none:\n%s", val, out);
    tl_log("kafka-metadata-quorum describe --status: leader %d, epoch %d, %d voters, no observers",
           leader, epoch, N);
    free(out);
}

/* Every running node lists the three brokers unfenced, within timeout_s. */
static void wait_all_unfenced(tl_cluster *c, double timeout_s)
{
    for (int via = 1; via <= N; via++) {
        tl_node *node = tl_cluster_node(c, via);
        if (!tl_node_running(node))
            continue;
        for (int id = 1; id <= N; id++)
            tl_kraft_wait_fenced(node, id, 0, timeout_s);
    }
}

/* Every node's Metadata: npart partitions, each with nrep distinct
 * replicas among the nodes; with leaders_spread, one leader per node. */
static void check_placement(tl_cluster *c, const char *topic, int npart, int nrep,
                            int leaders_spread)
{
    for (int via = 1; via <= N; via++) {
        tl_kraft_topic t;
        double until = tl_now() + 15;
        int led[N + 1] = {0};
        while ((tl_kraft_metadata(tl_cluster_node(c, via), topic, &t) < 0 || t.npart != npart) &&
               tl_now() < until)
            usleep(50000);
        TL_ASSERT(t.npart == npart, "node %d: %s has %d partitions, want %d", via, topic, t.npart,
                  npart);
        for (int p = 0; p < npart; p++) {
            int seen[N + 1] = {0};
            TL_ASSERT(t.nrep[p] == nrep, "node %d: %s-%d has %d replicas", via, topic, p,
                      t.nrep[p]);
            for (int r = 0; r < nrep; r++) {
                int32_t id = t.rep[p][r];
                TL_ASSERT(id >= 1 && id <= N && !seen[id]++, "node %d: %s-%d replica %d", via,
                          topic, p, id);
            }
            if (t.leader[p] >= 1 && t.leader[p] <= N)
                led[t.leader[p]]++;
        }
        for (int id = 1; leaders_spread && id <= N; id++)
            TL_ASSERT(led[id] == npart / N, "node %d: node %d leads %d partitions of %s", via, id,
                      led[id], topic);
    }
}

/* CreateTopics through addr until the new controller takes it: after a
 * failover the answer may be NOT_CONTROLLER or a timeout for a moment. */
static int16_t create_retry(const char *addr, const char *name, int32_t npart, int16_t rf)
{
    double until = tl_now() + 30;
    int16_t err;
    do {
        err = tl_kraft_create_topic(addr, name, npart, rf);
        if (err != KERR_NOT_CONTROLLER && err != KERR_REQUEST_TIMED_OUT)
            break;
        usleep(200000);
    } while (tl_now() < until);
    return err;
}

static void check_msg(const rd_kafka_message_t *m, void *arg)
{
    char want[64];
    int *seen = arg;
    value_of(m->partition, m->offset, want, sizeof(want));
    TL_ASSERT(m->len == strlen(want) && !memcmp(m->payload, want, m->len),
              "%d/%lld: '%.*s', want '%s'", (int)m->partition, (long long)m->offset, (int)m->len,
              (const char *)m->payload, want);
    (*seen)++;
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    TL_ASSERT(m->err == RD_KAFKA_RESP_ERR_NO_ERROR, "delivery: %s", rd_kafka_err2str(m->err));
    int64_t want = (int64_t)(intptr_t)m->_private; /* the message's index in its partition */
    TL_ASSERT(m->offset == want, "%d: delivered at offset %lld, want %lld", (int)m->partition,
              (long long)m->offset, (long long)want);
}

/* Produce through node `from` (acks=1), consume through node `to`. */
static void check_clients(tl_cluster *c, int from, int to)
{
    rd_kafka_conf_t *conf = tl_conf(tl_cluster_node(c, from)->bootstrap);
    tl_conf_set(conf, "acks", "1");
    tl_conf_set(conf, "enable.idempotence", "false");
    tl_conf_set(conf, "max.in.flight", "1");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    for (int64_t i = 0; i < NMSG; i++)
        for (int32_t p = 0; p < NPART; p++) {
            char v[64];
            value_of(p, i, v, sizeof(v));
            TL_ASSERT(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(TOPIC), RD_KAFKA_V_PARTITION(p),
                                        RD_KAFKA_V_VALUE(v, strlen(v)),
                                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                        RD_KAFKA_V_OPAQUE((void *)(intptr_t)i),
                                        RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR_NO_ERROR,
                      "produce");
        }
    TL_ASSERT(rd_kafka_flush(rk, 30000) == RD_KAFKA_RESP_ERR_NO_ERROR, "flush");
    rd_kafka_destroy(rk);
    int seen = 0;
    rd_kafka_t *cons = tl_consume_from_start(tl_conf(tl_cluster_node(c, to)->bootstrap), TOPIC,
                                             NPART, NPART * NMSG, 30, check_msg, &seen);
    rd_kafka_destroy(cons);
    TL_ASSERT_EQ(seen, NPART * NMSG);
    tl_log("%d messages produced through node %d (acks=1), read back through node %d",
           NPART * NMSG, from, to);
}

int main(void)
{
    tl_kraft_view v;
    tl_init("0713-cluster-combined");
    tl_cluster *c = tl_cluster_new("0713-combined", TL_QUORUM_SHARED);
    tl_cluster_add_n(c, N, TL_ROLE_COMBINED, NULL);
    int leader = tl_kraft_start(c, &v);
    double t1 = tl_now();
    wait_all_unfenced(c, 60);
    tl_log("three brokers unfenced %.0f ms after the election", (tl_now() - t1) * 1000);
    TL_ASSERT_EQ(v.nvoters, N);
    check_quorum_tool(c, leader, v.epoch);

    int a = leader % N + 1, b = a % N + 1; /* a, b: not the leader */
    int16_t err = tl_kraft_create_topic(tl_cluster_node(c, a)->bootstrap, TOPIC, NPART, 3);
    TL_ASSERT(err == 0, "CreateTopics through node %d: error %d", a, err);
    check_placement(c, TOPIC, NPART, 3, 1);
    check_clients(c, a, b);

    /* kill -9 of the quorum leader */
    int old = leader;
    double t0 = tl_now();
    leader = tl_kraft_failover(c, old, &v);
    /* replication factor 2: the killed node may be fenced by now */
    int s = 1 + 2 + 3 - old - leader; /* the other survivor */
    err = create_retry(tl_cluster_node(c, s)->bootstrap, TOPIC "-after", NPART, 2);
    TL_ASSERT(err == 0, "CreateTopics after the failover through node %d: error %d", s, err);
    tl_log("topic created through node %d %.0f ms after the kill", s, (tl_now() - t0) * 1000);

    /* the killed node comes back */
    tl_node_start(tl_cluster_node(c, old));
    tl_kraft_wait_caught_up(c, old, 30);
    wait_all_unfenced(c, 30);
    check_placement(c, TOPIC "-after", NPART, 2, 0);
    tl_log("node %d restarted, caught up and unfenced", old);

    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
