/* The partition log on a really full disk: a small tmpfs mounted by the
 * test, filled by a file of the test's until the kernel says ENOSPC. No
 * fault injection: the file system refuses on its own, in every place it
 * can (a write, a page of a mapped index, a new file). Needs root (to
 * mount); elsewhere each test says it skipped and passes.
 *
 * The crash this pins: the index files of an active segment are sparse and
 * memory-mapped, and the first store into a page the full file system
 * could not back killed the process with SIGBUS (the batch itself fitted
 * in the last page of the .log). Each test then checks what a full disk
 * must leave: every batch acknowledged reads back byte for byte, a batch
 * refused is answered KAFKA_STORAGE_ERROR and leaves no trace, the log
 * stays online, and once the filler is deleted it takes appends again and
 * closes cleanly; a reopen finds exactly the acknowledged batches. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_log.h"
#include "util/buf.h"
#include "util/logging.h"

#define NOW 1700000000000LL
#define MAX_BATCHES 4096
#define FS_SIZE "size=512k"

static char mnt[256];
static int mounted;
static int seq;

typedef struct acked_s {
    int64_t base;
    uint8_t *bytes; /* as stored (base offset set in place) */
    size_t len;
} acked_t;

typedef struct fworld_s {
    char dir[320];
    char filler[320];
    log_config_t cfg;
    log_t *log;
    acked_t a[MAX_BATCHES];
    int n;
} fworld_t;

static int skipped(const char *test)
{
    if (mounted)
        return 0;
    printf("SKIP: %s: no tmpfs of our own (needs root to mount)\n", test);
    return 1;
}

/* Value of record k: "<id>-<k>" padded with dots to vlen bytes. */
static void fv_value(buf_t *out, int k, const void *arg)
{
    const int *p = arg;
    char val[8192];
    int n = snprintf(val, sizeof(val), "%d-%d", p[0], k);

    memset(val + n, '.', (size_t)p[1] - (size_t)n);
    buf_put(out, val, (size_t)p[1]);
}

/* A batch of one record of vlen bytes, unique by id. Caller frees. */
static uint8_t *fbatch(int id, int vlen, size_t *len)
{
    int arg[2] = {id, vlen};
    unit_batch_t b = {1, NULL, NOW - 100000 + id, 1, -1, -1, -1, fv_value, arg};
    return unit_batch(&b, len);
}

static void fw_open(fworld_t *w, int clean)
{
    log_open_args_t a = {"t", 0, 0, -1, -1, clean, NOW};

    w->log = log_open(w->dir, &w->cfg, &a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->log);
}

static void fw_init(fworld_t *w)
{
    memset(w, 0, sizeof(*w));
    snprintf(w->dir, sizeof(w->dir), "%s/t-%d", mnt, seq);
    snprintf(w->filler, sizeof(w->filler), "%s/filler-%d", mnt, seq++);
    log_config_defaults(&w->cfg);
    w->cfg.index_interval_bytes = 0; /* an index entry for every batch */
    fw_open(w, 1);
}

static void fw_done(fworld_t *w)
{
    if (w->log)
        log_close(w->log);
    for (int i = 0; i < w->n; i++)
        free(w->a[i].bytes);
    unit_rm_rf(w->dir);
    unlink(w->filler);
}

/* Writes the filler until the file system has no page left. */
static void fill(fworld_t *w)
{
    static const char page[4096];
    int fd = open(w->filler, O_WRONLY | O_CREAT | O_APPEND, 0644);
    ssize_t r;

    CU_ASSERT_FATAL(fd >= 0);
    while ((r = write(fd, page, sizeof(page))) > 0)
        ;
    CU_ASSERT_EQUAL(errno, ENOSPC);
    while ((r = write(fd, page, 1)) > 0)
        ;
    close(fd);
}

/* Appends a batch (log_append); 0 and recorded, or the error. */
static int16_t fw_append(fworld_t *w, int vlen)
{
    size_t len;
    uint8_t *b = fbatch(w->n, vlen, &len);
    log_append_result_t res;
    int16_t err = log_append(w->log, b, len, 0, NOW, &res);

    if (err || w->n == MAX_BATCHES) {
        free(b);
        return err ? err : -1;
    }
    w->a[w->n++] = (acked_t){res.base_offset, b, len};
    return 0;
}

/* Every acknowledged batch reads back whole from its offset, the log ends
 * after the last one, and nothing past it is in the .log. */
static void fw_check(fworld_t *w)
{
    for (int i = 0; i < w->n; i++) {
        log_read_result_t rr;
        uint8_t *p;
        CU_ASSERT_EQUAL_FATAL(log_read(w->log, w->a[i].base, 1, 1, INT64_MAX, &rr), 0);
        CU_ASSERT_EQUAL(rr.first_offset, w->a[i].base);
        CU_ASSERT_EQUAL_FATAL(rr.len, (int32_t)w->a[i].len);
        p = malloc(w->a[i].len);
        CU_ASSERT_EQUAL(pread(rr.fd, p, w->a[i].len, rr.file_pos), (ssize_t)w->a[i].len);
        CU_ASSERT(memcmp(p, w->a[i].bytes, w->a[i].len) == 0);
        free(p);
        close(rr.fd);
    }
    CU_ASSERT_EQUAL(log_end_offset(w->log), w->n ? w->a[w->n - 1].base + 1 : 0);
}

static int64_t blocks_of(const fworld_t *w, const char *suffix)
{
    char path[400];
    struct stat st;

    snprintf(path, sizeof(path), "%s/00000000000000000000%s", w->dir, suffix);
    return stat(path, &st) < 0 ? -1 : (int64_t)st.st_blocks * 512;
}

/* Frees the disk; the log takes appends again, closes cleanly and a
 * reopen finds exactly the acknowledged batches. */
static void fw_recover(fworld_t *w)
{
    int before = w->n;

    CU_ASSERT_EQUAL(unlink(w->filler), 0);
    CU_ASSERT_EQUAL(fw_append(w, 100), 0);
    CU_ASSERT_EQUAL(w->n, before + 1);
    fw_check(w);
    CU_ASSERT_EQUAL(log_close(w->log), 0);
    fw_open(w, 1);
    fw_check(w);
    CU_ASSERT_EQUAL(log_close(w->log), 0);
    fw_open(w, 0); /* as after a crash: recovery rebuilds the indexes */
    fw_check(w);
}

/* Small batches on the loop's path: after the disk fills, the next ones
 * still fit in the .log's last page and their index entries have no page
 * of their own: they are skipped instead of killing the process. */
static void test_full_append(void)
{
    fworld_t w;
    int16_t err = 0;
    int after;

    if (skipped("full disk, appends"))
        return;
    fw_init(&w);
    CU_ASSERT_EQUAL(fw_append(&w, 100), 0); /* the .log has a page, the indexes none */
    CU_ASSERT_EQUAL(blocks_of(&w, ".index"), 0);
    fill(&w);
    after = w.n;
    while (w.n < MAX_BATCHES && (err = fw_append(&w, 100)) == 0)
        ;
    CU_ASSERT_EQUAL(err, 56);
    CU_ASSERT(w.n > after + 1); /* the .log's last page took more batches */
    CU_ASSERT_FALSE(log_offline(w.log));
    fw_check(&w);
    /* a roll on the full disk: done, or refused and undone */
    err = log_roll(w.log, NOW);
    CU_ASSERT(err == 0 || err == 56);
    CU_ASSERT_FALSE(log_offline(w.log));
    CU_ASSERT_EQUAL(fw_append(&w, 100), 56);
    fw_check(&w);
    fw_recover(&w);
    fw_done(&w);
}

/* Disk space for index entries is reserved a page at a time, not for the
 * whole pre-allocated file (segment.index.bytes, 10 MB here): a quiet
 * partition costs a page per index. */
static void test_index_reserve_small(void)
{
    fworld_t w;

    if (skipped("index space reserved by the page"))
        return;
    fw_init(&w);
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(fw_append(&w, 100), 0);
    CU_ASSERT_EQUAL(blocks_of(&w, ".index"), 4096);
    CU_ASSERT_EQUAL(blocks_of(&w, ".timeindex"), 4096);
    for (int i = 0; i < 600; i++) /* past a page of offset entries (512) */
        CU_ASSERT_EQUAL(fw_append(&w, 100), 0);
    CU_ASSERT_EQUAL(blocks_of(&w, ".index"), 8192);
    fw_check(&w);
    fw_done(&w);
}

/* Placed batches written by another thread's step (log_write_run) on the
 * full disk: the first failed write fails those placed after it, and the
 * run is undone once the last is committed. */
static void test_full_placed(void)
{
    enum { RUN = 6 };
    fworld_t w;
    uint8_t *b[RUN];
    log_write_t wr[RUN];
    log_append_result_t res;
    int failed = 0;

    if (skipped("full disk, placed writes"))
        return;
    fw_init(&w);
    CU_ASSERT_EQUAL(fw_append(&w, 100), 0);
    fill(&w);
    for (int i = 0; i < RUN; i++) {
        size_t len;
        b[i] = fbatch(w.n + i, 1500, &len);
        CU_ASSERT_EQUAL_FATAL(log_append_place(w.log, b[i], len, 0, NOW, &res, &wr[i]), 0);
    }
    for (int i = 0; i < RUN; i++)
        log_write_run(&wr[i]);
    for (int i = 0; i < RUN; i++) {
        int16_t err = log_append_commit(w.log, &wr[i]);
        CU_ASSERT(err == 0 || err == 56);
        if (err == 0) {
            CU_ASSERT_EQUAL(failed, 0); /* the successes are a prefix */
            w.a[w.n++] = (acked_t){wr[i].h.base_offset, b[i], wr[i].len};
        } else {
            free(b[i]);
            failed++;
        }
    }
    CU_ASSERT(failed > 0);
    CU_ASSERT_EQUAL(log_pending_writes(w.log), 0);
    CU_ASSERT_FALSE(log_offline(w.log));
    fw_check(&w);
    fw_recover(&w);
    fw_done(&w);
}

/* Mounts the tmpfs and detaches it at once, keeping a descriptor of its
 * root: the files are reached through /proc/self/fd/N, and the mount goes
 * away with the process however it ends (a crash included). */
static void mount_tmpfs(void)
{
    char tmp[64] = "/tmp/strand-test-log-full-XXXXXX";
    int fd;

    if (!mkdtemp(tmp))
        return;
    if (geteuid() == 0 && mount("tmpfs", tmp, "tmpfs", 0, FS_SIZE) == 0) {
        fd = open(tmp, O_RDONLY | O_DIRECTORY);
        umount2(tmp, MNT_DETACH);
        if (fd >= 0) {
            snprintf(mnt, sizeof(mnt), "/proc/self/fd/%d", fd);
            mounted = 1;
        }
    } else {
        printf("cannot mount a tmpfs on %s: %s\n", tmp, strerror(errno));
    }
    rmdir(tmp);
}

int main(void)
{
    mount_tmpfs();
    lg_set_level(LG_ERROR + 1);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("log on a full disk", NULL, NULL);
    CU_add_test(s, "appends on a full disk", test_full_append);
    CU_add_test(s, "index space reserved by the page", test_index_reserve_small);
    CU_add_test(s, "placed writes on a full disk", test_full_placed);
    return unit_run();
}
