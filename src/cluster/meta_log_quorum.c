/* The metadata log of a Raft quorum (meta_log.h, "a Raft quorum's log"):
 * proposals through the Raft node, and the committed batches applied in
 * log order as the high watermark passes them, one at a time (the
 * listener may take its time: the next waits for it). Control batches
 * (LeaderChangeMessage, snapshot markers) are passed over. A snapshot
 * fetched from the leader replaces the image, once what is at the
 * listener is done. */
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_image_recs.h"
#include "cluster/meta_log.h"
#include "cluster/raft_node.h"
#include "log/log_batch.h"
#include "net/net_loop.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

typedef struct meta_wait_s {
    int64_t last;         /* the proposal's last offset */
    meta_commit_fn *cb;
    void *udata;
    struct meta_wait_s *next;
} meta_wait_t;

/* A batch at the listener. */
typedef struct mlq_apply_s {
    meta_log_t *ml;
    buf_t batch;
    int64_t last;
} mlq_apply_t;

static void mlq_pump(meta_log_t *ml);
int64_t meta_log_next_offset(const meta_log_t *ml)
{
    if (ml->raft)
        return raft_log_end(raft_node_core(ml->raft));
    return meta_log_end_offset(ml);
}

static void mlq_fail_all(meta_log_t *ml, int16_t err);

void meta_log_use_raft(meta_log_t *ml, struct raft_node_s *raft, void (*on_active)(void *arg),
                       void *arg)
{
    if (!raft)
        mlq_fail_all(ml, KERR_NOT_CONTROLLER); /* the quorum is going: nothing will commit */
    if (!raft && ml->apply_retry && ml->loop) {
        net_timer_cancel(ml->loop, ml->apply_retry);
        ml->apply_retry = 0;
    }
    ml->raft = raft;
    ml->active = 0;
    ml->on_active = on_active;
    ml->on_active_arg = arg;
    if (!ml->waits_tail)
        ml->waits_tail = &ml->waits;
}

int meta_log_active(const meta_log_t *ml)
{
    if (!ml->raft)
        return 0;
    int64_t start = raft_epoch_start(raft_node_core(ml->raft));
    return start >= 0 && ml->last_applied >= start;
}

static void mlq_fail_all(meta_log_t *ml, int16_t err)
{
    while (ml->waits) {
        meta_wait_t *w = ml->waits;
        ml->waits = w->next;
        if (!ml->waits)
            ml->waits_tail = &ml->waits;
        w->cb(w->udata, err);
        free(w);
    }
}

/* Once everything before its epoch is applied, the leader is the active
 * controller: it is told so (the first one of a new cluster writes the
 * bootstrap records then). */
static void mlq_check_active(meta_log_t *ml)
{
    int a = meta_log_active(ml);
    if (a && !ml->active) {
        ml->active = 1;
        lg_info("metadata quorum: this node is the active controller");
        if (ml->on_active)
            ml->on_active(ml->on_active_arg);
    } else if (!a) {
        ml->active = 0;
    }
}

void meta_log_role(meta_log_t *ml, int64_t now_ms)
{
    (void)now_ms;
    if (!ml->raft)
        return;
    if (raft_role(raft_node_core(ml->raft)) != RAFT_LEADER)
        mlq_fail_all(ml, KERR_NOT_CONTROLLER);
    mlq_check_active(ml);
}

void meta_log_quorum_submit(meta_log_t *ml, const meta_rec_t *recs, int n, int64_t now_ms,
                            meta_commit_fn *cb, void *udata)
{
    (void)now_ms;
    int64_t last = meta_log_active(ml) ? raft_node_propose(ml->raft, recs, n) : -1;
    if (last < 0) {
        cb(udata, KERR_NOT_CONTROLLER);
        return;
    }
    meta_wait_t *w = xcalloc(1, sizeof(*w));
    w->last = last;
    w->cb = cb;
    w->udata = udata;
    *ml->waits_tail = w;
    ml->waits_tail = &w->next;
}

/* Those whose batch is now in the image hear. */
static void mlq_answer(meta_log_t *ml)
{
    while (ml->waits && ml->waits->last <= ml->last_applied) {
        meta_wait_t *w = ml->waits;
        ml->waits = w->next;
        if (!ml->waits)
            ml->waits_tail = &ml->waits;
        w->cb(w->udata, KERR_NONE);
        free(w);
    }
}

static int mlq_install_run(meta_log_t *ml);

static void mlq_applied(void *arg)
{
    mlq_apply_t *a = arg;
    meta_log_t *ml = a->ml;
    if (ml->last_applied < a->last)
        ml->last_applied = a->last;
    buf_free(&a->batch);
    free(a);
    ml->applying = 0;
    mlq_answer(ml);
    if (!ml->pumping && !mlq_install_run(ml))
        mlq_pump(ml);
}

static void mlq_retry(net_loop_t *loop, void *data)
{
    meta_log_t *ml = data;
    (void)loop;
    ml->apply_retry = 0;
    if (ml->raft && !ml->applying && !ml->pumping)
        mlq_pump(ml);
}

/* A committed batch that cannot be read now (a read racing a log change,
 * an I/O error) is tried again soon, not only when the high watermark
 * next moves (an idle quorum would leave the image behind). */
static void mlq_retry_later(meta_log_t *ml)
{
    if (ml->loop && !ml->apply_retry)
        ml->apply_retry = net_timer_add(ml->loop, 100, mlq_retry, ml);
}

/* The next committed batch: 1 when one was handed to the listener (or
 * passed over), 0 when there is none (or it cannot be read). */
static int mlq_next(meta_log_t *ml)
{
    buf_t b;
    log_batch_hdr_t h;
    buf_init(&b);
    if (raft_node_read(ml->raft, ml->last_applied + 1, 1, &b) != 0 || b.len == 0 ||
        log_batch_hdr_parse(b.p, b.len, &h) < 0) {
        lg_error("metadata quorum: cannot read the committed batch at %lld; trying again",
                 (long long)ml->last_applied + 1);
        buf_free(&b);
        mlq_retry_later(ml);
        return 0;
    }
    int64_t last = h.base_offset + h.last_offset_delta;
    if (LOG_BATCH_ATTR_IS_CONTROL(h.attributes)) {
        ml->last_applied = last;
        ml->last_epoch = h.leader_epoch; /* a snapshot here is of this epoch */
        buf_free(&b);
        mlq_answer(ml);
        return 1;
    }
    mlq_apply_t *a = xcalloc(1, sizeof(*a));
    a->ml = ml;
    a->batch = b;
    a->last = last;
    ml->applying = 1;
    size_t len = (size_t)log_batch_total_size(b.p, b.len);
    meta_log_apply(ml, a->batch.p, len, net_now_wall_ms(), mlq_applied, a);
    return 1;
}

static void mlq_pump(meta_log_t *ml)
{
    ml->pumping = 1;
    while (!ml->applying && ml->last_applied + 1 < ml->commit_hw && mlq_next(ml))
        ;
    ml->pumping = 0;
    if (!ml->applying)
        mlq_check_active(ml);
}

void meta_log_committed(meta_log_t *ml, int64_t hw, int64_t now_ms)
{
    (void)now_ms;
    if (hw > ml->commit_hw)
        ml->commit_hw = hw;
    if (ml->raft && !ml->applying && !ml->pumping)
        mlq_pump(ml);
}

/* ---- a fetched snapshot replaces the image ---- */

typedef struct meta_install_s {
    meta_snap_id_t id;
    meta_image_t img;
    int64_t last_ts;
} meta_install_t;

/* What the listener is told: a RemoveTopicRecord for each topic the new
 * image lacks, then every record of the new image (those already known
 * change nothing), encoded into enc and decoded from it into arena (the
 * records point into both: they live as long as these). Returns the
 * count; *out owned. */
static int mlq_install_recs(const meta_image_t *old, const meta_image_t *img,
                            meta_snap_recs_t *enc, arena_t *arena, meta_rec_t **out)
{
    mi_topic_t *t;
    size_t pos = 0;
    int n = 0, cap = 16;
    meta_rec_t *recs = xmalloc((size_t)cap * sizeof(*recs));

    while ((t = meta_image_topic_next(old, &pos))) {
        if (meta_image_topic_by_id(img, t->id))
            continue;
        if (n == cap)
            recs = xrealloc(recs, (size_t)(cap *= 2) * sizeof(*recs));
        memset(&recs[n], 0, sizeof(recs[n]));
        recs[n].type = META_REC_REMOVE_TOPIC;
        memcpy(recs[n++].u.remove_topic.topic_id.b, t->id, 16);
    }
    meta_snap_collect(enc, img);
    for (int i = 0; i < enc->n; i++) {
        size_t from = i ? enc->ends[i - 1] : 0;
        if (n == cap)
            recs = xrealloc(recs, (size_t)(cap *= 2) * sizeof(*recs));
        if (meta_rec_decode(&recs[n], enc->vals.p + from, enc->ends[i] - from, arena) == 0)
            n++;
    }
    *out = recs;
    return n;
}

static void mlq_install_applied(void *arg)
{
    meta_log_t *ml = arg;
    ml->applying = 0;
    mlq_answer(ml);
    if (!ml->pumping)
        mlq_pump(ml);
}

/* Runs the install waiting, if any: 1 when one was started. */
static int mlq_install_run(meta_log_t *ml)
{
    meta_install_t *in = ml->install;
    meta_image_t old;
    meta_rec_t *recs;
    meta_snap_recs_t enc;
    arena_t arena;
    int64_t now_ms = net_now_wall_ms();

    if (!in || ml->applying)
        return 0;
    ml->install = NULL;
    old = ml->img;
    ml->img = in->img;
    ml->last_applied = in->id.end_offset - 1;
    ml->last_epoch = in->id.epoch;
    ml->last_ts = in->last_ts;
    ml->has_snap = 1;
    ml->snap = in->id;
    ml->snap_bytes = 0;
    ml->snap_ms = now_ms;
    if (ml->commit_hw < in->id.end_offset)
        ml->commit_hw = in->id.end_offset;
    free(in);
    arena_init(&arena, 4096);
    meta_snap_recs_init(&enc);
    int n = mlq_install_recs(&old, &ml->img, &enc, &arena, &recs);
    lg_info("metadata quorum: the image is now snapshot %lld-%d's (%d records)",
            (long long)ml->snap.end_offset, ml->snap.epoch, n);
    ml->applying = 1;
    if (ml->listener.on_commit)
        ml->listener.on_commit(ml->listener.ctx, recs, n, &ml->img, now_ms, mlq_install_applied,
                               ml);
    else
        mlq_install_applied(ml);
    free(recs);
    meta_snap_recs_free(&enc);
    arena_destroy(&arena);
    meta_image_free(&old);
    return 1;
}

void meta_log_install_drop(meta_log_t *ml)
{
    if (!ml->install)
        return;
    meta_image_free(&ml->install->img);
    free(ml->install);
    ml->install = NULL;
}

void meta_log_install(meta_log_t *ml, meta_snap_id_t id, meta_image_t *img, int64_t last_ts,
                      int64_t now_ms)
{
    (void)now_ms;
    meta_log_install_drop(ml); /* a newer one replaces one still waiting */
    meta_install_t *in = xcalloc(1, sizeof(*in));
    in->id = id;
    in->img = *img;
    in->last_ts = last_ts;
    ml->install = in;
    if (!ml->pumping)
        mlq_install_run(ml);
}
