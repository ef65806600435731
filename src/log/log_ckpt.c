/* Text checkpoint files, as Kafka's CheckpointFile writes them:
 *
 *   <version>\n          always 0 for the files we write
 *   <N>\n
 *   <field> <field>...\n  N times
 *
 * e.g. recovery-point-offset-checkpoint: "0\n2\norders 0 1520\norders 1 98\n".
 * They are replaced atomically: written to "<name>.tmp", fsynced, renamed. */
#include "log/log_ckpt.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fault.h"
#include "util/mem.h"

int log_ckpt_fsync_dir(const char *dir)
{
    int fd = fault_open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC, 0);
    int rc, e;

    if (fd < 0)
        return -1;
    rc = fault_fsync(fd);
    e = errno;
    close(fd);
    errno = e;
    return rc;
}

static int ckpt_write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = fault_write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            if (w == 0)
                errno = ENOSPC;
            return -1;
        }
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

/* The directory part of path, in memory the caller owns. */
static char *ckpt_dirname(const char *path)
{
    char *dir = xstrdup(path), *slash = strrchr(dir, '/');

    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    return dir;
}

/* Writes (and with sync fsyncs) the temporary file. On failure it is
 * removed (the target was never touched); a tmp file that cannot be
 * removed is left for the next open of the log to clean up (log_scan_dir,
 * log_mgr_open). */
static int ckpt_write_tmp(const char *tmp, const void *data, size_t len, int sync)
{
    int fd = fault_open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    int e;

    if (fd < 0)
        return -1;
    if (ckpt_write_all(fd, data, len) < 0 || (sync && fault_fsync(fd) < 0)) {
        e = errno;
        close(fd);
        fault_unlink(tmp);
        errno = e;
        return -1;
    }
    if (close(fd) < 0) {
        e = errno;
        fault_unlink(tmp);
        errno = e;
        return -1;
    }
    return 0;
}

/* Whatever fails, path holds either its previous contents or all of the
 * new ones, never a mix: the data only reaches path by a rename of a file
 * already fsynced. A failed fsync of the tmp file is not retried (after a
 * failed writeback its pages may be marked clean without being on disk):
 * the tmp file is dropped and the next call writes a fresh one. When only
 * the final fsync of the directory fails, path already has the new
 * contents, but the rename may not survive a machine crash (-2). */
static int ckpt_replace(const char *path, const void *data, size_t len, int sync)
{
    size_t n = strlen(path) + 5;
    char *tmp = xmalloc(n), *dir;
    int rc = -1, e;

    snprintf(tmp, n, "%s.tmp", path);
    if (ckpt_write_tmp(tmp, data, len, sync) < 0)
        goto out;
    if (fault_rename(tmp, path) < 0) {
        e = errno;
        fault_unlink(tmp);
        errno = e;
        goto out;
    }
    rc = 0;
    if (sync) {
        dir = ckpt_dirname(path);
        rc = log_ckpt_fsync_dir(dir) < 0 ? -2 : 0;
        free(dir);
    }
out:
    free(tmp);
    return rc;
}

int log_ckpt_write_file(const char *path, const void *data, size_t len)
{
    return ckpt_replace(path, data, len, 1);
}

int log_ckpt_write_unsynced(const char *path, const void *data, size_t len)
{
    return ckpt_replace(path, data, len, 0);
}

char *log_ckpt_read_file(const char *path, size_t *len)
{
    int fd = fault_open(path, O_RDONLY | O_CLOEXEC, 0);
    size_t cap = 4096, n = 0;
    char *p;

    if (fd < 0)
        return NULL;
    p = xmalloc(cap);
    for (;;) {
        ssize_t r;
        if (cap - n < 2) {
            cap *= 2;
            p = xrealloc(p, cap);
        }
        r = fault_read(fd, p + n, cap - n - 1);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0) {
            int e = errno;
            close(fd);
            free(p);
            errno = e;
            return NULL;
        }
        if (r == 0)
            break;
        n += (size_t)r;
    }
    close(fd);
    p[n] = '\0';
    if (len)
        *len = n;
    return p;
}

/* Splits the next line in place; returns it or NULL at the end. */
static char *ckpt_next_line(char **pos)
{
    char *s = *pos, *nl;

    if (!*s)
        return NULL;
    nl = strchr(s, '\n');
    if (nl) {
        *nl = '\0';
        *pos = nl + 1;
    } else {
        *pos = s + strlen(s);
    }
    if (nl > s && nl[-1] == '\r')
        nl[-1] = '\0';
    return s;
}

static int ckpt_parse_long(const char *s, long long *v)
{
    char *end;

    errno = 0;
    *v = strtoll(s, &end, 10);
    return errno || end == s || *end ? -1 : 0;
}

int log_ckpt_parse(const char *text, int nfields, int (*fn)(void *opaque, char **fields),
                   void *opaque)
{
    char *copy = xstrdup(text), *pos = copy, *line, *save, *f[4];
    long long version, count, seen = 0;
    int rc = -1;

    line = ckpt_next_line(&pos);
    if (!line || ckpt_parse_long(line, &version) < 0 || version != 0)
        goto out;
    line = ckpt_next_line(&pos);
    if (!line || ckpt_parse_long(line, &count) < 0 || count < 0)
        goto out;
    while ((line = ckpt_next_line(&pos)) != NULL) {
        int i;
        if (!*line)
            continue;
        for (i = 0; i < nfields; i++) {
            f[i] = strtok_r(i ? NULL : line, " \t", &save);
            if (!f[i])
                goto out;
        }
        if (strtok_r(NULL, " \t", &save) || ++seen > count || fn(opaque, f) < 0)
            goto out;
    }
    if (seen == count)
        rc = (int)count;
out:
    free(copy);
    if (rc < 0)
        errno = EBADMSG;
    return rc;
}
