/* 0710-quorum-controllers: three controller-only nodes form a Raft
 * metadata quorum over their controller listeners (KRaft's Vote,
 * BeginQuorumEpoch, Fetch), each its own process with its own data dir:
 *   - a leader is elected (the time from start is logged), and
 *     DescribeQuorum on it shows the three voters with their endpoints,
 *     all caught up to its high watermark; DescribeCluster on the
 *     controller listener names it the active controller;
 *   - the others answer DescribeQuorum with NOT_LEADER_OR_FOLLOWER and
 *     the leader they know;
 *   - kill -9 of the leader: the other two elect another at a higher epoch
 *     (the failover time is logged), and the high watermark does not go
 *     back;
 *   - the killed node restarts on its directory and catches up: the leader
 *     sees its log end reach the high watermark;
 *   - a SIGSTOPped follower stops fetching (its last fetch time stands
 *     still at the leader) and fetches again after SIGCONT;
 *   - changes commit through the quorum: a cluster-wide broker config set
 *     on the leader (IncrementalAlterConfigs) is described by every
 *     controller; set on another controller it is refused with
 *     NOT_CONTROLLER; after the failover the new leader takes changes and
 *     the restarted node has them; CreateTopics with no broker registered
 *     is INVALID_REPLICATION_FACTOR;
 *   - every node exits cleanly on SIGTERM.
 * With KAFKA_REF=1 the same runs against three Apache Kafka 4.4
 * controllers. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proto/proto.h"
#include "testlib/cluster.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"
#include "util/kerr.h"

#define N 3

static arena_t arena;

typedef struct quorum_view {
    int16_t err;
    int32_t leader, epoch;
    int64_t hw;
    int nvoters, nnodes;
    int64_t end[N + 1], fetch[N + 1]; /* by voter id */
} quorum_view;

/* DescribeQuorum v2 at node's controller listener; 0, or -1 when the node
 * cannot be reached. */
static int describe(tl_node *node, quorum_view *v)
{
    proto_describe_quorum_req_t req;
    proto_describe_quorum_req_topic_data_t t;
    proto_describe_quorum_req_partition_data_t p;
    proto_describe_quorum_resp_t resp;
    int fd = tl_connect(node->controller, 2000);
    if (fd < 0)
        return -1;
    proto_describe_quorum_req_init(&req);
    memset(&t, 0, sizeof(t));
    memset(&p, 0, sizeof(p));
    t.topic_name = tl_wire_str("__cluster_metadata");
    t.partitions.n = 1;
    t.partitions.v = &p;
    req.topics.n = 1;
    req.topics.v = &t;
    TL_WIRE_CALL(fd, &arena, describe_quorum, 55, 2, &req, &resp);
    close(fd);
    memset(v, 0, sizeof(*v));
    v->err = resp.error_code;
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == 1, "one partition");
    const proto_describe_quorum_resp_partition_data_t *pd = &resp.topics.v[0].partitions.v[0];
    if (!v->err)
        v->err = pd->error_code;
    v->leader = pd->leader_id;
    v->epoch = pd->leader_epoch;
    v->hw = pd->high_watermark;
    v->nvoters = pd->current_voters.n;
    v->nnodes = resp.nodes.n;
    for (int i = 0; i < pd->current_voters.n; i++) {
        int32_t id = pd->current_voters.v[i].replica_id;
        if (id >= 1 && id <= N) {
            v->end[id] = pd->current_voters.v[i].log_end_offset;
            v->fetch[id] = pd->current_voters.v[i].last_fetch_timestamp;
        }
    }
    arena_reset(&arena);
    return 0;
}

/* The node that describes the quorum as its leader at an epoch above
 * min_epoch, within timeout_s; 0 when none. */
static int find_leader(tl_cluster *c, int32_t min_epoch, double timeout_s, quorum_view *out)
{
    double until = tl_now() + timeout_s;
    while (tl_now() < until) {
        for (int id = 1; id <= N; id++) {
            tl_node *node = tl_cluster_node(c, id);
            quorum_view v;
            if (!tl_node_running(node) || node->paused || describe(node, &v) < 0)
                continue;
            if (v.err == 0 && v.leader == id && v.epoch > min_epoch) {
                *out = v;
                return id;
            }
        }
        usleep(20000);
    }
    return 0;
}

/* A new leader knows the high watermark only once a majority has fetched
 * in its epoch (until then DescribeQuorum shows -1): waits for that, 10 s
 * at most, and returns the leader's view. */
static void wait_hw_known(tl_cluster *c, int leader, quorum_view *v)
{
    double until = tl_now() + 10;
    while (v->hw < 0 && tl_now() < until) {
        usleep(20000);
        if (describe(tl_cluster_node(c, leader), v) < 0 || v->err || v->leader != leader)
            v->hw = -1;
    }
}

static void check_leader_view(const quorum_view *v)
{
    TL_ASSERT_EQ(v->nvoters, N);
    TL_ASSERT(v->nnodes == N, "Nodes: %d endpoints, want one per voter", v->nnodes);
    TL_ASSERT(v->hw >= 1, "high watermark %lld: the epoch's first record commits",
              (long long)v->hw);
}

static void check_follower_answer(tl_cluster *c, int leader)
{
    for (int id = 1; id <= N; id++) {
        quorum_view v;
        if (id == leader || describe(tl_cluster_node(c, id), &v) < 0)
            continue;
        TL_ASSERT(v.err == KERR_NOT_LEADER_OR_FOLLOWER, "node %d: DescribeQuorum error %d", id,
                  v.err);
    }
}

/* DescribeCluster on the controller listener: the active controller and
 * the controllers, once each has registered (Kafka lists a controller from
 * its ControllerRegistrationRecord, which it sends after it starts, names
 * the leader as the active controller only once it is listed, and answers
 * UNSUPPORTED_VERSION until it has applied a metadata.version). */
static void check_describe_cluster(tl_cluster *c, int leader)
{
    proto_describe_cluster_req_t req;
    proto_describe_cluster_resp_t resp;
    double until = tl_now() + 20;
    for (;;) {
        int fd = tl_connect(tl_cluster_node(c, leader)->controller, 2000);
        TL_ASSERT(fd >= 0, "connect");
        proto_describe_cluster_req_init(&req);
        req.endpoint_type = 2;
        TL_WIRE_CALL(fd, &arena, describe_cluster, 60, 1, &req, &resp);
        close(fd);
        if ((!resp.error_code && resp.controller_id == leader && resp.brokers.n == N) ||
            tl_now() > until)
            break;
        arena_reset(&arena);
        usleep(50000);
    }
    TL_ASSERT_EQ(resp.error_code, 0);
    TL_ASSERT(resp.controller_id == leader, "active controller %d, leader %d", resp.controller_id,
              leader);
    TL_ASSERT_EQ(resp.brokers.n, N);
    arena_reset(&arena);
}

/* log.retention.ms of the cluster-wide broker default set on node: the
 * resource's error code. */
static int16_t alter_default(tl_node *node, const char *value)
{
    proto_incremental_alter_configs_req_t req;
    proto_incremental_alter_configs_req_alter_configs_resource_t res;
    proto_incremental_alter_configs_req_alterable_config_t kv;
    proto_incremental_alter_configs_resp_t resp;
    int fd = tl_connect(node->controller, 2000);
    TL_ASSERT(fd >= 0, "connect to node %d", node->id);
    proto_incremental_alter_configs_req_init(&req);
    proto_incremental_alter_configs_req_alter_configs_resource_init(&res);
    proto_incremental_alter_configs_req_alterable_config_init(&kv);
    kv.name = tl_wire_str("log.retention.ms");
    kv.config_operation = 0;
    kv.value = tl_wire_str(value);
    res.resource_type = 4;
    res.resource_name = tl_wire_str("");
    res.configs.n = 1;
    res.configs.v = &kv;
    req.resources.n = 1;
    req.resources.v = &res;
    TL_WIRE_CALL(fd, &arena, incremental_alter_configs, 44, 1, &req, &resp);
    close(fd);
    TL_ASSERT_EQ(resp.responses.n, 1);
    int16_t err = resp.responses.v[0].error_code;
    arena_reset(&arena);
    return err;
}

/* The cluster-wide log.retention.ms as node describes it ("" if unset). */
static void describe_default(tl_node *node, char *out, size_t cap)
{
    proto_describe_configs_req_t req;
    proto_describe_configs_req_describe_configs_resource_t res;
    proto_describe_configs_resp_t resp;
    proto_str_t key = tl_wire_str("log.retention.ms");
    int fd = tl_connect(node->controller, 2000);
    TL_ASSERT(fd >= 0, "connect to node %d", node->id);
    proto_describe_configs_req_init(&req);
    proto_describe_configs_req_describe_configs_resource_init(&res);
    res.resource_type = 4;
    res.resource_name = tl_wire_str("");
    res.configuration_keys.n = 1;
    res.configuration_keys.v = &key;
    req.resources.n = 1;
    req.resources.v = &res;
    TL_WIRE_CALL(fd, &arena, describe_configs, 32, 4, &req, &resp);
    close(fd);
    out[0] = '\0';
    if (resp.results.n == 1 && resp.results.v[0].configs.n == 1) {
        proto_str_t v = resp.results.v[0].configs.v[0].value;
        snprintf(out, cap, "%.*s", v.len > 0 ? (int)v.len : 0, v.len > 0 ? v.p : "");
    }
    arena_reset(&arena);
}

/* Every running controller describes log.retention.ms = want, within 10 s. */
static void wait_default(tl_cluster *c, const char *want)
{
    char got[64] = "";
    for (int id = 1; id <= N; id++) {
        tl_node *node = tl_cluster_node(c, id);
        double until = tl_now() + 10;
        if (!tl_node_running(node) || node->paused)
            continue;
        while (tl_now() < until) {
            describe_default(node, got, sizeof(got));
            if (!strcmp(got, want))
                break;
            usleep(50000);
        }
        TL_ASSERT(!strcmp(got, want), "node %d: log.retention.ms '%s', want '%s'", id, got, want);
    }
}

/* CreateTopics on the leader: no broker is registered with this quorum. */
static void check_create_without_brokers(tl_node *node)
{
    proto_create_topics_req_t req;
    proto_create_topics_req_creatable_topic_t t;
    proto_create_topics_resp_t resp;
    int fd = tl_connect(node->controller, 2000);
    TL_ASSERT(fd >= 0, "connect");
    proto_create_topics_req_init(&req);
    proto_create_topics_req_creatable_topic_init(&t);
    t.name = tl_wire_str("no-brokers");
    t.num_partitions = 1;
    t.replication_factor = 1;
    req.topics.n = 1;
    req.topics.v = &t;
    req.timeout_ms = 10000;
    TL_WIRE_CALL(fd, &arena, create_topics, 19, 7, &req, &resp);
    close(fd);
    TL_ASSERT_EQ(resp.topics.n, 1);
    TL_ASSERT(resp.topics.v[0].error_code == KERR_INVALID_REPLICATION_FACTOR,
              "CreateTopics without brokers: error %d", resp.topics.v[0].error_code);
    arena_reset(&arena);
}

/* Waits until the leader sees voter id's log end at its high watermark. */
static void wait_caught_up(tl_cluster *c, int id, double timeout_s)
{
    double until = tl_now() + timeout_s;
    quorum_view v;
    int leader = 0;
    while (tl_now() < until) {
        leader = find_leader(c, -1, 5, &v);
        if (leader && v.end[id] >= v.hw && v.hw > 0)
            return;
        usleep(50000);
    }
    tl_fail("node %d not caught up (leader %d: end %lld, high watermark %lld)", id, leader,
            (long long)v.end[id], (long long)v.hw);
}

int main(void)
{
    quorum_view v, w;
    tl_init("0710-quorum-controllers");
    arena_init(&arena, 1 << 16);
    tl_cluster *c = tl_cluster_new("0710-quorum", TL_QUORUM_SHARED);
    tl_cluster_add_n(c, N, TL_ROLE_CONTROLLER, NULL);
    double t0 = tl_now();
    tl_cluster_start(c);
    double t1 = tl_now(); /* every node listens (a JVM takes seconds to) */
    int leader = find_leader(c, -1, 60, &v);
    TL_ASSERT(leader, "no leader elected within 60 s");
    tl_log("leader %d elected at epoch %d, %.0f ms after the start, %.0f ms after all listen",
           leader, v.epoch, (tl_now() - t0) * 1000, (tl_now() - t1) * 1000);
    for (int id = 1; id <= N; id++)
        wait_caught_up(c, id, 20);
    TL_ASSERT(find_leader(c, -1, 10, &v) == leader, "leader moved");
    check_leader_view(&v);
    check_follower_answer(c, leader);
    check_describe_cluster(c, leader);
    TL_ASSERT_EQ(alter_default(tl_cluster_node(c, leader % N + 1), "1111111"),
                 KERR_NOT_CONTROLLER);
    TL_ASSERT_EQ(alter_default(tl_cluster_node(c, leader), "2222222"), 0);
    wait_default(c, "2222222");
    check_create_without_brokers(tl_cluster_node(c, leader));

    /* kill -9 of the leader */
    int32_t old_epoch = v.epoch;
    int64_t old_hw = v.hw;
    int old = leader;
    t0 = tl_now();
    tl_node_kill9(tl_cluster_node(c, old));
    leader = find_leader(c, old_epoch, 60, &v);
    TL_ASSERT(leader && leader != old, "no new leader after the kill");
    tl_log("failover: leader %d at epoch %d, %.0f ms after kill -9 of %d", leader, v.epoch,
           (tl_now() - t0) * 1000, old);
    wait_hw_known(c, leader, &v);
    TL_ASSERT(v.hw >= old_hw, "high watermark went back: %lld < %lld", (long long)v.hw,
              (long long)old_hw);
    /* the new leader is the active controller once it has applied its
     * predecessors' records: it may refuse for a moment */
    int16_t aerr = KERR_NOT_CONTROLLER;
    for (int i = 0; i < 100 && aerr == KERR_NOT_CONTROLLER; i++, usleep(50000))
        aerr = alter_default(tl_cluster_node(c, leader), "3333333");
    TL_ASSERT_EQ(aerr, 0);
    wait_default(c, "3333333");

    /* it comes back and catches up */
    tl_node_restart(tl_cluster_node(c, old));
    wait_caught_up(c, old, 30);
    wait_default(c, "3333333");
    tl_log("node %d restarted and caught up", old);

    /* a paused follower stops fetching */
    int f = leader % N + 1;
    TL_ASSERT(find_leader(c, -1, 10, &v) == leader, "leader moved");
    tl_node_pause(tl_cluster_node(c, f));
    /* past the longest a fetch sent before the pause can wait at the
     * leader (its 500 ms long poll) */
    usleep(1000000);
    find_leader(c, -1, 10, &v);
    usleep(1200000);
    find_leader(c, -1, 10, &w);
    TL_ASSERT(w.fetch[f] == v.fetch[f], "paused node %d fetched: %lld -> %lld", f,
              (long long)v.fetch[f], (long long)w.fetch[f]);
    tl_node_resume(tl_cluster_node(c, f));
    usleep(1500000);
    find_leader(c, -1, 10, &w);
    TL_ASSERT(w.fetch[f] > v.fetch[f], "resumed node %d does not fetch", f);
    wait_caught_up(c, f, 20);

    tl_cluster_stop(c);
    tl_cluster_free(c);
    arena_destroy(&arena);
    return tl_done();
}
