/* The cost of a transaction: one transactional librdkafka producer runs
 * transactions of --txn-msgs messages of --size bytes to one partition
 * for --seconds (begin, produce, flush until every message is delivered,
 * commit), and the same producer without transactions (idempotent,
 * acks=all, streaming) for as long, for the baseline.
 *
 * Results: txns_per_s, txn_msgs_per_s, txn_mb_per_s; commit_p50_ms,
 * commit_p99_ms: the commit_transaction() call alone (EndTxn, its
 * PrepareCommit write, the answer; the markers follow it), its messages
 * being delivered already; idem_msgs_per_s (the report sets the two
 * msgs/s side by side). */
#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#define BENCH_TXN_MAX 1000000

static rd_kafka_t *bench_txn_producer(const bench_opts_t *o, bench_prod_t *st, int txn)
{
    char id[64];
    rd_kafka_conf_t *conf = bench_conf(o->bootstrap);
    bench_conf_set(conf, "linger.ms", "5");
    bench_conf_set(conf, "batch.size", "1000000");
    bench_conf_set(conf, "enable.idempotence", "true");
    if (txn) {
        snprintf(id, sizeof(id), "strand-bench-txn-%d", (int)getpid());
        bench_conf_set(conf, "transactional.id", id);
    }
    rd_kafka_conf_set_dr_msg_cb(conf, bench_prod_dr);
    rd_kafka_conf_set_opaque(conf, st);
    return bench_new(RD_KAFKA_PRODUCER, conf);
}

static void bench_txn_check(rd_kafka_error_t *e, const char *what)
{
    if (e)
        bench_die("%s: %s", what, rd_kafka_error_string(e));
}

/* n messages of the stream from *seq on. */
static void bench_txn_send(rd_kafka_t *rk, rd_kafka_topic_t *rkt, const bench_opts_t *o,
                           int64_t n, uint64_t *seq)
{
    for (int64_t k = 0; k < n; k++, (*seq)++) {
        void *val = (void *)bench_payload(*seq, o->size);
        while (rd_kafka_produce(rkt, 0, 0, val, (size_t)o->size, NULL, 0, NULL) < 0) {
            if (rd_kafka_last_error() != RD_KAFKA_RESP_ERR__QUEUE_FULL)
                bench_die("produce: %s", rd_kafka_err2str(rd_kafka_last_error()));
            rd_kafka_poll(rk, 1);
        }
        if (!(k & 1023))
            rd_kafka_poll(rk, 0);
    }
}

/* One transaction; returns the commit's duration (ns). */
static int64_t bench_txn_one(rd_kafka_t *rk, rd_kafka_topic_t *rkt, const bench_opts_t *o,
                             uint64_t *seq)
{
    bench_txn_check(rd_kafka_begin_transaction(rk), "begin_transaction");
    bench_txn_send(rk, rkt, o, o->txn_msgs, seq);
    if (rd_kafka_flush(rk, 60000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        bench_die("flush: %d messages still queued after 60 s", rd_kafka_outq_len(rk));
    int64_t t = bench_now_ns();
    bench_txn_check(rd_kafka_commit_transaction(rk, 60000), "commit_transaction");
    return bench_now_ns() - t;
}

static void bench_txn_phase(const bench_opts_t *o)
{
    bench_prod_t st = {0, 0, 0};
    rd_kafka_t *rk = bench_txn_producer(o, &st, 1);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    int64_t *lat = calloc(BENCH_TXN_MAX, sizeof(*lat));
    size_t n = 0;
    uint64_t seq = 0;

    if (!lat)
        bench_die("out of memory");
    bench_txn_check(rd_kafka_init_transactions(rk, 60000), "init_transactions");
    for (int i = 0; i < 3; i++) /* the coordinator's first writes, the partitions' first adds */
        bench_txn_one(rk, rkt, o, &seq);
    st.ok = 0;
    double t0 = bench_now();
    while (bench_now() - t0 < o->seconds && n < BENCH_TXN_MAX)
        lat[n++] = bench_txn_one(rk, rkt, o, &seq);
    double secs = bench_now() - t0;
    bench_result("txns", (double)n);
    bench_result("txns_per_s", (double)n / secs);
    bench_result("txn_msgs_per_s", (double)st.ok / secs);
    bench_result("txn_mb_per_s", (double)st.ok * o->size / 1e6 / secs);
    bench_result("commit_p50_ms", bench_percentile(lat, n, 0.50) / 1e6);
    bench_result("commit_p99_ms", bench_percentile(lat, n, 0.99) / 1e6);
    bench_result("txn_errors", (double)st.failed);
    free(lat);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
}

static double bench_idem_phase(const bench_opts_t *o)
{
    bench_prod_t st = {0, 0, 0};
    rd_kafka_t *rk = bench_txn_producer(o, &st, 0);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    uint64_t seq = 0;

    bench_txn_send(rk, rkt, o, 1000, &seq);
    rd_kafka_flush(rk, 60000);
    st.ok = 0;
    double t0 = bench_now();
    while (bench_now() - t0 < o->seconds)
        bench_txn_send(rk, rkt, o, 4096, &seq);
    if (rd_kafka_flush(rk, 120000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        bench_die("flush: %d messages still queued after 120 s", rd_kafka_outq_len(rk));
    double rate = (double)st.ok / (bench_now() - t0);
    bench_result("idem_msgs_per_s", rate);
    bench_result("idem_errors", (double)st.failed);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    return rate;
}

int bench_cmd_txn(const bench_opts_t *o)
{
    bench_prod_t st = {0, 0, 0};
    rd_kafka_t *rk = bench_txn_producer(o, &st, 0);
    bench_topic_ensure(rk, o);
    rd_kafka_destroy(rk);
    if (o->txn_msgs <= 0)
        bench_die("txn: --txn-msgs must be above 0");
    bench_idem_phase(o);
    bench_settle(0);
    bench_txn_phase(o);
    return 0;
}
