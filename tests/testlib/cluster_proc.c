/* cluster_proc: a node's process. Strand is forked and exec'd directly,
 * its output appended to node.log, with a parent-death signal so that it
 * dies with the test however the test ends. Kafka goes through
 * scripts/kafka-ref.sh start (run as a child, so that the nodes of a
 * cluster start in parallel: a Kafka broker is ready only once its
 * controllers are), which detaches the JVM and writes its pid to
 * kafka.pid; run-tests.sh kills those of a test that does not end. */
#include "testlib/cluster_int.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <unistd.h>

#include "testlib/testlib.h"

/* In the child: output to the node's log, stdin from /dev/null, killed
 * when the test's thread that forked it ends. */
static void tl_proc_child_setup(const tl_node *node, pid_t parent)
{
    char path[PATH_MAX + 16];
    int fd;
    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (getppid() != parent)
        _exit(1); /* the test died between fork and prctl */
    tl_node_log_path(node, path, sizeof(path));
    if (node->kafka) /* kafka-ref.sh's own output; Kafka logs to server.log */
        snprintf(path, sizeof(path), "%s/kafka-ref.log", node->dir);
    fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (fd >= 0) {
        dup2(fd, 1);
        dup2(fd, 2);
        close(fd);
    }
    fd = open("/dev/null", O_RDONLY);
    if (fd >= 0) {
        dup2(fd, 0);
        close(fd);
    }
}

static void tl_proc_exec_strand(tl_node *node)
{
    const char *bin = getenv("STRAND_BIN");
    char props[PATH_MAX + 32];
    snprintf(props, sizeof(props), "%s/server.properties", node->dir);
    fprintf(stderr, "---- tests/testlib: start %d of node %d\n", node->starts, node->id);
    if (node->netns[0]) /* ip netns exec enters it and execs: the pid stays */
        execlp("ip", "ip", "netns", "exec", node->netns, bin, props, (char *)NULL);
    else
        execl(bin, bin, props, (char *)NULL);
    fprintf(stderr, "exec %s: %s\n", bin, strerror(errno));
    _exit(127);
}

static void tl_proc_exec_kafka(tl_node *node)
{
    const char *src = getenv("STRAND_SRCDIR");
    char script[PATH_MAX + 32], port[16], *argv[TL_NODE_MAX_EXTRA + 24];
    int n = 0;
    snprintf(script, sizeof(script), "%s/scripts/kafka-ref.sh", src);
    snprintf(port, sizeof(port), "%d", node->roles & TL_ROLE_BROKER ? node->port : node->cport);
    argv[n++] = script;
    argv[n++] = "start";
    argv[n++] = port;
    argv[n++] = node->dir;
    n += tl_node_props_lines(node, argv + n, 16);
    for (int i = 0; i < node->nextra; i++)
        argv[n++] = node->extra[i];
    argv[n] = NULL;
    execv(script, argv);
    fprintf(stderr, "exec %s: %s\n", script, strerror(errno));
    _exit(127);
}

/* A Strand node of a shared quorum is formatted before its first start,
 * as a user formats a cluster node (`strand format`), with the options a
 * test gives its Kafka nodes too (KAFKA_REF_FORMAT_ARGS: a release
 * version and feature levels), so that both kinds finalize the same. */
void tl_proc_format(tl_node *node, const char *cluster_id)
{
    const char *bin = getenv("STRAND_BIN"), *args = getenv("KAFKA_REF_FORMAT_ARGS");
    char meta[PATH_MAX + 32], cmd[3 * PATH_MAX + 512];
    snprintf(meta, sizeof(meta), "%s/data/meta.properties", node->dir);
    if (!bin || access(meta, F_OK) == 0)
        return;
    snprintf(cmd, sizeof(cmd),
             "'%s' format -t '%s' -c '%s/server.properties' %.500s >> '%s/node.log' 2>&1", bin,
             cluster_id, node->dir, args ? args : "", node->dir);
    if (system(cmd) != 0)
        tl_fail("node %d: strand format failed (see %s/node.log)", node->id, node->dir);
}

void tl_proc_spawn(tl_node *node)
{
    pid_t parent = getpid(), pid;
    if (!node->kafka && !getenv("STRAND_BIN"))
        tl_skip("STRAND_BIN is not set (needed to start cluster nodes)");
    if (node->kafka && !getenv("STRAND_SRCDIR"))
        tl_fail("KAFKA_REF needs STRAND_SRCDIR (the checkout)");
    node->starts++;
    fflush(NULL);
    pid = fork();
    if (pid < 0)
        tl_fail("fork: %s", strerror(errno));
    if (pid == 0) {
        tl_proc_child_setup(node, parent);
        if (node->kafka)
            tl_proc_exec_kafka(node);
        tl_proc_exec_strand(node);
    }
    node->pid = pid; /* for Kafka: kafka-ref.sh's, until it is ready */
}

static pid_t tl_proc_read_pid(const tl_node *node)
{
    char path[PATH_MAX + 16];
    long pid = 0;
    FILE *f;
    snprintf(path, sizeof(path), "%s/kafka.pid", node->dir);
    f = fopen(path, "r");
    if (!f || fscanf(f, "%ld", &pid) != 1)
        tl_fail("node %d: no pid in %s", node->id, path);
    fclose(f);
    return (pid_t)pid;
}

/* kafka-ref.sh start returns once Kafka is ready (or has failed). */
static void tl_proc_wait_kafka(tl_node *node)
{
    int status;
    while (waitpid(node->pid, &status, 0) < 0)
        if (errno != EINTR)
            tl_fail("waitpid: %s", strerror(errno));
    node->pid = 0;
    if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
        tl_fail("node %d: kafka-ref.sh start failed (status 0x%x, %s/kafka-ref.log)", node->id,
                status, node->dir);
    node->pid = tl_proc_read_pid(node);
}

void tl_proc_wait_ready(tl_node *node, double timeout_s)
{
    char direct[64];
    double deadline = tl_now() + timeout_s;
    if (node->kafka)
        return tl_proc_wait_kafka(node);
    /* the node's own port: a proxy in front accepts before the node does */
    snprintf(direct, sizeof(direct), "%s:%d", node->host,
             node->roles & TL_ROLE_BROKER ? node->port : node->cport);
    for (;;) {
        int status, fd = tl_connect(direct, 1000);
        if (fd >= 0) {
            close(fd);
            return;
        }
        if (waitpid(node->pid, &status, WNOHANG) == node->pid) {
            node->pid = 0;
            tl_fail("node %d exited during start-up (status 0x%x, log %s/node.log)", node->id,
                    status, node->dir);
        }
        if (tl_now() > deadline)
            tl_fail("node %d not accepting on %s after %.0f s", node->id, direct, timeout_s);
        usleep(20 * 1000);
    }
}

/* The state letter of pid in /proc (R, S, T, Z, ...), 0 when it is gone. */
static char tl_proc_state(pid_t pid)
{
    char path[64], buf[256], *p;
    FILE *f;
    size_t n;
    snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
    f = fopen(path, "r");
    if (!f)
        return 0;
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    p = strrchr(buf, ')');
    return p && p[1] == ' ' ? p[2] : '?';
}

static int tl_proc_stop_kafka(tl_node *node)
{
    const char *src = getenv("STRAND_SRCDIR");
    char cmd[2 * PATH_MAX + 64];
    int rc;
    snprintf(cmd, sizeof(cmd), "'%s/scripts/kafka-ref.sh' stop '%s' >> '%s/kafka-ref.log' 2>&1",
             src, node->dir, node->dir);
    rc = system(cmd);
    node->pid = 0;
    return rc == 0 ? 0 : -1;
}

void tl_proc_term(tl_node *node)
{
    kill(node->pid, SIGTERM);
}

int tl_proc_reap(tl_node *node)
{
    int status = 0;
    double deadline = tl_now() + 30;
    if (node->kafka) /* kafka-ref.sh waits for it and tidies its pid file */
        return tl_proc_stop_kafka(node);
    while (waitpid(node->pid, &status, WNOHANG) == 0) {
        if (tl_now() > deadline) {
            tl_log("node %d ignored SIGTERM for 30 s: killing it", node->id);
            kill(node->pid, SIGKILL);
            waitpid(node->pid, &status, 0);
            break;
        }
        usleep(10 * 1000);
    }
    node->pid = 0;
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

int tl_proc_stop(tl_node *node)
{
    tl_proc_term(node);
    return tl_proc_reap(node);
}

void tl_proc_kill9(tl_node *node)
{
    int status;
    kill(node->pid, SIGKILL);
    if (node->kafka) {
        /* Not our child: gone once whoever inherited it reaps it (until
         * then kafka-ref.sh takes the zombie for a running Kafka). */
        for (double t0 = tl_now(); tl_proc_state(node->pid);) {
            if (tl_now() - t0 > 30)
                tl_fail("node %d: pid %d not reaped 30 s after SIGKILL", node->id,
                        (int)node->pid);
            usleep(10 * 1000);
        }
    } else {
        while (waitpid(node->pid, &status, 0) < 0 && errno == EINTR)
            ;
    }
    node->pid = 0;
}

void tl_proc_wait_state(pid_t pid, int stopped)
{
    double deadline = tl_now() + 10;
    for (;;) {
        char st = tl_proc_state(pid);
        if (!st || st == 'Z')
            tl_fail("pid %d is gone", (int)pid);
        if ((st == 'T') == stopped)
            return;
        if (tl_now() > deadline)
            tl_fail("pid %d: not %s after 10 s", (int)pid, stopped ? "stopped" : "running");
        usleep(2 * 1000);
    }
}
