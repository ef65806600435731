/* The sparse indexes of a segment (protocol/FORMATS.md §7.2, §7.3): the offset index
 * (.index) and the time index (.timeindex). Both are arrays of fixed-size
 * big-endian entries whose first field is ordered; the active segment's
 * files are pre-allocated to segment.index.bytes and memory-mapped
 * read-write, closed segments' files are trimmed to their entries and
 * mapped read-only on first use.
 *
 * A full disk. The pre-allocated file is sparse, and a store through the
 * map into a hole the file system cannot back kills the process (SIGBUS).
 * So disk space is reserved (fallocate) ahead of the entries before any
 * store lands there. When it cannot be, the entry is skipped: the index is
 * sparse by design, a missing entry only makes a lookup read further in
 * the .log, and the batch itself is written or refused by its own write.
 * The time index keeps one reserved slot beyond its entries for the entry
 * its segment's seal adds. */
#ifndef STRAND_LOG_LOG_INDEX_H
#define STRAND_LOG_LOG_INDEX_H

#include <stddef.h>
#include <stdint.h>

#define LOG_OFFSET_INDEX_ENTRY 8 /* relativeOffset int32, position int32 */
#define LOG_TIME_INDEX_ENTRY 12  /* timestamp int64, relativeOffset int32 */

typedef struct log_index_s {
    char *path;          /* owned */
    int entry_size;      /* LOG_OFFSET_INDEX_ENTRY or LOG_TIME_INDEX_ENTRY */
    int64_t base_offset; /* the segment's */
    uint8_t *map;        /* NULL until mapped */
    size_t map_len;
    int32_t entries;
    int32_t max_entries; /* capacity while writable */
    int writable;
    int bad_size;        /* the file length was not a multiple of entries */
    int dirty;           /* trimmed since the last flush (fsync the file) */
    size_t reserved;     /* writable: bytes from the start known to have
                            disk space allocated (stores may go there) */
    int no_space;        /* the last reservation failed (logged once) */
} log_index_t;

/* Opens the index file at path (taking ownership of path), creating it if
 * missing. A writable index is grown to max_bytes (rounded down to whole
 * entries) and mapped; a read-only one is only measured. Existing entries
 * are assumed valid up to the file length. Returns 0 or -1 with errno. */
int log_index_open(log_index_t *idx, char *path, int entry_size,
                   int64_t base_offset, int writable, int32_t max_bytes);
/* Turns a trimmed index back into the active one (after truncation). */
int log_index_make_writable(log_index_t *idx, int32_t max_bytes);
/* Unmaps and cuts the file to its entries; the index becomes read-only
 * even when cutting fails (-1 with errno; log_index_make_writable undoes). */
int log_index_trim(log_index_t *idx);
/* Trims if writable and frees everything but the file. */
int log_index_close(log_index_t *idx);
/* Unmaps and frees without touching the file (abandoning the index). */
void log_index_release(log_index_t *idx);
/* Drops every entry (before a rebuild). */
void log_index_reset(log_index_t *idx);
/* Makes the entries durable: msync of a writable index, fdatasync of a
 * trimmed one (its pages were written through the map before it was cut).
 * Returns 0 or -1 with errno. */
int log_index_flush(log_index_t *idx);
int log_index_is_full(const log_index_t *idx);
/* Deletes the file and frees the index. Returns 0, or -1 with errno if the
 * file could not be removed (freed all the same; an index file without
 * its .log is removed when the log is next opened). */
int log_index_delete(log_index_t *idx);

/* Offset index entries. Returns 0, or -1 with errno ENOSPC when the index
 * is full or no disk space could be reserved for the entry (not added). */
int log_oidx_append(log_index_t *idx, int64_t offset, int32_t position);
/* The greatest entry with offset <= target, or (base_offset, 0). */
void log_oidx_lookup(log_index_t *idx, int64_t target, int64_t *offset,
                     int32_t *position);
/* Entry i (0 <= i < entries). */
void log_oidx_entry(log_index_t *idx, int32_t i, int64_t *offset,
                    int32_t *position);
/* The last entry whose position <= max_pos and offset < max_offset.
 * Returns 1 and fills offset/position, or 0 if there is none. */
int log_oidx_last_within(log_index_t *idx, int64_t max_pos, int64_t max_offset,
                         int64_t *offset, int32_t *position);
/* The first entry whose position >= pos. Returns 1 and its offset, or 0
 * if there is none. */
int log_oidx_first_from(log_index_t *idx, int64_t pos, int64_t *offset);
/* Removes the entries with offset >= offset. */
void log_oidx_truncate_to(log_index_t *idx, int64_t offset);

/* Time index: appends (ts, offset) only if ts is larger than the last
 * entry's timestamp (as Kafka's TimeIndex.maybeAppend). Returns 0, or -1
 * with errno = ENOSPC when full and not skip_full, or when no disk space
 * could be reserved for the entry (not added). */
int log_tidx_maybe_append(log_index_t *idx, int64_t ts, int64_t offset,
                          int skip_full);
/* The greatest entry with timestamp <= ts, or (-1, base_offset). */
void log_tidx_lookup(log_index_t *idx, int64_t ts, int64_t *ts_out,
                     int64_t *offset);
/* The last entry, or (-1, base_offset). */
void log_tidx_last(log_index_t *idx, int64_t *ts, int64_t *offset);
void log_tidx_entry(log_index_t *idx, int32_t i, int64_t *ts,
                    int64_t *offset);
void log_tidx_truncate_to(log_index_t *idx, int64_t offset);

/* Checks the invariants (ordered, in range); next_offset is the segment's
 * end and log_size its .log length. Returns 1 if sane. */
int log_index_sane(log_index_t *idx, int64_t next_offset, int64_t log_size);

#endif
