/* The end of transactions (txn_int.h): EndTxn's transition to a Prepare
 * state, the markers that follow, the Complete state written once every
 * marker is, the coordinator's own aborts of transactions past their
 * timeout, and the removal of idle transactional ids. */
#include "coord/txn_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

/* The Prepare state is written: the client is answered, and the markers
 * go out. A write that failed for a fence leaves the bumped epoch in
 * memory (Kafka's hasFailedEpochFence): the next fence does not bump
 * again. */
static void txn_prepare_then(txn_coord_t *c, txn_t *t, txn_op_t *op, int16_t err)
{
    txn_write_done_fn *done = (txn_write_done_fn *)op->done;

    if (err) {
        if (t && !op->from_client)
            t->fence_failed = true;
        done(op->arg, err);
        return;
    }
    t->fence_failed = false;
    done(op->arg, KERR_NONE);
    txn_send_markers(c, t);
}

static int16_t txn_end_check(const txn_t *t, int64_t pid, int16_t epoch, bool from_client)
{
    if (t->producer_id != pid)
        return KERR_INVALID_PRODUCER_ID_MAPPING;
    /* a client's epoch must be the current one; the coordinator's own
     * abort comes with the bumped one */
    if ((from_client && epoch != t->epoch) || epoch < t->epoch)
        return KERR_PRODUCER_FENCED;
    if (t->pending != TXN_NONE && t->pending != TXN_PREPARE_EPOCH_FENCE)
        return KERR_CONCURRENT_TRANSACTIONS;
    return KERR_NONE;
}

/* What EndTxn answers for a transaction that is not Ongoing: a retry of
 * the same end succeeds (or waits), the other end is refused. */
static int16_t txn_end_settled(const txn_t *t, bool commit)
{
    switch (t->state) {
    case TXN_COMPLETE_COMMIT:
        return commit ? KERR_NONE : KERR_INVALID_TXN_STATE;
    case TXN_COMPLETE_ABORT:
        return commit ? KERR_INVALID_TXN_STATE : KERR_NONE;
    case TXN_PREPARE_COMMIT:
        return commit ? KERR_CONCURRENT_TRANSACTIONS : KERR_INVALID_TXN_STATE;
    case TXN_PREPARE_ABORT:
        return commit ? KERR_INVALID_TXN_STATE : KERR_CONCURRENT_TRANSACTIONS;
    default:
        return KERR_INVALID_TXN_STATE;
    }
}

void txn_end_entry(txn_coord_t *c, txn_t *t, int64_t pid, int16_t epoch, bool commit,
                   bool from_client, txn_write_done_fn *done, void *arg)
{
    int16_t err = txn_end_check(t, pid, epoch, from_client);
    txn_op_t *op;

    if (!err && t->state != TXN_ONGOING)
        err = txn_end_settled(t, commit);
    if (err || t->state != TXN_ONGOING) {
        if (t->pending == TXN_PREPARE_EPOCH_FENCE)
            t->pending = TXN_NONE;
        done(arg, err);
        return;
    }
    if (!commit && t->pending == TXN_PREPARE_EPOCH_FENCE) {
        /* the fence's epoch becomes the entry's now, before its write */
        t->pending = TXN_NONE;
        t->epoch = epoch;
        t->last_epoch = -1;
    }
    op = txn_op_new(c, t, txn_prepare_then, (void *)done, arg);
    op->commit = commit;
    op->from_client = from_client;
    op->to.state = commit ? TXN_PREPARE_COMMIT : TXN_PREPARE_ABORT;
    op->to.update_ms = c->env.now_ms(c->env.ctx);
    txn_write(c, t, op);
}

/* ---- markers ---- */

void txn_send_markers(txn_coord_t *c, txn_t *t)
{
    txn_markers_t *m = xcalloc(1, sizeof(*m));

    m->producer_id = t->producer_id;
    m->epoch = t->epoch;
    m->commit = t->state == TXN_PREPARE_COMMIT;
    m->coordinator_epoch = c->env.coordinator_epoch(c->env.ctx, t->part);
    m->tps = txn_tps_copy(t->tps, t->ntps);
    m->n = t->ntps;
    m->c = c;
    m->id = txn_strdup(t->id, t->id_len);
    m->id_len = t->id_len;
    m->part = t->part;
    m->gen = c->pgen[t->part];
    t->markers_out++;
    if (m->n == 0)
        txn_markers_done(m);
    else
        c->env.markers(c->env.ctx, m);
}

static void txn_complete_then(txn_coord_t *c, txn_t *t, txn_op_t *op, int16_t err)
{
    (void)c;
    (void)t;
    (void)op;
    (void)err; /* a failed write leaves the Prepare state: the sweep of
                  txn_abort_timed_out writes the markers again */
}

void txn_markers_free(txn_markers_t *m)
{
    txn_tps_free(m->tps, m->n);
    free(m->id);
    free(m);
}

void txn_markers_done(txn_markers_t *m)
{
    txn_coord_t *c = m->c;
    txn_t *t = m->gen == c->pgen[m->part] ? txn_get(c, m->id, m->id_len) : NULL;
    bool commit = m->commit;

    txn_markers_free(m);
    if (!t)
        return;
    t->markers_out--;
    if (t->state != (commit ? TXN_PREPARE_COMMIT : TXN_PREPARE_ABORT) || t->pending != TXN_NONE)
        return;
    /* Kafka's prepareComplete: no partitions, the start time kept */
    txn_op_t *op = txn_op_new(c, t, txn_complete_then, NULL, NULL);
    op->to.state = commit ? TXN_COMPLETE_COMMIT : TXN_COMPLETE_ABORT;
    txn_tps_free(op->to.tps, op->to.ntps);
    op->to.tps = NULL;
    op->to.ntps = 0;
    op->to.update_ms = c->env.now_ms(c->env.ctx);
    txn_write(c, t, op);
}

/* ---- timeouts and expiry ---- */

static void txn_timeout_done(void *arg, int16_t err)
{
    (void)arg;
    (void)err;
}

/* Entries of served partitions with no write out (the sweeps'). */
static bool txn_idle_entry(const txn_coord_t *c, const txn_t *t)
{
    return c->pstate[t->part] == TXN_PART_LOADED && t->pending == TXN_NONE && !t->allocating;
}

static bool txn_timed_out(const txn_coord_t *c, const txn_t *t, const void *arg)
{
    int64_t now = *(const int64_t *)arg;
    return txn_idle_entry(c, t) && t->state == TXN_ONGOING && t->start_ms >= 0 && t->start_ms + t->timeout_ms <= now &&
           t->epoch < INT16_MAX;
}

static bool txn_markers_lost(const txn_coord_t *c, const txn_t *t, const void *arg)
{
    (void)arg;
    return txn_idle_entry(c, t) && (t->state == TXN_PREPARE_COMMIT || t->state == TXN_PREPARE_ABORT) && !t->markers_out;
}

void txn_abort_timed_out(txn_coord_t *c)
{
    int64_t now = c->env.now_ms(c->env.ctx);
    txn_t **v;
    int n = txn_select(c, txn_markers_lost, &now, &v);

    for (int i = 0; i < n; i++)
        txn_send_markers(c, v[i]);
    free(v);
    n = txn_select(c, txn_timed_out, &now, &v);
    for (int i = 0; i < n; i++) {
        txn_t *t = v[i];
        int16_t fenced = t->fence_failed ? t->epoch : (int16_t)(t->epoch + 1);
        t->pending = TXN_PREPARE_EPOCH_FENCE;
        txn_end_entry(c, t, t->producer_id, fenced, false, false, txn_timeout_done, NULL);
    }
    free(v);
}

static void txn_dead_then(txn_coord_t *c, txn_t *t, txn_op_t *op, int16_t err)
{
    (void)op;
    if (t && !err)
        txn_remove(c, t);
}

static bool txn_idle(const txn_coord_t *c, const txn_t *t, const void *arg)
{
    int64_t now = *(const int64_t *)arg;
    return txn_idle_entry(c, t) && (t->state == TXN_EMPTY || t->state == TXN_COMPLETE_COMMIT ||
            t->state == TXN_COMPLETE_ABORT) &&
           t->update_ms + c->cfg.id_expiration_ms <= now;
}

void txn_expire_ids(txn_coord_t *c)
{
    int64_t now = c->env.now_ms(c->env.ctx);
    txn_t **v;
    int n = txn_select(c, txn_idle, &now, &v);

    for (int i = 0; i < n; i++) {
        txn_op_t *op = txn_op_new(c, v[i], txn_dead_then, NULL, NULL);
        op->to.state = TXN_DEAD;
        op->to.update_ms = now;
        txn_write(c, v[i], op);
    }
    free(v);
}
