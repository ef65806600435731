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

/* After segments were deleted from the front: the log starts at the new
 * first segment, and what pointed below it follows. */
static void log_front_deleted(log_t *log)
{
    int64_t lso = log->segs[0]->base_offset;
    int e = errno;

    if (lso > log->log_start_offset)
        log->log_start_offset = lso;
    if (log->recovery_point < log->log_start_offset)
        log->recovery_point = log->log_start_offset;
    if (log->hwm < log->log_start_offset)
        log->hwm = log->log_start_offset;
    /* if the checkpoint keeps older epochs, the next open trims them */
    if (log_ecache_truncate_start(&log->epochs, log->log_start_offset))
        log_save_epochs(log);
    /* the snapshot at a deleted segment's base is of no more use */
    log_pstate_delete_before(&log->pstate, log->segs[0]->base_offset);
    log->dir_dirty = 1;
    errno = e;
}

/* Deletes segs[0..n) (never the active one) and moves the log start
 * offset up to the new first segment. A segment whose .log cannot be
 * unlinked stops the deletion there: it and those after it stay in the log,
 * whole, and the next retention run tries again. Returns the number
 * deleted; *failed is set (errno kept) if it stopped early. */
static int log_delete_prefix(log_t *log, int n, const char *why, int *failed)
{
    int done = 0;

    if (n > log->nsegs - 1)
        n = log->nsegs - 1;
    for (; done < n; done++) {
        log_segment_t *seg = log->segs[done];
        lg_info("log %s: deleting segment %lld (%s)", log->dir, (long long)seg->base_offset, why);
        if (log_segment_delete(seg) < 0) {
            lg_warn("log %s: cannot delete segment %lld: %s", log->dir,
                    (long long)seg->base_offset, strerror(errno));
            *failed = 1;
            break;
        }
    }
    if (done > 0) {
        log_seg_shift(log, done);
        log_front_deleted(log);
    }
    return done;
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
    int failed = 0, n;

    if (log->offline)
        return 0;
    n = log_delete_prefix(log, log_breached_time(log, now_ms), "retention.ms", &failed);
    if (!failed)
        n += log_delete_prefix(log, log_breached_size(log), "retention.bytes", &failed);
    if (!failed)
        n += log_delete_prefix(log, log_breached_start(log), "below the log start offset",
                               &failed);
    return failed ? -1 : n;
}

/* The records are gone once the log start offset has moved (reads below
 * it are refused, and log_mgr_checkpoint persists it): segments that
 * cannot be deleted now are deleted by a later retention run. */
int16_t log_delete_records(log_t *log, int64_t offset)
{
    int failed = 0;

    if (log_is_down(log))
        return KERR_KAFKA_STORAGE_ERROR;
    if (offset < 0 || offset > log->hwm)
        return KERR_OFFSET_OUT_OF_RANGE;
    if (offset <= log->log_start_offset)
        return 0;
    log->log_start_offset = offset;
    if (log->recovery_point < offset)
        log->recovery_point = offset;
    if (log_ecache_truncate_start(&log->epochs, offset))
        log_save_epochs(log);
    log_delete_prefix(log, log_breached_start(log), "DeleteRecords", &failed);
    return 0;
}

/* A truncation that fails half way cannot be undone (data is gone), so
 * the log goes offline; the next open recovers whatever is on disk. It is
 * allowed on an offline log, to take back a batch whose flush failed. */
int log_truncate_to(log_t *log, int64_t offset)
{
    int64_t leo = log_end_offset(log);

    if (offset >= leo)
        return 0;
    lg_info("log %s: truncating from %lld to %lld", log->dir, (long long)leo, (long long)offset);
    if (offset <= log->log_start_offset || offset <= log->segs[0]->base_offset) {
        int64_t base = offset > log->log_start_offset ? offset : log->log_start_offset;
        if (log_restart_at(log, base, log->last_flush_ms) < 0)
            goto fail;
        log->log_start_offset = base;
    } else {
        while (log->nsegs > 1 && log_active(log)->base_offset >= offset) {
            if (log_segment_delete(log_active(log)) < 0)
                goto fail;
            log->nsegs--;
        }
        log->dir_dirty = 1;
        if (log_segment_truncate_to(log_active(log), offset, &log->cfg) < 0)
            goto fail;
    }
    leo = log_end_offset(log);
    if (log->recovery_point > leo)
        log->recovery_point = leo;
    if (log->hwm > leo)
        log->hwm = leo;
    if (log_ecache_truncate_end(&log->epochs, leo) && log_save_epochs(log) < 0)
        goto fail;
    if (log_pstate_reload(&log->pstate, log->log_start_offset, leo, log->last_flush_ms,
                          log->cfg.producer_id_expiration_ms) < 0 ||
        log_replay_pstate(log) < 0)
        goto fail;
    return 0;
fail:
    log_set_offline(log, "a truncation failed half way");
    return -1;
}


int log_reset_to(log_t *log, int64_t offset, int64_t now_ms)
{
    if (log_is_down(log)) {
        errno = EIO;
        return -1;
    }
    lg_info("log %s: replaced by a snapshot: restarting empty at %lld", log->dir,
            (long long)offset);
    if (log_restart_at(log, offset, now_ms) < 0)
        goto fail;
    log->log_start_offset = log->recovery_point = log->hwm = offset;
    if (log_ecache_truncate_end(&log->epochs, 0) | log_ecache_truncate_start(&log->epochs, offset))
        if (log_save_epochs(log) < 0)
            goto fail;
    return 0;
fail:
    log_set_offline(log, "replacing the log by a snapshot failed half way");
    return -1;
}
