/* testlib brokers: tests that kill and restart a broker own one, separate
 * from the shared broker of run-tests.sh. Strand is forked directly (it
 * starts in milliseconds, and dies with the test's process group if the test
 * is killed by its timeout); Kafka goes through scripts/kafka-ref.sh. */
#include "testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#define TL_MAX_BROKERS 8
static tl_broker *tl_brokers[TL_MAX_BROKERS];

static void tl_broker_track(tl_broker *b)
{
    for (int i = 0; i < TL_MAX_BROKERS; i++)
        if (tl_brokers[i] == b)
            return;
    for (int i = 0; i < TL_MAX_BROKERS; i++)
        if (!tl_brokers[i]) {
            tl_brokers[i] = b;
            return;
        }
}

void tl_broker_kill_all(void)
{
    for (int i = 0; i < TL_MAX_BROKERS; i++) {
        if (tl_brokers[i] && tl_brokers[i]->pid > 0) {
            kill(tl_brokers[i]->pid, SIGKILL);
            tl_brokers[i]->pid = 0;
        }
        tl_brokers[i] = NULL;
    }
}

static void tl_write_props(const tl_broker *b, const char *const *extra)
{
    char path[PATH_MAX];
    FILE *f;
    snprintf(path, sizeof(path), "%s/server.properties", b->dir);
    f = fopen(path, "w");
    if (!f)
        tl_fail("%s: %s", path, strerror(errno));
    /* a single-node KRaft configuration, as Kafka 4.4 needs it (its
     * controller listener serves the controller's APIs) */
    int cport = tl_free_port();
    fprintf(f, "# written by tests/testlib\n"
               "process.roles=broker,controller\n"
               "node.id=1\n"
               "controller.quorum.voters=1@127.0.0.1:%d\n"
               "controller.listener.names=CONTROLLER\n"
               "listeners=PLAINTEXT://127.0.0.1:%d,CONTROLLER://127.0.0.1:%d\n"
               "advertised.listeners=PLAINTEXT://127.0.0.1:%d\n"
               "log.dirs=%s/data\n"
               "num.partitions=4\n"
               "auto.create.topics.enable=true\n",
            cport, b->port, cport, b->port, b->dir);
    for (; extra && *extra; extra++)
        fprintf(f, "%s\n", *extra);
    fclose(f);
}

/* Runs argv to completion; returns its exit status. */
static int tl_run(char *const argv[])
{
    int status;
    pid_t pid = fork();
    if (pid < 0)
        tl_fail("fork: %s", strerror(errno));
    if (pid == 0) {
        execvp(argv[0], argv);
        fprintf(stderr, "exec %s: %s\n", argv[0], strerror(errno));
        _exit(127);
    }
    while (waitpid(pid, &status, 0) < 0)
        if (errno != EINTR)
            tl_fail("waitpid: %s", strerror(errno));
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void tl_kafka_ref(const char *cmd, tl_broker *b, const char *const *extra)
{
    const char *src = getenv("STRAND_SRCDIR");
    char script[PATH_MAX], port[16];
    char *argv[40];
    int n = 0, rc;
    if (!src)
        tl_fail("KAFKA_REF needs STRAND_SRCDIR (the checkout)");
    snprintf(script, sizeof(script), "%s/scripts/kafka-ref.sh", src);
    snprintf(port, sizeof(port), "%d", b->port);
    argv[n++] = script;
    argv[n++] = (char *)cmd;
    if (strcmp(cmd, "start") == 0)
        argv[n++] = port;
    argv[n++] = b->dir;
    if (strcmp(cmd, "start") == 0)
        argv[n++] = "num.partitions=4"; /* as for strand, see tl_write_props */
    for (; extra && *extra && n < 39; extra++)
        argv[n++] = (char *)*extra;
    argv[n] = NULL;
    rc = tl_run(argv);
    if (rc != 0)
        tl_fail("kafka-ref.sh %s %s: exit %d", cmd, b->dir, rc);
}

static pid_t tl_read_pid(const char *dir)
{
    char path[PATH_MAX];
    long pid = 0;
    FILE *f;
    snprintf(path, sizeof(path), "%s/kafka.pid", dir);
    f = fopen(path, "r");
    if (!f || fscanf(f, "%ld", &pid) != 1)
        tl_fail("no pid in %s", path);
    fclose(f);
    return (pid_t)pid;
}

static void tl_strand_spawn(tl_broker *b)
{
    const char *bin = getenv("STRAND_BIN");
    char props[PATH_MAX], logpath[PATH_MAX];
    snprintf(props, sizeof(props), "%s/server.properties", b->dir);
    snprintf(logpath, sizeof(logpath), "%s/strand.log", b->dir);
    if (!bin || !*bin)
        tl_skip("STRAND_BIN is not set (needed to start an own broker)");
    b->pid = fork();
    if (b->pid < 0)
        tl_fail("fork: %s", strerror(errno));
    if (b->pid == 0) {
        int fd = open(logpath, O_WRONLY | O_CREAT | O_APPEND, 0644);
        if (fd >= 0) {
            dup2(fd, 1);
            dup2(fd, 2);
            close(fd);
        }
        execl(bin, bin, props, (char *)NULL);
        fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
        _exit(127);
    }
}

/* Ready = the listener accepts a connection; the broker must not die first. */
static void tl_strand_wait(tl_broker *b)
{
    double deadline = tl_now() + 20;
    for (;;) {
        int status, fd = tl_connect(b->bootstrap, 1000);
        if (fd >= 0) {
            close(fd);
            return;
        }
        if (waitpid(b->pid, &status, WNOHANG) == b->pid) {
            b->pid = 0;
            tl_fail("strand exited during startup (status 0x%x, log %s/strand.log)",
                    status, b->dir);
        }
        if (tl_now() > deadline)
            tl_fail("strand not accepting on %s after 20 s", b->bootstrap);
        usleep(20 * 1000);
    }
}

void tl_broker_start(tl_broker *b, const char *dir, const char *const *extra)
{
    tl_broker_start_kind(b, dir, extra, tl_is_kafka());
}

void tl_broker_start_kind(tl_broker *b, const char *dir, const char *const *extra, int kafka)
{
    if (dir != b->dir)
        snprintf(b->dir, sizeof(b->dir), "%s", dir);
    if (mkdir(b->dir, 0755) < 0 && errno != EEXIST)
        tl_fail("mkdir %s: %s", b->dir, strerror(errno));
    if (b->port == 0)
        b->port = tl_free_port();
    snprintf(b->bootstrap, sizeof(b->bootstrap), "127.0.0.1:%d", b->port);
    b->kafka = kafka;
    tl_broker_track(b);
    if (b->kafka) {
        tl_kafka_ref("start", b, extra);
        b->pid = tl_read_pid(b->dir);
    } else {
        tl_write_props(b, extra);
        tl_strand_spawn(b);
        tl_strand_wait(b);
    }
    tl_log("broker pid %d on %s, data in %s", (int)b->pid, b->bootstrap, b->dir);
}

void tl_broker_kill9(tl_broker *b)
{
    int status;
    if (b->pid <= 0)
        tl_fail("kill9: broker not running");
    kill(b->pid, SIGKILL);
    if (b->kafka) {
        /* Not our child: wait until it is gone. */
        while (kill(b->pid, 0) == 0)
            usleep(10 * 1000);
    } else {
        while (waitpid(b->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    b->pid = 0;
}

int tl_broker_stop(tl_broker *b)
{
    int status = 0;
    double deadline = tl_now() + 30;
    if (b->pid <= 0)
        return 0;
    if (b->kafka) {
        tl_kafka_ref("stop", b, NULL);
        b->pid = 0;
        return 0;
    }
    kill(b->pid, SIGTERM);
    while (waitpid(b->pid, &status, WNOHANG) == 0) {
        if (tl_now() > deadline) {
            tl_log("broker %d ignored SIGTERM for 30 s: killing", (int)b->pid);
            kill(b->pid, SIGKILL);
            waitpid(b->pid, &status, 0);
            break;
        }
        usleep(10 * 1000);
    }
    b->pid = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* ---- data directory digest ---- */

static char **tl_paths;
static size_t tl_npaths, tl_cap;
static size_t tl_root_len;

static int tl_collect(const char *path, const struct stat *st, int type, struct FTW *ftw)
{
    if (type != FTW_F)
        return 0;
    if (tl_npaths == tl_cap) {
        tl_cap = tl_cap ? tl_cap * 2 : 64;
        tl_paths = realloc(tl_paths, tl_cap * sizeof(*tl_paths));
        if (!tl_paths)
            tl_fail("out of memory");
    }
    tl_paths[tl_npaths++] = strdup(path);
    return 0;
}

static int tl_cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static uint64_t tl_fnv(uint64_t h, const void *p, size_t n)
{
    const uint8_t *c = p;
    while (n--)
        h = (h ^ *c++) * 1099511628211ULL;
    return h;
}

uint64_t tl_dir_digest(const char *dir)
{
    uint64_t h = 14695981039346656037ULL;
    uint8_t buf[65536];
    tl_npaths = 0;
    tl_root_len = strlen(dir);
    if (nftw(dir, tl_collect, 16, FTW_PHYS) < 0)
        tl_fail("walk %s: %s", dir, strerror(errno));
    qsort(tl_paths, tl_npaths, sizeof(*tl_paths), tl_cmp_str);
    for (size_t i = 0; i < tl_npaths; i++) {
        FILE *f = fopen(tl_paths[i], "rb");
        size_t n;
        h = tl_fnv(h, tl_paths[i] + tl_root_len, strlen(tl_paths[i] + tl_root_len) + 1);
        if (!f)
            tl_fail("%s: %s", tl_paths[i], strerror(errno));
        while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
            h = tl_fnv(h, buf, n);
        fclose(f);
        free(tl_paths[i]);
    }
    free(tl_paths);
    tl_paths = NULL;
    tl_cap = tl_npaths = 0;
    return h;
}
