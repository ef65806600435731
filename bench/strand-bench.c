/* strand-bench: command line. See bench/bench.h for the output format and
 * bench/run.sh for how the harness combines the subcommands. */
#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char bench_usage_text[] =
    "usage: strand-bench COMMAND [options]\n"
    "commands (each prints RESULT <metric> <value> lines):\n"
    "  spawn --port P [--log F] [--timeout S] -- CMD ARGS  start a broker, time its first Metadata\n"
    "  probe       advertised API versions that the harness adapts to\n"
    "  procstat    broker CPU seconds and peak/current RSS (--pid)\n"
    "  produce     produce throughput for --seconds\n"
    "  rawproduce  the same with prebuilt raw Produce requests on --connections\n"
    "  txn         transactions of --txn-msgs messages against idempotent produce\n"
    "  fill        produce --bytes (the consume workload's topic)\n"
    "  delete-topic  DeleteTopics --topic (--data D: until its files are gone)\n"
    "  consume     read a partition from its start (--drop-caches: cold)\n"
    "  fetch       the same with raw Fetch requests (no client library)\n"
    "  latency     end-to-end latency at --rate msgs/s for --seconds\n"
    "  group       consumer-group join/rebalance/leave times\n"
    "  failover    kill -9 of a partition's leader (--pid of each node) under an\n"
    "              idempotent acks=all producer at --rate: kill to first ack elsewhere\n"
    "  limit-tcp   loopback TCP transfer of --bytes\n"
    "  limit-fs    write/fsync/cold read of --bytes in --dir\n"
    "  prefault    write and delete --bytes in --dir (the first write to memory)\n"
    "options: -b HOST:PORT  --pid PID  --topic T  --partitions N  --pin P  --auto-create\n"
    "  --size B  --acks 1|-1|all  --compression none|gzip|snappy|lz4|zstd  --seconds S\n"
    "  --bytes N  --rate R  --drop-caches  --fetch-bytes N  --dir D  --group G\n"
    "  --connections N  --data D  --replication N  --controllers H:P,..  --txn-msgs N\n"
    "  --kill-controller (--pid A,B,C: a cluster's nodes 1, 2, 3; CPU is their sum)\n";

static void bench_usage(void)
{
    fputs(bench_usage_text, stderr);
    exit(2);
}

static void bench_defaults(bench_opts_t *o)
{
    memset(o, 0, sizeof(*o));
    o->bootstrap = "127.0.0.1:9092";
    o->topic = "strand-bench";
    o->compression = "none";
    o->group = "strand-bench";
    o->partitions = 1;
    o->pin_partition = -1;
    o->size = 1024;
    o->acks = 1;
    o->seconds = 3;
    o->bytes = 256 << 20;
    o->rate = 1000;
    o->fetch_bytes = 1 << 20;
    o->replication = 1;
}

/* --pid A[,B...]: the first is o->pid, all are o->pids. */
static int bench_opt_pids(bench_opts_t *o, const char *v)
{
    char *end;
    o->npids = 0;
    for (;;) {
        long pid = strtol(v, &end, 10);
        if (end == v || pid <= 0 || o->npids == BENCH_MAX_PIDS)
            return 0;
        o->pids[o->npids++] = (pid_t)pid;
        if (*end != ',')
            break;
        v = end + 1;
    }
    o->pid = o->pids[0];
    return *end == '\0';
}

/* One option at argv[*i] (advancing *i past its value); 0 if unknown. */
static int bench_opt(bench_opts_t *o, int argc, char **argv, int *i)
{
    const char *k = argv[*i], *v;
    if (!strcmp(k, "--auto-create"))
        return o->auto_create = 1;
    if (!strcmp(k, "--drop-caches"))
        return o->drop_caches = 1;
    if (!strcmp(k, "--kill-controller"))
        return o->kill_controller = 1;
    if (*i + 1 >= argc)
        return 0;
    v = argv[++*i];
    if (!strcmp(k, "-b") || !strcmp(k, "--bootstrap"))
        o->bootstrap = v;
    else if (!strcmp(k, "--pid"))
        return bench_opt_pids(o, v);
    else if (!strcmp(k, "--replication"))
        o->replication = atoi(v);
    else if (!strcmp(k, "--controllers"))
        o->controllers = v;
    else if (!strcmp(k, "--topic"))
        o->topic = v;
    else if (!strcmp(k, "--partitions"))
        o->partitions = atoi(v);
    else if (!strcmp(k, "--pin"))
        o->pin_partition = atoi(v);
    else if (!strcmp(k, "--size"))
        o->size = atoi(v);
    else if (!strcmp(k, "--acks"))
        o->acks = !strcmp(v, "all") ? -1 : atoi(v);
    else if (!strcmp(k, "--compression"))
        o->compression = v;
    else if (!strcmp(k, "--seconds"))
        o->seconds = atof(v);
    else if (!strcmp(k, "--bytes"))
        o->bytes = atoll(v);
    else if (!strcmp(k, "--rate"))
        o->rate = atoi(v);
    else if (!strcmp(k, "--fetch-bytes"))
        o->fetch_bytes = atoll(v);
    else if (!strcmp(k, "--dir"))
        o->dir = v;
    else if (!strcmp(k, "--data"))
        o->data = v;
    else if (!strcmp(k, "--connections"))
        o->connections = atoi(v);
    else if (!strcmp(k, "--txn-msgs"))
        o->txn_msgs = atoi(v);
    else if (!strcmp(k, "--group"))
        o->group = v;
    else
        return 0;
    return 1;
}

int main(int argc, char **argv)
{
    static const struct {
        const char *name;
        int (*fn)(const bench_opts_t *);
    } cmds[] = {
        {"probe", bench_cmd_probe},         {"procstat", bench_cmd_procstat},
        {"produce", bench_cmd_produce},     {"fill", bench_cmd_fill},
        {"rawproduce", bench_cmd_rawproduce}, {"delete-topic", bench_cmd_delete},
        {"txn", bench_cmd_txn},
        {"consume", bench_cmd_consume},     {"fetch", bench_cmd_fetch},
        {"latency", bench_cmd_latency},     {"group", bench_cmd_group},
        {"limit-tcp", bench_cmd_limit_tcp}, {"limit-fs", bench_cmd_limit_fs},
        {"prefault", bench_cmd_prefault},   {"failover", bench_cmd_failover},
    };
    bench_opts_t o;
    if (argc < 2)
        bench_usage();
    if (!strcmp(argv[1], "spawn"))
        return bench_cmd_spawn(argc - 2, argv + 2);
    bench_defaults(&o);
    for (int i = 2; i < argc; i++)
        if (!bench_opt(&o, argc, argv, &i))
            bench_usage();
    if (o.size <= 0 || o.partitions <= 0 || o.bytes <= 0 || o.seconds <= 0 ||
        o.replication <= 0)
        bench_usage();
    bench_payload(0, 0); /* the pool is built before any thread starts */
    for (size_t i = 0; i < sizeof(cmds) / sizeof(cmds[0]); i++)
        if (!strcmp(argv[1], cmds[i].name))
            return cmds[i].fn(&o);
    bench_usage();
    return 2;
}
