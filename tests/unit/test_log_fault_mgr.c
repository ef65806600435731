/* Fault injection in the log manager (util/fault.h), as test_log_fault.c
 * does it for one log: its start (reading checkpoints and markers, opening
 * logs), the checkpoint files, a clean close, creating and deleting
 * partitions and a log taken offline by a failed fsync, each run with the
 * Nth I/O call failing for every N. Whatever call fails, each checkpoint
 * file holds its old contents or all of the new, the log dir is clean only
 * after a close that worked, and the next start finds every acknowledged
 * batch whole. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "log/log_mgr.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_fworld.h"
#include "tests/unit/unit_log.h"
#include "util/fault.h"
#include "util/logging.h"

/* ---- the log manager: checkpoint files and close ---- */

static const char *const ckpt_names[] = {"recovery-point-offset-checkpoint",
                                         "log-start-offset-checkpoint",
                                         "replication-offset-checkpoint"};

typedef struct mworld_s {
    char dir[320];
    const char *dirs[1];
    log_mgr_config_t mc;
    log_mgr_t *mgr;
    int64_t leo[2];
} mworld_t;

static void mw_open(mworld_t *mw)
{
    char err[256];

    mw->mgr = log_mgr_open(&mw->mc, FW_NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mw->mgr);
}

/* Two partitions with data, one of them flushed, checkpoints written. */
static void mw_init(mworld_t *mw)
{
    static int seq;
    uint8_t id[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

    memset(mw, 0, sizeof(*mw));
    snprintf(mw->dir, sizeof(mw->dir), "%s/m-%d", fw_root(), seq++);
    mw->dirs[0] = mw->dir;
    mw->mc.dirs = mw->dirs;
    mw->mc.ndirs = 1;
    mw->mc.node_id = 1;
    mw->mc.defaults = fw_small_cfg();
    mw_open(mw);
    for (int p = 0; p < 2; p++) {
        log_t *log = log_mgr_create(mw->mgr, "t", p, id, NULL, FW_NOW);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        for (int i = 0; i < 4 + p; i++) {
            size_t len;
            uint8_t *b = fw_mkbatch(i, 2, 1000 + 10 * i, -1, &len);
            log_append_result_t res;
            CU_ASSERT_EQUAL(log_append(log, b, len, 0, FW_NOW, &res), 0);
            free(b);
        }
        log_set_high_watermark(log, log_end_offset(log));
        mw->leo[p] = log_end_offset(log);
    }
    CU_ASSERT_EQUAL(log_mgr_checkpoint(mw->mgr), 0);
    CU_ASSERT_EQUAL(log_flush(log_mgr_get(mw->mgr, "t", 1), FW_NOW), 0);
}

/* After a reopen each partition has its data, every batch whole. */
static void mw_check_reopen(mworld_t *mw)
{
    mw_open(mw);
    for (int p = 0; p < 2; p++) {
        log_t *log = log_mgr_get(mw->mgr, "t", p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        CU_ASSERT_EQUAL(log_end_offset(log), mw->leo[p]);
        for (int64_t off = 0; off < mw->leo[p];) {
            log_read_result_t rr;
            uint8_t *b;
            CU_ASSERT_EQUAL_FATAL(log_read(log, off, 1, 1, INT64_MAX, &rr), 0);
            CU_ASSERT_EQUAL_FATAL(rr.first_offset, off);
            b = fw_read_region(&rr);
            CU_ASSERT(log_batch_crc_ok(b, (size_t)rr.len));
            off += 2;
            free(b);
            close(rr.fd);
        }
    }
    CU_ASSERT_EQUAL(log_mgr_close(mw->mgr, 7), 0);
    mw->mgr = NULL;
}

/* Each checkpoint file holds its previous contents or all of the new ones
 * whatever call fails, and a checkpoint that failed is written by the
 * next one. */
static void test_mgr_checkpoint(void)
{
    unsigned before = CU_get_number_of_failures();

    for (int64_t n = 1; n < FW_MAX_RUNS; n++) {
        mworld_t mw;
        char *old[3], *mid[3], *now[3], path[400];
        int64_t hit;
        int rc;

        mw_init(&mw);
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof(path), "%s/%s", mw.dir, ckpt_names[i]);
            old[i] = unit_slurp(path);
            CU_ASSERT_PTR_NOT_NULL(old[i]);
        }
        fault_fail_nth(FAULT_ANY, n, EIO);
        rc = log_mgr_checkpoint(mw.mgr);
        hit = fault_injected();
        fault_reset();
        CU_ASSERT_EQUAL(rc, hit ? -1 : 0);
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof(path), "%s/%s", mw.dir, ckpt_names[i]);
            mid[i] = unit_slurp(path);
        }
        CU_ASSERT_EQUAL(log_mgr_checkpoint(mw.mgr), 0);
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof(path), "%s/%s", mw.dir, ckpt_names[i]);
            now[i] = unit_slurp(path);
            CU_ASSERT_PTR_NOT_NULL_FATAL(mid[i]);
            CU_ASSERT(strcmp(mid[i], old[i]) == 0 || strcmp(mid[i], now[i]) == 0);
            free(old[i]);
            free(mid[i]);
            free(now[i]);
        }
        /* the flushed partition's recovery point is in the new file */
        snprintf(path, sizeof(path), "%s/%s", mw.dir, ckpt_names[0]);
        now[0] = unit_slurp(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(now[0]);
        CU_ASSERT(strstr(now[0], "t 1 10\n") != NULL);
        free(now[0]);
        log_mgr_free(mw.mgr);
        unit_rm_rf(mw.dir);
        if (CU_get_number_of_failures() > before) {
            fprintf(stderr, "\n  checkpoint: first failure at N = %lld\n", (long long)n);
            break;
        }
        if (!hit)
            break;
    }
}

/* A close that fails leaves the log dir unclean (no marker), and the next
 * open recovers every partition whole. */
static void test_mgr_close(void)
{
    unsigned before = CU_get_number_of_failures();

    for (int mode = 0; mode < 2; mode++) {
        for (int64_t n = 1; n < FW_MAX_RUNS; n++) {
            mworld_t mw;
            char path[400];
            int64_t hit;
            int rc;

            mw_init(&mw);
            if (mode == 0)
                fault_fail_nth(FAULT_ANY, n, EIO);
            else
                fault_fail_after(FAULT_ANY, n - 1, EIO);
            rc = log_mgr_close(mw.mgr, 7);
            mw.mgr = NULL;
            hit = fault_injected();
            fault_reset();
            snprintf(path, sizeof(path), "%s/.kafka_cleanshutdown", mw.dir);
            if (rc == 0)
                CU_ASSERT_EQUAL(access(path, F_OK), 0);
            mw_check_reopen(&mw);
            unit_rm_rf(mw.dir);
            if (CU_get_number_of_failures() > before) {
                fprintf(stderr, "\n  close (%s): first failure at N = %lld\n",
                        mode ? "dying" : "nth", (long long)n);
                return;
            }
            if (!hit)
                break;
        }
    }
}

/* A start that fails (reading checkpoints and markers, opening logs,
 * removing the marker) leaves the log dirs for the next start to open
 * whole. */
static void test_mgr_open(void)
{
    unsigned before = CU_get_number_of_failures();

    for (int mode = 0; mode < 2; mode++) {
        for (int64_t n = 1; n < FW_MAX_RUNS; n++) {
            mworld_t mw;
            char err[256];
            log_mgr_t *mgr;
            int64_t hit;

            mw_init(&mw);
            CU_ASSERT_EQUAL(log_mgr_close(mw.mgr, 7), 0);
            if (mode == 0)
                fault_fail_nth(FAULT_ANY, n, EIO);
            else
                fault_fail_after(FAULT_ANY, n - 1, EIO);
            mgr = log_mgr_open(&mw.mc, FW_NOW, err, sizeof(err));
            hit = fault_injected();
            fault_reset();
            if (mgr)
                log_mgr_free(mgr); /* a crash right after the start */
            mw_check_reopen(&mw);
            unit_rm_rf(mw.dir);
            if (CU_get_number_of_failures() > before) {
                fprintf(stderr, "\n  open (%s): first failure at N = %lld\n",
                        mode ? "dying" : "nth", (long long)n);
                return;
            }
            if (!hit)
                break;
        }
    }
}

/* Creating a partition either works (and the partition is there after a
 * restart) or fails leaving no directory behind, so a retry works;
 * deleting one either works or leaves it as it was, usable. */
static void test_mgr_create_delete(void)
{
    uint8_t id[16] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
    unsigned before = CU_get_number_of_failures();

    for (int64_t n = 1; n < FW_MAX_RUNS; n++) {
        mworld_t mw;
        char path[400];
        log_t *log;
        log_append_result_t res;
        int64_t hit;
        int rc;

        mw_init(&mw);
        fault_fail_nth(FAULT_ANY, n, EIO);
        log = log_mgr_create(mw.mgr, "u", 0, id, NULL, FW_NOW);
        rc = log_mgr_delete(mw.mgr, "t", 1, FW_NOW);
        hit = fault_injected();
        fault_reset();
        snprintf(path, sizeof(path), "%s/u-0", mw.dir);
        if (!log) {
            CU_ASSERT_EQUAL(access(path, F_OK), -1);
            log = log_mgr_create(mw.mgr, "u", 0, id, NULL, FW_NOW);
            CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        }
        {
            size_t len;
            uint8_t *b = fw_mkbatch(1, 2, FW_NOW, -1, &len);
            CU_ASSERT_EQUAL(log_append(log, b, len, 0, FW_NOW, &res), 0);
            if (rc < 0)
                CU_ASSERT_EQUAL(log_append(log_mgr_get(mw.mgr, "t", 1), b, len, 0, FW_NOW, &res),
                                0);
            free(b);
        }
        snprintf(path, sizeof(path), "%s/t-1", mw.dir);
        CU_ASSERT_EQUAL(access(path, F_OK), rc == 0 ? -1 : 0);
        CU_ASSERT_EQUAL(log_mgr_get(mw.mgr, "t", 1) == NULL, rc == 0);
        CU_ASSERT_EQUAL(log_mgr_close(mw.mgr, 7), 0);
        mw_open(&mw);
        log = log_mgr_get(mw.mgr, "u", 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        CU_ASSERT_EQUAL(log_end_offset(log), 2);
        CU_ASSERT_EQUAL(log_mgr_topic_id(mw.mgr, "u", 0, id), 1);
        log = log_mgr_get(mw.mgr, "t", 1);
        CU_ASSERT_EQUAL(log == NULL, rc == 0);
        if (log)
            CU_ASSERT_EQUAL(log_end_offset(log), mw.leo[1] + 2);
        log_mgr_free(mw.mgr);
        unit_rm_rf(mw.dir);
        if (CU_get_number_of_failures() > before) {
            fprintf(stderr, "\n  create/delete: first failure at N = %lld\n", (long long)n);
            return;
        }
        if (!hit)
            break;
    }
}

/* A new partition whose directory entry cannot be made durable (the fsync
 * of the log dir) is not created: a crash could lose it after producers
 * were told it exists. */
static void test_mgr_create_unsynced(void)
{
    uint8_t id[16] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
    mworld_t mw;
    char path[400];
    int64_t syncs;

    mw_init(&mw);
    /* the fsyncs of a creation: partition.metadata's tmp file, its
     * directory, then the log dir; fail the last */
    fault_count_calls();
    CU_ASSERT_PTR_NOT_NULL(log_mgr_create(mw.mgr, "v", 0, id, NULL, FW_NOW));
    syncs = fault_calls(FAULT_SYNC);
    fault_reset();
    CU_ASSERT_EQUAL(syncs, 3);
    fault_fail_nth(FAULT_SYNC, syncs, EIO);
    CU_ASSERT_PTR_NULL(log_mgr_create(mw.mgr, "v", 1, id, NULL, FW_NOW));
    CU_ASSERT_EQUAL(fault_injected(), 1);
    fault_reset();
    snprintf(path, sizeof(path), "%s/v-1", mw.dir);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    CU_ASSERT_PTR_NULL(log_mgr_get(mw.mgr, "v", 1));
    log_mgr_free(mw.mgr);
    unit_rm_rf(mw.dir);
}

/* A log taken offline by a failed fsync leaves its log dir without the
 * clean-shutdown marker, so the next start recovers it. */
static void test_mgr_offline_log(void)
{
    mworld_t mw;
    char path[400];
    log_t *log;
    log_append_result_t res;
    size_t len;
    uint8_t *b;

    mw_init(&mw);
    log = log_mgr_get(mw.mgr, "t", 0);
    b = fw_mkbatch(77, 2, FW_NOW, -1, &len);
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, FW_NOW, &res), 0);
    free(b);
    mw.leo[0] += 2;
    fault_fail_nth(FAULT_SYNC, 1, EIO);
    CU_ASSERT_EQUAL(log_flush(log, FW_NOW), -1);
    fault_reset();
    CU_ASSERT(log_offline(log));
    CU_ASSERT_EQUAL(log_mgr_close(mw.mgr, 7), -1);
    snprintf(path, sizeof(path), "%s/.kafka_cleanshutdown", mw.dir);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    mw_check_reopen(&mw);
    unit_rm_rf(mw.dir);
}

int main(void)
{
    /* thousands of small logs, each fsynced: tmpfs spares the disk */
    if (fw_root_init("test-log-fault-mgr") < 0)
        return 1;
    lg_set_level(LG_ERROR + 1);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("log manager faults", NULL, NULL);
    CU_add_test(s, "log manager checkpoints", test_mgr_checkpoint);
    CU_add_test(s, "log manager close", test_mgr_close);
    CU_add_test(s, "log manager with an offline log", test_mgr_offline_log);
    CU_add_test(s, "log manager start", test_mgr_open);
    CU_add_test(s, "log manager create and delete", test_mgr_create_delete);
    CU_add_test(s, "log manager create, log dir not synced", test_mgr_create_unsynced);
    int rc = unit_run();
    fw_root_remove();
    return rc;
}
