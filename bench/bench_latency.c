/* End-to-end latency at a fixed offered rate, well below saturation.
 *
 * Message i is due at t0 + i/rate; its latency is counted from that due
 * time, not from when it was actually sent, so a broker that stalls the
 * producer is charged for the stall (no coordinated omission). Produce
 * latency ends at the delivery report, end-to-end latency when a consumer
 * in this process (its own thread, long polling) receives the message.
 *
 * Value layout: uint64 sequence | int64 due time (ns, CLOCK_MONOTONIC) |
 * payload pool bytes up to o->size. Sequence UINT64_MAX marks the probes
 * sent until the consumer has its position. */
#include "bench/bench.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>


#define BENCH_PROBE UINT64_MAX

typedef struct bench_lat_s {
    rd_kafka_t *cons;
    rd_kafka_topic_t *cons_rkt;
    int part;
    int64_t n;          /* timed messages */
    int64_t *e2e;       /* ns, by arrival */
    volatile int64_t ne2e; /* written by the consumer thread */
    int64_t *prod;      /* ns, by delivery */
    int64_t nprod;
    int64_t t0_ns;      /* due time of message 0 */
    int64_t period_ns;
    rd_kafka_t *prod_rk;
    volatile int ready; /* consumer has seen a probe */
    volatile int stop;
    volatile int dr_stop;
} bench_lat_t;

static void bench_lat_dr(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    bench_lat_t *lt = opaque;
    uint64_t seq = (uint64_t)(uintptr_t)msg->_private;
    (void)rk;
    if (msg->err)
        bench_die("latency: delivery failed: %s", rd_kafka_err2str(msg->err));
    if (seq != BENCH_PROBE && lt->nprod < lt->n)
        lt->prod[lt->nprod++] = bench_now_ns() - (lt->t0_ns + (int64_t)seq * lt->period_ns);
}

static void *bench_lat_consume(void *arg)
{
    bench_lat_t *lt = arg;
    while (!lt->stop && lt->ne2e < lt->n) {
        rd_kafka_message_t *m = rd_kafka_consume(lt->cons_rkt, lt->part, 100);
        if (!m)
            continue;
        if (!m->err && m->len >= 16) {
            int64_t now = bench_now_ns(), due;
            uint64_t seq;
            memcpy(&seq, m->payload, 8);
            memcpy(&due, (const char *)m->payload + 8, 8);
            if (seq == BENCH_PROBE)
                lt->ready = 1;
            else if (lt->ready)
                lt->e2e[lt->ne2e++] = now - due;
        }
        rd_kafka_message_destroy(m);
    }
    return NULL;
}

static void bench_sleep_until(int64_t ns)
{
    struct timespec ts = {(time_t)(ns / 1000000000), (long)(ns % 1000000000)};
    while (clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL))
        ;
}

/* Delivery reports are timed when served: serve them as they come, not
 * between two paced sends. */
static void *bench_lat_poll(void *arg)
{
    bench_lat_t *lt = arg;
    while (!lt->dr_stop)
        rd_kafka_poll(lt->prod_rk, 50);
    return NULL;
}

static void bench_lat_send(rd_kafka_topic_t *rkt, int part, const bench_opts_t *o,
                           uint64_t seq, int64_t due)
{
    char *val = bench_alloc((size_t)o->size);
    memcpy(val, bench_payload(seq, o->size), (size_t)o->size);
    memcpy(val, &seq, 8);
    memcpy(val + 8, &due, 8);
    /* F_FREE: librdkafka frees val once delivered */
    while (rd_kafka_produce(rkt, part, RD_KAFKA_MSG_F_FREE, val, (size_t)o->size, NULL, 0,
                            (void *)(uintptr_t)seq) < 0)
        bench_sleep_until(bench_now_ns() + 1000000);
}

/* librdkafka's simple consumer from the partition's end: no group. */
static void bench_lat_consumer(const bench_opts_t *o, bench_lat_t *lt)
{
    rd_kafka_conf_t *conf = bench_conf(o->bootstrap);
    bench_conf_set(conf, "fetch.wait.max.ms", "500");
    bench_conf_set(conf, "fetch.min.bytes", "1");
    lt->cons = bench_new(RD_KAFKA_CONSUMER, conf);
    lt->cons_rkt = rd_kafka_topic_new(lt->cons, o->topic, NULL);
    if (rd_kafka_consume_start(lt->cons_rkt, lt->part, RD_KAFKA_OFFSET_END) < 0)
        bench_die("latency: consume_start: %s", rd_kafka_err2str(rd_kafka_last_error()));
}

static rd_kafka_t *bench_lat_producer(const bench_opts_t *o, bench_lat_t *lt)
{
    char v[16];
    rd_kafka_conf_t *conf = bench_conf(o->bootstrap);
    snprintf(v, sizeof(v), "%d", o->acks);
    bench_conf_set(conf, "acks", v);
    bench_conf_set(conf, "linger.ms", "0"); /* a lone message waits for nothing */
    bench_conf_set(conf, "allow.auto.create.topics", o->auto_create ? "true" : "false");
    rd_kafka_conf_set_dr_msg_cb(conf, bench_lat_dr);
    rd_kafka_conf_set_opaque(conf, lt);
    return bench_new(RD_KAFKA_PRODUCER, conf);
}

static void bench_lat_report(bench_lat_t *lt)
{
    static const struct {
        const char *name;
        double p;
    } pct[] = {{"p50", 50}, {"p99", 99}, {"p999", 99.9}, {"max", 100}};
    char metric[64];
    for (size_t i = 0; i < sizeof(pct) / sizeof(pct[0]); i++) {
        snprintf(metric, sizeof(metric), "e2e_%s_ms", pct[i].name);
        bench_result(metric, bench_percentile(lt->e2e, (size_t)lt->ne2e, pct[i].p) / 1e6);
        snprintf(metric, sizeof(metric), "produce_%s_ms", pct[i].name);
        bench_result(metric, bench_percentile(lt->prod, (size_t)lt->nprod, pct[i].p) / 1e6);
    }
    bench_result("lat_msgs", (double)lt->ne2e);
}

/* Probes until the consumer has its position, then sends lt->n messages
 * at their due times and waits for them to arrive (30 s at most). */
static void bench_lat_run(bench_lat_t *lt, rd_kafka_topic_t *rkt, const bench_opts_t *o,
                          bench_cpu_t *cpu0)
{
    pthread_t thr, drthr;
    pthread_create(&thr, NULL, bench_lat_consume, lt);
    pthread_create(&drthr, NULL, bench_lat_poll, lt);
    double until = bench_now() + 30;
    while (!lt->ready) {
        if (bench_now() > until)
            bench_die("latency: the consumer saw no probe in 30 s");
        bench_lat_send(rkt, lt->part, o, BENCH_PROBE, bench_now_ns());
        bench_sleep_until(bench_now_ns() + 50000000);
    }
    bench_settle(0);
    bench_cpu_start(o, cpu0);
    lt->t0_ns = bench_now_ns() + 10000000;
    for (int64_t i = 0; i < lt->n; i++) {
        int64_t due = lt->t0_ns + i * lt->period_ns;
        bench_sleep_until(due);
        bench_lat_send(rkt, lt->part, o, (uint64_t)i, due);
    }
    rd_kafka_flush(lt->prod_rk, 30000);
    lt->dr_stop = 1;
    pthread_join(drthr, NULL);
    for (until = bench_now() + 30; lt->ne2e < lt->n && bench_now() < until;)
        bench_sleep_until(bench_now_ns() + 1000000);
    lt->stop = 1;
    pthread_join(thr, NULL);
}

int bench_cmd_latency(const bench_opts_t *o)
{
    bench_lat_t lt;
    bench_cpu_t cpu0;
    if (o->size < 16 || o->rate <= 0)
        bench_die("latency needs --size >= 16 and --rate > 0");
    memset(&lt, 0, sizeof(lt));
    lt.n = (int64_t)(o->seconds * o->rate);
    lt.e2e = bench_alloc(((size_t)lt.n + 1) * sizeof(int64_t));
    lt.prod = bench_alloc(((size_t)lt.n + 1) * sizeof(int64_t));
    lt.period_ns = 1000000000 / o->rate;
    lt.part = o->pin_partition >= 0 ? o->pin_partition : 0;
    rd_kafka_t *rk = lt.prod_rk = bench_lat_producer(o, &lt);
    bench_topic_ensure(rk, o);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    bench_lat_consumer(o, &lt);

    bench_lat_run(&lt, rkt, o, &cpu0);
    double user, sys; /* of one core, over the paced window (a cluster's: summed) */
    if (o->pid > 0 && bench_pids_cpu2(o, &user, &sys) == 0)
        bench_result("broker_cpu_pct", (user + sys - cpu0.user - cpu0.sys) * 100 / o->seconds);
    bench_report_cpu(o, &cpu0, lt.ne2e, (double)lt.ne2e * o->size);
    bench_lat_report(&lt);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    rd_kafka_consume_stop(lt.cons_rkt, lt.part);
    rd_kafka_topic_destroy(lt.cons_rkt);
    rd_kafka_destroy(lt.cons);
    free(lt.e2e);
    free(lt.prod);
    return lt.ne2e == lt.n ? 0 : 1;
}
