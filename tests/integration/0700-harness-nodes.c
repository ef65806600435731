/* 0700-harness-nodes: the cluster harness (testlib/cluster.h) on three
 * single nodes, with librdkafka through each:
 *   - three nodes start, each on its own ports and data dir, and each
 *     takes 20 messages and gives them back, byte for byte, at offsets 0-19;
 *   - node 2 killed with SIGKILL and restarted on the same dir and ports
 *     still has its 20 messages and takes 5 more (offsets 20-24);
 *   - node 3 paused (SIGSTOP): a Metadata request to it times out; resumed
 *     (SIGCONT) it answers again and takes messages;
 *   - every node exits 0 on SIGTERM, and is gone afterwards;
 *   - the description of 3 controllers + 3 brokers gives the voters string
 *     and each node's properties (a link through a proxy changes only the
 *     dialling node's voters); not started: Strand runs single nodes yet;
 *   - a test process that dies (abort) takes its nodes with it (strand
 *     only: Kafka's JVMs are detached by kafka-ref.sh and killed by
 *     run-tests.sh instead). */
#include "testlib/cluster.h"
#include "testlib/testlib.h"

#include <errno.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#define NMSG 20

static int64_t dr_ok, dr_fail, dr_next;

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    (void)rk;
    (void)opaque;
    if (msg->err) {
        dr_fail++;
        tl_log("delivery failed: %s", rd_kafka_err2str(msg->err));
        return;
    }
    TL_ASSERT_EQ(msg->offset, dr_next);
    dr_next++;
    dr_ok++;
}

static int msg_value(char *buf, size_t size, int node, int64_t i)
{
    return snprintf(buf, size, "node %d message %" PRId64, node, i);
}

/* Produces messages from..from+n-1 of node to topic (partition 0, acks=all),
 * every one at the offset of its number. */
static void produce(tl_node *node, const char *topic, int64_t from, int n, int create)
{
    rd_kafka_conf_t *conf = tl_conf(node->bootstrap);
    rd_kafka_t *rk;
    char val[64];
    tl_conf_set(conf, "acks", "all");
    tl_conf_set(conf, "linger.ms", "1");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rk = tl_new(RD_KAFKA_PRODUCER, conf);
    if (create)
        TL_ASSERT(tl_create_topic(rk, topic, 1) >= 1, "topic on node %d", node->id);
    dr_ok = dr_fail = 0;
    dr_next = from;
    for (int64_t i = from; i < from + n; i++) {
        int len = msg_value(val, sizeof(val), node->id, i);
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(val, (size_t)len),
            RD_KAFKA_V_END);
        TL_ASSERT(!err, "produce: %s", rd_kafka_err2name(err));
    }
    TL_ASSERT(rd_kafka_flush(rk, 30000) == 0, "node %d: flush timed out", node->id);
    TL_ASSERT_EQ(dr_fail, 0);
    TL_ASSERT_EQ(dr_ok, n);
    rd_kafka_destroy(rk);
}

static void check_msg(const rd_kafka_message_t *msg, void *arg)
{
    tl_node *node = arg;
    char want[64];
    int len = msg_value(want, sizeof(want), node->id, msg->offset);
    TL_ASSERT(msg->len == (size_t)len && memcmp(msg->payload, want, msg->len) == 0,
              "node %d offset %" PRId64 ": '%.*s', expected '%s'", node->id, msg->offset,
              (int)msg->len, (const char *)msg->payload, want);
}

/* Reads all n messages of node's topic from offset 0. */
static void consume(tl_node *node, const char *topic, int64_t n)
{
    rd_kafka_t *rk = tl_consume_from_start(tl_conf(node->bootstrap), topic, 1, n, 30, check_msg,
                                           node);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
}

/* A Metadata request answered (0) or its error, within timeout_ms. */
static rd_kafka_resp_err_t metadata(rd_kafka_t *rk, int timeout_ms)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, NULL, &md, timeout_ms);
    if (md)
        rd_kafka_metadata_destroy(md);
    return err;
}

static void pause_resume(tl_node *node, const char *topic)
{
    rd_kafka_conf_t *conf = tl_conf(node->bootstrap);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    rd_kafka_resp_err_t err;
    double t0;
    TL_ASSERT_EQ(metadata(rk, 10000), 0);
    tl_node_pause(node);
    t0 = tl_now();
    err = metadata(rk, 1500);
    TL_ASSERT(err == RD_KAFKA_RESP_ERR__TIMED_OUT, "paused node answered: %s",
              rd_kafka_err2name(err));
    TL_ASSERT(tl_now() - t0 >= 1.4, "timed out after %.2f s", tl_now() - t0);
    tl_node_resume(node);
    t0 = tl_now();
    TL_ASSERT_EQ(metadata(rk, 10000), 0);
    tl_log("node %d answers again %.3f s after SIGCONT", node->id, tl_now() - t0);
    rd_kafka_destroy(rk);
    produce(node, topic, NMSG, 5, 0);
    consume(node, topic, NMSG + 5);
}

static void file_has(const char *path, const char *line)
{
    char buf[8192];
    FILE *f = fopen(path, "r");
    size_t n;
    TL_ASSERT(f != NULL, "%s: %s", path, strerror(errno));
    n = fread(buf, 1, sizeof(buf) - 1, f);
    fclose(f);
    buf[n] = '\0';
    TL_ASSERT(strstr(buf, line) != NULL, "%s lacks '%s':\n%s", path, line, buf);
}

/* 3 controllers + 3 brokers, described and written, not started. */
static void check_description(void)
{
    tl_cluster *c = tl_cluster_new("0700-described", TL_QUORUM_SHARED);
    char want[256], path[PATH_MAX + 32];
    tl_proxy *px;
    tl_node *b4;
    tl_cluster_add_n(c, 3, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_add_n(c, 3, TL_ROLE_BROKER, (const char *const[]){"broker.rack=r1", NULL});
    b4 = tl_cluster_node(c, 4);
    px = tl_cluster_link(c, b4, tl_cluster_node(c, 1));
    snprintf(want, sizeof(want), "1@127.0.0.1:%d,2@127.0.0.1:%d,3@127.0.0.1:%d",
             tl_cluster_node(c, 1)->cport, tl_cluster_node(c, 2)->cport,
             tl_cluster_node(c, 3)->cport);
    TL_ASSERT(strcmp(tl_cluster_voters(c), want) == 0, "voters %s", tl_cluster_voters(c));
    TL_ASSERT(strchr(tl_cluster_bootstrap(c), ',') != NULL, "bootstrap %s",
              tl_cluster_bootstrap(c));
    for (int id = 1; id <= 6; id++) {
        tl_node *node = tl_cluster_node(c, id);
        tl_node_write_props(node);
        snprintf(path, sizeof(path), "%s/server.properties", node->dir);
        file_has(path, id <= 3 ? "process.roles=controller\n" : "process.roles=broker\n");
        file_has(path, tl_fmt("node.id=%d\n", id));
        if (id <= 3)
            file_has(path, tl_fmt("listeners=CONTROLLER://%s\n", node->controller));
        else
            file_has(path, "broker.rack=r1\n");
        if (id != 4)
            file_has(path, tl_fmt("controller.quorum.voters=%s\n", want));
    }
    snprintf(want, sizeof(want), "controller.quorum.voters=1@127.0.0.1:%d,2@", tl_proxy_port(px));
    snprintf(path, sizeof(path), "%s/server.properties", b4->dir);
    file_has(path, want);
    tl_cluster_free(c);
}

/* A test that crashes leaves no node behind. */
static void check_orphans(void)
{
    int fds[2], status;
    pid_t child, node_pid = 0;
    TL_ASSERT(pipe(fds) == 0, "pipe");
    child = fork();
    if (child == 0) {
        tl_cluster *c = tl_cluster_new("0700-orphan", TL_QUORUM_SOLO);
        tl_node *node = tl_cluster_add(c, TL_ROLE_COMBINED, NULL);
        tl_cluster_start(c);
        if (write(fds[1], &node->pid, sizeof(node->pid)) != sizeof(node->pid))
            _exit(2);
        signal(SIGABRT, SIG_DFL);
        abort();
    }
    close(fds[1]);
    TL_ASSERT(read(fds[0], &node_pid, sizeof(node_pid)) == sizeof(node_pid), "no node pid");
    close(fds[0]);
    waitpid(child, &status, 0);
    TL_ASSERT(WIFSIGNALED(status), "the crashing test exited 0x%x", status);
    for (double t0 = tl_now(); kill(node_pid, 0) == 0;) {
        TL_ASSERT(tl_now() - t0 < 5, "node pid %d outlived its test", (int)node_pid);
        usleep(10 * 1000);
    }
}

int main(void)
{
    tl_cluster *c;
    char *topic;
    pid_t pids[3];

    tl_init("0700-harness-nodes");
    check_description();
    c = tl_cluster_new("0700-nodes", TL_QUORUM_SOLO);
    tl_cluster_set(c, "num.partitions=1");
    tl_cluster_add_n(c, 3, TL_ROLE_COMBINED, NULL);
    tl_cluster_start(c);
    topic = tl_topic_name("harness");
    for (int id = 1; id <= 3; id++) {
        tl_node *node = tl_cluster_node(c, id);
        TL_ASSERT(tl_node_running(node), "node %d", id);
        produce(node, topic, 0, NMSG, 1);
        consume(node, topic, NMSG);
    }

    tl_node_kill9(tl_cluster_node(c, 2));
    tl_node_start(tl_cluster_node(c, 2));
    consume(tl_cluster_node(c, 2), topic, NMSG);
    produce(tl_cluster_node(c, 2), topic, NMSG, 5, 0);
    consume(tl_cluster_node(c, 2), topic, NMSG + 5);

    pause_resume(tl_cluster_node(c, 3), topic);

    for (int i = 0; i < 3; i++)
        pids[i] = tl_cluster_node(c, i + 1)->pid;
    tl_cluster_stop(c);
    for (int i = 0; i < 3; i++)
        TL_ASSERT(kill(pids[i], 0) < 0 && errno == ESRCH, "pid %d still there", (int)pids[i]);
    tl_cluster_free(c);
    free(topic);

    if (!tl_is_kafka())
        check_orphans();
    return tl_done();
}
