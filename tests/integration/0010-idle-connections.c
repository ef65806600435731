/* 0010-idle-connections: thousands of idle clients cost little, and
 * connections.max.idle.ms closes the idle ones. Strand only (it reads the
 * broker's memory from /proc). Checks:
 *
 *   2,000 connections that each had one ApiVersions answered, then idle:
 *   the broker's resident memory grows by less than 2 KiB per connection
 *   once they have been idle for a few seconds, and every one still gets
 *   an answer afterwards;
 *   with connections.max.idle.ms=1500, idle connections are closed. */
#include "testlib/testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#define NCONN 2000

static long rss_kib(pid_t pid)
{
    char path[64], line[256];
    long kib = -1;
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return -1;
    while (fgets(line, sizeof(line), fp))
        if (!strncmp(line, "VmRSS:", 6))
            kib = atol(line + 6);
    fclose(fp);
    return kib;
}

/* AddressSanitizer keeps freed memory in quarantine, so a sanitizer
 * build's memory says nothing about ours. */
static int under_asan(pid_t pid)
{
    char path[64], line[512];
    int found = 0;
    snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
    FILE *fp = fopen(path, "r");
    if (!fp)
        return 0;
    while (!found && fgets(line, sizeof(line), fp))
        found = strstr(line, "libasan") != NULL;
    fclose(fp);
    return found;
}

/* One ApiVersions v0 round trip on fd. */
static void api_versions(int fd, int32_t corr)
{
    tl_req r;
    uint8_t *frame;
    tl_req_header(&r, 18, 0, corr, "t0010");
    tl_req_finish(&r);
    TL_ASSERT(tl_send_all(fd, r.data, r.len) == 0, "send failed");
    int len = tl_recv_frame(fd, &frame, 10000);
    TL_ASSERT(len >= 6, "no ApiVersions answer");
    TL_ASSERT_EQ(tl_get_i32(frame), corr);
    TL_ASSERT_EQ(tl_get_i16(frame + 4), 0);
    free(frame);
}

static void raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        setrlimit(RLIMIT_NOFILE, &rl);
    }
    TL_ASSERT(getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur > NCONN + 100,
              "open-file limit too low for the test");
}

static void many_idle(void)
{
    tl_broker b = {0};
    char *dir = tl_scratch_dir("0010a");
    static int fds[NCONN];

    tl_broker_start(&b, dir, NULL);
    usleep(200000);
    long before = rss_kib(b.pid);
    for (int i = 0; i < NCONN; i++) {
        fds[i] = tl_connect(b.bootstrap, 10000);
        TL_ASSERT(fds[i] >= 0, "connect %d failed", i);
        api_versions(fds[i], i);
    }
    long busy = rss_kib(b.pid);
    sleep(7); /* idle connections give their buffers back after 5 s */
    long idle = rss_kib(b.pid);
    tl_log("RSS: %ld KiB before, %ld KiB with %d fresh connections, %ld KiB once idle", before,
           busy, NCONN, idle);
    if (under_asan(b.pid))
        tl_log("sanitizer build: memory not checked");
    else
        TL_ASSERT(idle - before < NCONN * 2, "idle connections cost %ld KiB (%.1f KiB each)",
                  idle - before, (double)(idle - before) / NCONN);
    for (int i = 0; i < NCONN; i++) {
        api_versions(fds[i], NCONN + i);
        close(fds[i]);
    }
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(dir);
}

static void idle_timeout(void)
{
    static const char *extra[] = {"connections.max.idle.ms=1500", NULL};
    tl_broker b = {0};
    char *dir = tl_scratch_dir("0010b");
    int fds[50];

    tl_broker_start(&b, dir, extra);
    for (int i = 0; i < 50; i++) {
        fds[i] = tl_connect(b.bootstrap, 10000);
        TL_ASSERT(fds[i] >= 0, "connect failed");
        api_versions(fds[i], i);
    }
    for (int i = 0; i < 50; i++) {
        size_t got = 0;
        TL_ASSERT(tl_wait_closed(fds[i], 6000, &got) == 1, "connection %d not closed when idle", i);
        TL_ASSERT_EQ(got, 0u);
        close(fds[i]);
    }
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(dir);
}

int main(void)
{
    tl_init("0010-idle-connections");
    if (tl_is_kafka())
        tl_skip("measures strand's memory");
    raise_fd_limit();
    many_idle();
    idle_timeout();
    return tl_done();
}
