/* The Raft node's disk: the metadata log (appends as leader and as
 * follower, truncations, reads for fetches), its flushes on a worker
 * thread, and the quorum-state file written on a worker thread.
 *
 * Order matters and is kept: appends and truncations run in the order
 * the core asked for them, and a truncation waits until no flush is in
 * flight (the log's recovery point must never be moved by a flush begun
 * before a truncation over what was appended after it). What waits
 * behind it is copied. One flush and one quorum-state write are in
 * flight at a time; a newer state waiting behind the write in flight is
 * written next (the core needs only the latest durable). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/meta_log.h"
#include "cluster/raft_node_int.h"
#include "log/log_batch.h"
#include "proto/proto.h"
#include "proto/proto_rec.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

struct rn_flush_s {
    net_job_t job;           /* first */
    raft_node_t *node;       /* NULL: the node is gone */
    log_sync_t sync;
    uint64_t gen;
};

struct rn_state_job_s {
    net_job_t job;           /* first */
    raft_node_t *node;       /* NULL: the node is gone */
    raft_qstate_t st;
    uint64_t seq;
    char dir[4096];
    int rc, err;
};

static void rn_run_ops(raft_node_t *node);

/* The metadata log failed under the core, which has moved on as if the
 * write were done: the node cannot go on (its log and the core disagree),
 * so it stops, as Kafka halts on a failed metadata log dir. */
void rn_fatal(raft_node_t *node, const char *what, const char *why)
{
    lg_error("metadata quorum: %s (%s): %s; stopping", what, log_dir(node->log), why);
    if (node->hooks.on_fatal)
        node->hooks.on_fatal(node->hooks.ctx);
    abort();
}

/* ---- what is on disk at start-up ---- */

/* The log's epochs, oldest first, from its leader-epoch cache: each
 * epoch starts where the one before it ends. */
static int rn_epochs(log_t *log, raft_batch_t **out)
{
    int n = 0, cap = 16;
    raft_batch_t *v = xmalloc((size_t)cap * sizeof(*v));
    for (int32_t e = log_latest_epoch(log); e >= 0;) {
        int64_t prev_end = log_start_offset(log);
        int32_t prev = -1;
        if (e > 0)
            log_epoch_end_offset(log, e - 1, &prev_end, &prev);
        if (prev < 0)
            prev_end = log_start_offset(log);
        if (n == cap)
            v = xrealloc(v, (size_t)(cap *= 2) * sizeof(*v));
        v[n].epoch = e;
        v[n].base = v[n].last = prev_end;
        n++;
        e = prev;
    }
    for (int i = 0; i < n / 2; i++) {
        raft_batch_t t = v[i];
        v[i] = v[n - 1 - i];
        v[n - 1 - i] = t;
    }
    *out = v;
    return n;
}

/* The epoch of the snapshot the log starts at (what a fetch at the log
 * start must have last fetched), or 0. */
static int32_t rn_start_epoch(raft_node_t *node)
{
    meta_snap_id_t *ids;
    int32_t epoch = 0;
    int n = meta_snap_list(log_dir(node->log), &ids);
    for (int i = 0; i < n; i++)
        if (ids[i].end_offset == log_start_offset(node->log))
            epoch = ids[i].epoch;
    if (n >= 0)
        free(ids);
    return epoch;
}

int rn_disk_load(raft_node_t *node, raft_disk_t *disk, raft_batch_t **epochs, char *err,
                 size_t errlen)
{
    raft_qstate_t st;
    if (raft_qstate_read(log_dir(node->log), &st, err, errlen) < 0)
        return -1;
    /* Start-up, before the loop serves: what a crash left in the page
     * cache is made durable before the core counts it. */
    if (log_recovery_point(node->log) < log_end_offset(node->log) && log_flush(node->log, rn_now()) < 0) {
        snprintf(err, errlen, "%s: flush of the metadata log failed: %s", log_dir(node->log),
                 strerror(errno));
        return -1;
    }
    memset(disk, 0, sizeof(*disk));
    disk->epoch = st.epoch;
    disk->leader_id = st.leader_id;
    disk->voted_id = st.voted_id;
    disk->log_start = log_start_offset(node->log);
    disk->snap_epoch = disk->log_start > 0 ? rn_start_epoch(node) : 0;
    meta_snap_id_t latest;
    if (meta_snap_latest(log_dir(node->log), &latest) == 1) {
        disk->latest_end = latest.end_offset;
        disk->latest_epoch = latest.epoch;
    }
    disk->log_end = log_end_offset(node->log);
    disk->nepochs = rn_epochs(node->log, epochs);
    disk->epochs = *epochs;
    return 0;
}

/* ---- quorum-state ---- */

static void rn_state_work(net_job_t *job)
{
    rn_state_job_t *j = (rn_state_job_t *)job;
    j->rc = raft_qstate_write(j->dir, &j->st);
    j->err = j->rc < 0 ? errno : 0;
}

static void rn_state_start(raft_node_t *node);

static void rn_state_done(net_job_t *job)
{
    rn_state_job_t *j = (rn_state_job_t *)job;
    raft_node_t *node = j->node;
    if (node) {
        node->state_job = NULL;
        if (j->rc == 0) {
            raft_persisted(node->raft, j->seq, rn_now());
        } else {
            /* the messages that need it stay held; the next change tries again */
            lg_error("metadata quorum: writing %s/%s failed: %s", j->dir, RAFT_STATE_FILE,
                     strerror(j->err));
        }
        if (node->state_dirty)
            rn_state_start(node);
        rn_drain(node);
    }
    free(j);
}

static void rn_state_start(raft_node_t *node)
{
    rn_state_job_t *j = xcalloc(1, sizeof(*j));
    j->job.work = rn_state_work;
    j->job.done = rn_state_done;
    j->node = node;
    j->st = node->state_want;
    j->seq = node->state_want_seq;
    snprintf(j->dir, sizeof(j->dir), "%s", log_dir(node->log));
    node->state_dirty = 0;
    node->state_job = j;
    net_pool_run(node->pool, &j->job);
}

void rn_disk_persist(raft_node_t *node, const raft_out_t *out)
{
    raft_qstate_t *st = &node->state_want;
    const int32_t *ids;
    raft_qstate_init(st, node->cfg.kraft_version > 0 ? 1 : 0);
    st->epoch = out->epoch;
    st->leader_id = out->leader_id;
    st->voted_id = out->voted_id;
    st->nvoters = raft_voters(node->raft, &ids);
    memcpy(st->voters, ids, (size_t)st->nvoters * sizeof(ids[0]));
    node->state_want_seq = out->seq;
    node->state_dirty = 1;
    if (!node->state_job)
        rn_state_start(node);
}

/* ---- flushes ---- */

static void rn_flush_work(net_job_t *job)
{
    log_sync_run(&((rn_flush_t *)job)->sync);
}

static void rn_flush_kick(raft_node_t *node);

static void rn_flush_done(net_job_t *job)
{
    rn_flush_t *f = (rn_flush_t *)job;
    raft_node_t *node = f->node;
    if (!node) {
        log_sync_drop(&f->sync);
        free(f);
        return;
    }
    node->flush = NULL;
    if (log_sync_end(node->log, &f->sync, rn_now()) < 0)
        rn_fatal(node, "flushing the metadata log failed", strerror(errno));
    else if (f->gen == node->trunc_gen)
        raft_flushed(node->raft, f->sync.target, rn_now());
    free(f);
    rn_run_ops(node);
    rn_flush_kick(node);
    rn_drain(node);
}

static void rn_flush_kick(raft_node_t *node)
{
    if (node->flush || log_recovery_point(node->log) >= log_end_offset(node->log))
        return;
    rn_flush_t *f = xcalloc(1, sizeof(*f));
    if (log_sync_begin(node->log, 0, &f->sync) < 0) {
        free(f);
        rn_fatal(node, "flushing the metadata log failed", strerror(errno));
        return;
    }
    f->job.work = rn_flush_work;
    f->job.done = rn_flush_done;
    f->node = node;
    f->gen = node->trunc_gen;
    node->flush = f;
    net_pool_run(node->pool, &f->job);
}

/* ---- appends and truncations ---- */

/* LeaderChangeMessage v0 in a control batch: the epoch's first batch. */
static void rn_leader_change(raft_node_t *node, buf_t *out)
{
    proto_rec_leader_change_message_t m;
    proto_rec_leader_change_message_voter_t voters[RAFT_MAX_VOTERS], granting[RAFT_MAX_VOTERS];
    int32_t ids[RAFT_MAX_VOTERS];
    const int32_t *all;
    uint8_t key[4] = {0, 0, 0, 2}; /* control record key: version 0, type 2 */
    uint8_t keys[2][4] = {{0}};
    buf_t val;
    log_record_t rec[3];
    log_batch_build_t opt;
    int n = 1;

    memset(&m, 0, sizeof(m));
    m.leader_id = node->cfg.raft.node_id;
    m.voters.n = raft_voters(node->raft, &all);
    memset(voters, 0, sizeof(voters));
    for (int i = 0; i < m.voters.n; i++)
        voters[i].voter_id = all[i];
    m.voters.v = voters;
    m.granting_voters.n = raft_granting_voters(node->raft, ids, RAFT_MAX_VOTERS);
    memset(granting, 0, sizeof(granting));
    for (int i = 0; i < m.granting_voters.n; i++)
        granting[i].voter_id = ids[i];
    m.granting_voters.v = granting;
    buf_init(&val);
    proto_rec_encode(proto_rec_find(PROTO_REC_KIND_CONTROL, 2), &m, 0, &val);
    memset(rec, 0, sizeof(rec));
    rec[0].timestamp = rn_now();
    rec[0].key = key;
    rec[0].key_len = 4;
    rec[0].value = val.p;
    rec[0].value_len = (int32_t)val.len;
    /* a dynamic quorum's first epoch: its voter set into the log */
    for (int i = 0; i < node->cfg.nepoch_ctl; i++, n++) {
        const meta_snap_ctl_t *c = &node->cfg.epoch_ctl[i];
        keys[i][3] = (uint8_t)c->type;
        rec[n].offset = n;
        rec[n].timestamp = rec[0].timestamp;
        rec[n].key = keys[i];
        rec[n].key_len = 4;
        rec[n].value = c->value;
        rec[n].value_len = (int32_t)c->len;
    }
    node->cfg.nepoch_ctl = 0;
    raft_set_epoch_extra(node->raft, 0);
    log_batch_build_init(&opt);
    opt.attributes = LOG_BATCH_ATTR_CONTROL;
    log_batch_build(out, &opt, rec, n);
    buf_free(&val);
}

static void rn_op_free(rn_op_t *op)
{
    buf_free(&op->bytes);
    if (op->img) {
        meta_image_free(op->img);
        free(op->img);
    }
    free(op);
}

/* The log restarts empty at the snapshot's end, if the core still wants
 * it (a new epoch or role gave it up: the file stays, as a snapshot of
 * committed records), then the user takes the image and the core learns. */
static void rn_op_install(raft_node_t *node, rn_op_t *op)
{
    int64_t end = op->snap.end_offset;
    if (!raft_snapshot_wanted(node->raft, end, op->snap.epoch))
        return;
    if (log_reset_to(node->log, end, rn_now()) < 0)
        rn_fatal(node, "replacing the metadata log by a snapshot failed", strerror(errno));
    lg_info("metadata quorum: installed snapshot %lld-%d", (long long)end, op->snap.epoch);
    if (node->hooks.on_snapshot) {
        node->hooks.on_snapshot(node->hooks.ctx, op->snap, op->img, op->last_ts);
        free(op->img);
        op->img = NULL;
    }
    raft_snapshot_installed(node->raft, end, op->snap.epoch, rn_now());
}

/* Runs one op. Returns 0, or 1 when it must wait (a truncation behind a
 * flush in flight). */
static int rn_op_run(raft_node_t *node, rn_op_t *op)
{
    if (op->kind == RAFT_OUT_SNAPSHOT) {
        if (node->flush)
            return 1;
        rn_op_install(node, op);
        return 0;
    }
    if (op->kind == RAFT_OUT_TRUNCATE) {
        if (node->flush)
            return 1;
        if (log_truncate_to(node->log, op->offset) < 0)
            rn_fatal(node, "truncating the metadata log failed", strerror(errno));
        return 0;
    }
    int16_t kerr;
    if (op->replica) {
        kerr = log_append_replica(node->log, op->bytes.p, op->bytes.len, rn_now());
    } else {
        log_append_result_t res;
        kerr = log_append(node->log, op->bytes.p, op->bytes.len, op->epoch, rn_now(), &res);
    }
    if (kerr)
        rn_fatal(node, "appending to the metadata log failed", kerr_name(kerr));
    rn_flush_kick(node);
    return 0;
}

static void rn_run_ops(raft_node_t *node)
{
    while (node->ops && rn_op_run(node, node->ops) == 0) {
        rn_op_t *op = node->ops;
        node->ops = op->next;
        if (!node->ops)
            node->ops_tail = &node->ops;
        rn_op_free(op);
    }
}

static void rn_op_queue(raft_node_t *node, rn_op_t *op)
{
    *node->ops_tail = op;
    node->ops_tail = &op->next;
    rn_run_ops(node);
}

void rn_disk_append(raft_node_t *node, const raft_out_t *out)
{
    rn_op_t *op = xcalloc(1, sizeof(*op));
    op->kind = RAFT_OUT_APPEND;
    buf_init(&op->bytes);
    if (out->append_n > 0 && out->control) {
        rn_leader_change(node, &op->bytes);
        op->epoch = out->append_epoch;
    } else if (out->append_n > 0) {
        buf_put(&op->bytes, node->proposal, node->proposal_len);
        op->epoch = out->append_epoch;
    } else {
        int first = (int)(out->msg.batches - node->rx_batches);
        size_t from = node->rx_pos[first], to = node->rx_pos[first + out->msg.nbatches];
        buf_put(&op->bytes, node->rx_records + from, to - from);
        op->replica = 1;
    }
    rn_op_queue(node, op);
}

void rn_disk_truncate(raft_node_t *node, int64_t offset)
{
    rn_op_t *op = xcalloc(1, sizeof(*op));
    /* a flush begun before this is not taken for what follows it */
    node->trunc_gen++;
    op->kind = RAFT_OUT_TRUNCATE;
    op->offset = offset;
    buf_init(&op->bytes);
    rn_op_queue(node, op);
}

void rn_disk_install(raft_node_t *node, meta_snap_id_t id, meta_image_t *img, int64_t last_ts)
{
    rn_op_t *op = xcalloc(1, sizeof(*op));
    node->trunc_gen++; /* as a truncation: a flush begun before is not for after */
    op->kind = RAFT_OUT_SNAPSHOT;
    op->snap = id;
    op->img = xmalloc(sizeof(*op->img));
    *op->img = *img;
    op->last_ts = last_ts;
    buf_init(&op->bytes);
    rn_op_queue(node, op);
}

/* Whole batches of [from, to) from one segment, copied (the metadata
 * log's fetches are small; a follower far behind takes several). */
int16_t rn_disk_records(raft_node_t *node, int64_t from, int64_t to, int32_t max_bytes, buf_t *out)
{
    log_read_result_t r;
    if (from >= to)
        return 0;
    int16_t kerr = log_read(node->log, from, max_bytes, 1, to, &r);
    if (kerr || r.len == 0)
        return kerr;
    size_t at = out->len;
    buf_reserve(out, (size_t)r.len);
    ssize_t got = pread(r.fd, out->p + at, (size_t)r.len, r.file_pos);
    close(r.fd);
    if (got != r.len)
        return KERR_KAFKA_STORAGE_ERROR;
    out->len = at + (size_t)r.len;
    return 0;
}

/* The jobs in flight finish without the node; queued ops are dropped. */
void rn_disk_close(raft_node_t *node)
{
    if (node->flush)
        node->flush->node = NULL;
    if (node->state_job)
        node->state_job->node = NULL;
    while (node->ops) {
        rn_op_t *op = node->ops;
        node->ops = op->next;
        rn_op_free(op);
    }
}
