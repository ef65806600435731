/* Transitions and their writes (txn_int.h): a transition is the entry's
 * next values (Kafka's TxnTransitMetadata), written to the id's
 * partition of __transaction_state and applied once the write is
 * committed. While it is out the entry's pending state is set. */
#include "coord/txn_int.h"

#include <stdlib.h>
#include <string.h>

#include "coord/txn_rec.h"
#include "util/mem.h"

void txn_transit_from(const txn_t *t, txn_transit_t *to)
{
    to->state = t->state;
    to->producer_id = t->producer_id;
    to->prev_producer_id = t->prev_producer_id;
    to->next_producer_id = t->next_producer_id;
    to->epoch = t->epoch;
    to->last_epoch = t->last_epoch;
    to->timeout_ms = t->timeout_ms;
    to->tps = txn_tps_copy(t->tps, t->ntps);
    to->ntps = t->ntps;
    to->start_ms = t->start_ms;
    to->update_ms = t->update_ms;
    to->client_version = t->client_version;
}

void txn_apply(txn_t *t, txn_transit_t *to)
{
    t->state = to->state;
    t->producer_id = to->producer_id;
    t->prev_producer_id = to->prev_producer_id;
    t->next_producer_id = to->next_producer_id;
    t->epoch = to->epoch;
    t->last_epoch = to->last_epoch;
    t->timeout_ms = to->timeout_ms;
    txn_tps_free(t->tps, t->ntps);
    t->tps = to->tps;
    t->ntps = t->captps = to->ntps;
    to->tps = NULL;
    to->ntps = 0;
    t->start_ms = to->start_ms;
    t->update_ms = to->update_ms;
    t->client_version = to->client_version;
}

txn_op_t *txn_op_new(txn_coord_t *c, const txn_t *t, txn_then_fn *then, void *done, void *arg)
{
    txn_op_t *op = xcalloc(1, sizeof(*op));

    op->c = c;
    op->id = txn_strdup(t->id, t->id_len);
    op->id_len = t->id_len;
    op->part = t->part;
    op->gen = c->pgen[t->part];
    txn_transit_from(t, &op->to);
    op->then = then;
    op->done = done;
    op->arg = arg;
    return op;
}

void txn_op_free(txn_op_t *op)
{
    txn_tps_free(op->to.tps, op->to.ntps);
    free(op->id);
    free(op);
}

/* Kafka's TransactionStateManager maps the append's errors to what a
 * client can act on. */
static int16_t txn_write_error(int16_t err)
{
    switch (err) {
    case KERR_NONE:
        return KERR_NONE;
    case KERR_UNKNOWN_TOPIC_OR_PARTITION:
    case KERR_NOT_ENOUGH_REPLICAS:
    case KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case KERR_REQUEST_TIMED_OUT:
        return KERR_COORDINATOR_NOT_AVAILABLE;
    case KERR_NOT_LEADER_OR_FOLLOWER:
    case KERR_KAFKA_STORAGE_ERROR:
        return KERR_NOT_COORDINATOR;
    case KERR_MESSAGE_TOO_LARGE:
    case KERR_RECORD_LIST_TOO_LARGE:
        return KERR_UNKNOWN_SERVER_ERROR;
    default:
        return err;
    }
}

static void txn_written(void *arg, int16_t err)
{
    txn_op_t *op = arg;
    txn_coord_t *c = op->c;
    txn_t *t = NULL;

    /* the partition was unloaded (or loaded again) meanwhile: its
     * entries are not this write's any more */
    if (op->gen == c->pgen[op->part])
        t = txn_get(c, op->id, op->id_len);
    if (!t) {
        op->then(c, NULL, op, KERR_NOT_COORDINATOR);
        txn_op_free(op);
        return;
    }
    t->pending = TXN_NONE;
    err = txn_write_error(err);
    if (!err)
        txn_apply(t, &op->to);
    op->then(c, t, op, err);
    txn_op_free(op);
}

void txn_write(txn_coord_t *c, txn_t *t, txn_op_t *op)
{
    buf_t key, value;

    t->pending = op->to.state;
    buf_init(&key);
    buf_init(&value);
    txn_rec_key(&key, t->id, t->id_len);
    if (op->to.state != TXN_DEAD)
        txn_rec_value(&value, &op->to);
    c->env.write(c->env.ctx, t->part, &key, op->to.state == TXN_DEAD ? NULL : &value,
                 txn_written, op);
    buf_free(&key);
    buf_free(&value);
}
