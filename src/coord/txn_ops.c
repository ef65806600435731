/* The client requests of the transaction coordinator (txn.h):
 * InitProducerId, AddPartitionsToTxn (and AddOffsetsToTxn), its verify
 * form, EndTxn; each validated as Kafka's TransactionCoordinator does,
 * in the same order, with the same errors. */
#include "coord/txn_int.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

#define TXN_EPOCH_MAX INT16_MAX

/* Kafka's isProducerEpochExhausted: one epoch is kept for the fence. */
static bool txn_epoch_exhausted(int16_t epoch)
{
    return epoch >= TXN_EPOCH_MAX - 1;
}

/* ---- InitProducerId ---- */

static void txn_pid_then(txn_coord_t *c, txn_t *t, txn_op_t *op, int16_t err)
{
    txn_pid_reply_fn *done = (txn_pid_reply_fn *)op->done;
    /* a new id whose first write failed is forgotten: the retry starts
     * over (it must not bump an entry that has no producer id) */
    if (err && t && t->producer_id < 0 && t->pending == TXN_NONE)
        txn_remove(c, t);
    if (err || !t)
        done(op->arg, err ? err : KERR_NOT_COORDINATOR, -1, -1);
    else
        done(op->arg, KERR_NONE, t->producer_id, t->epoch);
}

/* The answer of an InitProducerId that had to abort the open
 * transaction first: retry (Kafka's sendRetriableErrorCallback). */
static void txn_pid_fenced(void *arg, int16_t err)
{
    txn_op_t *op = arg;
    txn_pid_reply_fn *done = (txn_pid_reply_fn *)op->done;
    done(op->arg, err ? err : KERR_CONCURRENT_TRANSACTIONS, -1, -1);
    txn_op_free(op);
}

/* Kafka's prepareIncrementProducerEpoch: 0 with op->to set, or the error. */
static int16_t txn_bump(const txn_t *t, int32_t timeout_ms, int16_t expected, int64_t now,
                        txn_transit_t *to)
{
    int16_t bumped = (int16_t)(t->epoch + 1);

    if (expected < 0) {
        to->epoch = bumped;
        to->last_epoch = -1;
    } else if (t->epoch == -1 || expected == t->epoch) {
        to->epoch = bumped;
        to->last_epoch = t->epoch;
    } else if (expected == t->last_epoch) {
        to->epoch = t->epoch; /* a retry of the last bump */
        to->last_epoch = t->last_epoch;
    } else {
        return KERR_PRODUCER_FENCED;
    }
    to->state = TXN_EMPTY;
    to->timeout_ms = timeout_ms;
    txn_tps_free(to->tps, to->ntps);
    to->tps = NULL;
    to->ntps = 0;
    to->start_ms = -1;
    to->update_ms = now;
    return KERR_NONE;
}

/* Kafka's prepareProducerIdRotation: a new id at epoch 0 once the epoch
 * is exhausted. */
static void txn_rotate(const txn_t *t, int64_t new_pid, int32_t timeout_ms, bool recovering,
                       int64_t now, txn_transit_t *to)
{
    to->prev_producer_id = t->producer_id;
    to->producer_id = new_pid;
    to->epoch = 0;
    to->last_epoch = recovering ? t->epoch : -1;
    to->state = TXN_EMPTY;
    to->timeout_ms = timeout_ms;
    txn_tps_free(to->tps, to->ntps);
    to->tps = NULL;
    to->ntps = 0;
    to->start_ms = -1;
    to->update_ms = now;
}

typedef struct txn_pid_wait_s {
    txn_coord_t *c;
    char *id;
    size_t id_len;
    uint32_t gen;
    int32_t part;
    int32_t timeout_ms;
    int16_t expected_epoch;
    bool rotate;
    txn_pid_reply_fn *done;
    void *arg;
} txn_pid_wait_t;

/* A producer id came for a new entry or a rotation. */
static void txn_pid_got(void *arg, int64_t pid, int16_t err)
{
    txn_pid_wait_t *w = arg;
    txn_coord_t *c = w->c;
    txn_t *t = w->gen == c->pgen[w->part] ? txn_get(c, w->id, w->id_len) : NULL;
    int64_t now = c->env.now_ms(c->env.ctx);

    if (t)
        t->allocating = false;
    if (!t || err) {
        w->done(w->arg, err ? err : KERR_NOT_COORDINATOR, -1, -1);
    } else {
        txn_op_t *op = txn_op_new(c, t, txn_pid_then, (void *)w->done, w->arg);
        if (w->rotate) {
            txn_rotate(t, pid, w->timeout_ms, w->expected_epoch >= 0, now, &op->to);
        } else {
            op->to.producer_id = pid;
            txn_bump(t, w->timeout_ms, -1, now, &op->to);
        }
        txn_write(c, t, op);
    }
    free(w->id);
    free(w);
}

static void txn_pid_alloc(txn_coord_t *c, txn_t *t, int32_t timeout_ms, int16_t expected,
                          bool rotate, txn_pid_reply_fn *done, void *arg)
{
    txn_pid_wait_t *w = xcalloc(1, sizeof(*w));

    w->c = c;
    w->id = txn_strdup(t->id, t->id_len);
    w->id_len = t->id_len;
    w->part = t->part;
    w->gen = c->pgen[t->part];
    w->timeout_ms = timeout_ms;
    w->expected_epoch = expected;
    w->rotate = rotate;
    w->done = done;
    w->arg = arg;
    t->allocating = true;
    c->env.producer_id(c->env.ctx, txn_pid_got, w);
}

/* Kafka's isValidProducerId check of the id and epoch a producer names
 * (KIP-360): its own, or the one before a rotation. */
static bool txn_pid_valid(const txn_t *t, int64_t pid, int16_t epoch)
{
    if (t->producer_id == pid)
        return true;
    return t->prev_producer_id == pid && t->next_producer_id < 0 && epoch == t->last_epoch;
}

/* InitProducerId for an existing entry. */
static void txn_pid_existing(txn_coord_t *c, txn_t *t, int32_t timeout_ms, int64_t pid,
                             int16_t epoch, txn_pid_reply_fn *done, void *arg)
{
    int64_t now = c->env.now_ms(c->env.ctx);
    txn_op_t *op;
    int16_t err;

    if (t->pending != TXN_NONE || t->allocating) {
        done(arg, KERR_CONCURRENT_TRANSACTIONS, -1, -1);
        return;
    }
    if (t->producer_id < 0) { /* never written: a producer id first */
        txn_pid_alloc(c, t, timeout_ms, -1, false, done, arg);
        return;
    }
    if (pid >= 0 && !txn_epoch_exhausted(t->epoch) && !txn_pid_valid(t, pid, epoch)) {
        done(arg, KERR_PRODUCER_FENCED, -1, -1);
        return;
    }
    switch (t->state) {
    case TXN_PREPARE_ABORT:
    case TXN_PREPARE_COMMIT:
        done(arg, KERR_CONCURRENT_TRANSACTIONS, -1, -1);
        return;
    case TXN_COMPLETE_ABORT:
    case TXN_COMPLETE_COMMIT:
    case TXN_EMPTY:
        if (txn_epoch_exhausted(t->epoch) && (pid < 0 || epoch == t->epoch)) {
            txn_pid_alloc(c, t, timeout_ms, pid >= 0 ? epoch : -1, true, done, arg);
            return;
        }
        op = txn_op_new(c, t, txn_pid_then, (void *)done, arg);
        err = txn_bump(t, timeout_ms, pid >= 0 ? epoch : -1, now, &op->to);
        if (err) {
            txn_op_free(op);
            done(arg, err, -1, -1);
            return;
        }
        txn_write(c, t, op);
        return;
    case TXN_ONGOING: {
        /* the open transaction is aborted under a bumped epoch, never
         * given to the client, which retries and bumps it again */
        txn_op_t *w = txn_op_new(c, t, NULL, (void *)done, arg);
        int16_t fenced = t->fence_failed ? t->epoch : (int16_t)(t->epoch + 1);
        t->pending = TXN_PREPARE_EPOCH_FENCE;
        txn_end_entry(c, t, t->producer_id, fenced, false, false, txn_pid_fenced, w);
        return;
    }
    default:
        done(arg, KERR_CONCURRENT_TRANSACTIONS, -1, -1);
        return;
    }
}

void txn_init_producer_id(txn_coord_t *c, const char *id, size_t id_len, int32_t timeout_ms,
                          int64_t pid, int16_t epoch, txn_pid_reply_fn *done, void *arg)
{
    txn_t *t;
    int16_t err;

    if (id_len == 0) {
        done(arg, KERR_INVALID_REQUEST, -1, -1);
        return;
    }
    if (timeout_ms <= 0 || timeout_ms > c->cfg.max_timeout_ms) {
        done(arg, KERR_INVALID_TRANSACTION_TIMEOUT, -1, -1);
        return;
    }
    err = txn_find(c, id, id_len, &t);
    if (err) {
        done(arg, err, -1, -1);
        return;
    }
    if (t && t->state == TXN_DEAD)
        t = NULL; /* being removed: a new one takes its place once written */
    if (!t) {
        if (txn_get(c, id, id_len)) {
            done(arg, KERR_CONCURRENT_TRANSACTIONS, -1, -1);
            return;
        }
        t = txn_add(c, id, id_len, timeout_ms);
        txn_pid_alloc(c, t, timeout_ms, -1, false, done, arg);
        return;
    }
    txn_pid_existing(c, t, timeout_ms, pid, epoch, done, arg);
}

/* ---- AddPartitionsToTxn ---- */

/* The checks AddPartitionsToTxn, EndTxn and the verification share
 * (Kafka's order: the id mapping, the epoch, a pending write). */
static int16_t txn_check_producer(const txn_t *t, int64_t pid, int16_t epoch)
{
    if (!t || t->producer_id != pid)
        return KERR_INVALID_PRODUCER_ID_MAPPING;
    if (t->epoch != epoch)
        return KERR_PRODUCER_FENCED;
    return KERR_NONE;
}

static void txn_add_then(txn_coord_t *c, txn_t *t, txn_op_t *op, int16_t err)
{
    (void)c;
    (void)t;
    ((txn_write_done_fn *)op->done)(op->arg, err);
}

static bool txn_has_all(const txn_t *t, const txn_tp_t *tps, int n)
{
    for (int i = 0; i < n; i++)
        if (!txn_has_tp(t, tps[i].topic, tps[i].partition))
            return false;
    return true;
}

void txn_add_partitions(txn_coord_t *c, const char *id, size_t id_len, int64_t pid,
                        int16_t epoch, const txn_tp_t *tps, int n, txn_write_done_fn *done,
                        void *arg)
{
    int64_t now = c->env.now_ms(c->env.ctx);
    txn_op_t *op;
    txn_t *t;
    int16_t err;

    if (id_len == 0) {
        done(arg, KERR_INVALID_REQUEST);
        return;
    }
    err = txn_find(c, id, id_len, &t);
    if (!err)
        err = txn_check_producer(t, pid, epoch);
    if (!err && (t->pending != TXN_NONE || t->state == TXN_PREPARE_COMMIT ||
                 t->state == TXN_PREPARE_ABORT))
        err = KERR_CONCURRENT_TRANSACTIONS;
    if (!err && t->state == TXN_ONGOING && txn_has_all(t, tps, n)) {
        done(arg, KERR_NONE);
        return;
    }
    if (err) {
        done(arg, err);
        return;
    }
    /* Kafka's prepareAddPartitions */
    op = txn_op_new(c, t, txn_add_then, (void *)done, arg);
    for (int i = 0; i < n; i++) {
        if (txn_has_tp(t, tps[i].topic, tps[i].partition))
            continue;
        op->to.tps = xrealloc(op->to.tps, sizeof(*op->to.tps) * (size_t)(op->to.ntps + 1));
        op->to.tps[op->to.ntps].topic = xstrdup(tps[i].topic);
        op->to.tps[op->to.ntps++].partition = tps[i].partition;
    }
    if (t->state == TXN_EMPTY || t->state == TXN_COMPLETE_COMMIT ||
        t->state == TXN_COMPLETE_ABORT)
        op->to.start_ms = now;
    op->to.state = TXN_ONGOING;
    op->to.update_ms = now;
    txn_write(c, t, op);
}

int16_t txn_verify(txn_coord_t *c, const char *id, size_t id_len, int64_t pid, int16_t epoch,
                   const txn_tp_t *tps, int n, int16_t *errs)
{
    txn_t *t;
    int16_t err = txn_find(c, id, id_len, &t);

    if (!err)
        err = txn_check_producer(t, pid, epoch);
    if (!err && (t->state == TXN_PREPARE_COMMIT || t->state == TXN_PREPARE_ABORT))
        err = KERR_CONCURRENT_TRANSACTIONS;
    if (err)
        return err;
    for (int i = 0; i < n; i++)
        errs[i] = t->state == TXN_ONGOING && txn_has_tp(t, tps[i].topic, tps[i].partition)
                      ? KERR_NONE
                      : KERR_TRANSACTION_ABORTABLE;
    return KERR_NONE;
}

/* ---- EndTxn ---- */

void txn_end(txn_coord_t *c, const char *id, size_t id_len, int64_t pid, int16_t epoch,
             bool commit, txn_write_done_fn *done, void *arg)
{
    txn_t *t;
    int16_t err;

    if (id_len == 0) {
        done(arg, KERR_INVALID_REQUEST);
        return;
    }
    err = txn_find(c, id, id_len, &t);
    if (!err && !t)
        err = KERR_INVALID_PRODUCER_ID_MAPPING;
    if (err) {
        done(arg, err);
        return;
    }
    txn_end_entry(c, t, pid, epoch, commit, true, done, arg);
}
