/* 0017-config-samples: the broker accepts every configuration Kafka 4.4
 * accepts and refuses the ones it refuses, for the same reason. Each
 * tests/configs/NAME.properties is a server.properties (Kafka's own
 * shipped samples, the quickstart's shapes, and edge cases) with @PORT@,
 * @PORT2@, @CPORT@, @CPORT2@, @CPORT3@ and @DIR@ to fill in, and says at
 * its top what is expected:
 *
 *   #= expect: start | refuse      what Kafka 4.4 does with it
 *   #= says: TEXT                  a refusal's reason, in the output of both
 *   #= kafka-says: TEXT            ... of Kafka, where the words differ
 *   #= strand-says: TEXT           ... of Strand, where the words differ
 *   #= differs: REASON             Strand refuses it (a shape it cannot run
 *                                  yet), where Kafka does what expect says
 *   #= kafka-skip: REASON          not run against Kafka: it needs nodes
 *                                  that are not here
 *
 * Each sample is started as a user would: Strand with the file, and when
 * it refuses to start unformatted (a node of a cluster) formatted with
 * strand format (with --standalone when it asks for it) and started
 * again; Kafka (KAFKA_REF=1) formatted with kafka-storage's format (the
 * same way) and then started. Started means the broker
 * logged that it started (Strand "started in", Kafka "Kafka Server
 * started"); it is then stopped, and Strand must exit 0. Refused means it
 * exited first, having said why. Against Kafka this takes minutes (a JVM
 * per step): give it TEST_TIMEOUT=1200. */
#include "testlib/testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define MAX_SAMPLES 128
#define LINE 512

typedef struct sample {
    char name[128];
    int expect_start;
    char says[LINE], kafka_says[LINE], strand_says[LINE];
    char differs[LINE], kafka_skip[LINE];
} sample;

static char classpath[1024];

/* ---- the sample files ---- */

static void directive(sample *s, const char *line)
{
    static const struct {
        const char *key;
        size_t off;
    } keys[] = {
        {"says: ", offsetof(sample, says)},
        {"kafka-says: ", offsetof(sample, kafka_says)},
        {"strand-says: ", offsetof(sample, strand_says)},
        {"differs: ", offsetof(sample, differs)},
        {"kafka-skip: ", offsetof(sample, kafka_skip)},
    };
    if (!strncmp(line, "expect: ", 8)) {
        s->expect_start = !strncmp(line + 8, "start", 5);
        return;
    }
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
        if (!strncmp(line, keys[i].key, strlen(keys[i].key)))
            snprintf((char *)s + keys[i].off, LINE, "%s", line + strlen(keys[i].key));
}

/* Reads the directives of path; the text stays in the file. */
static void read_sample(const char *path, sample *s)
{
    FILE *f = fopen(path, "r");
    char line[LINE];

    TL_ASSERT(f, "%s: %s", path, strerror(errno));
    while (fgets(line, sizeof(line), f)) {
        line[strcspn(line, "\n")] = '\0';
        if (!strncmp(line, "#= ", 3))
            directive(s, line + 3);
    }
    fclose(f);
}

/* Writes path with every placeholder replaced. */
static void fill_in(const char *src, const char *dst, const char *dir)
{
    char ports[5][16], *text, *p;
    const char *names[6] = {"@PORT@", "@PORT2@", "@CPORT@", "@CPORT2@", "@CPORT3@", "@DIR@"};
    FILE *in = fopen(src, "r"), *out = fopen(dst, "w");
    long n;

    TL_ASSERT(in && out, "%s / %s: %s", src, dst, strerror(errno));
    for (int i = 0; i < 5; i++)
        snprintf(ports[i], sizeof(ports[i]), "%d", tl_free_port());
    fseek(in, 0, SEEK_END);
    n = ftell(in);
    rewind(in);
    text = calloc(1, (size_t)n + 1);
    TL_ASSERT(fread(text, 1, (size_t)n, in) == (size_t)n, "read %s", src);
    for (p = text; *p;) {
        int hit = -1;
        for (int i = 0; i < 6 && hit < 0; i++)
            if (!strncmp(p, names[i], strlen(names[i])))
                hit = i;
        if (hit < 0) {
            fputc(*p++, out);
            continue;
        }
        fputs(hit < 5 ? ports[hit] : dir, out);
        p += strlen(names[hit]);
    }
    free(text);
    fclose(in);
    fclose(out);
}

/* ---- running a broker ---- */

static int file_has(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    char buf[8192];
    int found = 0;

    if (!f)
        return 0;
    while (!found && fgets(buf, sizeof(buf), f))
        found = strstr(buf, text) != NULL;
    fclose(f);
    return found;
}

static pid_t spawn(char *const argv[], const char *logpath)
{
    pid_t pid = fork();

    TL_ASSERT(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        setpgid(0, 0);
        execvp(argv[0], argv);
        _exit(127);
    }
    return pid;
}

/* Waits until logpath says `ready` (1), the process exits (0) or
 * timeout_s passes (-1). */
static int wait_ready(pid_t pid, const char *logpath, const char *ready, double timeout_s)
{
    double end = tl_now() + timeout_s;
    int status;

    while (tl_now() < end) {
        if (file_has(logpath, ready))
            return 1;
        if (waitpid(pid, &status, WNOHANG) == pid)
            return file_has(logpath, ready) ? 2 : 0;
        usleep(50 * 1000);
    }
    return -1;
}

/* SIGTERM, then SIGKILL after grace_s; returns the exit status or -1. */
static int stop(pid_t pid, double grace_s)
{
    double end = tl_now() + grace_s;
    int status;

    kill(pid, SIGTERM);
    while (tl_now() < end) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
        usleep(50 * 1000);
    }
    kill(-pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

/* strand format, with --standalone when it asks for it, as a user does
 * for a node that is part of a cluster. 0, or -1 when it refused. */
static int strand_format(const char *props, const char *logpath)
{
    for (int standalone = 0; standalone < 2; standalone++) {
        char *argv[] = {getenv("STRAND_BIN"), "format", "-t", "MkU3OEVBNTcwNTJENDM2Qk", "-c",
                        (char *)props, standalone ? "--standalone" : NULL, NULL};
        int st;
        pid_t pid = spawn(argv, logpath);
        waitpid(pid, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            return 0;
        if (standalone || !file_has(logpath, "--standalone"))
            return -1;
    }
    return -1;
}

/* 1 started, 0 refused (at format or at start). A node that refuses to
 * start unformatted is formatted and started again. */
static int run_strand(const char *props, const char *logpath)
{
    char *argv[] = {getenv("STRAND_BIN"), (char *)props, NULL};
    pid_t pid;
    int r, st;

    if (!argv[0] || !*argv[0])
        tl_skip("STRAND_BIN is not set");
    pid = spawn(argv, logpath);
    r = wait_ready(pid, logpath, "started in", 20);
    if (r == 0 && file_has(logpath, "No readable meta.properties files found.")) {
        if (strand_format(props, logpath) < 0)
            return 0;
        pid = spawn(argv, logpath);
        r = wait_ready(pid, logpath, "started in", 20);
    }
    TL_ASSERT(r >= 0, "%s: strand neither started nor exited in 20 s", props);
    if (r == 0)
        return 0;
    st = stop(pid, 20);
    TL_ASSERT(st == 0, "%s: strand exit status %d after SIGTERM", props, st);
    return 1;
}

static void kafka_classpath(void)
{
    char cmd[1024];
    FILE *p;

    snprintf(cmd, sizeof(cmd), "'%s/scripts/kafka-ref.sh' classpath", getenv("STRAND_SRCDIR"));
    p = popen(cmd, "r");
    TL_ASSERT(p && fgets(classpath, sizeof(classpath), p), "kafka-ref.sh classpath failed");
    classpath[strcspn(classpath, "\n")] = '\0';
    pclose(p);
}

static void write_log4j(const char *path)
{
    FILE *f = fopen(path, "w");
    TL_ASSERT(f, "%s: %s", path, strerror(errno));
    fputs("status = warn\nappender.c.type = Console\nappender.c.name = C\n"
          "appender.c.layout.type = PatternLayout\nappender.c.layout.pattern = %p %m%n\n"
          "rootLogger.level = INFO\nrootLogger.appenderRef.c.ref = C\n",
          f);
    fclose(f);
}

/* kafka-storage format, with --standalone when Kafka asks for it. Returns
 * 0, or -1 when Kafka refused the configuration there. */
static int kafka_format(const char *props, const char *log4j, const char *logpath)
{
    char cid[32], l4j[1100];
    char *argv[16];
    int n = 0, st;
    static const char alphabet[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

    for (int i = 0; i < 22; i++) /* not starting with '-', an option to the tool */
        cid[i] = alphabet[tl_rand() % (i ? 64 : 62)];
    cid[22] = '\0';
    snprintf(l4j, sizeof(l4j), "-Dlog4j2.configurationFile=%s", log4j);
    for (int standalone = 0; standalone < 2; standalone++) {
        char *a[] = {"java", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", l4j, "-cp", classpath,
                     "kafka.tools.StorageTool", "format", "-t", cid, "-c", (char *)props,
                     standalone ? "--standalone" : NULL, NULL};
        for (n = 0; a[n]; n++)
            argv[n] = a[n];
        argv[n] = NULL;
        pid_t pid = spawn(argv, logpath);
        waitpid(pid, &st, 0);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            return 0;
        if (standalone || !file_has(logpath, "--standalone"))
            return -1;
    }
    return -1;
}

/* 1 started, 0 refused (at format or at start). */
static int run_kafka(const char *props, const char *dir, const char *logpath)
{
    char log4j[1000], l4j[1100];
    pid_t pid;
    int r;

    if (!*classpath)
        kafka_classpath();
    snprintf(log4j, sizeof(log4j), "%s/log4j2.properties", dir);
    write_log4j(log4j);
    if (kafka_format(props, log4j, logpath) < 0)
        return 0;
    snprintf(l4j, sizeof(l4j), "-Dlog4j2.configurationFile=%s", log4j);
    char *argv[] = {"java", "-Xmx512m", "-XX:TieredStopAtLevel=1", "-XX:+UseSerialGC", l4j, "-cp",
                    classpath, "kafka.Kafka", (char *)props, NULL};
    pid = spawn(argv, logpath);
    r = wait_ready(pid, logpath, "Kafka Server started", 120);
    TL_ASSERT(r >= 0, "%s: Kafka neither started nor exited in 120 s", props);
    if (r != 0)
        stop(pid, 60);
    return r != 0;
}

/* ---- one sample ---- */

/* Checks one sample on the broker under test; returns 1 if it behaved as
 * expected (logging why not otherwise). */
static int check_sample(const char *cfgdir, sample *s, const char *scratch)
{
    char src[800], dir[800], props[900], logpath[900];
    int kafka = tl_is_kafka(), started, want_start;
    const char *phrase;

    snprintf(src, sizeof(src), "%s/%s.properties", cfgdir, s->name);
    snprintf(dir, sizeof(dir), "%s/%s", scratch, s->name);
    snprintf(props, sizeof(props), "%s/server.properties", dir);
    snprintf(logpath, sizeof(logpath), "%s/broker.log", dir);
    TL_ASSERT(mkdir(dir, 0755) == 0, "mkdir %s: %s", dir, strerror(errno));
    fill_in(src, props, dir);
    if (kafka && *s->kafka_skip) {
        tl_log("%-28s skipped against Kafka: %s", s->name, s->kafka_skip);
        return 1;
    }
    started = kafka ? run_kafka(props, dir, logpath) : run_strand(props, logpath);
    want_start = s->expect_start && (kafka || !*s->differs);
    phrase = kafka ? (*s->kafka_says ? s->kafka_says : s->says)
                   : (*s->strand_says ? s->strand_says : s->says);
    if (started != want_start) {
        tl_log("%-28s MISMATCH: %s, expected it to %s (log %s)", s->name,
               started ? "started" : "refused", want_start ? "start" : "be refused", logpath);
        return 0;
    }
    if (!started && *phrase && !file_has(logpath, phrase)) {
        tl_log("%-28s MISMATCH: refused without saying \"%s\" (log %s)", s->name, phrase,
               logpath);
        return 0;
    }
    tl_log("%-28s %s%s%s", s->name, started ? "started" : "refused",
           !kafka && *s->differs ? " (expected difference: " : "",
           !kafka && *s->differs ? s->differs : "");
    return 1;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(((const sample *)a)->name, ((const sample *)b)->name);
}

/* The samples of cfgdir, sorted by name; returns their count. */
static int list_samples(const char *cfgdir, sample *v)
{
    DIR *d = opendir(cfgdir);
    struct dirent *de;
    int n = 0;

    TL_ASSERT(d, "%s: %s", cfgdir, strerror(errno));
    while ((de = readdir(d)) != NULL && n < MAX_SAMPLES) {
        size_t len = strlen(de->d_name);
        char path[800];
        if (len < 12 || strcmp(de->d_name + len - 11, ".properties"))
            continue;
        memset(&v[n], 0, sizeof(v[n]));
        snprintf(v[n].name, sizeof(v[n].name), "%.*s", (int)(len - 11), de->d_name);
        snprintf(path, sizeof(path), "%s/%s", cfgdir, de->d_name);
        read_sample(path, &v[n]);
        n++;
    }
    closedir(d);
    qsort(v, (size_t)n, sizeof(*v), by_name);
    return n;
}

int main(void)
{
    static sample v[MAX_SAMPLES];
    const char *src = getenv("STRAND_SRCDIR");
    char cfgdir[600], *scratch;
    int n, bad = 0;

    tl_init("0017-config-samples");
    if (!src)
        tl_skip("STRAND_SRCDIR is not set (the checkout, for tests/configs)");
    snprintf(cfgdir, sizeof(cfgdir), "%s/tests/configs", src);
    n = list_samples(cfgdir, v);
    TL_ASSERT(n > 30, "only %d samples in %s", n, cfgdir);
    scratch = tl_scratch_dir("0600");
    for (int i = 0; i < n; i++)
        bad += !check_sample(cfgdir, &v[i], scratch);
    TL_ASSERT(bad == 0, "%d of %d samples did not behave as expected", bad, n);
    free(scratch);
    return tl_done();
}
