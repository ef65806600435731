/* Failover: kill -9 of a partition's leader under load, and the time until
 * another broker acknowledges a write.
 *
 * A cluster's nodes are given as --pid A,B,C (node ids 1, 2, 3 in that
 * order) and their controller listeners as --controllers. The active
 * controller is asked of the quorum (DescribeQuorum); the topic gets one
 * partition whose replicas are listed victim first, so that the victim
 * leads it: a node that is not the active controller, or with
 * --kill-controller the active controller itself. An idempotent acks=all
 * producer sends at --rate; once it has had acknowledgements for --seconds,
 * this process kills the victim (SIGKILL, the clock read just before), and
 * the figure is the time from then to the first successful delivery report
 * from another broker (rd_kafka_message_broker_id). Doing the kill here,
 * not in run.sh, keeps the start of the interval exact.
 *
 * DescribeQuorum v0 (flexible; request header v2, response header v1):
 *   request: int16 55 | int16 0 | int32 corr | int16 client_id len | bytes |
 *     uvarint 0 (tags) | topics: uvarint 2 | compact string
 *     "__cluster_metadata" | partitions: uvarint 2 | int32 0 | uvarint 0 |
 *     uvarint 0 | uvarint 0
 *   response: int32 corr | uvarint tags | int16 error | topics: uvarint n+1 |
 *     compact string | partitions: uvarint n+1 | int32 index | int16 error |
 *     int32 leader_id | ... (the rest is not read) */
#include "bench/bench.h"

#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define FO_CLIENT_ID "strand-bench"
#define FO_MAX_WAIT 120 /* seconds after the kill before giving up */

typedef struct bench_fo_s {
    rd_kafka_t *rk;
    const char *bootstrap, *topic;
    int32_t victim;
    volatile double t_kill;    /* 0 until the kill */
    volatile double t_first;   /* first ack from another broker after it */
    volatile double t_last_ok; /* last successful delivery report */
    volatile double t_steady;  /* first ack from the victim */
    volatile double t_leader;  /* first Metadata naming another leader */
    int32_t first_from;
    int64_t ok, failed, after_kill_victim;
    volatile int stop;
} bench_fo_t;

static size_t fo_uvarint_get(const uint8_t *p, const uint8_t *end, uint64_t *v)
{
    size_t n = 0;
    *v = 0;
    for (int shift = 0; p + n < end && shift < 64; shift += 7) {
        uint8_t b = p[n++];
        *v |= (uint64_t)(b & 0x7f) << shift;
        if (!(b & 0x80))
            return n;
    }
    return 0;
}

/* The leader of the metadata quorum as the controller at addr sees it:
 * its id, or -1 (unreachable, no leader, bad answer). */
static int32_t fo_quorum_leader(const char *addr)
{
    static const char topic[] = "__cluster_metadata";
    uint8_t req[128], hdr[4], *resp = NULL;
    size_t n = 4, tlen = sizeof(topic) - 1, idlen = sizeof(FO_CLIENT_ID) - 1;
    char host[256];
    int port, fd;
    int32_t leader = -1;
    bench_hostport(addr, host, sizeof(host), &port);
    if ((fd = bench_wire_connect(host, port, 2000)) < 0)
        return -1;
    n += bench_put16(req + n, 55);
    n += bench_put16(req + n, 0);
    n += bench_put32(req + n, 0x5b5b);
    n += bench_put16(req + n, (int)idlen);
    memcpy(req + n, FO_CLIENT_ID, idlen);
    n += idlen;
    req[n++] = 0;        /* header tags */
    req[n++] = 2;        /* one topic */
    req[n++] = (uint8_t)(tlen + 1);
    memcpy(req + n, topic, tlen);
    n += tlen;
    req[n++] = 2;        /* one partition */
    n += bench_put32(req + n, 0);
    req[n++] = 0;        /* partition tags */
    req[n++] = 0;        /* topic tags */
    req[n++] = 0;        /* body tags */
    bench_put32(req, (int32_t)(n - 4));
    if (bench_io_all(fd, req, n, 1) == 0 && bench_io_all(fd, hdr, 4, 0) == 0) {
        int32_t size = bench_get32(hdr);
        if (size > 4 && size < (1 << 20)) {
            resp = bench_alloc((size_t)size);
            if (bench_io_all(fd, resp, (size_t)size, 0) == 0)
                leader = -2;
        }
    }
    close(fd);
    if (leader == -2) {
        const uint8_t *p = resp + 4, *end = resp + bench_get32(hdr);
        uint64_t v;
        size_t k;
        leader = -1;
        /* header tags (none expected), error, topics, name, partitions */
        if ((k = fo_uvarint_get(p, end, &v)) && !v && end - (p += k) >= 2 && !bench_get16(p) &&
            (k = fo_uvarint_get(p += 2, end, &v)) && v == 2 &&
            (k = fo_uvarint_get(p += k, end, &v)) && v >= 1 && (size_t)(end - (p += k)) >= v - 1 &&
            (k = fo_uvarint_get(p += v - 1, end, &v)) && v == 2 && end - (p += k) >= 10 &&
            !bench_get16(p + 4))
            leader = bench_get32(p + 6);
    }
    free(resp);
    return leader;
}

/* The active controller: the leader the first answering controller of
 * o->controllers names (10 s at most). */
static int32_t fo_active_controller(const bench_opts_t *o)
{
    double until = bench_now() + 10;
    char list[1024], *save = NULL;
    do {
        snprintf(list, sizeof(list), "%s", o->controllers);
        for (char *a = strtok_r(list, ",", &save); a; a = strtok_r(NULL, ",", &save)) {
            int32_t id = fo_quorum_leader(a);
            if (id > 0)
                return id;
        }
        usleep(100000);
    } while (bench_now() < until);
    bench_die("failover: no controller names a quorum leader");
}

/* One partition, replicas victim first (so it leads), then the others. */
static void fo_create_topic(rd_kafka_t *rk, const bench_opts_t *o, int32_t victim)
{
    char err[256];
    int32_t reps[BENCH_MAX_PIDS];
    int n = 0;
    reps[n++] = victim;
    for (int id = 1; id <= o->npids; id++)
        if (id != victim)
            reps[n++] = id;
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(o->topic, 1, -1, err, sizeof(err));
    if (!nt || rd_kafka_NewTopic_set_replica_assignment(nt, 0, reps, (size_t)n, err, sizeof(err)))
        bench_die("failover: NewTopic %s: %s", o->topic, err);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
    size_t cnt = 0;
    if (!ev || rd_kafka_event_error(ev))
        bench_die("failover: CreateTopics %s: %s", o->topic,
                  ev ? rd_kafka_event_error_string(ev) : "no answer in 30 s");
    const rd_kafka_topic_result_t **res =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
    if (cnt != 1 || rd_kafka_topic_result_error(res[0]))
        bench_die("failover: CreateTopics %s: %s", o->topic,
                  cnt == 1 ? rd_kafka_err2name(rd_kafka_topic_result_error(res[0])) : "?");
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
}

/* Waits (30 s at most) until victim leads partition 0 with every replica
 * in sync: the kill must find the cluster whole. */
static void fo_wait_whole(rd_kafka_t *rk, const bench_opts_t *o, int32_t victim)
{
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    double until = bench_now() + 30;
    for (;;) {
        const struct rd_kafka_metadata *md = NULL;
        int whole = 0;
        if (rd_kafka_metadata(rk, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
            const rd_kafka_metadata_topic_t *t = &md->topics[0];
            whole = md->topic_cnt == 1 && !t->err && t->partition_cnt == 1 &&
                    t->partitions[0].leader == victim && t->partitions[0].isr_cnt == o->npids;
            rd_kafka_metadata_destroy(md);
        }
        if (whole)
            break;
        if (bench_now() > until)
            bench_die("failover: %s-0 not led by node %d with %d in sync after 30 s", o->topic,
                      victim, o->npids);
        usleep(100000);
    }
    rd_kafka_topic_destroy(rkt);
}

static void fo_dr(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    bench_fo_t *fo = opaque;
    double now = bench_now();
    int32_t from = rd_kafka_message_broker_id(msg);
    (void)rk;
    if (msg->err) {
        if (fo->failed++ < 5)
            bench_log("failover: delivery failed: %s", rd_kafka_err2str(msg->err));
        return;
    }
    fo->ok++;
    fo->t_last_ok = now;
    if (from == fo->victim && !fo->t_steady)
        fo->t_steady = now;
    if (fo->t_kill > 0 && from == fo->victim)
        fo->after_kill_victim++; /* answered before it died */
    if (fo->t_kill > 0 && !fo->t_first && from != fo->victim && from >= 0) {
        fo->t_first = now;
        fo->first_from = from;
    }
}

/* Delivery reports are timed when served, so they are served at once. */
static void *fo_poll(void *arg)
{
    bench_fo_t *fo = arg;
    while (!fo->stop)
        rd_kafka_poll(fo->rk, 20);
    return NULL;
}

/* Asks for the partition's leader (a client of its own) until it is not
 * the victim, from the kill on; 0 if that never happened. */
static void *fo_watch(void *arg)
{
    bench_fo_t *fo = arg;
    rd_kafka_t *rk = bench_new(RD_KAFKA_PRODUCER, bench_conf(fo->bootstrap));
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, fo->topic, NULL);
    while (!fo->stop && !fo->t_leader) {
        const struct rd_kafka_metadata *md = NULL;
        if (fo->t_kill > 0 && rd_kafka_metadata(rk, 0, rkt, &md, 1000) == 0) {
            const rd_kafka_metadata_topic_t *t = &md->topics[0];
            if (md->topic_cnt == 1 && t->partition_cnt == 1 && t->partitions[0].leader >= 0 &&
                t->partitions[0].leader != fo->victim)
                fo->t_leader = bench_now();
        }
        if (md)
            rd_kafka_metadata_destroy(md);
        usleep(20000);
    }
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return NULL;
}

static rd_kafka_t *fo_producer(const bench_opts_t *o, bench_fo_t *fo)
{
    rd_kafka_conf_t *conf = bench_conf(o->bootstrap);
    bench_conf_set(conf, "acks", "all");
    bench_conf_set(conf, "enable.idempotence", "true");
    bench_conf_set(conf, "linger.ms", "0");
    /* nothing may expire during the failover: a gap, not a loss */
    bench_conf_set(conf, "message.timeout.ms", "300000");
    /* librdkafka 2.0's defaults, written out so the table can quote them:
     * how soon the client looks for the new leader */
    bench_conf_set(conf, "topic.metadata.refresh.fast.interval.ms", "250");
    bench_conf_set(conf, "retry.backoff.ms", "100");
    rd_kafka_conf_set_dr_msg_cb(conf, fo_dr);
    rd_kafka_conf_set_opaque(conf, fo);
    return bench_new(RD_KAFKA_PRODUCER, conf);
}

static void fo_sleep_until(double t)
{
    double d = t - bench_now();
    if (d > 0) {
        struct timespec ts = {(time_t)d, (long)((d - (double)(time_t)d) * 1e9)};
        nanosleep(&ts, NULL);
    }
}

/* Sends at o->rate until done() says so (or limit passes). */
static void fo_send_until(bench_fo_t *fo, rd_kafka_topic_t *rkt, const bench_opts_t *o,
                          uint64_t *seq, double limit, int (*done)(const bench_fo_t *))
{
    double period = 1.0 / o->rate, next = bench_now();
    while (!done(fo) && bench_now() < limit) {
        void *val = (void *)bench_payload(*seq, o->size);
        if (rd_kafka_produce(rkt, 0, 0, val, (size_t)o->size, NULL, 0, NULL) == 0)
            (*seq)++;
        next += period;
        fo_sleep_until(next);
    }
}

static int fo_steady(const bench_fo_t *fo)
{
    return fo->t_steady > 0;
}

static int fo_failed_over(const bench_fo_t *fo)
{
    return fo->t_first > 0;
}

static int fo_never(const bench_fo_t *fo)
{
    (void)fo;
    return 0;
}

int bench_cmd_failover(const bench_opts_t *o)
{
    bench_fo_t fo;
    pthread_t thr, watch;
    uint64_t seq = 0;
    if (o->npids < 3 || !o->controllers || o->rate <= 0)
        bench_die("failover needs --pid A,B,C (nodes 1..n), --controllers and --rate");
    memset(&fo, 0, sizeof(fo));
    fo.first_from = -1;
    fo.bootstrap = o->bootstrap;
    fo.topic = o->topic;
    int32_t ctl = fo_active_controller(o);
    fo.victim = o->kill_controller ? ctl : (ctl == 1 ? 2 : 1);
    fo.rk = fo_producer(o, &fo);
    fo_create_topic(fo.rk, o, fo.victim);
    fo_wait_whole(fo.rk, o, fo.victim);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(fo.rk, o->topic, NULL);
    pthread_create(&thr, NULL, fo_poll, &fo);
    pthread_create(&watch, NULL, fo_watch, &fo);

    /* acknowledged by the victim, then o->seconds of steady load */
    fo_send_until(&fo, rkt, o, &seq, bench_now() + 30, fo_steady);
    if (!fo.t_steady)
        bench_die("failover: no acknowledgement from node %d in 30 s", fo.victim);
    fo_send_until(&fo, rkt, o, &seq, bench_now() + o->seconds, fo_never);
    int64_t ok_before = fo.ok;
    fo.t_kill = bench_now();
    if (kill(o->pids[fo.victim - 1], SIGKILL) < 0)
        bench_die("failover: kill %d: cannot", (int)o->pids[fo.victim - 1]);
    fo_send_until(&fo, rkt, o, &seq, fo.t_kill + FO_MAX_WAIT, fo_failed_over);
    /* a second more, so that the figures show the load is flowing again */
    fo_send_until(&fo, rkt, o, &seq, bench_now() + 1, fo_never);
    rd_kafka_flush(fo.rk, 30000);
    fo.stop = 1;
    pthread_join(thr, NULL);
    pthread_join(watch, NULL);

    bench_result("failover_victim", fo.victim);
    bench_result("failover_controller", ctl);
    bench_result("failover_successor", fo.first_from);
    bench_result("failover_acked_before", (double)ok_before);
    bench_result("failover_acked_after_by_victim", (double)fo.after_kill_victim);
    bench_result("failover_msgs", (double)seq);
    bench_result("failover_unacked", (double)(seq - (uint64_t)fo.ok));
    bench_result("errors", (double)fo.failed);
    if (fo.t_first > 0)
        bench_result("failover_ms", (fo.t_first - fo.t_kill) * 1000);
    if (fo.t_leader > 0)
        bench_result("failover_leader_ms", (fo.t_leader - fo.t_kill) * 1000);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(fo.rk);
    return fo.t_first > 0 && !fo.failed ? 0 : 1;
}
