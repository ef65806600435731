/* Idempotent-producer state in the partition log: duplicates of retries,
 * epoch fencing, sequence wrap, the exact bytes of the snapshot files,
 * state after a crash (snapshot plus replay of the tail) and expiry. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_tlog.h"
#include "util/crc32c.h"
#include "util/logging.h"

/* ---- producer state ---- */

static int16_t append_p(log_t *log, int64_t pid, int16_t epoch, int32_t seq, int n,
                        log_append_result_t *res)
{
    tl_tb_t t = tl_tb(n, TL_NOW); /* producers idle for a day expire */
    size_t len;
    uint8_t *b;
    int16_t err;

    t.pid = pid;
    t.pepoch = epoch;
    t.seq = seq;
    b = tl_mkbatch(&t, &len);
    err = log_append(log, b, len, 0, TL_NOW, res);
    free(b);
    return err;
}

static void test_producer_dedup(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
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
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
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
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
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
    0, 0, 0, 0, 0, 0, 0, 0, /* timestamp TL_NOW + 2, checked separately */
    0xff, 0xff, 0xff, 0xff, /* coordinator epoch */
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, /* no transaction */
};

static void test_producer_snapshots(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    log_append_result_t res;
    size_t len;
    uint8_t *snap;

    CU_ASSERT_EQUAL(append_p(log, 42, 2, 0, 3, &res), 0);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 3, 3, &res), 0);
    CU_ASSERT_EQUAL(log_close(log), 0);
    snap = tl_read_all(tl_path_in(dir, "00000000000000000006.snapshot"), &len);
    CU_ASSERT_EQUAL_FATAL(len, sizeof(snapshot_expected));
    CU_ASSERT(memcmp(snap, snapshot_expected, 2) == 0);
    CU_ASSERT(memcmp(snap + 6, snapshot_expected + 6, 30) == 0);
    CU_ASSERT_EQUAL(tl_be64(snap + 36), TL_NOW + 2);
    CU_ASSERT(memcmp(snap + 44, snapshot_expected + 44, 12) == 0);
    CU_ASSERT_EQUAL((uint32_t)tl_be32(snap + 2), crc32c(0, snap + 6, len - 6));
    free(snap);

    /* after a clean reopen the last batch is still known */
    log = tl_open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 3, 3, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(res.base_offset, 3);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 7, 1, &res), 45);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 6, 1, &res), 0);
    CU_ASSERT_EQUAL(log_close(log), 0);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000007.snapshot")), 56);

    /* snapshots lost: rebuilt from the log, all 5 batches of history */
    unlink(tl_path_in(dir, "00000000000000000006.snapshot"));
    unlink(tl_path_in(dir, "00000000000000000007.snapshot"));
    log = tl_open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 0, 3, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(res.base_offset, 0);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 6, 1, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(res.base_offset, 6);
    log_close(log);

    /* a corrupt snapshot is ignored and the state rebuilt */
    {
        int fd = open(tl_path_in(dir, "00000000000000000007.snapshot"), O_RDWR);
        uint8_t c = 0x55;
        CU_ASSERT(fd >= 0);
        pwrite(fd, &c, 1, 20);
        close(fd);
    }
    log = tl_open_log(dir, &cfg, 1);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 3, 3, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(append_p(log, 42, 2, 7, 1, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 0);
    log_close(log);
}

/* After an unclean shutdown, state = snapshot + replay of the tail. */
static void test_producer_replay_after_crash(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    log_append_result_t res;

    CU_ASSERT_EQUAL(append_p(log, 1, 0, 0, 1, &res), 0);
    log_roll(log, TL_NOW); /* snapshot at 1 */
    CU_ASSERT_EQUAL(append_p(log, 1, 0, 1, 1, &res), 0);
    CU_ASSERT_EQUAL(append_p(log, 2, 0, 0, 1, &res), 0);
    log_free(log); /* crash: no close, no snapshot at 3 */
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000003.snapshot")), -1);
    log = tl_open_log(dir, &cfg, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log_end_offset(log), 3);
    CU_ASSERT_EQUAL(append_p(log, 1, 0, 1, 1, &res), 0);
    CU_ASSERT_EQUAL(res.duplicate, 1);
    CU_ASSERT_EQUAL(res.base_offset, 1);
    CU_ASSERT_EQUAL(append_p(log, 2, 0, 1, 1, &res), 0);
    CU_ASSERT_EQUAL(res.base_offset, 3);
    CU_ASSERT(tl_file_size(tl_path_in(dir, "00000000000000000003.snapshot")) > 0);
    log_close(log);
}

static void test_producer_expiry(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    log_append_result_t res;
    log_producer_info_t pi;

    CU_ASSERT_EQUAL(append_p(log, 1, 0, 0, 1, &res), 0); /* timestamp TL_NOW */
    CU_ASSERT_EQUAL(log_expire_producers(log, TL_NOW + 86400000 - 1), 0);
    CU_ASSERT_EQUAL(log_expire_producers(log, TL_NOW + 86400000), 1);
    CU_ASSERT_EQUAL(log_producer_lookup(log, 1, &pi), 0);
    log_close(log);
}

int main(void)
{
    if (tl_root_init("test-log-pstate") < 0)
        return 1;
    lg_set_level(LG_ERROR);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("log producer state", NULL, NULL);
    CU_add_test(s, "producer dedup", test_producer_dedup);
    CU_add_test(s, "producer fencing", test_producer_fencing);
    CU_add_test(s, "producer sequence wrap", test_producer_seq_wrap);
    CU_add_test(s, "producer snapshots", test_producer_snapshots);
    CU_add_test(s, "producer replay after crash", test_producer_replay_after_crash);
    CU_add_test(s, "producer expiry", test_producer_expiry);
    int rc = unit_run();
    tl_root_remove();
    return rc;
}
