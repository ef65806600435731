/* Snapshots of the metadata log (meta_log.h, "snapshots"): when to take
 * one, taking it (the image serialized on the loop, the file written on a
 * worker), and Kafka's cleaning of the log and the older snapshots behind
 * the latest one. */
#include "cluster/meta_log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/raft_node.h"
#include "cluster/raft_voters.h"
#include "net/net_loop.h"
#include "net/net_pool.h"
#include "util/logging.h"
#include "util/mem.h"

void meta_log_policy_defaults(meta_log_policy_t *pol)
{
    pol->max_bytes = 20971520;
    pol->interval_ms = 3600000;
    pol->retention_bytes = 104857600;
    pol->retention_ms = 604800000;
}

void meta_log_snap_policy(meta_log_t *ml, const meta_log_policy_t *pol)
{
    ml->snap_policy = *pol;
}

int meta_log_latest_snapshot(const meta_log_t *ml, meta_snap_id_t *id)
{
    if (ml->has_snap)
        *id = ml->snap;
    return ml->has_snap;
}

typedef struct meta_snap_job_s {
    net_job_t job; /* first */
    meta_log_t *ml; /* NULL once the log is gone */
    char *dir;      /* owned */
    meta_snap_id_t id;
    meta_snap_recs_t recs; /* collected on the loop */
    int64_t last_ts;
    buf_t bytes;           /* framed on the worker */
    meta_snap_ctl_t ctl[2]; /* a dynamic quorum's KRaftVersion and Voters, */
    int nctl;               /* their values in ctl_bytes */
    buf_t ctl_bytes;
    int64_t covered; /* snap_bytes the snapshot covers */
    int64_t now_ms;
    int rc, err;
} meta_snap_job_t;

static void meta_snap_job_work(net_job_t *job)
{
    meta_snap_job_t *sj = (meta_snap_job_t *)job;
    meta_snap_frame(&sj->bytes, sj->id, &sj->recs, sj->last_ts, sj->ctl, sj->nctl, sj->now_ms);
    meta_snap_recs_free(&sj->recs);
    sj->rc = meta_snap_write(sj->dir, sj->id, sj->bytes.p, sj->bytes.len);
    sj->err = errno;
}

static void meta_snap_job_free(meta_snap_job_t *sj)
{
    meta_snap_recs_free(&sj->recs);
    buf_free(&sj->bytes);
    buf_free(&sj->ctl_bytes);
    free(sj->dir);
    free(sj);
}

static void meta_snap_job_done(net_job_t *job)
{
    meta_snap_job_t *sj = (meta_snap_job_t *)job;
    meta_log_t *ml = sj->ml;
    char name[64];

    meta_snap_name(sj->id, name, sizeof(name));
    if (ml)
        ml->snap_job = NULL;
    if (sj->rc < 0) {
        lg_error("metadata snapshot %s/%s: cannot write: %s", sj->dir, name,
                 strerror(sj->err));
    } else if (ml) {
        ml->has_snap = 1;
        ml->snap = sj->id;
        ml->snap_bytes -= sj->covered;
        ml->snap_ms = sj->now_ms;
        lg_info("metadata snapshot %s written (%zu bytes)", name, sj->bytes.len);
        if (ml->raft) /* fetches below the log start are sent to it */
            raft_snapshot_latest(raft_node_core(ml->raft), sj->id.end_offset, sj->id.epoch);
        if (meta_log_retain(ml, sj->now_ms) < 0)
            lg_warn("metadata log: cleaning before the snapshot failed: %s", strerror(errno));
    }
    meta_snap_job_free(sj);
    /* Commits made while it was written may call for the next one. */
    if (ml)
        meta_log_snap_check(ml, net_now_wall_ms());
}

int meta_log_snapshot_take(meta_log_t *ml, int64_t now_ms)
{
    meta_snap_id_t id = {ml->last_applied + 1, ml->last_epoch};
    meta_snap_job_t *sj;

    if (ml->snap_job || id.end_offset <= (ml->has_snap ? ml->snap.end_offset : 0))
        return 1;
    sj = xcalloc(1, sizeof(*sj));
    sj->ml = ml;
    sj->dir = xstrdup(log_dir(ml->log));
    sj->id = id;
    sj->covered = ml->snap_bytes;
    sj->now_ms = now_ms;
    sj->last_ts = ml->last_ts;
    buf_init(&sj->bytes);
    buf_init(&sj->ctl_bytes);
    /* a dynamic quorum's voters in force at the snapshot's end come after
     * its header, as Kafka writes them */
    if (ml->voters)
        sj->nctl = raft_voters_hist_ctl(ml->voters, id.end_offset, sj->ctl, &sj->ctl_bytes);
    /* On the loop, which owns the image: its records encoded, about 70
     * bytes and a third of a microsecond per partition (35 ms for
     * 100,000, measured); the batches and their CRCs are made on the
     * worker, as the write. */
    meta_snap_recs_init(&sj->recs);
    meta_snap_collect(&sj->recs, &ml->img);
    sj->job.work = meta_snap_job_work;
    sj->job.done = meta_snap_job_done;
    ml->snap_job = sj;
    if (ml->pool) {
        net_pool_run(ml->pool, &sj->job);
        return 0;
    }
    meta_snap_job_work(&sj->job);
    int rc = sj->rc, err = sj->err;
    meta_snap_job_done(&sj->job);
    errno = err;
    return rc < 0 ? -1 : 0;
}

static void meta_log_snap_timer(net_loop_t *loop, void *data)
{
    meta_log_t *ml = data;
    (void)loop;
    ml->snap_timer = 0;
    meta_log_snap_check(ml, net_now_wall_ms());
}

void meta_log_snap_check(meta_log_t *ml, int64_t now_ms)
{
    const meta_log_policy_t *pol = &ml->snap_policy;
    int64_t since = ml->has_snap ? ml->snap.end_offset : 0;
    int64_t due = ml->snap_ms + pol->interval_ms;

    if (ml->last_applied + 1 <= since || ml->snap_job)
        return;
    if (ml->snap_bytes >= pol->max_bytes || (pol->interval_ms > 0 && now_ms >= due)) {
        meta_log_snapshot_take(ml, now_ms);
        return;
    }
    if (pol->interval_ms > 0 && ml->loop && !ml->snap_timer)
        ml->snap_timer = net_timer_add(ml->loop, due - now_ms, meta_log_snap_timer, ml);
}

void meta_log_snap_stop(meta_log_t *ml)
{
    if (ml->snap_timer && ml->loop)
        net_timer_cancel(ml->loop, ml->snap_timer);
    ml->snap_timer = 0;
    if (ml->snap_job)
        ml->snap_job->ml = NULL;
    ml->snap_job = NULL;
}

int meta_log_delete_before(meta_log_t *ml, meta_snap_id_t id, int64_t now_ms)
{
    meta_snap_id_t *ids;
    const char *dir = log_dir(ml->log);
    int n, rc = 0;

    if (id.end_offset > log_start_offset(ml->log) &&
        log_delete_records(ml->log, id.end_offset) != 0) {
        errno = EINVAL;
        return -1;
    }
    /* a quorum's fetches below the new start get the snapshot now */
    if (ml->raft)
        raft_log_start_moved(raft_node_core(ml->raft), id.end_offset, id.epoch);
    if (log_retention(ml->log, now_ms) < 0)
        return -1;
    n = meta_snap_list(dir, &ids);
    if (n < 0)
        return -1;
    for (int i = 0; i < n && ids[i].end_offset < id.end_offset; i++)
        if (meta_snap_remove(dir, ids[i]) < 0)
            rc = -1;
    free(ids);
    return rc;
}

/* Bytes of the log and of every snapshot (metadata.max.retention.bytes
 * counts both). */
static int64_t meta_log_total_bytes(meta_log_t *ml, const meta_snap_id_t *ids, int n)
{
    int64_t total = log_size_bytes(ml->log);
    for (int i = 0; i < n; i++) {
        meta_snap_reader_t rd;
        if (meta_snap_reader_open(&rd, log_dir(ml->log), ids[i]) == 0) {
            total += rd.size;
            meta_snap_reader_close(&rd);
        }
    }
    return total;
}

/* Whether Kafka would clean before the snapshot after ids[0]. */
static int meta_log_expired(meta_log_t *ml, const meta_snap_id_t *ids, int n, int64_t now_ms)
{
    const meta_log_policy_t *pol = &ml->snap_policy;
    int64_t ts;

    if (pol->retention_bytes >= 0 && meta_log_total_bytes(ml, ids, n) > pol->retention_bytes)
        return 1;
    return pol->retention_ms >= 0 && meta_snap_header_ts(log_dir(ml->log), ids[0], &ts) == 0 &&
           now_ms - ts > pol->retention_ms;
}

int meta_log_retain(meta_log_t *ml, int64_t now_ms)
{
    meta_snap_id_t *ids;
    int n = meta_snap_list(log_dir(ml->log), &ids), removed = 0, i = 0;

    if (n < 0)
        return -1;
    while (n - i >= 2 && meta_log_expired(ml, ids + i, n - i, now_ms)) {
        if (meta_log_delete_before(ml, ids[i + 1], now_ms) < 0) {
            free(ids);
            return -1;
        }
        i++;
        removed++;
    }
    free(ids);
    return removed;
}
