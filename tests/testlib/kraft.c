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

void tl_kraft_describe_default(tl_node *node, char *out, size_t cap)
{
    proto_describe_configs_req_t req;
    proto_describe_configs_req_describe_configs_resource_t res;
    proto_describe_configs_resp_t resp;
    proto_str_t key = tl_wire_str("log.retention.ms");
    arena_t arena;
    int fd = tl_connect(node->controller, 2000);
    TL_ASSERT(fd >= 0, "connect to node %d", node->id);
    arena_init(&arena, 1 << 14);
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
    arena_destroy(&arena);
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
