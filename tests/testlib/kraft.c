/* kraft: see kraft.h. */
#include "testlib/kraft.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proto/proto.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"
#include "util/kerr.h"

static void tl_kraft_fill(const proto_describe_quorum_resp_t *resp, tl_kraft_view *v)
{
    const proto_describe_quorum_resp_partition_data_t *pd;
    memset(v, 0, sizeof(*v));
    v->err = resp->error_code;
    TL_ASSERT(resp->topics.n == 1 && resp->topics.v[0].partitions.n == 1, "one partition");
    pd = &resp->topics.v[0].partitions.v[0];
    if (!v->err)
        v->err = pd->error_code;
    v->leader = pd->leader_id;
    v->epoch = pd->leader_epoch;
    v->hw = pd->high_watermark;
    v->nvoters = pd->current_voters.n;
    v->nnodes = resp->nodes.n;
    for (int i = 0; i < pd->current_voters.n; i++) {
        int32_t id = pd->current_voters.v[i].replica_id;
        if (id >= 1 && id <= TL_CLUSTER_MAX) {
            v->end[id] = pd->current_voters.v[i].log_end_offset;
            v->fetch[id] = pd->current_voters.v[i].last_fetch_timestamp;
        }
    }
}

int tl_kraft_describe(tl_node *node, tl_kraft_view *v)
{
    proto_describe_quorum_req_t req;
    proto_describe_quorum_req_topic_data_t t;
    proto_describe_quorum_req_partition_data_t p;
    proto_describe_quorum_resp_t resp;
    arena_t arena;
    int fd = tl_connect(node->controller, 2000);
    if (fd < 0)
        return -1;
    arena_init(&arena, 1 << 14);
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
    tl_kraft_fill(&resp, v);
    arena_destroy(&arena);
    return 0;
}

int tl_kraft_find_leader(tl_cluster *c, int32_t min_epoch, double timeout_s, tl_kraft_view *out)
{
    double until = tl_now() + timeout_s;
    while (tl_now() < until) {
        for (int id = 1; id <= tl_cluster_size(c); id++) {
            tl_node *node = tl_cluster_node(c, id);
            tl_kraft_view v;
            if (!node->controller[0] || !tl_node_running(node) || node->paused ||
                tl_kraft_describe(node, &v) < 0)
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

int tl_kraft_start(tl_cluster *c, tl_kraft_view *v)
{
    double t0 = tl_now();
    tl_cluster_start(c);
    double t1 = tl_now(); /* every node listens (a JVM takes seconds to) */
    int leader = tl_kraft_find_leader(c, -1, 60, v);
    TL_ASSERT(leader, "no leader elected within 60 s");
    tl_log("leader %d elected at epoch %d, %.0f ms after the start, %.0f ms after all listen",
           leader, v->epoch, (tl_now() - t0) * 1000, (tl_now() - t1) * 1000);
    for (int id = 1; id <= tl_cluster_size(c); id++)
        if (tl_cluster_node(c, id)->controller[0])
            tl_kraft_wait_caught_up(c, id, 20);
    TL_ASSERT(tl_kraft_find_leader(c, -1, 10, v) == leader, "leader moved");
    return leader;
}

int tl_kraft_failover(tl_cluster *c, int leader, tl_kraft_view *v)
{
    int32_t old_epoch = v->epoch;
    double t0 = tl_now();
    tl_node_kill9(tl_cluster_node(c, leader));
    int next = tl_kraft_find_leader(c, old_epoch, 60, v);
    TL_ASSERT(next && next != leader, "no new leader after the kill");
    tl_log("failover: leader %d at epoch %d, %.0f ms after kill -9 of %d (high watermark %lld)",
           next, v->epoch, (tl_now() - t0) * 1000, leader, (long long)v->hw);
    return next;
}

void tl_kraft_wait_hw(tl_cluster *c, int leader, tl_kraft_view *v)
{
    double until = tl_now() + 10;
    while (v->hw < 0 && tl_now() < until) {
        usleep(20000);
        if (tl_kraft_describe(tl_cluster_node(c, leader), v) < 0 || v->err || v->leader != leader)
            v->hw = -1;
    }
}

void tl_kraft_wait_caught_up(tl_cluster *c, int id, double timeout_s)
{
    double until = tl_now() + timeout_s;
    tl_kraft_view v;
    int leader = 0;
    memset(&v, 0, sizeof(v));
    while (tl_now() < until) {
        leader = tl_kraft_find_leader(c, -1, 5, &v);
        if (leader && v.end[id] >= v.hw && v.hw > 0)
            return;
        usleep(50000);
    }
    tl_fail("node %d not caught up (leader %d: end %lld, high watermark %lld)", id, leader,
            (long long)v.end[id], (long long)v.hw);
}

int16_t tl_kraft_alter_default(tl_node *node, const char *value)
{
    proto_incremental_alter_configs_req_t req;
    proto_incremental_alter_configs_req_alter_configs_resource_t res;
    proto_incremental_alter_configs_req_alterable_config_t kv;
    proto_incremental_alter_configs_resp_t resp;
    arena_t arena;
    int16_t err;
    int fd = tl_connect(node->controller, 2000);
    TL_ASSERT(fd >= 0, "connect to node %d", node->id);
    arena_init(&arena, 1 << 12);
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
    err = resp.responses.v[0].error_code;
    arena_destroy(&arena);
    return err;
}

int16_t tl_kraft_alter_default_retry(tl_node *node, const char *value)
{
    int16_t err = KERR_NOT_CONTROLLER;
    for (int i = 0; i < 100 && err == KERR_NOT_CONTROLLER; i++) {
        if (i)
            usleep(50000);
        err = tl_kraft_alter_default(node, value);
    }
    return err;
}

int16_t tl_kraft_describe_config(const char *addr, int8_t type, const char *name,
                                 const char *key, char *out, size_t cap)
{
    proto_describe_configs_req_t req;
    proto_describe_configs_req_describe_configs_resource_t res;
    proto_describe_configs_resp_t resp;
    proto_str_t k = tl_wire_str(key);
    int16_t err;
    arena_t arena;
    int fd = tl_connect(addr, 5000);
    TL_ASSERT(fd >= 0, "connect to %s", addr);
    arena_init(&arena, 1 << 14);
    proto_describe_configs_req_init(&req);
    proto_describe_configs_req_describe_configs_resource_init(&res);
    res.resource_type = type;
    res.resource_name = tl_wire_str(name);
    res.configuration_keys.n = 1;
    res.configuration_keys.v = &k;
    req.resources.n = 1;
    req.resources.v = &res;
    TL_WIRE_CALL(fd, &arena, describe_configs, 32, 4, &req, &resp);
    close(fd);
    out[0] = '\0';
    TL_ASSERT(resp.results.n == 1, "DescribeConfigs: %d results", resp.results.n);
    err = resp.results.v[0].error_code;
    for (int i = 0; !err && i < resp.results.v[0].configs.n; i++) {
        const proto_describe_configs_resp_describe_configs_resource_result_t *r =
            &resp.results.v[0].configs.v[i];
        if (r->name.len == (int32_t)strlen(key) && !memcmp(r->name.p, key, (size_t)r->name.len))
            snprintf(out, cap, "%.*s", r->value.len > 0 ? (int)r->value.len : 0,
                     r->value.len > 0 ? r->value.p : "");
    }
    arena_destroy(&arena);
    return err;
}

void tl_kraft_describe_default(tl_node *node, char *out, size_t cap)
{
    tl_kraft_describe_config(node->controller, 4, "", "log.retention.ms", out, cap);
}

void tl_kraft_wait_default(tl_cluster *c, const char *want)
{
    char got[64] = "";
    for (int id = 1; id <= tl_cluster_size(c); id++) {
        tl_node *node = tl_cluster_node(c, id);
        double until = tl_now() + 10;
        if (!node->controller[0] || !tl_node_running(node) || node->paused)
            continue;
        while (tl_now() < until) {
            tl_kraft_describe_default(node, got, sizeof(got));
            if (!strcmp(got, want))
                break;
            usleep(50000);
        }
        TL_ASSERT(!strcmp(got, want), "node %d: log.retention.ms '%s', want '%s'", id, got, want);
    }
}

int tl_kraft_describe_cluster(tl_node *node, int controllers, tl_kraft_nodes *out)
{
    proto_describe_cluster_req_t req;
    proto_describe_cluster_resp_t resp;
    arena_t arena;
    int fd = tl_connect(controllers ? node->controller : node->bootstrap, 2000);
    memset(out, 0, sizeof(*out));
    for (int i = 0; i <= TL_CLUSTER_MAX; i++)
        out->state[i] = -1;
    if (fd < 0)
        return -1;
    arena_init(&arena, 1 << 14);
    proto_describe_cluster_req_init(&req);
    if (controllers) {
        req.endpoint_type = 2;
        TL_WIRE_CALL(fd, &arena, describe_cluster, 60, 1, &req, &resp);
    } else {
        req.include_fenced_brokers = true;
        TL_WIRE_CALL(fd, &arena, describe_cluster, 60, 2, &req, &resp);
    }
    close(fd);
    out->err = resp.error_code;
    out->controller = resp.controller_id;
    out->n = resp.brokers.n;
    for (int i = 0; i < resp.brokers.n; i++) {
        int32_t id = resp.brokers.v[i].broker_id;
        if (id >= 1 && id <= TL_CLUSTER_MAX)
            out->state[id] = resp.brokers.v[i].is_fenced ? 1 : 0;
    }
    arena_destroy(&arena);
    return 0;
}

int tl_kraft_active_controller(tl_cluster *c)
{
    tl_kraft_nodes v;
    for (int id = 1; id <= tl_cluster_size(c); id++) {
        tl_node *node = tl_cluster_node(c, id);
        if (!node->controller[0] || !tl_node_running(node) || node->paused ||
            tl_kraft_describe_cluster(node, 1, &v) < 0)
            continue;
        if (!v.err && v.controller >= 1 && v.controller <= tl_cluster_size(c) &&
            tl_cluster_node(c, v.controller)->controller[0])
            return v.controller;
    }
    return 0;
}

double tl_kraft_wait_fenced(tl_node *via, int id, int fenced, double timeout_s)
{
    double t0 = tl_now(), until = t0 + timeout_s;
    tl_kraft_nodes v;
    while (tl_now() < until) {
        if (tl_kraft_describe_cluster(via, 0, &v) == 0 && v.state[id] == fenced)
            return tl_now() - t0;
        usleep(50000);
    }
    tl_fail("broker %d not %s within %.0f s (via node %d)", id, fenced ? "fenced" : "unfenced",
            timeout_s, via->id);
}

int16_t tl_kraft_create_topic(const char *addr, const char *name, int32_t partitions,
                              int16_t replication)
{
    proto_create_topics_req_t req;
    proto_create_topics_req_creatable_topic_t t;
    proto_create_topics_resp_t resp;
    arena_t arena;
    int16_t err;
    int fd = tl_connect(addr, 2000);
    TL_ASSERT(fd >= 0, "connect to %s", addr);
    arena_init(&arena, 1 << 14);
    proto_create_topics_req_init(&req);
    proto_create_topics_req_creatable_topic_init(&t);
    t.name = tl_wire_str(name);
    t.num_partitions = partitions;
    t.replication_factor = replication;
    req.topics.n = 1;
    req.topics.v = &t;
    req.timeout_ms = 10000;
    TL_WIRE_CALL(fd, &arena, create_topics, 19, 7, &req, &resp);
    close(fd);
    TL_ASSERT_EQ(resp.topics.n, 1);
    err = resp.topics.v[0].error_code;
    arena_destroy(&arena);
    return err;
}

int16_t tl_kraft_delete_topic(const char *addr, const char *name)
{
    proto_delete_topics_req_t req;
    proto_delete_topics_req_delete_topic_state_t t;
    proto_delete_topics_resp_t resp;
    arena_t arena;
    int16_t err;
    int fd = tl_connect(addr, 2000);
    TL_ASSERT(fd >= 0, "connect to %s", addr);
    arena_init(&arena, 1 << 14);
    proto_delete_topics_req_init(&req);
    proto_delete_topics_req_delete_topic_state_init(&t);
    t.name = tl_wire_str(name);
    req.topics.n = 1;
    req.topics.v = &t;
    req.timeout_ms = 30000;
    TL_WIRE_CALL(fd, &arena, delete_topics, 20, 6, &req, &resp);
    close(fd);
    TL_ASSERT_EQ(resp.responses.n, 1);
    err = resp.responses.v[0].error_code;
    arena_destroy(&arena);
    return err;
}

static void tl_kraft_topic_fill(const proto_metadata_resp_t *resp, tl_kraft_topic *out)
{
    if (resp->topics.n != 1)
        return;
    const proto_metadata_resp_metadata_response_topic_t *t = &resp->topics.v[0];
    if (t->error_code || t->partitions.n > TL_KRAFT_MAX_PARTS)
        return;
    for (int i = 0; i < t->partitions.n; i++) {
        const proto_metadata_resp_metadata_response_partition_t *p = &t->partitions.v[i];
        int32_t idx = p->partition_index;
        if (idx < 0 || idx >= t->partitions.n || p->replica_nodes.n > TL_CLUSTER_MAX ||
            p->isr_nodes.n > TL_CLUSTER_MAX)
            return;
        out->nisr[idx] = p->isr_nodes.n;
        for (int r = 0; r < p->isr_nodes.n; r++)
            out->isr[idx][r] = p->isr_nodes.v[r];
        out->leader[idx] = p->leader_id;
        out->nrep[idx] = p->replica_nodes.n;
        for (int r = 0; r < p->replica_nodes.n; r++)
            out->rep[idx][r] = p->replica_nodes.v[r];
    }
    out->npart = t->partitions.n;
}

int tl_kraft_metadata(tl_node *node, const char *topic, tl_kraft_topic *out)
{
    proto_metadata_req_t req;
    proto_metadata_req_metadata_request_topic_t t;
    proto_metadata_resp_t resp;
    arena_t arena;
    int fd = tl_connect(node->bootstrap, 2000);
    memset(out, 0, sizeof(*out));
    if (fd < 0)
        return -1;
    arena_init(&arena, 1 << 14);
    proto_metadata_req_init(&req);
    memset(&t, 0, sizeof(t));
    t.name = tl_wire_str(topic);
    req.topics.n = 1;
    req.topics.v = &t;
    req.allow_auto_topic_creation = false;
    TL_WIRE_CALL(fd, &arena, metadata, 3, 12, &req, &resp);
    close(fd);
    tl_kraft_topic_fill(&resp, out);
    arena_destroy(&arena);
    return 0;
}

tl_node *tl_kraft_other(tl_cluster *c, int skip)
{
    for (int id = 1; id <= tl_cluster_size(c); id++) {
        tl_node *node = tl_cluster_node(c, id);
        if (id != skip && node->bootstrap[0] && tl_node_running(node) && !node->paused)
            return node;
    }
    tl_fail("no running broker but %d", skip);
}

int tl_kraft_isr_whole(tl_cluster *c, const char *topic, int nparts, int n)
{
    tl_kraft_topic t;
    memset(&t, 0, sizeof(t));
    if (tl_kraft_metadata(tl_kraft_other(c, -1), topic, &t) || t.npart != nparts)
        return 0;
    for (int p = 0; p < nparts; p++)
        if (t.leader[p] < 0 || t.nisr[p] != n)
            return 0;
    return 1;
}

int32_t tl_kraft_leader_of(tl_cluster *c, const char *topic, int32_t p)
{
    tl_kraft_topic t;
    memset(&t, 0, sizeof(t));
    if (tl_kraft_metadata(tl_kraft_other(c, -1), topic, &t) || t.npart <= p)
        return -1;
    return t.leader[p];
}

int tl_kraft_is_fenced(tl_cluster *c, int id)
{
    tl_kraft_nodes n;
    return tl_kraft_describe_cluster(tl_kraft_other(c, id), 0, &n) == 0 && n.state[id] == 1;
}

int32_t tl_kraft_group_partition(const char *group, int32_t n)
{
    uint32_t h = 0;
    for (const char *p = group; *p; p++)
        h = 31 * h + (uint8_t)*p;
    if (h & 0x80000000u) /* Kafka's Utils.abs: the magnitude, MIN_VALUE 0 */
        h = h == 0x80000000u ? 0 : ~h + 1;
    return (int32_t)(h % (uint32_t)n);
}

int tl_kraft_start_topic(tl_cluster *c, const char *topic, int32_t nparts, int16_t rf)
{
    tl_kraft_view v;
    tl_kraft_start(c, &v);
    tl_node *first = tl_kraft_other(c, -1);
    for (int id = 1; id <= tl_cluster_size(c); id++)
        if (tl_cluster_node(c, id)->bootstrap[0])
            tl_kraft_wait_fenced(first, id, 0, 120);
    int16_t err = tl_kraft_create_topic(first->bootstrap, topic, nparts, rf);
    TL_ASSERT(err == 0, "CreateTopics %s: error %d", topic, err);
    return first->id;
}
