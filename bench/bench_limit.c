/* The physical limits the brokers are judged against, measured in the same
 * run on the same machine with the same byte volume:
 *   - loopback TCP: one writer thread to one reader thread that discards;
 *   - the data directory's file system: a sequential write without fsync
 *     (page cache), the same write ended by fdatasync (the disk), and a
 *     sequential read of it after the page cache was dropped (cold). */
#include "bench/bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>


#define BENCH_CHUNK (1 << 20)

typedef struct bench_sink_s {
    int lfd;
    int64_t got;
} bench_sink_t;

static void *bench_sink(void *arg)
{
    bench_sink_t *s = arg;
    char *buf = bench_alloc(BENCH_CHUNK);
    int fd = accept(s->lfd, NULL, NULL);
    if (fd < 0)
        bench_die("accept: %s", strerror(errno));
    for (;;) {
        ssize_t n = recv(fd, buf, BENCH_CHUNK, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            break;
        s->got += n;
    }
    close(fd);
    free(buf);
    return NULL;
}

static int bench_tcp_listen(struct sockaddr_in *sa)
{
    socklen_t len = sizeof(*sa);
    memset(sa, 0, sizeof(*sa));
    sa->sin_family = AF_INET;
    sa->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || bind(fd, (struct sockaddr *)sa, sizeof(*sa)) < 0 || listen(fd, 1) < 0 ||
        getsockname(fd, (struct sockaddr *)sa, &len) < 0)
        bench_die("loopback listen: %s", strerror(errno));
    return fd;
}

int bench_cmd_limit_tcp(const bench_opts_t *o)
{
    struct sockaddr_in sa;
    bench_sink_t sink = {bench_tcp_listen(&sa), 0};
    pthread_t thr;
    const char *data = bench_payload(0, BENCH_CHUNK);
    pthread_create(&thr, NULL, bench_sink, &sink);

    double t0 = bench_now();
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0)
        bench_die("loopback connect: %s", strerror(errno));
    for (int64_t left = o->bytes; left > 0;) {
        ssize_t n = send(fd, data, left < BENCH_CHUNK ? (size_t)left : BENCH_CHUNK, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            bench_die("loopback send: %s", strerror(errno));
        left -= n;
    }
    close(fd);
    pthread_join(thr, NULL);
    double secs = bench_now() - t0;
    close(sink.lfd);
    if (sink.got != o->bytes)
        bench_die("loopback: %lld of %lld bytes arrived", (long long)sink.got, (long long)o->bytes);
    bench_result("tcp_mb_per_s", (double)o->bytes / 1e6 / secs);
    return 0;
}

/* Writes o->bytes to path; with do_sync, fdatasync before the clock
 * stops. Returns MB/s. */
static double bench_fs_write(const char *path, const bench_opts_t *o, int do_sync)
{
    const char *data = bench_payload(1, BENCH_CHUNK);
    double t0 = bench_now();
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        bench_die("open %s: %s", path, strerror(errno));
    for (int64_t left = o->bytes; left > 0;) {
        ssize_t n = write(fd, data, left < BENCH_CHUNK ? (size_t)left : BENCH_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            bench_die("write %s: %s", path, strerror(errno));
        left -= n;
    }
    if (do_sync && fdatasync(fd) < 0)
        bench_die("fdatasync %s: %s", path, strerror(errno));
    close(fd);
    return (double)o->bytes / 1e6 / (bench_now() - t0);
}

static double bench_fs_read(const char *path)
{
    char *buf = bench_alloc(BENCH_CHUNK);
    int64_t total = 0;
    double t0 = bench_now();
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        bench_die("open %s: %s", path, strerror(errno));
    for (;;) {
        ssize_t n = read(fd, buf, BENCH_CHUNK);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            bench_die("read %s: %s", path, strerror(errno));
        if (n == 0)
            break;
        total += n;
    }
    close(fd);
    free(buf);
    return (double)total / 1e6 / (bench_now() - t0);
}

int bench_cmd_limit_fs(const bench_opts_t *o)
{
    char path[4096];
    if (!o->dir)
        bench_die("limit-fs needs --dir");
    snprintf(path, sizeof(path), "%s/strand-bench-limit.tmp", o->dir);

    bench_settle(0);
    bench_result("fs_write_mb_per_s", bench_fs_write(path, o, 0));
    bench_settle(0);
    unlink(path);
    bench_result("fs_write_fsync_mb_per_s", bench_fs_write(path, o, 1));
    int cold = bench_settle(o->drop_caches);
    bench_result("fs_read_cold", cold);
    bench_result("fs_read_mb_per_s", bench_fs_read(path));
    unlink(path);
    return 0;
}
