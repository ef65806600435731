/* 0202-admin-partitions-records: CreatePartitions grows a topic (and
 * validate_only does not; shrinking, an equal count and an unknown topic
 * get Kafka's codes); the new partitions take messages. DeleteRecords
 * moves the log start offset: ListOffsets earliest follows, a consumer
 * reading below it gets OFFSET_OUT_OF_RANGE and one reading from it gets
 * the records that remain; offsets past the high watermark are refused.
 * DescribeLogDirs (raw: librdkafka 2.0.2 lacks it) lists the partitions
 * with their sizes. */
#include "0200-admin.h"

static void produce(rd_kafka_t *rk, const char *topic, int32_t p, int n)
{
    for (int i = 0; i < n; i++) {
        char val[32];
        int len = snprintf(val, sizeof(val), "message %d", i);
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(p),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(val, (size_t)len),
            RD_KAFKA_V_END);
        TL_ASSERT(!err, "produce: %s", rd_kafka_err2name(err));
    }
    TL_ASSERT(rd_kafka_flush(rk, 30000) == 0, "flush");
}

/* The first message a consumer assigned at offset `from` gets. */
static rd_kafka_resp_err_t consume_first(const char *bs, const char *topic, int32_t p,
                                         int64_t from, int64_t *offset)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "group.id", "0202");
    tl_conf_set(conf, "auto.offset.reset", "error");
    tl_conf_set(conf, "enable.auto.commit", "false");
    rd_kafka_t *c = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_resp_err_t err = RD_KAFKA_RESP_ERR__TIMED_OUT;
    rd_kafka_topic_partition_list_add(l, topic, p)->offset = from;
    rd_kafka_assign(c, l);
    double end = tl_now() + 20;
    while (tl_now() < end) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 200);
        if (!m)
            continue;
        err = m->err;
        *offset = m->offset;
        rd_kafka_message_destroy(m);
        if (err != RD_KAFKA_RESP_ERR__PARTITION_EOF)
            break;
    }
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
    return err;
}

static void check_partitions(rd_kafka_t *rk, const char *topic)
{
    TL_ASSERT_EQ(adm_partitions(rk, topic, 5, 1), 0);
    sleep(1);
    TL_ASSERT_EQ(adm_nparts(rk, topic), 2);
    TL_ASSERT_EQ(adm_partitions(rk, topic, 5, 0), 0);
    TL_ASSERT_EQ(tl_wait_topic(rk, topic, 30000), 5);
    TL_ASSERT_EQ(adm_partitions(rk, topic, 5, 0), RD_KAFKA_RESP_ERR_INVALID_PARTITIONS);
    TL_ASSERT_EQ(adm_partitions(rk, topic, 3, 0), RD_KAFKA_RESP_ERR_INVALID_PARTITIONS);
    TL_ASSERT_EQ(adm_partitions(rk, "no-such-topic-0202", 3, 0),
                 RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
    TL_ASSERT_EQ(adm_nparts(rk, topic), 5);
    produce(rk, topic, 4, 3);
}

static void check_delete_records(rd_kafka_t *rk, const char *bs, const char *topic)
{
    int64_t low = -1, lo, hi, off = -1;
    produce(rk, topic, 0, 10);
    TL_ASSERT_EQ(adm_delete_records(rk, topic, 0, 4, &low), 0);
    TL_ASSERT_EQ(low, 4);
    TL_ASSERT(!rd_kafka_query_watermark_offsets(rk, topic, 0, &lo, &hi, 10000), "watermarks");
    TL_ASSERT_EQ(lo, 4);
    TL_ASSERT_EQ(hi, 10);
    TL_ASSERT_EQ(consume_first(bs, topic, 0, 2, &off), RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET);
    TL_ASSERT_EQ(consume_first(bs, topic, 0, 4, &off), 0);
    TL_ASSERT_EQ(off, 4);
    TL_ASSERT_EQ(adm_delete_records(rk, topic, 0, 11, &low), RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE);
    TL_ASSERT_EQ(adm_delete_records(rk, topic, 0, 2, &low), 0); /* below: no change */
    TL_ASSERT_EQ(low, 4);
    TL_ASSERT_EQ(adm_delete_records(rk, topic, 0, RD_KAFKA_OFFSET_END, &low), 0);
    TL_ASSERT_EQ(low, 10);
    TL_ASSERT(!rd_kafka_query_watermark_offsets(rk, topic, 0, &lo, &hi, 10000), "watermarks");
    TL_ASSERT_EQ(lo, 10);
}

/* DescribeLogDirs v1: one dir holding the topic's 5 partitions. */
static void check_log_dirs(const char *bs, const char *topic)
{
    tl_req r;
    uint8_t *frame;
    tl_req_header(&r, 35, 1, 3501, "adm");
    tl_req_i32(&r, 1);
    adm_req_str(&r, topic);
    tl_req_i32(&r, 5);
    for (int i = 0; i < 5; i++)
        tl_req_i32(&r, i);
    const uint8_t *b = adm_roundtrip(bs, &r, &frame), *p = b + 4;
    TL_ASSERT_EQ(tl_get_i32(p), 1); /* one log dir */
    p += 4;
    TL_ASSERT_EQ(tl_get_i16(p), 0);
    p += 2;
    p += 2 + tl_get_i16(p); /* path */
    TL_ASSERT_EQ(tl_get_i32(p), 1); /* one topic */
    p += 4;
    TL_ASSERT(tl_get_i16(p) == (int)strlen(topic) && !memcmp(p + 2, topic, strlen(topic)),
              "topic name");
    p += 2 + tl_get_i16(p);
    TL_ASSERT_EQ(tl_get_i32(p), 5);
    int64_t total = 0;
    p += 4;
    for (int i = 0; i < 5; i++, p += 4 + 8 + 8 + 1) {
        int64_t size = ((int64_t)tl_get_i32(p + 4) << 32) | (uint32_t)tl_get_i32(p + 8);
        total += size;
    }
    TL_ASSERT(total > 0, "partition sizes add up to %lld", (long long)total);
    free(frame);
}

int main(void)
{
    tl_init("0202-admin-partitions-records");
    const char *bs = tl_bootstrap();
    rd_kafka_t *rk = adm_client(bs);
    char *topic = tl_topic_name("grow");

    TL_ASSERT_EQ(adm_create(rk, topic, 2, 1, NULL, 0, NULL, 0), 0);
    TL_ASSERT_EQ(tl_wait_topic(rk, topic, 30000), 2);
    check_partitions(rk, topic);
    check_delete_records(rk, bs, topic);
    check_log_dirs(bs, topic);
    rd_kafka_destroy(rk);
    free(topic);
    return tl_done();
}
