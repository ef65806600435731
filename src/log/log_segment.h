/* One segment of a partition log: <20-digit base offset>.log with its
 * .index and .timeindex (protocol/FORMATS.md §7.1-7.3). The .log holds record batches
 * back to back exactly as on the wire. Internal to the log module. */
#ifndef STRAND_LOG_LOG_SEGMENT_H
#define STRAND_LOG_LOG_SEGMENT_H

#include <stddef.h>
#include <stdint.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "log/log_index.h"
#include "log/log_txnidx.h"

typedef struct log_segment_s {
    int64_t base_offset;
    char *path;               /* the .log file; owned */
    int fd;                   /* .log, read-write */
    int64_t size;             /* bytes of valid batches */
    log_index_t oidx;
    log_index_t tidx;
    log_txnidx_t txn;         /* the aborted transactions it ends */
    int max_ts_known;         /* else max_ts comes from the time index */
    int64_t max_ts;           /* largest batch maxTimestamp so far, -1 none */
    int64_t max_ts_offset;    /* last offset of the batch that had it */
    int64_t bytes_since_index;
    int64_t created_ms;       /* for segment.ms when batches have no time */
    int64_t rolling_ts;       /* maxTimestamp of the first batch, -1 none,
                                 -2 not read yet */
    int64_t next_offset;      /* one past the last batch (active segment) */
    int32_t index_bytes;      /* segment.index.bytes when it was opened */
    int missing_index;        /* an index file did not exist at open */
} log_segment_t;

/* Returns "<dir>/<20-digit base><suffix>", owned by the caller. */
char *log_segment_file(const char *dir, int64_t base, const char *suffix);
/* Parses a file name "<20 digits><suffix>"; returns 1 and the offset. */
int log_segment_parse_name(const char *name, const char *suffix, int64_t *base);

/* Creates an empty segment (truncating leftover files of that name); its
 * indexes are writable. Owned by the caller. NULL with errno on failure;
 * the files it had created are removed then, and *leftover is set if the
 * .log could not be (an empty segment at base stays on disk). */
log_segment_t *log_segment_create(const char *dir, int64_t base,
                                  const log_config_t *cfg, int64_t now_ms,
                                  int *leftover);
/* Unlinks <base>.log, .index, .timeindex and .txnindex of dir where they exist.
 * Returns 0, or -1 with errno if the .log could not be removed. */
int log_segment_remove_files(const char *dir, int64_t base);
/* Opens an existing segment. The active one gets writable indexes. Its
 * next_offset / max_ts are not known until log_segment_load_tail() or
 * log_segment_recover(). NULL with errno on failure. */
log_segment_t *log_segment_open(const char *dir, int64_t base, int active,
                                const log_config_t *cfg, int64_t now_ms);

/* Reads the header of the batch at pos. Returns 1 and fills h; 0 at the
 * end of the segment; -1 for a torn or malformed header or an I/O error
 * (errno EIO / EBADMSG). */
int log_segment_read_hdr(log_segment_t *seg, int64_t pos, log_batch_hdr_t *h);
/* Finds the first batch whose last offset >= offset. Returns 1 (pos, h
 * filled), 0 if there is none, -1 on error. */
int log_segment_find(log_segment_t *seg, int64_t offset, int64_t *pos,
                     log_batch_hdr_t *h);
/* Given the first batch to read (at pos, header h), how many bytes of
 * whole batches to send: batches with last offset < max_offset, up to
 * max_bytes (the first one always counts). Uses the offset index to skip
 * most headers. Returns the length, or -1 on error. */
int64_t log_segment_extent(log_segment_t *seg, int64_t pos, const log_batch_hdr_t *h,
                           int64_t max_bytes, int64_t max_offset);
/* Position of the first batch with last offset >= offset, or the size. */
int64_t log_segment_position_of(log_segment_t *seg, int64_t offset);
/* Reads len bytes at pos into memory the caller owns. NULL + errno. */
uint8_t *log_segment_read_bytes(log_segment_t *seg, int64_t pos, size_t len);

/* Writes len bytes at pos of fd, whole (any thread: touches no segment).
 * Returns 0, or -1 with errno (part of it may have reached the file). */
int log_segment_write_at(int fd, const uint8_t *batch, size_t len, int64_t pos);
/* Takes a batch written at the segment's end (its current size) into the
 * segment: size, next offset, max timestamp, index entries as Kafka adds
 * them. */
void log_segment_account(log_segment_t *seg, size_t len, const log_batch_hdr_t *h,
                         int32_t index_interval);
/* Appends one batch whose header (with final offsets) is h, adding index
 * entries as Kafka does. Returns 0; -1 with errno, the segment left as
 * before; or -2 with errno when the write failed and the part of it that
 * reached the file could not be cut off again. */
int log_segment_append(log_segment_t *seg, const uint8_t *batch, size_t len,
                       const log_batch_hdr_t *h, int32_t index_interval);

/* Whether the active segment must roll before a batch of len bytes with
 * that max timestamp and last offset is appended. */
int log_segment_should_roll(log_segment_t *seg, const log_config_t *cfg,
                            size_t len, int64_t batch_max_ts,
                            int64_t last_offset, int64_t now_ms);

typedef void (*log_segment_visit_fn)(void *opaque, const uint8_t *batch,
                                     size_t len, const log_batch_hdr_t *h);
/* Rebuilds the offset and time indexes from the .log and empties the
 * transaction index (the producer state's replay refills it), checking every batch (framing, CRC,
 * offsets increasing and >= expect_offset); the .log is cut at the first
 * bad batch. visit (may be NULL) sees each good batch. Returns the number
 * of bytes cut, or -1 with errno on I/O failure. */
int64_t log_segment_recover(log_segment_t *seg, int32_t index_interval,
                            int64_t expect_offset, log_segment_visit_fn visit,
                            void *opaque);
/* For a cleanly closed active segment: finds next_offset and the max
 * timestamp from the last index entries and the batches after them.
 * Returns 0, or -1 if the tail is not well formed (recover it then). */
int log_segment_load_tail(log_segment_t *seg);
/* Largest batch timestamp (from the time index if not known), -1 none. */
int64_t log_segment_max_ts(log_segment_t *seg, int64_t *offset);
/* largestTimestamp for retention: max_ts, or the .log mtime if none. */
int64_t log_segment_largest_ts(log_segment_t *seg);

/* Removes batches (and aborted transactions whose markers are) at or
 * above offset. The segment becomes (or stays)
 * the active one: its indexes are made writable. Returns 0 or -1. */
int log_segment_truncate_to(log_segment_t *seg, int64_t offset,
                            const log_config_t *cfg);
/* The segment stops being active: final time index entry, trims the
 * indexes. Returns 0 or -1 with errno (log_segment_unseal() undoes); with
 * no disk space for the final entry, -1 (ENOSPC) with nothing changed. */
int log_segment_seal(log_segment_t *seg);
/* Makes a sealed segment the active one again (a roll that failed after
 * sealing). Returns 0 or -1 with errno. */
int log_segment_unseal(log_segment_t *seg);
int log_segment_flush(log_segment_t *seg);
/* Seals (if its indexes are writable) and frees. */
int log_segment_close(log_segment_t *seg);
/* Frees without writing anything. */
void log_segment_free(log_segment_t *seg);
/* Unlinks the files and frees. Returns 0, or -1 with errno when the .log
 * could not be unlinked: the segment is then left as it was, open. */
int log_segment_delete(log_segment_t *seg);

/* First record with timestamp >= ts and offset >= start_offset. Returns
 * 0 found, 1 none, -1 on error. */
int log_segment_find_ts(log_segment_t *seg, int64_t ts, int64_t start_offset,
                        log_ts_offset_t *out);
/* The first record carrying the segment's max timestamp. 0/1/-1 as above. */
int log_segment_find_max_ts(log_segment_t *seg, log_ts_offset_t *out);

#endif
