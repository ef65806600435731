/* Leader epoch cache of a partition (Kafka's LeaderEpochFileCache): which
 * offset each leader epoch started at, persisted in leader-epoch-checkpoint
 * in the partition directory. Used by OffsetForLeaderEpoch and by
 * replicas to find where their log diverged. */
#ifndef STRAND_LOG_LOG_ECACHE_H
#define STRAND_LOG_LOG_ECACHE_H

#include <stdint.h>

typedef struct log_ecache_entry_s {
    int32_t epoch;
    int64_t start_offset;
} log_ecache_entry_t;

typedef struct log_ecache_s {
    char *path;               /* owned */
    log_ecache_entry_t *v;     /* epochs and start offsets both ascending */
    int n;
    int cap;
    int unsynced;             /* the file was rewritten since its last fsync */
    int broken;               /* the file was malformed when loaded */
} log_ecache_t;

/* Loads <dir>/leader-epoch-checkpoint (missing = empty; malformed = empty
 * with a warning and broken set, to be rebuilt from the log). Returns 0, or -1 with errno
 * if the file exists but cannot be read (free the cache all the same). */
int log_ecache_init(log_ecache_t *ec, const char *dir);
void log_ecache_free(log_ecache_t *ec);
/* Rewrites the checkpoint file, unsynced (log_ckpt_write_unsynced; the
 * log's flush fsyncs it and clears unsynced). Returns 0 with unsynced set,
 * or -1 with errno (the file as it was). */
int log_ecache_flush(log_ecache_t *ec);

/* Records epoch starting at start_offset, first dropping the entries that
 * would break monotonicity (epoch >= it or start >= its start). Returns 1
 * if the cache changed, 0 if not (same epoch already known from an
 * earlier or equal offset, or negative arguments). */
int log_ecache_assign(log_ecache_t *ec, int32_t epoch, int64_t start_offset);
/* log_ecache_assign() followed by log_ecache_flush() when the cache
 * changed. Returns 0, or -1 with errno if the checkpoint could not be
 * written. The cache always matches the file: it is left as it was when
 * the file was not replaced. */
int log_ecache_assign_save(log_ecache_t *ec, int32_t epoch, int64_t start_offset);
int32_t log_ecache_latest(const log_ecache_t *ec);
/* Removes entries starting at or after end_offset (log truncation). */
int log_ecache_truncate_end(log_ecache_t *ec, int64_t end_offset);
/* Removes entries wholly below start_offset; the last of them is kept
 * with its start moved up to start_offset. */
int log_ecache_truncate_start(log_ecache_t *ec, int64_t start_offset);
/* OffsetForLeaderEpoch answer (Kafka's endOffsetFor). */
void log_ecache_end_offset(const log_ecache_t *ec, int32_t epoch, int64_t leo,
                          int64_t *end_offset, int32_t *epoch_out);
/* The epoch that offset belongs to, or -1. */
int32_t log_ecache_for_offset(const log_ecache_t *ec, int64_t offset);

#endif
