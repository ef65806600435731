/* Removing data from a partition log: retention by time and size,
 * DeleteRecords, truncation of a replica, and the flushes that move the
 * recovery point. Segments are deleted at once rather than renamed to
 * .deleted and removed after file.delete.delay.ms as Kafka does: readers
 * hold their own dup() of the file descriptor (see log_read()), so an
 * unlinked segment stays readable until its last response is sent. */
#include "log/log_int.h"

#include <errno.h>
#include <string.h>
#include <unistd.h>

#include "log/log_ckpt.h"
#include "util/logging.h"

/* Deletes segs[0..n) (never the active one) and moves the log start
 * offset up to the new first segment. */
static int log_delete_prefix(log_t *log, int n, const char *why)
{
    int64_t lso;

    if (n > log->nsegs - 1)
        n = log->nsegs - 1;
    if (n <= 0)
        return 0;
    for (int i = 0; i < n; i++) {
        log_segment_t *seg = log->segs[i];
        lg_info("log %s: deleting segment %lld (%s)", log->dir, (long long)seg->base_offset, why);
        /* the snapshot at a deleted segment's base is of no more use */
        log_segment_delete(seg);
    }
    log_seg_shift(log, n);
    lso = log->segs[0]->base_offset;
    if (lso > log->log_start_offset)
        log->log_start_offset = lso;
    if (log->recovery_point < log->log_start_offset)
        log->recovery_point = log->log_start_offset;
    if (log->hwm < log->log_start_offset)
        log->hwm = log->log_start_offset;
    if (log_ecache_truncate_start(&log->epochs, log->log_start_offset))
        log_save_epochs(log);
    log_pstate_delete_before(&log->pstate, log->segs[0]->base_offset);
    log->dir_dirty = 1;
    return n;
}

/* Upper bound of segment i's offsets (the next base, or the LEO). */
static int64_t log_seg_upper(const log_t *log, int i)
{
    return i + 1 < log->nsegs ? log->segs[i + 1]->base_offset : log_end_offset(log);
}

/* How many leading segments are old enough to go (retention.ms on the
 * segment's max timestamp), all of them below the high watermark. */
static int log_breached_time(log_t *log, int64_t now_ms)
{
    int n = 0;

    if (log->cfg.retention_ms < 0)
        return 0;
    while (n < log->nsegs - 1 && log_seg_upper(log, n) <= log->hwm &&
           now_ms - log_segment_largest_ts(log->segs[n]) > log->cfg.retention_ms)
        n++;
    return n;
}

static int log_breached_size(log_t *log)
{
    int64_t diff;
    int n = 0;

    if (log->cfg.retention_bytes < 0)
        return 0;
    diff = log_size_bytes(log) - log->cfg.retention_bytes;
    while (n < log->nsegs - 1 && log_seg_upper(log, n) <= log->hwm &&
           diff - log->segs[n]->size >= 0) {
        diff -= log->segs[n]->size;
        n++;
    }
    return n;
}

static int log_breached_start(log_t *log)
{
    int n = 0;

    while (n < log->nsegs - 1 && log_seg_upper(log, n) <= log->log_start_offset)
        n++;
    return n;
}

int log_retention(log_t *log, int64_t now_ms)
{
    int n = log_delete_prefix(log, log_breached_time(log, now_ms), "retention.ms");

    n += log_delete_prefix(log, log_breached_size(log), "retention.bytes");
    n += log_delete_prefix(log, log_breached_start(log), "below the log start offset");
    return n;
}

int16_t log_delete_records(log_t *log, int64_t offset)
{
    if (offset < 0 || offset > log->hwm)
        return 1; /* OFFSET_OUT_OF_RANGE */
    if (offset <= log->log_start_offset)
        return 0;
    log->log_start_offset = offset;
    if (log->recovery_point < offset)
        log->recovery_point = offset;
    if (log_ecache_truncate_start(&log->epochs, offset))
        log_save_epochs(log);
    log_delete_prefix(log, log_breached_start(log), "DeleteRecords");
    return 0;
}

/* Everything goes: one empty segment at offset. */
static int log_truncate_fully(log_t *log, int64_t offset, int64_t now_ms)
{
    log_segment_t *seg;

    while (log->nsegs > 0)
        log_segment_delete(log->segs[--log->nsegs]);
    seg = log_segment_create(log->dir, offset, &log->cfg, now_ms);
    if (!seg)
        return -1;
    log_seg_push(log, seg);
    log->log_start_offset = offset;
    log_pstate_reset(&log->pstate, offset);
    log->dir_dirty = 1;
    return 0;
}

int log_truncate_to(log_t *log, int64_t offset)
{
    int64_t leo = log_end_offset(log);

    if (offset >= leo)
        return 0;
    lg_info("log %s: truncating from %lld to %lld", log->dir, (long long)leo, (long long)offset);
    if (offset <= log->log_start_offset || offset <= log->segs[0]->base_offset) {
        if (log_truncate_fully(log, offset > log->log_start_offset ? offset : log->log_start_offset,
                               log->last_flush_ms) < 0)
            return -1;
    } else {
        while (log->nsegs > 1 && log_active(log)->base_offset >= offset)
            log_segment_delete(log->segs[--log->nsegs]);
        if (log_segment_truncate_to(log_active(log), offset, &log->cfg) < 0)
            return -1;
        log->dir_dirty = 1;
    }
    leo = log_end_offset(log);
    if (log_ecache_truncate_end(&log->epochs, leo))
        log_save_epochs(log);
    if (log->recovery_point > leo)
        log->recovery_point = leo;
    if (log->hwm > leo)
        log->hwm = leo;
    log_pstate_reload(&log->pstate, log->log_start_offset, leo, log->last_flush_ms,
                      log->cfg.producer_id_expiration_ms);
    return log_replay_pstate(log);
}

/* fsyncs segments [floor(recovery point), upto). */
static int log_flush_segments(log_t *log, int upto)
{
    for (int i = log_seg_floor(log, log->recovery_point); i < upto; i++)
        if (log_segment_flush(log->segs[i]) < 0)
            return -1;
    if (log->dir_dirty) {
        if (log_ckpt_fsync_dir(log->dir) < 0)
            return -1;
        log->dir_dirty = 0;
    }
    return 0;
}

int log_flush(log_t *log, int64_t now_ms)
{
    if (log_flush_segments(log, log->nsegs) < 0) {
        lg_error("log %s: flush failed: %s", log->dir, strerror(errno));
        return -1;
    }
    log->recovery_point = log_end_offset(log);
    log->unflushed = 0;
    log->last_flush_ms = now_ms;
    return 0;
}

int log_flush_rolled(log_t *log)
{
    int64_t base = log_active(log)->base_offset;

    if (log->recovery_point >= base)
        return 0;
    if (log_flush_segments(log, log->nsegs - 1) < 0) {
        lg_error("log %s: flush failed: %s", log->dir, strerror(errno));
        return -1;
    }
    log->recovery_point = base;
    return 0;
}
