/* The metadata log of a Raft quorum (meta_log.h, "a Raft quorum's log"):
 * proposals through the Raft node, and the committed batches applied in
 * log order as the high watermark passes them, one at a time (the
 * listener may take its time: the next waits for it). Control batches
 * (LeaderChangeMessage, snapshot markers) are passed over. */
#include <stdlib.h>

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
    if (!ml->pumping)
        mlq_pump(ml);
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
        lg_error("metadata quorum: cannot read the committed batch at %lld",
                 (long long)ml->last_applied + 1);
        buf_free(&b);
        return 0;
    }
    int64_t last = h.base_offset + h.last_offset_delta;
    if (LOG_BATCH_ATTR_IS_CONTROL(h.attributes)) {
        ml->last_applied = last;
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
