/* Appends written off the loop (log/log_async.c): a placed batch has its
 * offsets at once and its bytes visible at commit, a batch needing a roll
 * waits for the writes before it, a failed write undoes the batches placed
 * after it, and each log has its own uid. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_tlog.h"
#include "util/logging.h"

/* ---- appends written off the loop (log_async.c) ---- */

/* A batch placed but not committed: offsets handed out, nothing visible. */
static void test_async_place_commit(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    tl_tb_t t = tl_tb(2, 1000);
    size_t len;
    uint8_t *b[3];
    log_write_t wr[3];
    log_append_result_t res;
    int64_t size0;

    tl_append(log, &t, 0);
    size0 = log_size_bytes(log);
    for (int i = 0; i < 3; i++) {
        t.ts0 = 2000 + i;
        b[i] = tl_mkbatch(&t, &len);
        CU_ASSERT_EQUAL(log_append_place(log, b[i], len, 3, TL_NOW, &res, &wr[i]), 0);
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
    CU_ASSERT_EQUAL(log_append(log, b[0], len, 3, TL_NOW, &res), LOG_APPEND_AGAIN);
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
    log = tl_open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(log_end_offset(log), 8);
    {
        log_read_result_t rr;
        CU_ASSERT_EQUAL(log_read(log, 2, 1 << 20, 1, INT64_MAX, &rr), 0);
        CU_ASSERT_EQUAL(rr.len, (int32_t)(3 * len));
        uint8_t *got = tl_read_region(&rr);
        for (int i = 0; i < 3; i++) {
            CU_ASSERT_EQUAL(tl_be64(got + i * len), 2 + 2 * i);         /* base offset */
            CU_ASSERT_EQUAL(tl_be32(got + i * len + 12), 3);            /* leader epoch */
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
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    tl_tb_t t = tl_tb(2, 1000);
    size_t len;
    uint8_t *b = tl_mkbatch(&t, &len);
    log_write_t wr, wr2;
    log_append_result_t res;

    cfg.segment_bytes = (int64_t)(3 * len);
    log_t *log = tl_open_log(dir, &cfg, 0);
    tl_append(log, &t, 0);
    tl_append(log, &t, 0);
    CU_ASSERT_EQUAL(log_append_place(log, b, len, 0, TL_NOW, &res, &wr), 0);
    CU_ASSERT_EQUAL(res.base_offset, 4);
    CU_ASSERT_EQUAL(log_append_place(log, b, len, 0, TL_NOW, &res, &wr2), LOG_APPEND_AGAIN);
    CU_ASSERT_EQUAL(wr2.fd, -1);
    CU_ASSERT_EQUAL(log_segment_count(log), 1);
    log_write_run(&wr);
    CU_ASSERT_EQUAL(log_append_commit(log, &wr), 0);
    CU_ASSERT_EQUAL(log_append_place(log, b, len, 0, TL_NOW, &res, &wr2), 0);
    CU_ASSERT_EQUAL(res.base_offset, 6);
    CU_ASSERT_EQUAL(log_segment_count(log), 2);
    CU_ASSERT_EQUAL(wr2.pos, 0);
    log_write_run(&wr2);
    CU_ASSERT_EQUAL(log_append_commit(log, &wr2), 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 8);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000006.log")), (int64_t)len);
    free(b);
    log_close(log);
}

/* Places a batch of producer 7 at sequence seq with leader epoch epoch
 * (asserting it is placed). */
static void place_seq(log_t *log, int32_t seq, int32_t epoch, uint8_t **b, log_write_t *wr)
{
    tl_tb_t t = tl_tb(2, TL_NOW - 1000 + seq);
    size_t len;
    log_append_result_t res;

    t.pid = 7;
    t.pepoch = 0;
    t.seq = seq;
    *b = tl_mkbatch(&t, &len);
    CU_ASSERT_EQUAL(log_append_place(log, *b, len, epoch, TL_NOW, &res, wr), 0);
}

/* A failed write (a full disk) fails the batches placed after it too
 * (they were written past a gap), refuses new ones until the last is
 * committed, and is then undone: file, offsets, producer state and the
 * epoch it started are as before, so the producer's retry at the same
 * sequence is taken at once, and a reopen finds exactly the committed
 * batches. */
static void test_async_failed_write(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
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
    CU_ASSERT_EQUAL(log_append_place(log, b[2], wr[2].len, 1, TL_NOW, &res, &wr[3]), 56);
    CU_ASSERT_EQUAL(wr[3].fd, -1);
    CU_ASSERT_EQUAL(log_append_commit(log, &wr[2]), 56);
    CU_ASSERT_FALSE(log_offline(log));
    CU_ASSERT_EQUAL(log_pending_writes(log), 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 2);
    CU_ASSERT_EQUAL(log_size_bytes(log), size0);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000000.log")), size0);
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
    log = tl_open_log(dir, &cfg, 0);
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
    log_config_t cfg = tl_small_cfg();
    const char *d1 = tl_fresh_dir();
    log_t *a = tl_open_log(d1, &cfg, 0);
    log_t *b = tl_open_log(tl_fresh_dir(), &cfg, 0);
    CU_ASSERT_NOT_EQUAL(log_uid(a), log_uid(b));
    uint64_t ua = log_uid(a);
    log_close(a);
    a = tl_open_log(d1, &cfg, 1);
    CU_ASSERT_NOT_EQUAL(log_uid(a), ua); /* the same place opened again */
    log_close(a);
    log_close(b);
}

int main(void)
{
    if (tl_root_init("test-log-async") < 0)
        return 1;
    lg_set_level(LG_ERROR);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("log placed appends", NULL, NULL);
    CU_add_test(s, "placed batches: offsets now, bytes at commit", test_async_place_commit);
    CU_add_test(s, "placed batch needing a roll waits", test_async_roll_waits);
    CU_add_test(s, "failed placed writes are undone", test_async_failed_write);
    CU_add_test(s, "log uid", test_async_uid);
    int rc = unit_run();
    tl_root_remove();
    return rc;
}
