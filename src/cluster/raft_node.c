/* The Raft node (raft_node.h): the core's outputs turned into messages
 * and disk work, the answers and requests of other nodes fed back in,
 * and the timer that ticks the core. The disk is raft_node_disk.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_log.h"
#include "cluster/raft_node_int.h"
#include "proto/proto.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

/* A request sent, until its answer comes back. */
typedef struct rn_call_s {
    raft_node_t *node;
    raft_msg_t req;
    int16_t version;
} rn_call_t;

/* The core's clock is the wall clock: DescribeQuorum reports its fetch
 * times as Kafka does, in epoch milliseconds. */
int64_t rn_now(void)
{
    return net_now_wall_ms();
}

static uint64_t rn_rand(void *arg)
{
    uint64_t *s = arg;
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int16_t rn_version(int type)
{
    switch (type) {
    case RAFT_VOTE_REQ:
        return RAFT_WIRE_VOTE_VERSION;
    case RAFT_BEGIN_REQ:
        return RAFT_WIRE_BEGIN_VERSION;
    case RAFT_END_REQ:
        return RAFT_WIRE_END_VERSION;
    default:
        return RAFT_WIRE_FETCH_VERSION;
    }
}

/* ---- answers to the requests we sent ---- */

/* The records of a fetch answer split into batches, kept while the core
 * takes them (its APPEND names batches of this list). */
static int rn_rx_begin(raft_node_t *node, raft_msg_t *msg, const uint8_t *rec, size_t len)
{
    int cap = (int)(len / 61) + 1, n;
    node->rx_batches = xmalloc((size_t)cap * sizeof(*node->rx_batches));
    node->rx_pos = xmalloc((size_t)(cap + 1) * sizeof(*node->rx_pos));
    n = raft_wire_batches(rec, len, node->rx_batches, cap);
    if (n < 0)
        return -1;
    size_t pos = 0;
    for (int i = 0; i < n; i++) {
        node->rx_pos[i] = pos;
        pos += 12 + (size_t)((uint32_t)rec[pos + 8] << 24 | (uint32_t)rec[pos + 9] << 16 |
                             (uint32_t)rec[pos + 10] << 8 | rec[pos + 11]);
    }
    node->rx_pos[n] = pos;
    node->rx_records = rec;
    msg->batches = node->rx_batches;
    msg->nbatches = n;
    return 0;
}

static void rn_rx_end(raft_node_t *node)
{
    free(node->rx_batches);
    free(node->rx_pos);
    node->rx_batches = NULL;
    node->rx_pos = NULL;
    node->rx_records = NULL;
}

/* No answer: a fetch is told it failed (the core backs off and fetches
 * again); a lost vote or notice needs nothing, the timers cover it. */
static void rn_no_answer(raft_node_t *node, const rn_call_t *call)
{
    if (call->req.type != RAFT_FETCH_REQ)
        return;
    raft_msg_t msg;
    memset(&msg, 0, sizeof(msg));
    msg.type = RAFT_FETCH_RESP;
    msg.src = call->req.dst;
    msg.dst = call->req.src;
    msg.err = KERR_NETWORK_EXCEPTION;
    msg.epoch = call->req.epoch;
    msg.leader_id = -1;
    msg.div_end = msg.snap_end = -1;
    raft_recv(node->raft, &msg, rn_now());
}

static void rn_answer(void *arg, const uint8_t *body, size_t len)
{
    rn_call_t *call = arg;
    raft_node_t *node = call->node;
    arena_t arena;
    raft_msg_t msg;
    const uint8_t *rec;
    size_t rec_len;

    node->inflight--;
    if (!body) {
        rn_no_answer(node, call);
    } else {
        arena_init(&arena, 1024);
        if (raft_wire_decode_resp(&call->req, call->version, body, len, &arena, &msg, &rec,
                                  &rec_len) < 0 ||
            rn_rx_begin(node, &msg, rec, rec_len) < 0) {
            lg_warn("metadata quorum: malformed answer from node %d", call->req.dst);
            rn_no_answer(node, call);
        } else {
            if (msg.leader_host && node->tr.learn)
                node->tr.learn(node->tr.ctx, msg.leader_id, msg.leader_host, msg.leader_host_len,
                               msg.leader_port);
            raft_recv(node->raft, &msg, rn_now());
            rn_drain(node); /* takes the batches before they go */
        }
        rn_rx_end(node);
        arena_destroy(&arena);
    }
    free(call);
    rn_drain(node);
}

static void rn_send_request(raft_node_t *node, const raft_msg_t *msg)
{
    rn_call_t *call = xcalloc(1, sizeof(*call));
    buf_t body;
    call->node = node;
    call->req = *msg;
    call->version = rn_version(msg->type);
    if (call->req.dst < 0) {
        if (node->cfg.nbootstrap == 0) {
            free(call);
            return;
        }
        call->req.dst = node->cfg.bootstrap[node->next_bootstrap++ % node->cfg.nbootstrap];
    }
    buf_init(&body);
    raft_wire_encode_req(&node->cfg.wire, &call->req, call->version, &body);
    node->inflight++;
    node->tr.send(node->tr.ctx, call->req.dst, raft_wire_api_key(msg->type), call->version, &body,
                  rn_answer, call);
}

/* ---- answers to the requests that came in ---- */

static rn_pending_t *rn_pending_take(raft_node_t *node, int type, int32_t src)
{
    for (rn_pending_t **pp = &node->pending; *pp; pp = &(*pp)->next) {
        rn_pending_t *p = *pp;
        if (p->type != type || p->src != src)
            continue;
        *pp = p->next;
        return p;
    }
    return NULL;
}

/* The answer with the endpoint of the leader it names when that is
 * another node (the wire layer names this node's own): where the
 * transport reaches it, as KRaft's responses carry the leader's
 * endpoints, so that a node that learns of a new leader from them can
 * connect to it. */
static raft_msg_t rn_with_leader(const raft_node_t *node, const raft_msg_t *msg)
{
    raft_msg_t m = *msg;
    const char *host;
    int port;
    if (m.leader_id >= 0 && m.leader_id != node->cfg.wire.node_id && node->tr.addr &&
        node->tr.addr(node->tr.ctx, m.leader_id, &host, &port) == 0) {
        m.leader_host = host;
        m.leader_host_len = (int32_t)strlen(host);
        m.leader_port = port;
    }
    return m;
}

static void rn_send_answer(raft_node_t *node, const raft_msg_t *msg)
{
    rn_pending_t *p = rn_pending_take(node, msg->type - 1, msg->dst);
    raft_msg_t m = rn_with_leader(node, msg);
    buf_t body, rec;
    if (!p)
        return; /* its connection closed, or an older copy was answered */
    buf_init(&body);
    buf_init(&rec);
    if (msg->type == RAFT_FETCH_RESP && msg->rec_to > msg->rec_from &&
        rn_disk_records(node, msg->rec_from, msg->rec_to, node->cfg.wire.max_bytes, &rec) != 0)
        rec.len = 0; /* an answer without records: the follower asks again */
    raft_wire_encode_resp(&node->cfg.wire, &m, p->version, rec.p, rec.len, &body);
    buf_free(&rec);
    p->reply(p->arg, &body);
    free(p);
}

/* A newer request of the same kind from the same node (it gave up on
 * the older one) makes the older one's answer moot: it is refused now,
 * so the two never wait for one answer. */
static void rn_pending_add(raft_node_t *node, const raft_msg_t *msg, int16_t version,
                           raft_reply_fn *reply, void *arg)
{
    rn_pending_t *old = rn_pending_take(node, msg->type, msg->src);
    if (old) {
        buf_t body;
        buf_init(&body);
        raft_wire_encode_error(raft_wire_api_key(msg->type), old->version, KERR_REQUEST_TIMED_OUT,
                               &body);
        old->reply(old->arg, &body);
        free(old);
    }
    rn_pending_t *p = xcalloc(1, sizeof(*p));
    p->type = msg->type;
    p->src = msg->src;
    p->version = version;
    p->reply = reply;
    p->arg = arg;
    p->next = node->pending;
    node->pending = p;
}

int raft_node_request(raft_node_t *node, int16_t api_key, int16_t version, const uint8_t *body,
                      size_t len, raft_reply_fn *reply, void *reply_arg)
{
    arena_t arena;
    raft_msg_t msg;
    if (api_key == PROTO_API_FETCH_SNAPSHOT)
        return rn_snap_serve(node, version, body, len, reply, reply_arg);
    arena_init(&arena, 1024);
    int rc = raft_wire_decode_req(&node->cfg.wire, api_key, version, body, len, &arena, &msg);
    if (rc == 0 && msg.leader_host && node->tr.learn)
        node->tr.learn(node->tr.ctx, msg.src, msg.leader_host, msg.leader_host_len,
                       msg.leader_port); /* the leader that sent it */
    msg.leader_host = NULL; /* it was in the arena */
    arena_destroy(&arena);
    if (rc < 0)
        return -1;
    if (rc > 0) {
        buf_t out;
        buf_init(&out);
        raft_wire_encode_error(api_key, version, (int16_t)rc, &out);
        reply(reply_arg, &out);
        return 0;
    }
    rn_pending_add(node, &msg, version, reply, reply_arg);
    raft_recv(node->raft, &msg, rn_now());
    rn_drain(node);
    return 0;
}

void raft_node_cancel(raft_node_t *node, void *reply_arg)
{
    for (rn_pending_t **pp = &node->pending; *pp;) {
        rn_pending_t *p = *pp;
        if (p->arg != reply_arg) {
            pp = &p->next;
            continue;
        }
        *pp = p->next;
        free(p);
    }
}

/* ---- the core's outputs and its timer ---- */

static void rn_timer(net_loop_t *loop, void *data)
{
    raft_node_t *node = data;
    (void)loop;
    node->timer = 0;
    raft_tick(node->raft, rn_now());
    rn_drain(node);
}

/* The next tick at the core's deadline, and at least every 100 ms. */
static void rn_arm(raft_node_t *node)
{
    int64_t now = rn_now(), at = raft_next_deadline(node->raft);
    if (at > now + 100)
        at = now + 100;
    if (at < now + 1)
        at = now + 1;
    if (node->timer && at >= node->timer_at)
        return;
    if (node->timer)
        net_timer_cancel(node->loop, node->timer);
    node->timer_at = at;
    node->timer = net_timer_add(node->loop, at - now, rn_timer, node);
}

static void rn_take(raft_node_t *node, const raft_out_t *out)
{
    switch (out->kind) {
    case RAFT_OUT_SEND:
        if (out->msg.type == RAFT_VOTE_REQ || out->msg.type == RAFT_BEGIN_REQ ||
            out->msg.type == RAFT_END_REQ || out->msg.type == RAFT_FETCH_REQ)
            rn_send_request(node, &out->msg);
        else
            rn_send_answer(node, &out->msg);
        break;
    case RAFT_OUT_PERSIST:
        rn_disk_persist(node, out);
        break;
    case RAFT_OUT_APPEND:
        rn_disk_append(node, out);
        break;
    case RAFT_OUT_TRUNCATE:
        rn_disk_truncate(node, out->offset);
        break;
    case RAFT_OUT_HW:
        log_set_high_watermark(node->log, out->offset);
        if (node->hooks.on_commit)
            node->hooks.on_commit(node->hooks.ctx, out->offset);
        break;
    case RAFT_OUT_ROLE:
        if (node->hooks.on_role)
            node->hooks.on_role(node->hooks.ctx, raft_role(node->raft), raft_epoch(node->raft),
                                raft_leader(node->raft));
        break;
    case RAFT_OUT_SNAPSHOT:
        rn_snap_want(node, out);
        break;
    default:
        break;
    }
}

void rn_drain(raft_node_t *node)
{
    raft_out_t out;
    if (node->closing)
        return;
    while (raft_poll(node->raft, &out))
        rn_take(node, &out);
    rn_arm(node);
}

raft_node_t *raft_node_new(const raft_node_config_t *cfg, log_t *log, net_loop_t *loop,
                           net_pool_t *pool, const raft_transport_t *tr,
                           const raft_node_hooks_t *hooks, char *err, size_t errlen)
{
    raft_node_t *node = xcalloc(1, sizeof(*node));
    raft_disk_t disk;
    raft_batch_t *epochs = NULL;

    node->cfg = *cfg;
    node->log = log;
    node->loop = loop;
    node->pool = pool;
    node->tr = *tr;
    if (hooks)
        node->hooks = *hooks;
    node->rng = cfg->seed;
    node->ops_tail = &node->ops;
    if (node->cfg.wire.max_bytes <= 0)
        node->cfg.wire.max_bytes = 8 << 20;
    if (rn_disk_load(node, &disk, &epochs, err, errlen) < 0)
        goto err;
    node->raft = raft_new(&node->cfg.raft, &disk, rn_rand, &node->rng, rn_now());
    free(epochs);
    epochs = NULL;
    if (!node->raft) {
        snprintf(err, errlen, "metadata quorum: bad configuration (node %d, %d voters)",
                 cfg->raft.node_id, cfg->raft.nvoters);
        goto err;
    }
    rn_drain(node);
    return node;
err:
    free(epochs);
    free(node);
    return NULL;
}

void raft_node_free(raft_node_t *node)
{
    if (!node)
        return;
    node->closing = 1;
    if (node->timer)
        net_timer_cancel(node->loop, node->timer);
    while (node->pending) {
        rn_pending_t *p = node->pending;
        node->pending = p->next;
        free(p);
    }
    rn_snap_close(node);
    rn_disk_close(node);
    raft_free(node->raft);
    free(node);
}

int64_t raft_node_propose(raft_node_t *node, const meta_rec_t *recs, int n)
{
    buf_t b;
    if (raft_role(node->raft) != RAFT_LEADER || n <= 0)
        return -1;
    buf_init(&b);
    if (meta_log_build_batch(&b, recs, n, rn_now()) < 0) {
        buf_free(&b);
        return -1;
    }
    node->proposal = b.p;
    node->proposal_len = b.len;
    int64_t base = raft_propose(node->raft, n, rn_now());
    rn_drain(node);
    node->proposal = NULL;
    buf_free(&b);
    return base < 0 ? -1 : base + n - 1;
}

int16_t raft_node_read(raft_node_t *node, int64_t offset, int32_t max_bytes, buf_t *out)
{
    return rn_disk_records(node, offset, raft_hw(node->raft), max_bytes, out);
}

void raft_node_resign(raft_node_t *node)
{
    raft_resign(node->raft, rn_now());
    rn_drain(node);
}

raft_t *raft_node_core(raft_node_t *node)
{
    return node->raft;
}

int64_t raft_node_propose_control(raft_node_t *node, int16_t type, const uint8_t *value,
                                  size_t len)
{
    uint8_t key[4] = {0, 0, (uint8_t)((uint16_t)type >> 8), (uint8_t)type};
    log_record_t rec;
    log_batch_build_t opt;
    buf_t b;

    if (raft_role(node->raft) != RAFT_LEADER)
        return -1;
    memset(&rec, 0, sizeof(rec));
    rec.timestamp = rn_now();
    rec.key = key;
    rec.key_len = 4;
    rec.value = value;
    rec.value_len = (int32_t)len;
    log_batch_build_init(&opt);
    opt.attributes = LOG_BATCH_ATTR_CONTROL;
    buf_init(&b);
    log_batch_build(&b, &opt, &rec, 1);
    node->proposal = b.p;
    node->proposal_len = b.len;
    int64_t base = raft_propose(node->raft, 1, rn_now());
    rn_drain(node);
    node->proposal = NULL;
    buf_free(&b);
    return base;
}

void raft_node_set_voters(raft_node_t *node, const int32_t *ids, int n)
{
    raft_set_voters(node->raft, ids, n, rn_now());
    rn_drain(node);
}
