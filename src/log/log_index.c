/* Segment index files, byte for byte as Kafka writes them (OffsetIndex,
 * TimeIndex). No header, no checksum; all integers big-endian:
 *
 *   <base>.index      N x { int32 relativeOffset, int32 position }
 *                     relativeOffset = offset - segment base offset, strictly
 *                     increasing; position = byte position of a batch in
 *                     <base>.log
 *   <base>.timeindex  N x { int64 timestamp, int32 relativeOffset }
 *                     timestamps strictly increasing, offsets not decreasing
 *
 * While a segment is active its index files are pre-allocated (sparse) to
 * segment.index.bytes and the tail past the entries is zeros; they are cut
 * to N x entry size when the segment rolls or the log is closed. Disk
 * space for the entries is allocated a little ahead of them (idx_reserve). An index
 * whose size is not a whole number of entries, or whose entries are out of
 * order, is rebuilt from the .log by the caller. */
#include "log/log_index.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fault.h"
#include "util/logging.h"

/* Reservations grow by doubling from one page to this many bytes at a
 * time: a quiet partition's index costs a page of disk, a busy one a few
 * fallocate calls per segment. */
#define IDX_RESERVE_MIN 4096
#define IDX_RESERVE_MAX (1024 * 1024)

static uint32_t idx_get32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static void idx_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

static int64_t idx_get64(const uint8_t *p)
{
    return (int64_t)(((uint64_t)idx_get32(p) << 32) | idx_get32(p + 4));
}

static void idx_put64(uint8_t *p, int64_t v)
{
    idx_put32(p, (uint32_t)((uint64_t)v >> 32));
    idx_put32(p + 4, (uint32_t)v);
}

static void idx_unmap(log_index_t *idx)
{
    if (idx->map)
        munmap(idx->map, idx->map_len);
    idx->map = NULL;
    idx->map_len = 0;
}

/* Grows the file to the capacity and maps it read-write. */
static int idx_map_rw(log_index_t *idx, int fd, int32_t max_bytes)
{
    int32_t cap = max_bytes > 0 ? max_bytes / idx->entry_size : 0;
    size_t len;

    if (cap < idx->entries)
        cap = idx->entries;
    len = (size_t)cap * (size_t)idx->entry_size;
    if (fault_ftruncate(fd, (off_t)len) < 0)
        return -1;
    if (len > 0) {
        void *m = fault_mmap(NULL, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
        if (m == MAP_FAILED)
            return -1;
        idx->map = m;
    }
    idx->map_len = len;
    idx->max_entries = cap;
    idx->writable = 1;
    return 0;
}

int log_index_open(log_index_t *idx, char *path, int entry_size,
                   int64_t base_offset, int writable, int32_t max_bytes)
{
    struct stat st;
    int fd, rc = 0, e;

    memset(idx, 0, sizeof(*idx));
    idx->path = path;
    idx->entry_size = entry_size;
    idx->base_offset = base_offset;
    fd = fault_open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0) {
        rc = -1;
        goto out;
    }
    idx->bad_size = st.st_size % entry_size != 0;
    if (st.st_size / entry_size > INT32_MAX)
        idx->bad_size = 1;
    else
        idx->entries = (int32_t)(st.st_size / entry_size);
    idx->max_entries = idx->entries;
    if (writable)
        rc = idx_map_rw(idx, fd, max_bytes);
out:
    e = errno;
    close(fd);
    errno = e;
    return rc;
}

int log_index_make_writable(log_index_t *idx, int32_t max_bytes)
{
    int fd, rc, e;

    if (idx->writable)
        return 0;
    idx_unmap(idx);
    fd = fault_open(idx->path, O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    rc = idx_map_rw(idx, fd, max_bytes);
    e = errno;
    close(fd);
    errno = e;
    return rc;
}

/* Makes sure the first `upto` entries have disk space before they are
 * stored to through the map (log_index.h, "A full disk"). Opens the file
 * by name: an index keeps no descriptor open, since every partition has an
 * active segment and the descriptor budget is shared with the sockets.
 * Returns 0, or -1 with errno (ENOSPC past the mapped capacity). */
static int idx_reserve(log_index_t *idx, int32_t upto)
{
    size_t need = (size_t)upto * (size_t)idx->entry_size, step, want;
    int fd, rc, e;

    if (need <= idx->reserved)
        return 0;
    if (!idx->writable || need > idx->map_len) {
        errno = ENOSPC;
        return -1;
    }
    step = idx->reserved < IDX_RESERVE_MIN ? IDX_RESERVE_MIN : idx->reserved;
    step = step > IDX_RESERVE_MAX ? IDX_RESERVE_MAX : step;
    want = idx->reserved + step < need ? need : idx->reserved + step;
    want = want > idx->map_len ? idx->map_len : want;
    fd = fault_open(idx->path, O_RDWR | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    rc = fault_fallocate(fd, (off_t)idx->reserved, (off_t)(want - idx->reserved));
    e = errno;
    close(fd);
    if (rc == 0) {
        if (idx->no_space)
            lg_info("%s: disk space for index entries again", idx->path);
        idx->no_space = 0;
        idx->reserved = want;
        return 0;
    }
    if (!idx->no_space)
        lg_warn("%s: no disk space for index entries, skipping them: %s", idx->path, strerror(e));
    idx->no_space = 1;
    errno = e;
    return -1;
}

/* Maps a read-only index on first use. On failure the index behaves as
 * empty, which only makes lookups scan more of the .log. */
static int idx_map(log_index_t *idx)
{
    size_t len = (size_t)idx->entries * (size_t)idx->entry_size;
    int fd;
    void *m;

    if (idx->map || idx->entries == 0)
        return idx->map != NULL;
    fd = fault_open(idx->path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return 0;
    m = fault_mmap(NULL, len, PROT_READ, MAP_SHARED, fd, 0);
    close(fd);
    if (m == MAP_FAILED)
        return 0;
    idx->map = m;
    idx->map_len = len;
    return 1;
}

int log_index_trim(log_index_t *idx)
{
    size_t used = (size_t)idx->entries * (size_t)idx->entry_size;

    idx_unmap(idx);
    if (idx->reserved > used)
        idx->reserved = used;
    idx->writable = 0;
    idx->dirty = 1;
    idx->max_entries = idx->entries;
    return fault_truncate(idx->path, (off_t)idx->entries * idx->entry_size);
}

int log_index_close(log_index_t *idx)
{
    int rc = 0;

    if (idx->writable)
        rc = log_index_trim(idx);
    idx_unmap(idx);
    free(idx->path);
    idx->path = NULL;
    return rc;
}

void log_index_release(log_index_t *idx)
{
    idx_unmap(idx);
    free(idx->path);
    idx->path = NULL;
    idx->writable = 0;
}

int log_index_delete(log_index_t *idx)
{
    int rc = 0;

    idx_unmap(idx);
    if (idx->path && fault_unlink(idx->path) < 0 && errno != ENOENT)
        rc = -1;
    free(idx->path);
    idx->path = NULL;
    return rc;
}

void log_index_reset(log_index_t *idx)
{
    idx->entries = 0;
    idx->bad_size = 0;
    /* the entries counted from the file length may have been holes */
    idx->reserved = 0;
    if (!idx->writable) {
        idx_unmap(idx);
        idx->max_entries = 0;
    }
}

int log_index_flush(log_index_t *idx)
{
    int fd, rc, e;

    if (idx->writable)
        return idx->map && idx->entries > 0 ? fault_msync(idx->map, idx->map_len, MS_SYNC) : 0;
    if (!idx->dirty)
        return 0;
    fd = fault_open(idx->path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    rc = fault_fdatasync(fd);
    e = errno;
    close(fd);
    if (rc == 0)
        idx->dirty = 0;
    errno = e;
    return rc;
}

/* The time index keeps its last slot for the entry written when the
 * segment stops being active (as Kafka's TimeIndex.isFull). */
int log_index_is_full(const log_index_t *idx)
{
    if (idx->entry_size == LOG_TIME_INDEX_ENTRY)
        return idx->entries >= idx->max_entries - 1;
    return idx->entries >= idx->max_entries;
}

/* ---- offset index ---- */

static int64_t oidx_offset_at(const log_index_t *idx, int32_t i)
{
    return idx->base_offset + (int32_t)idx_get32(idx->map + (size_t)i * LOG_OFFSET_INDEX_ENTRY);
}

int log_oidx_append(log_index_t *idx, int64_t offset, int32_t position)
{
    uint8_t *p;

    if (!idx->writable || idx->entries >= idx->max_entries) {
        errno = ENOSPC;
        return -1;
    }
    if (idx_reserve(idx, idx->entries + 1) < 0)
        return -1;
    p = idx->map + (size_t)idx->entries * LOG_OFFSET_INDEX_ENTRY;
    idx_put32(p, (uint32_t)(offset - idx->base_offset));
    idx_put32(p + 4, (uint32_t)position);
    idx->entries++;
    return 0;
}

void log_oidx_entry(log_index_t *idx, int32_t i, int64_t *offset, int32_t *position)
{
    const uint8_t *p;

    if (!idx_map(idx) || i < 0 || i >= idx->entries) {
        *offset = idx->base_offset;
        *position = 0;
        return;
    }
    p = idx->map + (size_t)i * LOG_OFFSET_INDEX_ENTRY;
    *offset = idx->base_offset + (int32_t)idx_get32(p);
    *position = (int32_t)idx_get32(p + 4);
}

/* Index of the greatest entry whose key <= target, or -1. */
static int32_t oidx_floor(log_index_t *idx, int64_t target)
{
    int32_t lo = 0, hi = idx->entries - 1, found = -1;

    if (!idx_map(idx))
        return -1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (oidx_offset_at(idx, mid) <= target) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

void log_oidx_lookup(log_index_t *idx, int64_t target, int64_t *offset, int32_t *position)
{
    log_oidx_entry(idx, oidx_floor(idx, target), offset, position);
}

int log_oidx_last_within(log_index_t *idx, int64_t max_pos, int64_t max_offset,
                         int64_t *offset, int32_t *position)
{
    int32_t lo = 0, hi = idx->entries - 1, found = -1;

    if (!idx_map(idx))
        return 0;
    /* both fields grow with the index, so the matches are a prefix */
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        const uint8_t *p = idx->map + (size_t)mid * LOG_OFFSET_INDEX_ENTRY;
        if (idx->base_offset + (int32_t)idx_get32(p) < max_offset &&
            (int32_t)idx_get32(p + 4) <= max_pos) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    if (found < 0)
        return 0;
    log_oidx_entry(idx, found, offset, position);
    return 1;
}

int log_oidx_first_from(log_index_t *idx, int64_t pos, int64_t *offset)
{
    int32_t lo = 0, hi = idx->entries - 1, found = -1, p;

    if (!idx_map(idx))
        return 0;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if ((int32_t)idx_get32(idx->map + (size_t)mid * LOG_OFFSET_INDEX_ENTRY + 4) >= pos) {
            found = mid;
            hi = mid - 1;
        } else {
            lo = mid + 1;
        }
    }
    if (found < 0)
        return 0;
    log_oidx_entry(idx, found, offset, &p);
    return 1;
}

void log_oidx_truncate_to(log_index_t *idx, int64_t offset)
{
    int32_t i = oidx_floor(idx, offset - 1);

    if (i + 1 < idx->entries)
        idx->entries = i + 1;
}

/* ---- time index ---- */

static int64_t tidx_ts_at(const log_index_t *idx, int32_t i)
{
    return idx_get64(idx->map + (size_t)i * LOG_TIME_INDEX_ENTRY);
}

void log_tidx_entry(log_index_t *idx, int32_t i, int64_t *ts, int64_t *offset)
{
    const uint8_t *p;

    if (!idx_map(idx) || i < 0 || i >= idx->entries) {
        *ts = -1;
        *offset = idx->base_offset;
        return;
    }
    p = idx->map + (size_t)i * LOG_TIME_INDEX_ENTRY;
    *ts = idx_get64(p);
    *offset = idx->base_offset + (int32_t)idx_get32(p + 8);
}

void log_tidx_last(log_index_t *idx, int64_t *ts, int64_t *offset)
{
    log_tidx_entry(idx, idx->entries - 1, ts, offset);
}

int log_tidx_maybe_append(log_index_t *idx, int64_t ts, int64_t offset, int skip_full)
{
    int64_t last_ts, last_off;
    uint8_t *p;

    if (!skip_full && log_index_is_full(idx)) {
        errno = ENOSPC;
        return -1;
    }
    log_tidx_last(idx, &last_ts, &last_off);
    if (ts <= last_ts || offset < last_off)
        return 0;
    if (!idx->writable || idx->entries >= idx->max_entries) {
        /* a closing segment whose index is exactly full: Kafka drops the
         * final entry too (the max is then recomputed from the .log) */
        return 0;
    }
    /* the seal's entry (skip_full) takes the slot kept for it */
    if (idx_reserve(idx, idx->entries + (skip_full ? 1 : 2)) < 0)
        return -1;
    p = idx->map + (size_t)idx->entries * LOG_TIME_INDEX_ENTRY;
    idx_put64(p, ts);
    idx_put32(p + 8, (uint32_t)(offset - idx->base_offset));
    idx->entries++;
    return 0;
}

static int32_t tidx_floor(log_index_t *idx, int64_t ts)
{
    int32_t lo = 0, hi = idx->entries - 1, found = -1;

    if (!idx_map(idx))
        return -1;
    while (lo <= hi) {
        int32_t mid = lo + (hi - lo) / 2;
        if (tidx_ts_at(idx, mid) <= ts) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

void log_tidx_lookup(log_index_t *idx, int64_t ts, int64_t *ts_out, int64_t *offset)
{
    log_tidx_entry(idx, tidx_floor(idx, ts), ts_out, offset);
}

void log_tidx_truncate_to(log_index_t *idx, int64_t offset)
{
    int32_t n = idx->entries;

    /* offsets are not decreasing: drop from the end while >= offset */
    while (n > 0) {
        int64_t ts, off;
        log_tidx_entry(idx, n - 1, &ts, &off);
        if (off < offset)
            break;
        n--;
    }
    idx->entries = n;
}

/* ---- sanity ---- */

/* Checks the first and last entries only: enough to catch a file left at
 * its pre-allocated size (zeros after the entries) or cut short, without
 * reading every index at startup. */
int log_index_sane(log_index_t *idx, int64_t next_offset, int64_t log_size)
{
    int32_t n = idx->entries;

    if (idx->bad_size)
        return 0;
    if (n == 0)
        return 1;
    if (!idx_map(idx))
        return 0;
    if (idx->entry_size == LOG_OFFSET_INDEX_ENTRY) {
        int64_t o0, o1;
        int32_t p0, p1;
        log_oidx_entry(idx, 0, &o0, &p0);
        log_oidx_entry(idx, n - 1, &o1, &p1);
        if (o0 < idx->base_offset || o1 >= next_offset || p0 < 0 || p1 >= log_size)
            return 0;
        return n == 1 || (o1 > o0 && p1 > p0);
    } else {
        int64_t t0, o0, t1, o1;
        log_tidx_entry(idx, 0, &t0, &o0);
        log_tidx_entry(idx, n - 1, &t1, &o1);
        if (o0 < idx->base_offset || o1 >= next_offset || t0 < 0)
            return 0;
        return n == 1 || (t1 > t0 && o1 >= o0);
    }
}
