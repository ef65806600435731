/* The Raft node's snapshots over the wire (raft_node.h): the leader serves
 * FetchSnapshot from its snapshot files; a node the core sends to a
 * snapshot (RAFT_OUT_SNAPSHOT) reads it from the leader slice by slice
 * into memory, checks and writes it on a worker (meta_snap_parse, then
 * meta_snap_write: .part, fsync, rename, fsync the directory), and then,
 * in the order of the log's other changes, replaces its log with it: the
 * log restarts empty at the snapshot's end, the user takes the image
 * (hooks.on_snapshot), and the core is told. The metadata snapshots are
 * small (about 70 bytes a partition), so memory holds one whole. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_snap.h"
#include "cluster/raft_node_int.h"
#include "cluster/raft_wire_snap.h"
#include "proto/proto.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

/* A slice is at most this (the leader reads it on the loop). */
#define RN_SNAP_SLICE (1 << 20)

/* ---- the leader's side ---- */

static int16_t rn_snap_leader_check(const raft_t *raft, int32_t epoch)
{
    if (raft_role(raft) != RAFT_LEADER)
        return KERR_NOT_LEADER_OR_FOLLOWER;
    if (epoch < raft_epoch(raft))
        return KERR_FENCED_LEADER_EPOCH;
    if (epoch > raft_epoch(raft))
        return KERR_UNKNOWN_LEADER_EPOCH;
    return 0;
}

/* The slice the request asks for into data (r->bytes points there). */
static int16_t rn_snap_slice(raft_node_t *node, const raft_snap_req_t *q, raft_snap_resp_t *r,
                             buf_t *data)
{
    meta_snap_reader_t rd;
    meta_snap_id_t id = {q->end_offset, q->epoch};
    if ((id.end_offset == 0 && id.epoch == 0) || /* the bootstrap checkpoint is not sent */
        meta_snap_reader_open(&rd, log_dir(node->log), id) < 0)
        return KERR_SNAPSHOT_NOT_FOUND;
    r->size = rd.size;
    if (q->position < 0 || q->position >= rd.size) {
        meta_snap_reader_close(&rd);
        return KERR_POSITION_OUT_OF_RANGE;
    }
    int64_t n = rd.size - q->position;
    if (n > q->max_bytes)
        n = q->max_bytes > 0 ? q->max_bytes : 1;
    if (n > RN_SNAP_SLICE)
        n = RN_SNAP_SLICE;
    buf_reserve(data, (size_t)n);
    ssize_t got = meta_snap_reader_read(&rd, q->position, data->p, (size_t)n);
    meta_snap_reader_close(&rd);
    if (got <= 0)
        return KERR_KAFKA_STORAGE_ERROR;
    data->len = (size_t)got;
    r->bytes = data->p;
    r->len = data->len;
    return 0;
}

int rn_snap_serve(raft_node_t *node, int16_t version, const uint8_t *body, size_t len,
                  raft_reply_fn *reply, void *reply_arg)
{
    arena_t arena;
    raft_snap_req_t q;
    raft_snap_resp_t r;
    buf_t out, data;
    int other;

    arena_init(&arena, 512);
    int rc = raft_wire_snap_req_decode(&node->cfg.wire, version, body, len, &arena, &q, &other);
    arena_destroy(&arena);
    if (rc < 0)
        return -1;
    buf_init(&out);
    buf_init(&data);
    memset(&r, 0, sizeof(r));
    r.leader_id = raft_leader(node->raft);
    r.leader_epoch = raft_epoch(node->raft);
    r.end_offset = q.end_offset;
    r.epoch = q.epoch;
    r.position = q.position;
    r.err = other ? KERR_UNKNOWN_TOPIC_OR_PARTITION : rn_snap_leader_check(node->raft, q.leader_epoch);
    if (!r.err)
        r.err = rn_snap_slice(node, &q, &r, &data);
    if (!r.err) {
        raft_snapshot_served(node->raft, q.replica_id, rn_now());
        rn_drain(node);
    }
    if (rc > 0)
        raft_wire_snap_error(version, (int16_t)rc, &out);
    else
        raft_wire_snap_resp(&node->cfg.wire, &r, version, &out);
    buf_free(&data);
    reply(reply_arg, &out);
    return 0;
}

/* ---- the follower's side ---- */

struct rn_snapfetch_s {
    net_job_t job;           /* first: the check and write on a worker */
    raft_node_t *node;       /* NULL once given up (an answer or job is out) */
    meta_snap_id_t id;
    int32_t from;
    int64_t size;            /* -1 until the first answer */
    buf_t bytes;             /* what came, from position 0 */
    int busy;                /* a request or the job is out: it frees us */
    int job_out;             /* the job is (it completes even after the node) */
    /* the job's */
    char *dir;
    meta_image_t img;
    int64_t last_ts;
    int rc;
    char err[256];
};

static void rn_sf_free(rn_snapfetch_t *sf)
{
    buf_free(&sf->bytes);
    meta_image_free(&sf->img);
    free(sf->dir);
    free(sf);
}

/* The fetch is dropped; what is out frees it when it comes back. */
static void rn_sf_drop(raft_node_t *node)
{
    rn_snapfetch_t *sf = node->snapfetch;
    if (!sf)
        return;
    node->snapfetch = NULL;
    sf->node = NULL;
    if (!sf->busy)
        rn_sf_free(sf);
}

static void rn_sf_fail(raft_node_t *node, const char *why)
{
    char name[64];
    meta_snap_name(node->snapfetch->id, name, sizeof(name));
    lg_warn("metadata quorum: fetching snapshot %s from node %d failed: %s", name,
            node->snapfetch->from, why);
    rn_sf_drop(node);
    raft_snapshot_failed(node->raft, rn_now());
    rn_drain(node);
}

static void rn_sf_answer(void *arg, const uint8_t *body, size_t len);

static void rn_sf_send(raft_node_t *node)
{
    rn_snapfetch_t *sf = node->snapfetch;
    raft_snap_req_t q;
    buf_t body;
    memset(&q, 0, sizeof(q));
    q.replica_id = node->cfg.raft.node_id;
    q.max_bytes = node->cfg.wire.max_bytes;
    q.leader_epoch = raft_epoch(node->raft);
    q.end_offset = sf->id.end_offset;
    q.epoch = sf->id.epoch;
    q.position = (int64_t)sf->bytes.len;
    buf_init(&body);
    raft_wire_snap_req(&node->cfg.wire, &q, RAFT_WIRE_SNAP_VERSION, &body);
    sf->busy = 1;
    node->tr.send(node->tr.ctx, sf->from, PROTO_API_FETCH_SNAPSHOT, RAFT_WIRE_SNAP_VERSION,
                  &body, rn_sf_answer, sf);
}

static void rn_sf_work(net_job_t *job)
{
    rn_snapfetch_t *sf = (rn_snapfetch_t *)job;
    meta_snap_info_t info;
    memset(&info, 0, sizeof(info));
    sf->rc = meta_snap_parse(sf->bytes.p, sf->bytes.len, &sf->img, &info, sf->err,
                             sizeof(sf->err));
    if (sf->rc == 0 && meta_snap_write(sf->dir, sf->id, sf->bytes.p, sf->bytes.len) < 0) {
        snprintf(sf->err, sizeof(sf->err), "cannot write it: %s", strerror(errno));
        sf->rc = -1;
    }
    sf->last_ts = info.last_ts;
}

static void rn_sf_done(net_job_t *job)
{
    rn_snapfetch_t *sf = (rn_snapfetch_t *)job;
    raft_node_t *node = sf->node;
    sf->busy = 0;
    if (!node) {
        rn_sf_free(sf);
        return;
    }
    if (sf->rc < 0) {
        rn_sf_fail(node, sf->err);
        return;
    }
    node->snapfetch = NULL;
    rn_disk_install(node, sf->id, &sf->img, sf->last_ts);
    meta_image_init(&sf->img); /* taken */
    rn_sf_free(sf);
    rn_drain(node);
}

/* All of it came: checked and written on a worker. */
static void rn_sf_finish(raft_node_t *node)
{
    rn_snapfetch_t *sf = node->snapfetch;
    sf->dir = xstrdup(log_dir(node->log));
    sf->job.work = rn_sf_work;
    sf->job.done = rn_sf_done;
    sf->busy = sf->job_out = 1;
    net_pool_run(node->pool, &sf->job);
}

/* Why an answer does not continue the fetch, or NULL when it does. */
static const char *rn_sf_check(const rn_snapfetch_t *sf, const raft_snap_resp_t *r)
{
    if (r->err)
        return kerr_name(r->err);
    if (r->end_offset != sf->id.end_offset || r->epoch != sf->id.epoch)
        return "an answer for another snapshot";
    if (r->position != (int64_t)sf->bytes.len || r->len == 0 ||
        r->position + (int64_t)r->len > r->size || (sf->size >= 0 && r->size != sf->size))
        return "an answer that does not continue what came";
    return NULL;
}

static void rn_sf_answer(void *arg, const uint8_t *body, size_t len)
{
    rn_snapfetch_t *sf = arg;
    raft_node_t *node = sf->node;
    raft_snap_resp_t r;
    arena_t arena;
    const char *why;

    sf->busy = 0;
    if (!node) {
        rn_sf_free(sf);
        return;
    }
    if (!body) {
        rn_sf_fail(node, "no answer");
        return;
    }
    arena_init(&arena, 512);
    if (raft_wire_snap_resp_decode(RAFT_WIRE_SNAP_VERSION, body, len, &arena, &r) < 0)
        why = "a malformed answer";
    else
        why = rn_sf_check(sf, &r);
    if (!why) {
        buf_put(&sf->bytes, r.bytes, r.len);
        sf->size = r.size;
    }
    arena_destroy(&arena);
    if (why) {
        rn_sf_fail(node, why);
        return;
    }
    raft_snapshot_progress(node->raft, rn_now());
    if ((int64_t)sf->bytes.len == sf->size)
        rn_sf_finish(node);
    else
        rn_sf_send(node);
    rn_drain(node);
}

void rn_snap_want(raft_node_t *node, const raft_out_t *out)
{
    rn_snapfetch_t *sf = node->snapfetch;
    if (sf && sf->id.end_offset == out->offset && sf->id.epoch == out->append_epoch)
        return; /* under way */
    rn_sf_drop(node);
    sf = xcalloc(1, sizeof(*sf));
    sf->node = node;
    sf->id.end_offset = out->offset;
    sf->id.epoch = out->append_epoch;
    sf->from = out->msg.src;
    sf->size = -1;
    buf_init(&sf->bytes);
    meta_image_init(&sf->img);
    node->snapfetch = sf;
    lg_info("metadata quorum: the leader's log starts after snapshot %lld-%d: fetching it "
            "from node %d",
            (long long)sf->id.end_offset, sf->id.epoch, sf->from);
    rn_sf_send(node);
}

/* The transport is gone: an answer out never comes back (the job does). */
void rn_snap_close(raft_node_t *node)
{
    rn_snapfetch_t *sf = node->snapfetch;
    if (sf && !sf->job_out)
        sf->busy = 0;
    rn_sf_drop(node);
}
