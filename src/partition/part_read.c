/* The read path (part_read.h). Record bytes are never copied: a read
 * names a region of a segment file, which the network layer sends with
 * sendfile. Without transactions the last stable offset is the high
 * watermark. */
#include "partition/part_read.h"

#include <string.h>
#include <unistd.h>

#include "partition/part_flush.h"
#include "partition/part_int.h"

int16_t part_find(topic_t *topic, int32_t index, part_t **part)
{
    *part = NULL;
    if (!topic || index < 0 || index >= topic->nparts)
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (part_creating(topic, index))
        return KERR_NOT_LEADER_OR_FOLLOWER;
    if (part_offline(topic->parts[index]))
        return KERR_KAFKA_STORAGE_ERROR;
    if (!part_is_leader(topic->parts[index]))
        return KERR_NOT_LEADER_OR_FOLLOWER;
    *part = topic->parts[index];
    return KERR_NONE;
}

int16_t part_find_local(topic_t *topic, int32_t index, part_t **part)
{
    int16_t err = part_find(topic, index, part);
    if (err != KERR_NOT_LEADER_OR_FOLLOWER || part_creating(topic, index))
        return err;
    part_t *p = topic->parts[index];
    if (p->leader < 0 || !part_replica_get(p, p->node_id))
        return err;
    *part = p;
    return KERR_NONE;
}

int16_t part_find_by_name(part_reg_t *reg, const char *name, int32_t len, int32_t index,
                          part_t **part)
{
    topic_t *t = len < 0 ? NULL : part_topic_get(reg, name, (size_t)len);
    return part_find(t, index, part);
}

int16_t part_check_epoch(const part_t *part, int32_t current)
{
    if (current < 0 || current == part->leader_epoch)
        return KERR_NONE;
    return current < part->leader_epoch ? KERR_FENCED_LEADER_EPOCH : KERR_UNKNOWN_LEADER_EPOCH;
}

int16_t part_read_replica_check(part_t *part, int32_t replica_id, int32_t current_leader_epoch)
{
    if (part_replica_get(part, replica_id))
        return KERR_NONE;
    return current_leader_epoch >= 0 ? KERR_UNKNOWN_LEADER_EPOCH : KERR_NOT_LEADER_OR_FOLLOWER;
}

void part_read_error(part_read_t *rd, int16_t err)
{
    rd->err = err;
    rd->preferred_read_replica = -1;
    rd->high_watermark = rd->last_stable_offset = rd->log_start_offset = -1;
    rd->fd = -1;
    rd->len = 0;
    rd->aborted.n = 0;
}

void part_read_release(part_read_t *rd)
{
    if (rd->fd >= 0)
        close(rd->fd);
    rd->fd = -1;
    log_aborted_list_free(&rd->aborted);
}

/* A follower whose last fetched epoch ends before its fetch offset here
 * (or is unknown here) has a log that diverged: it is told where to
 * truncate to instead of getting records. */
static int part_read_diverged(part_t *part, part_read_t *rd)
{
    int64_t end;
    int32_t epoch;
    if (rd->last_fetched_epoch < 0)
        return 0;
    log_epoch_end_offset(part->log, rd->last_fetched_epoch, &end, &epoch);
    if (epoch == rd->last_fetched_epoch && end >= rd->fetch_offset)
        return 0;
    rd->diverging_epoch = epoch;
    rd->diverging_end_offset = end;
    return 1;
}

void part_read(part_t *part, part_read_t *rd, int64_t *budget, int min_one)
{
    int16_t err = part_check_epoch(part, rd->current_leader_epoch);
    log_read_result_t lr;

    rd->err = KERR_NONE;
    rd->fd = -1;
    rd->len = 0;
    rd->diverging_epoch = -1;
    rd->diverging_end_offset = -1;
    rd->preferred_read_replica = -1;
    rd->aborted.n = 0;
    rd->high_watermark = part_hwm(part);
    rd->last_stable_offset = log_last_stable_offset(part->log);
    rd->log_start_offset = log_start_offset(part->log);
    if (err) {
        part_read_error(rd, err);
        return;
    }
    if (part_read_diverged(part, rd))
        return;
    int64_t max = rd->max_bytes < *budget ? rd->max_bytes : *budget;
    int committed = rd->isolation == 1 && !rd->replica;
    err = log_read(part->log, rd->fetch_offset, (int32_t)(max < 0 ? 0 : max), min_one,
                   rd->replica  ? log_end_offset(part->log)
                   : committed ? rd->last_stable_offset
                               : rd->high_watermark,
                   &lr);
    if (!err && committed && lr.len > 0)
        err = log_aborted_txns(part->log, rd->fetch_offset, log_read_upper_offset(part->log, &lr),
                               &rd->aborted);
    if (err) {
        if (lr.fd >= 0)
            close(lr.fd);
        part_read_error(rd, err);
        return;
    }
    if (lr.len > 0) {
        rd->fd = lr.fd;
        rd->file_pos = lr.file_pos;
        rd->len = lr.len;
        *budget -= lr.len;
    }
}

/* ---- offsets ---- */

static void part_offset_none(part_offset_t *out)
{
    out->offset = out->timestamp = -1;
    out->leader_epoch = -1;
}

static int16_t part_offset_found(int16_t err, const log_ts_offset_t *ts, int64_t below,
                                 part_offset_t *out)
{
    if (err == 0 && ts->offset < below) {
        out->offset = ts->offset;
        out->timestamp = ts->timestamp;
        out->leader_epoch = ts->leader_epoch;
        return KERR_NONE;
    }
    part_offset_none(out);
    /* 1: nothing matches (log_offset_for_timestamp, log_max_timestamp) */
    return err == 0 || err == 1 ? KERR_NONE : err;
}

int16_t part_list_offset(part_t *part, int64_t timestamp, int32_t current_leader_epoch,
                         int8_t isolation, part_offset_t *out)
{
    log_ts_offset_t ts;
    int16_t err = part_check_epoch(part, current_leader_epoch);
    int64_t last = isolation == 1 ? log_last_stable_offset(part->log) : part_hwm(part);

    part_offset_none(out);
    if (err)
        return err;
    out->leader_epoch = part->leader_epoch;
    switch (timestamp) {
    case PART_OFFSET_LATEST:
        out->offset = last;
        return KERR_NONE;
    case PART_OFFSET_EARLIEST:
    case PART_OFFSET_EARLIEST_LOCAL:
        out->offset = log_start_offset(part->log);
        return KERR_NONE;
    case PART_OFFSET_MAX_TIMESTAMP:
        err = log_max_timestamp(part->log, &ts);
        return part_offset_found(err, &ts, INT64_MAX, out);
    default:
        if (timestamp < 0) { /* LATEST_TIERED, EARLIEST_PENDING_UPLOAD: nothing is tiered */
            part_offset_none(out);
            return KERR_NONE;
        }
        err = log_offset_for_timestamp(part->log, timestamp, &ts);
        return part_offset_found(err, &ts, last, out);
    }
}

int16_t part_epoch_end(part_t *part, int32_t current_leader_epoch, int32_t epoch,
                       int64_t *end_offset, int32_t *epoch_out)
{
    int16_t err = part_check_epoch(part, current_leader_epoch);
    *end_offset = -1;
    *epoch_out = -1;
    if (!err)
        log_epoch_end_offset(part->log, epoch, end_offset, epoch_out);
    return err;
}

int16_t part_delete_records(part_t *part, int64_t offset, int64_t *low)
{
    int64_t hwm = part_hwm(part);
    int16_t e;

    *low = -1;
    if (part->topic->cfg.compacted && !part->topic->cfg.cleanup_delete)
        return KERR_POLICY_VIOLATION;
    if (offset == -1)
        offset = hwm;
    if (offset < 0 || offset > hwm)
        return KERR_OFFSET_OUT_OF_RANGE;
    if (offset > log_start_offset(part->log) && (e = log_delete_records(part->log, offset)))
        return e;
    *low = log_start_offset(part->log);
    return KERR_NONE;
}

int64_t part_size_bytes(const part_t *part)
{
    return log_size_bytes(part->log);
}

int64_t part_log_start(const part_t *part)
{
    return log_start_offset(part->log);
}

int part_dir(const part_reg_t *reg, const part_t *part)
{
    return log_mgr_dir_of(reg->logs, part->topic->name, part->index);
}

int part_ndirs(const part_reg_t *reg)
{
    return log_mgr_ndirs(reg->logs);
}

const char *part_dir_path(const part_reg_t *reg, int d)
{
    return log_mgr_dir_path(reg->logs, d);
}

int16_t part_roll(part_reg_t *reg, part_t *part, int64_t now_ms)
{
    int16_t err = log_roll(part->log, now_ms);
    part_flush_snapshot(reg, part);
    return err;
}

int16_t part_read_local(part_t *part, int64_t offset, int32_t max_bytes, int64_t end,
                        int *fd, int64_t *file_pos, int32_t *len)
{
    log_read_result_t lr;
    int16_t err = log_read(part->log, offset, max_bytes, 1, end, &lr);
    *fd = err ? -1 : lr.fd;
    *file_pos = err ? 0 : lr.file_pos;
    *len = err ? 0 : lr.len;
    return err;
}

int64_t part_log_end(const part_t *part)
{
    return log_end_offset(part->log);
}

int part_producers(const part_t *part, log_producer_fn *fn, void *arg)
{
    return log_producers(part->log, fn, arg);
}
