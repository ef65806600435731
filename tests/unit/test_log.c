/* The partition log's everyday path: exact bytes on disk for appends and
 * reads, bad batches, LogAppendTime, the offset and time indexes, rolls by
 * size and time, lookups by timestamp, the leader-epoch checkpoint, flush
 * and replica appends. Recovery, retention, producer state and the placed
 * path have programs of their own (test_log_*.c); batches are encoded by
 * hand (unit_tlog.h) so the tests do not depend on the batch encoder. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_tlog.h"
#include "util/logging.h"

/* ---- append and read ---- */

static void test_append_read_exact(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    uint8_t *b[3], *region;
    size_t len[3];
    tl_tb_t t[3] = {tl_tb(1, 1000), tl_tb(5, 2000), tl_tb(2, 3000)};
    log_append_result_t res;
    log_read_result_t rr;

    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log_end_offset(log), 0);
    for (int i = 0; i < 3; i++) {
        b[i] = tl_mkbatch(&t[i], &len[i]);
        CU_ASSERT_EQUAL(log_append(log, b[i], len[i], 7, TL_NOW, &res), 0);
        CU_ASSERT_EQUAL(res.duplicate, 0);
        CU_ASSERT_EQUAL(res.log_append_time, -1);
    }
    /* offsets assigned in place: 0, 1-5, 6-7 */
    CU_ASSERT_EQUAL(tl_be64(b[0]), 0);
    CU_ASSERT_EQUAL(tl_be64(b[1]), 1);
    CU_ASSERT_EQUAL(tl_be64(b[2]), 6);
    CU_ASSERT_EQUAL(tl_be32(b[2] + 12), 7);
    CU_ASSERT(log_batch_crc_ok(b[2], len[2]));
    CU_ASSERT_EQUAL(res.base_offset, 6);
    CU_ASSERT_EQUAL(res.last_offset, 7);
    CU_ASSERT_EQUAL(log_end_offset(log), 8);

    /* the .log file is the three batches back to back */
    {
        size_t flen;
        uint8_t *f = tl_read_all(tl_path_in(dir, "00000000000000000000.log"), &flen);
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
    region = tl_read_region(&rr);
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
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    tl_tb_t t = tl_tb(2, 1000);
    size_t len;
    uint8_t *b = tl_mkbatch(&t, &len);
    log_append_result_t res;

    CU_ASSERT_EQUAL(log_append(log, b, len - 1, 0, TL_NOW, &res), 2);
    CU_ASSERT_EQUAL(log_append(log, b, 30, 0, TL_NOW, &res), 2);
    b[16] = 1; /* magic */
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, TL_NOW, &res), 2);
    b[16] = 2;
    cfg.segment_bytes = (int64_t)len - 1;
    log_set_config(log, &cfg);
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, TL_NOW, &res), 18);
    CU_ASSERT_EQUAL(log_end_offset(log), 0);
    free(b);
    log_close(log);
}

static void test_log_append_time(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log;
    tl_tb_t t = tl_tb(3, 1000);
    size_t len;
    uint8_t *b = tl_mkbatch(&t, &len);
    log_append_result_t res;
    log_ts_offset_t to;

    cfg.timestamp_type = 1;
    log = tl_open_log(dir, &cfg, 0);
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, TL_NOW, &res), 0);
    CU_ASSERT_EQUAL(res.log_append_time, TL_NOW);
    CU_ASSERT_EQUAL(tl_be64(b + 35), TL_NOW);
    CU_ASSERT(b[22] & 0x08);
    CU_ASSERT(log_batch_crc_ok(b, len));
    CU_ASSERT_EQUAL(log_max_timestamp(log, &to), 0);
    CU_ASSERT_EQUAL(to.timestamp, TL_NOW);
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
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log;
    int64_t base[60], pos[60], blen[60], p = 0;
    int nb = 60;

    cfg.index_interval_bytes = 0;
    log = tl_open_log(dir, &cfg, 0);
    for (int i = 0; i < nb; i++) {
        tl_tb_t t = tl_tb(1 + i % 3, 1000 + 10 * i);
        size_t len;
        uint8_t *b = tl_mkbatch(&t, &len);
        log_append_result_t res;
        CU_ASSERT_EQUAL(log_append(log, b, len, 0, TL_NOW, &res), 0);
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
        uint8_t *ix = tl_read_all(tl_path_in(dir, "00000000000000000000.index"), &ilen);
        CU_ASSERT_EQUAL_FATAL(ilen, (size_t)(nb - 1) * 8);
        for (int i = 1; i < nb; i++) {
            int64_t last = (i + 1 < nb ? base[i + 1] : base[i] + 1 + i % 3) - 1;
            CU_ASSERT_EQUAL(tl_be32(ix + (i - 1) * 8), (int32_t)last);
            CU_ASSERT_EQUAL(tl_be32(ix + (i - 1) * 8 + 4), (int32_t)pos[i]);
        }
        free(ix);
    }
    /* time index: the batches' max timestamps strictly grow, so one entry
     * per offset entry, holding the batch's max timestamp and last offset */
    {
        size_t tlen;
        uint8_t *tx = tl_read_all(tl_path_in(dir, "00000000000000000000.timeindex"), &tlen);
        CU_ASSERT_EQUAL_FATAL(tlen, (size_t)(nb - 1) * 12);
        for (int i = 1; i < nb; i++) {
            int n = 1 + i % 3;
            CU_ASSERT_EQUAL(tl_be64(tx + (i - 1) * 12), 1000 + 10 * i + n - 1);
            CU_ASSERT_EQUAL(tl_be32(tx + (i - 1) * 12 + 8), (int32_t)(base[i] + n - 1));
        }
        free(tx);
    }
    /* reopen cleanly and look everything up again */
    log = tl_open_log(dir, &cfg, 1);
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
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log;
    size_t len;
    tl_tb_t t = tl_tb(1, 1000);
    uint8_t *b;

    t.vsize = 100;
    b = tl_mkbatch(&t, &len); /* 61 + record bytes */
    free(b);
    cfg.index_interval_bytes = (int32_t)(2 * len); /* an entry every 3rd batch */
    log = tl_open_log(dir, &cfg, 0);
    for (int i = 0; i < 10; i++)
        tl_append(log, &t, 0);
    log_close(log);
    {
        size_t ilen;
        uint8_t *ix = tl_read_all(tl_path_in(dir, "00000000000000000000.index"), &ilen);
        /* entries for batches 3, 6, 9 (0-based), i.e. offsets 3, 6, 9 */
        CU_ASSERT_EQUAL_FATAL(ilen, 24);
        CU_ASSERT_EQUAL(tl_be32(ix), 3);
        CU_ASSERT_EQUAL(tl_be32(ix + 4), (int32_t)(3 * len));
        CU_ASSERT_EQUAL(tl_be32(ix + 8), 6);
        CU_ASSERT_EQUAL(tl_be32(ix + 16), 9);
        CU_ASSERT_EQUAL(tl_be32(ix + 20), (int32_t)(9 * len));
        free(ix);
    }
}

/* ---- roll ---- */

static void test_roll_by_size(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log;
    size_t len;
    tl_tb_t t = tl_tb(2, 1000);
    uint8_t *b = tl_mkbatch(&t, &len);

    free(b);
    cfg.segment_bytes = (int64_t)(3 * len); /* 3 batches per segment */
    log = tl_open_log(dir, &cfg, 0);
    for (int i = 0; i < 7; i++)
        CU_ASSERT_EQUAL(tl_append(log, &t, 0), 2 * i);
    CU_ASSERT_EQUAL(log_segment_count(log), 3);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000000.log")), (int64_t)(3 * len));
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000006.log")), (int64_t)(3 * len));
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000012.log")), (int64_t)len);
    /* the rolled segments' indexes are trimmed (no entries: 0 bytes), the
     * active one is pre-allocated */
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000006.index")), 0);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000006.timeindex")), 12);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000012.index")), 4096);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000012.timeindex")), 4092);
    /* a snapshot rendered at each roll, for the caller to write off the
     * loop; the last one waits to be taken */
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000012.snapshot")), -1);
    {
        log_snap_t snap, none;
        CU_ASSERT_EQUAL_FATAL(log_snapshot_take(log, &snap), 1);
        CU_ASSERT_EQUAL(snap.offset, 12);
        CU_ASSERT_EQUAL(log_snapshot_take(log, &none), 0); /* taken: none due now */
        log_snap_write(&snap);
        log_snapshot_done(log, &snap);
    }
    CU_ASSERT(tl_file_size(tl_path_in(dir, "00000000000000000012.snapshot")) == 10);
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
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000012.index")), 0);
}

static void test_roll_by_time(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log;
    tl_tb_t t = tl_tb(1, 10000);

    cfg.segment_ms = 1000;
    log = tl_open_log(dir, &cfg, 0);
    tl_append(log, &t, 0);
    t.ts0 = 10500;
    tl_append(log, &t, 0);
    CU_ASSERT_EQUAL(log_segment_count(log), 1);
    t.ts0 = 11001; /* 1001 ms after the segment's first batch */
    tl_append(log, &t, 0);
    CU_ASSERT_EQUAL(log_segment_count(log), 2);
    CU_ASSERT(tl_file_size(tl_path_in(dir, "00000000000000000002.log")) > 0);
    /* forced roll; rolling an empty segment does nothing */
    CU_ASSERT_EQUAL(log_roll(log, TL_NOW), 0);
    CU_ASSERT_EQUAL(log_roll(log, TL_NOW), 0);
    CU_ASSERT_EQUAL(log_segment_count(log), 3);
    log_close(log);
}

/* ---- timestamps ---- */

static void test_offset_for_timestamp(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log;
    log_ts_offset_t to;
    static const int64_t ts_a[] = {1000, 1030, 1010}; /* out of order */
    tl_tb_t t = tl_tb(3, 0);

    cfg.index_interval_bytes = 0;
    cfg.segment_bytes = 300;
    log = tl_open_log(dir, &cfg, 0);
    t.ts = ts_a;
    tl_append(log, &t, 3);            /* 0-2 */
    t.ts = NULL;
    for (int i = 0; i < 10; i++) { /* 3-32: ts 2000 + 10 i + r */
        t.ts0 = 2000 + 10 * i;
        tl_append(log, &t, 4);
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
    log = tl_open_log(dir, &cfg, 1);
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
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    log_ts_offset_t to;
    static const int64_t ts_a[] = {5000, 9000, 9000};
    tl_tb_t t = tl_tb(3, 0);

    CU_ASSERT_EQUAL(log_max_timestamp(log, &to), 1);
    CU_ASSERT_EQUAL(log_offset_for_timestamp(log, 0, &to), 1);
    t.ts = ts_a;
    tl_append(log, &t, 0);
    log_roll(log, TL_NOW);
    t.ts = NULL;
    t.ts0 = 100;
    tl_append(log, &t, 0);
    CU_ASSERT_EQUAL(log_max_timestamp(log, &to), 0);
    CU_ASSERT_EQUAL(to.timestamp, 9000);
    CU_ASSERT_EQUAL(to.offset, 1);
    log_close(log);
}

/* ---- leader epochs ---- */

static void test_leader_epochs(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    tl_tb_t t = tl_tb(2, 1000);
    int64_t end;
    int32_t ep;
    size_t len;
    uint8_t *f;

    log_epoch_end_offset(log, 0, &end, &ep);
    CU_ASSERT_EQUAL(end, -1);
    CU_ASSERT_EQUAL(ep, -1);
    tl_append(log, &t, 0);  /* 0-1 */
    tl_append(log, &t, 0);  /* 2-3 */
    tl_append(log, &t, 3);  /* 4-5 */
    tl_append(log, &t, 5);  /* 6-7 */
    f = tl_read_all(tl_path_in(dir, "leader-epoch-checkpoint"), &len);
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
    unlink(tl_path_in(dir, "leader-epoch-checkpoint"));
    {
        log_open_args_t a = tl_args_clean(0);
        log = log_open(dir, &cfg, &a);
    }
    CU_ASSERT_EQUAL(log_latest_epoch(log), 5);
    log_epoch_end_offset(log, 3, &end, &ep);
    CU_ASSERT_EQUAL(end, 6);
    CU_ASSERT_EQUAL(ep, 3);
    log_close(log);
}

/* ---- flush ---- */

static void test_flush(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    tl_tb_t t = tl_tb(4, 1000);

    tl_append(log, &t, 0);
    tl_append(log, &t, 0);
    CU_ASSERT_EQUAL(log_unflushed_messages(log), 8);
    CU_ASSERT_EQUAL(log_recovery_point(log), 0);
    log_roll(log, TL_NOW);
    tl_append(log, &t, 0);
    CU_ASSERT_EQUAL(log_flush_rolled(log), 0);
    CU_ASSERT_EQUAL(log_recovery_point(log), 8);
    CU_ASSERT_EQUAL(log_flush(log, TL_NOW + 5), 0);
    CU_ASSERT_EQUAL(log_recovery_point(log), 12);
    CU_ASSERT_EQUAL(log_unflushed_messages(log), 0);
    CU_ASSERT_EQUAL(log_last_flush_ms(log), TL_NOW + 5);
    log_close(log);
}

static void test_replica_append(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    tl_tb_t t = tl_tb(3, 1000);
    size_t l1, l2;
    uint8_t *b1 = tl_mkbatch(&t, &l1), *b2 = tl_mkbatch(&t, &l2), *both;

    /* leader offsets 10-12 and 13-15, epoch 4 */
    b1[7] = 10;
    b2[7] = 13;
    memset(b1 + 12, 0, 3);
    memset(b2 + 12, 0, 3);
    b1[15] = b2[15] = 4;
    both = malloc(l1 + l2);
    memcpy(both, b1, l1);
    memcpy(both + l1, b2, l2);
    CU_ASSERT_EQUAL(log_append_replica(log, both, l1 + l2 - 5, TL_NOW), 0); /* partial 2nd */
    CU_ASSERT_EQUAL(log_end_offset(log), 13);
    CU_ASSERT_EQUAL(log_append_replica(log, both, l1, TL_NOW), 1); /* below the LEO */
    CU_ASSERT_EQUAL(log_append_replica(log, b2, l2, TL_NOW), 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 16);
    CU_ASSERT_EQUAL(log_latest_epoch(log), 4);
    b2[40] ^= 1;
    CU_ASSERT_EQUAL(log_append_replica(log, b2, l2, TL_NOW), 2); /* CRC */
    free(b1);
    free(b2);
    free(both);
    log_close(log);
    /* a gap in offsets needs no new segment (as in Kafka) */
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000000.log")), (int64_t)(2 * l1));
}

int main(void)
{
    if (tl_root_init("test-log") < 0)
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
    CU_add_test(s, "offset for timestamp", test_offset_for_timestamp);
    CU_add_test(s, "max timestamp", test_max_timestamp_first_segment);
    CU_add_test(s, "leader epochs", test_leader_epochs);
    CU_add_test(s, "flush", test_flush);
    CU_add_test(s, "replica append", test_replica_append);
    int rc = unit_run();
    tl_root_remove();
    return rc;
}
