/* 0604-describe-apis: three APIs that admin tools call, answered as
 * Apache Kafka 4.4 answers them (the expectations below were checked
 * against Kafka 4.4 with KAFKA_REF=1):
 *
 *   A. DescribeProducers v0 after an idempotent librdkafka producer wrote
 *      10 messages to P-a-0: one producer at epoch 0, last sequence 9, the
 *      last batch's timestamp, coordinator epoch -1, no transaction; P-a-1
 *      has none; partition 5 of P-a is UNKNOWN_TOPIC_OR_PARTITION with no
 *      message; an unknown topic gets that error with Kafka's text, an
 *      invalid name INVALID_TOPIC_EXCEPTION with the reason.
 *   B. DescribeTopicPartitions v0, paged: topics P-a (3 partitions), P-b
 *      (1) and P-c (2) and an unknown P-d, asked in a jumbled order with
 *      repeats, 2 partitions a page: P-a 0-1 (cursor P-a/2); P-a 2 and P-b
 *      (cursor P-c/0); P-c (cursor P-d/0: the page was full when P-d came);
 *      P-d UNKNOWN_TOPIC_OR_PARTITION. Topic ids as in Metadata, leader and
 *      replicas this node, empty (not null) ELR lists, authorized
 *      operations. A cursor on a topic not asked for, or at partition -1:
 *      INVALID_REQUEST for every topic asked. No list: every topic from
 *      the cursor on, sorted, unknown ones never listed.
 *   C. ListConfigResources: v1 with no types lists this node as
 *      BROKER_LOGGER and BROKER, then the topics; v1 [TOPIC] only topics;
 *      v1 [3] UNSUPPORTED_VERSION; v0 and v1 [CLIENT_METRICS] nothing. */
#include "testlib/testlib.h"
#include "testlib/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define E_NONE 0
#define E_UNKNOWN_TOPIC 3
#define E_INVALID_TOPIC 17
#define E_UNSUPPORTED_VERSION 35
#define E_INVALID_REQUEST 42
#define TOPIC_OPS 0x0df8
#define N_MSG 10

static arena_t arena;
static int fd = -1;
static int32_t node_id;
static char names[4][128]; /* P-a, P-b, P-c, P-d */
static const int nparts[3] = {3, 1, 2};
static proto_uuid_t ids[3];

#define S tl_wire_str

static int eq(proto_str_t a, const char *b)
{
    return a.len == (int32_t)strlen(b) && !memcmp(a.p, b, (size_t)a.len);
}

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* ---- setup ---- */

static void setup(const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "enable.idempotence", "true");
    tl_conf_set(conf, "linger.ms", "0");
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    char *base = tl_topic_name("P");
    for (int i = 0; i < 4; i++)
        snprintf(names[i], sizeof(names[i]), "%s-%c", base, 'a' + i);
    free(base);
    for (int i = 0; i < 3; i++)
        TL_ASSERT(tl_create_topic(rk, names[i], nparts[i]) == nparts[i], "create %s", names[i]);
    /* One message at a time: one batch each, sequences 0..9. */
    for (int i = 0; i < N_MSG; i++) {
        TL_ASSERT_EQ(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(names[0]), RD_KAFKA_V_PARTITION(0),
                                       RD_KAFKA_V_VALUE("v", 1),
                                       RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                     0);
        TL_ASSERT_EQ(rd_kafka_flush(rk, 30000), 0);
    }
    rd_kafka_destroy(rk);
    for (int i = 0; i < 3; i++) {
        proto_metadata_resp_t md;
        tl_wire_metadata(fd, &arena, 12, names[i], 0, &md);
        TL_ASSERT(md.topics.n == 1 && md.topics.v[0].error_code == 0, "Metadata %s", names[i]);
        ids[i] = md.topics.v[0].topic_id;
        node_id = md.brokers.v[0].node_id;
    }
}

/* ---- A. DescribeProducers ---- */

static void describe_producers(int64_t t0, int64_t t1)
{
    proto_describe_producers_req_t r;
    proto_describe_producers_resp_t resp;
    proto_describe_producers_req_topic_request_t t[3];
    int32_t parts_a[3] = {0, 1, 5}, part0 = 0;
    proto_describe_producers_req_init(&r);
    for (int i = 0; i < 3; i++) {
        proto_describe_producers_req_topic_request_init(&t[i]);
        t[i].partition_indexes.n = i ? 1 : 3;
        t[i].partition_indexes.v = i ? &part0 : parts_a;
    }
    t[0].name = S(names[0]);
    t[1].name = S(names[3]);
    t[2].name = S("bad name!");
    r.topics.n = 3;
    r.topics.v = t;
    TL_WIRE_CALL(fd, &arena, describe_producers, 61, 0, &r, &resp);
    TL_ASSERT_EQ(resp.topics.n, 3);

    const proto_describe_producers_resp_topic_response_t *a = &resp.topics.v[0];
    TL_ASSERT(eq(a->name, names[0]) && a->partitions.n == 3, "P-a: %d partitions", a->partitions.n);
    const proto_describe_producers_resp_partition_response_t *p = &a->partitions.v[0];
    TL_ASSERT(p->partition_index == 0 && p->error_code == E_NONE && p->error_message.len < 0,
              "P-a-0: error %d", p->error_code);
    TL_ASSERT_EQ(p->active_producers.n, 1);
    const proto_describe_producers_resp_producer_state_t *ps = &p->active_producers.v[0];
    tl_log("producer %" PRId64 " epoch %d seq %d ts %" PRId64 " coord %d txn %" PRId64,
           ps->producer_id, ps->producer_epoch, ps->last_sequence, ps->last_timestamp,
           ps->coordinator_epoch, ps->current_txn_start_offset);
    TL_ASSERT(ps->producer_id >= 0, "producer id %" PRId64, ps->producer_id);
    TL_ASSERT_EQ(ps->producer_epoch, 0);
    TL_ASSERT_EQ(ps->last_sequence, N_MSG - 1);
    TL_ASSERT(ps->last_timestamp >= t0 && ps->last_timestamp <= t1, "last timestamp %" PRId64,
              ps->last_timestamp);
    TL_ASSERT_EQ(ps->coordinator_epoch, -1);
    TL_ASSERT_EQ(ps->current_txn_start_offset, -1);
    p = &a->partitions.v[1];
    TL_ASSERT(p->partition_index == 1 && p->error_code == E_NONE && p->active_producers.n == 0,
              "P-a-1");
    p = &a->partitions.v[2];
    TL_ASSERT(p->partition_index == 5 && p->error_code == E_UNKNOWN_TOPIC &&
                  p->error_message.len < 0 && p->active_producers.n == 0,
              "P-a-5: error %d", p->error_code);

    p = &resp.topics.v[1].partitions.v[0];
    TL_ASSERT(eq(resp.topics.v[1].name, names[3]) && p->error_code == E_UNKNOWN_TOPIC &&
                  eq(p->error_message, "This server does not host this topic-partition."),
              "unknown topic: error %d '%.*s'", p->error_code, (int)p->error_message.len,
              p->error_message.p);
    p = &resp.topics.v[2].partitions.v[0];
    TL_ASSERT(p->error_code == E_INVALID_TOPIC &&
                  eq(p->error_message, "Topic name is invalid: 'bad name!' contains one or more "
                                       "characters other than ASCII alphanumerics, '.', '_' and "
                                       "'-'"),
              "invalid topic: error %d '%.*s'", p->error_code, (int)p->error_message.len,
              p->error_message.p);
}

/* ---- B. DescribeTopicPartitions ---- */

typedef proto_describe_topic_partitions_resp_describe_topic_partitions_response_topic_t dtp_topic_t;

static proto_describe_topic_partitions_resp_t dtp(int ntopics, const int *which, int32_t limit,
                                                  const char *cur, int32_t cur_part)
{
    proto_describe_topic_partitions_req_t r;
    proto_describe_topic_partitions_resp_t resp;
    proto_describe_topic_partitions_req_topic_request_t t[8];
    proto_describe_topic_partitions_req_cursor_t c;
    proto_describe_topic_partitions_req_init(&r);
    for (int i = 0; i < ntopics; i++) {
        proto_describe_topic_partitions_req_topic_request_init(&t[i]);
        t[i].name = S(names[which[i]]);
    }
    r.topics.n = ntopics;
    r.topics.v = t;
    r.response_partition_limit = limit;
    if (cur) {
        proto_describe_topic_partitions_req_cursor_init(&c);
        c.topic_name = S(cur);
        c.partition_index = cur_part;
        r.cursor.n = 1;
        r.cursor.v = &c;
    }
    TL_WIRE_CALL(fd, &arena, describe_topic_partitions, 75, 0, &r, &resp);
    return resp;
}

/* Topic k (0..2) with partitions [first, first + n). */
static void expect_topic(const dtp_topic_t *t, int k, int32_t first, int32_t n)
{
    TL_ASSERT(eq(t->name, names[k]) && t->error_code == E_NONE, "topic %s: '%.*s' error %d",
              names[k], (int)t->name.len, t->name.p, t->error_code);
    TL_ASSERT(!memcmp(t->topic_id.b, ids[k].b, 16), "%s: topic id", names[k]);
    TL_ASSERT(!t->is_internal, "%s: internal", names[k]);
    TL_ASSERT_EQ(t->topic_authorized_operations, TOPIC_OPS);
    TL_ASSERT_EQ(t->partitions.n, n);
    for (int32_t i = 0; i < n; i++) {
        const proto_describe_topic_partitions_resp_describe_topic_partitions_response_partition_t
            *p = &t->partitions.v[i];
        TL_ASSERT(p->error_code == E_NONE && p->partition_index == first + i, "%s-%d", names[k],
                  first + i);
        TL_ASSERT(p->leader_id == node_id && p->leader_epoch == 0, "%s-%d: leader %d epoch %d",
                  names[k], first + i, p->leader_id, p->leader_epoch);
        TL_ASSERT(p->replica_nodes.n == 1 && p->replica_nodes.v[0] == node_id &&
                      p->isr_nodes.n == 1 && p->isr_nodes.v[0] == node_id,
                  "%s-%d: replicas", names[k], first + i);
        TL_ASSERT(p->eligible_leader_replicas.n == 0 && p->last_known_elr.n == 0 &&
                      p->offline_replicas.n == 0,
                  "%s-%d: elr %d, last known elr %d, offline %d", names[k], first + i,
                  p->eligible_leader_replicas.n, p->last_known_elr.n, p->offline_replicas.n);
    }
}

/* Byte order of two names, as Kafka sorts them (shorter first on a tie). */
static int name_cmp(proto_str_t a, proto_str_t b)
{
    int32_t n = a.len < b.len ? a.len : b.len;
    int c = n > 0 ? memcmp(a.p, b.p, (size_t)n) : 0;
    return c ? c : (a.len > b.len) - (a.len < b.len);
}


static void expect_cursor(const proto_describe_topic_partitions_resp_t *r, int k, int32_t part)
{
    if (k < 0) {
        TL_ASSERT(r->next_cursor.n < 0, "a next cursor");
        return;
    }
    TL_ASSERT(r->next_cursor.n == 1 && eq(r->next_cursor.v->topic_name, names[k]) &&
                  r->next_cursor.v->partition_index == part,
              "next cursor: %s/%d expected", names[k], part);
}

static void describe_topic_partitions(void)
{
    static const int asked[] = {2, 0, 3, 1, 0, 2};
    proto_describe_topic_partitions_resp_t r = dtp(6, asked, 2, NULL, 0);
    TL_ASSERT_EQ(r.topics.n, 1);
    expect_topic(&r.topics.v[0], 0, 0, 2);
    expect_cursor(&r, 0, 2);

    r = dtp(6, asked, 2, names[0], 2);
    TL_ASSERT_EQ(r.topics.n, 2);
    expect_topic(&r.topics.v[0], 0, 2, 1);
    expect_topic(&r.topics.v[1], 1, 0, 1);
    expect_cursor(&r, 2, 0);

    r = dtp(6, asked, 2, names[2], 0);
    TL_ASSERT_EQ(r.topics.n, 1);
    expect_topic(&r.topics.v[0], 2, 0, 2);
    expect_cursor(&r, 3, 0);

    r = dtp(6, asked, 2, names[3], 0);
    TL_ASSERT_EQ(r.topics.n, 1);
    TL_ASSERT(eq(r.topics.v[0].name, names[3]) && r.topics.v[0].error_code == E_UNKNOWN_TOPIC &&
                  r.topics.v[0].partitions.n == 0,
              "unknown topic: error %d", r.topics.v[0].error_code);
    expect_cursor(&r, -1, 0);

    /* The cursor's topic must be among those asked, its partition >= 0. */
    static const int ab[] = {0, 1};
    for (int bad = 0; bad < 2; bad++) {
        r = bad ? dtp(2, ab, 10, names[0], -1) : dtp(2, ab, 10, names[2], 0);
        TL_ASSERT_EQ(r.topics.n, 2);
        for (int i = 0; i < 2; i++)
            TL_ASSERT(eq(r.topics.v[i].name, names[ab[i]]) &&
                          r.topics.v[i].error_code == E_INVALID_REQUEST &&
                          r.topics.v[i].partitions.n == 0,
                      "bad cursor %d: topic %d error %d", bad, i, r.topics.v[i].error_code);
        expect_cursor(&r, -1, 0);
    }

    /* Every topic from P-a on, in order; P-d never shows. */
    r = dtp(0, NULL, 2000, names[0], 0);
    int seen = 0;
    for (int32_t i = 0; i < r.topics.n; i++) {
        TL_ASSERT(!eq(r.topics.v[i].name, names[3]), "unknown topic listed");
        TL_ASSERT(i == 0 || name_cmp(r.topics.v[i - 1].name, r.topics.v[i].name) < 0,
                  "not sorted at %d", (int)i);
        if (seen < 3 && eq(r.topics.v[i].name, names[seen]))
            expect_topic(&r.topics.v[i], seen, 0, nparts[seen]), seen++;
    }
    TL_ASSERT(eq(r.topics.v[0].name, names[0]) && seen == 3, "%d of the 3 topics", seen);
}

/* ---- C. ListConfigResources ---- */

static proto_list_config_resources_resp_t lcr(int16_t v, int n, const int8_t *types)
{
    proto_list_config_resources_req_t r;
    proto_list_config_resources_resp_t resp;
    proto_list_config_resources_req_init(&r);
    r.resource_types.n = n;
    r.resource_types.v = (int8_t *)types;
    TL_WIRE_CALL(fd, &arena, list_config_resources, 74, v, &r, &resp);
    return resp;
}

static int lcr_count(const proto_list_config_resources_resp_t *r, const char *name, int8_t type)
{
    int n = 0;
    for (int32_t i = 0; i < r->config_resources.n; i++)
        n += eq(r->config_resources.v[i].resource_name, name) &&
             r->config_resources.v[i].resource_type == type;
    return n;
}

static void list_config_resources(void)
{
    char node[16];
    snprintf(node, sizeof(node), "%d", node_id);
    proto_list_config_resources_resp_t r = lcr(1, 0, NULL);
    TL_ASSERT_EQ(r.error_code, E_NONE);
    TL_ASSERT(r.config_resources.n >= 5, "%d resources", r.config_resources.n);
    TL_ASSERT(eq(r.config_resources.v[0].resource_name, node) &&
                  r.config_resources.v[0].resource_type == 8 &&
                  eq(r.config_resources.v[1].resource_name, node) &&
                  r.config_resources.v[1].resource_type == 4,
              "BROKER_LOGGER and BROKER first");
    for (int i = 0; i < 3; i++)
        TL_ASSERT_EQ(lcr_count(&r, names[i], 2), 1);
    for (int32_t i = 2; i < r.config_resources.n; i++)
        TL_ASSERT_EQ(r.config_resources.v[i].resource_type, 2);

    static const int8_t topic[] = {2}, bad[] = {3}, metrics[] = {16};
    r = lcr(1, 1, topic);
    TL_ASSERT(r.error_code == E_NONE && lcr_count(&r, names[1], 2) == 1 &&
                  lcr_count(&r, node, 4) == 0,
              "v1 [TOPIC]");
    r = lcr(1, 1, bad);
    TL_ASSERT(r.error_code == E_UNSUPPORTED_VERSION && r.config_resources.n == 0, "v1 [3]: %d",
              r.error_code);
    r = lcr(1, 1, metrics);
    TL_ASSERT(r.error_code == E_NONE && r.config_resources.n == 0, "v1 [CLIENT_METRICS]");
    r = lcr(0, 0, NULL);
    TL_ASSERT(r.error_code == E_NONE && r.config_resources.n == 0, "v0: %d resources",
              r.config_resources.n);
}

int main(void)
{
    tl_init("0604-describe-apis");
    const char *bs = tl_bootstrap();
    arena_init(&arena, 1 << 16);
    fd = tl_connect(bs, 20000);
    TL_ASSERT(fd >= 0, "connect %s", bs);
    int64_t t0 = wall_ms();
    setup(bs);
    int64_t t1 = wall_ms();
    describe_producers(t0, t1);
    describe_topic_partitions();
    list_config_resources();
    close(fd);
    arena_destroy(&arena);
    return tl_done();
}
