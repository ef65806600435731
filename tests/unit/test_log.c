/* The partition log: exact bytes on disk (segments, indexes, snapshots,
 * epoch checkpoint), offsets, reads, rolls, reopen, crash recovery,
 * retention, timestamps and idempotent-producer state. Batches are
 * encoded here by hand so the tests do not depend on the batch encoder. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_log.h"
#include "util/buf.h"
#include "util/crc32c.h"
#include "util/logging.h"

#define NOW 1700000000000LL

/* ---- helpers ---- */

typedef struct tb_s {
    int n;            /* records */
    int64_t ts0;      /* first record's timestamp */
    int64_t dts;      /* timestamp step between records */
    int64_t pid;      /* -1 none */
    int16_t pepoch;
    int32_t seq;
    size_t vsize;     /* value bytes per record */
    const int64_t *ts; /* explicit timestamps, or NULL */
} tb_t;

static tb_t tb(int n, int64_t ts0)
{
    tb_t t = {n, ts0, 1, -1, -1, -1, 10, NULL};
    return t;
}

/* Value bytes of record i: vsize letters from 'a' + i on. */
static void tb_value(buf_t *out, int i, const void *arg)
{
    const tb_t *t = arg;
    for (size_t k = 0; k < t->vsize; k++)
        buf_put_i8(out, (int8_t)('a' + (i + (int)k) % 26));
}

/* An uncompressed v2 batch, base offset 0, leader epoch -1. Caller frees. */
static uint8_t *mkbatch(const tb_t *t, size_t *len)
{
    unit_batch_t b = {t->n, t->ts, t->ts0, t->dts, t->pid, t->pepoch, t->seq, tb_value, t};
    return unit_batch(&b, len);
}

static char tmpdir[256];

/* A fresh partition directory for each test. */
static const char *fresh_dir(void)
{
    static int n;
    static char dir[300];
    snprintf(dir, sizeof(dir), "%s/t-%d", tmpdir, n++);
    return dir;
}

static log_open_args_t args_clean(int clean)
{
    log_open_args_t a = {"t", 0, 0, -1, -1, clean, NOW};
    return a;
}

static log_config_t small_cfg(void)
{
    log_config_t c;
    log_config_defaults(&c);
    c.segment_index_bytes = 4096;
    return c;
}

static log_t *open_log(const char *dir, const log_config_t *cfg, int clean)
{
    log_open_args_t a = args_clean(clean);
    return log_open(dir, cfg, &a);
}

/* Appends a batch; returns its base offset (asserting success). */
static int64_t append(log_t *log, const tb_t *t, int32_t epoch)
{
    size_t len;
    uint8_t *b = mkbatch(t, &len);
    log_append_result_t res;
    int16_t err = log_append(log, b, len, epoch, NOW, &res);
    free(b);
    CU_ASSERT_EQUAL(err, 0);
    return err ? -1 : res.base_offset;
}

static char *path_in(const char *dir, const char *name)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/%s", dir, name);
    return p;
}

static uint8_t *read_all(const char *path, size_t *len)
{
    int fd = open(path, O_RDONLY);
    struct stat st;
    uint8_t *p;
    if (fd < 0)
        return NULL;
    fstat(fd, &st);
    p = malloc((size_t)st.st_size + 1);
    *len = (size_t)pread(fd, p, (size_t)st.st_size, 0);
    close(fd);
    return p;
}

static int64_t file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) < 0 ? -1 : st.st_size;
}

static uint8_t *read_region(const log_read_result_t *r)
{
    uint8_t *p = malloc((size_t)r->len + 1);
    ssize_t n = pread(r->fd, p, (size_t)r->len, r->file_pos);
    CU_ASSERT_EQUAL((ssize_t)r->len, n);
    return p;
}

static int64_t get_be64(const uint8_t *p)
{
    int64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return v;
}

static int32_t get_be32(const uint8_t *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}

/* ---- append and read ---- */

static void test_append_read_exact(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    uint8_t *b[3], *region;
    size_t len[3];
    tb_t t[3] = {tb(1, 1000), tb(5, 2000), tb(2, 3000)};
    log_append_result_t res;
    log_read_result_t rr;

    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log_end_offset(log), 0);
    for (int i = 0; i < 3; i++) {
        b[i] = mkbatch(&t[i], &len[i]);
        CU_ASSERT_EQUAL(log_append(log, b[i], len[i], 7, NOW, &res), 0);
        CU_ASSERT_EQUAL(res.duplicate, 0);
        CU_ASSERT_EQUAL(res.log_append_time, -1);
    }
    /* offsets assigned in place: 0, 1-5, 6-7 */
    CU_ASSERT_EQUAL(get_be64(b[0]), 0);
    CU_ASSERT_EQUAL(get_be64(b[1]), 1);
    CU_ASSERT_EQUAL(get_be64(b[2]), 6);
    CU_ASSERT_EQUAL(get_be32(b[2] + 12), 7);
    CU_ASSERT(log_batch_crc_ok(b[2], len[2]));
    CU_ASSERT_EQUAL(res.base_offset, 6);
    CU_ASSERT_EQUAL(res.last_offset, 7);
    CU_ASSERT_EQUAL(log_end_offset(log), 8);

    /* the .log file is the three batches back to back */
    {
        size_t flen;
        uint8_t *f = read_all(path_in(dir, "00000000000000000000.log"), &flen);
        CU_ASSERT_EQUAL_FATAL(flen, len[0] + len[1] + len[2]);
        CU_ASSERT(memcmp(f, b[0], len[0]) == 0);
        CU_ASSERT(memcmp(f + len[0], b[1], len[1]) == 0);
        CU_ASSERT(memcmp(f + len[0] + len[1], b[2], len[2]) == 0);
        free(f);
    }

    /* read from offset 3 (inside batch 2): batches 2 and 3 */
    CU_ASSERT_EQUAL(log_read(log, 3, 1 << 20, 1, INT64_MAX, &rr), 0);
    CU_ASSERT_EQUAL(rr.file_pos, (int64_t)len[0]);
    CU_ASSERT_EQUAL(rr.len, (int32_t)(len[1] + len[2]));
    CU_ASSERT_EQUAL(rr.first_offset, 1);
    region = read_region(&rr);
    CU_ASSERT(memcmp(region, b[1], len[1]) == 0);
    free(region);
    close(rr.fd);

    /* max_offset (high watermark) 6: only batch 2 */
    CU_ASSERT_EQUAL(log_read(log, 1, 1 << 20, 1, 6, &rr), 0);
    CU_ASSERT_EQUAL(rr.len, (int32_t)len[1]);
    close(rr.fd);
    /* high watermark inside batch 2: nothing */
    CU_ASSERT_EQUAL(log_read(log, 1, 1 << 20, 1, 5, &rr), 0);
    CU_ASSERT_EQUAL(rr.len, 0);
    CU_ASSERT_EQUAL(rr.fd, -1);

    /* max_bytes smaller than the first batch: min_one decides */
    CU_ASSERT_EQUAL(log_read(log, 0, 10, 1, INT64_MAX, &rr), 0);
    CU_ASSERT_EQUAL(rr.len, (int32_t)len[0]);
    close(rr.fd);
    CU_ASSERT_EQUAL(log_read(log, 0, 10, 0, INT64_MAX, &rr), 0);
    CU_ASSERT_EQUAL(rr.len, 0);
    /* max_bytes fits two batches exactly */
    CU_ASSERT_EQUAL(log_read(log, 0, (int32_t)(len[0] + len[1]), 0, INT64_MAX, &rr), 0);
    CU_ASSERT_EQUAL(rr.len, (int32_t)(len[0] + len[1]));
    close(rr.fd);

    /* at the LEO: empty; past it: out of range */
    CU_ASSERT_EQUAL(log_read(log, 8, 1 << 20, 1, INT64_MAX, &rr), 0);
    CU_ASSERT_EQUAL(rr.len, 0);
    CU_ASSERT_EQUAL(log_read(log, 9, 1 << 20, 1, INT64_MAX, &rr), 1);
    CU_ASSERT_EQUAL(log_read(log, -1, 1 << 20, 1, INT64_MAX, &rr), 1);

    for (int i = 0; i < 3; i++)
        free(b[i]);
    CU_ASSERT_EQUAL(log_close(log), 0);
}

static void test_bad_batches(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    tb_t t = tb(2, 1000);
    size_t len;
    uint8_t *b = mkbatch(&t, &len);
    log_append_result_t res;

    CU_ASSERT_EQUAL(log_append(log, b, len - 1, 0, NOW, &res), 2);
    CU_ASSERT_EQUAL(log_append(log, b, 30, 0, NOW, &res), 2);
    b[16] = 1; /* magic */
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, NOW, &res), 2);
    b[16] = 2;
    cfg.segment_bytes = (int64_t)len - 1;
    log_set_config(log, &cfg);
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, NOW, &res), 18);
    CU_ASSERT_EQUAL(log_end_offset(log), 0);
    free(b);
    log_close(log);
}

static void test_log_append_time(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log;
    tb_t t = tb(3, 1000);
    size_t len;
    uint8_t *b = mkbatch(&t, &len);
    log_append_result_t res;
    log_ts_offset_t to;

    cfg.timestamp_type = 1;
    log = open_log(dir, &cfg, 0);
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, NOW, &res), 0);
    CU_ASSERT_EQUAL(res.log_append_time, NOW);
    CU_ASSERT_EQUAL(get_be64(b + 35), NOW);
    CU_ASSERT(b[22] & 0x08);
    CU_ASSERT(log_batch_crc_ok(b, len));
    CU_ASSERT_EQUAL(log_max_timestamp(log, &to), 0);
    CU_ASSERT_EQUAL(to.timestamp, NOW);
    CU_ASSERT_EQUAL(to.offset, 0);
    free(b);
    log_close(log);
}

/* ---- indexes ---- */

/* index.interval.bytes = 0: every batch but a segment's first gets an
 * offset index entry (its last offset, its position). Every offset must
 * be found in the batch that holds it. */
static void test_index_every_offset(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log;
    int64_t base[60], pos[60], blen[60], p = 0;
    int nb = 60;

    cfg.index_interval_bytes = 0;
    log = open_log(dir, &cfg, 0);
    for (int i = 0; i < nb; i++) {
        tb_t t = tb(1 + i % 3, 1000 + 10 * i);
        size_t len;
        uint8_t *b = mkbatch(&t, &len);
        log_append_result_t res;
        CU_ASSERT_EQUAL(log_append(log, b, len, 0, NOW, &res), 0);
        base[i] = res.base_offset;
        pos[i] = p;
        blen[i] = (int64_t)len;
        p += (int64_t)len;
        free(b);
    }
    for (int i = 0; i < nb; i++) {
        int64_t last = i + 1 < nb ? base[i + 1] : log_end_offset(log);
        for (int64_t o = base[i]; o < last; o++) {
            log_read_result_t rr;
            CU_ASSERT_EQUAL(log_read(log, o, 1, 1, INT64_MAX, &rr), 0);
            CU_ASSERT_EQUAL(rr.first_offset, base[i]);
            CU_ASSERT_EQUAL(rr.file_pos, pos[i]);
            CU_ASSERT_EQUAL(rr.len, blen[i]);
            close(rr.fd);
        }
    }
    CU_ASSERT_EQUAL(log_close(log), 0);
    /* trimmed on close: 59 entries of 8 bytes, exact contents */
    {
        size_t ilen;
        uint8_t *ix = read_all(path_in(dir, "00000000000000000000.index"), &ilen);
        CU_ASSERT_EQUAL_FATAL(ilen, (size_t)(nb - 1) * 8);
        for (int i = 1; i < nb; i++) {
            int64_t last = (i + 1 < nb ? base[i + 1] : base[i] + 1 + i % 3) - 1;
            CU_ASSERT_EQUAL(get_be32(ix + (i - 1) * 8), (int32_t)last);
            CU_ASSERT_EQUAL(get_be32(ix + (i - 1) * 8 + 4), (int32_t)pos[i]);
        }
        free(ix);
    }
    /* time index: the batches' max timestamps strictly grow, so one entry
     * per offset entry, holding the batch's max timestamp and last offset */
    {
        size_t tlen;
        uint8_t *tx = read_all(path_in(dir, "00000000000000000000.timeindex"), &tlen);
        CU_ASSERT_EQUAL_FATAL(tlen, (size_t)(nb - 1) * 12);
        for (int i = 1; i < nb; i++) {
            int n = 1 + i % 3;
            CU_ASSERT_EQUAL(get_be64(tx + (i - 1) * 12), 1000 + 10 * i + n - 1);
            CU_ASSERT_EQUAL(get_be32(tx + (i - 1) * 12 + 8), (int32_t)(base[i] + n - 1));
        }
        free(tx);
    }
    /* reopen cleanly and look everything up again */
    log = open_log(dir, &cfg, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log_end_offset(log), p ? base[nb - 1] + 1 + (nb - 1) % 3 : 0);
    for (int i = 0; i < nb; i++) {
        log_read_result_t rr;
        CU_ASSERT_EQUAL(log_read(log, base[i], 1, 1, INT64_MAX, &rr), 0);
        CU_ASSERT_EQUAL(rr.file_pos, pos[i]);
        close(rr.fd);
    }
    log_close(log);
}

/* Kafka's rule: an entry when more than index.interval.bytes were
 * appended since the last one. */
static void test_index_interval(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log;
    size_t len;
    tb_t t = tb(1, 1000);
    uint8_t *b;

    t.vsize = 100;
    b = mkbatch(&t, &len); /* 61 + record bytes */
    free(b);
    cfg.index_interval_bytes = (int32_t)(2 * len); /* an entry every 3rd batch */
    log = open_log(dir, &cfg, 0);
    for (int i = 0; i < 10; i++)
        append(log, &t, 0);
    log_close(log);
    {
        size_t ilen;
        uint8_t *ix = read_all(path_in(dir, "00000000000000000000.index"), &ilen);
        /* entries for batches 3, 6, 9 (0-based), i.e. offsets 3, 6, 9 */
        CU_ASSERT_EQUAL_FATAL(ilen, 24);
        CU_ASSERT_EQUAL(get_be32(ix), 3);
        CU_ASSERT_EQUAL(get_be32(ix + 4), (int32_t)(3 * len));
        CU_ASSERT_EQUAL(get_be32(ix + 8), 6);
        CU_ASSERT_EQUAL(get_be32(ix + 16), 9);
        CU_ASSERT_EQUAL(get_be32(ix + 20), (int32_t)(9 * len));
        free(ix);
    }
}

/* ---- roll ---- */

static void test_roll_by_size(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log;
    size_t len;
    tb_t t = tb(2, 1000);
    uint8_t *b = mkbatch(&t, &len);

    free(b);
    cfg.segment_bytes = (int64_t)(3 * len); /* 3 batches per segment */
    log = open_log(dir, &cfg, 0);
    for (int i = 0; i < 7; i++)
        CU_ASSERT_EQUAL(append(log, &t, 0), 2 * i);
    CU_ASSERT_EQUAL(log_segment_count(log), 3);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000000.log")), (int64_t)(3 * len));
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000006.log")), (int64_t)(3 * len));
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000012.log")), (int64_t)len);
    /* the rolled segments' indexes are trimmed (no entries: 0 bytes), the
     * active one is pre-allocated */
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000006.index")), 0);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000006.timeindex")), 12);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000012.index")), 4096);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000012.timeindex")), 4092);
    /* a snapshot rendered at each roll, for the caller to write off the
     * loop; the last one waits to be taken */
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000012.snapshot")), -1);
    {
        log_snap_t snap, none;
        CU_ASSERT_EQUAL_FATAL(log_snapshot_take(log, &snap), 1);
        CU_ASSERT_EQUAL(snap.offset, 12);
        CU_ASSERT_EQUAL(log_snapshot_take(log, &none), 0); /* taken: none due now */
        log_snap_write(&snap);
        log_snapshot_done(log, &snap);
    }
    CU_ASSERT(file_size(path_in(dir, "00000000000000000012.snapshot")) == 10);
    /* reads cross segment boundaries one segment at a time */
    {
        log_read_result_t rr;
        CU_ASSERT_EQUAL(log_read(log, 4, 1 << 20, 1, INT64_MAX, &rr), 0);
        CU_ASSERT_EQUAL(rr.first_offset, 4);
        CU_ASSERT_EQUAL(rr.len, (int32_t)len);
        close(rr.fd);
        CU_ASSERT_EQUAL(log_read(log, 6, 1 << 20, 1, INT64_MAX, &rr), 0);
        CU_ASSERT_EQUAL(rr.len, (int32_t)(3 * len));
        close(rr.fd);
    }
    log_close(log);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000012.index")), 0);
}

static void test_roll_by_time(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log;
    tb_t t = tb(1, 10000);

    cfg.segment_ms = 1000;
    log = open_log(dir, &cfg, 0);
    append(log, &t, 0);
    t.ts0 = 10500;
    append(log, &t, 0);
    CU_ASSERT_EQUAL(log_segment_count(log), 1);
    t.ts0 = 11001; /* 1001 ms after the segment's first batch */
    append(log, &t, 0);
    CU_ASSERT_EQUAL(log_segment_count(log), 2);
    CU_ASSERT(file_size(path_in(dir, "00000000000000000002.log")) > 0);
    /* forced roll; rolling an empty segment does nothing */
    CU_ASSERT_EQUAL(log_roll(log, NOW), 0);
    CU_ASSERT_EQUAL(log_roll(log, NOW), 0);
    CU_ASSERT_EQUAL(log_segment_count(log), 3);
    log_close(log);
}

/* ---- reopen and recovery ---- */

static void test_reopen_clean(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    size_t len0, len1;
    uint8_t *f0, *f1;

    for (int i = 0; i < 20; i++) {
        tb_t t = tb(3, 1000 + i);
        append(log, &t, 0);
    }
    log_close(log);
    f0 = read_all(path_in(dir, "00000000000000000000.log"), &len0);
    log = open_log(dir, &cfg, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log_end_offset(log), 60);
    CU_ASSERT_EQUAL(log_recovery_point(log), 60);
    {
        tb_t t = tb(1, 5000);
        CU_ASSERT_EQUAL(append(log, &t, 0), 60);
    }
    log_close(log);
    f1 = read_all(path_in(dir, "00000000000000000000.log"), &len1);
    CU_ASSERT(len1 > len0 && memcmp(f0, f1, len0) == 0);
    free(f0);
    free(f1);
}

/* Kill -9 mid-write leaves half a batch; a flipped bit leaves a bad CRC.
 * Either way the log comes back with exactly the good batches and the
 * same indexes as if the bad ones had never been written. */
static void crash_case(int flip)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log;
    size_t ilen_good, ilen, llen;
    uint8_t *ix_good, *ix;
    int64_t size_good;
    char logp[512], idxp[512];

    cfg.index_interval_bytes = 100;
    log = open_log(dir, &cfg, 0);
    for (int i = 0; i < 30; i++) {
        tb_t t = tb(2, 1000 + i);
        append(log, &t, 0);
    }
    log_close(log);
    snprintf(logp, sizeof(logp), "%s", path_in(dir, "00000000000000000000.log"));
    snprintf(idxp, sizeof(idxp), "%s", path_in(dir, "00000000000000000000.index"));
    ix_good = read_all(idxp, &ilen_good);
    size_good = file_size(logp);

    /* two more batches, then damage the last one */
    log = open_log(dir, &cfg, 1);
    {
        tb_t t = tb(2, 2000);
        append(log, &t, 0);
        append(log, &t, 0);
    }
    log_close(log);
    llen = (size_t)file_size(logp);
    {
        size_t second_len = (llen - (size_t)size_good) / 2;
        if (flip) {
            int fd = open(logp, O_RDWR);
            uint8_t c;
            pread(fd, &c, 1, (off_t)(llen - 3));
            c ^= 0x10;
            pwrite(fd, &c, 1, (off_t)(llen - 3));
            close(fd);
        } else {
            truncate(logp, (off_t)(llen - second_len / 2));
        }
        /* an unclean shutdown leaves the index at full size */
        truncate(idxp, 4096);
        log = open_log(dir, &cfg, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        CU_ASSERT_EQUAL(log_end_offset(log), 62);
        CU_ASSERT_EQUAL(file_size(logp), size_good + (int64_t)second_len);
    }
    /* indexes rebuilt as they were; then keep appending */
    {
        tb_t t = tb(2, 3000);
        CU_ASSERT_EQUAL(append(log, &t, 0), 62);
    }
    log_close(log);
    {
        int64_t lsize = file_size(logp);
        CU_ASSERT_EQUAL(lsize, (int64_t)llen);
    }
    ix = read_all(idxp, &ilen);
    CU_ASSERT(ilen >= ilen_good);
    CU_ASSERT(memcmp(ix, ix_good, ilen_good) == 0);
    free(ix);
    free(ix_good);
    /* a clean reopen reads all 64 offsets */
    log = open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(log_end_offset(log), 64);
    log_close(log);
}

static void test_recover_torn_tail(void)
{
    crash_case(0);
}

static void test_recover_bad_crc(void)
{
    crash_case(1);
}

/* Segments after the one cut by recovery are dropped. */
static void test_recover_drops_later_segments(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log;
    size_t len;
    tb_t t = tb(1, 1000);
    uint8_t *b = mkbatch(&t, &len);

    free(b);
    cfg.segment_bytes = (int64_t)(2 * len);
    log = open_log(dir, &cfg, 0);
    for (int i = 0; i < 6; i++)
        append(log, &t, 0);
    CU_ASSERT_EQUAL(log_segment_count(log), 3);
    log_close(log);
    /* corrupt the second batch of segment 2 */
    {
        int fd = open(path_in(dir, "00000000000000000002.log"), O_RDWR);
        uint8_t c = 0xff;
        pwrite(fd, &c, 1, (off_t)(len + 30));
        close(fd);
    }
    {
        log_open_args_t a = args_clean(0);
        a.recovery_point = 2;
        log = log_open(dir, &cfg, &a);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log_end_offset(log), 3);
    CU_ASSERT_EQUAL(log_segment_count(log), 2);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000004.log")), -1);
    CU_ASSERT_EQUAL(append(log, &t, 0), 3);
    log_close(log);
}

/* Corrupt indexes under a clean shutdown marker are rebuilt too. */
static void test_bad_index_rebuilt(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log;
    char idxp[512];
    size_t l0, l1;
    uint8_t *i0, *i1;

    cfg.index_interval_bytes = 0;
    log = open_log(dir, &cfg, 0);
    for (int i = 0; i < 10; i++) {
        tb_t t = tb(1, 1000 + i);
        append(log, &t, 0);
    }
    log_roll(log, NOW);
    log_close(log);
    snprintf(idxp, sizeof(idxp), "%s", path_in(dir, "00000000000000000000.index"));
    i0 = read_all(idxp, &l0);
    CU_ASSERT_EQUAL(l0, 72);
    /* garbage past the entries, and a size that is not whole entries */
    truncate(idxp, 83);
    log = open_log(dir, &cfg, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    log_close(log);
    i1 = read_all(idxp, &l1);
    CU_ASSERT_EQUAL(l1, 72);
    CU_ASSERT(memcmp(i0, i1, 72) == 0);
    free(i1);
    /* missing index */
    unlink(idxp);
    log = open_log(dir, &cfg, 1);
    log_close(log);
    i1 = read_all(idxp, &l1);
    CU_ASSERT_EQUAL_FATAL(l1, 72);
    CU_ASSERT(memcmp(i0, i1, 72) == 0);
    free(i1);
    free(i0);
}

/* ---- retention and deletion ---- */

static log_t *three_segments(const char *dir, log_config_t *cfg, size_t *blen)
{
    log_t *log;
    size_t len;
    tb_t t = tb(1, 1000);
    uint8_t *b = mkbatch(&t, &len);

    free(b);
    cfg->segment_bytes = (int64_t)(2 * len);
    log = open_log(dir, cfg, 0);
    /* segments [0,2) ts 1000-1001, [2,4) ts 2000-2001, [4,5) ts 3000 */
    for (int i = 0; i < 5; i++) {
        t.ts0 = 1000 * (1 + i / 2) + i % 2;
        append(log, &t, 0);
    }
    *blen = len;
    return log;
}

static void test_retention_time(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    size_t len;
    log_t *log = three_segments(dir, &cfg, &len);

    CU_ASSERT_EQUAL(log_segment_count(log), 3);
    cfg.retention_ms = 1000;
    log_set_config(log, &cfg);
    /* nothing is deleted above the high watermark */
    CU_ASSERT_EQUAL(log_retention(log, 100000), 0);
    log_set_high_watermark(log, log_end_offset(log));
    CU_ASSERT_EQUAL(log_retention(log, 2500), 1); /* 2500-1001 > 1000 */
    CU_ASSERT_EQUAL(log_start_offset(log), 2);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000000.log")), -1);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000000.index")), -1);
    /* the active segment stays however old */
    CU_ASSERT_EQUAL(log_retention(log, 100000), 1);
    CU_ASSERT_EQUAL(log_segment_count(log), 1);
    CU_ASSERT_EQUAL(log_start_offset(log), 4);
    {
        log_read_result_t rr;
        CU_ASSERT_EQUAL(log_read(log, 3, 100, 1, INT64_MAX, &rr), 1);
        CU_ASSERT_EQUAL(log_read(log, 4, 100, 1, INT64_MAX, &rr), 0);
        CU_ASSERT_EQUAL(rr.first_offset, 4);
        close(rr.fd);
    }
    log_close(log);
    /* the log start offset survives via the first segment's base */
    log = open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(log_start_offset(log), 4);
    log_close(log);
}

static void test_retention_size(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    size_t len;
    log_t *log = three_segments(dir, &cfg, &len);

    log_set_high_watermark(log, log_end_offset(log));
    cfg.retention_ms = -1;
    cfg.retention_bytes = (int64_t)(3 * len); /* 5 batches: 2 too many */
    log_set_config(log, &cfg);
    CU_ASSERT_EQUAL(log_retention(log, NOW), 1);
    CU_ASSERT_EQUAL(log_start_offset(log), 2);
    CU_ASSERT_EQUAL(log_size_bytes(log), (int64_t)(3 * len));
    CU_ASSERT_EQUAL(log_retention(log, NOW), 0);
    log_close(log);
}

static void test_delete_records(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    size_t len;
    log_t *log = three_segments(dir, &cfg, &len);
    log_read_result_t rr;

    CU_ASSERT_EQUAL(log_delete_records(log, 3), 1); /* above the HWM (0) */
    log_set_high_watermark(log, 5);
    CU_ASSERT_EQUAL(log_delete_records(log, 6), 1);
    CU_ASSERT_EQUAL(log_delete_records(log, 3), 0);
    CU_ASSERT_EQUAL(log_start_offset(log), 3);
    CU_ASSERT_EQUAL(log_segment_count(log), 2); /* [0,2) went */
    CU_ASSERT_EQUAL(log_read(log, 2, 100, 1, INT64_MAX, &rr), 1);
    CU_ASSERT_EQUAL(log_read(log, 3, 100, 1, INT64_MAX, &rr), 0);
    CU_ASSERT_EQUAL(rr.first_offset, 3);
    close(rr.fd);
    CU_ASSERT_EQUAL(log_delete_records(log, 2), 0); /* no going back */
    CU_ASSERT_EQUAL(log_start_offset(log), 3);
    log_close(log);
    /* mid-segment start offset comes back from the checkpoint only */
    {
        log_open_args_t a = args_clean(1);
        a.log_start_offset = 3;
        log = log_open(dir, &cfg, &a);
        CU_ASSERT_EQUAL(log_start_offset(log), 3);
        log_close(log);
    }
}

static void test_truncate_to(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    size_t len;
    log_t *log = three_segments(dir, &cfg, &len);
    tb_t t = tb(1, 9000);

    log_epoch_assign(log, 1, 3);
    CU_ASSERT_EQUAL(log_truncate_to(log, 3), 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 3);
    CU_ASSERT_EQUAL(log_segment_count(log), 2);
    CU_ASSERT_EQUAL(log_latest_epoch(log), 0);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000002.log")), (int64_t)len);
    CU_ASSERT_EQUAL(append(log, &t, 2), 3);
    CU_ASSERT_EQUAL(log_truncate_to(log, 0), 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 0);
    CU_ASSERT_EQUAL(log_segment_count(log), 1);
    CU_ASSERT_EQUAL(append(log, &t, 2), 0);
    log_close(log);
}

/* ---- timestamps ---- */

static void test_offset_for_timestamp(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log;
    log_ts_offset_t to;
    static const int64_t ts_a[] = {1000, 1030, 1010}; /* out of order */
    tb_t t = tb(3, 0);

    cfg.index_interval_bytes = 0;
    cfg.segment_bytes = 300;
    log = open_log(dir, &cfg, 0);
    t.ts = ts_a;
    append(log, &t, 3);            /* 0-2 */
    t.ts = NULL;
    for (int i = 0; i < 10; i++) { /* 3-32: ts 2000 + 10 i + r */
        t.ts0 = 2000 + 10 * i;
        append(log, &t, 4);
    }
    CU_ASSERT(log_segment_count(log) > 1);
    CU_ASSERT_EQUAL(log_offset_for_timestamp(log, 0, &to), 0);
    CU_ASSERT_EQUAL(to.offset, 0);
    CU_ASSERT_EQUAL(to.timestamp, 1000);
    CU_ASSERT_EQUAL(to.leader_epoch, 3);
    CU_ASSERT_EQUAL(log_offset_for_timestamp(log, 1005, &to), 0);
    CU_ASSERT_EQUAL(to.offset, 1);
    CU_ASSERT_EQUAL(to.timestamp, 1030);
    CU_ASSERT_EQUAL(log_offset_for_timestamp(log, 1031, &to), 0);
    CU_ASSERT_EQUAL(to.offset, 3);
    CU_ASSERT_EQUAL(to.timestamp, 2000);
    CU_ASSERT_EQUAL(to.leader_epoch, 4);
    for (int i = 0; i < 10; i++) {
        for (int r = 0; r < 3; r++) {
            CU_ASSERT_EQUAL(log_offset_for_timestamp(log, 2000 + 10 * i + r, &to), 0);
            CU_ASSERT_EQUAL(to.offset, 3 + 3 * i + r);
        }
        if (i == 9) {
            CU_ASSERT_EQUAL(log_offset_for_timestamp(log, 2095, &to), 1);
        } else {
            CU_ASSERT_EQUAL(log_offset_for_timestamp(log, 2000 + 10 * i + 5, &to), 0);
            CU_ASSERT_EQUAL(to.offset, 3 + 3 * (i + 1));
        }
    }
    CU_ASSERT_EQUAL(log_max_timestamp(log, &to), 0);
    CU_ASSERT_EQUAL(to.timestamp, 2092);
    CU_ASSERT_EQUAL(to.offset, 32);
    /* the same after a clean reopen (max timestamps from time indexes) */
    log_close(log);
    log = open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(log_offset_for_timestamp(log, 1005, &to), 0);
    CU_ASSERT_EQUAL(to.offset, 1);
    CU_ASSERT_EQUAL(log_offset_for_timestamp(log, 2051, &to), 0);
    CU_ASSERT_EQUAL(to.offset, 3 + 3 * 5 + 1);
    CU_ASSERT_EQUAL(log_max_timestamp(log, &to), 0);
    CU_ASSERT_EQUAL(to.offset, 32);
    log_close(log);
}

static void test_max_timestamp_first_segment(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    log_ts_offset_t to;
    static const int64_t ts_a[] = {5000, 9000, 9000};
    tb_t t = tb(3, 0);

    CU_ASSERT_EQUAL(log_max_timestamp(log, &to), 1);
    CU_ASSERT_EQUAL(log_offset_for_timestamp(log, 0, &to), 1);
    t.ts = ts_a;
    append(log, &t, 0);
    log_roll(log, NOW);
    t.ts = NULL;
    t.ts0 = 100;
    append(log, &t, 0);
    CU_ASSERT_EQUAL(log_max_timestamp(log, &to), 0);
    CU_ASSERT_EQUAL(to.timestamp, 9000);
    CU_ASSERT_EQUAL(to.offset, 1);
    log_close(log);
}

/* ---- leader epochs ---- */

static void test_leader_epochs(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    tb_t t = tb(2, 1000);
    int64_t end;
    int32_t ep;
    size_t len;
    uint8_t *f;

    log_epoch_end_offset(log, 0, &end, &ep);
    CU_ASSERT_EQUAL(end, -1);
    CU_ASSERT_EQUAL(ep, -1);
    append(log, &t, 0);  /* 0-1 */
    append(log, &t, 0);  /* 2-3 */
    append(log, &t, 3);  /* 4-5 */
    append(log, &t, 5);  /* 6-7 */
    f = read_all(path_in(dir, "leader-epoch-checkpoint"), &len);
    CU_ASSERT_EQUAL(len, strlen("0\n3\n0 0\n3 4\n5 6\n"));
    CU_ASSERT(f && memcmp(f, "0\n3\n0 0\n3 4\n5 6\n", len) == 0);
    free(f);
    log_epoch_end_offset(log, 0, &end, &ep);
    CU_ASSERT_EQUAL(end, 4);
    CU_ASSERT_EQUAL(ep, 0);
    log_epoch_end_offset(log, 2, &end, &ep); /* unknown 2: answered by 0 */
    CU_ASSERT_EQUAL(end, 4);
    CU_ASSERT_EQUAL(ep, 0);
    log_epoch_end_offset(log, 5, &end, &ep);
    CU_ASSERT_EQUAL(end, 8);
    CU_ASSERT_EQUAL(ep, 5);
    log_epoch_end_offset(log, 6, &end, &ep);
    CU_ASSERT_EQUAL(end, -1);
    CU_ASSERT_EQUAL(ep, -1);
    /* a new leader's epoch at its LEO, before any append */
    CU_ASSERT_EQUAL(log_epoch_assign(log, 7, 8), 0);
    CU_ASSERT_EQUAL(log_latest_epoch(log), 7);
    log_epoch_end_offset(log, 5, &end, &ep);
    CU_ASSERT_EQUAL(end, 8);
    log_close(log);
    /* survives reopen; rebuilt from the log if the file is lost */
    unlink(path_in(dir, "leader-epoch-checkpoint"));
    {
        log_open_args_t a = args_clean(0);
        log = log_open(dir, &cfg, &a);
    }
    CU_ASSERT_EQUAL(log_latest_epoch(log), 5);
    log_epoch_end_offset(log, 3, &end, &ep);
    CU_ASSERT_EQUAL(end, 6);
    CU_ASSERT_EQUAL(ep, 3);
    log_close(log);
}

/* ---- producer state ---- */

static int16_t append_p(log_t *log, int64_t pid, int16_t epoch, int32_t seq, int n,
                        log_append_result_t *res)
{
    tb_t t = tb(n, NOW); /* producers idle for a day expire */
    size_t len;
    uint8_t *b;
    int16_t err;

    t.pid = pid;
    t.pepoch = epoch;
    t.seq = seq;
    b = mkbatch(&t, &len);
    err = log_append(log, b, len, 0, NOW, res);
    free(b);
    return err;
}

static void test_producer_dedup(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    log_append_result_t res;
    int64_t size;

    for (int i = 0; i < 6; i++) /* seq 0,2,4,...; offsets 0,2,... */
        CU_ASSERT_EQUAL(append_p(log, 42, 0, 2 * i, 2, &res), 0);
    size = log_size_bytes(log);
    /* a retry of one of the last 5 gets the original offsets */
    CU_ASSERT_EQUAL(append_p(log, 42, 0, 4, 2, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(res.base_offset, 4);
    CU_ASSERT_EQUAL(res.last_offset, 5);
    CU_ASSERT_EQUAL(append_p(log, 42, 0, 10, 2, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(res.base_offset, 10);
    CU_ASSERT_EQUAL(log_size_bytes(log), size);
    CU_ASSERT_EQUAL(log_end_offset(log), 12);
    /* the 6th from the end is forgotten: out of order */
    CU_ASSERT_EQUAL(append_p(log, 42, 0, 0, 2, &res), 45);
    /* same first seq, different last: not a duplicate, out of order */
    CU_ASSERT_EQUAL(append_p(log, 42, 0, 10, 3, &res), 45);
    /* gap */
    CU_ASSERT_EQUAL(append_p(log, 42, 0, 13, 1, &res), 45);
    CU_ASSERT_EQUAL(append_p(log, 42, 0, 12, 1, &res), 0);
    CU_ASSERT_EQUAL(res.base_offset, 12);
    CU_ASSERT_EQUAL(res.duplicate, 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 13);
    log_close(log);
}

static void test_producer_fencing(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    log_append_result_t res;
    log_producer_info_t pi;

    CU_ASSERT_EQUAL(append_p(log, 7, 3, 0, 1, &res), 0);
    /* a new epoch must start at sequence 0 */
    CU_ASSERT_EQUAL(append_p(log, 7, 4, 5, 1, &res), 45);
    CU_ASSERT_EQUAL(append_p(log, 7, 4, 0, 1, &res), 0);
    /* the old epoch is fenced, retries of it included */
    CU_ASSERT_EQUAL(append_p(log, 7, 3, 1, 1, &res), 47);
    CU_ASSERT_EQUAL(append_p(log, 7, 3, 0, 1, &res), 47);
    /* Kafka 4.x accepts an unknown producer at any sequence (its state
     * may have been removed with old segments) */
    CU_ASSERT_EQUAL(append_p(log, 8, 0, 17, 1, &res), 0);
    CU_ASSERT_EQUAL(append_p(log, 8, 0, 18, 2, &res), 0);
    CU_ASSERT_EQUAL(log_producer_lookup(log, 8, &pi), 1);
    CU_ASSERT_EQUAL(pi.epoch, 0);
    CU_ASSERT_EQUAL(pi.last_sequence, 19);
    CU_ASSERT_EQUAL(pi.last_offset, 4);
    CU_ASSERT_EQUAL(log_producer_lookup(log, 9, &pi), 0);
    log_close(log);
}

static void test_producer_seq_wrap(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    log_append_result_t res;
    log_producer_info_t pi;

    CU_ASSERT_EQUAL(append_p(log, 5, 0, INT32_MAX - 1, 3, &res), 0);
    CU_ASSERT_EQUAL(log_producer_lookup(log, 5, &pi), 1);
    CU_ASSERT_EQUAL(pi.last_sequence, 0);
    CU_ASSERT_EQUAL(append_p(log, 5, 0, 1, 1, &res), 0);
    CU_ASSERT_EQUAL(append_p(log, 5, 0, INT32_MAX - 1, 3, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(res.base_offset, 0);
    CU_ASSERT_EQUAL(append_p(log, 6, 0, INT32_MAX, 1, &res), 0);
    CU_ASSERT_EQUAL(append_p(log, 6, 0, 0, 1, &res), 0);
    log_close(log);
}

static const uint8_t snapshot_expected[] = {
    0x00, 0x01,             /* version */
    0, 0, 0, 0,             /* crc, checked separately */
    0x00, 0x00, 0x00, 0x01, /* one producer */
    0, 0, 0, 0, 0, 0, 0, 42, /* producer id */
    0x00, 0x02,             /* epoch */
    0x00, 0x00, 0x00, 0x05, /* last sequence */
    0, 0, 0, 0, 0, 0, 0, 5, /* last offset */
    0x00, 0x00, 0x00, 0x02, /* offset delta */
    0, 0, 0, 0, 0, 0, 0, 0, /* timestamp NOW + 2, checked separately */
    0xff, 0xff, 0xff, 0xff, /* coordinator epoch */
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* no transaction */
};

static void test_producer_snapshots(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    log_append_result_t res;
    size_t len;
    uint8_t *snap;

    CU_ASSERT_EQUAL(append_p(log, 42, 2, 0, 3, &res), 0);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 3, 3, &res), 0);
    CU_ASSERT_EQUAL(log_close(log), 0);
    snap = read_all(path_in(dir, "00000000000000000006.snapshot"), &len);
    CU_ASSERT_EQUAL_FATAL(len, sizeof(snapshot_expected));
    CU_ASSERT(memcmp(snap, snapshot_expected, 2) == 0);
    CU_ASSERT(memcmp(snap + 6, snapshot_expected + 6, 30) == 0);
    CU_ASSERT_EQUAL(get_be64(snap + 36), NOW + 2);
    CU_ASSERT(memcmp(snap + 44, snapshot_expected + 44, 12) == 0);
    CU_ASSERT_EQUAL((uint32_t)get_be32(snap + 2), crc32c(0, snap + 6, len - 6));
    free(snap);

    /* after a clean reopen the last batch is still known */
    log = open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 3, 3, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(res.base_offset, 3);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 7, 1, &res), 45);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 6, 1, &res), 0);
    CU_ASSERT_EQUAL(log_close(log), 0);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000007.snapshot")), 56);

    /* snapshots lost: rebuilt from the log, all 5 batches of history */
    unlink(path_in(dir, "00000000000000000006.snapshot"));
    unlink(path_in(dir, "00000000000000000007.snapshot"));
    log = open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 0, 3, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(res.base_offset, 0);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 6, 1, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(res.base_offset, 6);
    log_close(log);

    /* a corrupt snapshot is ignored and the state rebuilt */
    {
        int fd = open(path_in(dir, "00000000000000000007.snapshot"), O_RDWR);
        uint8_t c = 0x55;
        CU_ASSERT(fd >= 0);
        pwrite(fd, &c, 1, 20);
        close(fd);
    }
    log = open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 3, 3, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 7, 1, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 0);
    log_close(log);
}

/* After an unclean shutdown, state = snapshot + replay of the tail. */
static void test_producer_replay_after_crash(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    log_append_result_t res;

    CU_ASSERT_EQUAL(append_p(log, 1, 0, 0, 1, &res), 0);
    log_roll(log, NOW); /* snapshot at 1 */
    CU_ASSERT_EQUAL(append_p(log, 1, 0, 1, 1, &res), 0);
    CU_ASSERT_EQUAL(append_p(log, 2, 0, 0, 1, &res), 0);
    log_free(log); /* crash: no close, no snapshot at 3 */
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000003.snapshot")), -1);
    log = open_log(dir, &cfg, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log_end_offset(log), 3);
    CU_ASSERT_EQUAL(append_p(log, 1, 0, 1, 1, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(res.base_offset, 1);
    CU_ASSERT_EQUAL(append_p(log, 2, 0, 1, 1, &res), 0);
    CU_ASSERT_EQUAL(res.base_offset, 3);
    CU_ASSERT(file_size(path_in(dir, "00000000000000000003.snapshot")) > 0);
    log_close(log);
}

static void test_producer_expiry(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    log_append_result_t res;
    log_producer_info_t pi;

    CU_ASSERT_EQUAL(append_p(log, 1, 0, 0, 1, &res), 0); /* timestamp NOW */
    CU_ASSERT_EQUAL(log_expire_producers(log, NOW + 86400000 - 1), 0);
    CU_ASSERT_EQUAL(log_expire_producers(log, NOW + 86400000), 1);
    CU_ASSERT_EQUAL(log_producer_lookup(log, 1, &pi), 0);
    log_close(log);
}

/* ---- flush ---- */

static void test_flush(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    tb_t t = tb(4, 1000);

    append(log, &t, 0);
    append(log, &t, 0);
    CU_ASSERT_EQUAL(log_unflushed_messages(log), 8);
    CU_ASSERT_EQUAL(log_recovery_point(log), 0);
    log_roll(log, NOW);
    append(log, &t, 0);
    CU_ASSERT_EQUAL(log_flush_rolled(log), 0);
    CU_ASSERT_EQUAL(log_recovery_point(log), 8);
    CU_ASSERT_EQUAL(log_flush(log, NOW + 5), 0);
    CU_ASSERT_EQUAL(log_recovery_point(log), 12);
    CU_ASSERT_EQUAL(log_unflushed_messages(log), 0);
    CU_ASSERT_EQUAL(log_last_flush_ms(log), NOW + 5);
    log_close(log);
}

static void test_replica_append(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    tb_t t = tb(3, 1000);
    size_t l1, l2;
    uint8_t *b1 = mkbatch(&t, &l1), *b2 = mkbatch(&t, &l2), *both;

    /* leader offsets 10-12 and 13-15, epoch 4 */
    b1[7] = 10;
    b2[7] = 13;
    memset(b1 + 12, 0, 3);
    memset(b2 + 12, 0, 3);
    b1[15] = b2[15] = 4;
    both = malloc(l1 + l2);
    memcpy(both, b1, l1);
    memcpy(both + l1, b2, l2);
    CU_ASSERT_EQUAL(log_append_replica(log, both, l1 + l2 - 5, NOW), 0); /* partial 2nd */
    CU_ASSERT_EQUAL(log_end_offset(log), 13);
    CU_ASSERT_EQUAL(log_append_replica(log, both, l1, NOW), 1); /* below the LEO */
    CU_ASSERT_EQUAL(log_append_replica(log, b2, l2, NOW), 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 16);
    CU_ASSERT_EQUAL(log_latest_epoch(log), 4);
    b2[40] ^= 1;
    CU_ASSERT_EQUAL(log_append_replica(log, b2, l2, NOW), 2); /* CRC */
    free(b1);
    free(b2);
    free(both);
    log_close(log);
    /* a gap in offsets needs no new segment (as in Kafka) */
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000000.log")), (int64_t)(2 * l1));
}

/* ---- failures ---- */

/* A write that fails (here: the file size limit, as a full disk would)
 * leaves no partial batch behind, and the log goes on at the same offset
 * once space is back. */
static void test_append_io_failure(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    tb_t t = tb(1, 1000);
    size_t len;
    uint8_t *b;
    log_append_result_t res;
    struct rlimit old, lim;
    int64_t size;

    append(log, &t, 0);
    size = file_size(path_in(dir, "00000000000000000000.log"));
    t.vsize = 5000;
    b = mkbatch(&t, &len);
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)(size + 100) > 4096 ? (rlim_t)(size + 100) : 4096;
    setrlimit(RLIMIT_FSIZE, &lim);
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, NOW, &res), 56);
    setrlimit(RLIMIT_FSIZE, &old);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000000.log")), size);
    CU_ASSERT_EQUAL(log_end_offset(log), 1);
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, NOW, &res), 0);
    CU_ASSERT_EQUAL(res.base_offset, 1);
    free(b);
    log_close(log);
    log = open_log(dir, &cfg, 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 2);
    log_close(log);
}

/* ---- appends written off the loop (log_async.c) ---- */

/* A batch placed but not committed: offsets handed out, nothing visible. */
static void test_async_place_commit(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    tb_t t = tb(2, 1000);
    size_t len;
    uint8_t *b[3];
    log_write_t wr[3];
    log_append_result_t res;
    int64_t size0;

    append(log, &t, 0);
    size0 = log_size_bytes(log);
    for (int i = 0; i < 3; i++) {
        t.ts0 = 2000 + i;
        b[i] = mkbatch(&t, &len);
        CU_ASSERT_EQUAL(log_append_place(log, b[i], len, 3, NOW, &res, &wr[i]), 0);
        CU_ASSERT_EQUAL(res.base_offset, 2 + 2 * i);
        CU_ASSERT_EQUAL(res.last_offset, 3 + 2 * i);
        CU_ASSERT(wr[i].fd >= 0);
        CU_ASSERT_EQUAL(wr[i].pos, size0 + (int64_t)(i * len));
    }
    CU_ASSERT_EQUAL(log_pending_writes(log), 3);
    CU_ASSERT_EQUAL(log_end_offset(log), 2);
    CU_ASSERT_EQUAL(log_size_bytes(log), size0);
    {
        log_read_result_t rr;
        CU_ASSERT_EQUAL(log_read(log, 2, 1 << 20, 1, INT64_MAX, &rr), 0);
        CU_ASSERT_EQUAL(rr.len, 0);
    }
    /* a synchronous append would land before the pending bytes */
    CU_ASSERT_EQUAL(log_append(log, b[0], len, 3, NOW, &res), LOG_APPEND_AGAIN);
    /* writes may run in any order; commits go in placing order */
    log_write_run(&wr[2]);
    log_write_run(&wr[0]);
    log_write_run(&wr[1]);
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(wr[i].fd, -1);
        CU_ASSERT_EQUAL(log_append_commit(log, &wr[i]), 0);
        CU_ASSERT_EQUAL(log_end_offset(log), 4 + 2 * i);
    }
    CU_ASSERT_EQUAL(log_pending_writes(log), 0);
    log_close(log);
    log = open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(log_end_offset(log), 8);
    {
        log_read_result_t rr;
        CU_ASSERT_EQUAL(log_read(log, 2, 1 << 20, 1, INT64_MAX, &rr), 0);
        CU_ASSERT_EQUAL(rr.len, (int32_t)(3 * len));
        uint8_t *got = read_region(&rr);
        for (int i = 0; i < 3; i++) {
            CU_ASSERT_EQUAL(get_be64(got + i * len), 2 + 2 * i);         /* base offset */
            CU_ASSERT_EQUAL(get_be32(got + i * len + 12), 3);            /* leader epoch */
            CU_ASSERT_EQUAL(memcmp(got + i * len, b[i], len), 0);        /* as placed */
        }
        free(got);
        close(rr.fd);
    }
    for (int i = 0; i < 3; i++)
        free(b[i]);
    log_close(log);
}

/* A batch that needs a roll waits until the writes before it are in. */
static void test_async_roll_waits(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    tb_t t = tb(2, 1000);
    size_t len;
    uint8_t *b = mkbatch(&t, &len);
    log_write_t wr, wr2;
    log_append_result_t res;

    cfg.segment_bytes = (int64_t)(3 * len);
    log_t *log = open_log(dir, &cfg, 0);
    append(log, &t, 0);
    append(log, &t, 0);
    CU_ASSERT_EQUAL(log_append_place(log, b, len, 0, NOW, &res, &wr), 0);
    CU_ASSERT_EQUAL(res.base_offset, 4);
    CU_ASSERT_EQUAL(log_append_place(log, b, len, 0, NOW, &res, &wr2), LOG_APPEND_AGAIN);
    CU_ASSERT_EQUAL(wr2.fd, -1);
    CU_ASSERT_EQUAL(log_segment_count(log), 1);
    log_write_run(&wr);
    CU_ASSERT_EQUAL(log_append_commit(log, &wr), 0);
    CU_ASSERT_EQUAL(log_append_place(log, b, len, 0, NOW, &res, &wr2), 0);
    CU_ASSERT_EQUAL(res.base_offset, 6);
    CU_ASSERT_EQUAL(log_segment_count(log), 2);
    CU_ASSERT_EQUAL(wr2.pos, 0);
    log_write_run(&wr2);
    CU_ASSERT_EQUAL(log_append_commit(log, &wr2), 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 8);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000006.log")), (int64_t)len);
    free(b);
    log_close(log);
}

/* Places a batch of producer 7 at sequence seq with leader epoch epoch
 * (asserting it is placed). */
static void place_seq(log_t *log, int32_t seq, int32_t epoch, uint8_t **b, log_write_t *wr)
{
    tb_t t = tb(2, NOW - 1000 + seq);
    size_t len;
    log_append_result_t res;

    t.pid = 7;
    t.pepoch = 0;
    t.seq = seq;
    *b = mkbatch(&t, &len);
    CU_ASSERT_EQUAL(log_append_place(log, *b, len, epoch, NOW, &res, wr), 0);
}

/* A failed write (a full disk) fails the batches placed after it too
 * (they were written past a gap), refuses new ones until the last is
 * committed, and is then undone: file, offsets, producer state and the
 * epoch it started are as before, so the producer's retry at the same
 * sequence is taken at once, and a reopen finds exactly the committed
 * batches. */
static void test_async_failed_write(void)
{
    const char *dir = fresh_dir();
    log_config_t cfg = small_cfg();
    log_t *log = open_log(dir, &cfg, 0);
    uint8_t *b[4];
    log_write_t wr[4];
    log_append_result_t res;
    log_producer_info_t pi;
    int64_t size0;
    int32_t eo;
    int64_t end;

    place_seq(log, 0, 0, &b[0], &wr[0]);
    log_write_run(&wr[0]);
    CU_ASSERT_EQUAL(log_append_commit(log, &wr[0]), 0);
    size0 = log_size_bytes(log);
    place_seq(log, 2, 1, &b[1], &wr[1]); /* epoch 1 starts at offset 2 */
    place_seq(log, 4, 1, &b[2], &wr[2]);
    CU_ASSERT_EQUAL(log_latest_epoch(log), 1);
    close(wr[1].fd);
    wr[1].fd = open("/dev/null", O_RDONLY); /* its write fails (EBADF) */
    log_write_run(&wr[1]);
    log_write_run(&wr[2]);
    CU_ASSERT_NOT_EQUAL(wr[1].err, 0);
    CU_ASSERT_EQUAL(wr[2].err, 0);
    CU_ASSERT_EQUAL(log_append_commit(log, &wr[1]), 56);
    /* nothing more is placed while the failed run has a batch out */
    CU_ASSERT_EQUAL(log_append_place(log, b[2], wr[2].len, 1, NOW, &res, &wr[3]), 56);
    CU_ASSERT_EQUAL(wr[3].fd, -1);
    CU_ASSERT_EQUAL(log_append_commit(log, &wr[2]), 56);
    CU_ASSERT_FALSE(log_offline(log));
    CU_ASSERT_EQUAL(log_pending_writes(log), 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 2);
    CU_ASSERT_EQUAL(log_size_bytes(log), size0);
    CU_ASSERT_EQUAL(file_size(path_in(dir, "00000000000000000000.log")), size0);
    CU_ASSERT_EQUAL(log_latest_epoch(log), 0);
    log_epoch_end_offset(log, 0, &end, &eo);
    CU_ASSERT_EQUAL(end, 2);
    CU_ASSERT(log_producer_lookup(log, 7, &pi));
    CU_ASSERT_EQUAL(pi.last_sequence, 1);
    /* the producer's retry of sequence 2 is the next batch, at offset 2 */
    for (int i = 1; i < 3; i++)
        free(b[i]);
    place_seq(log, 2, 1, &b[1], &wr[1]);
    CU_ASSERT_EQUAL(wr[1].h.base_offset, 2);
    log_write_run(&wr[1]);
    CU_ASSERT_EQUAL(log_append_commit(log, &wr[1]), 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 4);
    CU_ASSERT_EQUAL(log_close(log), 0);
    log = open_log(dir, &cfg, 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 4);
    CU_ASSERT_EQUAL(log_size_bytes(log), size0 + (int64_t)wr[1].len);
    CU_ASSERT(log_producer_lookup(log, 7, &pi));
    CU_ASSERT_EQUAL(pi.last_sequence, 3);
    log_epoch_end_offset(log, 0, &end, &eo);
    CU_ASSERT_EQUAL(end, 2);
    free(b[0]);
    free(b[1]);
    log_close(log);
}

static void test_async_uid(void)
{
    log_config_t cfg = small_cfg();
    const char *d1 = fresh_dir();
    log_t *a = open_log(d1, &cfg, 0);
    log_t *b = open_log(fresh_dir(), &cfg, 0);
    CU_ASSERT_NOT_EQUAL(log_uid(a), log_uid(b));
    uint64_t ua = log_uid(a);
    log_close(a);
    a = open_log(d1, &cfg, 1);
    CU_ASSERT_NOT_EQUAL(log_uid(a), ua); /* the same place opened again */
    log_close(a);
    log_close(b);
}

/* kill -9 at a random moment of an append loop: the log recovers to at
 * least every append that had returned, and every batch in it is whole. */
static void test_kill9_loop(void)
{
    log_config_t cfg = small_cfg();

    cfg.segment_bytes = 20000;
    cfg.index_interval_bytes = 300;
    for (int round = 0; round < 6; round++) {
        const char *dir = fresh_dir();
        int fds[2];
        pid_t pid;
        int64_t acked = -1, v;
        log_t *log;

        CU_ASSERT_FATAL(pipe(fds) == 0);
        pid = fork();
        if (pid == 0) {
            close(fds[0]);
            log = open_log(dir, &cfg, 0);
            for (int i = 0;; i++) {
                tb_t t = tb(1 + i % 5, 1000 + i);
                size_t len;
                uint8_t *b = mkbatch(&t, &len);
                log_append_result_t res;
                if (log_append(log, b, len, 0, NOW, &res) != 0)
                    _exit(1);
                free(b);
                if (write(fds[1], &res.last_offset, sizeof(res.last_offset)) < 0)
                    _exit(1);
            }
        }
        close(fds[1]);
        /* Kill only once appends are under way: on a loaded machine the
         * child may not even have opened the log within a fixed delay. */
        if (read(fds[0], &v, sizeof(v)) == (ssize_t)sizeof(v))
            acked = v;
        usleep(20000 + 15000 * round);
        kill(pid, SIGKILL);
        waitpid(pid, NULL, 0);
        while (read(fds[0], &v, sizeof(v)) == (ssize_t)sizeof(v))
            acked = v;
        close(fds[0]);
        CU_ASSERT(acked >= 0);
        log = open_log(dir, &cfg, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        CU_ASSERT(log_end_offset(log) >= acked + 1);
        /* every batch readable, offsets contiguous */
        {
            int64_t off = 0;
            while (off < log_end_offset(log)) {
                log_read_result_t rr;
                uint8_t *p;
                CU_ASSERT_EQUAL_FATAL(log_read(log, off, 1, 1, INT64_MAX, &rr), 0);
                CU_ASSERT_EQUAL_FATAL(rr.first_offset, off);
                p = read_region(&rr);
                CU_ASSERT(log_batch_crc_ok(p, (size_t)rr.len));
                off += get_be32(p + 23) + 1;
                free(p);
                close(rr.fd);
            }
        }
        log_close(log);
    }
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/strand-test-log-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    lg_set_level(LG_ERROR);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("log", NULL, NULL);
    CU_add_test(s, "append and read exact bytes", test_append_read_exact);
    CU_add_test(s, "bad batches refused", test_bad_batches);
    CU_add_test(s, "LogAppendTime", test_log_append_time);
    CU_add_test(s, "index lookup at every offset", test_index_every_offset);
    CU_add_test(s, "index.interval.bytes", test_index_interval);
    CU_add_test(s, "roll by size", test_roll_by_size);
    CU_add_test(s, "roll by time", test_roll_by_time);
    CU_add_test(s, "reopen after clean close", test_reopen_clean);
    CU_add_test(s, "recover torn tail", test_recover_torn_tail);
    CU_add_test(s, "recover bad crc", test_recover_bad_crc);
    CU_add_test(s, "recover drops later segments", test_recover_drops_later_segments);
    CU_add_test(s, "bad index rebuilt", test_bad_index_rebuilt);
    CU_add_test(s, "retention by time", test_retention_time);
    CU_add_test(s, "retention by size", test_retention_size);
    CU_add_test(s, "delete records", test_delete_records);
    CU_add_test(s, "truncate to", test_truncate_to);
    CU_add_test(s, "offset for timestamp", test_offset_for_timestamp);
    CU_add_test(s, "max timestamp", test_max_timestamp_first_segment);
    CU_add_test(s, "leader epochs", test_leader_epochs);
    CU_add_test(s, "producer dedup", test_producer_dedup);
    CU_add_test(s, "producer fencing", test_producer_fencing);
    CU_add_test(s, "producer sequence wrap", test_producer_seq_wrap);
    CU_add_test(s, "producer snapshots", test_producer_snapshots);
    CU_add_test(s, "producer replay after crash", test_producer_replay_after_crash);
    CU_add_test(s, "producer expiry", test_producer_expiry);
    CU_add_test(s, "flush", test_flush);
    CU_add_test(s, "replica append", test_replica_append);
    CU_add_test(s, "append I/O failure", test_append_io_failure);
    CU_add_test(s, "placed batches: offsets now, bytes at commit", test_async_place_commit);
    CU_add_test(s, "placed batch needing a roll waits", test_async_roll_waits);
    CU_add_test(s, "failed placed writes are undone", test_async_failed_write);
    CU_add_test(s, "log uid", test_async_uid);
    CU_add_test(s, "kill -9 loop", test_kill9_loop);
    int rc = unit_run();
    unit_rm_rf(tmpdir);
    return rc;
}
