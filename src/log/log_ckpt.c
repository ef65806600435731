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

#include "util/mem.h"

int log_ckpt_fsync_dir(const char *dir)
{
    int fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    int rc;

    if (fd < 0)
        return -1;
    rc = fsync(fd);
    close(fd);
    return rc;
}

static int ckpt_write_all(int fd, const uint8_t *p, size_t n)
{
    while (n > 0) {
        ssize_t w = write(fd, p, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        n -= (size_t)w;
    }
    return 0;
}

int log_ckpt_write_file(const char *path, const void *data, size_t len)
{
    size_t n = strlen(path) + 5;
    char *tmp = xmalloc(n), *dir = xstrdup(path), *slash;
    int fd, rc = -1, e;

    snprintf(tmp, n, "%s.tmp", path);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        goto out;
    if (ckpt_write_all(fd, data, len) < 0 || fsync(fd) < 0) {
        e = errno;
        close(fd);
        unlink(tmp);
        errno = e;
        goto out;
    }
    if (close(fd) < 0 || rename(tmp, path) < 0) {
        e = errno;
        unlink(tmp);
        errno = e;
        goto out;
    }
    slash = strrchr(dir, '/');
    if (slash == dir)
        slash[1] = '\0';
    else if (slash)
        *slash = '\0';
    else
        strcpy(dir, ".");
    rc = log_ckpt_fsync_dir(dir);
out:
    free(tmp);
    free(dir);
    return rc;
}

char *log_ckpt_read_file(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
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
        r = read(fd, p + n, cap - n - 1);
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
