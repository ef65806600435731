/* Produce throughput: one librdkafka producer sending as fast as the
 * broker takes it for a fixed time, and the fill of the consume topic.
 *
 * Messages have no key and values from the payload pool, passed without a
 * copy (the pool outlives the producer). Throughput counts delivered
 * messages only, up to the last delivery report; MB/s is value bytes (1 MB
 * = 10^6 bytes), what the application sees, not what the wire carries. */
#include "bench/bench.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

static rd_kafka_t *bench_producer(const bench_opts_t *o, bench_prod_t *st)
{
    char v[32];
    rd_kafka_conf_t *conf = bench_conf(o->bootstrap);
    snprintf(v, sizeof(v), "%d", o->acks);
    bench_conf_set(conf, "acks", v);
    bench_conf_set(conf, "compression.type", o->compression ? o->compression : "none");
    /* librdkafka 2.0's defaults, written out so the table can quote them */
    bench_conf_set(conf, "linger.ms", "5");
    bench_conf_set(conf, "batch.size", "1000000");
    bench_conf_set(conf, "enable.idempotence", "false");
    bench_conf_set(conf, "allow.auto.create.topics", o->auto_create ? "true" : "false");
    rd_kafka_conf_set_dr_msg_cb(conf, bench_prod_dr);
    rd_kafka_conf_set_opaque(conf, st);
    return bench_new(RD_KAFKA_PRODUCER, conf);
}

/* Sends until max_msgs are queued or seconds have passed (0: no limit),
 * then waits for every delivery report. Returns the start time. */
static double bench_produce_run(rd_kafka_t *rk, rd_kafka_topic_t *rkt, const bench_opts_t *o,
                                int64_t max_msgs, double seconds)
{
    int32_t part = o->pin_partition >= 0 ? o->pin_partition : RD_KAFKA_PARTITION_UA;
    double t0 = bench_now();
    for (uint64_t i = 0;; i++) {
        if (max_msgs && (int64_t)i >= max_msgs)
            break;
        if (seconds > 0 && !(i & 255) && bench_now() - t0 >= seconds)
            break;
        void *val = (void *)bench_payload(i, o->size);
        while (rd_kafka_produce(rkt, part, 0, val, (size_t)o->size, NULL, 0, NULL) < 0) {
            if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                bench_die("produce: %s", rd_kafka_err2str(rd_kafka_last_error()));
            rd_kafka_poll(rk, 1);
        }
        if (!(i & 1023))
            rd_kafka_poll(rk, 0);
    }
    if (rd_kafka_flush(rk, 120000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        bench_die("flush: %d messages still queued after 120 s", rd_kafka_outq_len(rk));
    return t0;
}

int bench_cmd_produce(const bench_opts_t *o)
{
    bench_prod_t st = {0, 0, 0};
    rd_kafka_t *rk = bench_producer(o, &st);
    bench_topic_ensure(rk, o);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);

    /* connections up and partition leaders known before the clock starts */
    bench_produce_run(rk, rkt, o, 1000, 0);
    st.ok = st.failed = 0;
    bench_settle(0);

    bench_cpu_t cpu0;
    bench_cpu_start(o, &cpu0);
    double t0 = bench_produce_run(rk, rkt, o, 0, o->seconds);
    double secs = st.last_dr - t0, bytes = (double)st.ok * o->size;
    bench_report_cpu(o, &cpu0, st.ok, bytes);
    bench_result("msgs", (double)st.ok);
    bench_result("errors", (double)st.failed);
    bench_result("msgs_per_s", (double)st.ok / secs);
    bench_result("mb_per_s", bytes / 1e6 / secs);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return st.failed ? 1 : 0;
}

/* Writes o->bytes of o->size messages (the consume workload's topic). */
int bench_cmd_fill(const bench_opts_t *o)
{
    bench_prod_t st = {0, 0, 0};
    rd_kafka_t *rk = bench_producer(o, &st);
    bench_topic_ensure(rk, o);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    int64_t n = o->bytes / o->size;
    double t0 = bench_produce_run(rk, rkt, o, n, 0);
    bench_result("fill_msgs", (double)st.ok);
    bench_result("fill_mb_per_s", (double)st.ok * o->size / 1e6 / (st.last_dr - t0));
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return st.ok == n ? 0 : 1;
}
