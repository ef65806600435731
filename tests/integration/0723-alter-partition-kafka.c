/* 0723-alter-partition-kafka: Strand's controllers take AlterPartition
 * from Apache Kafka 4.4 brokers, Kafka's own client of it. Three Strand
 * controllers, two Kafka brokers, a topic of one partition on both
 * (replication factor 2), ten messages with acks=all:
 *   - the follower killed with kill -9 is fenced when its session ends,
 *     and the controller takes it out of the ISR itself;
 *   - restarted, it catches up, and its leader asks the controller
 *     (AlterPartition) to take it back into the ISR: the ISR is both
 *     brokers again, and the messages read back through the follower's
 *     leader are the ten written.
 * Strand's brokers do not send AlterPartition yet, so this runs only with
 * KAFKA_REF=1 (its brokers are Kafka's; the controllers stay Strand's). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"

#define NC 3 /* controllers 1-3; brokers 4 and 5 */
#define NMSG 10
#define TOPIC "c0723"

static void check_msg(const rd_kafka_message_t *m, void *arg)
{
    char want[32];
    int *seen = arg;
    snprintf(want, sizeof(want), "isr-%d", (int)m->offset);
    TL_ASSERT(m->len == strlen(want) && !memcmp(m->payload, want, m->len),
              "offset %lld: '%.*s', want '%s'", (long long)m->offset, (int)m->len,
              (const char *)m->payload, want);
    (*seen)++;
}

/* Waits until via's Metadata gives partition 0 an ISR of want members;
 * the seconds it took. */
static double wait_isr(tl_node *via, int want, double timeout_s, tl_kraft_topic *t)
{
    double t0 = tl_now();
    while (tl_now() - t0 < timeout_s) {
        memset(t, 0, sizeof(*t));
        if (tl_kraft_metadata(via, TOPIC, t) == 0 && t->npart == 1 && t->nisr[0] == want)
            return tl_now() - t0;
        usleep(100000);
    }
    TL_ASSERT(0, "the ISR of %s-0 is not %d brokers after %.0f s (it has %d)", TOPIC, want,
              timeout_s, t->nisr[0]);
    return -1;
}

int main(void)
{
    tl_kraft_topic t;
    tl_kraft_view v;
    tl_init("0723-alter-partition-kafka");
    if (!tl_is_kafka())
        tl_skip("runs with KAFKA_REF=1 only (Kafka 4.4 brokers, Strand controllers)");
    /* the levels both support (0714) */
    setenv("KAFKA_REF_FORMAT_ARGS",
           "--release-version=4.0-IV3 --feature=group.version=0 --feature=transaction.version=0",
           1);
    tl_cluster *c = tl_cluster_new("0723-alter-partition", TL_QUORUM_SHARED);
    tl_cluster_set(c, "broker.session.timeout.ms=3000");
    tl_cluster_set(c, "broker.heartbeat.interval.ms=500");
    tl_cluster_add_n(c, NC, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_add_n(c, 2, TL_ROLE_BROKER, NULL);
    for (int id = 1; id <= NC + 2; id++)
        tl_cluster_node(c, id)->kafka = id > NC;
    tl_kraft_start(c, &v);
    tl_node *b4 = tl_cluster_node(c, 4);
    tl_kraft_wait_fenced(b4, 4, 0, 60);
    tl_kraft_wait_fenced(b4, 5, 0, 60);
    TL_ASSERT_EQ(tl_kraft_create_topic(b4->bootstrap, TOPIC, 1, 2), 0);
    wait_isr(b4, 2, 30, &t);
    int32_t leader = t.leader[0];
    tl_node *lead = tl_cluster_node(c, leader), *fol = tl_cluster_node(c, leader == 4 ? 5 : 4);

    rd_kafka_conf_t *conf = tl_conf(lead->bootstrap);
    tl_conf_set(conf, "acks", "all");
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    tl_produce_seq(rk, TOPIC, 0, "isr", NMSG);
    rd_kafka_destroy(rk);

    tl_node_kill9(fol);
    double out_s = wait_isr(lead, 1, 60, &t);
    TL_ASSERT_EQ(t.isr[0][0], leader);
    tl_log("broker %d killed: out of the ISR after %.1f s", fol->id, out_s);
    tl_node_start(fol);
    double in_s = wait_isr(lead, 2, 90, &t);
    tl_log("broker %d restarted: back in the ISR after %.1f s (its leader's AlterPartition)",
           fol->id, in_s);

    int seen = 0;
    rd_kafka_t *cons =
        tl_consume_from_start(tl_conf(lead->bootstrap), TOPIC, 1, NMSG, 30, check_msg, &seen);
    rd_kafka_destroy(cons);
    TL_ASSERT_EQ(seen, NMSG);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
