/* Leader appends whose bytes are written off the loop (log.h, "A leader
 * append in three steps"). The loop keeps every decision: offsets,
 * producer state, rolls and epochs happen when a batch is placed, exactly
 * as in log_append; only the copy into the page cache moves to another
 * thread. A placed batch lies past the segment's size until its commit,
 * so reads, indexes, flushes and recovery points never cover bytes that
 * are not written yet. A roll would seal the segment under pending
 * writes, so placing one that needs it waits for their commit.
 *
 * A failed write (a full disk) fails every batch placed with it: those
 * after it may be written, but past a gap. Nothing more is placed until
 * the last of them is committed; then the run is undone as one (the file
 * cut back to the committed size, producer state and epochs back to the
 * committed log end), and the log takes appends again once the disk
 * does. */
#include "log/log_int.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <unistd.h>

#include "util/fault.h"
#include "util/logging.h"

/* Whether h (len bytes) still fits the active segment behind the pending
 * writes, by the same rules as log_segment_should_roll. */
static int log_fits_pending(log_t *log, size_t len, const log_batch_hdr_t *h, int64_t now_ms)
{
    log_segment_t *act = log_active(log);
    int64_t last = h->base_offset + h->last_offset_delta;

    if (log_segment_should_roll(act, &log->cfg, len, h->max_timestamp, last, now_ms))
        return 0;
    return log->pend_pos <= log->cfg.segment_bytes - (int64_t)len &&
           log->pend_pos + (int64_t)len <= INT32_MAX && last - act->base_offset <= INT32_MAX;
}

int16_t log_append_place(log_t *log, uint8_t *batch, size_t len, int32_t leader_epoch,
                         int64_t now_ms, log_append_result_t *res, log_write_t *wr)
{
    return log_append_place_flags(log, batch, len, leader_epoch, now_ms, 0, res, wr);
}

int16_t log_append_place_flags(log_t *log, uint8_t *batch, size_t len, int32_t leader_epoch,
                               int64_t now_ms, int flags, log_append_result_t *res,
                               log_write_t *wr)
{
    log_batch_hdr_t h;
    int16_t err;

    memset(wr, 0, sizeof(*wr));
    wr->fd = -1;
    if (log->pend_failed) {
        res->base_offset = res->last_offset = res->log_append_time = -1;
        res->log_start_offset = log->log_start_offset;
        res->duplicate = 0;
        return KERR_KAFKA_STORAGE_ERROR;
    }
    err = log_append_prepare(log, batch, len, leader_epoch, now_ms, flags, res, &h);
    if (err || res->duplicate)
        return err;
    if (log->pending && !log_fits_pending(log, len, &h, now_ms))
        return LOG_APPEND_AGAIN;
    err = log->pending ? 0 : log_place_batch(log, len, &h, now_ms);
    if (!err && log->pending && h.leader_epoch >= 0 &&
        log_ecache_assign_save(&log->epochs, h.leader_epoch, h.base_offset) < 0)
        err = KERR_KAFKA_STORAGE_ERROR;
    log_segment_t *act = log_active(log);
    if (!err && (wr->fd = fcntl(act->fd, F_DUPFD_CLOEXEC, 0)) < 0)
        err = KERR_KAFKA_STORAGE_ERROR;
    if (err) {
        lg_error("log %s: cannot place a batch: %s", log->dir, strerror(errno));
        res->base_offset = res->last_offset = res->log_append_time = -1;
        return err;
    }
    wr->pos = log->pending ? log->pend_pos : act->size;
    wr->batch = batch;
    wr->len = len;
    wr->h = h;
    wr->seg = act;
    if (log_track_batch(log, act, &h, batch, len) < 0) {
        close(wr->fd);
        wr->fd = -1;
        log_set_offline(log, "an aborted transaction could not be indexed");
        res->base_offset = res->last_offset = res->log_append_time = -1;
        return KERR_KAFKA_STORAGE_ERROR;
    }
    log->pending++;
    log->pend_pos = wr->pos + (int64_t)len;
    log->pend_end = h.base_offset + h.last_offset_delta + 1;
    return 0;
}

void log_write_run(log_write_t *wr)
{
    if (wr->fd < 0)
        return;
    if (log_segment_write_at(wr->fd, wr->batch, wr->len, wr->pos) < 0)
        wr->err = errno ? errno : EIO;
    close(wr->fd);
    wr->fd = -1;
}

/* Undoes a failed run of placed writes, its last batch committed: what
 * they wrote is cut off, and what placing them changed is rebuilt from
 * the committed log (producer state from its snapshot and the log, as a
 * truncation does). An epoch that one of them started is dropped from
 * the cache; if the checkpoint cannot be rewritten now, the file names an
 * epoch starting past the log end, which the next assignment or open
 * trims. Only a failure to cut or to rebuild takes the log offline. */
static void log_pending_undo(log_t *log)
{
    log_segment_t *act = log_active(log);
    int64_t leo = log_end_offset(log);

    log->pend_failed = 0;
    if (log->offline)
        return; /* its files stay as they are for the next open's recovery */
    if (fault_ftruncate(act->fd, (off_t)act->size) < 0 ||
        log_txnidx_truncate(&act->txn, leo) < 0) {
        log_set_offline(log, "the writes of a failed append could not be cut off");
        return;
    }
    if (log_ecache_truncate_end(&log->epochs, leo) && log_save_epochs(log) < 0)
        lg_warn("log %s: epoch checkpoint rewritten later", log->dir);
    if (log_pstate_reload(&log->pstate, log->log_start_offset, leo, log->last_flush_ms,
                          log->cfg.producer_id_expiration_ms) < 0 ||
        log_replay_pstate(log) < 0)
        log_set_offline(log, "producer state could not be rebuilt after a failed append");
}

int16_t log_append_commit(log_t *log, log_write_t *wr)
{
    log->pending--;
    if (wr->err && !log->pend_failed) {
        errno = wr->err;
        lg_error("log %s: append failed: %s", log->dir, strerror(errno));
        log->pend_failed = 1;
    }
    if (log->pend_failed) {
        if (log->pending == 0)
            log_pending_undo(log);
        return KERR_KAFKA_STORAGE_ERROR;
    }
    if (log_is_down(log))
        return KERR_KAFKA_STORAGE_ERROR;
    if (wr->seg != log_active(log) || wr->pos != wr->seg->size) {
        errno = EINVAL;
        log_set_offline(log, "writes committed out of order");
        return KERR_KAFKA_STORAGE_ERROR;
    }
    log_segment_account(wr->seg, wr->len, &wr->h, log->cfg.index_interval_bytes);
    log->unflushed += wr->h.records_count;
    return 0;
}

int log_pending_writes(const log_t *log)
{
    return log->pending;
}
