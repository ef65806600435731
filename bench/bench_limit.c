/* The physical limits the brokers are judged against, measured in the same
 * run on the same machine with the same byte volume:
 *   - loopback TCP: one writer thread to one reader thread that discards;
 *   - the data directory's file system: a sequential write without fsync
 *     (page cache), the same write ended by fdatasync (the disk), and a
 *     sequential read of it after the page cache was dropped (cold).
 *
 * And the first write to memory (prefault): on a VM whose balloon driver
 * reports free pages to the host (free page reporting), the host takes
 * back memory the guest leaves free for a few seconds, and the first write
 * to such a page costs a host fault: about 2.5 s of system CPU per GB here,
 * charged to whichever process touches it, several times what the copy
 * into the page cache costs. A broker writing new data would pay it or not
 * depending on what ran before. So run.sh turns the reporting off for the
 * run where the kernel lets it (and says so in the table), and prefault
 * writes and deletes a file as large as the run's page cache once, so that
 * both brokers write into memory the host has backed, as a long-running
 * broker on a busy host mostly does: the figures measure the brokers, not
 * the host. Its cost per GB is that of the first write. */
#include "bench/bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>


#define BENCH_CHUNK (1 << 20)

typedef struct bench_sink_s {
    int lfd;
    int64_t got;
    double cpu; /* the reader thread's CPU seconds */
} bench_sink_t;

static double bench_rusage_s(int who)
{
    struct rusage ru;
    getrusage(who, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

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
    s->cpu = bench_rusage_s(RUSAGE_THREAD);
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
    bench_sink_t sink = {bench_tcp_listen(&sa), 0, 0};
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
    /* what receiving costs any broker, before it does anything */
    bench_result("tcp_recv_cpu_s_per_gb", sink.cpu / ((double)o->bytes / 1e9));
    return 0;
}

/* Writes o->bytes to path; with do_sync, fdatasync before the clock
 * stops. Returns MB/s; the CPU seconds it took go to *cpu if not NULL. */
static double bench_fs_write(const char *path, const bench_opts_t *o, int do_sync, double *cpu)
{
    const char *data = bench_payload(1, BENCH_CHUNK);
    double t0 = bench_now(), c0 = bench_rusage_s(RUSAGE_THREAD);
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
    if (cpu)
        *cpu = bench_rusage_s(RUSAGE_THREAD) - c0;
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

/* A field of /proc/meminfo in MiB; 0 if unknown. */
static double bench_meminfo_mb(const char *field)
{
    char line[256];
    double kb = 0;
    size_t flen = strlen(field);
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, field, flen) && line[flen] == ':')
            kb = atof(line + flen + 1);
    fclose(f);
    return kb / 1024;
}

int bench_cmd_prefault(const bench_opts_t *o)
{
    char path[4096];
    double cpu;
    if (!o->dir)
        bench_die("prefault needs --dir");
    bench_opts_t po = *o;
    /* never so much that it would push the brokers' pages out */
    double avail = bench_meminfo_mb("MemAvailable") * 1048576.0 - 2e9;
    if (avail < (double)po.bytes)
        po.bytes = (int64_t)avail;
    if (po.bytes < 100000000)
        return 0;
    snprintf(path, sizeof(path), "%s/strand-bench-prefault.tmp", o->dir);
    bench_fs_write(path, &po, 0, &cpu);
    unlink(path);
    bench_result("prefault_cpu_s_per_gb", cpu / ((double)po.bytes / 1e9));
    return 0;
}

int bench_cmd_limit_fs(const bench_opts_t *o)
{
    char path[4096];
    if (!o->dir)
        bench_die("limit-fs needs --dir");
    snprintf(path, sizeof(path), "%s/strand-bench-limit.tmp", o->dir);

    double cpu;
    bench_settle(0);
    bench_result("fs_write_mb_per_s", bench_fs_write(path, o, 0, &cpu));
    /* what storing costs any broker (the memory is backed: see above) */
    bench_result("fs_write_cpu_s_per_gb", cpu / ((double)o->bytes / 1e9));
    bench_settle(0);
    unlink(path);
    bench_result("fs_write_fsync_mb_per_s", bench_fs_write(path, o, 1, NULL));
    int cold = bench_settle(o->drop_caches);
    bench_result("fs_read_cold", cold);
    bench_result("fs_read_mb_per_s", bench_fs_read(path));
    unlink(path);
    return 0;
}
