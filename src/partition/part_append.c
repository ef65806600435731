/* The append path (part_append.h), in steps: checks that need state (the
 * loop), validation of every batch (pure work on bytes the caller owns:
 * on a worker for large appends), then placing and writing (on the loop,
 * or through the write queue, part_wq.c), then the waits the flush
 * policy and the acks ask for. The loop keeps every decision; a worker
 * only ever touches the bytes of the job it was given. */
#include <stddef.h>
#include <string.h>

#include "partition/part_append.h"
#include "partition/part_delay.h"
#include "partition/part_fetcher.h"
#include "partition/part_flush.h"
#include "partition/part_int.h"
#include "util/logging.h"

/* Appends with at least this many record bytes go to the pool: their CRC
 * and record walk (tens of us) and copy are well above a hop's cost. */
#define PART_APPEND_POOL_BYTES (32 * 1024)

static part_t *part_append_find(part_reg_t *reg, part_append_ent_t *ent, int first)
{
    topic_t *topic;
    if (first)
        topic = ent->by_id ? part_topic_by_id(reg, ent->topic_id)
                           : part_topic_get(reg, ent->topic, ent->topic_len);
    else
        topic = part_topic_by_id(reg, ent->id); /* the same topic, or gone */
    if (!topic)
        return NULL;
    if (first)
        memcpy(ent->id, topic->id, 16);
    return part_get(topic, ent->partition);
}

static void part_append_limits(part_append_t *op, const topic_cfg_t *cfg, log_batch_limits_t *lim)
{
    memset(lim, 0, sizeof(*lim));
    lim->max_message_bytes = cfg->max_message_bytes;
    lim->timestamp_log_append = cfg->log.timestamp_type == 1;
    lim->ts_before_max_ms = cfg->ts_before_max_ms;
    lim->ts_after_max_ms = cfg->ts_after_max_ms;
    lim->now_ms = op->now_ms;
    lim->compacted = cfg->compacted;
    lim->produce_version = op->produce_version;
    lim->allow_control = op->origin == PART_ORIGIN_COORDINATOR;
}

/* Step 1, on the loop: what needs broker state, in Kafka's order (the
 * partition must exist before anything about it is checked). ent->lim
 * takes the topic's config as it is now: a change arriving while the
 * batch is on a worker applies to the next append, as in Kafka. */
static int16_t part_append_check(part_append_t *op, part_append_ent_t *ent)
{
    part_t *part = part_append_find(op->reg, ent, 1);
    if (!part) {
        topic_t *t = part_topic_by_id(op->reg, ent->id);
        if (t && part_creating(t, ent->partition))
            return KERR_NOT_LEADER_OR_FOLLOWER;
        return ent->by_id && !part_topic_by_id(op->reg, ent->topic_id)
                   ? KERR_UNKNOWN_TOPIC_ID
                   : KERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    if (part->topic->internal && op->origin != PART_ORIGIN_COORDINATOR)
        return KERR_INVALID_TOPIC_EXCEPTION; /* clients may not write there */
    if (op->acks != 0 && op->acks != 1 && op->acks != -1)
        return KERR_INVALID_REQUIRED_ACKS;
    if (part_offline(part))
        return KERR_KAFKA_STORAGE_ERROR;
    if (!part_is_leader(part))
        return KERR_NOT_LEADER_OR_FOLLOWER;
    if (!ent->records || ent->len <= 0)
        return KERR_INVALID_RECORD;
    if (op->acks == -1 && part_isr_size(part) < part_min_isr(part))
        return KERR_NOT_ENOUGH_REPLICAS;
    part_append_limits(op, &part->topic->cfg, &ent->lim);
    return KERR_NONE;
}

/* Step 2, on a worker or the loop: only the batch's own bytes. */
static void part_append_validate(part_append_ent_t *ent)
{
    ent->verr = log_batch_validate_ex(ent->records, (size_t)ent->len, &ent->lim, &ent->hdr,
                                      &ent->info);
    if (!ent->verr && !ent->lim.timestamp_log_append)
        log_batch_set_max_timestamp(ent->records,
                                    LOG_BATCH_LOG_OVERHEAD + (size_t)ent->hdr.batch_length, 0,
                                    ent->info.max_timestamp);
}

/* The partition again (its topic may have gone while the batch was on a
 * worker), and what its batch becomes: the caller's bytes, or the batch
 * recompressed to the topic's compression.type. Bytes after the batch (an
 * incomplete tail) are ignored, as Kafka does. */
static int16_t part_append_target(part_append_ent_t *ent, part_reg_t *reg, part_t **part,
                                  uint8_t **batch, size_t *blen)
{
    int rewritten = 0;
    *part = part_append_find(reg, ent, 0);
    if (!*part)
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (part_offline(*part))
        return KERR_KAFKA_STORAGE_ERROR;
    /* a client's transactional batch only once its coordinator said it
     * belongs to an ongoing transaction (the markers are the
     * coordinator's own) */
    if (LOG_BATCH_ATTR_IS_TRANSACTIONAL(ent->hdr.attributes) && !ent->txn_verified &&
        !LOG_BATCH_ATTR_IS_CONTROL(ent->hdr.attributes))
        return KERR_INVALID_TXN_STATE;
    *batch = ent->records;
    *blen = LOG_BATCH_LOG_OVERHEAD + (size_t)ent->hdr.batch_length;
    int16_t err = part_recompress(*part, *batch, *blen, &ent->rebuilt, &rewritten);
    if (!err && rewritten) {
        *batch = ent->rebuilt.p;
        *blen = ent->rebuilt.len;
    }
    return err;
}

static void part_append_result(part_append_ent_t *ent, const log_append_result_t *res)
{
    ent->base_offset = res->base_offset;
    ent->last_offset = res->last_offset;
    ent->log_append_time = res->log_append_time;
    ent->log_start_offset = res->log_start_offset;
}

/* Fetches waiting on a log that just went offline answer now, as Kafka's
 * DelayedFetch completes on an offline partition. */
static int16_t part_append_failed(part_t *part, int16_t err)
{
    if (part && part_offline(part))
        part_notify(part);
    return err;
}

/* A batch is in its log: the high watermark, the flush policy, and
 * everyone waiting on the partition. Kafka flushes in the append path
 * when flush.messages is reached, so the answer implies the fsync; here
 * the fsync joins the next round. */
static void part_append_joined(part_append_t *op, part_append_ent_t *ent, part_t *part)
{
    ent->committed = 1;
    part_flush_snapshot(op->reg, part); /* a roll on the way made one */
    if (log_unflushed_messages(part->log) >= part->topic->cfg.flush_messages) {
        if (ent->base_offset < part->flush_hold_next)
            part->flush_hold_next = ent->base_offset;
        part_flush_add(op->reg, part);
        ent->flush = 1;
    }
    part_update_hwm(part);
    part_notify(part);
}

static int part_append_flags(const part_append_t *op)
{
    return op->origin == PART_ORIGIN_COORDINATOR ? LOG_APPEND_COORDINATOR : 0;
}

/* Step 3 on the loop: the whole append at once. */
static int16_t part_append_now(part_append_t *op, part_append_ent_t *ent)
{
    log_append_result_t res;
    part_t *part;
    uint8_t *batch;
    size_t blen;

    int16_t err = part_append_target(ent, op->reg, &part, &batch, &blen);
    if (!err && log_pending_writes(part->log)) {
        /* Only an inline writer gets here with writes queued elsewhere;
         * its partitions never have any of their own. */
        lg_error("%s-%d: an inline append behind queued writes", part->topic->name, part->index);
        err = KERR_KAFKA_STORAGE_ERROR;
    }
    if (!err)
        err = log_append_flags(part->log, batch, blen, part->leader_epoch, op->now_ms,
                               part_append_flags(op), &res);
    buf_free(&ent->rebuilt);
    if (err)
        return part_append_failed(part, err);
    part_append_result(ent, &res);
    if (!res.duplicate)
        part_append_joined(op, ent, part);
    return KERR_NONE;
}

int part_append_place(part_append_t *op, part_append_ent_t *ent)
{
    log_append_result_t res;
    part_t *part = NULL;
    uint8_t *batch;
    size_t blen;

    ent->wr.fd = -1;
    if (ent->err)
        return 0;
    int16_t err = part_append_target(ent, op->reg, &part, &batch, &blen);
    if (!err)
        err = log_append_place_flags(part->log, batch, blen, part->leader_epoch, op->now_ms,
                                     part_append_flags(op), &res,
                               &ent->wr);
    if (err == LOG_APPEND_AGAIN)
        return LOG_APPEND_AGAIN;
    if (err) {
        buf_free(&ent->rebuilt);
        ent->err = part_append_failed(part, err);
        return 0;
    }
    /* The offsets now; the rest when the bytes are in. */
    part_append_result(ent, &res);
    ent->log_uid = log_uid(part->log);
    return 0;
}

void part_append_commit(part_append_t *op, part_append_ent_t *ent)
{
    part_t *part = part_append_find(op->reg, ent, 0);

    buf_free(&ent->rebuilt);
    if (!part || log_uid(part->log) != ent->log_uid) {
        ent->err = KERR_UNKNOWN_TOPIC_OR_PARTITION; /* deleted meanwhile */
        return;
    }
    int16_t err = log_append_commit(part->log, &ent->wr);
    if (err) {
        ent->err = part_append_failed(part, err);
        return;
    }
    part_append_joined(op, ent, part);
}

/* ---- completion ---- */

/* An entry in error carries no offsets, as Kafka answers it. */
static void part_append_clear(part_append_ent_t *ent)
{
    ent->base_offset = ent->last_offset = -1;
    ent->log_append_time = -1;
    ent->log_start_offset = -1;
}

static void part_append_finish(part_append_t *op)
{
    for (int i = 0; i < op->nents; i++)
        if (op->ents[i].err)
            part_append_clear(&op->ents[i]);
    op->done(op);
}

static void part_append_unwait(part_append_t *op)
{
    if (--op->nwait == 0)
        part_append_finish(op);
}

static part_append_t *part_append_of_flush(part_flush_waiter_t *w)
{
    return (part_append_t *)(void *)((char *)w - offsetof(part_append_t, fw));
}

static void part_append_flushed(part_flush_waiter_t *w, const part_flush_fail_t *failed, int nf)
{
    part_append_t *op = part_append_of_flush(w);
    for (int i = 0; i < op->nents; i++)
        for (int j = 0; op->ents[i].flush && j < nf; j++)
            if (op->ents[i].partition == failed[j].partition &&
                !memcmp(op->ents[i].id, failed[j].topic_id, 16))
                op->ents[i].err = KERR_KAFKA_STORAGE_ERROR;
    part_append_unwait(op);
}

/* acks=-1: every entry's batch below the high watermark (or in error). */
static int part_append_replicated(part_append_t *op, int expired)
{
    for (int i = 0; i < op->nents; i++) {
        part_append_ent_t *ent = &op->ents[i];
        if (ent->err || !ent->committed)
            continue;
        part_t *part = part_append_find(op->reg, ent, 0);
        if (!part || !part_is_leader(part))
            ent->err = KERR_NOT_LEADER_OR_FOLLOWER;
        else if (part_offline(part))
            ent->err = KERR_KAFKA_STORAGE_ERROR;
        else if (part_hwm(part) <= ent->last_offset && !expired)
            return 0;
        else if (part_hwm(part) <= ent->last_offset)
            ent->err = KERR_REQUEST_TIMED_OUT;
        else if (part_isr_maximal(part) < part_min_isr(part))
            ent->err = KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND; /* the ISR shrank meanwhile */
    }
    return 1;
}

static int part_append_delay_try(void *owner, int expired)
{
    part_append_t *op = owner;
    if (!part_append_replicated(op, expired))
        return 0;
    op->delay = NULL;
    part_append_unwait(op);
    return 1;
}

/* Parks op as a delayed produce on the partitions whose high watermark
 * has not passed its batch yet. */
static void part_append_wait_replicas(part_append_t *op)
{
    op->nwait++;
    op->delay = part_delay_new(op->reg, op->timeout_ms, part_append_delay_try, op);
    for (int i = 0; i < op->nents; i++)
        if (!op->ents[i].err && op->ents[i].committed)
            part_delay_watch(op->delay, op->ents[i].id, op->ents[i].partition);
    part_delay_arm(op->delay);
}

/* Every batch is placed and written (or failed): the waits, then done. */
void part_append_settle(part_append_t *op)
{
    int flush = 0;
    op->nwait = 1;
    for (int i = 0; i < op->nents; i++)
        flush |= !op->ents[i].err && op->ents[i].flush;
    if (flush) {
        op->nwait++;
        op->fw.done = part_append_flushed;
        part_flush_wait(op->reg, &op->fw);
    }
    if (op->acks == -1 && !part_append_replicated(op, 0))
        part_append_wait_replicas(op);
    part_append_unwait(op);
}

/* ---- the steps ---- */

/* After step 2: validation errors become the entries' answers, then the
 * appends, on the loop or through the write queue. */
static void part_append_validated(part_append_t *op, size_t bytes)
{
    part_reg_t *reg = op->reg;

    for (int i = 0; i < op->nents; i++)
        if (!op->ents[i].err)
            op->ents[i].err = op->ents[i].verr;
    if (reg->pool && !op->inline_place &&
        (bytes >= PART_APPEND_POOL_BYTES || !part_wq_idle(reg))) {
        part_wq_add(reg, op);
        return;
    }
    for (int i = 0; i < op->nents; i++)
        if (!op->ents[i].err)
            op->ents[i].err = part_append_now(op, &op->ents[i]);
    part_append_settle(op);
}

static void part_append_work(net_job_t *job)
{
    part_append_t *op = (part_append_t *)(void *)((char *)job - offsetof(part_append_t, job));
    for (int i = 0; i < op->nents; i++)
        if (!op->ents[i].err)
            part_append_validate(&op->ents[i]);
}

static void part_append_job_done(net_job_t *job)
{
    part_append_t *op = (part_append_t *)(void *)((char *)job - offsetof(part_append_t, job));
    part_append_validated(op, PART_APPEND_POOL_BYTES);
}

void part_append(part_append_t *op)
{
    size_t bytes = 0;

    op->nplaced = 0;
    op->nwait = 0;
    op->delay = NULL;
    for (int i = 0; i < op->nents; i++) {
        part_append_ent_t *ent = &op->ents[i];
        ent->wr.fd = -1;
        buf_init(&ent->rebuilt);
        part_append_clear(ent);
        ent->info.error_index = -1;
        if (!ent->err)
            ent->err = part_append_check(op, ent);
        if (!ent->err)
            bytes += (size_t)ent->len;
    }
    if (bytes >= PART_APPEND_POOL_BYTES && op->reg->pool && !op->reg->stopping &&
        !op->inline_place) {
        op->job.work = part_append_work;
        op->job.done = part_append_job_done;
        net_pool_submit(op->reg->pool, &op->job);
        return;
    }
    part_append_work(&op->job);
    part_append_validated(op, bytes);
}

void part_append_shutdown(part_reg_t *reg)
{
    reg->stopping = 1;
    part_fetchers_free(reg->fetchers); /* nothing more comes from leaders */
    part_wq_free(reg);
    part_flush_shutdown(reg);
}
