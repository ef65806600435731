/* The log_t structure, shared by the files of the log module only. */
#ifndef STRAND_LOG_LOG_INT_H
#define STRAND_LOG_LOG_INT_H

#include "log/log.h"
#include "log/log_ecache.h"
#include "log/log_pstate.h"
#include "log/log_segment.h"

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
    log_ecache_t epochs;
    log_pstate_t pstate;
};

static inline log_segment_t *log_active(const log_t *log)
{
    return log->segs[log->nsegs - 1];
}

/* Index of the segment holding offset (greatest base <= offset), or 0. */
int log_seg_floor(const log_t *log, int64_t offset);
/* Appends a segment at the end of the array. */
void log_seg_push(log_t *log, log_segment_t *seg);
/* Removes segs[0..n) from the array (not closing them). */
void log_seg_shift(log_t *log, int n);
/* Seals the active segment and starts a new one at base. 0 or -1/errno. */
int log_roll_at(log_t *log, int64_t base, int64_t now_ms);
/* Replays producer state from its map end offset to the LEO. */
int log_replay_pstate(log_t *log);
/* Writes the epoch checkpoint, logging (not returning) a failure. */
void log_save_epochs(log_t *log);

#endif
