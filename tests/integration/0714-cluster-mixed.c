/* 0714-cluster-mixed: the control plane is Kafka's on the wire both ways.
 *   - a Strand broker joins a quorum of three Apache Kafka 4.4
 *     controllers: it follows their metadata log, registers and is
 *     unfenced; a topic created through it (forwarded in an Envelope to
 *     the active Kafka controller) is in its Metadata, and a librdkafka
 *     producer and consumer through it write and read the same bytes;
 *   - an Apache Kafka 4.4 broker joins a quorum of three Strand
 *     controllers: the same steps through it;
 *   - every node exits cleanly on SIGTERM.
 * Strand-specific (it mixes the two), and it needs Kafka: it runs only
 * with KAFKA_REF=1 (six JVM starts would cost make check a minute). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "util/kerr.h"

#define NC 3 /* controllers: ids 1-3; the broker is 4 */
#define NMSG 10

static void check_msg(const rd_kafka_message_t *m, void *arg)
{
    char want[32];
    int *seen = arg;
    snprintf(want, sizeof(want), "mixed-%d", (int)m->offset);
    TL_ASSERT(m->len == strlen(want) && !memcmp(m->payload, want, m->len),
              "offset %lld: '%.*s', want '%s'", (long long)m->offset, (int)m->len,
              (const char *)m->payload, want);
    (*seen)++;
}

static void produce_consume(tl_node *b, const char *topic)
{
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(b->bootstrap));
    tl_produce_seq(rk, topic, 0, "mixed", NMSG);
    rd_kafka_destroy(rk);
    int seen = 0;
    rd_kafka_t *cons =
        tl_consume_from_start(tl_conf(b->bootstrap), topic, 1, NMSG, 30, check_msg, &seen);
    rd_kafka_destroy(cons);
    TL_ASSERT_EQ(seen, NMSG);
}

/* Three controllers of one kind, a broker of the other. */
static void run_mixed(const char *name, int kafka_controllers)
{
    tl_kraft_topic t;
    tl_cluster *c = tl_cluster_new(name, TL_QUORUM_SHARED);
    const char *what = kafka_controllers ? "strand broker, kafka controllers"
                                         : "kafka broker, strand controllers";
    tl_cluster_add_n(c, NC, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_add(c, TL_ROLE_BROKER, NULL);
    for (int id = 1; id <= NC + 1; id++)
        tl_cluster_node(c, id)->kafka = (id <= NC) == kafka_controllers;
    tl_node *b = tl_cluster_node(c, NC + 1);
    tl_kraft_view v;
    tl_kraft_start(c, &v);
    double t0 = tl_now();
    tl_kraft_wait_fenced(b, b->id, 0, 60);
    tl_log("%s: the broker is unfenced %.0f ms after the election", what, (tl_now() - t0) * 1000);
    int16_t err = tl_kraft_create_topic(b->bootstrap, name, 1, 1);
    TL_ASSERT(err == 0, "%s: CreateTopics through the broker: error %d", what, err);
    double until = tl_now() + 15;
    while ((tl_kraft_metadata(b, name, &t) < 0 || t.npart != 1 || t.leader[0] != b->id) &&
           tl_now() < until)
        usleep(50000);
    TL_ASSERT(t.npart == 1 && t.leader[0] == b->id, "%s: the broker's Metadata of %s", what, name);
    produce_consume(b, name);
    tl_log("%s: a topic created through the broker, %d messages through it", what, NMSG);
    tl_cluster_stop(c);
    tl_cluster_free(c);
}

int main(void)
{
    tl_init("0714-cluster-mixed");
    if (!tl_is_kafka())
        tl_skip("runs with KAFKA_REF=1 only (it mixes Strand and Kafka 4.4 nodes)");
    /* Kafka formats a cluster at its latest metadata.version, above the
     * levels Strand supports (23-29), which Strand refuses to follow, and
     * with group.version 1 and transaction.version 2 finalized, which a
     * Kafka controller refuses a broker that does not support (Strand's
     * are 0): a cluster of both is formatted at 4.0-IV3 (25, Strand's own
     * default) with those two at 0. */
    setenv("KAFKA_REF_FORMAT_ARGS",
           "--release-version=4.0-IV3 --feature=group.version=0 --feature=transaction.version=0",
           1);
    run_mixed("c0714-kctl", 1);
    run_mixed("c0714-sctl", 0);
    return tl_done();
}
