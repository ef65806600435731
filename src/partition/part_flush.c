/* Flush rounds (part_flush.h). Partitions are kept by topic id and index,
 * not by pointer: a topic can be deleted between the append and the end
 * of its round (log_sync_end then finds another log, or none, and the
 * flush is dropped). */
#include "partition/part_flush.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "net/net_loop.h"
#include "net/net_pool.h"
#include "util/logging.h"
#include "util/mem.h"

typedef struct part_flush_ent_s {
    uint8_t topic_id[16];
    int32_t partition;
    int rolled_only;
    int began;
    log_sync_t sync;
} part_flush_ent_t;

typedef struct part_flush_round_s {
    net_job_t job; /* first */
    part_reg_t *reg;
    part_flush_ent_t *v;
    int n, cap;
    part_flush_waiter_t waiters; /* list head */
} part_flush_round_t;

typedef struct part_flush_s {
    part_flush_round_t *next; /* gathering */
    part_flush_round_t *out;  /* syncing */
    int scheduled;
} part_flush_t;

static part_flush_t *part_flush_state(part_reg_t *reg)
{
    if (!reg->flush)
        reg->flush = xcalloc(1, sizeof(part_flush_t));
    return reg->flush;
}

static part_flush_round_t *part_flush_next(part_reg_t *reg)
{
    part_flush_t *fl = part_flush_state(reg);
    if (!fl->next) {
        fl->next = xcalloc(1, sizeof(*fl->next));
        fl->next->reg = reg;
        fl->next->waiters.next = fl->next->waiters.prev = &fl->next->waiters;
    }
    return fl->next;
}

static part_t *part_flush_part(part_reg_t *reg, const part_flush_ent_t *e)
{
    topic_t *topic = part_topic_by_id(reg, e->topic_id);
    return topic ? part_get(topic, e->partition) : NULL;
}

static void part_flush_start(part_reg_t *reg);

static void part_flush_deferred(net_loop_t *loop, void *data)
{
    part_reg_t *reg = data;
    (void)loop;
    part_flush_state(reg)->scheduled = 0;
    part_flush_start(reg);
}

/* After the current turn, so that everything this turn appends joins. */
static void part_flush_schedule(part_reg_t *reg)
{
    part_flush_t *fl = part_flush_state(reg);
    if (fl->scheduled || fl->out || !fl->next)
        return;
    if (!reg->loop || reg->stopping) {
        part_flush_start(reg);
        return;
    }
    fl->scheduled = 1;
    net_loop_defer(reg->loop, part_flush_deferred, reg);
}

static void part_flush_name(part_reg_t *reg, part_t *part, int rolled_only)
{
    part_flush_round_t *r = part_flush_next(reg);
    for (int i = 0; i < r->n; i++)
        if (r->v[i].partition == part->index && !memcmp(r->v[i].topic_id, part->topic->id, 16)) {
            r->v[i].rolled_only &= rolled_only;
            return;
        }
    if (r->n == r->cap) {
        r->cap = r->cap ? r->cap * 2 : 16;
        r->v = xrealloc(r->v, (size_t)r->cap * sizeof(*r->v));
    }
    part_flush_ent_t *e = &r->v[r->n++];
    memset(e, 0, sizeof(*e));
    memcpy(e->topic_id, part->topic->id, 16);
    e->partition = part->index;
    e->rolled_only = rolled_only;
}

void part_flush_add(part_reg_t *reg, part_t *part)
{
    part_flush_name(reg, part, 0);
    part_flush_schedule(reg);
}

void part_flush_wait(part_reg_t *reg, part_flush_waiter_t *w)
{
    part_flush_round_t *r = part_flush_next(reg);
    w->next = &r->waiters;
    w->prev = r->waiters.prev;
    r->waiters.prev->next = w;
    r->waiters.prev = w;
    part_flush_schedule(reg);
}

static void part_flush_work(net_job_t *job)
{
    part_flush_round_t *r = (part_flush_round_t *)job;
    for (int i = 0; i < r->n; i++)
        if (r->v[i].began)
            log_sync_run(&r->v[i].sync);
}

/* A flush failed: the batches that waited for it (nobody has seen them:
 * the high watermark stayed below them) are cut from the log, as Kafka's
 * append fails as a whole when its flush does, so that no batch whose
 * writer is told it failed comes back after a restart. */
static void part_flush_take_back(part_t *part)
{
    int64_t from = part->flush_hold < part->flush_hold_next ? part->flush_hold
                                                            : part->flush_hold_next;
    if (from >= log_end_offset(part->log))
        return;
    if (log_truncate_to(part->log, from) < 0)
        lg_error("%s-%d: cannot remove the unflushed batches: %s", part->topic->name,
                 part->index, strerror(errno));
}

/* Ends one log's flush; returns 0, or -1 when it failed (now offline). */
static int part_flush_end_one(part_reg_t *reg, part_flush_ent_t *e, int64_t now)
{
    part_t *part = part_flush_part(reg, e);
    if (!e->began)
        return part ? -1 : 0;
    if (!part || log_uid(part->log) != e->sync.uid) {
        log_sync_drop(&e->sync); /* deleted meanwhile */
        return 0;
    }
    if (log_sync_end(part->log, &e->sync, now) == 0) {
        part->flush_hold = INT64_MAX;
        if (part_update_hwm(part))
            part_notify(part);
        return 0;
    }
    lg_error("%s-%d: flush failed", part->topic->name, part->index);
    part_flush_take_back(part);
    part_notify(part); /* offline now: waiting fetches answer at once */
    return -1;
}

static void part_flush_complete(part_flush_round_t *r, const part_flush_fail_t *failed, int nf)
{
    while (r->waiters.next != &r->waiters) {
        part_flush_waiter_t *w = r->waiters.next;
        w->prev->next = w->next;
        w->next->prev = w->prev;
        w->next = w->prev = NULL;
        w->done(w, failed, nf);
    }
}

static void part_flush_finish(part_flush_round_t *r)
{
    part_reg_t *reg = r->reg;
    part_flush_fail_t *failed = xcalloc((size_t)r->n + 1, sizeof(*failed));
    int nf = 0;
    int64_t now = net_now_wall_ms();

    for (int i = 0; i < r->n; i++)
        if (part_flush_end_one(reg, &r->v[i], now) < 0) {
            memcpy(failed[nf].topic_id, r->v[i].topic_id, 16);
            failed[nf++].partition = r->v[i].partition;
        }
    part_flush_complete(r, failed, nf);
    free(failed);
    free(r->v);
    free(r);
}

static void part_flush_job_done(net_job_t *job)
{
    part_flush_round_t *r = (part_flush_round_t *)job;
    part_reg_t *reg = r->reg;
    part_flush_state(reg)->out = NULL;
    part_flush_finish(r);
    part_flush_schedule(reg);
}

static void part_flush_begin_all(part_flush_round_t *r)
{
    for (int i = 0; i < r->n; i++) {
        part_flush_ent_t *e = &r->v[i];
        part_t *part = part_flush_part(r->reg, e);
        if (!part)
            continue;
        if (!e->rolled_only) { /* it covers what waits for it */
            if (part->flush_hold_next < part->flush_hold)
                part->flush_hold = part->flush_hold_next;
            part->flush_hold_next = INT64_MAX;
        }
        if (log_sync_begin(part->log, e->rolled_only, &e->sync) == 0)
            e->began = 1;
    }
}

static void part_flush_start(part_reg_t *reg)
{
    part_flush_t *fl = part_flush_state(reg);
    part_flush_round_t *r = fl->next;
    if (!r || fl->out)
        return;
    fl->next = NULL;
    part_flush_begin_all(r);
    if (reg->pool && !reg->stopping) {
        fl->out = r;
        r->job.work = part_flush_work;
        r->job.done = part_flush_job_done;
        net_pool_submit(reg->pool, &r->job);
        return;
    }
    part_flush_work(&r->job);
    part_flush_finish(r);
}

void part_flush_shutdown(part_reg_t *reg)
{
    part_flush_t *fl = reg->flush;
    if (!fl)
        return;
    part_flush_start(reg);
    free(fl->next);
    free(fl);
    reg->flush = NULL;
}

void part_flush_due(part_reg_t *reg, int64_t now_ms)
{
    size_t pos = 0;
    topic_t *topic;
    while ((topic = part_topic_next(reg, &pos)))
        for (int32_t i = 0; i < topic->nparts; i++) {
            part_t *part = topic->parts[i];
            if (part && log_unflushed_messages(part->log) > 0 &&
                now_ms - log_last_flush_ms(part->log) >= topic->cfg.flush_ms)
                part_flush_name(reg, part, 0);
        }
    part_flush_schedule(reg);
}

void part_flush_rolled(part_reg_t *reg)
{
    size_t pos = 0;
    topic_t *topic;
    while ((topic = part_topic_next(reg, &pos)))
        for (int32_t i = 0; i < topic->nparts; i++)
            if (topic->parts[i] && !part_offline(topic->parts[i]))
                part_flush_name(reg, topic->parts[i], 1);
    part_flush_schedule(reg);
}

/* ---- producer snapshots ---- */

typedef struct part_snap_s {
    net_job_t job; /* first */
    part_reg_t *reg;
    uint8_t topic_id[16];
    int32_t partition;
    uint64_t log_uid;
    log_snap_t snap;
} part_snap_t;

static void part_snap_work(net_job_t *job)
{
    log_snap_write(&((part_snap_t *)job)->snap);
}

static void part_snap_done(net_job_t *job)
{
    part_snap_t *ps = (part_snap_t *)job;
    topic_t *topic = part_topic_by_id(ps->reg, ps->topic_id);
    part_t *part = topic ? part_get(topic, ps->partition) : NULL;
    if (part && log_uid(part->log) == ps->log_uid) {
        log_snapshot_done(part->log, &ps->snap);
    } else {
        /* The log is gone. Its directory was renamed away, but a topic
         * made again under the same name has its path now: the file must
         * not stay there as that log's producer state. */
        if (ps->snap.rc != -1)
            unlink(ps->snap.path);
        log_snap_free(&ps->snap);
    }
    free(ps);
}

/* Called after every committed append: the allocation waits until a
 * snapshot is due (after a roll). */
void part_flush_snapshot(part_reg_t *reg, part_t *part)
{
    log_snap_t snap;
    if (!log_snapshot_take(part->log, &snap))
        return;
    part_snap_t *ps = xcalloc(1, sizeof(*ps));
    ps->snap = snap;
    ps->reg = reg;
    memcpy(ps->topic_id, part->topic->id, 16);
    ps->partition = part->index;
    ps->log_uid = log_uid(part->log);
    ps->job.work = part_snap_work;
    ps->job.done = part_snap_done;
    net_pool_run(reg->stopping ? NULL : reg->pool, &ps->job);
}
