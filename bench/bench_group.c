/* Consumer-group rebalance time (classic protocol, eager range assignor).
 *
 * Three figures from one group over o->partitions partitions: the first
 * member's join (subscribe to assignment), the rebalance when a second
 * member joins (its subscribe until both hold their new assignments) and
 * the one when it leaves (its close until the first holds everything
 * again). Both consumers heartbeat every 100 ms: the existing member learns
 * of a rebalance from a heartbeat answer, and librdkafka's 3 s default
 * would measure the client's timer, not the broker. For the same reason
 * their Fetch long polls last 10 ms, not 500: a member gives up its
 * partitions only when its outstanding Fetch has returned. */
#include "bench/bench.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

typedef struct bench_member_s {
    rd_kafka_t *rk;
    int assigns; /* assignments received so far */
    int nparts;  /* partitions held now */
    double t_assigned;
} bench_member_t;

static void bench_rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                               rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    bench_member_t *m = opaque;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        rd_kafka_assign(rk, parts);
        m->nparts = parts->cnt;
        m->assigns++;
        m->t_assigned = bench_now();
    } else {
        rd_kafka_assign(rk, NULL);
        m->nparts = 0;
    }
}

static void bench_member_start(bench_member_t *m, const bench_opts_t *o)
{
    rd_kafka_conf_t *conf = bench_conf(o->bootstrap);
    bench_conf_set(conf, "group.id", o->group);
    bench_conf_set(conf, "heartbeat.interval.ms", "100");
    /* a revoke waits for the member's long-polling Fetch to return */
    bench_conf_set(conf, "fetch.wait.max.ms", "10");
    bench_conf_set(conf, "session.timeout.ms", "6000");
    bench_conf_set(conf, "partition.assignment.strategy", "range");
    bench_conf_set(conf, "enable.auto.commit", "false");
    rd_kafka_conf_set_rebalance_cb(conf, bench_rebalance_cb);
    rd_kafka_conf_set_opaque(conf, m);
    memset(m, 0, sizeof(*m));
    m->rk = bench_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_poll_set_consumer(m->rk);
    rd_kafka_topic_partition_list_t *topics = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(topics, o->topic, RD_KAFKA_PARTITION_UA);
    rd_kafka_resp_err_t err = rd_kafka_subscribe(m->rk, topics);
    if (err)
        bench_die("subscribe: %s", rd_kafka_err2str(err));
    rd_kafka_topic_partition_list_destroy(topics);
}

/* Polls the members (rebalance callbacks run inside poll) until member a
 * has had want_a assignments and b (if any) want_b, with all partitions
 * held between them. */
static void bench_members_wait(bench_member_t *a, int want_a, bench_member_t *b, int want_b,
                               int nparts, const char *what)
{
    double until = bench_now() + 60;
    for (;;) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(a->rk, 0);
        if (m)
            rd_kafka_message_destroy(m);
        if (b && (m = rd_kafka_consumer_poll(b->rk, 0)))
            rd_kafka_message_destroy(m);
        if (a->assigns >= want_a && (!b || b->assigns >= want_b) &&
            a->nparts + (b ? b->nparts : 0) == nparts)
            return;
        if (bench_now() > until)
            bench_die("group: %s did not complete in 60 s", what);
        usleep(200);
    }
}

static void *bench_member_close(void *arg)
{
    bench_member_t *m = arg;
    rd_kafka_consumer_close(m->rk);
    return NULL;
}

static int bench_group_supported(const bench_opts_t *o)
{
    int16_t maxv[20];
    char host[256];
    int port;
    bench_hostport(o->bootstrap, host, sizeof(host), &port);
    if (bench_wire_apiversions(host, port, maxv, 20) < 0)
        bench_die("ApiVersions to %s failed", o->bootstrap);
    return maxv[11] >= 0 && maxv[14] >= 0 && maxv[12] >= 0 && maxv[10] >= 0;
}

int bench_cmd_group(const bench_opts_t *o)
{
    bench_member_t a, b;
    pthread_t thr;
    if (!bench_group_supported(o)) {
        bench_log("group: the broker does not advertise JoinGroup/SyncGroup/Heartbeat/FindCoordinator: skipped");
        bench_result("group_skipped", 1);
        return 0;
    }
    rd_kafka_conf_t *conf = bench_conf(o->bootstrap);
    bench_conf_set(conf, "allow.auto.create.topics", o->auto_create ? "true" : "false");
    rd_kafka_t *admin = bench_new(RD_KAFKA_PRODUCER, conf);
    int nparts = bench_topic_ensure(admin, o);
    rd_kafka_destroy(admin);

    double t0 = bench_now();
    bench_member_start(&a, o);
    bench_members_wait(&a, 1, NULL, 0, nparts, "first join");
    bench_result("group_join_ms", (a.t_assigned - t0) * 1000);

    double t1 = bench_now();
    bench_member_start(&b, o);
    bench_members_wait(&a, 2, &b, 1, nparts, "join of a second member");
    double t = a.t_assigned > b.t_assigned ? a.t_assigned : b.t_assigned;
    bench_result("group_rebalance_ms", (t - t1) * 1000);

    double t2 = bench_now();
    int had = a.assigns;
    pthread_create(&thr, NULL, bench_member_close, &b);
    bench_members_wait(&a, had + 1, NULL, 0, nparts, "leave of the second member");
    bench_result("group_leave_ms", (a.t_assigned - t2) * 1000);
    pthread_join(thr, NULL);
    rd_kafka_destroy(b.rk);
    rd_kafka_consumer_close(a.rk);
    rd_kafka_destroy(a.rk);
    return 0;
}
