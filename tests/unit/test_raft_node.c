/* The Raft node (cluster/raft_node.c) with real metadata logs on disk,
 * the worker pool and an event loop, three voters exchanging Kafka's
 * KRaft messages through an in-process transport (every request and
 * answer is encoded, delayed a millisecond, and decoded): a leader is
 * elected; proposals commit on every node and their logs are the same
 * bytes, starting with the epoch's LeaderChangeMessage; quorum-state
 * files name the leader; the leader killed (its log freed unflushed),
 * the other two elect another and go on; the killed one restarts from
 * its directory and catches up to the same bytes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cluster/raft_node.h"
#include "cluster/raft_state.h"
#include "log/log_batch.h"
#include "proto/proto.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_log.h"

#define N 3

typedef struct tnode_s {
    int id;
    char dir[256];
    log_t *log;
    raft_node_t *node;
    int64_t hw;
} tnode_t;

enum { TM_QUEUED, TM_AT_DEST, TM_REPLIED, TM_DONE };

typedef struct tmsg_s {
    int state;
    int from, to;
    int16_t api, ver;
    buf_t body;
    raft_resp_fn *cb;
    void *arg;
    struct tmsg_s *next;
} tmsg_t;

static net_loop_t *loop;
static net_pool_t *pool;
static tnode_t nodes[N + 1];
static tmsg_t *msgs;
static char root[] = "/tmp/raft-node-XXXXXX";

static void finish(tmsg_t *m, int with_body)
{
    m->state = TM_DONE;
    m->cb(m->arg, with_body ? m->body.p : NULL, with_body ? m->body.len : 0);
}

static void on_reply(void *arg, buf_t *body)
{
    tmsg_t *m = arg;
    buf_free(&m->body);
    m->body = *body;
    m->state = TM_REPLIED;
}

static void deliver(tmsg_t *m)
{
    tnode_t *to = &nodes[m->to];
    if (!to->node) {
        finish(m, 0);
        return;
    }
    m->state = TM_AT_DEST;
    if (raft_node_request(to->node, m->api, m->ver, m->body.p, m->body.len, on_reply, m) < 0)
        finish(m, 0);
}

/* Every millisecond: requests delivered, answers handed back. */
static void pump(net_loop_t *l, void *data)
{
    (void)data;
    for (tmsg_t *m = msgs; m; m = m->next) {
        if (m->state == TM_QUEUED)
            deliver(m);
        else if (m->state == TM_REPLIED)
            finish(m, 1);
    }
    for (tmsg_t **pp = &msgs; *pp;) {
        tmsg_t *m = *pp;
        if (m->state != TM_DONE) {
            pp = &m->next;
            continue;
        }
        *pp = m->next;
        buf_free(&m->body);
        free(m);
    }
    net_timer_add(l, 1, pump, NULL);
}

static void t_send(void *ctx, int32_t node_id, int16_t api_key, int16_t version, buf_t *body,
                   raft_resp_fn *cb, void *arg)
{
    tmsg_t *m = calloc(1, sizeof(*m));
    m->from = (int)(intptr_t)ctx;
    m->to = node_id;
    m->api = api_key;
    m->ver = version;
    m->body = *body;
    m->cb = cb;
    m->arg = arg;
    m->next = msgs;
    msgs = m;
}

static void on_commit(void *ctx, int64_t hw)
{
    ((tnode_t *)ctx)->hw = hw;
}

static log_t *open_log(const char *dir)
{
    log_config_t c;
    log_open_args_t a = {"__cluster_metadata", 0, 0, -1, -1, 0, net_now_wall_ms()};
    log_config_defaults(&c);
    return log_open(dir, &c, &a);
}

static void start(int id)
{
    tnode_t *t = &nodes[id];
    raft_node_config_t cfg;
    raft_transport_t tr = {(void *)(intptr_t)id, t_send, NULL, NULL};
    raft_node_hooks_t hooks = {.ctx = t, .on_commit = on_commit};
    char err[256];
    memset(&cfg, 0, sizeof(cfg));
    cfg.raft.node_id = id;
    cfg.raft.nvoters = N;
    for (int i = 0; i < N; i++)
        cfg.raft.voters[i] = i + 1;
    cfg.raft.election_timeout_ms = 200;
    cfg.raft.fetch_timeout_ms = 400;
    cfg.raft.election_backoff_max_ms = 200;
    cfg.raft.request_timeout_ms = 500;
    cfg.raft.fetch_max_wait_ms = 100;
    cfg.wire.node_id = id;
    cfg.wire.cluster_id = "MkU3OEVBNTcwNTJENDM2Qg";
    cfg.seed = (uint64_t)id * 7919;
    t->id = id;
    t->hw = 0;
    t->log = open_log(t->dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t->log);
    t->node = raft_node_new(&cfg, t->log, loop, pool, &tr, &hooks, err, sizeof(err));
    if (!t->node)
        printf("raft_node_new: %s\n", err);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t->node);
}

/* kill -9: the node's requests in flight are answered with nothing, its
 * log is freed unflushed. */
static void kill_node(int id)
{
    tnode_t *t = &nodes[id];
    for (tmsg_t *m = msgs; m; m = m->next)
        if (m->from == id && m->state != TM_DONE)
            finish(m, 0);
    raft_node_free(t->node);
    t->node = NULL;
    for (tmsg_t *m = msgs; m; m = m->next)
        if (m->to == id && m->state == TM_AT_DEST)
            finish(m, 0);
    log_free(t->log);
    t->log = NULL;
}

typedef int cond_fn(void);
static cond_fn *want;
static int64_t give_up;

static void check(net_loop_t *l, void *data)
{
    (void)data;
    if (want() || net_now_wall_ms() > give_up) {
        net_loop_stop(l);
        return;
    }
    net_timer_add(l, 5, check, NULL);
}

static int run_until(cond_fn *fn, int ms)
{
    want = fn;
    give_up = net_now_wall_ms() + ms;
    net_timer_add(loop, 5, check, NULL);
    net_loop_run(loop);
    return fn();
}

static int leader(void)
{
    for (int i = 1; i <= N; i++)
        if (nodes[i].node && raft_role(raft_node_core(nodes[i].node)) == RAFT_LEADER)
            return i;
    return 0;
}

static int has_leader(void)
{
    return leader() != 0;
}

static int64_t target;

static int all_committed(void)
{
    for (int i = 1; i <= N; i++)
        if (nodes[i].node && nodes[i].hw < target)
            return 0;
    return 1;
}

static int32_t old_epoch;

static int new_leader(void)
{
    int l = leader();
    return l && raft_epoch(raft_node_core(nodes[l].node)) > old_epoch;
}

/* Every node's committed log, read whole. */
static void committed_bytes(int id, buf_t *out)
{
    int64_t off = 0;
    raft_batch_t b[64];
    while (off < nodes[id].hw) {
        size_t at = out->len;
        CU_ASSERT_EQUAL_FATAL(raft_node_read(nodes[id].node, off, 1 << 20, out), 0);
        int n = raft_wire_batches(out->p + at, out->len - at, b, 64);
        CU_ASSERT_FATAL(n > 0);
        off = b[n - 1].last + 1;
    }
}

static void same_logs(void)
{
    buf_t first, other;
    buf_init(&first);
    committed_bytes(1, &first);
    CU_ASSERT(first.len > 0);
    for (int i = 2; i <= N; i++) {
        buf_init(&other);
        committed_bytes(i, &other);
        CU_ASSERT_EQUAL(other.len, first.len);
        CU_ASSERT(other.len == first.len && memcmp(other.p, first.p, first.len) == 0);
        buf_free(&other);
    }
    /* the first batch is the first epoch's LeaderChangeMessage */
    log_batch_hdr_t h;
    CU_ASSERT_EQUAL_FATAL(log_batch_hdr_parse(first.p, first.len, &h), 0);
    CU_ASSERT(LOG_BATCH_ATTR_IS_CONTROL(h.attributes));
    CU_ASSERT(h.leader_epoch >= 1);
    buf_free(&first);
}

static void propose(int count)
{
    meta_rec_t recs[3];
    int l = leader();
    CU_ASSERT_FATAL(l != 0);
    for (int i = 0; i < 3; i++)
        meta_rec_init(&recs[i], PROTO_REC_NO_OP_RECORD);
    for (int i = 0; i < count; i++)
        target = raft_node_propose(nodes[l].node, recs, 3) + 1;
    CU_ASSERT(target > 0);
}

static void test_quorum(void)
{
    for (int i = 1; i <= N; i++)
        start(i);
    CU_ASSERT_FATAL(run_until(has_leader, 10000));
    int l = leader();
    propose(20);
    CU_ASSERT_FATAL(run_until(all_committed, 10000));
    same_logs();

    /* quorum-state names the epoch and its leader */
    raft_qstate_t st;
    char err[256];
    CU_ASSERT_EQUAL(raft_qstate_read(nodes[l].dir, &st, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(st.leader_id, l);
    CU_ASSERT_EQUAL(st.epoch, raft_epoch(raft_node_core(nodes[l].node)));
    CU_ASSERT_EQUAL(st.nvoters, N);

    /* the leader dies; the others elect another and go on */
    old_epoch = raft_epoch(raft_node_core(nodes[l].node));
    kill_node(l);
    CU_ASSERT_FATAL(run_until(new_leader, 10000));
    propose(10);
    CU_ASSERT_FATAL(run_until(all_committed, 10000));

    /* it comes back and catches up */
    start(l);
    CU_ASSERT(run_until(all_committed, 10000));
    same_logs();
    for (int i = 1; i <= N; i++)
        kill_node(i);
}

static int setup(void)
{
    if (!mkdtemp(root))
        return 1;
    for (int i = 1; i <= N; i++) {
        snprintf(nodes[i].dir, sizeof(nodes[i].dir), "%s/n%d/__cluster_metadata-0", root, i);
        char parent[256];
        snprintf(parent, sizeof(parent), "%s/n%d", root, i);
        mkdir(parent, 0755);
        mkdir(nodes[i].dir, 0755);
    }
    loop = net_loop_new();
    pool = net_pool_new(loop, 2, NULL);
    net_timer_add(loop, 1, pump, NULL);
    return loop && pool ? 0 : 1;
}

static int teardown(void)
{
    /* answers still queued go to nodes that are gone: drop them */
    while (msgs) {
        tmsg_t *m = msgs;
        msgs = m->next;
        buf_free(&m->body);
        free(m);
    }
    net_pool_free(pool);
    net_loop_free(loop);
    unit_rm_rf(root);
    return 0;
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("raft_node", setup, teardown);
    CU_add_test(s, "three voters on disk: elect, commit, fail over, catch up", test_quorum);
    return unit_run();
}
