/* One transaction marker appended to a partition led here (txn_log.h):
 * the control batch of protocol/FORMATS.md §5 (one record: key version 0
 * and the type, COMMIT 1 or ABORT 0; value version 0 and the coordinator
 * epoch), written as a coordinator writes, acks=-1, so that a marker is
 * acknowledged once every in-sync replica has it. The log checks it
 * against the producer's state (log_pstate_check_marker). */
#include "coord/txn_log.h"

#include <stdlib.h>
#include <string.h>

#include "log/log_batch.h"
#include "net/net_loop.h"
#include "partition/part_append.h"
#include "util/mem.h"

typedef struct txn_append_s {
    part_append_t op; /* first */
    part_append_ent_t ent;
    buf_t batch;
    txn_marker_done_fn *done;
    void *arg;
} txn_append_t;

static void txn_appended(part_append_t *op)
{
    txn_append_t *w = (txn_append_t *)op;
    w->done(w->arg, w->ent.err);
    buf_free(&w->batch);
    free(w);
}

void txn_coord_append(part_reg_t *reg, const char *topic, size_t topic_len, int32_t partition,
                      buf_t *batch, int32_t timeout_ms, txn_marker_done_fn *done, void *arg)
{
    txn_append_t *w = xcalloc(1, sizeof(*w));

    w->batch = *batch;
    buf_init(batch);
    w->done = done;
    w->arg = arg;
    w->op.reg = reg;
    w->op.acks = -1;
    w->op.origin = PART_ORIGIN_COORDINATOR;
    w->op.produce_version = 12;
    w->op.now_ms = net_now_wall_ms();
    w->op.timeout_ms = timeout_ms;
    w->op.ents = &w->ent;
    w->op.nents = 1;
    w->op.done = txn_appended;
    w->ent.topic = topic;
    w->ent.topic_len = topic_len;
    w->ent.partition = partition;
    w->ent.records = w->batch.p;
    w->ent.len = (int32_t)w->batch.len;
    part_append(&w->op);
}

void txn_marker_append(part_reg_t *reg, const char *topic, size_t topic_len, int32_t partition,
                       int64_t producer_id, int16_t epoch, bool commit, int32_t coordinator_epoch,
                       int32_t timeout_ms, txn_marker_done_fn *done, void *arg)
{
    buf_t batch;

    buf_init(&batch);
    log_batch_build_txn_marker(&batch, producer_id, epoch, commit, coordinator_epoch,
                               net_now_wall_ms());
    txn_coord_append(reg, topic, topic_len, partition, &batch, timeout_ms, done, arg);
}
