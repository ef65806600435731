/* 0213-describe-quorum: DescribeQuorum v0-2 (raw requests through the
 * generated codecs) on a broker of the test's own, with a controller
 * listener configured, restarted once. A single node is a quorum of one,
 * described as Kafka 4.4 describes a combined single node (KAFKA_REF=1
 * runs the same against Kafka):
 *
 * - __cluster_metadata-0: no error (v2: empty messages), leader node 1,
 *   a leader epoch of at least 1, a high watermark past the records
 *   written so far; one voter, node 1, with its log end offset (not
 *   behind the high watermark; Strand's equals it when no change is being
 *   synced), at v1+ its last fetch and caught-up times = now (the
 *   broker's clock, taken around the request), at v2 a zero directory id
 *   (a static quorum); no observers; at v2 one node, 1, with the
 *   controller listener (CONTROLLER on 127.0.0.1, not the client port).
 * - A topic created moves the high watermark (on Strand by exactly its
 *   TopicRecord and PartitionRecords).
 * - A restart raises the leader epoch and keeps the high watermark.
 * - Any other request (another topic, another partition, the partition
 *   twice, two topics, no topics, a topic without partitions) is answered
 *   with every partition named, each UNKNOWN_TOPIC_OR_PARTITION (v2: "This
 *   server does not host this topic-partition.") and zeros, no nodes, as
 *   Kafka answers. */
#include "testlib/testlib.h"
#include "testlib/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <unistd.h>

#include "util/kerr.h"

#define S tl_wire_str
#define META "__cluster_metadata"
#define NO_HOST "This server does not host this topic-partition."

static arena_t arena;
static int fd;
static int client_port, ctl_port;

typedef proto_describe_quorum_resp_t dq_resp;
typedef proto_describe_quorum_resp_partition_data_t dq_part;

static int eq(proto_str_t a, const char *b)
{
    return a.len >= 0 && (size_t)a.len == strlen(b) && !memcmp(a.p, b, (size_t)a.len);
}

static int64_t wall_ms(void)
{
    struct timeval tv;
    gettimeofday(&tv, NULL);
    return (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
}

/* A request for topics[i] with partitions parts[i][0..nparts[i]). */
static void describe(int16_t ver, int ntopics, const char *const *topics, const int *nparts,
                     const int32_t (*parts)[2], dq_resp *resp)
{
    proto_describe_quorum_req_t r;
    proto_describe_quorum_req_init(&r);
    r.topics.n = ntopics;
    r.topics.v = arena_calloc(&arena, (size_t)ntopics + 1, sizeof(*r.topics.v));
    for (int i = 0; i < ntopics; i++) {
        proto_describe_quorum_req_topic_data_t *t = &r.topics.v[i];
        proto_describe_quorum_req_topic_data_init(t);
        t->topic_name = S(topics[i]);
        t->partitions.n = nparts[i];
        t->partitions.v = arena_calloc(&arena, (size_t)nparts[i] + 1, sizeof(*t->partitions.v));
        for (int j = 0; j < nparts[i]; j++)
            t->partitions.v[j].partition_index = parts[i][j];
    }
    TL_WIRE_CALL(fd, &arena, describe_quorum, 55, ver, &r, resp);
}

static const dq_part *describe_meta(int16_t ver, dq_resp *resp)
{
    static const char *const t[] = {META};
    static const int n[] = {1};
    static const int32_t p[][2] = {{0}};
    describe(ver, 1, t, n, p, resp);
    TL_ASSERT_EQ(resp->error_code, 0);
    TL_ASSERT(resp->topics.n == 1 && eq(resp->topics.v[0].topic_name, META), "topic");
    TL_ASSERT_EQ(resp->topics.v[0].partitions.n, 1);
    return &resp->topics.v[0].partitions.v[0];
}

static void check_listeners(const proto_describe_quorum_resp_node_t *node)
{
    TL_ASSERT_EQ(node->listeners.n, 1);
    const proto_describe_quorum_resp_listener_t *l = &node->listeners.v[0];
    TL_ASSERT(eq(l->name, "CONTROLLER") && eq(l->host, "127.0.0.1"), "listener %.*s://%.*s",
              l->name.len, l->name.p, l->host.len, l->host.p);
    TL_ASSERT(l->port > 0 && l->port != client_port, "controller port %d", l->port);
    if (ctl_port)
        TL_ASSERT_EQ(l->port, ctl_port);
}

/* The quorum of one at version ver; returns the high watermark. settled:
 * no change is being committed (on Strand the voter's end is then the
 * high watermark). */
static int64_t check_quorum(int16_t ver, int32_t *epoch, int settled)
{
    dq_resp resp;
    int64_t t0 = wall_ms();
    const dq_part *p = describe_meta(ver, &resp);
    int64_t t1 = wall_ms();

    TL_ASSERT_EQ(p->partition_index, 0);
    TL_ASSERT_EQ(p->error_code, 0);
    TL_ASSERT_EQ(p->leader_id, 1);
    TL_ASSERT(p->leader_epoch >= 1, "leader epoch %d", p->leader_epoch);
    TL_ASSERT(p->high_watermark >= 1, "high watermark %lld", (long long)p->high_watermark);
    TL_ASSERT_EQ(p->current_voters.n, 1);
    TL_ASSERT_EQ(p->observers.n, 0);
    const proto_describe_quorum_resp_replica_state_t *v = &p->current_voters.v[0];
    TL_ASSERT_EQ(v->replica_id, 1);
    TL_ASSERT(v->log_end_offset >= p->high_watermark, "voter at %lld, high watermark %lld",
              (long long)v->log_end_offset, (long long)p->high_watermark);
    if (!tl_is_kafka() && settled)
        TL_ASSERT_EQ(v->log_end_offset, p->high_watermark);
    if (ver >= 1) {
        TL_ASSERT(v->last_fetch_timestamp >= t0 - 1000 && v->last_fetch_timestamp <= t1 + 1000,
                  "last fetch %lld, now %lld", (long long)v->last_fetch_timestamp, (long long)t1);
        TL_ASSERT(v->last_caught_up_timestamp >= t0 - 1000 &&
                  v->last_caught_up_timestamp <= t1 + 1000, "last caught up %lld",
                  (long long)v->last_caught_up_timestamp);
    } else {
        TL_ASSERT(v->last_fetch_timestamp == -1 && v->last_caught_up_timestamp == -1, "v0");
    }
    if (ver >= 2) {
        static const uint8_t zero[16];
        TL_ASSERT(!memcmp(v->replica_directory_id.b, zero, 16), "directory id");
        TL_ASSERT(eq(resp.error_message, "") && eq(p->error_message, ""), "messages");
        TL_ASSERT_EQ(resp.nodes.n, 1);
        TL_ASSERT_EQ(resp.nodes.v[0].node_id, 1);
        check_listeners(&resp.nodes.v[0]);
    }
    *epoch = p->leader_epoch;
    int64_t hw = p->high_watermark;
    arena_reset(&arena);
    return hw;
}

/* Every partition named comes back refused, and nothing else. */
static void refused(int16_t ver, int ntopics, const char *const *topics, const int *nparts,
                    const int32_t (*parts)[2])
{
    dq_resp resp;
    describe(ver, ntopics, topics, nparts, parts, &resp);
    TL_ASSERT_EQ(resp.error_code, 0);
    TL_ASSERT_EQ(resp.topics.n, ntopics);
    TL_ASSERT_EQ(resp.nodes.n, 0);
    if (ver >= 2)
        TL_ASSERT(eq(resp.error_message, ""), "top message");
    for (int i = 0; i < ntopics; i++) {
        const proto_describe_quorum_resp_topic_data_t *t = &resp.topics.v[i];
        TL_ASSERT(eq(t->topic_name, topics[i]), "topic %d", i);
        TL_ASSERT_EQ(t->partitions.n, nparts[i]);
        for (int j = 0; j < nparts[i]; j++) {
            const dq_part *p = &t->partitions.v[j];
            TL_ASSERT_EQ(p->partition_index, parts[i][j]);
            TL_ASSERT_EQ(p->error_code, KERR_UNKNOWN_TOPIC_OR_PARTITION);
            TL_ASSERT(ver < 2 || eq(p->error_message, NO_HOST), "v%d message", ver);
            TL_ASSERT(p->leader_id == 0 && p->leader_epoch == 0 && p->high_watermark == 0,
                      "v%d: leader %d epoch %d", ver, p->leader_id, p->leader_epoch);
            TL_ASSERT(p->current_voters.n == 0 && p->observers.n == 0, "replicas");
        }
    }
    arena_reset(&arena);
}

static void refusals(void)
{
    static const char *const foo[] = {"foo"}, *const meta[] = {META}, *const two[] = {META, META};
    static const int one[] = {1}, one_each[] = {1, 1}, pair[] = {2}, none[] = {0};
    static const int32_t p0[][2] = {{0}}, p1[][2] = {{1}}, p00[][2] = {{0, 0}};
    static const int32_t p0_p0[][2] = {{0}, {0}};

    for (int16_t v = 0; v <= 2; v++) {
        refused(v, 1, foo, one, p0);
        refused(v, 1, meta, one, p1);
        refused(v, 1, meta, pair, p00);
        refused(v, 2, two, one_each, p0_p0);
        refused(v, 0, NULL, NULL, NULL);
        refused(v, 1, meta, none, p0);
    }
}

/* A topic by auto-creation; the high watermark moves past its records. */
static void create_topic(int64_t hw)
{
    proto_metadata_resp_t md;
    char *topic = tl_topic_name("t0213");
    double deadline = tl_now() + 30;
    int32_t epoch;
    int64_t now;

    tl_wire_metadata(fd, &arena, 12, topic, 1, &md);
    arena_reset(&arena);
    while ((now = check_quorum(2, &epoch, 0)) == hw) {
        TL_ASSERT(tl_now() < deadline, "high watermark still %lld", (long long)hw);
        usleep(50 * 1000);
    }
    /* The broker's num.partitions is 4: one TopicRecord, four
     * PartitionRecords, one batch. */
    if (!tl_is_kafka())
        TL_ASSERT_EQ(now, hw + 5);
    free(topic);
}

int main(void)
{
    tl_init("0213-describe-quorum");
    char *dir = tl_scratch_dir("0213");
    tl_broker b = {0};
    char listeners[128], *extra[4] = {NULL};
    int32_t epoch, epoch2;

    arena_init(&arena, 4096);
    b.port = tl_free_port();
    client_port = b.port;
    if (!tl_is_kafka()) {
        /* Kafka's own configuration (scripts/kafka-ref.sh) has one. */
        ctl_port = tl_free_port();
        snprintf(listeners, sizeof(listeners),
                 "listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d", b.port, ctl_port);
        extra[0] = listeners;
        extra[1] = "controller.listener.names=CONTROLLER";
        extra[2] = "listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT";
    }
    tl_broker_start(&b, dir, (const char *const *)extra);
    fd = tl_connect(b.bootstrap, 20000);
    TL_ASSERT(fd >= 0, "connect to %s", b.bootstrap);
    for (int16_t v = 0; v <= 2; v++)
        check_quorum(v, &epoch, 1);
    refusals();
    create_topic(check_quorum(2, &epoch, 1));
    int64_t hw = check_quorum(2, &epoch, 1);
    close(fd);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    tl_broker_start(&b, dir, (const char *const *)extra);
    fd = tl_connect(b.bootstrap, 20000);
    TL_ASSERT(fd >= 0, "connect to %s", b.bootstrap);
    int64_t hw2 = check_quorum(2, &epoch2, 1);
    TL_ASSERT(epoch2 > epoch, "leader epoch %d after a restart, was %d", epoch2, epoch);
    TL_ASSERT(hw2 >= hw, "high watermark %lld after a restart, was %lld", (long long)hw2,
              (long long)hw);
    /* Strand: one epoch per start, and the restart's only records are
     * the new incarnation's RegisterBrokerRecord and its unfencing. */
    if (!tl_is_kafka())
        TL_ASSERT(epoch2 == epoch + 1 && hw2 == hw + 2, "epoch %d, high watermark %lld", epoch2,
                  (long long)hw2);
    close(fd);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    arena_destroy(&arena);
    free(dir);
    return tl_done();
}
