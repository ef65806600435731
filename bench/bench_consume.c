/* Cold consume: one librdkafka consumer reads a partition from its first
 * offset to its end after the page cache was dropped, so the broker serves
 * it from disk. No consumer group (librdkafka's simple consumer, as kcat
 * without -G), so the figure is fetch alone. */
#include "bench/bench.h"

#include <stdio.h>

static rd_kafka_t *bench_consumer(const bench_opts_t *o)
{
    char v[32];
    rd_kafka_conf_t *conf = bench_conf(o->bootstrap);
    bench_conf_set(conf, "enable.partition.eof", "true");
    snprintf(v, sizeof(v), "%lld", (long long)o->fetch_bytes);
    bench_conf_set(conf, "max.partition.fetch.bytes", v);
    return bench_new(RD_KAFKA_CONSUMER, conf);
}

/* Reads until offset hi-1 has arrived; returns the time the last message
 * arrived and the value bytes read. */
static double bench_consume_until(rd_kafka_topic_t *rkt, int part, int64_t hi, int64_t *msgs,
                                  double *bytes)
{
    rd_kafka_message_t *batch[1024];
    double last = bench_now();
    for (int done = 0; !done;) {
        ssize_t n = rd_kafka_consume_batch(rkt, part, 1000, batch, 1024);
        if (n < 0)
            bench_die("consume: %s", rd_kafka_err2str(rd_kafka_last_error()));
        if (n == 0 && bench_now() - last > 30)
            bench_die("consume: no message for 30 s at %lld of %lld messages",
                      (long long)*msgs, (long long)hi);
        for (ssize_t i = 0; i < n; i++) {
            rd_kafka_message_t *m = batch[i];
            if (m->err && m->err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
                bench_die("consume: %s", rd_kafka_message_errstr(m));
            if (!m->err) {
                (*msgs)++;
                *bytes += (double)m->len;
                done |= m->offset >= hi - 1;
            }
            rd_kafka_message_destroy(m);
        }
        if (n > 0)
            last = bench_now();
    }
    return last;
}

int bench_cmd_consume(const bench_opts_t *o)
{
    rd_kafka_t *rk = bench_consumer(o);
    int part = o->pin_partition >= 0 ? o->pin_partition : 0;
    int64_t lo, hi, msgs = 0;
    double bytes = 0;
    bench_watermarks(rk, o->topic, part, &lo, &hi);
    if (hi <= lo)
        bench_die("consume: %s-%d is empty", o->topic, part);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);

    bench_result("cold", bench_settle(o->drop_caches));
    bench_cpu_t cpu0;
    bench_cpu_start(o, &cpu0);
    double t0 = bench_now();
    if (rd_kafka_consume_start(rkt, part, RD_KAFKA_OFFSET_BEGINNING) < 0)
        bench_die("consume_start: %s", rd_kafka_err2str(rd_kafka_last_error()));
    double t1 = bench_consume_until(rkt, part, hi, &msgs, &bytes);
    bench_report_cpu(o, &cpu0, msgs, bytes);
    bench_result("msgs", (double)msgs);
    bench_result("msgs_per_s", (double)msgs / (t1 - t0));
    bench_result("mb_per_s", bytes / 1e6 / (t1 - t0));
    rd_kafka_consume_stop(rkt, part);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return msgs == hi - lo ? 0 : 1;
}
