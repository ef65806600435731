/* Reopening the partition log: after a clean close, after a crash that
 * left a torn tail or a bad CRC (recovery cuts there and drops the later
 * segments), with corrupt indexes under a clean marker (rebuilt), after a
 * write that failed (the file size limit, as a full disk), and kill -9 at
 * a random moment of an append loop. */
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_tlog.h"
#include "util/logging.h"

/* ---- reopen and recovery ---- */

static void test_reopen_clean(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    size_t len0, len1;
    uint8_t *f0, *f1;

    for (int i = 0; i < 20; i++) {
        tl_tb_t t = tl_tb(3, 1000 + i);
        tl_append(log, &t, 0);
    }
    log_close(log);
    f0 = tl_read_all(tl_path_in(dir, "00000000000000000000.log"), &len0);
    log = tl_open_log(dir, &cfg, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log_end_offset(log), 60);
    CU_ASSERT_EQUAL(log_recovery_point(log), 60);
    {
        tl_tb_t t = tl_tb(1, 5000);
        CU_ASSERT_EQUAL(tl_append(log, &t, 0), 60);
    }
    log_close(log);
    f1 = tl_read_all(tl_path_in(dir, "00000000000000000000.log"), &len1);
    CU_ASSERT(len1 > len0 && memcmp(f0, f1, len0) == 0);
    free(f0);
    free(f1);
}

/* Kill -9 mid-write leaves half a batch; a flipped bit leaves a bad CRC.
 * Either way the log comes back with exactly the good batches and the
 * same indexes as if the bad ones had never been written. */
static void crash_case(int flip)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log;
    size_t ilen_good, ilen, llen;
    uint8_t *ix_good, *ix;
    int64_t size_good;
    char logp[512], idxp[512];

    cfg.index_interval_bytes = 100;
    log = tl_open_log(dir, &cfg, 0);
    for (int i = 0; i < 30; i++) {
        tl_tb_t t = tl_tb(2, 1000 + i);
        tl_append(log, &t, 0);
    }
    log_close(log);
    snprintf(logp, sizeof(logp), "%s", tl_path_in(dir, "00000000000000000000.log"));
    snprintf(idxp, sizeof(idxp), "%s", tl_path_in(dir, "00000000000000000000.index"));
    ix_good = tl_read_all(idxp, &ilen_good);
    size_good = tl_file_size(logp);

    /* two more batches, then damage the last one */
    log = tl_open_log(dir, &cfg, 1);
    {
        tl_tb_t t = tl_tb(2, 2000);
        tl_append(log, &t, 0);
        tl_append(log, &t, 0);
    }
    log_close(log);
    llen = (size_t)tl_file_size(logp);
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
        log = tl_open_log(dir, &cfg, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        CU_ASSERT_EQUAL(log_end_offset(log), 62);
        CU_ASSERT_EQUAL(tl_file_size(logp), size_good + (int64_t)second_len);
    }
    /* indexes rebuilt as they were; then keep appending */
    {
        tl_tb_t t = tl_tb(2, 3000);
        CU_ASSERT_EQUAL(tl_append(log, &t, 0), 62);
    }
    log_close(log);
    {
        int64_t lsize = tl_file_size(logp);
        CU_ASSERT_EQUAL(lsize, (int64_t)llen);
    }
    ix = tl_read_all(idxp, &ilen);
    CU_ASSERT(ilen >= ilen_good);
    CU_ASSERT(memcmp(ix, ix_good, ilen_good) == 0);
    free(ix);
    free(ix_good);
    /* a clean reopen reads all 64 offsets */
    log = tl_open_log(dir, &cfg, 1);
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
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log;
    size_t len;
    tl_tb_t t = tl_tb(1, 1000);
    uint8_t *b = tl_mkbatch(&t, &len);

    free(b);
    cfg.segment_bytes = (int64_t)(2 * len);
    log = tl_open_log(dir, &cfg, 0);
    for (int i = 0; i < 6; i++)
        tl_append(log, &t, 0);
    CU_ASSERT_EQUAL(log_segment_count(log), 3);
    log_close(log);
    /* corrupt the second batch of segment 2 */
    {
        int fd = open(tl_path_in(dir, "00000000000000000002.log"), O_RDWR);
        uint8_t c = 0xff;
        pwrite(fd, &c, 1, (off_t)(len + 30));
        close(fd);
    }
    {
        log_open_args_t a = tl_args_clean(0);
        a.recovery_point = 2;
        log = log_open(dir, &cfg, &a);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    CU_ASSERT_EQUAL(log_end_offset(log), 3);
    CU_ASSERT_EQUAL(log_segment_count(log), 2);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000004.log")), -1);
    CU_ASSERT_EQUAL(tl_append(log, &t, 0), 3);
    log_close(log);
}

/* Corrupt indexes under a clean shutdown marker are rebuilt too. */
static void test_bad_index_rebuilt(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log;
    char idxp[512];
    size_t l0, l1;
    uint8_t *i0, *i1;

    cfg.index_interval_bytes = 0;
    log = tl_open_log(dir, &cfg, 0);
    for (int i = 0; i < 10; i++) {
        tl_tb_t t = tl_tb(1, 1000 + i);
        tl_append(log, &t, 0);
    }
    log_roll(log, TL_NOW);
    log_close(log);
    snprintf(idxp, sizeof(idxp), "%s", tl_path_in(dir, "00000000000000000000.index"));
    i0 = tl_read_all(idxp, &l0);
    CU_ASSERT_EQUAL(l0, 72);
    /* garbage past the entries, and a size that is not whole entries */
    truncate(idxp, 83);
    log = tl_open_log(dir, &cfg, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    log_close(log);
    i1 = tl_read_all(idxp, &l1);
    CU_ASSERT_EQUAL(l1, 72);
    CU_ASSERT(memcmp(i0, i1, 72) == 0);
    free(i1);
    /* missing index */
    unlink(idxp);
    log = tl_open_log(dir, &cfg, 1);
    log_close(log);
    i1 = tl_read_all(idxp, &l1);
    CU_ASSERT_EQUAL_FATAL(l1, 72);
    CU_ASSERT(memcmp(i0, i1, 72) == 0);
    free(i1);
    free(i0);
}

/* ---- failures ---- */

/* A write that fails (here: the file size limit, as a full disk would)
 * leaves no partial batch behind, and the log goes on at the same offset
 * once space is back. */
static void test_append_io_failure(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    tl_tb_t t = tl_tb(1, 1000);
    size_t len;
    uint8_t *b;
    log_append_result_t res;
    struct rlimit old, lim;
    int64_t size;

    tl_append(log, &t, 0);
    size = tl_file_size(tl_path_in(dir, "00000000000000000000.log"));
    t.vsize = 5000;
    b = tl_mkbatch(&t, &len);
    signal(SIGXFSZ, SIG_IGN);
    getrlimit(RLIMIT_FSIZE, &old);
    lim = old;
    lim.rlim_cur = (rlim_t)(size + 100) > 4096 ? (rlim_t)(size + 100) : 4096;
    setrlimit(RLIMIT_FSIZE, &lim);
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, TL_NOW, &res), 56);
    setrlimit(RLIMIT_FSIZE, &old);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, "00000000000000000000.log")), size);
    CU_ASSERT_EQUAL(log_end_offset(log), 1);
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, TL_NOW, &res), 0);
    CU_ASSERT_EQUAL(res.base_offset, 1);
    free(b);
    log_close(log);
    log = tl_open_log(dir, &cfg, 0);
    CU_ASSERT_EQUAL(log_end_offset(log), 2);
    log_close(log);
}

/* kill -9 at a random moment of an append loop: the log recovers to at
 * least every append that had returned, and every batch in it is whole. */
static void test_kill9_loop(void)
{
    log_config_t cfg = tl_small_cfg();

    cfg.segment_bytes = 20000;
    cfg.index_interval_bytes = 300;
    for (int round = 0; round < 6; round++) {
        const char *dir = tl_fresh_dir();
        int fds[2];
        pid_t pid;
        int64_t acked = -1, v;
        log_t *log;

        CU_ASSERT_FATAL(pipe(fds) == 0);
        pid = fork();
        if (pid == 0) {
            close(fds[0]);
            log = tl_open_log(dir, &cfg, 0);
            for (int i = 0;; i++) {
                tl_tb_t t = tl_tb(1 + i % 5, 1000 + i);
                size_t len;
                uint8_t *b = tl_mkbatch(&t, &len);
                log_append_result_t res;
                if (log_append(log, b, len, 0, TL_NOW, &res) != 0)
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
        log = tl_open_log(dir, &cfg, 0);
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
                p = tl_read_region(&rr);
                CU_ASSERT(log_batch_crc_ok(p, (size_t)rr.len));
                off += tl_be32(p + 23) + 1;
                free(p);
                close(rr.fd);
            }
        }
        log_close(log);
    }
}

int main(void)
{
    if (tl_root_init("test-log-recover") < 0)
        return 1;
    lg_set_level(LG_ERROR);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("log recovery", NULL, NULL);
    CU_add_test(s, "reopen after clean close", test_reopen_clean);
    CU_add_test(s, "recover torn tail", test_recover_torn_tail);
    CU_add_test(s, "recover bad crc", test_recover_bad_crc);
    CU_add_test(s, "recover drops later segments", test_recover_drops_later_segments);
    CU_add_test(s, "bad index rebuilt", test_bad_index_rebuilt);
    CU_add_test(s, "append I/O failure", test_append_io_failure);
    CU_add_test(s, "kill -9 loop", test_kill9_loop);
    int rc = unit_run();
    tl_root_remove();
    return rc;
}
