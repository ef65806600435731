/* The fault module itself (util/fault.h): its rules (the Nth call, every
 * call after N, bursts, short writes, while a trigger file exists) and
 * their STRAND_FAULT spec grammar, and the same rules under worker threads
 * (every call counted once, every rule firing exactly as often as it says).
 * The log's and the log manager's behaviour under these faults is
 * test_log_fault.c's and test_log_fault_mgr.c's. */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/unit.h"
#include "tests/unit/unit_log.h"
#include "util/fault.h"
#include "util/logging.h"

static char tmpdir[256];

/* ---- the fault module itself ---- */

/* Worker threads write produced batches through the wrappers while the
 * loop arms rules: every call is counted once and every rule fires exactly
 * as often as it says, however the threads interleave (unguarded counters
 * lose increments here), and a short write's follow-up failure hits the
 * thread whose write was cut, not whichever writes next. */
#define FT_THREADS 4
#define FT_WRITES 4000
#define FT_READS 1000

typedef struct ft_worker_s {
    pthread_t th;
    int wfd, rfd;
    int write_fails, read_fails, shorts;
    int short_at, fail_at; /* index of the short write, of the first failed one */
} ft_worker_t;

static void *ft_run(void *arg)
{
    ft_worker_t *w = arg;
    char buf[16] = "0123456789abcdef";
    w->short_at = w->fail_at = -1;
    for (int i = 0; i < FT_WRITES; i++) {
        ssize_t n = fault_write(w->wfd, buf, sizeof(buf));
        if (n < 0) {
            w->write_fails++;
            if (w->fail_at < 0)
                w->fail_at = i;
        } else if (n != (ssize_t)sizeof(buf)) {
            w->shorts++;
            w->short_at = i;
        }
        if (i < FT_READS && fault_read(w->rfd, buf, 1) < 0)
            w->read_fails++;
    }
    return NULL;
}

static void ft_start(ft_worker_t *w)
{
    for (int i = 0; i < FT_THREADS; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].wfd = open("/dev/null", O_WRONLY);
        w[i].rfd = open("/dev/zero", O_RDONLY);
        CU_ASSERT_FATAL(w[i].wfd >= 0 && w[i].rfd >= 0);
    }
    for (int i = 0; i < FT_THREADS; i++)
        CU_ASSERT_FATAL(pthread_create(&w[i].th, NULL, ft_run, &w[i]) == 0);
    for (int i = 0; i < FT_THREADS; i++) {
        pthread_join(w[i].th, NULL);
        close(w[i].wfd);
        close(w[i].rfd);
    }
}

static void test_fault_threads(void)
{
    ft_worker_t w[FT_THREADS];
    fault_rule_t burst = {.op = FAULT_WRITE, .after = 3000, .count = 500, .err = ENOSPC};
    int wf = 0, rf = 0;

    fault_reset();
    CU_ASSERT_EQUAL(fault_add(&burst), 0);
    CU_ASSERT_EQUAL(fault_fail_nth(FAULT_READ, 777, EIO), 0);
    ft_start(w);
    for (int i = 0; i < FT_THREADS; i++) {
        wf += w[i].write_fails;
        rf += w[i].read_fails;
    }
    CU_ASSERT_EQUAL(wf, 500);
    CU_ASSERT_EQUAL(rf, 1);
    CU_ASSERT_EQUAL(fault_calls(FAULT_WRITE), FT_THREADS * FT_WRITES);
    CU_ASSERT_EQUAL(fault_calls(FAULT_READ), FT_THREADS * FT_READS);
    CU_ASSERT_EQUAL(fault_injected(), 501);

    fault_reset();
    CU_ASSERT_EQUAL(fault_short_write_nth(2000, ENOSPC), 0);
    ft_start(w);
    int shorts = 0, fails = 0;
    for (int i = 0; i < FT_THREADS; i++) {
        shorts += w[i].shorts;
        fails += w[i].write_fails;
        if (w[i].shorts)
            CU_ASSERT_EQUAL(w[i].fail_at, w[i].short_at + 1);
    }
    CU_ASSERT_EQUAL(shorts, 1);
    CU_ASSERT_EQUAL(fails, 1);
    CU_ASSERT_EQUAL(fault_injected(), 2);
    fault_reset();
}

static void test_fault_rules(void)
{
    char path[300], trigger[300], err[200];
    int fd;

    snprintf(path, sizeof(path), "%s/rules", tmpdir);
    snprintf(trigger, sizeof(trigger), "%s/trigger", tmpdir);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);

    /* unarmed: the system call, nothing counted */
    CU_ASSERT_EQUAL(fault_armed, 0);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcd", 4, 0), 4);
    CU_ASSERT_EQUAL(fault_calls(FAULT_ANY), 0);

    /* nth, counted per rule from arming; other kinds pass */
    CU_ASSERT_EQUAL(fault_parse("pwrite:nth=2:errno=ENOSPC", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcd", 4, 0), 4);
    CU_ASSERT_EQUAL(fault_fsync(fd), 0);
    errno = 0;
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcd", 4, 0), -1);
    CU_ASSERT_EQUAL(errno, ENOSPC);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcd", 4, 0), 4);
    CU_ASSERT_EQUAL(fault_calls(FAULT_WRITE), 3);
    CU_ASSERT_EQUAL(fault_calls(FAULT_SYNC), 1);
    CU_ASSERT_EQUAL(fault_calls(FAULT_ANY), 4);
    CU_ASSERT_EQUAL(fault_injected(), 1);
    fault_reset();
    CU_ASSERT_EQUAL(fault_armed, 0);

    /* after: a dying disk, every kind */
    CU_ASSERT_EQUAL(fault_parse("any:after=1", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_fdatasync(fd), 0);
    CU_ASSERT_EQUAL(fault_fdatasync(fd), -1);
    CU_ASSERT_EQUAL(errno, EIO);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 0), -1);
    CU_ASSERT_EQUAL(fault_injected(), 2);
    fault_pause();
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), 0);
    fault_resume();
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), -1);
    fault_reset();

    /* count: a burst of failures, then calls pass again */
    CU_ASSERT_EQUAL(fault_parse("truncate:nth=2:count=2", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), 0);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), -1);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), -1);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), 0);
    fault_reset();
    CU_ASSERT_EQUAL(fault_parse("truncate:after=1:count=1;any:nth=3:errno=EROFS", err, sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), 0);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), -1);
    CU_ASSERT_EQUAL(errno, EIO);
    /* every rule counts the calls it matches: this is the second rule's 3rd */
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), -1);
    CU_ASSERT_EQUAL(errno, EROFS);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), 0);
    fault_reset();

    /* short write: half, then the next write fails */
    CU_ASSERT_EQUAL(fault_parse("write:nth=1:short=1:errno=EDQUOT", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcdefgh", 8, 0), 4);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "efgh", 4, 4), -1);
    CU_ASSERT_EQUAL(errno, EDQUOT);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "efgh", 4, 4), 4);
    fault_reset();

    /* while: only while the trigger file exists */
    {
        char spec[400];
        snprintf(spec, sizeof(spec), "sync:errno=EROFS:while=%s", trigger);
        CU_ASSERT_EQUAL(fault_parse(spec, err, sizeof(err)), 0);
    }
    CU_ASSERT_EQUAL(fault_fsync(fd), 0);
    close(open(trigger, O_WRONLY | O_CREAT, 0644));
    CU_ASSERT_EQUAL(fault_fsync(fd), -1);
    CU_ASSERT_EQUAL(errno, EROFS);
    unlink(trigger);
    CU_ASSERT_EQUAL(fault_fsync(fd), 0);
    fault_reset();

    /* bad specs arm nothing */
    CU_ASSERT_EQUAL(fault_parse("frobnicate", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "unknown kind of call 'frobnicate'");
    CU_ASSERT_EQUAL(fault_parse("write:nth=1;sync:when=3", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "bad setting 'when=3' for sync");
    CU_ASSERT_EQUAL(fault_parse("sync:short=1", err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(fault_parse("write:errno=EWHAT", err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(fault_parse("write:nth=0", err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(fault_armed, 0);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcd", 4, 0), 4);

    /* the environment is read once */
    setenv("STRAND_FAULT", "mkdir:nth=1:errno=EACCES", 1);
    CU_ASSERT_EQUAL(fault_env_load(err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_mkdir(trigger, 0755), -1);
    CU_ASSERT_EQUAL(errno, EACCES);
    fault_reset();
    CU_ASSERT_EQUAL(fault_env_load(err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_armed, 0);
    unsetenv("STRAND_FAULT");
    close(fd);
    unlink(path);
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/strand-test-fault-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    lg_set_level(LG_ERROR + 1);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("fault rules", NULL, NULL);
    CU_add_test(s, "fault rules and specs", test_fault_rules);
    CU_add_test(s, "fault rules under worker threads", test_fault_threads);
    int rc = unit_run();
    unit_rm_rf(tmpdir);
    return rc;
}
