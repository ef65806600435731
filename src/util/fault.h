/* Fault injection where the data lives (SQLite's I/O-error tests, applied
 * to a partition log): every call of the storage layer that can fail on a
 * real disk goes through one of the fault_* wrappers below. Unarmed, a
 * wrapper is the system call plus one predictable branch on fault_armed.
 * Armed, it counts the call and may fail it as a test asked:
 *
 *   - "fail the Nth call of kind K with errno E"     (nth)
 *   - "fail every call of kind K after the first N"  (after; 0 = a dying
 *      disk: every call from now on), or only K of them (count: a burst)
 *   - "short-write the Nth write": half the bytes are written, the call
 *      returns that count, and the next write of the same thread fails
 *      with E (a disk filling up in the middle of a batch)
 *   - any of these only while a given file exists (while), so that a test
 *      can break and repair the disk of a running broker from outside.
 *
 * The arming state (fault_armed and the rules in fault.c) is a
 * process-wide test hook: the one global the project allows besides the
 * broker context, since a disk is process-wide too. Worker threads call
 * the wrappers (they write produced batches) while the loop arms rules and
 * calls them as well, so the state is shared: fault_armed is an atomic
 * read with a relaxed load (on the unarmed path that is one plain load
 * and a branch, as before), and the rules and counters behind it are kept
 * under a mutex that only the armed path takes. Every call is counted
 * exactly once and a rule fires exactly as often as it says, whichever
 * threads make the calls. The broker arms it from the environment when it
 * opens its log dirs (log_mgr_open calls fault_env_load), e.g.
 *
 *   STRAND_FAULT="write:errno=ENOSPC:while=/tmp/t/full;sync:after=100:errno=EIO"
 *
 * Every rule counts the calls it matches; when several want to fail one,
 * the first armed decides. Spec grammar: rules separated by ';', each
 * "kind[:key=value]...":
 *   kind   open read write sync msync rename truncate unlink mkdir mmap any
 *          (aliases: pwrite, fsync, fdatasync, ftruncate, opendir, remove)
 *   nth=N     fail the Nth matching call only (counted from arming)
 *   after=N   fail every matching call after the first N (default 0)
 *   count=K   fail K calls from there on (nth: the Nth to the N+K-1th;
 *             after: the next K), then let calls pass again
 *   errno=E   EIO (default), ENOSPC, EROFS, EDQUOT, EFBIG, ENOMEM, EACCES,
 *             EPERM, EBUSY, EMFILE, or a number
 *   short=1   (write) write half, then fail the next write with errno
 *   while=PATH  only while PATH exists */
#ifndef STRAND_UTIL_FAULT_H
#define STRAND_UTIL_FAULT_H

#include <dirent.h>
#include <stdatomic.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/types.h>
#include <unistd.h>

typedef enum fault_op_e {
    FAULT_OPEN,     /* open, opendir */
    FAULT_READ,     /* pread, read */
    FAULT_WRITE,    /* pwrite, write */
    FAULT_SYNC,     /* fsync, fdatasync */
    FAULT_MSYNC,    /* msync */
    FAULT_RENAME,   /* rename */
    FAULT_TRUNCATE, /* ftruncate, truncate */
    FAULT_UNLINK,   /* unlink, remove */
    FAULT_MKDIR,    /* mkdir */
    FAULT_MMAP,     /* mmap */
    FAULT_NOPS
} fault_op_t;

/* In a rule or a counter query: calls of every kind. */
#define FAULT_ANY FAULT_NOPS

typedef struct fault_rule_s {
    int op;                 /* a fault_op_t, or FAULT_ANY */
    int64_t nth;            /* > 0: fail the nth matching call */
    int64_t after;          /* nth == 0: fail matching calls after this many */
    int64_t count;          /* > 0: fail that many calls, then no more;
                               0: nth fails one, after fails all */
    int err;                /* errno of the failure; 0 means EIO */
    int short_write;        /* FAULT_WRITE: half a write, then err */
    const char *while_path; /* NULL, or only while this file exists */
} fault_rule_t;

/* Nonzero while a rule is armed or calls are being counted. Read by the
 * wrappers only (relaxed: a call racing with the arming may pass or be
 * checked, as on a real disk that fails at some instant); change it
 * through the functions below. */
extern atomic_int fault_armed;

/* The slow path of every wrapper: counts the call and applies the rules.
 * Returns 0 to go on with the call (*len may have been cut for a short
 * write; len may be NULL), or -1 with errno set to fail it. */
int fault_check(fault_op_t op, size_t *len);

/* Arms a rule (copied). Returns 0, or -1 (errno EINVAL) for a bad op or
 * when too many rules are armed. */
int fault_add(const fault_rule_t *rule);
/* Shorthands: fail the nth call of op (FAULT_ANY: of any kind) with err;
 * fail every call of op after the first n; short-write the nth write. */
int fault_fail_nth(int op, int64_t nth, int err);
int fault_fail_after(int op, int64_t n, int err);
int fault_short_write_nth(int64_t nth, int err);
/* Counts calls without failing any (until fault_reset). */
void fault_count_calls(void);
/* Disarms every rule, stops counting and zeroes the counters. */
void fault_reset(void);
/* Disarms every rule (the disk recovers) but keeps the counters. */
void fault_disarm(void);
/* While paused (calls nest), the wrappers neither count nor fail: a test
 * checks its state between armed operations without disturbing them. */
void fault_pause(void);
void fault_resume(void);
/* Calls of op (FAULT_ANY: all) seen since the last reset while armed. */
int64_t fault_calls(int op);
/* Calls failed (or cut short) since the last reset. */
int64_t fault_injected(void);

/* Arms the rules of a spec (grammar above). Returns 0, or -1 with a
 * reason in err (nothing is armed then). */
int fault_parse(const char *spec, char *err, size_t errlen);
/* Arms the rules of $STRAND_FAULT, the first time it is called in the
 * process (later calls do nothing). Returns 0 (also when it is not set),
 * or -1 with a reason in err if it does not parse. */
int fault_env_load(char *err, size_t errlen);

/* The kind's name in specs ("write"), or "any". */
const char *fault_op_name(int op);

/* ---- the wrappers: the system call of the same name, unless armed ---- */

#define FAULT_FAILS(op, lenp)                                                                  \
    (__builtin_expect(atomic_load_explicit(&fault_armed, memory_order_relaxed), 0) &&          \
     fault_check((op), (lenp)) < 0)

static inline int fault_open(const char *path, int flags, mode_t mode)
{
    if (FAULT_FAILS(FAULT_OPEN, NULL))
        return -1;
    return open(path, flags, mode);
}

static inline DIR *fault_opendir(const char *path)
{
    if (FAULT_FAILS(FAULT_OPEN, NULL))
        return NULL;
    return opendir(path);
}

static inline ssize_t fault_pread(int fd, void *p, size_t n, off_t off)
{
    if (FAULT_FAILS(FAULT_READ, NULL))
        return -1;
    return pread(fd, p, n, off);
}

static inline ssize_t fault_read(int fd, void *p, size_t n)
{
    if (FAULT_FAILS(FAULT_READ, NULL))
        return -1;
    return read(fd, p, n);
}

static inline ssize_t fault_pwrite(int fd, const void *p, size_t n, off_t off)
{
    if (FAULT_FAILS(FAULT_WRITE, &n))
        return -1;
    return pwrite(fd, p, n, off);
}

static inline ssize_t fault_write(int fd, const void *p, size_t n)
{
    if (FAULT_FAILS(FAULT_WRITE, &n))
        return -1;
    return write(fd, p, n);
}

static inline int fault_fsync(int fd)
{
    if (FAULT_FAILS(FAULT_SYNC, NULL))
        return -1;
    return fsync(fd);
}

static inline int fault_fdatasync(int fd)
{
    if (FAULT_FAILS(FAULT_SYNC, NULL))
        return -1;
    return fdatasync(fd);
}

static inline int fault_msync(void *addr, size_t len, int flags)
{
    if (FAULT_FAILS(FAULT_MSYNC, NULL))
        return -1;
    return msync(addr, len, flags);
}

static inline int fault_rename(const char *from, const char *to)
{
    if (FAULT_FAILS(FAULT_RENAME, NULL))
        return -1;
    return rename(from, to);
}

static inline int fault_ftruncate(int fd, off_t len)
{
    if (FAULT_FAILS(FAULT_TRUNCATE, NULL))
        return -1;
    return ftruncate(fd, len);
}

static inline int fault_truncate(const char *path, off_t len)
{
    if (FAULT_FAILS(FAULT_TRUNCATE, NULL))
        return -1;
    return truncate(path, len);
}

static inline int fault_unlink(const char *path)
{
    if (FAULT_FAILS(FAULT_UNLINK, NULL))
        return -1;
    return unlink(path);
}

static inline int fault_remove(const char *path)
{
    if (FAULT_FAILS(FAULT_UNLINK, NULL))
        return -1;
    return remove(path);
}

static inline int fault_mkdir(const char *path, mode_t mode)
{
    if (FAULT_FAILS(FAULT_MKDIR, NULL))
        return -1;
    return mkdir(path, mode);
}

static inline void *fault_mmap(void *addr, size_t len, int prot, int flags, int fd, off_t off)
{
    if (FAULT_FAILS(FAULT_MMAP, NULL))
        return MAP_FAILED;
    return mmap(addr, len, prot, flags, fd, off);
}

#endif
