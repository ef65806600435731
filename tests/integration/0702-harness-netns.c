/* 0702-harness-netns: a node in a network namespace of its own
 * (testlib/netns.h), reached by librdkafka over the namespace's veth link:
 * messages go through; the link cut, a Metadata request fails within its
 * timeout and a new connection cannot be made; healed, the node answers
 * and takes messages again, and what it had is still there.
 * Skipped without root or iproute2 namespaces, and with KAFKA_REF: the
 * namespace is the harness's own plumbing around a strand process
 * (kafka-ref.sh starts Kafka itself), the same client behaviour is shown
 * against Kafka by 0701's proxy cut. */
#include "testlib/cluster.h"
#include "testlib/netns.h"
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void produce(tl_node *node, rd_kafka_t *rk, const char *topic, int from, int n)
{
    char val[64];
    for (int i = from; i < from + n; i++) {
        int len = snprintf(val, sizeof(val), "netns %d", i);
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(val, (size_t)len),
            RD_KAFKA_V_END);
        TL_ASSERT(!err, "produce: %s", rd_kafka_err2name(err));
    }
    TL_ASSERT(rd_kafka_flush(rk, 30000) == 0, "node %d: flush timed out", node->id);
}

static void check_msg(const rd_kafka_message_t *msg, void *arg)
{
    char want[64];
    int len = snprintf(want, sizeof(want), "netns %" PRId64, msg->offset);
    (void)arg;
    TL_ASSERT(msg->len == (size_t)len && memcmp(msg->payload, want, msg->len) == 0,
              "offset %" PRId64 ": '%.*s'", msg->offset, (int)msg->len,
              (const char *)msg->payload);
}

static void consume(tl_node *node, const char *topic, int n)
{
    rd_kafka_t *rk = tl_consume_from_start(tl_conf(node->bootstrap), topic, 1, n, 30, check_msg,
                                           NULL);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
}

static rd_kafka_resp_err_t metadata(rd_kafka_t *rk, int timeout_ms)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, NULL, &md, timeout_ms);
    if (md)
        rd_kafka_metadata_destroy(md);
    return err;
}

int main(void)
{
    tl_cluster *c;
    tl_node *node;
    rd_kafka_conf_t *conf;
    rd_kafka_t *rk;
    char *topic;
    double t0;
    int fd;

    tl_init("0702-harness-netns");
    if (tl_is_kafka())
        tl_skip("Strand-specific: the namespace wraps a strand process");
    if (!tl_netns_available())
        tl_skip("network namespaces are not usable here (root and iproute2 needed)");
    c = tl_cluster_new("0702-netns", TL_QUORUM_SOLO);
    node = tl_cluster_add(c, TL_ROLE_COMBINED, NULL);
    tl_node_netns(node);
    tl_cluster_start(c);
    TL_ASSERT(strncmp(node->bootstrap, "10.", 3) == 0, "bootstrap %s", node->bootstrap);
    topic = tl_topic_name("netns");
    conf = tl_conf(node->bootstrap);
    tl_conf_set(conf, "reconnect.backoff.ms", "20");
    tl_conf_set(conf, "reconnect.backoff.max.ms", "200");
    rk = tl_new(RD_KAFKA_PRODUCER, conf);
    TL_ASSERT(tl_create_topic(rk, topic, 1) >= 1, "topic");
    produce(node, rk, topic, 0, 10);
    consume(node, topic, 10);

    tl_netns_cut(node);
    t0 = tl_now();
    TL_ASSERT(metadata(rk, 1500) != 0, "a cut node answered");
    TL_ASSERT(tl_now() - t0 < 3, "the request took %.1f s", tl_now() - t0);
    fd = tl_connect(node->bootstrap, 1000);
    TL_ASSERT(fd < 0, "connected to a cut node");
    tl_netns_heal(node);
    t0 = tl_now();
    TL_ASSERT_EQ(metadata(rk, 10000), 0);
    tl_log("answers %.3f s after the heal", tl_now() - t0);
    produce(node, rk, topic, 10, 5);
    consume(node, topic, 15);

    rd_kafka_destroy(rk);
    free(topic);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
