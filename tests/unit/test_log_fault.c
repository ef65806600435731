/* Fault injection in the partition log (util/fault.h), SQLite's way: each
 * scenario (appends with rolls and a new leader epoch, explicit rolls,
 * flushes, epoch assignment, retention, DeleteRecords, truncation, close,
 * open with recovery) is run once to count its I/O calls, then again for
 * N = 1, 2, ... with the Nth call failing, until a run injects nothing.
 * Each run checks:
 *   - the error each operation returned (KAFKA_STORAGE_ERROR 56 or -1),
 *     and that a failed operation left the log as it was: LEO, every batch
 *     byte for byte, segment files no longer than their batches, every
 *     offset and time index entry, the epoch cache against its file, the
 *     snapshot files against the producer state;
 *   - that the log works again once the disk does (an append succeeds), or
 *     that it is offline and refuses appends, reads, rolls and flushes;
 *   - that after a reopen (clean close, or a crash: the log freed without
 *     writing anything) the log holds exactly the batches that were
 *     acknowledged, in order, whole, with consistent indexes, epochs and
 *     producer state (the producer's next batch is accepted).
 * The loops run with EIO, ENOSPC, short writes, bursts of three failures
 * (the undo fails too, then the disk recovers) and a dying disk (every call
 * fails from the Nth on). A few regression tests pin single guarantees
 * (fsyncgate, a short append, a roll's leftover segment, index syncs).
 * The world (the model and its checks) is unit_fworld.c; the log manager
 * gets the same treatment in test_log_fault_mgr.c, the fault module
 * itself is tested in test_fault.c. ASan checks for leaks and bad
 * accesses along every failure path. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_int.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_fworld.h"
#include "tests/unit/unit_log.h"
#include "util/fault.h"
#include "util/logging.h"

/* ---- the fault loop ---- */

typedef struct scenario_s {
    const char *name;
    void (*setup)(fw_world_t *w);  /* runs unarmed */
    void (*run)(fw_world_t *w);    /* runs armed; checks each operation */
} scenario_t;

typedef enum {
    MODE_NTH_EIO,
    MODE_NTH_ENOSPC,
    MODE_SHORT_WRITE,
    MODE_BURST,
    MODE_DYING
} fault_mode_t;

static const char *const mode_names[] = {"fail Nth call (EIO)", "fail Nth call (ENOSPC)",
                                         "short Nth write", "calls N to N+2 (burst)",
                                         "every call from the Nth"};

static void arm(fault_mode_t mode, int64_t n)
{
    switch (mode) {
    case MODE_NTH_EIO:
        fault_fail_nth(FAULT_ANY, n, EIO);
        break;
    case MODE_NTH_ENOSPC:
        fault_fail_nth(FAULT_ANY, n, ENOSPC);
        break;
    case MODE_SHORT_WRITE:
        fault_short_write_nth(n, ENOSPC);
        break;
    case MODE_BURST: {
        /* the failure, the undo failing too, then the disk recovers */
        fault_rule_t r = {.op = FAULT_ANY, .nth = n, .count = 3, .err = EIO};
        fault_add(&r);
        break;
    }
    case MODE_DYING:
        fault_fail_after(FAULT_ANY, n - 1, EIO);
        break;
    }
}

/* Runs the scenario for N = 1.. until a run injects no fault; returns the
 * number of I/O calls of a clean run (> 0, or the scenario tested nothing). */
static int64_t run_faults(const scenario_t *sc, fault_mode_t mode)
{
    unsigned before = CU_get_number_of_failures();
    fw_world_t w;
    int64_t calls, n;

    fw_init(&w);
    sc->setup(&w);
    fault_count_calls();
    sc->run(&w);
    calls = mode == MODE_SHORT_WRITE ? fault_calls(FAULT_WRITE) : fault_calls(FAULT_ANY);
    fault_reset();
    fw_done(&w);
    for (n = 1; n <= FW_MAX_RUNS; n++) {
        int64_t hit;
        fw_init(&w);
        sc->setup(&w);
        arm(mode, n);
        sc->run(&w);
        hit = fault_injected();
        fault_reset();
        if (hit) {
            fw_check_alive(&w);
            fw_reopen(&w, (int)(n % 2));
        }
        fw_done(&w);
        if (CU_get_number_of_failures() > before) {
            fprintf(stderr, "\n  %s: %s: first failure at N = %lld of %lld\n", sc->name,
                    mode_names[mode], (long long)n, (long long)calls);
            break;
        }
        if (!hit)
            break;
    }
    CU_ASSERT(calls > 0);
    CU_ASSERT(n <= FW_MAX_RUNS);
    if (getenv("FAULT_VERBOSE"))
        fprintf(stderr, "\n    %s, %s: %lld calls, %lld runs", sc->name, mode_names[mode],
                (long long)calls, (long long)n);
    return calls;
}

/* ---- scenarios ---- */

static void setup_none(fw_world_t *w)
{
    (void)w;
}

static void setup_some(fw_world_t *w)
{
    for (int i = 0; i < 12; i++)
        CU_ASSERT_EQUAL_FATAL(fw_append(w, 2, 0, i % 2), 0);
    CU_ASSERT_EQUAL_FATAL(log_flush(w->log, FW_NOW), 0);
}

/* Appends that roll (segment, snapshot and index files), with a new
 * leader epoch half way (epoch checkpoint), producer and plain batches. */
static void run_appends(fw_world_t *w)
{
    for (int i = 0; i < 10; i++)
        if (fw_append(w, 1 + i % 3, i < 5 ? 0 : 1, i % 2) == 0 && !log_offline(w->log))
            fw_check_log(w);
}

static void run_rolls(fw_world_t *w)
{
    for (int i = 0; i < 3; i++) {
        int16_t err = log_roll(w->log, FW_NOW);
        CU_ASSERT(err == 0 || err == 56);
        if (log_offline(w->log))
            return;
        fw_check_log(w);
        fw_append(w, 1, 0, 1);
    }
}

static void run_flush(fw_world_t *w)
{
    for (int i = 0; i < 3; i++) {
        int64_t rp = log_recovery_point(w->log);
        fw_append(w, 2, 0, 1);
        if (log_flush(w->log, FW_NOW) < 0) {
            /* fsyncgate: never success later, nothing claimed durable */
            CU_ASSERT(log_offline(w->log));
            CU_ASSERT_EQUAL(log_recovery_point(w->log), rp);
            CU_ASSERT_EQUAL(log_flush(w->log, FW_NOW), -1);
            return;
        }
        CU_ASSERT_EQUAL(log_recovery_point(w->log), w->leo);
        if (log_flush_rolled(w->log) < 0) {
            CU_ASSERT(log_offline(w->log));
            return;
        }
    }
}

static void run_epochs(fw_world_t *w)
{
    for (int32_t e = 1; e <= 3; e++) {
        int32_t before = log_latest_epoch(w->log);
        int rc = log_epoch_assign(w->log, e, w->leo);
        int32_t now = log_latest_epoch(w->log);
        /* failed: as before, or (only the directory fsync failed) as the
         * file already says; the file check below tells which */
        CU_ASSERT(rc == 0 ? now == e : now == before || now == e);
        fault_pause();
        fw_check_epoch_file(w->log);
        fault_resume();
        if (rc == 0)
            fw_append(w, 1, e, 0);
    }
}

static void setup_retention(fw_world_t *w)
{
    setup_some(w);
    log_set_high_watermark(w->log, w->leo);
}

static void run_retention(fw_world_t *w)
{
    int segs = log_segment_count(w->log);
    int n;

    w->log->cfg.retention_bytes = 0;
    n = log_retention(w->log, FW_NOW);
    CU_ASSERT(n == -1 || n == segs - 1);
    /* whatever was deleted, the log starts at its first segment */
    CU_ASSERT_EQUAL(log_start_offset(w->log), w->log->segs[0]->base_offset);
    fw_model_trim(w, log_start_offset(w->log), w->leo);
    fw_check_log(w);
    if (n == -1) {
        fault_disarm();
        n = log_retention(w->log, FW_NOW);
        CU_ASSERT(n >= 1);
        fw_model_trim(w, log_start_offset(w->log), w->leo);
    }
    CU_ASSERT_EQUAL(log_segment_count(w->log), 1);
}

static void run_delete_records(fw_world_t *w)
{
    int64_t to = w->m[w->n / 2].base + 1; /* inside a batch of a later segment */

    CU_ASSERT_EQUAL(log_delete_records(w->log, to), 0);
    CU_ASSERT_EQUAL(log_start_offset(w->log), to);
    fw_model_trim(w, to, w->leo);
    fw_check_log(w);
}

/* Truncation cannot be undone half way: either it is whole, or the log is
 * offline and reopens as some prefix of the model, at least as long as
 * asked for. */
static void truncate_to(fw_world_t *w, int64_t to)
{
    int64_t old_leo = w->leo, rp, lso, leo;
    log_open_args_t a;
    int rc = log_truncate_to(w->log, to), boundary = to == w->lso;

    if (rc == 0) {
        fw_model_trim(w, w->lso, to);
        fw_resync_seq(w);
        fw_check_log(w);
        return;
    }
    CU_ASSERT(log_offline(w->log));
    /* how far did it get? reopen as after a crash */
    rp = log_recovery_point(w->log);
    lso = log_start_offset(w->log);
    a = fw_open_args(rp, lso, 0);
    fault_disarm();
    log_free(w->log);
    w->log = log_open(w->dir, &w->cfg, &a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->log);
    leo = log_end_offset(w->log);
    CU_ASSERT(leo >= to && leo <= old_leo);
    for (int i = 0; i < w->n; i++)
        boundary |= w->m[i].last + 1 == leo;
    CU_ASSERT(boundary);
    fw_model_trim(w, w->lso, leo);
    fw_resync_seq(w);
    log_set_high_watermark(w->log, leo);
    fw_check_log(w);
    fw_check_state(w);
}

static void run_truncate(fw_world_t *w)
{
    truncate_to(w, w->m[w->n / 2].base);
}

static void run_truncate_all(fw_world_t *w)
{
    truncate_to(w, w->lso);
}

/* A clean close that fails must leave a log the next open recovers. */
static void run_close(fw_world_t *w)
{
    int rc = log_close(w->log);
    log_open_args_t a = fw_open_args(0, w->lso, rc == 0);

    w->log = NULL;
    fault_disarm();
    w->log = log_open(w->dir, &w->cfg, &a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->log);
    fw_check_log(w);
    fw_check_state(w);
}

/* Opening a log that needs recovery (a torn tail after a crash): a failed
 * open must leave the files so that the next open still recovers every
 * whole batch. */
static void setup_torn(fw_world_t *w)
{
    char path[400];
    int fd;
    int64_t active;

    setup_some(w);
    fw_append(w, 3, 0, 1);
    active = log_active(w->log)->base_offset;
    log_free(w->log);
    w->log = NULL;
    snprintf(path, sizeof(path), "%s/%020lld.log", w->dir, (long long)active);
    fd = open(path, O_WRONLY | O_APPEND);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(write(fd, w->m[0].bytes, 30), 30); /* a torn batch */
    close(fd);
}

static void run_open(fw_world_t *w)
{
    log_open_args_t a = fw_open_args(0, 0, 0);

    w->log = log_open(w->dir, &w->cfg, &a);
    if (!w->log) {
        fault_disarm();
        w->log = log_open(w->dir, &w->cfg, &a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w->log);
    }
    log_set_high_watermark(w->log, log_end_offset(w->log));
    fw_check_log(w);
    fw_check_state(w);
}

static const scenario_t scenarios[] = {
    {"append and roll", setup_none, run_appends},
    {"append to a log with data", setup_some, run_appends},
    {"roll", setup_some, run_rolls},
    {"flush", setup_none, run_flush},
    {"leader epochs", setup_some, run_epochs},
    {"retention", setup_retention, run_retention},
    {"delete records", setup_retention, run_delete_records},
    {"truncate", setup_some, run_truncate},
    {"truncate everything", setup_some, run_truncate_all},
    {"close", setup_some, run_close},
    {"open with recovery", setup_torn, run_open},
};

#define NSCENARIOS ((int)(sizeof(scenarios) / sizeof(scenarios[0])))

static void run_all(fault_mode_t mode)
{
    unsigned before = CU_get_number_of_failures();

    for (int i = 0; i < NSCENARIOS; i++) {
        if (mode == MODE_SHORT_WRITE && scenarios[i].run != run_appends &&
            scenarios[i].run != run_flush)
            continue;
        run_faults(&scenarios[i], mode);
        if (CU_get_number_of_failures() > before)
            return;
    }
}

static void test_nth_eio(void)
{
    run_all(MODE_NTH_EIO);
}

static void test_nth_enospc(void)
{
    run_all(MODE_NTH_ENOSPC);
}

static void test_short_write(void)
{
    run_all(MODE_SHORT_WRITE);
}

static void test_burst(void)
{
    run_all(MODE_BURST);
}

static void test_dying_disk(void)
{
    run_all(MODE_DYING);
}

/* Regression: a roll whose new segment could not be created nor removed
 * leaves an empty <LEO>.log on disk. Appending on to the old segment would
 * put batches behind that file's base, which the next open would lose: the
 * log must go offline instead. */
static void test_roll_leftover(void)
{
    fw_world_t w;
    char path[400];

    fw_init(&w);
    CU_ASSERT_EQUAL(fw_append(&w, 2, 0, 1), 0);
    /* truncate calls: the two index trims of the seal, then the new
     * segment's index; unlink calls: .index, .timeindex, .log */
    fault_fail_nth(FAULT_TRUNCATE, 3, EIO);
    fault_fail_nth(FAULT_UNLINK, 3, EIO);
    CU_ASSERT_EQUAL(log_roll(w.log, FW_NOW), 56);
    CU_ASSERT_EQUAL(fault_injected(), 2);
    fault_reset();
    snprintf(path, sizeof(path), "%s/%020lld.log", w.dir, (long long)w.leo);
    CU_ASSERT_EQUAL(access(path, F_OK), 0);
    CU_ASSERT(log_offline(w.log));
    fw_check_alive(&w);
    fw_reopen(&w, 1);
    fw_done(&w);
}

/* A failed append regression: a write that fails half way is cut off, and
 * the log goes on at the same offset with the same bytes on disk. */
static void test_short_append_exact(void)
{
    fw_world_t w;
    char path[400];
    size_t before, after;
    char *a, *b;

    fw_init(&w);
    CU_ASSERT_EQUAL(fw_append(&w, 2, 0, 0), 0);
    snprintf(path, sizeof(path), "%s/00000000000000000000.log", w.dir);
    a = unit_slurp(path);
    before = w.m[0].len;
    fault_short_write_nth(1, ENOSPC);
    CU_ASSERT_EQUAL(fw_append(&w, 2, 0, 0), 56);
    CU_ASSERT_EQUAL(fault_injected(), 2);
    fault_reset();
    {
        struct stat st;
        CU_ASSERT_EQUAL(stat(path, &st), 0);
        after = (size_t)st.st_size;
    }
    CU_ASSERT_EQUAL(after, before);
    b = unit_slurp(path);
    CU_ASSERT(memcmp(a, b, before) == 0);
    CU_ASSERT_FALSE(log_offline(w.log));
    CU_ASSERT_EQUAL(fw_append(&w, 2, 0, 0), 0);
    CU_ASSERT_EQUAL(w.m[1].base, 2);
    fw_check_log(&w);
    free(a);
    free(b);
    fw_done(&w);
}

/* fsyncgate regression: after a failed fsync, a second flush must not
 * report success (the kernel would happily say so) and nothing becomes
 * durable until the log is reopened and recovered. */
static void test_fsync_never_retried(void)
{
    fw_world_t w;
    int64_t rp;

    fw_init(&w);
    CU_ASSERT_EQUAL(fw_append(&w, 2, 0, 0), 0);
    CU_ASSERT_EQUAL(log_flush(w.log, FW_NOW), 0);
    CU_ASSERT_EQUAL(fw_append(&w, 2, 0, 0), 0);
    rp = log_recovery_point(w.log);
    fault_fail_nth(FAULT_SYNC, 1, EIO);
    CU_ASSERT_EQUAL(log_flush(w.log, FW_NOW), -1);
    fault_reset();
    CU_ASSERT(log_offline(w.log));
    CU_ASSERT_EQUAL(log_flush(w.log, FW_NOW), -1);
    CU_ASSERT_EQUAL(errno, EIO);
    CU_ASSERT_EQUAL(log_recovery_point(w.log), rp);
    CU_ASSERT_EQUAL(log_unflushed_messages(w.log), 0);
    /* an offline log is closed without touching its files */
    fault_count_calls();
    CU_ASSERT_EQUAL(log_close(w.log), -1);
    CU_ASSERT_EQUAL(fault_calls(FAULT_ANY), 0);
    fault_reset();
    w.log = NULL;
    {
        log_open_args_t a = fw_open_args(rp, 0, 0);
        w.log = log_open(w.dir, &w.cfg, &a);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(w.log);
    CU_ASSERT_FALSE(log_offline(w.log));
    fw_check_log(&w);
    CU_ASSERT_EQUAL(log_flush(w.log, FW_NOW), 0);
    CU_ASSERT_EQUAL(log_recovery_point(w.log), w.leo);
    fw_done(&w);
}

/* The flush of a rolled segment makes its trimmed index files durable
 * too: they were written through a map, then cut, and only an fsync of the
 * files writes those pages. */
static void test_rolled_indexes_synced(void)
{
    fw_world_t w;

    fw_init(&w);
    CU_ASSERT_EQUAL(fw_append(&w, 2, 0, 0), 0);
    CU_ASSERT_EQUAL(log_roll(w.log, FW_NOW), 0);
    fault_count_calls();
    CU_ASSERT_EQUAL(log_flush_rolled(w.log), 0);
    /* .log, .index, .timeindex, the epoch checkpoint epoch 0 began, the
     * directory */
    CU_ASSERT_EQUAL(fault_calls(FAULT_SYNC), 5);
    fault_reset();
    fault_count_calls();
    CU_ASSERT_EQUAL(log_flush(w.log, FW_NOW), 0); /* nothing left of that segment */
    CU_ASSERT_EQUAL(fault_calls(FAULT_SYNC), 1);
    CU_ASSERT_EQUAL(fault_calls(FAULT_MSYNC), 0); /* the active indexes are empty */
    fault_reset();
    fw_done(&w);
}

int main(void)
{
    /* thousands of small logs, each fsynced: tmpfs spares the disk */
    if (fw_root_init("test-log-fault") < 0)
        return 1;
    lg_set_level(LG_ERROR + 1);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("log faults", NULL, NULL);
    CU_add_test(s, "short append cut off exactly", test_short_append_exact);
    CU_add_test(s, "failed fsync is never success", test_fsync_never_retried);
    CU_add_test(s, "fail the Nth call (EIO)", test_nth_eio);
    CU_add_test(s, "fail the Nth call (ENOSPC)", test_nth_enospc);
    CU_add_test(s, "short Nth write", test_short_write);
    CU_add_test(s, "burst of failures from the Nth call", test_burst);
    CU_add_test(s, "dying disk from the Nth call", test_dying_disk);
    CU_add_test(s, "roll that leaves an empty segment", test_roll_leftover);
    CU_add_test(s, "rolled segment's indexes are synced", test_rolled_indexes_synced);
    int rc = unit_run();
    fw_root_remove();
    return rc;
}
