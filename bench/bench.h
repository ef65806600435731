/* strand-bench: the benchmark client behind `make bench` (bench/run.sh).
 *
 * One program, one subcommand per measurement, each against one broker
 * (Strand or Apache Kafka, it cannot tell them apart) or against the
 * machine itself (the physical limits). Every figure is printed on stdout as
 *
 *     RESULT <metric> <value>
 *
 * and nothing else goes to stdout, so run.sh can collect the lines of many
 * runs and take medians. Progress and errors go to stderr.
 *
 * The broker process is measured from outside: with --pid, the subcommand
 * reads the broker's CPU time (utime+stime, /proc/PID/stat) just before and
 * just after its measured window. */
#ifndef STRAND_BENCH_H
#define STRAND_BENCH_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <librdkafka/rdkafka.h>

#define BENCH_MAX_PIDS 8

/* Options of all subcommands; each uses the ones it needs. */
typedef struct bench_opts_s {
    const char *bootstrap; /* host:port */
    const char *topic;
    const char *compression; /* librdkafka compression.type */
    const char *dir;         /* limit-fs: directory on the data file system */
    const char *group;
    const char *data;        /* delete-topic: the broker's data directory */
    pid_t pid;             /* broker process to sample, 0: none */
    pid_t pids[BENCH_MAX_PIDS]; /* --pid A,B,C: a cluster's, node id i+1 at [i] */
    int npids;             /* how many (pids[0] == pid) */
    int replication;       /* topics' replication factor (default 1) */
    const char *controllers; /* failover: the controller listeners, host:port,... */
    int kill_controller;   /* failover: kill the leader that is active controller too */
    int partitions;        /* topic's partition count */
    int pin_partition;     /* -1: partitioner; else every message goes there */
    int auto_create;       /* create topics by Metadata, not CreateTopics */
    int size;              /* message value bytes */
    int acks;              /* 1 or -1 */
    double seconds;        /* produce: duration of the measured window */
    int64_t bytes;         /* fill / limits: byte volume */
    int rate;              /* latency: offered messages per second */
    int drop_caches;       /* consume / limit-fs: drop the page cache first */
    int64_t fetch_bytes;   /* consume: max.partition.fetch.bytes */
    int connections;       /* rawproduce: connections (threads) */
    int txn_msgs;          /* txn: messages per transaction */
} bench_opts_t;

/* ---- bench_util.c ---- */

double bench_now(void);                   /* monotonic seconds */
int64_t bench_now_ns(void);               /* monotonic nanoseconds */
void bench_result(const char *metric, double value);
/* Zeroed memory or exit; caller owns it (free). */
void *bench_alloc(size_t n);
void bench_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
void bench_die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));

/* The payload pool: a few MB of word-like text (compresses about 2x with
 * lz4, like typical JSON/log payloads), so messages neither compress to
 * nothing nor not at all. Message i uses bench_payload(i, size); the
 * pointer stays valid for the life of the process (not owned by caller). */
const char *bench_payload(uint64_t i, int size);

/* CPU seconds (user+system, all threads) the process has used; -1 if it is
 * gone. bench_proc_cpu2 splits them (returns -1 if gone). */
double bench_proc_cpu(pid_t pid);
int bench_proc_cpu2(pid_t pid, double *user, double *sys);
/* The same summed over every --pid process (a cluster's brokers): -1 if
 * one of them is gone. */
int bench_pids_cpu2(const bench_opts_t *o, double *user, double *sys);
/* A "Vm..:" field of /proc/PID/status in MiB (e.g. "VmHWM"); -1 if absent. */
double bench_proc_mem_mb(pid_t pid, const char *field);
/* Flushes dirty pages and, if asked and allowed, drops the page cache.
 * Returns 1 if the cache was dropped. */
int bench_settle(int drop_caches);


/* CPU seconds this process has used (the client's share of the machine). */
double bench_self_cpu(void);
/* CPU readings at the start of a measured window: the broker's, this
 * process's (the client) and the whole machine's. */
typedef struct bench_cpu_s {
    double user, sys, self, machine, t;
} bench_cpu_t;
void bench_cpu_start(const bench_opts_t *o, bench_cpu_t *c);
/* Prints the client's CPU seconds since c0 and, with o->pid, the broker's
 * (total and user space, per million messages and per GB of 10^9 bytes)
 * and the other processes' share of the machine meanwhile. The
 * split matters: system time is mostly the kernel copying bytes (socket,
 * page cache), which no broker design avoids. */
void bench_report_cpu(const bench_opts_t *o, const bench_cpu_t *c0, int64_t msgs, double bytes);

/* Latency percentiles (sorts v in place). */
double bench_percentile(int64_t *v, size_t n, double p);

/* ---- bench_kafka.c: librdkafka plumbing ---- */

/* A config with bootstrap.servers and an error callback that logs.
 * Caller owns it (rd_kafka_new takes ownership). */
rd_kafka_conf_t *bench_conf(const char *bootstrap);
void bench_conf_set(rd_kafka_conf_t *conf, const char *key, const char *val);
/* rd_kafka_new or die; takes ownership of conf. */
rd_kafka_t *bench_new(rd_kafka_type_t type, rd_kafka_conf_t *conf);
/* Makes sure the topic exists with o->partitions partitions (CreateTopics,
 * or auto-creation through Metadata with o->auto_create) and every
 * partition has a leader. Returns the partition count it has. */
int bench_topic_ensure(rd_kafka_t *rk, const bench_opts_t *o);
/* The leader of topic's partition part as "host:port" into addr (len
 * bytes), from a Metadata request: its node id, or -1 if unknown. */
int32_t bench_leader_addr(rd_kafka_t *rk, const char *topic, int part, char *addr, size_t len);
/* Low and high watermark of one partition; dies on error. */
void bench_watermarks(rd_kafka_t *rk, const char *topic, int part, int64_t *lo, int64_t *hi);

/* ---- bench_wire.c: raw protocol, start-up ---- */

/* A response buffer reused across calls (free p when done). */
typedef struct bench_wbuf_s {
    uint8_t *p;
    size_t cap;
} bench_wbuf_t;

/* Blocking TCP connection with send/receive timeouts; -1 on error. */
int bench_wire_connect(const char *host, int port, int timeout_ms);
/* Sends (writing) or receives exactly len bytes; -1 on error or EOF. */
int bench_io_all(int fd, void *buf, size_t len, int writing);
/* One request (header v1, client id strand-bench) and its response on fd.
 * Returns the response after the correlation id (inside wb, valid until
 * the next call) and its length in *len, or NULL on any error. */
const uint8_t *bench_wire_call(int fd, int key, int ver, const uint8_t *body, size_t blen,
                               bench_wbuf_t *wb, size_t *len);
/* Big-endian helpers: put returns the bytes written. */
size_t bench_put16(uint8_t *p, int v);
size_t bench_put32(uint8_t *p, int32_t v);
size_t bench_put64(uint8_t *p, int64_t v);
int16_t bench_get16(const uint8_t *p);
int32_t bench_get32(const uint8_t *p);
int64_t bench_get64(const uint8_t *p);

/* Sends ApiVersions v0 to host:port and fills max_ver[key] for every API
 * key 0..nkeys-1 (-1: not advertised). Returns 0, or -1 on error. */
int bench_wire_apiversions(const char *host, int port, int16_t *max_ver, int nkeys);
/* One Metadata v1 round trip on a fresh connection within timeout_ms:
 * 0 if the broker answered with at least one broker, -1 otherwise. */
int bench_wire_metadata(const char *host, int port, int timeout_ms);
/* Splits "host:port"; host is copied into hostbuf. Dies if malformed. */
void bench_hostport(const char *hp, char *hostbuf, size_t hostlen, int *port);

/* ---- subcommands (return the process exit status) ---- */

int bench_cmd_spawn(int argc, char **argv);
int bench_cmd_probe(const bench_opts_t *o);
int bench_cmd_procstat(const bench_opts_t *o);
int bench_cmd_produce(const bench_opts_t *o);
/* Delivery reports counted (the opaque of a producer's conf): ok,
 * failed (the first 5 logged), the time of the last. */
typedef struct bench_prod_s {
    int64_t ok, failed;
    double last_dr; /* monotonic time of the last delivery report */
} bench_prod_t;
void bench_prod_dr(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque);
/* bench_txn.c: transactions against idempotent produce. */
int bench_cmd_txn(const bench_opts_t *o);
int bench_cmd_rawproduce(const bench_opts_t *o);
int bench_cmd_fill(const bench_opts_t *o);
int bench_cmd_delete(const bench_opts_t *o);
int bench_cmd_consume(const bench_opts_t *o);
int bench_cmd_fetch(const bench_opts_t *o);
int bench_cmd_latency(const bench_opts_t *o);
int bench_cmd_failover(const bench_opts_t *o);
int bench_cmd_group(const bench_opts_t *o);
int bench_cmd_limit_tcp(const bench_opts_t *o);
int bench_cmd_limit_fs(const bench_opts_t *o);
int bench_cmd_prefault(const bench_opts_t *o);

#endif
