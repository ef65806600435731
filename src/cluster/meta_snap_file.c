/* Snapshot files in the metadata log's directory: names, the atomic
 * write (.part, fsync, rename, fsync the directory, as Kafka's
 * FileRawSnapshotWriter does), listing, loading, start-up recovery, and
 * reads by position. Every call that can fail on a real disk goes
 * through util/fault.h, so the crash tests can break each one. */
#include "cluster/meta_snap.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fault.h"
#include "util/logging.h"
#include "util/mem.h"

#define MS_SUFFIX ".checkpoint"
#define MS_PART_SUFFIX ".checkpoint.part"

void meta_snap_name(meta_snap_id_t id, char *out, size_t cap)
{
    snprintf(out, cap, "%020" PRId64 "-%010" PRId32 MS_SUFFIX, id.end_offset, id.epoch);
}

/* 20 digits, '-', 10 digits, then suffix exactly. */
static int ms_parse_with(const char *name, const char *suffix, meta_snap_id_t *id)
{
    size_t n = strlen(name);
    if (n != 31 + strlen(suffix) || name[20] != '-' || strcmp(name + 31, suffix) != 0)
        return 0;
    for (int i = 0; i < 31; i++)
        if (i != 20 && (name[i] < '0' || name[i] > '9'))
            return 0;
    id->end_offset = strtoll(name, NULL, 10);
    id->epoch = (int32_t)strtol(name + 21, NULL, 10);
    return 1;
}

int meta_snap_parse_name(const char *name, meta_snap_id_t *id)
{
    return ms_parse_with(name, MS_SUFFIX, id);
}

static void ms_path(char *out, size_t cap, const char *dir, meta_snap_id_t id, const char *extra)
{
    char name[64];
    meta_snap_name(id, name, sizeof(name));
    snprintf(out, cap, "%s/%s%s", dir, name, extra);
}

static int ms_sync_dir(const char *dir)
{
    int fd = fault_open(dir, O_RDONLY | O_DIRECTORY, 0);
    if (fd < 0)
        return -1;
    int rc = fault_fsync(fd);
    int e = errno;
    close(fd);
    errno = e;
    return rc;
}

static int ms_write_all(int fd, const uint8_t *p, size_t len)
{
    while (len > 0) {
        ssize_t w = fault_write(fd, p, len);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        p += w;
        len -= (size_t)w;
    }
    return 0;
}

int meta_snap_write(const char *dir, meta_snap_id_t id, const uint8_t *p, size_t len)
{
    char part[4096], path[4096];
    int fd, e;

    ms_path(part, sizeof(part), dir, id, ".part");
    ms_path(path, sizeof(path), dir, id, "");
    fd = fault_open(part, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return -1;
    if (ms_write_all(fd, p, len) < 0 || fault_fsync(fd) < 0) {
        e = errno;
        close(fd);
        unlink(part);
        errno = e;
        return -1;
    }
    close(fd);
    if (fault_rename(part, path) < 0) {
        e = errno;
        unlink(part);
        errno = e;
        return -1;
    }
    return ms_sync_dir(dir);
}

static int ms_id_cmp(const void *a, const void *b)
{
    const meta_snap_id_t *x = a, *y = b;
    if (x->end_offset != y->end_offset)
        return x->end_offset < y->end_offset ? -1 : 1;
    return (x->epoch > y->epoch) - (x->epoch < y->epoch);
}

/* Snapshots (suffix MS_SUFFIX) or torn writes (MS_PART_SUFFIX) in dir. */
static int ms_scan(const char *dir, const char *suffix, meta_snap_id_t **ids)
{
    DIR *d = fault_opendir(dir);
    struct dirent *de;
    int n = 0, cap = 0;

    *ids = NULL;
    if (!d)
        return -1;
    while ((de = readdir(d)) != NULL) {
        meta_snap_id_t id;
        if (!ms_parse_with(de->d_name, suffix, &id))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            *ids = xrealloc(*ids, (size_t)cap * sizeof(**ids));
        }
        (*ids)[n++] = id;
    }
    closedir(d);
    if (n > 1)
        qsort(*ids, (size_t)n, sizeof(**ids), ms_id_cmp);
    return n;
}

int meta_snap_list(const char *dir, meta_snap_id_t **ids)
{
    return ms_scan(dir, MS_SUFFIX, ids);
}

int meta_snap_latest(const char *dir, meta_snap_id_t *id)
{
    meta_snap_id_t *ids;
    int n = meta_snap_list(dir, &ids);
    if (n > 0)
        *id = ids[n - 1];
    free(ids);
    return n < 0 ? -1 : n > 0;
}

int meta_snap_remove(const char *dir, meta_snap_id_t id)
{
    char path[4096];
    ms_path(path, sizeof(path), dir, id, "");
    if (fault_unlink(path) < 0 && errno != ENOENT)
        return -1;
    return ms_sync_dir(dir);
}

/* The whole file into *p (owned by the caller: free), *len its size. */
static int ms_read_file(const char *path, uint8_t **p, size_t *len)
{
    struct stat st;
    int fd = fault_open(path, O_RDONLY | O_CLOEXEC, 0);
    size_t got = 0;

    *p = NULL;
    if (fd < 0)
        return -1;
    if (fstat(fd, &st) < 0)
        goto err;
    *len = (size_t)st.st_size;
    *p = xmalloc(*len ? *len : 1);
    while (got < *len) {
        ssize_t r = fault_pread(fd, *p + got, *len - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            if (r == 0)
                errno = EIO;
            goto err;
        }
        got += (size_t)r;
    }
    close(fd);
    return 0;
err:
    free(*p);
    *p = NULL;
    int e = errno;
    close(fd);
    errno = e;
    return -1;
}

int meta_snap_load(const char *dir, meta_snap_id_t id, meta_image_t *img,
                   meta_snap_info_t *info, char *err, size_t errlen)
{
    char path[4096];
    uint8_t *p;
    size_t len;
    int rc;

    ms_path(path, sizeof(path), dir, id, "");
    if (ms_read_file(path, &p, &len) < 0) {
        snprintf(err, errlen, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    rc = meta_snap_parse(p, len, img, info, err, errlen);
    free(p);
    if (rc < 0)
        errno = EBADMSG;
    return rc;
}

/* The first batch of snapshot id into *p (owned by the caller), its size
 * in *size. Returns 0 or -1. */
static int ms_first_batch(const char *dir, meta_snap_id_t id, uint8_t **p, size_t *size)
{
    meta_snap_reader_t rd;
    uint8_t head[12];
    int rc = -1;

    if (meta_snap_reader_open(&rd, dir, id) < 0)
        return -1;
    /* baseOffset i64 | batchLength i32: the first batch's size. */
    if (meta_snap_reader_read(&rd, 0, head, sizeof(head)) == (ssize_t)sizeof(head)) {
        uint32_t blen = (uint32_t)head[8] << 24 | (uint32_t)head[9] << 16 |
                        (uint32_t)head[10] << 8 | head[11];
        *size = 12 + (size_t)(blen < (1u << 20) ? blen : 0);
        *p = xmalloc(*size);
        rc = meta_snap_reader_read(&rd, 0, *p, *size) == (ssize_t)*size ? 0 : -1;
        if (rc < 0)
            free(*p);
    }
    meta_snap_reader_close(&rd);
    return rc;
}

int meta_snap_header_ts(const char *dir, meta_snap_id_t id, int64_t *ts)
{
    uint8_t *p;
    size_t size;
    int rc = -1;
    if (ms_first_batch(dir, id, &p, &size) == 0) {
        rc = meta_snap_header_ts_of(p, size, ts);
        free(p);
    }
    if (rc < 0)
        errno = EBADMSG;
    return rc;
}

int meta_snap_header_ctl(const char *dir, meta_snap_id_t id, meta_snap_info_t *info)
{
    uint8_t *p;
    size_t size;
    int rc = -1;
    if (ms_first_batch(dir, id, &p, &size) == 0) {
        rc = meta_snap_header_ctl_of(p, size, info);
        free(p);
    }
    if (rc < 0)
        errno = EBADMSG;
    return rc;
}

/* Kafka deletes the .part files a crash left at start-up. */
static void ms_remove_parts(const char *dir)
{
    meta_snap_id_t *ids;
    char path[4096];
    int n = ms_scan(dir, MS_PART_SUFFIX, &ids);

    for (int i = 0; i < n; i++) {
        ms_path(path, sizeof(path), dir, ids[i], ".part");
        lg_info("metadata snapshot: removing the torn %s", path);
        if (fault_unlink(path) < 0)
            lg_warn("cannot remove %s: %s", path, strerror(errno));
    }
    free(ids);
}

/* Tries one snapshot: 1 loaded, 0 corrupt (removed). */
static int ms_try(const char *dir, meta_snap_id_t id, meta_image_t *img, meta_snap_info_t *info)
{
    char err[512], name[64];

    if (meta_snap_load(dir, id, img, info, err, sizeof(err)) == 0)
        return 1;
    meta_snap_name(id, name, sizeof(name));
    lg_error("metadata snapshot %s/%s is unusable (%s): removing it", dir, name, err);
    meta_image_free(img);
    meta_image_init(img);
    if (meta_snap_remove(dir, id) < 0)
        lg_warn("cannot remove %s/%s: %s", dir, name, strerror(errno));
    return 0;
}

int meta_snap_recover(const char *dir, int64_t min_end, int64_t max_end, meta_image_t *img,
                      meta_snap_id_t *id, meta_snap_info_t *info)
{
    meta_snap_id_t *ids;
    int n, found = 0;

    ms_remove_parts(dir);
    n = meta_snap_list(dir, &ids);
    if (n < 0)
        return -1;
    for (int i = n - 1; i >= 0 && !found; i--) {
        if (ids[i].end_offset < min_end || ids[i].end_offset > max_end)
            continue;
        if (ids[i].end_offset == 0 && ids[i].epoch == 0)
            continue; /* format's bootstrap checkpoint (broker_boot.h), not an image */
        if (ms_try(dir, ids[i], img, info)) {
            *id = ids[i];
            found = 1;
        }
    }
    free(ids);
    return found;
}

int meta_snap_reader_open(meta_snap_reader_t *rd, const char *dir, meta_snap_id_t id)
{
    char path[4096];
    struct stat st;

    ms_path(path, sizeof(path), dir, id, "");
    rd->fd = fault_open(path, O_RDONLY | O_CLOEXEC, 0);
    if (rd->fd < 0)
        return -1;
    if (fstat(rd->fd, &st) < 0) {
        int e = errno;
        close(rd->fd);
        rd->fd = -1;
        errno = e;
        return -1;
    }
    rd->size = st.st_size;
    rd->id = id;
    return 0;
}

ssize_t meta_snap_reader_read(const meta_snap_reader_t *rd, int64_t pos, uint8_t *p, size_t n)
{
    if (pos < 0 || pos > rd->size) {
        errno = EINVAL;
        return -1;
    }
    if ((int64_t)n > rd->size - pos)
        n = (size_t)(rd->size - pos);
    return fault_pread(rd->fd, p, n, (off_t)pos);
}

void meta_snap_reader_close(meta_snap_reader_t *rd)
{
    if (rd->fd >= 0)
        close(rd->fd);
    rd->fd = -1;
}
