/* The leader epoch checkpoint's durability: written without an fsync
 * when the cache changes (a new epoch appended or assigned, a
 * truncation), fsynced by the log's next flush before its recovery point
 * passes the batches it covers; after a crash that lost the rewrite (the
 * old file back) the recovery puts the entries of the batches past the
 * recovery point back, and a file cut short makes the open read every
 * batch. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_log.h"
#include "util/fault.h"
#include "util/logging.h"

#define NOW 1700000000000LL

static char tmpdir[256];

static const char *fresh_dir(void)
{
    static int n;
    static char dir[300];
    snprintf(dir, sizeof(dir), "%s/e-%d", tmpdir, n++);
    return dir;
}

static char *ckpt_path(const char *dir)
{
    static char p[512];
    snprintf(p, sizeof(p), "%s/leader-epoch-checkpoint", dir);
    return p;
}

static log_t *open_at(const char *dir, int clean, int64_t recovery_point)
{
    log_config_t c;
    log_open_args_t a = {"t", 0, recovery_point, -1, -1, clean, NOW};
    log_config_defaults(&c);
    return log_open(dir, &c, &a);
}

static void value(buf_t *out, int i, const void *arg)
{
    (void)arg;
    buf_put_i8(out, (int8_t)('a' + i));
}

/* Appends a batch of two records at epoch. */
static void append(log_t *log, int32_t epoch)
{
    unit_batch_t ub = {2, NULL, NOW, 1, -1, -1, -1, value, NULL};
    size_t len;
    uint8_t *b = unit_batch(&ub, &len);
    log_append_result_t res;
    CU_ASSERT_EQUAL(log_append(log, b, len, epoch, NOW, &res), 0);
    free(b);
}

static void write_file(const char *path, const char *text)
{
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(write(fd, text, strlen(text)), (ssize_t)strlen(text));
    close(fd);
}

/* Epochs 0 at 0 and 1 at 4, in the cache and in the file. */
static void check_epochs(log_t *log, const char *dir)
{
    int64_t end;
    int32_t ep;
    char *text;

    CU_ASSERT_EQUAL(log_latest_epoch(log), 1);
    log_epoch_end_offset(log, 0, &end, &ep);
    CU_ASSERT_EQUAL(ep, 0);
    CU_ASSERT_EQUAL(end, 4);
    text = unit_slurp(ckpt_path(dir));
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_STRING_EQUAL(text, "0\n2\n0 0\n1 4\n");
    free(text);
}

/* No fsync when an epoch begins; one flush syncs the file (and its
 * directory), the next has nothing of it left to sync. */
static void test_no_sync_on_new_epoch(void)
{
    const char *dir = fresh_dir();
    log_t *log = open_at(dir, 1, 0);
    int64_t syncs;

    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    append(log, 0);
    CU_ASSERT_EQUAL(log_flush(log, NOW), 0);
    fault_count_calls();
    append(log, 0);
    append(log, 1);
    CU_ASSERT_EQUAL(log_epoch_assign(log, 2, log_end_offset(log)), 0);
    CU_ASSERT_EQUAL(fault_calls(FAULT_SYNC), 0);
    CU_ASSERT(fault_calls(FAULT_WRITE) > 0);
    fault_reset();
    fault_count_calls();
    CU_ASSERT_EQUAL(log_flush(log, NOW), 0);
    syncs = fault_calls(FAULT_SYNC);
    fault_reset();
    /* the segment (small batches: no index entries), the checkpoint, the
     * directory (its rename) */
    CU_ASSERT_EQUAL(syncs, 3);
    fault_count_calls();
    append(log, 2);
    CU_ASSERT_EQUAL(log_flush(log, NOW), 0);
    CU_ASSERT_EQUAL(fault_calls(FAULT_SYNC), 1); /* the segment alone */
    fault_reset();
    CU_ASSERT_EQUAL(log_close(log), 0);
}

/* The checkpoint's sync is part of the flush: when it fails (the second
 * sync, after the segment's), the flush fails and the recovery point
 * stays below the batches of the epoch it would have covered. */
static void test_failed_sync_keeps_recovery_point(void)
{
    const char *dir = fresh_dir();
    log_t *log = open_at(dir, 1, 0);
    int64_t rp;

    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    append(log, 0);
    CU_ASSERT_EQUAL(log_flush(log, NOW), 0);
    rp = log_recovery_point(log);
    append(log, 1);
    fault_fail_nth(FAULT_SYNC, 2, EIO);
    CU_ASSERT_EQUAL(log_flush(log, NOW), -1);
    CU_ASSERT_EQUAL(fault_injected(), 1);
    fault_reset();
    CU_ASSERT_EQUAL(log_recovery_point(log), rp);
    CU_ASSERT(log_offline(log));
    log_free(log);
}

/* A crash lost the rewrite that epoch 1 made (the file as the last flush
 * left it): the recovery from the recovery point finds epoch 1 again. */
static void test_lost_rewrite_recovered(void)
{
    const char *dir = fresh_dir();
    log_t *log = open_at(dir, 1, 0);
    int64_t rp;

    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    append(log, 0);
    append(log, 0);
    CU_ASSERT_EQUAL(log_flush(log, NOW), 0);
    rp = log_recovery_point(log);
    CU_ASSERT_EQUAL(rp, 4);
    append(log, 1);
    log_free(log); /* no close: a crash */
    write_file(ckpt_path(dir), "0\n1\n0 0\n");
    log = open_at(dir, 0, rp);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    check_epochs(log, dir);
    CU_ASSERT_EQUAL(log_end_offset(log), 6);
    CU_ASSERT_EQUAL(log_close(log), 0);
}

/* A checkpoint cut short is malformed: the open reads every batch, even
 * after a clean shutdown, and writes the file again. */
static void test_cut_short_rebuilt(void)
{
    const char *dir = fresh_dir();
    log_t *log = open_at(dir, 1, 0);

    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    append(log, 0);
    append(log, 0);
    append(log, 1);
    CU_ASSERT_EQUAL(log_close(log), 0);
    write_file(ckpt_path(dir), "0\n2\n0 0\n");
    log = open_at(dir, 1, 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    check_epochs(log, dir);
    CU_ASSERT_EQUAL(log_close(log), 0);
    write_file(ckpt_path(dir), "");
    log = open_at(dir, 1, 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    check_epochs(log, dir);
    CU_ASSERT_EQUAL(log_close(log), 0);
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/strand-test-epochs-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    lg_set_level(LG_ERROR);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("log epochs", NULL, NULL);
    CU_add_test(s, "no fsync when an epoch begins", test_no_sync_on_new_epoch);
    CU_add_test(s, "a failed checkpoint sync keeps the recovery point",
                test_failed_sync_keeps_recovery_point);
    CU_add_test(s, "a lost rewrite is recovered", test_lost_rewrite_recovered);
    CU_add_test(s, "a checkpoint cut short is rebuilt", test_cut_short_rebuilt);
    int rc = unit_run();
    unit_rm_rf(tmpdir);
    return rc;
}
