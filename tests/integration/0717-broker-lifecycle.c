/* 0717-broker-lifecycle: a broker's start against a quorum (one
 * controller and one broker-only node, broker.heartbeat.interval.ms
 * 2000), as Kafka's broker and controller lead it:
 *   - the broker is unfenced well within one heartbeat interval of
 *     answering on its listener (the time is logged): while it starts it
 *     heartbeats every few milliseconds until the controller says it has
 *     caught up, not once an interval;
 *   - AllocateProducerIds on the controller for a broker that is not
 *     registered, or at an epoch that is not its registration's, is
 *     refused with STALE_BROKER_EPOCH (the broker's own requests get
 *     blocks: an idempotent producer through it gets a producer id);
 *   - the broker killed with kill -9 and started again keeps its
 *     partition's log: the message is read back at offset 0 (a restarted
 *     broker knows only its snapshot's metadata at first, and took the
 *     partitions it did not find there for strays and deleted them);
 *   - a topic deleted while the broker is down: once the broker has
 *     caught up again its partition directory is gone (the broker
 *     replays the RemoveTopicRecord from the controller's log; 0719 has
 *     the case of a broker that catches up from a snapshot instead);
 *   - UnregisterBroker: of an id never registered, through the broker
 *     (forwarded), BROKER_ID_NOT_REGISTERED; of the broker once stopped,
 *     through the controller, no error, and a second broker's
 *     DescribeCluster (fenced brokers included) lists it no more; once
 *     more, the same error;
 *   - both exit cleanly on SIGTERM.
 * With KAFKA_REF=1 the same runs against Apache Kafka 4.4 nodes. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proto/proto.h"
#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"
#include "util/kerr.h"

#define CTL 1
#define BRK 2
#define BRK2 3 /* started for UnregisterBroker only */
#define INTERVAL_MS 2000

static arena_t arena;

/* Whether broker id is fenced as broker `via` describes the cluster: 1,
 * 0, or -1 when it is not listed (or via does not answer). */
static int fenced_state(tl_node *via, int id)
{
    proto_describe_cluster_req_t req;
    proto_describe_cluster_resp_t resp;
    int st = -1;
    int fd = tl_connect(via->bootstrap, 2000);
    if (fd < 0)
        return -1;
    proto_describe_cluster_req_init(&req);
    req.include_fenced_brokers = true;
    TL_WIRE_CALL(fd, &arena, describe_cluster, 60, 2, &req, &resp);
    close(fd);
    for (int i = 0; i < resp.brokers.n; i++)
        if (resp.brokers.v[i].broker_id == id)
            st = resp.brokers.v[i].is_fenced ? 1 : 0;
    arena_reset(&arena);
    return st;
}

static int16_t allocate_pids(tl_node *ctl, int32_t broker, int64_t epoch)
{
    proto_allocate_producer_ids_req_t req;
    proto_allocate_producer_ids_resp_t resp;
    int fd = tl_connect(ctl->controller, 2000);
    TL_ASSERT(fd >= 0, "connect to the controller");
    proto_allocate_producer_ids_req_init(&req);
    req.broker_id = broker;
    req.broker_epoch = epoch;
    TL_WIRE_CALL(fd, &arena, allocate_producer_ids, 67, 0, &req, &resp);
    close(fd);
    tl_log("AllocateProducerIds for broker %d at epoch %lld: error %d, start %lld, length %d",
           broker, (long long)epoch, resp.error_code, (long long)resp.producer_id_start,
           resp.producer_id_len);
    arena_reset(&arena);
    return resp.error_code;
}

/* An idempotent producer through the broker: its InitProducerId needs a
 * block the controller gave the broker under its real epoch. */
static void check_idempotent_producer(tl_node *brk)
{
    rd_kafka_conf_t *conf = tl_conf(brk->bootstrap);
    tl_conf_set(conf, "enable.idempotence", "true");
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    TL_ASSERT_EQ(tl_create_topic(rk, "c0717", 1), 1);
    TL_ASSERT(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("c0717"), RD_KAFKA_V_PARTITION(0),
                                RD_KAFKA_V_VALUE("v", 1), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR_NO_ERROR,
              "produce");
    TL_ASSERT(rd_kafka_flush(rk, 30000) == RD_KAFKA_RESP_ERR_NO_ERROR, "flush");
    rd_kafka_destroy(rk);
}

static void check_value(const rd_kafka_message_t *msg, void *arg)
{
    (void)arg;
    TL_ASSERT(msg->len == 1 && memcmp(msg->payload, "v", 1) == 0, "offset %lld: %.*s",
              (long long)msg->offset, (int)msg->len, (const char *)msg->payload);
}

/* The log outlives a kill -9 of its broker. */
static void check_log_kept(tl_node *brk)
{
    tl_node_kill9(brk);
    tl_node_start(brk);
    rd_kafka_t *rk = tl_consume_from_start(tl_conf(brk->bootstrap), "c0717", 1, 1, 60,
                                           check_value, NULL);
    rd_kafka_destroy(rk);
    tl_log("the broker's log survived its kill -9");
}

static int16_t unregister(const char *addr, int32_t id)
{
    proto_unregister_broker_req_t req;
    proto_unregister_broker_resp_t resp;
    int fd = tl_connect(addr, 2000);
    TL_ASSERT(fd >= 0, "connect to %s", addr);
    proto_unregister_broker_req_init(&req);
    req.broker_id = id;
    TL_WIRE_CALL(fd, &arena, unregister_broker, 64, 0, &req, &resp);
    close(fd);
    tl_log("UnregisterBroker %d at %s: error %d (%.*s)", id, addr, resp.error_code,
           resp.error_message.len > 0 ? (int)resp.error_message.len : 0,
           resp.error_message.len > 0 ? resp.error_message.p : "");
    arena_reset(&arena);
    return resp.error_code;
}

/* The broker `via` describes broker id (fenced ones included). */
static int listed(tl_node *via, int32_t id)
{
    return fenced_state(via, id) >= 0;
}

/* A second broker (other) watches broker brk go. */
static void check_unregister(tl_node *ctl, tl_node *brk, tl_node *other)
{
    TL_ASSERT_EQ(unregister(brk->bootstrap, 77), KERR_BROKER_ID_NOT_REGISTERED);
    tl_node_start(other);
    double until = tl_now() + 30;
    while (!listed(other, BRK) && tl_now() < until)
        usleep(20000);
    TL_ASSERT(listed(other, BRK), "broker %d not listed before UnregisterBroker", BRK);
    TL_ASSERT_EQ(tl_node_stop(brk), 0);
    TL_ASSERT_EQ(unregister(ctl->controller, BRK), 0);
    until = tl_now() + 10;
    while (listed(other, BRK) && tl_now() < until)
        usleep(20000);
    TL_ASSERT(!listed(other, BRK), "broker %d still listed after UnregisterBroker", BRK);
    TL_ASSERT_EQ(unregister(ctl->controller, BRK), KERR_BROKER_ID_NOT_REGISTERED);
}

/* Whether the broker's log dir has "c0717-0" itself. */
static int live_dir(tl_node *brk)
{
    char path[PATH_MAX + 16];
    snprintf(path, sizeof(path), "%s/data/c0717-0", brk->dir);
    return access(path, F_OK) == 0;
}

/* The topic deleted while its broker is down is gone when it is back. */
static void check_deleted_while_down(tl_node *ctl, tl_node *brk)
{
    int st;
    tl_node_kill9(brk);
    TL_ASSERT_EQ(tl_kraft_delete_topic(ctl->controller, "c0717"), 0);
    tl_node_start(brk);
    double until = tl_now() + 30;
    while (((st = fenced_state(brk, BRK)) != 0 || live_dir(brk)) && tl_now() < until)
        usleep(20000);
    TL_ASSERT(st == 0, "broker %d not unfenced again (state %d)", BRK, st);
    TL_ASSERT(!live_dir(brk), "c0717-0 is still in the broker's log dir");
    tl_log("the topic deleted while the broker was down is gone from its log dir");
}

int main(void)
{
    tl_kraft_view v;
    tl_init("0717-broker-lifecycle");
    arena_init(&arena, 1 << 16);
    tl_cluster *c = tl_cluster_new("0717-lifecycle", TL_QUORUM_SHARED);
    tl_cluster_add(c, TL_ROLE_CONTROLLER, NULL);
    static const char *const brk_keys[] = {"broker.heartbeat.interval.ms=2000", NULL};
    tl_cluster_add(c, TL_ROLE_BROKER, brk_keys);
    tl_cluster_add(c, TL_ROLE_BROKER, NULL);
    tl_node *ctl = tl_cluster_node(c, CTL), *brk = tl_cluster_node(c, BRK);
    tl_node_start(ctl);
    TL_ASSERT(tl_kraft_find_leader(c, -1, 60, &v) == CTL, "the controller does not lead");

    tl_node_start(brk);
    double t0 = tl_now(), until = t0 + 30;
    int st;
    while ((st = fenced_state(brk, BRK)) != 0 && tl_now() < until)
        usleep(10000);
    double ms = (tl_now() - t0) * 1000;
    TL_ASSERT(st == 0, "broker %d not unfenced within 30 s of answering (state %d)", BRK, st);
    tl_log("broker %d unfenced %.0f ms after it answers (heartbeat interval %d ms)", BRK, ms,
           INTERVAL_MS);
    TL_ASSERT(ms < INTERVAL_MS / 2, "unfenced after %.0f ms: start-up heartbeats wait the interval",
              ms);

    TL_ASSERT_EQ(allocate_pids(ctl, 77, 0), KERR_STALE_BROKER_EPOCH);
    TL_ASSERT_EQ(allocate_pids(ctl, BRK, 123456789), KERR_STALE_BROKER_EPOCH);
    check_idempotent_producer(brk);
    check_log_kept(brk);
    check_deleted_while_down(ctl, brk);
    check_unregister(ctl, brk, tl_cluster_node(c, BRK2));

    tl_cluster_stop(c);
    tl_cluster_free(c);
    arena_destroy(&arena);
    return tl_done();
}
