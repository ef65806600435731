/* 0002-produce-consume: 200,000 messages with keys, headers and explicit
 * timestamps over 4 partitions, once per compression codec, each to a fresh
 * topic; an assign()-based consumer reads them back and every key, value,
 * header and timestamp byte, the order within each partition and the offsets
 * (0..n-1 per partition) must match.
 *
 * Message i goes to partition i % 4 and is fully determined by i (see
 * gen_*), so nothing is kept in memory: the consumer recomputes message
 * 4 * offset + partition and compares. Null keys, null and empty values,
 * headers with null values and long keys appear at fixed strides. */
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#define NPART 4

static int n_msgs = 200000;
static int64_t base_ts;
static int64_t dr_ok, dr_fail;
static int64_t dr_bad_offset;


/* Key of message i into buf; returns its length, -1 for a null key. */
static int gen_key(int i, char *buf)
{
    int len;
    if (i % 97 == 0)
        return -1;
    len = sprintf(buf, "key-%d", i);
    if (i % 1000 == 7) { /* a long key now and then */
        memset(buf + len, 'K', 300);
        len += 300;
    }
    return len;
}

/* Value of message i: a compressible text part and a random tail. */
static int gen_value(int i, char *buf)
{
    uint32_t h = tl_mix32((uint32_t)i);
    int len, tail;
    if (i % 101 == 0)
        return -1; /* null value (tombstone) */
    if (i % 103 == 0)
        return 0;
    len = sprintf(buf, "value %d of the 0002 test, partition %d; ", i, i % NPART);
    tail = (int)(h % 160);
    for (int k = 0; k < tail; k++) {
        h = tl_mix32(h + (uint32_t)k);
        buf[len++] = (char)(h & 0xff);
    }
    return len;
}

/* 0..3 headers; the third has a null value. */
static int gen_headers(int i, char names[][16], char vals[][32], int *vlens)
{
    int n = (int)(tl_mix32((uint32_t)i ^ 0x5a5a) % 4);
    for (int h = 0; h < n; h++) {
        snprintf(names[h], 16, "h%d", h);
        vlens[h] = h == 2 ? -1 : snprintf(vals[h], 32, "hv-%d-%d", i, h);
    }
    return n;
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    int i = (int)(intptr_t)msg->_private;
    if (msg->err) {
        if (dr_fail++ < 5)
            tl_log("delivery of %d failed: %s", i, rd_kafka_err2str(msg->err));
        return;
    }
    dr_ok++;
    if (msg->partition != i % NPART || msg->offset != i / NPART) {
        if (dr_bad_offset++ < 5)
            tl_log("message %d delivered to %d@%" PRId64 ", expected %d@%d", i,
                   (int)msg->partition, msg->offset, i % NPART, i / NPART);
    }
}

static void produce_one(rd_kafka_t *rk, const char *topic, int i)
{
    char key[400], val[300], hn[4][16], hv[4][32];
    int hl[4], klen = gen_key(i, key), vlen = gen_value(i, val);
    int nh = gen_headers(i, hn, hv, hl);
    rd_kafka_headers_t *hdrs = rd_kafka_headers_new(4);
    rd_kafka_resp_err_t err;

    for (int h = 0; h < nh; h++)
        rd_kafka_header_add(hdrs, hn[h], -1, hl[h] < 0 ? NULL : hv[h], hl[h] < 0 ? 0 : hl[h]);
    for (;;) {
        err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(i % NPART),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
            RD_KAFKA_V_KEY((klen < 0 ? NULL : key), (klen < 0 ? 0 : (size_t)klen)),
            RD_KAFKA_V_VALUE((vlen < 0 ? NULL : val), (vlen < 0 ? 0 : (size_t)vlen)),
            RD_KAFKA_V_HEADERS(hdrs), RD_KAFKA_V_TIMESTAMP(base_ts + i),
            RD_KAFKA_V_OPAQUE((void *)(intptr_t)i), RD_KAFKA_V_END);
        if (err != RD_KAFKA_RESP_ERR__QUEUE_FULL)
            break;
        rd_kafka_poll(rk, 10);
    }
    if (err)
        tl_fail("produce %d: %s", i, rd_kafka_err2name(err));
}

static void produce_all(const char *bs, const char *topic, const char *codec)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_t *rk;
    double t0 = tl_now();
    tl_conf_set(conf, "compression.codec", codec);
    tl_conf_set(conf, "linger.ms", "5");
    tl_conf_set(conf, "acks", "all");
    tl_conf_set(conf, "queue.buffering.max.messages", "1000000");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rk = tl_new(RD_KAFKA_PRODUCER, conf);
    TL_ASSERT(tl_create_topic(rk, topic, NPART) >= NPART, "partitions");

    dr_ok = dr_fail = dr_bad_offset = 0;
    for (int i = 0; i < n_msgs; i++) {
        produce_one(rk, topic, i);
        if (i % 1000 == 0)
            rd_kafka_poll(rk, 0);
    }
    if (rd_kafka_flush(rk, 60000))
        tl_fail("%s: flush timed out, %d messages left", codec, rd_kafka_outq_len(rk));
    TL_ASSERT_EQ(dr_fail, 0);
    TL_ASSERT_EQ(dr_ok, n_msgs);
    TL_ASSERT_EQ(dr_bad_offset, 0);
    tl_log("%s: produced %d messages in %.2f s", codec, n_msgs, tl_now() - t0);
    rd_kafka_destroy(rk);
}

static void check_bytes(int i, const char *what, const void *got, size_t got_len,
                        const void *want, int want_len)
{
    if (want_len < 0) {
        TL_ASSERT(got == NULL, "message %d: %s should be null, has %zu bytes", i, what, got_len);
        return;
    }
    TL_ASSERT(got != NULL || want_len == 0, "message %d: %s is null", i, what);
    TL_ASSERT(got_len == (size_t)want_len && memcmp(got, want, got_len) == 0,
              "message %d: %s differs (%zu bytes, expected %d)", i, what, got_len, want_len);
}

static void check_headers(int i, rd_kafka_message_t *msg)
{
    char hn[4][16], hv[4][32];
    int hl[4], nh = gen_headers(i, hn, hv, hl);
    rd_kafka_headers_t *hdrs = NULL;
    rd_kafka_resp_err_t err = rd_kafka_message_headers(msg, &hdrs);
    size_t cnt = err ? 0 : rd_kafka_header_cnt(hdrs);

    TL_ASSERT(err == 0 || err == RD_KAFKA_RESP_ERR__NOENT, "headers: %s", rd_kafka_err2name(err));
    TL_ASSERT(cnt == (size_t)nh, "message %d: %zu headers, expected %d", i, cnt, nh);
    for (int h = 0; h < nh; h++) {
        const char *name;
        const void *val;
        size_t size;
        TL_ASSERT_EQ(rd_kafka_header_get_all(hdrs, (size_t)h, &name, &val, &size), 0);
        TL_ASSERT(strcmp(name, hn[h]) == 0, "message %d: header %d named %s", i, h, name);
        check_bytes(i, "header value", val, size, hv[h], hl[h]);
    }
}

static void check_message(rd_kafka_message_t *msg, int64_t *next)
{
    char key[400], val[300];
    int p = msg->partition, i;
    rd_kafka_timestamp_type_t tstype;
    int64_t ts;

    TL_ASSERT(p >= 0 && p < NPART, "partition %d", p);
    TL_ASSERT(msg->offset == next[p], "partition %d: offset %" PRId64 ", expected %" PRId64,
              p, msg->offset, next[p]);
    next[p]++;
    i = (int)(msg->offset * NPART + p);
    TL_ASSERT(i < n_msgs, "partition %d: extra message at offset %" PRId64, p, msg->offset);
    check_bytes(i, "key", msg->key, msg->key_len, key, gen_key(i, key));
    check_bytes(i, "value", msg->payload, msg->len, val, gen_value(i, val));
    ts = rd_kafka_message_timestamp(msg, &tstype);
    TL_ASSERT(tstype == RD_KAFKA_TIMESTAMP_CREATE_TIME, "message %d: timestamp type %d", i, tstype);
    TL_ASSERT(ts == base_ts + i, "message %d: timestamp %" PRId64 ", expected %" PRId64, i, ts,
              base_ts + i);
    check_headers(i, msg);
}

static void consume_all(const char *bs, const char *topic, const char *codec)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(NPART);
    int64_t next[NPART] = {0}, got = 0;
    double t0 = tl_now(), deadline = t0 + 120;
    rd_kafka_t *rk;

    /* librdkafka's assign() wants a group.id, though nothing is committed. */
    tl_conf_set(conf, "group.id", topic);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "enable.partition.eof", "false");
    /* With librdkafka's default of 500 ms, some fetches of this test sit
     * out the whole wait though data is there (against Kafka too), which
     * triples the run time. */
    tl_conf_set(conf, "fetch.wait.max.ms", "100");
    rk = tl_new(RD_KAFKA_CONSUMER, conf);
    for (int p = 0; p < NPART; p++)
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    TL_ASSERT_EQ(rd_kafka_assign(rk, parts), 0);
    rd_kafka_topic_partition_list_destroy(parts);

    while (got < n_msgs) {
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 500);
        if (tl_now() > deadline)
            tl_fail("%s: consumed %" PRId64 " of %d in 120 s", codec, got, n_msgs);
        if (!msg)
            continue;
        if (msg->err)
            tl_fail("%s: consume error: %s", codec, rd_kafka_message_errstr(msg));
        check_message(msg, next);
        if (got == 0)
            tl_log("%s: first message after %.2f s", codec, tl_now() - t0);
        got++;
        rd_kafka_message_destroy(msg);
    }
    /* Nothing beyond the last message. */
    for (int p = 0; p < NPART; p++) {
        int64_t lo, hi;
        rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 10000);
        TL_ASSERT(!err, "watermarks: %s", rd_kafka_err2name(err));
        TL_ASSERT_EQ(lo, 0);
        TL_ASSERT_EQ(hi, n_msgs / NPART);
        TL_ASSERT_EQ(next[p], n_msgs / NPART);
    }
    tl_log("%s: consumed and checked %" PRId64 " messages in %.2f s", codec, got, tl_now() - t0);
    rd_kafka_destroy(rk);
}

int main(int argc, char **argv)
{
    static const char *codecs[] = {"none", "gzip", "snappy", "lz4", "zstd"};
    const char *bs, *env = getenv("T0002_MESSAGES");
    struct timespec ts;

    tl_init("0002-produce-consume");
    bs = tl_bootstrap();
    if (env)
        n_msgs = atoi(env);
    n_msgs -= n_msgs % NPART;
    TL_ASSERT(n_msgs > 0, "T0002_MESSAGES=%s", env);
    /* An hour back: Kafka refuses timestamps too far in the future. */
    clock_gettime(CLOCK_REALTIME, &ts);
    base_ts = (int64_t)ts.tv_sec * 1000 - 3600 * 1000;

    for (size_t c = 0; c < sizeof(codecs) / sizeof(codecs[0]); c++) {
        char prefix[64], *topic;
        if (argc > 1 && strcmp(argv[1], codecs[c]) != 0)
            continue; /* one codec only: 0002-produce-consume zstd */
        snprintf(prefix, sizeof(prefix), "t0002-%s", codecs[c]);
        topic = tl_topic_name(prefix);
        produce_all(bs, topic, codecs[c]);
        consume_all(bs, topic, codecs[c]);
        free(topic);
    }
    return tl_done();
}
