/* 0210-broker-configs-live: dynamic broker configs take effect on the
 * running broker, seen by a librdkafka producer and consumer (an own
 * broker: the changes would disturb the shared one).
 *   - message.max.bytes as the cluster-wide default: a 300 KB batch is
 *     refused (MSG_SIZE_TOO_LARGE) on a topic that inherits it, and on a
 *     topic created afterwards, but not on a topic with its own
 *     max.message.bytes; the node's own value beats the default; deleting
 *     both brings the 1 MB default back;
 *   - log.message.timestamp.type=LogAppendTime: a record sent with an old
 *     CreateTime comes back with the broker's append time;
 *   - log.roll.ms and log.retention.ms: a topic's old segment is rolled
 *     and deleted by retention (its log start offset moves);
 *   - cordoned.log.dirs="*": no partition can be placed, creations are
 *     refused (INVALID_REPLICATION_FACTOR, Kafka's message) until deleted;
 *   - listeners: a listener added to the node answers requests, and stops
 *     accepting once removed again.
 * All of that passes against Kafka 4.4 (KAFKA_REF=1). Strand only (what
 * Kafka shows differently or not at all): num.io.threads resizes the
 * worker pool (threads of the process), max.connections closes the
 * connections beyond it at once (Kafka makes them wait), and a layer's
 * logger (BROKER_LOGGER) set to WARN drops its INFO lines until deleted. */
#include <dirent.h>
#include <time.h>

#include "0200-admin.h"
#include "0209-bcfg.h"

static arena_t arena;
static int fd;
static char bc_msg[1024];
static rd_kafka_resp_err_t last_err;
static int delivered;
static int64_t last_ts;
static rd_kafka_timestamp_type_t last_tstype;

#define M bc_msg, sizeof(bc_msg)
#define BIG (300 * 1024)

static void on_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    last_err = m->err;
    delivered++;
}

/* One record of size bytes (timestamp ts, 0: now); its delivery error. */
static rd_kafka_resp_err_t produce1(rd_kafka_t *rk, const char *topic, size_t size, int64_t ts)
{
    char *v = calloc(1, size);
    int before = delivered;
    double until = tl_now() + 30;

    for (size_t i = 0; i < size; i++)
        v[i] = (char)('a' + tl_mix32((uint32_t)i) % 26); /* not compressible away */
    TL_ASSERT_EQ(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                   RD_KAFKA_V_VALUE(v, size), RD_KAFKA_V_TIMESTAMP(ts),
                                   RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                 0);
    free(v);
    while (delivered == before) {
        rd_kafka_poll(rk, 100);
        TL_ASSERT(tl_now() < until, "no delivery report");
    }
    return last_err;
}

/* Sets (value) or deletes (NULL) key of resource res, and waits until the
 * topic shows want for tkey. */
static void change(const char *res, const char *key, const char *value, const char *topic,
                   const char *tkey, const char *want)
{
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, res, key, value, M), 0, "");
    if (topic)
        bc_wait(fd, &arena, BC_TOPIC, topic, tkey, want, -1);
}

static void message_size(rd_kafka_t *rk, const char *node)
{
    char *inherit = tl_topic_name("live-inherit"), *own = tl_topic_name("live-own");
    char *later = tl_topic_name("live-later");
    const char *cfg[] = {"max.message.bytes", "2000000", NULL};

    TL_ASSERT_EQ(adm_create(rk, inherit, 1, 1, NULL, 0, NULL, 0), 0);
    TL_ASSERT_EQ(adm_create(rk, own, 1, 1, cfg, 0, NULL, 0), 0);
    tl_wait_topic(rk, inherit, 30000);
    tl_wait_topic(rk, own, 30000);
    TL_ASSERT_EQ(produce1(rk, inherit, BIG, 0), 0);
    change("", "message.max.bytes", "200000", inherit, "max.message.bytes", "200000");
    TL_ASSERT_EQ(produce1(rk, inherit, BIG, 0), RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
    TL_ASSERT_EQ(produce1(rk, own, BIG, 0), 0);
    TL_ASSERT_EQ(adm_create(rk, later, 1, 1, NULL, 0, NULL, 0), 0);
    tl_wait_topic(rk, later, 30000);
    bc_wait(fd, &arena, BC_TOPIC, later, "max.message.bytes", "200000", BC_SRC_DEFAULT_BROKER);
    TL_ASSERT_EQ(produce1(rk, later, BIG, 0), RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
    /* the node's value beats the cluster-wide one */
    change(node, "message.max.bytes", "400000", inherit, "max.message.bytes", "400000");
    TL_ASSERT_EQ(produce1(rk, inherit, BIG, 0), 0);
    change(node, "message.max.bytes", NULL, inherit, "max.message.bytes", "200000");
    change("", "message.max.bytes", NULL, inherit, "max.message.bytes", "1048588");
    TL_ASSERT_EQ(produce1(rk, inherit, BIG, 0), 0);
    TL_ASSERT_EQ(produce1(rk, later, BIG, 0), 0);
    free(inherit);
    free(own);
    free(later);
}

static void check_ts(const rd_kafka_message_t *m, void *arg)
{
    (void)arg;
    last_ts = rd_kafka_message_timestamp(m, &last_tstype);
}

static void timestamps(rd_kafka_t *rk, const char *bs)
{
    char *topic = tl_topic_name("live-ts");
    int64_t old = 1000000000000LL; /* 2001: within no before.max limit by default */
    int64_t now_ms = (int64_t)(time(NULL)) * 1000;

    TL_ASSERT_EQ(adm_create(rk, topic, 1, 1, NULL, 0, NULL, 0), 0);
    tl_wait_topic(rk, topic, 30000);
    change("", "log.message.timestamp.type", "LogAppendTime", topic, "message.timestamp.type",
           "LogAppendTime");
    TL_ASSERT_EQ(produce1(rk, topic, 10, old), 0);
    rd_kafka_t *c = tl_consume_from_start(tl_conf(bs), topic, 1, 1, 30, check_ts, NULL);
    rd_kafka_destroy(c);
    TL_ASSERT(last_tstype == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME, "timestamp type %d",
              (int)last_tstype);
    TL_ASSERT(last_ts > now_ms - 60000 && last_ts < now_ms + 60000, "append time %lld",
              (long long)last_ts);
    change("", "log.message.timestamp.type", NULL, topic, "message.timestamp.type", "CreateTime");
    free(topic);
}

/* Rolling and retention as the cluster-wide default (the broker checks
 * retention every second: log.retention.check.interval.ms=1000). */
static void retention(rd_kafka_t *rk)
{
    char *topic = tl_topic_name("live-ret");
    int64_t lo = -1, hi = -1;
    double until;

    TL_ASSERT_EQ(adm_create(rk, topic, 1, 1, NULL, 0, NULL, 0), 0);
    tl_wait_topic(rk, topic, 30000);
    change("", "log.roll.ms", "500", topic, "segment.ms", "500");
    change("", "log.retention.ms", "500", topic, "retention.ms", "500");
    TL_ASSERT_EQ(produce1(rk, topic, 100, 0), 0);
    usleep(1200 * 1000);
    TL_ASSERT_EQ(produce1(rk, topic, 100, 0), 0); /* rolls: the first segment is old */
    for (until = tl_now() + 20; tl_now() < until; usleep(200 * 1000)) {
        TL_ASSERT_EQ(rd_kafka_query_watermark_offsets(rk, topic, 0, &lo, &hi, 10000), 0);
        if (lo >= 1)
            break;
    }
    TL_ASSERT(lo >= 1 && hi == 2, "log start %lld end %lld: retention did not delete",
              (long long)lo, (long long)hi);
    change("", "log.retention.ms", NULL, topic, "retention.ms", "604800000");
    change("", "log.roll.ms", NULL, topic, "segment.ms", "604800000");
    free(topic);
}

/* cordoned.log.dirs: with every log dir cordoned, no partition can be
 * placed, and creations are refused with Kafka's words. */
static void cordoned(rd_kafka_t *rk, const char *node)
{
    char *topic = tl_topic_name("live-cordon"), msg[512];

    change(node, "cordoned.log.dirs", "*", NULL, NULL, NULL);
    bc_wait(fd, &arena, BC_BROKER, node, "cordoned.log.dirs", "*", BC_SRC_BROKER);
    TL_ASSERT_EQ(adm_create(rk, topic, 1, 1, NULL, 0, msg, sizeof(msg)),
                 RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR);
    TL_ASSERT(!strcmp(msg, "Unable to replicate the partition 1 time(s): All brokers are "
                           "currently fenced, or have all their log directories cordoned."),
              "%s", msg);
    change(node, "cordoned.log.dirs", NULL, NULL, NULL, NULL);
    bc_wait(fd, &arena, BC_BROKER, node, "cordoned.log.dirs", "", BC_SRC_DEFAULT);
    TL_ASSERT_EQ(adm_create(rk, topic, 1, 1, NULL, 0, NULL, 0), 0);
    free(topic);
}

/* The listeners line of the broker's server.properties. */
static void static_listeners(const tl_broker *b, char *out, size_t cap)
{
    char path[600], line[600];
    snprintf(path, sizeof(path), "%s/server.properties", b->dir);
    FILE *f = fopen(path, "r");
    TL_ASSERT(f, "%s", path);
    out[0] = '\0';
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "listeners=", 10)) {
            snprintf(out, cap, "%s", line + 10);
            out[strcspn(out, "\r\n")] = '\0';
        }
    fclose(f);
    TL_ASSERT(out[0], "no listeners in %s", path);
}

static void listeners(const tl_broker *b, const char *node)
{
    char orig[600], with[1100];
    int port = tl_free_port();
    double until;
    bc_op ops[] = {{BC_SET, "listener.security.protocol.map",
                    "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTRA:PLAINTEXT"},
                   {BC_SET, "listeners", with}};

    static_listeners(b, orig, sizeof(orig));
    snprintf(with, sizeof(with), "%s,EXTRA://127.0.0.1:%d", orig, port);
    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, node, ops, 2, 0, M), 0, "");
    for (until = tl_now() + 20; !bc_answers(port); usleep(200 * 1000))
        TL_ASSERT(tl_now() < until, "the new listener on %d does not answer", port);
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, node, "listeners", NULL, M), 0, "");
    for (until = tl_now() + 20; bc_answers(port); usleep(200 * 1000))
        TL_ASSERT(tl_now() < until, "the removed listener on %d still answers", port);
    TL_ASSERT(bc_answers(b->port), "the first listener still answers");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, node, "listener.security.protocol.map", NULL, M), 0,
              "");
}

static int threads_of(pid_t pid)
{
    char path[64];
    int n = 0;
    snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
    DIR *d = opendir(path);
    for (struct dirent *e; d && (e = readdir(d));)
        n += e->d_name[0] != '.';
    if (d)
        closedir(d);
    return n;
}

static void wait_threads(pid_t pid, int want)
{
    double until = tl_now() + 10;
    while (threads_of(pid) != want) {
        TL_ASSERT(tl_now() < until, "%d threads, expected %d", threads_of(pid), want);
        usleep(50 * 1000);
    }
}

/* Strand: the pool has num.io.threads workers (static 2 here); a worker
 * goes, and comes back. */
static void io_threads(const tl_broker *b, const char *node)
{
    if (sysconf(_SC_NPROCESSORS_ONLN) < 2)
        return; /* one CPU: no pool at all */
    int before = threads_of(b->pid);
    change(node, "num.io.threads", "1", NULL, NULL, NULL);
    wait_threads(b->pid, before - 1);
    change(node, "num.io.threads", NULL, NULL, NULL, NULL);
    wait_threads(b->pid, before);
}

/* Strand: connections beyond max.connections are closed at accept. */
static void max_connections(const tl_broker *b, const char *node)
{
    int s[8], closed = 0;
    size_t got;

    change(node, "max.connections", "4", NULL, NULL, NULL);
    for (int i = 0; i < 8; i++)
        s[i] = tl_connect(b->bootstrap, 2000);
    for (int i = 0; i < 8; i++)
        closed += s[i] < 0 || tl_wait_closed(s[i], 500, &got) == 1;
    TL_ASSERT(closed >= 4, "only %d of 8 connections closed with max.connections=4", closed);
    for (int i = 0; i < 8; i++)
        if (s[i] >= 0)
            close(s[i]);
    change(node, "max.connections", NULL, NULL, NULL, NULL);
    TL_ASSERT(bc_answers(b->port), "connections are taken again");
}

/* Whether the broker's log has a line with text. */
static int log_has(const tl_broker *b, const char *text)
{
    char path[600], line[2048];
    int found = 0;
    snprintf(path, sizeof(path), "%s/strand.log", b->dir);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f))
        found |= strstr(line, text) != NULL;
    if (f)
        fclose(f);
    return found;
}

/* Strand: a layer's logger set above INFO drops that layer's INFO lines
 * ("created topic", from the partition layer), and its DELETE brings them
 * back (root's level). */
static void loggers(rd_kafka_t *rk, const tl_broker *b, const char *node)
{
    char *quiet = tl_topic_name("live-quiet"), *loud = tl_topic_name("live-loud"), text[300];
    bc_op warn = {BC_SET, "strand.partition", "WARN"}, del = {BC_DELETE, "strand.partition", NULL};
    const char *keys[] = {"strand.partition", NULL};

    BC_EXPECT(bc_iac(fd, &arena, BC_LOGGER, node, &warn, 1, 0, M), 0, "");
    TL_ASSERT(bc_is(bc_find(bc_describe(fd, &arena, BC_LOGGER, node, keys), "strand.partition"),
                    "WARN", BC_SRC_LOGGER), "strand.partition at WARN");
    TL_ASSERT_EQ(adm_create(rk, quiet, 1, 1, NULL, 0, NULL, 0), 0);
    BC_EXPECT(bc_iac(fd, &arena, BC_LOGGER, node, &del, 1, 0, M), 0, "");
    TL_ASSERT(bc_is(bc_find(bc_describe(fd, &arena, BC_LOGGER, node, keys), "strand.partition"),
                    "INFO", BC_SRC_LOGGER), "strand.partition back at root's INFO");
    TL_ASSERT_EQ(adm_create(rk, loud, 1, 1, NULL, 0, NULL, 0), 0);
    snprintf(text, sizeof(text), "created topic %s ", loud);
    TL_ASSERT(log_has(b, text), "no '%s' in the log", text);
    snprintf(text, sizeof(text), "created topic %s ", quiet);
    TL_ASSERT(!log_has(b, text), "'%s' logged at WARN", text);
    free(quiet);
    free(loud);
}

int main(void)
{
    tl_init("0210-broker-configs-live");
    /* Kafka starts its retention task 30 s after the start
     * (log.initial.task.delay.ms, which Strand does not have: it checks from
     * the start). */
    static const char *extra[] = {"log.retention.check.interval.ms=1000", "num.io.threads=2",
                                  "log.initial.task.delay.ms=0", NULL};
    tl_broker b = {0};
    char node[16] = "1"; /* tl_broker_start's node.id */
    char *dir = tl_scratch_dir("0210");

    tl_broker_start(&b, dir, extra);
    rd_kafka_conf_t *conf = tl_conf(b.bootstrap);
    tl_conf_set(conf, "message.max.bytes", "10000000");
    tl_conf_set(conf, "linger.ms", "0");
    tl_conf_set(conf, "allow.auto.create.topics", "false");
    rd_kafka_conf_set_dr_msg_cb(conf, on_dr);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    arena_init(&arena, 1 << 16);
    fd = tl_connect(b.bootstrap, 20000);
    TL_ASSERT(fd >= 0, "connect");
    message_size(rk, node);
    timestamps(rk, b.bootstrap);
    retention(rk);
    cordoned(rk, node);
    listeners(&b, node);
    if (!tl_is_kafka()) {
        io_threads(&b, node);
        max_connections(&b, node);
        loggers(rk, &b, node);
    }
    close(fd);
    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    arena_destroy(&arena);
    free(dir);
    return tl_done();
}
