/* The aborted-transaction index (log_txnidx.h). All integers big-endian:
 *
 *   <base>.txnindex   N x { int16 version (0), int64 producerId,
 *                           int64 firstOffset, int64 lastOffset,
 *                           int64 lastStableOffset }
 *
 * A file cut inside an entry (a crash during its write) is read as its
 * whole entries; the next write goes over the partial one. */
#include "log/log_txnidx.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fault.h"
#include "util/mem.h"

static void ti_put64(uint8_t *p, int64_t v)
{
    for (int i = 7; i >= 0; i--, v = (int64_t)((uint64_t)v >> 8))
        p[i] = (uint8_t)v;
}

static int64_t ti_get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = v << 8 | p[i];
    return (int64_t)v;
}

static void ti_encode(uint8_t *p, const log_aborted_t *a)
{
    p[0] = p[1] = 0; /* version 0 */
    ti_put64(p + 2, a->producer_id);
    ti_put64(p + 10, a->first_offset);
    ti_put64(p + 18, a->last_offset);
    ti_put64(p + 26, a->last_stable_offset);
}

static void ti_decode(const uint8_t *p, log_aborted_t *a)
{
    a->producer_id = ti_get64(p + 2);
    a->first_offset = ti_get64(p + 10);
    a->last_offset = ti_get64(p + 18);
    a->last_stable_offset = ti_get64(p + 26);
}

void log_aborted_list_add(log_aborted_list_t *l, const log_aborted_t *a)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 8;
        l->v = xrealloc(l->v, sizeof(*l->v) * (size_t)l->cap);
    }
    l->v[l->n++] = *a;
}

void log_aborted_list_free(log_aborted_list_t *l)
{
    free(l->v);
    memset(l, 0, sizeof(*l));
}

void log_txnidx_init(log_txnidx_t *ti, char *path)
{
    memset(ti, 0, sizeof(*ti));
    ti->path = path;
}

void log_txnidx_free(log_txnidx_t *ti)
{
    free(ti->path);
    free(ti->v);
    memset(ti, 0, sizeof(*ti));
}

static void ti_push(log_txnidx_t *ti, const log_aborted_t *a)
{
    log_aborted_list_t l = {ti->v, ti->n, ti->cap};
    log_aborted_list_add(&l, a);
    ti->v = l.v;
    ti->n = l.n;
    ti->cap = l.cap;
}

static int ti_read_all(log_txnidx_t *ti, int fd)
{
    struct stat st;
    uint8_t *buf;
    int64_t n;

    if (fstat(fd, &st) < 0)
        return -1;
    n = st.st_size / LOG_TXNIDX_ENTRY;
    if (n == 0)
        return 0;
    buf = xmalloc((size_t)(n * LOG_TXNIDX_ENTRY));
    for (size_t done = 0, len = (size_t)(n * LOG_TXNIDX_ENTRY); done < len;) {
        ssize_t r = fault_pread(fd, buf + done, len - done, (off_t)done);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0)
                errno = EIO;
            free(buf);
            return -1;
        }
        done += (size_t)r;
    }
    for (int64_t i = 0; i < n; i++) {
        log_aborted_t a;
        ti_decode(buf + i * LOG_TXNIDX_ENTRY, &a);
        ti_push(ti, &a);
    }
    free(buf);
    return 0;
}

static int ti_load(log_txnidx_t *ti)
{
    int fd, rc;

    if (ti->loaded)
        return 0;
    fd = fault_open(ti->path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0) {
        if (errno != ENOENT)
            return -1;
        ti->loaded = 1;
        return 0;
    }
    rc = ti_read_all(ti, fd);
    close(fd);
    if (rc < 0) {
        ti->n = 0;
        return -1;
    }
    ti->loaded = 1;
    return 0;
}

int log_txnidx_entries(log_txnidx_t *ti, const log_aborted_t **v)
{
    if (ti_load(ti) < 0)
        return -1;
    *v = ti->v;
    return ti->n;
}

static int ti_write(int fd, const uint8_t *p, size_t len, off_t pos)
{
    size_t done = 0;

    while (done < len) {
        ssize_t w = fault_pwrite(fd, p + done, len - done, pos + (off_t)done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = EIO;
            return -1;
        }
        done += (size_t)w;
    }
    return 0;
}

int log_txnidx_append(log_txnidx_t *ti, const log_aborted_t *a)
{
    uint8_t ent[LOG_TXNIDX_ENTRY];
    off_t pos;
    int fd, created, e;

    if (ti_load(ti) < 0)
        return -1;
    if (ti->n > 0 && ti->v[ti->n - 1].last_offset >= a->last_offset)
        return 0;
    created = access(ti->path, F_OK) < 0;
    fd = fault_open(ti->path, O_WRONLY | O_CREAT | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    ti_encode(ent, a);
    pos = (off_t)ti->n * LOG_TXNIDX_ENTRY;
    if (ti_write(fd, ent, sizeof(ent), pos) < 0) {
        e = errno;
        /* nothing half written may stay to be read as an entry */
        if (fault_ftruncate(fd, pos) < 0 && created)
            fault_unlink(ti->path);
        close(fd);
        errno = e;
        return -1;
    }
    close(fd);
    ti_push(ti, a);
    ti->dirty = 1;
    return created;
}

int log_txnidx_truncate(log_txnidx_t *ti, int64_t offset)
{
    int n;

    if (ti_load(ti) < 0)
        return -1;
    for (n = ti->n; n > 0 && ti->v[n - 1].last_offset >= offset; n--)
        ;
    if (n == ti->n)
        return 0;
    ti->n = n;
    ti->dirty = 1;
    if (n == 0)
        return log_txnidx_remove(ti);
    return fault_truncate(ti->path, (off_t)n * LOG_TXNIDX_ENTRY);
}

int log_txnidx_collect(log_txnidx_t *ti, int64_t from, int64_t upper, log_aborted_list_t *out)
{
    if (ti_load(ti) < 0)
        return -1;
    for (int i = 0; i < ti->n; i++) {
        const log_aborted_t *a = &ti->v[i];
        if (a->last_offset >= from && a->first_offset < upper)
            log_aborted_list_add(out, a);
        if (a->last_stable_offset >= upper)
            return 1;
    }
    return 0;
}

int log_txnidx_remove(log_txnidx_t *ti)
{
    ti->n = 0;
    ti->loaded = 1;
    if (fault_unlink(ti->path) < 0 && errno != ENOENT)
        return -1;
    return 0;
}

int log_txnidx_flush(log_txnidx_t *ti)
{
    int fd, rc;

    if (!ti->dirty)
        return 0;
    fd = fault_open(ti->path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    rc = fault_fdatasync(fd);
    close(fd);
    if (rc == 0)
        ti->dirty = 0;
    return rc;
}
