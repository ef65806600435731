/* The log_t structure, shared by the files of the log module only. */
#ifndef STRAND_LOG_LOG_INT_H
#define STRAND_LOG_LOG_INT_H

#include <errno.h>

#include "log/log.h"
#include "log/log_ecache.h"
#include "log/log_pstate.h"
#include "log/log_segment.h"
#include "util/kerr.h"

struct log_s {
    char *dir;
    char *topic;
    int32_t partition;
    log_config_t cfg;
    log_segment_t **segs; /* ascending base offsets; the last is active */
    int nsegs;
    int capsegs;
    int64_t log_start_offset;
    int64_t recovery_point;
    int64_t hwm;
    int64_t unflushed;    /* records appended since the last flush */
    int64_t last_flush_ms;
    int dir_dirty;        /* files created or removed since the last flush */
    int offline;          /* see log_set_offline() */
    int epochs_recovered; /* open: recovery found epochs the file lacks */
    log_ecache_t epochs;
    log_pstate_t pstate;
    uint64_t uid;         /* log_uid() */
    /* Batches placed but not yet written (log_async.c): while pending > 0
     * the next batch goes at pend_end / pend_pos of the active segment,
     * past what readers see. */
    int pending;
    int64_t pend_end;
    int64_t pend_pos;
    /* A producer snapshot rendered at a roll, not yet taken (log_snapshot_take). */
    log_snap_t snap;
    int snap_due;
    int pend_failed;      /* a placed write failed: the batches placed
                             with it fail too, and once the last of them
                             is committed the run is undone */
    int64_t txn_rebuild_from; /* open: the first segment whose transaction
                                 index recovery emptied (INT64_MAX none) */
};


/* Whether the log refuses the operation because it is offline (errno is
 * then EIO). */
static inline int log_is_down(const log_t *log)
{
    if (!log->offline)
        return 0;
    errno = EIO;
    return 1;
}

static inline log_segment_t *log_active(const log_t *log)
{
    return log->segs[log->nsegs - 1];
}

/* The checks and header changes every leader append makes before its
 * bytes are placed (log_append): res and h get the final offsets, or the
 * original's with res->duplicate. Returns a Kafka error code. */
int16_t log_append_prepare(log_t *log, uint8_t *batch, size_t len, int32_t leader_epoch,
                           int64_t now_ms, int flags, log_append_result_t *res,
                           log_batch_hdr_t *h);
/* Rolls if the batch h (len bytes) does not fit the active segment, and
 * records a new leader epoch. Returns 0 or KAFKA_STORAGE_ERROR. */
int16_t log_place_batch(log_t *log, size_t len, const log_batch_hdr_t *h, int64_t now_ms);

/* Index of the segment holding offset (greatest base <= offset), or 0. */
int log_seg_floor(const log_t *log, int64_t offset);
/* Appends a segment at the end of the array. */
void log_seg_push(log_t *log, log_segment_t *seg);
/* Removes segs[0..n) from the array (not closing them). */
void log_seg_shift(log_t *log, int n);
/* Seals the active segment and starts a new one at base. 0 or -1/errno. */
int log_roll_at(log_t *log, int64_t base, int64_t now_ms);
/* Replaces every segment with one empty segment at base (and forgets the
 * producer state). Returns 0 or -1 with errno, possibly half done. */
int log_restart_at(log_t *log, int64_t base, int64_t now_ms);
/* Applies a batch of segment seg to the producer state (log_txn.c), and
 * a transaction it aborts to seg's transaction index. Returns 0, or -1
 * with errno when the index could not be written. */
int log_track_batch(log_t *log, log_segment_t *seg, const log_batch_hdr_t *h,
                    const uint8_t *batch, size_t len);
/* Replays producer state from its map end offset to the LEO. */
int log_replay_pstate(log_t *log);
/* Renders the producer snapshot due at a roll (log_snapshot_take). */
void log_snapshot_render(log_t *log);
/* Writes the epoch checkpoint. Returns 0, or -1 with errno (logged). */
int log_save_epochs(log_t *log);
/* Takes the log offline until it is reopened: an fsync failed, or a
 * failed step could not be undone, so the files may no longer match what
 * the log believes (log.h, "When the disk fails"). what: for the log line. */
void log_set_offline(log_t *log, const char *what);

#endif
