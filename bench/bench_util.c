/* Clocks, result lines, the payload pool and /proc readings. */
#include "bench/bench.h"

#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>


#define BENCH_POOL_BYTES (4 << 20)
#define BENCH_POOL_SLACK (1 << 20) /* largest message the pool serves */

double bench_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int64_t bench_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

void *bench_alloc(size_t n)
{
    void *p = calloc(1, n ? n : 1);
    if (!p)
        bench_die("out of memory allocating %zu bytes", n);
    return p;
}

void bench_result(const char *metric, double value)
{
    printf("RESULT %s %.6g\n", metric, value);
    fflush(stdout);
}

void bench_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("strand-bench: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
}

void bench_die(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    fputs("strand-bench: error: ", stderr);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
    va_end(ap);
    exit(1);
}

/* Fixed seed: both brokers get byte-identical messages in every run, so
 * their compressed sizes are the same too. */
static char *bench_pool_init(void)
{
    static const char *const words[] = {
        "the", "order", "id", "customer", "timestamp", "status", "shipped",
        "pending", "amount", "currency", "EUR", "USD", "item", "quantity",
        "warehouse", "\"region\":", "\"eu-west-1\"", "{", "}", ",", "true",
        "false", "null", "session", "user-agent", "Mozilla/5.0", "GET", "POST",
        "/api/v2/orders", "200", "404", "latency_ms", "trace", "span",
    };
    const size_t nwords = sizeof(words) / sizeof(words[0]);
    size_t total = BENCH_POOL_BYTES + BENCH_POOL_SLACK, len = 0;
    char *pool = bench_alloc(total);
    uint64_t x = 0x9e3779b97f4a7c15ull;

    while (len < total) {
        x ^= x << 13;
        x ^= x >> 7;
        x ^= x << 17;
        /* one word in four is a random number: real payloads carry ids */
        char tmp[32];
        const char *w = words[x % nwords];
        if ((x >> 32) % 4 == 0) {
            snprintf(tmp, sizeof(tmp), "%u", (unsigned)(x >> 40));
            w = tmp;
        }
        size_t n = strlen(w);
        for (size_t i = 0; i < n && len < total; i++)
            pool[len++] = w[i];
        if (len < total)
            pool[len++] = ' ';
    }
    return pool;
}

const char *bench_payload(uint64_t i, int size)
{
    static char *pool;
    if (!pool)
        pool = bench_pool_init();
    if (size > BENCH_POOL_SLACK)
        bench_die("message size %d larger than the payload pool allows", size);
    /* an odd stride: neighbouring messages do not repeat each other */
    return pool + (i * 4099) % BENCH_POOL_BYTES;
}

/* Reads a small /proc file into buf (NUL-terminated); -1 if unreadable. */
static int bench_read_small(const char *path, char *buf, size_t len)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    ssize_t n = read(fd, buf, len - 1);
    close(fd);
    if (n < 0)
        return -1;
    buf[n] = '\0';
    return 0;
}

double bench_proc_cpu(pid_t pid)
{
    double user, sys;
    if (bench_proc_cpu2(pid, &user, &sys) < 0)
        return -1;
    return user + sys;
}

int bench_proc_cpu2(pid_t pid, double *user, double *sys)
{
    char path[64], buf[2048];
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    if (bench_read_small(path, buf, sizeof(buf)) < 0)
        return -1;
    /* comm may hold spaces and parentheses: fields start after the last ')' */
    char *p = strrchr(buf, ')');
    if (!p)
        return -1;
    unsigned long long utime = 0, stime = 0;
    /* after ')': state(3) ppid pgrp session tty tpgid flags minflt cminflt
     * majflt cmajflt utime(14) stime(15) */
    if (sscanf(p + 1, " %*c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %llu %llu", &utime,
               &stime) != 2)
        return -1;
    *user = (double)utime / (double)sysconf(_SC_CLK_TCK);
    *sys = (double)stime / (double)sysconf(_SC_CLK_TCK);
    return 0;
}

int bench_pids_cpu2(const bench_opts_t *o, double *user, double *sys)
{
    *user = *sys = 0;
    for (int i = 0; i < o->npids; i++) {
        double u, s;
        if (bench_proc_cpu2(o->pids[i], &u, &s) < 0)
            return -1;
        *user += u;
        *sys += s;
    }
    return o->npids ? 0 : -1;
}

double bench_proc_mem_mb(pid_t pid, const char *field)
{
    char path[64], buf[8192];
    snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
    if (bench_read_small(path, buf, sizeof(buf)) < 0)
        return -1;
    size_t flen = strlen(field);
    for (char *line = buf; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (!strncmp(line, field, flen) && line[flen] == ':')
            return strtod(line + flen + 1, NULL) / 1024.0; /* kB */
    }
    return -1;
}

int bench_settle(int drop_caches)
{
    sync();
    if (!drop_caches)
        return 0;
    int fd = open("/proc/sys/vm/drop_caches", O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return 0;
    int ok = write(fd, "1", 1) == 1;
    close(fd);
    return ok;
}

static int bench_cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return (x > y) - (x < y);
}

/* Nearest-rank percentile: the value at or below which p of the samples
 * lie, so p99.9 of 1000 samples is the largest, not an interpolation. */
double bench_percentile(int64_t *v, size_t n, double p)
{
    if (!n)
        return -1;
    qsort(v, n, sizeof(*v), bench_cmp_i64);
    size_t rank = (size_t)((double)n * p / 100.0 + 0.999999);
    if (rank < 1)
        rank = 1;
    if (rank > n)
        rank = n;
    return (double)v[rank - 1];
}

double bench_self_cpu(void)
{
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    return (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
           (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
}

/* Busy CPU seconds of the whole machine (all but idle and iowait). */
static double bench_machine_busy(void)
{
    char buf[512];
    unsigned long long v[8] = {0};
    if (bench_read_small("/proc/stat", buf, sizeof(buf)) < 0 ||
        sscanf(buf, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
               &v[4], &v[5], &v[6], &v[7]) != 8)
        return 0;
    /* user nice system [idle iowait] irq softirq steal */
    return (double)(v[0] + v[1] + v[2] + v[5] + v[6] + v[7]) / (double)sysconf(_SC_CLK_TCK);
}

void bench_cpu_start(const bench_opts_t *o, bench_cpu_t *c)
{
    c->user = c->sys = 0;
    if (o->pid > 0)
        bench_pids_cpu2(o, &c->user, &c->sys);
    c->self = bench_self_cpu();
    c->machine = bench_machine_busy();
    c->t = bench_now();
}

/* What the rest of the machine used meanwhile (other users' builds on a
 * shared machine), in % of one core: the figures' noise level. */
static void bench_report_others(const bench_cpu_t *c0, double broker, double self)
{
    double secs = bench_now() - c0->t;
    double others = bench_machine_busy() - c0->machine - broker - self;
    if (secs > 0)
        bench_result("others_cpu_pct", (others > 0 ? others : 0) * 100 / secs);
}

void bench_report_cpu(const bench_opts_t *o, const bench_cpu_t *c0, int64_t msgs, double bytes)
{
    bench_cpu_t c1;
    double self = bench_self_cpu() - c0->self;
    bench_result("client_cpu_s", self);
    if (o->pid <= 0 || bench_pids_cpu2(o, &c1.user, &c1.sys) < 0)
        return;
    double user = c1.user - c0->user, cpu = user + c1.sys - c0->sys;
    bench_report_others(c0, cpu, self);
    bench_result("broker_cpu_s", cpu);
    bench_result("broker_user_s", user);
    if (msgs > 0) {
        bench_result("cpu_s_per_mmsg", cpu / ((double)msgs / 1e6));
        bench_result("user_s_per_mmsg", user / ((double)msgs / 1e6));
        bench_result("cpu_s_per_gb", cpu / (bytes / 1e9));
    }
}

void bench_prod_dr(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    bench_prod_t *st = opaque;
    (void)rk;
    if (msg->err) {
        if (st->failed++ < 5)
            bench_log("delivery failed: %s", rd_kafka_err2str(msg->err));
    } else {
        st->ok++;
    }
    st->last_dr = bench_now();
}
