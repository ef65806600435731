/* Removing data from the partition log: retention by time and by size
 * (whole segments), DeleteRecords (the log start offset) and truncation to
 * an offset. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_tlog.h"
#include "util/logging.h"

/* ---- retention and deletion ---- */

static log_t *three_segments(const char *dir, log_config_t *cfg, size_t *blen)
{
    log_t *log;
    size_t len;
    tl_tb_t t = tl_tb(1, 1000);
    uint8_t *b = tl_mkbatch(&t, &len);

    free(b);
    cfg->segment_bytes = (int64_t)(2 * len);
    log = tl_open_log(dir, cfg, 0);
    /* segments [0,2) ts 1000-1001, [2,4) ts 2000-2001, [4,5) ts 3000 */
    for (int i = 0; i < 5; i++) {
        t.ts0 = 1000 * (1 + i / 2) + i % 2;
        tl_append(log, &t, 0);
    }
    *blen = len;
    return log;
}

static void test_retention_time(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
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
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000000.log")), -1);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000000.index")), -1);
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
    log = tl_open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(log_start_offset(log), 4);
    log_close(log);
}

static void test_retention_size(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    size_t len;
    log_t *log = three_segments(dir, &cfg, &len);

    log_set_high_watermark(log, log_end_offset(log));
    cfg.retention_ms = -1;
    cfg.retention_bytes = (int64_t)(3 * len); /* 5 batches: 2 too many */
    log_set_config(log, &cfg);
    CU_ASSERT_EQUAL(log_retention(log, TL_NOW), 1);
    CU_ASSERT_EQUAL(log_start_offset(log), 2);
    CU_ASSERT_EQUAL(log_size_bytes(log), (int64_t)(3 * len));
    CU_ASSERT_EQUAL(log_retention(log, TL_NOW), 0);
    log_close(log);
}

static void test_delete_records(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
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
        log_open_args_t a = tl_args_clean(1);
        a.log_start_offset = 3;
        log = log_open(dir, &cfg, &a);
        CU_ASSERT_EQUAL(log_start_offset(log), 3);
        log_close(log);
    }
}

static void test_truncate_to(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    size_t len;
    log_t *log = three_segments(dir, &cfg, &len);
    tl_tb_t t = tl_tb(1, 9000);

    log_epoch_assign(log, 1, 3);
    CU_ASSERT_EQUAL(log_truncate_to(log, 3), 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 3);
    CU_ASSERT_EQUAL(log_segment_count(log), 2);
    CU_ASSERT_EQUAL(log_latest_epoch(log), 0);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000002.log")), (int64_t)len);
    CU_ASSERT_EQUAL(tl_append(log, &t, 2), 3);
    CU_ASSERT_EQUAL(log_truncate_to(log, 0), 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 0);
    CU_ASSERT_EQUAL(log_segment_count(log), 1);
    CU_ASSERT_EQUAL(tl_append(log, &t, 2), 0);
    log_close(log);
}

int main(void)
{
    if (tl_root_init("test-log-retain") < 0)
        return 1;
    lg_set_level(LG_ERROR);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("log retention", NULL, NULL);
    CU_add_test(s, "retention by time", test_retention_time);
    CU_add_test(s, "retention by size", test_retention_size);
    CU_add_test(s, "delete records", test_delete_records);
    CU_add_test(s, "truncate to", test_truncate_to);
    int rc = unit_run();
    tl_root_remove();
    return rc;
}
