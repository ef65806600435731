/* seqrun: see seqrun.h. */
#include "testlib/seqrun.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void tl_seqrun_init(tl_seqrun *run, const char *topic, int nparts, const char *tag, int max)
{
    memset(run, 0, sizeof(*run));
    run->topic = topic;
    run->tag = tag;
    run->nparts = nparts;
    run->max = max;
    run->msgs = calloc((size_t)max, sizeof(*run->msgs));
    TL_ASSERT(run->msgs, "out of memory");
}

void tl_seqrun_free(tl_seqrun *run)
{
    free(run->msgs);
    run->msgs = NULL;
}

static int tl_seqrun_value(const tl_seqrun *run, char *buf, size_t size, int seq)
{
    return snprintf(buf, size, "%s %08d of partition %d ..........................", run->tag,
                    seq, seq % run->nparts);
}

static void tl_seqrun_dr(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    tl_seqrun *run = opaque;
    int seq = (int)(intptr_t)msg->_private;
    (void)rk;
    run->msgs[seq].status = msg->err ? TL_SEQ_FAILED : TL_SEQ_OK;
    run->msgs[seq].offset = msg->offset;
}

rd_kafka_t *tl_seqrun_producer(tl_seqrun *run, const char *bs, const char *const *kv)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "reconnect.backoff.ms", "20");
    tl_conf_set(conf, "reconnect.backoff.max.ms", "200");
    for (; kv && kv[0] && kv[1]; kv += 2)
        tl_conf_set(conf, kv[0], kv[1]);
    rd_kafka_conf_set_opaque(conf, run);
    rd_kafka_conf_set_dr_msg_cb(conf, tl_seqrun_dr);
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

void tl_seqrun_produce_for(tl_seqrun *run, rd_kafka_t *rk, double secs, int burst, int poll_ms)
{
    double end = tl_now() + secs;

    while (tl_now() < end && run->n_sent < run->max) {
        for (int k = 0; k < burst && run->n_sent < run->max; k++) {
            char val[128];
            int seq = run->n_sent, len = tl_seqrun_value(run, val, sizeof(val), seq);
            rd_kafka_resp_err_t err = rd_kafka_producev(
                rk, RD_KAFKA_V_TOPIC(run->topic), RD_KAFKA_V_PARTITION(seq % run->nparts),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(val, (size_t)len),
                RD_KAFKA_V_OPAQUE((void *)(intptr_t)seq), RD_KAFKA_V_END);
            if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                break;
            TL_ASSERT(!err, "produce: %s", rd_kafka_err2name(err));
            run->n_sent++;
        }
        rd_kafka_poll(rk, poll_ms);
    }
}

/* A consumer assigned every partition from the start; *total gets the
 * sum of their high watermarks (each must start at 0). */
static rd_kafka_t *tl_seqrun_reader(tl_seqrun *run, const char *bs, int64_t *total)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(run->nparts);
    rd_kafka_t *rk;

    tl_conf_set(conf, "group.id", run->topic);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "check.crcs", "true");
    tl_conf_set(conf, "fetch.wait.max.ms", "100");
    rk = tl_new(RD_KAFKA_CONSUMER, conf);
    *total = 0;
    for (int p = 0; p < run->nparts; p++) {
        int64_t lo, hi;
        TL_ASSERT_EQ(rd_kafka_query_watermark_offsets(rk, run->topic, p, &lo, &hi, 10000), 0);
        TL_ASSERT_EQ(lo, 0);
        *total += hi;
        rd_kafka_topic_partition_list_add(parts, run->topic, p)->offset =
            RD_KAFKA_OFFSET_BEGINNING;
    }
    TL_ASSERT_EQ(rd_kafka_assign(rk, parts), 0);
    rd_kafka_topic_partition_list_destroy(parts);
    return rk;
}

/* One message read back: which one it is, intact, in order, not seen
 * before, at its acknowledged offset. */
static void tl_seqrun_one(tl_seqrun *run, const rd_kafka_message_t *msg, int64_t *last_seq,
                          uint8_t *seen, const char *what)
{
    char want[128];
    size_t taglen = strlen(run->tag) + 1;
    int p = msg->partition, seq, len;

    seq = msg->len > taglen ? atoi((const char *)msg->payload + taglen) : -1;
    TL_ASSERT(seq >= 0 && seq < run->n_sent && seq % run->nparts == p,
              "partition %d offset %" PRId64 ": unknown message '%.*s'", p, msg->offset,
              (int)(msg->len < 128 ? msg->len : 128), (const char *)msg->payload);
    len = tl_seqrun_value(run, want, sizeof(want), seq);
    TL_ASSERT(msg->len == (size_t)len && !memcmp(msg->payload, want, (size_t)len),
              "partition %d offset %" PRId64 ": corrupt value", p, msg->offset);
    TL_ASSERT(!seen[seq], "%s: message %d is in the log twice", what, seq);
    TL_ASSERT(seq > last_seq[p], "partition %d offset %" PRId64 ": message %d after %" PRId64, p,
              msg->offset, seq, last_seq[p]);
    seen[seq] = 1;
    last_seq[p] = seq;
    if (run->msgs[seq].status == TL_SEQ_OK)
        TL_ASSERT(run->msgs[seq].offset == msg->offset,
                  "message %d acknowledged at offset %" PRId64 ", found at %" PRId64, seq,
                  run->msgs[seq].offset, msg->offset);
}

/* Reads the topic to its end; returns messages read, marking them in seen. */
static int64_t tl_seqrun_read(tl_seqrun *run, const char *bs, double timeout_s, const char *what,
                              uint8_t *seen)
{
    int64_t total, got = 0, *next = calloc((size_t)run->nparts, sizeof(int64_t)),
                   *last_seq = malloc((size_t)run->nparts * sizeof(int64_t));
    double deadline = tl_now() + timeout_s;
    rd_kafka_t *rk = tl_seqrun_reader(run, bs, &total);

    for (int p = 0; p < run->nparts; p++)
        last_seq[p] = -1;
    while (got < total) {
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 500);
        if (tl_now() > deadline)
            tl_fail("%s: read %" PRId64 " of %" PRId64 " messages in %.0f s", what, got, total,
                    timeout_s);
        if (!msg)
            continue;
        TL_ASSERT(!msg->err, "consume: %s", rd_kafka_message_errstr(msg));
        TL_ASSERT_EQ(msg->offset, next[msg->partition]);
        next[msg->partition]++;
        tl_seqrun_one(run, msg, last_seq, seen, what);
        got++;
        rd_kafka_message_destroy(msg);
    }
    rd_kafka_destroy(rk);
    free(next);
    free(last_seq);
    return got;
}

void tl_seqrun_check(tl_seqrun *run, const char *bs, double timeout_s, const char *what,
                     tl_seqrun_result *res)
{
    uint8_t *seen = calloc((size_t)run->max + 1, 1);

    for (int i = 0; i < run->n_sent; i++)
        TL_ASSERT(run->msgs[i].status != TL_SEQ_PENDING, "%s: message %d has no report", what, i);
    memset(res, 0, sizeof(*res));
    res->in_log = tl_seqrun_read(run, bs, timeout_s, what, seen);
    for (int i = 0; i < run->n_sent; i++) {
        if (run->msgs[i].status == TL_SEQ_OK) {
            res->ok++;
            TL_ASSERT(seen[i], "%s: message %d was acknowledged at offset %" PRId64
                      " but is not in the log", what, i, run->msgs[i].offset);
        } else {
            res->failed++;
            res->failed_seen += seen[i];
        }
    }
    free(seen);
}

void tl_seqrun_kill9(const tl_kill9_plan *k)
{
    tl_broker b = {0};
    tl_seqrun run;
    tl_seqrun_result res;
    char *dir = tl_scratch_dir(k->name), *topic = tl_topic_name(k->name);

    tl_seqrun_init(&run, topic, k->nparts, k->tag, k->max);
    tl_broker_start(&b, dir, NULL);
    rd_kafka_t *rk = tl_seqrun_producer(&run, b.bootstrap, k->producer_conf);
    TL_ASSERT(tl_create_topic(rk, topic, k->nparts) >= k->nparts, "partitions");
    for (int i = 0; i < k->kills; i++) {
        double secs = k->round_min + (double)(tl_rand() % 1000) / 1000.0 * k->round_span;
        tl_seqrun_produce_for(&run, rk, secs, k->burst, 1);
        tl_log("kill -9 after %d messages", run.n_sent);
        tl_broker_kill9(&b);
        tl_seqrun_produce_for(&run, rk, 0.2, k->burst, 1);
        tl_broker_start(&b, dir, NULL);
    }
    tl_seqrun_produce_for(&run, rk, 1.0, k->burst, 1);
    if (rd_kafka_flush(rk, 90000))
        tl_fail("flush: %d messages left", rd_kafka_outq_len(rk));
    rd_kafka_destroy(rk);

    tl_seqrun_check(&run, b.bootstrap, 60, "after the kills", &res);
    tl_log("%d produced: %d acknowledged, %d failed (%d of those in the log anyway); "
           "%" PRId64 " in the log", run.n_sent, res.ok, res.failed, res.failed_seen, res.in_log);
    TL_ASSERT(res.ok > run.n_sent / 2, "only %d of %d acknowledged", res.ok, run.n_sent);
    TL_ASSERT_EQ(res.in_log, res.ok + res.failed_seen);
    int rc = tl_broker_stop(&b);
    TL_ASSERT(rc == 0, "broker exit status %d on SIGTERM", rc);
    tl_seqrun_free(&run);
    free(dir);
    free(topic);
}
