/* The broker as a process: start-up time, advertised APIs, CPU and memory. */
#include "bench/bench.h"

#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void bench_spawn_usage(void)
{
    bench_die("usage: strand-bench spawn --port PORT [--log FILE] [--timeout SEC] -- CMD [ARG]...");
}

static pid_t bench_spawn_child(char **cmd, const char *log)
{
    pid_t pid = fork();
    if (pid < 0)
        bench_die("fork: %s", strerror(errno));
    if (pid > 0)
        return pid;
    /* Its own session: a Ctrl-C at the terminal must reach run.sh (which
     * stops the brokers in order), not the brokers directly. */
    setsid();
    int in = open("/dev/null", O_RDONLY | O_CLOEXEC);
    int out = open(log ? log : "/dev/null", O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (in < 0 || out < 0 || dup2(in, 0) < 0 || dup2(out, 1) < 0 || dup2(out, 2) < 0)
        _exit(126);
    execvp(cmd[0], cmd);
    fprintf(stderr, "strand-bench: exec %s: %s\n", cmd[0], strerror(errno));
    _exit(127);
}

/* Starts CMD, waits for its first successful Metadata answer and reports
 * the time since the fork, then stays its parent until it exits (so it is
 * reaped, whoever stops it). Prints "PID n" and "READY" after the results;
 * run.sh waits for READY. Exit status: the broker's, or 1 if it never
 * became ready. */
int bench_cmd_spawn(int argc, char **argv)
{
    const char *log = NULL;
    int port = 0, i, status = 0;
    double timeout = 180;
    for (i = 0; i < argc && strcmp(argv[i], "--"); i++) {
        if (!strcmp(argv[i], "--port") && i + 1 < argc)
            port = atoi(argv[++i]);
        else if (!strcmp(argv[i], "--log") && i + 1 < argc)
            log = argv[++i];
        else if (!strcmp(argv[i], "--timeout") && i + 1 < argc)
            timeout = atof(argv[++i]);
        else
            bench_spawn_usage();
    }
    if (port <= 0 || i + 1 >= argc)
        bench_spawn_usage();

    /* else the first answer could come from another broker on that port */
    int probe = bench_wire_connect("127.0.0.1", port, 1000);
    if (probe >= 0) {
        close(probe);
        bench_die("port %d is in use", port);
    }
    double t0 = bench_now();
    pid_t pid = bench_spawn_child(argv + i + 1, log);
    while (bench_wire_metadata("127.0.0.1", port, 2000) < 0) {
        if (waitpid(pid, &status, WNOHANG) == pid)
            bench_die("%s exited during start-up (status %d)", argv[i + 1], status);
        if (bench_now() - t0 > timeout) {
            kill(pid, SIGKILL);
            waitpid(pid, &status, 0);
            bench_die("%s not answering Metadata after %.0f s", argv[i + 1], timeout);
        }
        usleep(500);
    }
    double t1 = bench_now();
    if (waitpid(pid, &status, WNOHANG) == pid)
        bench_die("%s exited during start-up (status %d)", argv[i + 1], status);
    bench_result("startup_ms", (t1 - t0) * 1000);
    bench_result("startup_cpu_s", bench_proc_cpu(pid));
    bench_result("rss_start_mb", bench_proc_mem_mb(pid, "VmRSS"));
    printf("PID %d\nREADY\n", (int)pid);
    fflush(stdout);
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
        ;
    return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/* The API keys the harness adapts to: CreateTopics decides how topics are
 * made, JoinGroup whether the rebalance workload runs. */
int bench_cmd_probe(const bench_opts_t *o)
{
    static const struct {
        int key;
        const char *name;
    } keys[] = {{19, "create_topics"}, {20, "delete_topics"}, {11, "join_group"},
                {14, "sync_group"},    {10, "find_coordinator"}};
    int16_t maxv[80];
    char host[256], metric[64];
    int port;
    bench_hostport(o->bootstrap, host, sizeof(host), &port);
    if (bench_wire_apiversions(host, port, maxv, 80) < 0)
        bench_die("ApiVersions to %s failed", o->bootstrap);
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        snprintf(metric, sizeof(metric), "api_%s", keys[i].name);
        bench_result(metric, maxv[keys[i].key]);
    }
    return 0;
}

int bench_cmd_procstat(const bench_opts_t *o)
{
    if (o->pid <= 0)
        bench_die("procstat needs --pid");
    bench_result("cpu_total_s", bench_proc_cpu(o->pid));
    bench_result("rss_peak_mb", bench_proc_mem_mb(o->pid, "VmHWM"));
    bench_result("rss_mb", bench_proc_mem_mb(o->pid, "VmRSS"));
    return 0;
}
