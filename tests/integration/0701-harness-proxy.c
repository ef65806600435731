/* 0701-harness-proxy: the fault-injecting proxy (testlib/proxy.h) in front
 * of one node (tl_node_front: the node advertises the proxy, so every
 * connection of the client goes through it), shown with librdkafka:
 *   - pass: messages go through and come back, the proxy counts the bytes;
 *   - delay: the measured Metadata round trip grows by about the delay
 *     (100 ms each way: +200 ms; 150 ms up only: +150 ms);
 *   - drop: requests time out (both ways, and answers only: the requests
 *     reach the node, the answers are swallowed); heal: it works again;
 *   - cut: an open connection is closed, a new one refused, the client
 *     reports its broker down; heal: it works again. */
#include "testlib/cluster.h"
#include "testlib/testlib.h"

#include <errno.h>
#include <inttypes.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static atomic_int transport_errs;
static int64_t produced;

static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    (void)rk;
    (void)opaque;
    tl_log("client error %s: %s", rd_kafka_err2name(err), reason);
    if (err == RD_KAFKA_RESP_ERR__TRANSPORT || err == RD_KAFKA_RESP_ERR__ALL_BROKERS_DOWN)
        transport_errs++;
}

static rd_kafka_t *client(tl_node *node)
{
    rd_kafka_conf_t *conf = tl_conf(node->bootstrap);
    rd_kafka_conf_set_error_cb(conf, error_cb);
    /* reconnect at once after a heal */
    tl_conf_set(conf, "reconnect.backoff.ms", "20");
    tl_conf_set(conf, "reconnect.backoff.max.ms", "200");
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

static rd_kafka_resp_err_t metadata(rd_kafka_t *rk, int timeout_ms)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, NULL, &md, timeout_ms);
    if (md)
        rd_kafka_metadata_destroy(md);
    return err;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The median of 5 Metadata round trips, in ms. */
static double round_trip_ms(rd_kafka_t *rk)
{
    double t[5];
    for (int i = 0; i < 5; i++) {
        double t0 = tl_now();
        TL_ASSERT_EQ(metadata(rk, 10000), 0);
        t[i] = (tl_now() - t0) * 1000;
    }
    qsort(t, 5, sizeof(t[0]), cmp_double);
    return t[2];
}

static void check_msg(const rd_kafka_message_t *msg, void *arg)
{
    char want[64];
    int len = snprintf(want, sizeof(want), "proxied %" PRId64, msg->offset);
    (void)arg;
    TL_ASSERT(msg->len == (size_t)len && memcmp(msg->payload, want, msg->len) == 0,
              "offset %" PRId64 ": '%.*s'", msg->offset, (int)msg->len,
              (const char *)msg->payload);
}

/* n more messages through rk, then every message read back by a consumer
 * that also goes through the proxy. */
static void produce_consume(rd_kafka_t *rk, tl_node *node, const char *topic, int n)
{
    char val[64];
    rd_kafka_t *cons;
    for (int i = 0; i < n; i++) {
        int len = snprintf(val, sizeof(val), "proxied %" PRId64, produced + i);
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(val, (size_t)len),
            RD_KAFKA_V_END);
        TL_ASSERT(!err, "produce: %s", rd_kafka_err2name(err));
    }
    TL_ASSERT(rd_kafka_flush(rk, 30000) == 0, "flush timed out");
    produced += n;
    cons = tl_consume_from_start(tl_conf(node->bootstrap), topic, 1, produced, 30, check_msg,
                                 NULL);
    rd_kafka_consumer_close(cons);
    rd_kafka_destroy(cons);
}

static void check_delay(rd_kafka_t *rk, tl_proxy *px)
{
    double base = round_trip_ms(rk), both, up;
    tl_proxy_delay(px, TL_DIR_BOTH, 100);
    both = round_trip_ms(rk);
    tl_proxy_delay(px, TL_DIR_DOWN, 0);
    tl_proxy_delay(px, TL_DIR_UP, 150);
    up = round_trip_ms(rk);
    tl_proxy_heal(px);
    tl_log("round trip: %.1f ms; 100 ms each way: %.1f ms; 150 ms up: %.1f ms", base, both, up);
    TL_ASSERT(both - base >= 195 && both - base < 400, "delay 2 x 100 ms added %.1f ms",
              both - base);
    TL_ASSERT(up - base >= 145 && up - base < 350, "delay 150 ms added %.1f ms", up - base);
    TL_ASSERT(round_trip_ms(rk) < base + 50, "healed round trip still slow");
}

static void check_drop(rd_kafka_t *rk, tl_node *node, tl_proxy *px, const char *topic, int dirs)
{
    tl_proxy_stats before, after;
    rd_kafka_resp_err_t err;
    tl_proxy_stats_get(px, &before);
    tl_proxy_drop(px, dirs);
    err = metadata(rk, 1500);
    TL_ASSERT(err == RD_KAFKA_RESP_ERR__TIMED_OUT, "dropped link answered: %s",
              rd_kafka_err2name(err));
    tl_proxy_stats_get(px, &after);
    if (dirs & TL_DIR_UP)
        TL_ASSERT(after.dropped[0] > before.dropped[0], "no request bytes dropped");
    else /* the request reached the node, its answer did not come back */
        TL_ASSERT(after.dropped[0] == before.dropped[0] && after.dropped[1] > before.dropped[1] &&
                      after.bytes[0] > before.bytes[0],
                  "answers only: dropped %" PRId64 " up, %" PRId64 " down", after.dropped[0],
                  after.dropped[1]);
    tl_proxy_heal(px);
    TL_ASSERT_EQ(metadata(rk, 10000), 0);
    produce_consume(rk, node, topic, 5);
}

static void check_cut(rd_kafka_t *rk, tl_node *node, tl_proxy *px, const char *topic)
{
    int fd = tl_connect(tl_proxy_addr(px), 2000), fd2;
    size_t got = 0;
    double t0;
    TL_ASSERT(fd >= 0, "connect through the proxy");
    transport_errs = 0;
    tl_proxy_cut(px);
    TL_ASSERT_EQ(tl_wait_closed(fd, 2000, &got), 1);
    close(fd);
    fd2 = tl_connect(tl_proxy_addr(px), 2000);
    TL_ASSERT(fd2 < 0 && errno == ECONNREFUSED, "connect to a cut link: fd %d, %s", fd2,
              strerror(errno));
    for (t0 = tl_now(); transport_errs == 0; rd_kafka_poll(rk, 50))
        TL_ASSERT(tl_now() - t0 < 10, "the client saw no disconnect");
    TL_ASSERT(metadata(rk, 1000) != 0, "a cut link answered");
    tl_proxy_heal(px);
    TL_ASSERT_EQ(metadata(rk, 10000), 0);
    produce_consume(rk, node, topic, 5);
}

int main(void)
{
    tl_cluster *c;
    tl_node *node;
    tl_proxy *px;
    tl_proxy_stats st;
    rd_kafka_t *rk;
    char *topic;

    tl_init("0701-harness-proxy");
    c = tl_cluster_new("0701-proxy", TL_QUORUM_SOLO);
    node = tl_cluster_add(c, TL_ROLE_COMBINED, NULL);
    px = tl_node_front(node);
    tl_cluster_start(c);
    topic = tl_topic_name("proxy");
    rk = client(node);
    TL_ASSERT(tl_create_topic(rk, topic, 1) >= 1, "topic");
    produce_consume(rk, node, topic, 10);
    tl_proxy_stats_get(px, &st);
    TL_ASSERT(st.accepted >= 2 && st.bytes[0] > 0 && st.bytes[1] > 0,
              "accepted %" PRId64 ", bytes %" PRId64 "/%" PRId64, st.accepted, st.bytes[0],
              st.bytes[1]);

    check_delay(rk, px);
    check_drop(rk, node, px, topic, TL_DIR_BOTH);
    check_drop(rk, node, px, topic, TL_DIR_DOWN);
    check_cut(rk, node, px, topic);

    rd_kafka_destroy(rk);
    free(topic);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
