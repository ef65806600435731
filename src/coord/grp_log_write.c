/* The coordinator's writes (grp_log_int.h). Each coordinator write (one
 * OffsetCommit request, one group state change) becomes one magic-2
 * record batch, uncompressed, without producer id (the layout is
 * log_batch_build's; the keys and values are grp_rec.c's), appended as
 * leader to the group's partition through the partition layer, which
 * places it at once: the coordinator then applies the change, and its
 * answers wait for the commit (grp_log_when_committed). */
#include "coord/grp_log_int.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "coord/grp_rec.h"
#include "log/log_batch.h"
#include "partition/part_append.h"
#include "partition/part_delay.h"
#include "partition/part_flush.h"
#include "partition/part_read.h"
#include "util/logging.h"
#include "util/mem.h"

typedef struct grp_log_write_s {
    part_append_t op; /* first */
    part_append_ent_t ent;
    buf_t batch;
    int in_call;
    int finished;
} grp_log_write_t;

static void grp_log_write_free(grp_log_write_t *w)
{
    buf_free(&w->batch);
    free(w);
}

/* The append is complete (flushed and replicated as asked); what the
 * replies wait for is the high watermark, not this. */
static void grp_log_written(part_append_t *op)
{
    grp_log_write_t *w = (grp_log_write_t *)op;
    if (w->in_call)
        w->finished = 1;
    else
        grp_log_write_free(w);
}

static int grp_log_build(grp_log_write_t *w, const grp_recs_t *recs, int64_t now)
{
    log_record_t *r = xcalloc((size_t)recs->n, sizeof(*r));
    log_batch_build_t opt;
    for (int i = 0; i < recs->n; i++) {
        const struct grp_recs_ent_s *e = &recs->v[i];
        r[i].offset = i;
        r[i].timestamp = now;
        r[i].key = recs->data.p + e->key_off;
        r[i].key_len = e->key_len;
        r[i].value = e->val_len >= 0 ? recs->data.p + e->val_off : NULL;
        r[i].value_len = e->val_len;
    }
    buf_init(&w->batch);
    log_batch_build_init(&opt);
    if (recs->producer_id >= 0) {
        /* a transaction's offsets, as Kafka writes them: the producer's
         * id and epoch, sequence 0 (a coordinator's batch is not checked
         * for it), transactional */
        opt.producer_id = recs->producer_id;
        opt.producer_epoch = recs->producer_epoch;
        opt.base_sequence = 0;
        opt.attributes |= LOG_BATCH_ATTR_TRANSACTIONAL;
    }
    int rc = log_batch_build(&w->batch, &opt, r, recs->n);
    free(r);
    return rc;
}

static void grp_log_compact_check(grp_log_t *h, part_t *part);

int16_t grp_log_store(void *ctx, int32_t p, const grp_recs_t *recs)
{
    grp_log_t *h = ctx;
    part_t *part = grp_log_part(h, p);
    int64_t now = net_now_wall_ms();

    if (!part)
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (!grp_log_leads(h, p))
        return KERR_NOT_COORDINATOR; /* as Kafka's write to a partition it does not lead */
    if (!recs->n)
        return KERR_NONE;
    grp_log_write_t *w = xcalloc(1, sizeof(*w));
    if (grp_log_build(w, recs, now) < 0) {
        grp_log_write_free(w);
        return KERR_UNKNOWN_SERVER_ERROR;
    }
    w->op.reg = h->reg;
    w->op.acks = -1;
    w->op.origin = PART_ORIGIN_COORDINATOR;
    w->op.inline_place = 1;
    w->op.produce_version = 12;
    w->op.now_ms = now;
    w->op.timeout_ms = h->commit_timeout_ms;
    w->op.ents = &w->ent;
    w->op.nents = 1;
    w->op.done = grp_log_written;
    w->ent.topic = GRP_LOG_TOPIC;
    w->ent.topic_len = sizeof(GRP_LOG_TOPIC) - 1;
    w->ent.partition = p;
    w->ent.records = w->batch.p;
    w->ent.len = (int32_t)w->batch.len;
    w->ent.txn_verified = recs->producer_id >= 0; /* TxnOffsetCommit checked it */
    w->in_call = 1;
    part_append(&w->op);
    w->in_call = 0;
    int16_t err = w->ent.err;
    if (!err && w->ent.last_offset + 1 > h->written_end[p])
        h->written_end[p] = w->ent.last_offset + 1;
    if (w->finished)
        grp_log_write_free(w);
    if (!err)
        grp_log_compact_check(h, part);
    return err;
}

/* ---- waiting for the commit ---- */

typedef struct grp_log_wait_s {
    grp_log_t *h;
    int32_t *parts;
    int64_t *marks; /* written_end of each when the wait began */
    int n;
    grp_log_committed_fn *cb;
    void *udata;
} grp_log_wait_t;

/* 0 when every partition has its writes committed, 1 while one waits, or
 * the error of one that failed. */
static int grp_log_wait_state(grp_log_wait_t *wt)
{
    for (int i = 0; i < wt->n; i++) {
        part_t *part = grp_log_part(wt->h, wt->parts[i]);
        if (!part || part_hwm(part) >= wt->marks[i])
            continue; /* gone: its groups are answered NOT_COORDINATOR from now on */
        if (part_offline(part))
            return KERR_KAFKA_STORAGE_ERROR;
        return 1;
    }
    return 0;
}

static void grp_log_wait_free(grp_log_wait_t *wt)
{
    free(wt->parts);
    free(wt->marks);
    free(wt);
}

static int grp_log_wait_try(void *owner, int expired)
{
    grp_log_wait_t *wt = owner;
    int st = grp_log_wait_state(wt);
    if (st == 1 && !expired)
        return 0;
    wt->cb(wt->udata, st == 1 ? KERR_REQUEST_TIMED_OUT : (int16_t)st);
    grp_log_wait_free(wt);
    return 1;
}

void grp_log_when_committed(grp_coord_t *c, const int32_t *parts, int n,
                            grp_log_committed_fn *cb, void *udata)
{
    grp_log_t *h = grp_coord_env(c)->ctx;
    grp_log_wait_t *wt = xcalloc(1, sizeof(*wt));

    wt->h = h;
    wt->cb = cb;
    wt->udata = udata;
    wt->parts = xcalloc((size_t)n + 1, sizeof(*wt->parts));
    wt->marks = xcalloc((size_t)n + 1, sizeof(*wt->marks));
    for (int i = 0; i < n; i++)
        if (parts[i] >= 0 && parts[i] < h->nparts) {
            wt->parts[wt->n] = parts[i];
            wt->marks[wt->n++] = h->written_end[parts[i]];
        }
    if (grp_log_wait_state(wt) != 1) {
        grp_log_wait_try(wt, 1);
        return;
    }
    part_delay_t *d = part_delay_new(h->reg, h->commit_timeout_ms, grp_log_wait_try, wt);
    topic_t *t = part_topic_get(h->reg, GRP_LOG_TOPIC, sizeof(GRP_LOG_TOPIC) - 1);
    for (int i = 0; t && i < wt->n; i++)
        part_delay_watch(d, t->id, wt->parts[i]);
    part_delay_arm(d);
}

int32_t grp_log_partition(const grp_coord_t *c, const char *group_id)
{
    const grp_log_t *h = grp_coord_env(c)->ctx;
    return grp_rec_partition_for(group_id, strlen(group_id), h->nparts);
}

/* ---- compaction ----
 *
 * Kafka compacts __consumer_offsets; the log layer does not compact yet,
 * and without it the topic would grow with every commit (and replay at
 * start would slow down). The coordinator holds the whole live state, so
 * it rewrites a partition instead: roll the log, append the records of
 * the live state (grp_part_snapshot), flush (a round of the partition
 * layer, on a worker), and then delete everything before them
 * (DeleteRecords). A crash at any point leaves either the old records, or
 * the old records followed by the rewrite, which replay to the same
 * state. A partition is rewritten when its log exceeds
 * GRP_LOG_COMPACT_MIN (or offsets.topic.segment.bytes if smaller) and
 * four times its live state. */

/* Called after each append: only marks the partition (a rewrite must
 * not run inside a coordinator operation, which applies its change
 * after the append). */
static void grp_log_compact_check(grp_log_t *h, part_t *part)
{
    if (part_size_bytes(part) < h->compact_at[part->index] || h->compact_due[part->index])
        return;
    h->compact_due[part->index] = true;
    if (!h->compact_timer.id)
        grp_log_arm(h, &h->compact_timer, 0);
}

/* The rewrite's records are flushed: the old ones can go. */
typedef struct grp_log_rewrite_s {
    part_flush_waiter_t fw; /* first */
    grp_log_t *h;
    int32_t p;
    int64_t start;
    int64_t before;
    int n;
} grp_log_rewrite_t;

static void grp_log_rewritten(part_flush_waiter_t *w, const part_flush_fail_t *failed, int nf)
{
    grp_log_rewrite_t *rw = (grp_log_rewrite_t *)w;
    part_t *part = grp_log_part(rw->h, rw->p);
    int64_t low;
    int16_t err = nf || !part ? KERR_KAFKA_STORAGE_ERROR : KERR_NONE;

    (void)failed;
    if (!err)
        err = part_delete_records(part, rw->start, &low);
    if (err)
        lg_error("%s-%d: rewrite failed: %s", GRP_LOG_TOPIC, rw->p, kerr_name(err));
    else
        lg_info("%s-%d: rewrote %d live record(s) at offset %lld; %lld bytes before, %lld after",
                GRP_LOG_TOPIC, rw->p, rw->n, (long long)rw->start, (long long)rw->before,
                (long long)part_size_bytes(part));
    rw->h->compacting[rw->p] = false;
    free(rw);
}

/* The live state in batches well below the segment size (a batch must
 * fit one). */
static int16_t grp_log_store_all(grp_log_t *h, int32_t p, const grp_recs_t *recs)
{
    int16_t err = KERR_NONE;
    for (int i = 0; !err && i < recs->n;) {
        grp_recs_t view = *recs;
        size_t bytes = 0;
        view.v = recs->v + i;
        view.n = 0;
        while (i + view.n < recs->n && (view.n == 0 || bytes < (size_t)h->compact_min / 4)) {
            const struct grp_recs_ent_s *e = &recs->v[i + view.n];
            bytes += (size_t)e->key_len + (size_t)(e->val_len > 0 ? e->val_len : 0);
            view.n++;
        }
        err = grp_log_store(h, p, &view);
        i += view.n;
    }
    return err;
}

static void grp_log_compact(grp_log_t *h, int32_t p)
{
    part_t *part = grp_log_part(h, p);
    grp_recs_t recs;

    if (!part || !grp_log_leads(h, p) || grp_part_loading(h->coord, p) || h->compacting[p])
        return; /* not led here: its groups are not loaded, the log is not ours to rewrite */
    int64_t before = part_size_bytes(part);
    grp_recs_init(&recs);
    int n = grp_part_snapshot(h->coord, p, &recs);
    if (n < 0) { /* a transaction's records must stay: on the next check */
        grp_recs_free(&recs);
        return;
    }
    /* Not again before the log is four times the live state. */
    int64_t live = (int64_t)recs.data.len;
    h->compact_at[p] = live * 4 > h->compact_min ? live * 4 : h->compact_min;
    if (before < h->compact_at[p]) {
        grp_recs_free(&recs);
        return;
    }
    int16_t err = part_roll(h->reg, part, net_now_wall_ms());
    int64_t start = part_log_end(part);
    if (!err)
        err = grp_log_store_all(h, p, &recs);
    grp_recs_free(&recs);
    if (err) {
        lg_error("%s-%d: rewrite failed: %s", GRP_LOG_TOPIC, p, kerr_name(err));
        return;
    }
    grp_log_rewrite_t *rw = xcalloc(1, sizeof(*rw));
    rw->h = h;
    rw->p = p;
    rw->start = start;
    rw->before = before;
    rw->n = n;
    rw->fw.done = grp_log_rewritten;
    h->compacting[p] = true;
    part_flush_add(h->reg, part);
    part_flush_wait(h->reg, &rw->fw);
}

void grp_log_compact_step(grp_timer_t *t)
{
    grp_log_t *h = (grp_log_t *)(void *)((char *)t - offsetof(grp_log_t, compact_timer));
    for (int32_t p = 0; p < h->nparts; p++)
        if (h->compact_due[p]) {
            grp_log_compact(h, p); /* still due meanwhile: its own appends do not re-arm */
            h->compact_due[p] = false;
        }
}
