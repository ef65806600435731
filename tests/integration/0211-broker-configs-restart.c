/* 0211-broker-configs-restart: dynamic broker configs survive a restart
 * and are in effect from its start, before the topics load: after a
 * clean stop and a start on the same data, DescribeConfigs reports them
 * from the same layers (a key Kafka does not define too), a topic that
 * inherits the cluster-wide message.max.bytes refuses a batch over it at
 * once, records get the broker's append time (the node's
 * log.message.timestamp.type), and the listener added to the node is
 * opened again. Passes against Kafka 4.4 (KAFKA_REF=1); Strand only: the
 * node's num.io.threads sizes the worker pool from the start. */
#include <dirent.h>

#include "0200-admin.h"
#include "0209-bcfg.h"

static arena_t arena;
static char bc_msg[1024];
static rd_kafka_resp_err_t last_err;
static int delivered;
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

static rd_kafka_t *producer(const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "message.max.bytes", "10000000");
    tl_conf_set(conf, "linger.ms", "0");
    tl_conf_set(conf, "allow.auto.create.topics", "false");
    rd_kafka_conf_set_dr_msg_cb(conf, on_dr);
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

static rd_kafka_resp_err_t produce1(rd_kafka_t *rk, const char *topic, size_t size)
{
    char *v = calloc(1, size);
    int before = delivered;
    double until = tl_now() + 30;

    for (size_t i = 0; i < size; i++)
        v[i] = (char)('a' + tl_mix32((uint32_t)i) % 26);
    TL_ASSERT_EQ(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                   RD_KAFKA_V_VALUE(v, size), RD_KAFKA_V_TIMESTAMP(1000000000000LL),
                                   RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                 0);
    free(v);
    while (delivered == before) {
        rd_kafka_poll(rk, 100);
        TL_ASSERT(tl_now() < until, "no delivery report");
    }
    return last_err;
}

static void check_ts(const rd_kafka_message_t *m, void *arg)
{
    (void)arg;
    rd_kafka_message_timestamp(m, &last_tstype);
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

/* The listeners line of the broker's server.properties, with EXTRA. */
static void with_extra(const tl_broker *b, int port, char *out, size_t cap)
{
    char path[600], line[600];
    snprintf(path, sizeof(path), "%s/server.properties", b->dir);
    FILE *f = fopen(path, "r");
    TL_ASSERT(f, "%s", path);
    while (fgets(line, sizeof(line), f))
        if (!strncmp(line, "listeners=", 10)) {
            line[strcspn(line, "\r\n")] = '\0';
            snprintf(out, cap, "%s,EXTRA://127.0.0.1:%d", line + 10, port);
        }
    fclose(f);
}

static void set_all(int fd, const tl_broker *b, int port, int threads)
{
    char listeners[1100];
    with_extra(b, port, listeners, sizeof(listeners));
    bc_op node[] = {{BC_SET, "log.message.timestamp.type", "LogAppendTime"},
                    {BC_SET, "listener.security.protocol.map",
                     "PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT,EXTRA:PLAINTEXT"},
                    {BC_SET, "listeners", listeners},
                    {BC_SET, "num.io.threads", "1"}};
    bc_op dflt[] = {{BC_SET, "message.max.bytes", "200000"},
                    {BC_SET, "strand.test.unknown", "7"}};

    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, "1", node, threads ? 4 : 3, 0, M), 0, "");
    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, "", dflt, 2, 0, M), 0, "");
}

static void check_all(int fd, rd_kafka_t *rk, const char *bs, const char *topic, int port)
{
    bc_wait(fd, &arena, BC_BROKER, "", "message.max.bytes", "200000", BC_SRC_DEFAULT_BROKER);
    bc_wait(fd, &arena, BC_BROKER, "1", "message.max.bytes", "200000", BC_SRC_DEFAULT_BROKER);
    bc_wait(fd, &arena, BC_BROKER, "1", "log.message.timestamp.type", "LogAppendTime",
            BC_SRC_BROKER);
    bc_wait(fd, &arena, BC_BROKER, "1", "strand.test.unknown", NULL, BC_SRC_DEFAULT_BROKER);
    bc_wait(fd, &arena, BC_TOPIC, topic, "max.message.bytes", "200000", BC_SRC_DEFAULT_BROKER);
    TL_ASSERT_EQ(produce1(rk, topic, BIG), RD_KAFKA_RESP_ERR_MSG_SIZE_TOO_LARGE);
    TL_ASSERT_EQ(produce1(rk, topic, 100), 0);
    rd_kafka_t *c = tl_consume_from_start(tl_conf(bs), topic, 1, 1, 30, check_ts, NULL);
    rd_kafka_destroy(c);
    TL_ASSERT(last_tstype == RD_KAFKA_TIMESTAMP_LOG_APPEND_TIME, "timestamp type %d",
              (int)last_tstype);
    for (double until = tl_now() + 20; !bc_answers(port); usleep(200 * 1000))
        TL_ASSERT(tl_now() < until, "the node's extra listener on %d does not answer", port);
}

int main(void)
{
    tl_init("0211-broker-configs-restart");
    static const char *extra[] = {"num.io.threads=2", NULL};
    tl_broker b = {0};
    char *dir = tl_scratch_dir("0211");
    char *topic = tl_topic_name("restart");
    int port = tl_free_port(), pool = !tl_is_kafka() && sysconf(_SC_NPROCESSORS_ONLN) >= 2;

    arena_init(&arena, 1 << 16);
    tl_broker_start(&b, dir, extra);
    rd_kafka_t *rk = producer(b.bootstrap);
    TL_ASSERT_EQ(adm_create(rk, topic, 1, 1, NULL, 0, NULL, 0), 0);
    tl_wait_topic(rk, topic, 30000);
    int fd = tl_connect(b.bootstrap, 20000), threads = threads_of(b.pid);
    TL_ASSERT(fd >= 0, "connect");
    set_all(fd, &b, port, pool);
    check_all(fd, rk, b.bootstrap, topic, port);
    close(fd);
    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);

    tl_broker_start(&b, dir, extra);
    if (pool) /* one io thread from the start */
        TL_ASSERT_EQ(threads_of(b.pid), threads - 1);
    rk = producer(b.bootstrap);
    tl_wait_topic(rk, topic, 30000);
    fd = tl_connect(b.bootstrap, 20000);
    TL_ASSERT(fd >= 0, "connect after the restart");
    check_all(fd, rk, b.bootstrap, topic, port);
    close(fd);
    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    arena_destroy(&arena);
    free(topic);
    free(dir);
    return tl_done();
}
