/* Flushes in three steps, so that the fsyncs run on a worker thread while
 * the loop goes on (log.h, "durability"). The loop decides what a flush
 * covers and hands the worker duplicates of the descriptors to sync; what
 * is appended meanwhile is simply not covered, and the recovery point only
 * moves, to what was committed when the flush began, once every sync
 * succeeded. A failed sync takes the log offline, as log_flush does:
 * after a writeback error nothing unsynced may ever be called durable. */
#include "log/log_int.h"

#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log_ckpt.h"
#include "util/fault.h"
#include "util/logging.h"
#include "util/mem.h"

static void log_sync_add(log_sync_t *s, int fd)
{
    s->fds = xrealloc(s->fds, (size_t)(s->nfds + 1) * sizeof(int));
    s->fds[s->nfds++] = fd;
}

/* An index needs its own sync when it was written through its mapping
 * (fdatasync of the file covers the mapped pages) or trimmed. */
static int log_sync_index(log_sync_t *s, log_index_t *idx)
{
    if (!(idx->writable ? idx->map && idx->entries > 0 : idx->dirty))
        return 0;
    int fd = fault_open(idx->path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    idx->dirty = 0;
    log_sync_add(s, fd);
    return 0;
}

/* A rewritten epoch checkpoint (written unsynced, log_ecache.c) is synced
 * with the batches: the recovery point never passes a batch whose epoch
 * entry could be lost. Its rename needs the directory's sync. */
static int log_sync_epochs(log_sync_t *s, log_t *log)
{
    int fd = fault_open(log->epochs.path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    log_sync_add(s, fd);
    log->epochs.unsynced = 0;
    log->dir_dirty = 1;
    return 0;
}

/* The aborted-transaction index is written with pwrite: a sync of the
 * file as it is now (a removed one needs only the directory's, which its
 * remover asked for). */
static int log_sync_txnidx(log_sync_t *s, log_txnidx_t *ti)
{
    int fd;

    if (!ti->dirty)
        return 0;
    ti->dirty = 0;
    fd = fault_open(ti->path, O_RDONLY | O_CLOEXEC, 0);
    if (fd < 0)
        return errno == ENOENT ? 0 : -1;
    log_sync_add(s, fd);
    return 0;
}

static int log_sync_segment(log_sync_t *s, log_segment_t *seg)
{
    int fd = fcntl(seg->fd, F_DUPFD_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    log_sync_add(s, fd);
    return log_sync_index(s, &seg->oidx) < 0 || log_sync_index(s, &seg->tidx) < 0 ||
                   log_sync_txnidx(s, &seg->txn) < 0
               ? -1
               : 0;
}

int log_sync_begin(log_t *log, int rolled_only, log_sync_t *s)
{
    memset(s, 0, sizeof(*s));
    s->dir_fd = -1;
    s->uid = log->uid;
    if (log_is_down(log))
        return -1;
    int upto = rolled_only ? log->nsegs - 1 : log->nsegs;
    s->target = rolled_only ? log_active(log)->base_offset : log_end_offset(log);
    s->unflushed = rolled_only ? 0 : log->unflushed;
    if (s->target <= log->recovery_point && !log->dir_dirty && !s->unflushed &&
        !log->epochs.unsynced)
        return 0;
    for (int i = log_seg_floor(log, log->recovery_point); i < upto; i++)
        if (log_sync_segment(s, log->segs[i]) < 0)
            goto err;
    if (log->epochs.unsynced && log_sync_epochs(s, log) < 0)
        goto err;
    if (log->dir_dirty) {
        s->dir_fd = fault_open(log->dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
        if (s->dir_fd < 0)
            goto err;
        log->dir_dirty = 0;
    }
    return 0;
err:
    /* A flush that cannot even start leaves what it covers of unknown
     * durability: as after a failed fsync, nothing since the last good
     * flush may be called durable. */
    lg_error("log %s: cannot start a flush: %s", log->dir, strerror(errno));
    log_sync_drop(s);
    log_set_offline(log, "a flush could not start");
    return -1;
}

int log_sync_pending(const log_sync_t *s)
{
    return s->nfds > 0 || s->dir_fd >= 0;
}

void log_sync_run(log_sync_t *s)
{
    for (int i = 0; i < s->nfds; i++) {
        if (!s->err && fault_fdatasync(s->fds[i]) < 0)
            s->err = errno ? errno : EIO;
        close(s->fds[i]);
    }
    s->nfds = 0;
    if (s->dir_fd >= 0) {
        if (!s->err && fault_fsync(s->dir_fd) < 0)
            s->err = errno ? errno : EIO;
        close(s->dir_fd);
        s->dir_fd = -1;
    }
}

void log_sync_drop(log_sync_t *s)
{
    for (int i = 0; i < s->nfds; i++)
        close(s->fds[i]);
    if (s->dir_fd >= 0)
        close(s->dir_fd);
    free(s->fds);
    s->fds = NULL;
    s->nfds = 0;
    s->dir_fd = -1;
}

int log_sync_end(log_t *log, log_sync_t *s, int64_t now_ms)
{
    int err = s->err;
    log_sync_drop(s);
    if (log->uid != s->uid) {
        errno = EINVAL;
        return -1;
    }
    if (log_is_down(log))
        return -1;
    if (err) {
        errno = err;
        lg_error("log %s: fsync failed: %s", log->dir, strerror(errno));
        log_set_offline(log, "fsync failed");
        return -1;
    }
    /* Several flushes may be out at once: only ever move forward. */
    if (s->target > log->recovery_point)
        log->recovery_point = s->target;
    log->unflushed = log->unflushed > s->unflushed ? log->unflushed - s->unflushed : 0;
    if (s->unflushed || s->target >= log_end_offset(log))
        log->last_flush_ms = now_ms;
    return 0;
}

int log_flush(log_t *log, int64_t now_ms)
{
    log_sync_t s;
    if (log_sync_begin(log, 0, &s) < 0)
        return -1;
    log_sync_run(&s);
    return log_sync_end(log, &s, now_ms);
}

int log_flush_rolled(log_t *log)
{
    log_sync_t s;
    if (log_sync_begin(log, 1, &s) < 0)
        return -1;
    log_sync_run(&s);
    return log_sync_end(log, &s, log->last_flush_ms);
}
