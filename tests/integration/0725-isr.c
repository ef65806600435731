/* 0725-isr: the ISR shrinks and grows as the leader sees its followers,
 * on three combined nodes (replica.lag.time.max.ms=3000, the brokers'
 * session, 12 s, long enough that no fencing takes the stopped follower
 * out first), and
 * min.insync.replicas=3 gives Kafka's errors, to a librdkafka producer
 * with acks=all and no retries:
 *   - the three replicas are in the ISR; message A is acknowledged; so is
 *     one to a topic of one replica (min.insync.replicas counts at most
 *     the replicas there are);
 *   - a follower (neither the partition's leader nor the quorum's) is
 *     stopped with SIGSTOP; message B, sent at once, is appended but
 *     cannot reach the stopped follower, and once the leader has taken it
 *     out of the ISR (after the lag) the ISR is below min.insync.replicas,
 *     where the high watermark stays: B is answered REQUEST_TIMED_OUT at
 *     the request's timeout (5 s);
 *   - Metadata shows the ISR without it, and message C is refused with
 *     NOT_ENOUGH_REPLICAS before its append;
 *   - SIGCONT: the follower catches up and is back in the ISR; message D
 *     is acknowledged at offset 2, after B;
 *   - kill -9 of the same follower: fenced at the end of its session,
 *     it leaves the ISR; started again, it joins the ISR again, and
 *     message E is acknowledged at offset 3;
 *   - a consumer reads A, B, D, E at offsets 0-3 (B, appended, became
 *     visible when the follower caught up).
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
#define TOPIC "i0725"

static rd_kafka_resp_err_t last_err;
static int64_t last_offset;
static int got;

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    last_err = m->err;
    last_offset = m->offset;
    got = 1;
}

/* Sends value acks=all and waits (up to timeout_s) for its answer. */
static rd_kafka_resp_err_t send_to(rd_kafka_t *rk, const char *topic, const char *value,
                                   double timeout_s, double *took)
{
    double t0 = tl_now();
    char v[64];
    snprintf(v, sizeof(v), "%s", value);
    got = 0;
    rd_kafka_resp_err_t err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                                RD_KAFKA_V_VALUE(v, strlen(v)),
                                                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                                RD_KAFKA_V_END);
    TL_ASSERT(err == RD_KAFKA_RESP_ERR_NO_ERROR, "produce: %s", rd_kafka_err2str(err));
    while (!got && tl_now() < t0 + timeout_s)
        rd_kafka_poll(rk, 20);
    TL_ASSERT(got, "no answer for '%s' within %.0f s", value, timeout_s);
    if (took)
        *took = tl_now() - t0;
    return last_err;
}

static rd_kafka_resp_err_t send_one(rd_kafka_t *rk, const char *value, double timeout_s,
                                    double *took)
{
    return send_to(rk, TOPIC, value, timeout_s, took);
}

static int isr_has(const tl_kraft_topic *t, int32_t id)
{
    for (int i = 0; i < t->nisr[0]; i++)
        if (t->isr[0][i] == id)
            return 1;
    return 0;
}

/* Until node via's Metadata shows an ISR of n members, with id in it
 * (in: 1) or not (in: 0). */
static double wait_isr(tl_node *via, int n, int32_t id, int in, double timeout_s)
{
    tl_kraft_topic t;
    double t0 = tl_now();
    for (;;) {
        memset(&t, 0, sizeof(t));
        if (tl_kraft_metadata(via, TOPIC, &t) == 0 && t.npart == 1 && t.nisr[0] == n &&
            isr_has(&t, id) == in)
            return tl_now() - t0;
        TL_ASSERT(tl_now() < t0 + timeout_s, "the ISR is not %d members %s %d after %.0f s (%d)",
                  n, in ? "with" : "without", (int)id, timeout_s, t.npart ? t.nisr[0] : -1);
        usleep(100000);
    }
}

static const char *const want[] = {"A", "B", "D", "E"};

static void check_msg(const rd_kafka_message_t *m, void *arg)
{
    int *n = arg;
    TL_ASSERT(m->offset < 4, "offset %lld", (long long)m->offset);
    const char *w = want[m->offset];
    TL_ASSERT(m->len == strlen(w) && !memcmp(m->payload, w, m->len), "%lld: '%.*s', want '%s'",
              (long long)m->offset, (int)m->len, (const char *)m->payload, w);
    (*n)++;
}

static int32_t partition_leader(tl_node *via)
{
    tl_kraft_topic t;
    double until = tl_now() + 30;
    for (;;) {
        memset(&t, 0, sizeof(t));
        if (tl_kraft_metadata(via, TOPIC, &t) == 0 && t.npart == 1 && t.leader[0] >= 0)
            return t.leader[0];
        TL_ASSERT(tl_now() < until, "%s-0 has no leader", TOPIC);
        usleep(100000);
    }
}

int main(void)
{
    tl_kraft_view v;
    double took;
    tl_init("0725-isr");
    tl_cluster *c = tl_cluster_new("0725-isr", TL_QUORUM_SHARED);
    tl_cluster_set(c, "replica.lag.time.max.ms=3000");
    tl_cluster_set(c, "broker.session.timeout.ms=12000");
    tl_cluster_set(c, "min.insync.replicas=3");
    tl_cluster_add_n(c, N, TL_ROLE_COMBINED, NULL);
    int quorum = tl_kraft_start(c, &v);
    for (int id = 1; id <= N; id++)
        tl_kraft_wait_fenced(tl_cluster_node(c, quorum), id, 0, 60);
    int16_t err = tl_kraft_create_topic(tl_cluster_node(c, quorum)->bootstrap, TOPIC, 1, 3);
    TL_ASSERT(err == 0, "CreateTopics: error %d", err);
    int32_t leader = partition_leader(tl_cluster_node(c, quorum));
    int32_t f = 1;
    while (f == leader || f == quorum)
        f++;
    tl_node *fol = tl_cluster_node(c, f), *via = tl_cluster_node(c, leader);
    wait_isr(via, 3, f, 1, 30);
    tl_log("%s-0: leader %d, the quorum's leader %d, follower %d; the ISR has all three", TOPIC,
           (int)leader, quorum, (int)f);

    rd_kafka_conf_t *conf = tl_conf(via->bootstrap);
    tl_conf_set(conf, "acks", "all");
    tl_conf_set(conf, "enable.idempotence", "false");
    tl_conf_set(conf, "retries", "0");
    tl_conf_set(conf, "linger.ms", "0");
    tl_conf_set(conf, "request.timeout.ms", "5000"); /* the broker's wait */
    tl_conf_set(conf, "socket.timeout.ms", "60000");
    tl_conf_set(conf, "message.timeout.ms", "60000");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    TL_ASSERT_EQ(send_one(rk, "A", 30, NULL), RD_KAFKA_RESP_ERR_NO_ERROR);
    TL_ASSERT_EQ(last_offset, 0);
    /* min.insync.replicas counts at most the replicas there are. */
    err = tl_kraft_create_topic(tl_cluster_node(c, quorum)->bootstrap, TOPIC "-one", 1, 1);
    TL_ASSERT(err == 0, "CreateTopics %s-one: error %d", TOPIC, err);
    TL_ASSERT_EQ(send_to(rk, TOPIC "-one", "one", 30, NULL), RD_KAFKA_RESP_ERR_NO_ERROR);
    TL_ASSERT_EQ(last_offset, 0);
    tl_log("%s-one, one replica: acks=all taken at offset 0 (min.insync.replicas=3)", TOPIC);

    tl_node_pause(fol);
    err = send_one(rk, "B", 30, &took);
    TL_ASSERT(err == RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT, "B: %s, want %s", rd_kafka_err2name(err),
              rd_kafka_err2name(RD_KAFKA_RESP_ERR_REQUEST_TIMED_OUT));
    TL_ASSERT(took >= 4.5, "B answered after %.1f s, before its timeout", took);
    tl_log("follower %d stopped: B answered REQUEST_TIMED_OUT after %.1f s", (int)f, took);
    took = wait_isr(via, 2, f, 0, 30);
    tl_log("Metadata: the ISR without %d (%.1f s later)", (int)f, took);
    err = send_one(rk, "C", 30, &took);
    TL_ASSERT(err == RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS, "C: %s, want %s",
              rd_kafka_err2name(err), rd_kafka_err2name(RD_KAFKA_RESP_ERR_NOT_ENOUGH_REPLICAS));
    tl_log("C refused with NOT_ENOUGH_REPLICAS in %.0f ms", took * 1000);

    tl_node_resume(fol);
    took = wait_isr(via, 3, f, 1, 30);
    tl_log("follower %d resumed: back in the ISR after %.1f s", (int)f, took);
    TL_ASSERT_EQ(send_one(rk, "D", 30, NULL), RD_KAFKA_RESP_ERR_NO_ERROR);
    TL_ASSERT_EQ(last_offset, 2);

    /* Its registration lives until its session ends (a new incarnation is
     * refused as a duplicate until then, as by Kafka): fenced first. */
    tl_node_kill9(fol);
    took = tl_kraft_wait_fenced(tl_cluster_node(c, quorum), f, 1, 60);
    wait_isr(via, 2, f, 0, 30);
    tl_log("follower %d killed: fenced after %.1f s, out of the ISR", (int)f, took);
    tl_node_start(fol);
    took = wait_isr(via, 3, f, 1, 60);
    tl_log("follower %d started again: in the ISR again %.1f s after its start", (int)f, took);
    TL_ASSERT_EQ(send_one(rk, "E", 30, NULL), RD_KAFKA_RESP_ERR_NO_ERROR);
    TL_ASSERT_EQ(last_offset, 3);
    rd_kafka_destroy(rk);

    int n = 0;
    rd_kafka_t *cons = tl_consume_from_start(tl_conf(tl_cluster_node(c, f)->bootstrap), TOPIC, 1,
                                             4, 60, check_msg, &n);
    rd_kafka_destroy(cons);
    TL_ASSERT_EQ(n, 4);
    tl_log("A, B, D, E consumed at offsets 0-3");
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
