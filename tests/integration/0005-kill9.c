/* 0005-kill9: a producer with acks=all produces in a loop while the test's
 * own broker is killed with SIGKILL and restarted on the same data, twice.
 * At the end every message whose delivery report succeeded is in the log
 * exactly once, at the offset reported, in produce order; a message whose
 * report failed is there at most once; and the whole log reads back with
 * CRC checks on and no error (no torn batch survived recovery).
 *
 * The producer does not retry (retries=0): a retry of a request whose
 * answer was lost to the kill would legitimately duplicate, and this test
 * is about durability of acknowledged writes, not deduplication (0004). */
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPART 2
#define MAX_MSGS 1000000
#define KILLS 2

enum { ST_PENDING, ST_OK, ST_FAILED };

static struct {
    uint8_t status;
    uint8_t seen;
    int64_t offset;
} msgs[MAX_MSGS];
static int n_sent;

static int make_value(char *buf, int seq)
{
    return snprintf(buf, 128, "kill9 message %08d of partition %d ..........................",
                    seq, seq % NPART);
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    int seq = (int)(intptr_t)msg->_private;
    msgs[seq].status = msg->err ? ST_FAILED : ST_OK;
    msgs[seq].offset = msg->offset;
}

static rd_kafka_t *new_producer(const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "acks", "all");
    tl_conf_set(conf, "retries", "0");
    tl_conf_set(conf, "linger.ms", "1");
    tl_conf_set(conf, "message.timeout.ms", "60000");
    tl_conf_set(conf, "reconnect.backoff.ms", "20");
    tl_conf_set(conf, "reconnect.backoff.max.ms", "200");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

/* Produces at a bounded pace for secs seconds. */
static void produce_for(rd_kafka_t *rk, const char *topic, double secs)
{
    double end = tl_now() + secs;
    while (tl_now() < end && n_sent < MAX_MSGS) {
        for (int k = 0; k < 200 && n_sent < MAX_MSGS; k++) {
            char val[128];
            int seq = n_sent, len = make_value(val, seq);
            rd_kafka_resp_err_t err = rd_kafka_producev(
                rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(seq % NPART),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(val, (size_t)len),
                RD_KAFKA_V_OPAQUE((void *)(intptr_t)seq), RD_KAFKA_V_END);
            if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                break;
            TL_ASSERT(!err, "produce: %s", rd_kafka_err2name(err));
            n_sent++;
        }
        rd_kafka_poll(rk, 1);
    }
}

static void check_message(const rd_kafka_message_t *msg, int64_t *last_seq)
{
    char want[128];
    int p = msg->partition, seq, len;
    TL_ASSERT(msg->len > 14 && msg->len < 128, "offset %" PRId64 ": %zu bytes", msg->offset, msg->len);
    seq = atoi((const char *)msg->payload + 14);
    TL_ASSERT(seq >= 0 && seq < n_sent && seq % NPART == p, "partition %d offset %" PRId64
              ": unknown message '%.*s'", p, msg->offset, (int)msg->len, (const char *)msg->payload);
    len = make_value(want, seq);
    TL_ASSERT(msg->len == (size_t)len && memcmp(msg->payload, want, (size_t)len) == 0,
              "partition %d offset %" PRId64 ": corrupt value", p, msg->offset);
    TL_ASSERT(seq > last_seq[p], "partition %d offset %" PRId64 ": message %d after %" PRId64,
              p, msg->offset, seq, last_seq[p]);
    last_seq[p] = seq;
    TL_ASSERT(!msgs[seq].seen, "message %d twice", seq);
    msgs[seq].seen = 1;
    if (msgs[seq].status == ST_OK)
        TL_ASSERT(msgs[seq].offset == msg->offset, "message %d acknowledged at offset %" PRId64
                  ", found at %" PRId64, seq, msgs[seq].offset, msg->offset);
}

/* Reads every partition to its end with CRC checks; returns messages read. */
static int64_t read_all(const char *bs, const char *topic)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(NPART);
    int64_t hi[NPART], next[NPART], last_seq[NPART], total = 0, got = 0;
    double deadline = tl_now() + 60;
    rd_kafka_t *rk;

    tl_conf_set(conf, "group.id", topic);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "check.crcs", "true");
    tl_conf_set(conf, "fetch.wait.max.ms", "100");
    rk = tl_new(RD_KAFKA_CONSUMER, conf);
    for (int p = 0; p < NPART; p++) {
        int64_t lo;
        TL_ASSERT_EQ(rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi[p], 10000), 0);
        TL_ASSERT_EQ(lo, 0);
        total += hi[p];
        next[p] = 0;
        last_seq[p] = -1;
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    TL_ASSERT_EQ(rd_kafka_assign(rk, parts), 0);
    rd_kafka_topic_partition_list_destroy(parts);
    while (got < total) {
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 500);
        if (tl_now() > deadline)
            tl_fail("read %" PRId64 " of %" PRId64 " messages in 60 s", got, total);
        if (!msg)
            continue;
        TL_ASSERT(!msg->err, "consume: %s", rd_kafka_message_errstr(msg));
        TL_ASSERT_EQ(msg->offset, next[msg->partition]);
        next[msg->partition]++;
        check_message(msg, last_seq);
        got++;
        rd_kafka_message_destroy(msg);
    }
    rd_kafka_destroy(rk);
    return got;
}

int main(void)
{
    tl_broker b = {0};
    char *dir, *topic;
    rd_kafka_t *rk;
    int ok = 0, failed = 0, failed_seen = 0, rc;
    int64_t in_log;

    tl_init("0005-kill9");
    dir = tl_scratch_dir("0005-broker");
    topic = tl_topic_name("t0005");
    tl_broker_start(&b, dir, NULL);

    rk = new_producer(b.bootstrap);
    TL_ASSERT(tl_create_topic(rk, topic, NPART) >= NPART, "partitions");
    for (int k = 0; k < KILLS; k++) {
        produce_for(rk, topic, 1.0 + (tl_rand() % 1000) / 1000.0);
        tl_log("kill -9 after %d messages", n_sent);
        tl_broker_kill9(&b);
        produce_for(rk, topic, 0.2);
        tl_broker_start(&b, dir, NULL);
    }
    produce_for(rk, topic, 1.0);
    if (rd_kafka_flush(rk, 90000))
        tl_fail("flush: %d messages left", rd_kafka_outq_len(rk));
    rd_kafka_destroy(rk);

    in_log = read_all(b.bootstrap, topic);
    for (int i = 0; i < n_sent; i++) {
        TL_ASSERT(msgs[i].status != ST_PENDING, "message %d has no delivery report", i);
        if (msgs[i].status == ST_OK) {
            ok++;
            TL_ASSERT(msgs[i].seen, "message %d was acknowledged at offset %" PRId64
                      " but is not in the log", i, msgs[i].offset);
        } else {
            failed++;
            failed_seen += msgs[i].seen;
        }
    }
    tl_log("%d produced: %d acknowledged, %d failed (%d of those in the log anyway); "
           "%" PRId64 " in the log", n_sent, ok, failed, failed_seen, in_log);
    TL_ASSERT(ok > n_sent / 2, "only %d of %d acknowledged", ok, n_sent);
    TL_ASSERT_EQ(in_log, ok + failed_seen);
    rc = tl_broker_stop(&b);
    TL_ASSERT(rc == 0, "broker exit status %d on SIGTERM", rc);
    free(dir);
    free(topic);
    return tl_done();
}
