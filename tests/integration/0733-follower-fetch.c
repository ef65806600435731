/* 0733-follower-fetch: consumers read from a follower in their rack
 * (KIP-392). Three combined nodes in racks r1, r2, r3 with
 * replica.selector.class=org.apache.kafka.common.replica.RackAwareReplicaSelector;
 * a topic of one partition on all three, NMSG messages acks=all:
 *   - a Fetch v12 to the leader from a client in a follower's rack gets
 *     no records and that follower as PreferredReadReplica; from the
 *     leader's own rack, or with no rack, the records themselves;
 *   - the same Fetch to the follower gets the records, up to its high
 *     watermark (the same as the leader's once it has fetched);
 *   - a Fetch v10 (no client metadata) to the follower is
 *     NOT_LEADER_OR_FOLLOWER, as before KIP-392;
 *   - a librdkafka consumer with client.rack set to the follower's rack
 *     reads every message in order, and its statistics show it fetching
 *     from the follower.
 * With KAFKA_REF=1 the same runs against three Apache Kafka 4.4 combined
 * nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"
#include "util/kerr.h"

#define N 3
#define TOPIC "f0733"
#define NMSG 50

static tl_cluster *c;

typedef struct fetch_answer {
    int16_t err;
    int32_t preferred;
    int64_t hw;
    int32_t bytes;
} fetch_answer;

/* Fetch (version ver) of TOPIC-0 from offset 0 at node, as a consumer of
 * rack (NULL: none). */
static fetch_answer fetch_at(tl_node *node, int16_t ver, const char *rack)
{
    proto_fetch_req_t r;
    proto_fetch_req_fetch_topic_t t;
    proto_fetch_req_fetch_partition_t p;
    proto_fetch_resp_t resp;
    arena_t arena;
    fetch_answer a = {-1, -1, -1, 0};
    proto_fetch_req_init(&r);
    proto_fetch_req_fetch_topic_init(&t);
    proto_fetch_req_fetch_partition_init(&p);
    r.replica_id = -1;
    r.max_bytes = 1 << 20;
    r.session_epoch = -1;
    r.rack_id = tl_wire_str(rack ? rack : "");
    p.partition = 0;
    p.partition_max_bytes = 1 << 20;
    t.topic = tl_wire_str(TOPIC);
    t.partitions.n = 1;
    t.partitions.v = &p;
    r.topics.n = 1;
    r.topics.v = &t;
    int fd = tl_connect(node->bootstrap, 2000);
    TL_ASSERT(fd >= 0, "connect %s", node->bootstrap);
    arena_init(&arena, 1 << 16);
    TL_WIRE_CALL(fd, &arena, fetch, 1, ver, &r, &resp);
    close(fd);
    TL_ASSERT(resp.error_code == 0 && resp.responses.n == 1 &&
                  resp.responses.v[0].partitions.n == 1,
              "Fetch v%d at node %d: error %d, %d topics", ver, node->id, resp.error_code,
              resp.responses.n);
    const proto_fetch_resp_partition_data_t *pd = &resp.responses.v[0].partitions.v[0];
    a.err = pd->error_code;
    a.preferred = pd->preferred_read_replica;
    a.hw = pd->high_watermark;
    a.bytes = pd->records.len;
    arena_destroy(&arena);
    return a;
}

/* The answer once node's high watermark has every message (10 s). */
static fetch_answer fetch_caught_up(tl_node *node, const char *rack)
{
    double until = tl_now() + 10;
    fetch_answer a;
    while ((a = fetch_at(node, 12, rack)).hw < NMSG && tl_now() < until)
        usleep(100000);
    return a;
}

static char stats_broker[32];

/* librdkafka's statistics: the broker the consumer fetches TOPIC-0 from
 * ("broker" of the partition's entry; -1 while none). */
static int stats_cb(rd_kafka_t *rk, char *json, size_t len, void *opaque)
{
    (void)rk;
    (void)len;
    (void)opaque;
    const char *t = strstr(json, "\"" TOPIC "\"");
    const char *p = t ? strstr(t, "\"partition\":0,") : NULL;
    const char *b = p ? strstr(p, "\"broker\":") : NULL;
    if (b)
        snprintf(stats_broker, sizeof(stats_broker), "%d", atoi(b + 9));
    return 0;
}

static void no_check(const rd_kafka_message_t *m, void *arg)
{
    (void)m;
    (void)arg;
}

static void consume_in_rack(const char *rack, int follower)
{
    char want[16];
    int n = 0;
    rd_kafka_conf_t *conf = tl_conf(tl_cluster_bootstrap(c));
    tl_conf_set(conf, "client.rack", rack);
    tl_conf_set(conf, "statistics.interval.ms", "100");
    rd_kafka_conf_set_stats_cb(conf, stats_cb);
    rd_kafka_t *rk = tl_consume_from_start(conf, TOPIC, 1, NMSG, 60, no_check, &n);
    snprintf(want, sizeof(want), "%d", follower);
    double until = tl_now() + 10;
    while (strcmp(stats_broker, want) && tl_now() < until)
        rd_kafka_poll(rk, 100);
    TL_ASSERT(!strcmp(stats_broker, want), "librdkafka fetches from broker %s, want %s",
              stats_broker, want);
    rd_kafka_destroy(rk);
    tl_log("a librdkafka consumer with client.rack=%s read %d messages from broker %d", rack,
           NMSG, follower);
}

int main(void)
{
    char rack[N + 1][8];
    tl_init("0733-follower-fetch");
    c = tl_cluster_new("0733-follower", TL_QUORUM_SHARED);
    tl_cluster_set(c, "replica.selector.class=org.apache.kafka.common.replica."
                      "RackAwareReplicaSelector");
    tl_cluster_add_n(c, N, TL_ROLE_COMBINED, NULL);
    for (int id = 1; id <= N; id++) {
        snprintf(rack[id], sizeof(rack[id]), "r%d", id);
        tl_node_set(tl_cluster_node(c, id), tl_fmt("broker.rack=%s", rack[id]));
    }
    tl_kraft_start_topic(c, TOPIC, 1, 3);
    double until = tl_now() + 30;
    while (!tl_kraft_isr_whole(c, TOPIC, 1, N)) {
        TL_ASSERT(tl_now() < until, "the ISR is not whole");
        usleep(100000);
    }
    rd_kafka_t *prod = tl_new(RD_KAFKA_PRODUCER, tl_conf(tl_cluster_bootstrap(c)));
    tl_produce_seq(prod, TOPIC, 0, "m", NMSG);
    rd_kafka_destroy(prod);
    int leader = tl_kraft_leader_of(c, TOPIC, 0), f = leader % N + 1;
    tl_node *ln = tl_cluster_node(c, leader), *fn = tl_cluster_node(c, f);

    fetch_answer a = fetch_caught_up(ln, rack[f]);
    TL_ASSERT(a.err == 0 && a.preferred == f && a.bytes == 0 && a.hw == NMSG,
              "leader, rack %s: error %d, preferred %d, %d bytes, hw %lld", rack[f], a.err,
              a.preferred, a.bytes, (long long)a.hw);
    a = fetch_at(ln, 12, rack[leader]);
    TL_ASSERT(a.err == 0 && a.preferred == -1 && a.bytes > 0,
              "leader, its own rack: error %d, preferred %d, %d bytes", a.err, a.preferred,
              a.bytes);
    a = fetch_at(ln, 12, NULL);
    TL_ASSERT(a.err == 0 && a.preferred == -1 && a.bytes > 0,
              "leader, no rack: error %d, preferred %d, %d bytes", a.err, a.preferred, a.bytes);
    tl_log("leader %d (rack %s) sends rack %s to broker %d, keeps the others", leader,
           rack[leader], rack[f], f);
    a = fetch_caught_up(fn, rack[f]);
    TL_ASSERT(a.err == 0 && a.preferred == -1 && a.bytes > 0 && a.hw == NMSG,
              "follower %d: error %d, preferred %d, %d bytes, hw %lld", f, a.err, a.preferred,
              a.bytes, (long long)a.hw);
    a = fetch_at(fn, 10, rack[f]);
    TL_ASSERT(a.err == KERR_NOT_LEADER_OR_FOLLOWER, "follower %d, Fetch v10: error %d", f,
              a.err);
    tl_log("follower %d serves Fetch v12 up to its high watermark; v10 is "
           "NOT_LEADER_OR_FOLLOWER", f);
    consume_in_rack(rack[f], f);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
