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

typedef struct txn_marker_w_s {
    part_append_t op; /* first */
    part_append_ent_t ent;
    buf_t batch;
    txn_marker_done_fn *done;
    void *arg;
} txn_marker_w_t;

static void txn_marker_written(part_append_t *op)
{
    txn_marker_w_t *w = (txn_marker_w_t *)op;
    w->done(w->arg, w->ent.err);
    buf_free(&w->batch);
    free(w);
}

void txn_marker_append(part_reg_t *reg, const char *topic, size_t topic_len, int32_t partition,
                       int64_t producer_id, int16_t epoch, bool commit, int32_t coordinator_epoch,
                       int32_t timeout_ms, txn_marker_done_fn *done, void *arg)
{
    txn_marker_w_t *w = xcalloc(1, sizeof(*w));
    int64_t now = net_now_wall_ms();

    buf_init(&w->batch);
    log_batch_build_txn_marker(&w->batch, producer_id, epoch, commit, coordinator_epoch, now);
    w->done = done;
    w->arg = arg;
    w->op.reg = reg;
    w->op.acks = -1;
    w->op.origin = PART_ORIGIN_COORDINATOR;
    w->op.produce_version = 12;
    w->op.now_ms = now;
    w->op.timeout_ms = timeout_ms;
    w->op.ents = &w->ent;
    w->op.nents = 1;
    w->op.done = txn_marker_written;
    w->ent.topic = topic;
    w->ent.topic_len = topic_len;
    w->ent.partition = partition;
    w->ent.records = w->batch.p;
    w->ent.len = (int32_t)w->batch.len;
    part_append(&w->op);
}
