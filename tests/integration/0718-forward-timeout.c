/* 0718-forward-timeout: a broker whose quorum has no controller left (one
 * controller, killed) answers the requests it forwards as Kafka's broker
 * does once its forwarding gives up, 60 s after each came: in the API's
 * own answer, every entry REQUEST_TIMED_OUT with a null message
 * (CreateTopics, CreatePartitions, IncrementalAlterConfigs), or at the
 * top level with "The request timed out." (DescribeQuorum). The four
 * are sent at once and waited for together, so the test takes the 60 s
 * once. Before the kill a CreateTopics through the broker is forwarded
 * and done.
 * With KAFKA_REF=1 the same runs against Apache Kafka 4.4 nodes. */
#include <poll.h>
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
#define TOPIC "c0718"

static arena_t arena;

static int16_t create_topic(int fd, const char *name, int32_t *corr, int send_only)
{
    proto_create_topics_req_t req;
    proto_create_topics_req_creatable_topic_t t;
    proto_create_topics_resp_t resp;
    proto_create_topics_req_init(&req);
    proto_create_topics_req_creatable_topic_init(&t);
    t.name = tl_wire_str(name);
    t.num_partitions = 1;
    t.replication_factor = 1;
    req.topics.n = 1;
    req.topics.v = &t;
    req.timeout_ms = 30000;
    if (send_only) {
        buf_t b;
        buf_init(&b);
        proto_create_topics_req_encode(&req, 7, &b);
        *corr = tl_wire_send(fd, 19, 7, &b);
        buf_free(&b);
        return 0;
    }
    TL_WIRE_CALL(fd, &arena, create_topics, 19, 7, &req, &resp);
    TL_ASSERT_EQ(resp.topics.n, 1);
    return resp.topics.v[0].error_code;
}

static int32_t send_create_partitions(int fd)
{
    proto_create_partitions_req_t req;
    proto_create_partitions_req_create_partitions_topic_t t;
    buf_t b;
    proto_create_partitions_req_init(&req);
    proto_create_partitions_req_create_partitions_topic_init(&t);
    t.name = tl_wire_str(TOPIC);
    t.count = 2;
    t.assignments.n = -1;
    req.topics.n = 1;
    req.topics.v = &t;
    req.timeout_ms = 30000;
    buf_init(&b);
    proto_create_partitions_req_encode(&req, 3, &b);
    int32_t corr = tl_wire_send(fd, 37, 3, &b);
    buf_free(&b);
    return corr;
}

static int32_t send_alter_default(int fd)
{
    proto_incremental_alter_configs_req_t req;
    proto_incremental_alter_configs_req_alter_configs_resource_t res;
    proto_incremental_alter_configs_req_alterable_config_t cfg;
    buf_t b;
    proto_incremental_alter_configs_req_init(&req);
    proto_incremental_alter_configs_req_alter_configs_resource_init(&res);
    proto_incremental_alter_configs_req_alterable_config_init(&cfg);
    cfg.name = tl_wire_str("log.retention.ms");
    cfg.config_operation = 0;
    cfg.value = tl_wire_str("4444444");
    res.resource_type = 4; /* BROKER, "": the cluster-wide default */
    res.resource_name = tl_wire_str("");
    res.configs.n = 1;
    res.configs.v = &cfg;
    req.resources.n = 1;
    req.resources.v = &res;
    buf_init(&b);
    proto_incremental_alter_configs_req_encode(&req, 1, &b);
    int32_t corr = tl_wire_send(fd, 44, 1, &b);
    buf_free(&b);
    return corr;
}

static int32_t send_describe_quorum(int fd)
{
    proto_describe_quorum_req_t req;
    proto_describe_quorum_req_topic_data_t t;
    proto_describe_quorum_req_partition_data_t p;
    buf_t b;
    proto_describe_quorum_req_init(&req);
    proto_describe_quorum_req_topic_data_init(&t);
    proto_describe_quorum_req_partition_data_init(&p);
    t.topic_name = tl_wire_str("__cluster_metadata");
    t.partitions.n = 1;
    t.partitions.v = &p;
    req.topics.n = 1;
    req.topics.v = &t;
    buf_init(&b);
    proto_describe_quorum_req_encode(&req, 2, &b);
    int32_t corr = tl_wire_send(fd, 55, 2, &b);
    buf_free(&b);
    return corr;
}

/* The answer on fd, waited for until the deadline (tl_now() time). */
static const uint8_t *await(int fd, int16_t key, int16_t ver, int32_t corr, double deadline,
                            size_t *len)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    int ms = (int)((deadline - tl_now()) * 1000);
    TL_ASSERT(poll(&pfd, 1, ms > 0 ? ms : 0) == 1, "api %d: no answer by the deadline", key);
    return tl_wire_recv(fd, key, ver, corr, &arena, len);
}

/* A message for the log, quoted (a static buffer: one at a time). */
static const char *msg_of(proto_str_t s)
{
    static char out[256];
    if (s.len < 0)
        return "null";
    snprintf(out, sizeof(out), "\"%.*s\"", s.len > 200 ? 200 : (int)s.len, s.p);
    return out;
}

static void check_answers(int fds[4], const int32_t corr[4], double t0)
{
    double deadline = t0 + 100;
    size_t len;
    const uint8_t *body;
    proto_create_topics_resp_t ct;
    proto_create_partitions_resp_t cp;
    proto_incremental_alter_configs_resp_t ia;
    proto_describe_quorum_resp_t dq;

    body = await(fds[0], 19, 7, corr[0], deadline, &len);
    tl_log("CreateTopics answered %.1f s after it was sent", tl_now() - t0);
    proto_create_topics_resp_init(&ct);
    TL_ASSERT(proto_create_topics_resp_decode(&ct, 7, body, len, &arena) == 0, "CreateTopics");
    TL_ASSERT_EQ(ct.topics.n, 1);
    tl_log("CreateTopics: error %d, message %s", ct.topics.v[0].error_code,
           msg_of(ct.topics.v[0].error_message));
    TL_ASSERT_EQ(ct.topics.v[0].error_code, KERR_REQUEST_TIMED_OUT);
    TL_ASSERT(ct.topics.v[0].error_message.len < 0, "CreateTopics: a message");

    body = await(fds[1], 37, 3, corr[1], deadline, &len);
    proto_create_partitions_resp_init(&cp);
    TL_ASSERT(proto_create_partitions_resp_decode(&cp, 3, body, len, &arena) == 0,
              "CreatePartitions");
    TL_ASSERT_EQ(cp.results.n, 1);
    tl_log("CreatePartitions: error %d, message %s", cp.results.v[0].error_code,
           msg_of(cp.results.v[0].error_message));
    TL_ASSERT_EQ(cp.results.v[0].error_code, KERR_REQUEST_TIMED_OUT);
    TL_ASSERT(cp.results.v[0].error_message.len < 0, "CreatePartitions: a message");

    body = await(fds[2], 44, 1, corr[2], deadline, &len);
    proto_incremental_alter_configs_resp_init(&ia);
    TL_ASSERT(proto_incremental_alter_configs_resp_decode(&ia, 1, body, len, &arena) == 0,
              "IncrementalAlterConfigs");
    TL_ASSERT_EQ(ia.responses.n, 1);
    tl_log("IncrementalAlterConfigs: error %d, message %s", ia.responses.v[0].error_code,
           msg_of(ia.responses.v[0].error_message));
    TL_ASSERT_EQ(ia.responses.v[0].error_code, KERR_REQUEST_TIMED_OUT);
    TL_ASSERT(ia.responses.v[0].error_message.len < 0, "IncrementalAlterConfigs: a message");

    body = await(fds[3], 55, 2, corr[3], deadline, &len);
    proto_describe_quorum_resp_init(&dq);
    TL_ASSERT(proto_describe_quorum_resp_decode(&dq, 2, body, len, &arena) == 0,
              "DescribeQuorum");
    tl_log("DescribeQuorum: error %d, message %s, %d topics", dq.error_code,
           msg_of(dq.error_message), dq.topics.n);
    TL_ASSERT_EQ(dq.error_code, KERR_REQUEST_TIMED_OUT);
    static const char timed_out[] = "The request timed out.";
    TL_ASSERT(dq.error_message.len == (int32_t)strlen(timed_out) &&
                  !memcmp(dq.error_message.p, timed_out, strlen(timed_out)),
              "DescribeQuorum: message %s", msg_of(dq.error_message));
    TL_ASSERT_EQ(dq.topics.n, 0);
    double took = tl_now() - t0;
    TL_ASSERT(took > 50 && took < 100, "answered after %.1f s, not Kafka's 60 s", took);
    arena_reset(&arena);
}

/* The broker has applied the topic (its CreatePartitions is then refused
 * for the timeout alone, not for a topic it does not know yet). */
static void wait_topic_known(tl_node *brk)
{
    double until = tl_now() + 10;
    for (;;) {
        proto_metadata_resp_t md;
        int fd = tl_connect(brk->bootstrap, 2000);
        TL_ASSERT(fd >= 0, "connect to the broker");
        tl_wire_metadata(fd, &arena, 12, TOPIC, 0, &md);
        close(fd);
        int known = md.topics.n == 1 && md.topics.v[0].error_code == 0;
        arena_reset(&arena);
        if (known)
            return;
        TL_ASSERT(tl_now() < until, "the broker does not know %s", TOPIC);
        usleep(50000);
    }
}

int main(void)
{
    tl_kraft_view v;
    tl_init("0718-forward-timeout");
    arena_init(&arena, 1 << 16);
    tl_cluster *c = tl_cluster_new("0718-forward", TL_QUORUM_SHARED);
    tl_cluster_add(c, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_add(c, TL_ROLE_BROKER, NULL);
    tl_node *ctl = tl_cluster_node(c, CTL), *brk = tl_cluster_node(c, BRK);
    tl_cluster_start(c);
    TL_ASSERT(tl_kraft_find_leader(c, -1, 60, &v) == CTL, "the controller does not lead");

    /* forwarded and done while the controller runs (the broker may not
     * be registered yet: a new controller refuses placement without it) */
    double until = tl_now() + 30;
    int16_t err;
    for (;;) {
        int fd = tl_connect(brk->bootstrap, 2000);
        TL_ASSERT(fd >= 0, "connect to the broker");
        err = create_topic(fd, TOPIC, NULL, 0);
        close(fd);
        arena_reset(&arena);
        if (err != KERR_INVALID_REPLICATION_FACTOR || tl_now() > until)
            break;
        usleep(200000);
    }
    TL_ASSERT_EQ(err, 0);
    wait_topic_known(brk);

    tl_node_kill9(ctl);
    int fds[4];
    int32_t corr[4];
    for (int i = 0; i < 4; i++) {
        fds[i] = tl_connect(brk->bootstrap, 2000);
        TL_ASSERT(fds[i] >= 0, "connect to the broker");
    }
    double t0 = tl_now();
    create_topic(fds[0], TOPIC "-new", &corr[0], 1);
    corr[1] = send_create_partitions(fds[1]);
    corr[2] = send_alter_default(fds[2]);
    corr[3] = send_describe_quorum(fds[3]);
    check_answers(fds, corr, t0);
    for (int i = 0; i < 4; i++)
        close(fds[i]);

    /* the broker's exit without a controller is not this test's matter */
    tl_cluster_free(c);
    arena_destroy(&arena);
    return tl_done();
}
