/* 0003-list-offsets: ListOffsets by timestamp (rd_kafka_offsets_for_times)
 * answers the earliest offset whose timestamp is >= the one asked for, for
 * times before, at, between and after the produced ones; earliest/latest
 * come from rd_kafka_query_watermark_offsets. Partition 1 stays empty.
 *
 * Partition 0 gets, offset: timestamp (B = an hour ago):
 *   0: B+100 | 1: B+200, 2: B+200, 3: B+300 | 4: B+250, 5: B+400 | 6: B+500
 * with '|' between produce flushes. Offset 4 goes back in time; the answers
 * do not depend on how librdkafka groups the messages into batches. */
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const int ts_rel[] = {100, 200, 200, 300, 250, 400, 500};
static const int flush_after[] = {0, 3, 5, 6};

static const struct {
    int rel;         /* timestamp asked for, relative to B */
    int64_t offset;  /* answer; -1: no such message */
} queries[] = {
    {0, 0},   {99, 0},  {100, 0}, {101, 1}, {150, 1}, {200, 1}, {201, 3},
    {249, 3}, {250, 3}, {260, 3}, {300, 3}, {301, 5}, {399, 5}, {400, 5},
    {401, 6}, {450, 6}, {500, 6}, {501, -1}, {100000, -1},
};

static int64_t base_ts;

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    int i = (int)(intptr_t)msg->_private;
    if (msg->err)
        tl_fail("delivery of %d: %s", i, rd_kafka_err2str(msg->err));
    if (msg->offset != i)
        tl_fail("message %d delivered at offset %" PRId64, i, msg->offset);
}

static void produce(rd_kafka_t *rk, const char *topic)
{
    int f = 0;
    for (int i = 0; i < (int)(sizeof(ts_rel) / sizeof(ts_rel[0])); i++) {
        char val[32];
        int len = snprintf(val, sizeof(val), "m%d", i);
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(val, (size_t)len),
            RD_KAFKA_V_TIMESTAMP(base_ts + ts_rel[i]),
            RD_KAFKA_V_OPAQUE((void *)(intptr_t)i), RD_KAFKA_V_END);
        TL_ASSERT(!err, "produce %d: %s", i, rd_kafka_err2name(err));
        if (i == flush_after[f]) {
            TL_ASSERT_EQ(rd_kafka_flush(rk, 30000), 0);
            f++;
        }
    }
    TL_ASSERT_EQ(rd_kafka_flush(rk, 30000), 0);
}

static void check_watermarks(rd_kafka_t *rk, const char *topic, int part, int64_t lo_want,
                             int64_t hi_want)
{
    int64_t lo = -9, hi = -9;
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk, topic, part, &lo, &hi, 10000);
    TL_ASSERT(!err, "watermarks of %d: %s", part, rd_kafka_err2name(err));
    TL_ASSERT(lo == lo_want && hi == hi_want,
              "partition %d: earliest %" PRId64 " latest %" PRId64 ", expected %" PRId64
              " %" PRId64, part, lo, hi, lo_want, hi_want);
}

/* One request for both partitions per query time, as a client would. */
static void check_times(rd_kafka_t *rk, const char *topic)
{
    for (size_t q = 0; q < sizeof(queries) / sizeof(queries[0]); q++) {
        rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(2);
        rd_kafka_resp_err_t err;
        int64_t ts = base_ts + queries[q].rel;
        rd_kafka_topic_partition_list_add(l, topic, 0)->offset = ts;
        rd_kafka_topic_partition_list_add(l, topic, 1)->offset = ts;
        err = rd_kafka_offsets_for_times(rk, l, 10000);
        TL_ASSERT(!err, "offsets_for_times(B+%d): %s", queries[q].rel, rd_kafka_err2name(err));
        for (int i = 0; i < l->cnt; i++) {
            rd_kafka_topic_partition_t *p = &l->elems[i];
            int64_t want = p->partition == 0 ? queries[q].offset : -1;
            TL_ASSERT(!p->err, "B+%d partition %d: %s", queries[q].rel, p->partition,
                      rd_kafka_err2name(p->err));
            TL_ASSERT(p->offset == want, "B+%d partition %d: offset %" PRId64 ", expected %" PRId64,
                      queries[q].rel, p->partition, p->offset, want);
        }
        rd_kafka_topic_partition_list_destroy(l);
    }
}

int main(void)
{
    const char *bs;
    char *topic;
    rd_kafka_conf_t *conf;
    rd_kafka_t *rk;
    struct timespec now;

    tl_init("0003-list-offsets");
    bs = tl_bootstrap();
    topic = tl_topic_name("t0003");
    clock_gettime(CLOCK_REALTIME, &now);
    base_ts = (int64_t)now.tv_sec * 1000 - 3600 * 1000;

    conf = tl_conf(bs);
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rk = tl_new(RD_KAFKA_PRODUCER, conf);
    TL_ASSERT(tl_create_topic(rk, topic, 2) >= 2, "partitions");

    /* Empty partitions first: earliest = latest = 0, no offset for any time. */
    check_watermarks(rk, topic, 0, 0, 0);
    check_watermarks(rk, topic, 1, 0, 0);
    produce(rk, topic);
    check_watermarks(rk, topic, 0, 0, 7);
    check_watermarks(rk, topic, 1, 0, 0);
    check_times(rk, topic);
    tl_log("%zu timestamp queries answered as expected", sizeof(queries) / sizeof(queries[0]));

    rd_kafka_destroy(rk);
    free(topic);
    return tl_done();
}
