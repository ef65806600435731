/* 0203-admin-delete-topics: a deleted topic is gone from metadata at once
 * and the same name can be created again at once, with a new topic id,
 * no old data and its own configs; deleting a topic that does not exist
 * (or an invalid name) gets UNKNOWN_TOPIC_OR_PARTITION. A fetch that was
 * waiting in a long poll on the deleted topic is answered at once, and
 * the broker survives past the time that fetch's timer was due. */
#include "0200-admin.h"

static adm_cfg cfg;

/* The topic id metadata reports (v10+ through librdkafka is not
 * available in 2.0.2, so a raw Metadata v12 request). */
static void topic_id(const char *bs, const char *topic, uint8_t id[16])
{
    tl_req r;
    uint8_t *frame;
    size_t tl = strlen(topic);
    /* Metadata v12 is flexible: header v2 (client id + empty tags). */
    tl_req_header(&r, 3, 12, 301, "adm");
    tl_req_i8(&r, 0);          /* header tags */
    tl_req_i8(&r, 2);          /* topics: 1 element */
    tl_req_bytes(&r, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", 16);
    tl_req_i8(&r, (int8_t)(tl + 1));
    tl_req_bytes(&r, topic, tl);
    tl_req_i8(&r, 0);          /* topic tags */
    tl_req_i8(&r, 0);          /* allow auto create: false */
    tl_req_i8(&r, 0);          /* include topic authorized operations */
    tl_req_i8(&r, 0);          /* request tags */
    const uint8_t *b = adm_roundtrip(bs, &r, &frame), *p = b + 1; /* response header tags */
    p += 4;                                                     /* throttle */
    int nb = p[0] - 1;                                          /* brokers */
    p++;
    for (int i = 0; i < nb; i++) {
        p += 4;
        p += p[0];    /* host: compact string (len + 1) */
        p += 4;       /* port */
        p += p[0] > 0 ? p[0] : 1; /* rack: compact nullable */
        p++;          /* tags */
    }
    p += p[0] > 0 ? p[0] : 1; /* cluster id */
    p += 4;                   /* controller id */
    TL_ASSERT_EQ(p[0], 2);    /* one topic */
    p++;
    TL_ASSERT_EQ(tl_get_i16(p), 0);
    p += 2;
    p += p[0] > 0 ? p[0] : 1; /* name */
    memcpy(id, p, 16);
    free(frame);
}

/* Parks a Fetch v4 of partition 1 in the broker (3 s long poll); the
 * caller reads the answer from the returned socket. */
static int park_fetch(const char *bs, const char *topic)
{
    tl_req r;
    int fd = tl_connect(bs, 20000);
    TL_ASSERT(fd >= 0, "connect");
    tl_req_header(&r, 1, 4, 101, "adm");
    tl_req_i32(&r, -1);      /* replica id */
    tl_req_i32(&r, 3000);    /* max wait */
    tl_req_i32(&r, 1);       /* min bytes */
    tl_req_i32(&r, 1 << 20); /* max bytes */
    tl_req_i8(&r, 0);        /* isolation */
    tl_req_i32(&r, 1);
    adm_req_str(&r, topic);
    tl_req_i32(&r, 1);
    tl_req_i32(&r, 1);       /* partition */
    tl_req_i32(&r, 0);       /* fetch offset (i64) */
    tl_req_i32(&r, 0);
    tl_req_i32(&r, 1 << 20);
    tl_req_finish(&r);
    TL_ASSERT(tl_send_all(fd, r.data, r.len) == 0, "send");
    return fd;
}

/* The parked fetch's answer: partition 1's error code. */
static int fetch_answer(int fd, double *secs)
{
    uint8_t *frame;
    double t0 = tl_now();
    int n = tl_recv_frame(fd, &frame, 20000);
    *secs = tl_now() - t0;
    TL_ASSERT(n > 0, "no answer to the parked fetch");
    /* corr, throttle, 1 topic, name, 1 partition, index, error */
    const uint8_t *p = frame + 4 + 4;
    TL_ASSERT_EQ(tl_get_i32(p), 1);
    p += 4;
    p += 2 + tl_get_i16(p);
    TL_ASSERT_EQ(tl_get_i32(p), 1);
    int code = tl_get_i16(p + 8);
    free(frame);
    close(fd);
    return code;
}

int main(void)
{
    tl_init("0203-admin-delete-topics");
    const char *bs = tl_bootstrap();
    rd_kafka_t *rk = adm_client(bs);
    char *topic = tl_topic_name("doomed");
    const char *const configs[] = {"retention.ms", "77777", NULL};
    uint8_t id1[16], id2[16];
    int64_t lo, hi;

    TL_ASSERT_EQ(adm_create(rk, topic, 2, 1, configs, 0, NULL, 0), 0);
    TL_ASSERT_EQ(tl_wait_topic(rk, topic, 30000), 2);
    topic_id(bs, topic, id1);
    TL_ASSERT(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                RD_KAFKA_V_VALUE("x", 1), RD_KAFKA_V_END) == 0, "produce");
    TL_ASSERT(rd_kafka_flush(rk, 30000) == 0, "flush");

    /* a fetch long-polling partition 1 while the topic goes */
    int fd = park_fetch(bs, topic);
    double waited;
    usleep(500 * 1000);
    TL_ASSERT_EQ(adm_delete(rk, topic), 0);
    TL_ASSERT_EQ(adm_nparts(rk, topic), 0);
    TL_ASSERT_EQ(fetch_answer(fd, &waited), RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
    TL_ASSERT(waited < 2, "the parked fetch was answered after %.1f s", waited);
    /* Its 3 s timer must have gone with it: the broker is still there
     * after the time it would have fired. */
    sleep(4);
    TL_ASSERT_EQ(adm_nparts(rk, topic), 0);

    TL_ASSERT_EQ(adm_delete(rk, topic), RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
    TL_ASSERT_EQ(adm_delete(rk, "no-such-topic-0203"), RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
    TL_ASSERT_EQ(adm_delete(rk, "bad name"), RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);

    /* the same name, at once: new id, empty, default configs */
    TL_ASSERT_EQ(adm_create(rk, topic, 3, 1, NULL, 0, NULL, 0), 0);
    TL_ASSERT_EQ(tl_wait_topic(rk, topic, 30000), 3);
    topic_id(bs, topic, id2);
    TL_ASSERT(memcmp(id1, id2, 16) != 0, "the re-created topic has the old id");
    TL_ASSERT(!rd_kafka_query_watermark_offsets(rk, topic, 0, &lo, &hi, 10000), "watermarks");
    TL_ASSERT_EQ(hi, 0);
    adm_describe(rk, RD_KAFKA_RESOURCE_TOPIC, topic, &cfg);
    TL_ASSERT_EQ(cfg.err, 0);
    adm_expect(&cfg, "retention.ms", "604800000", RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
    TL_ASSERT_EQ(adm_delete(rk, topic), 0);
    rd_kafka_destroy(rk);
    free(topic);
    return tl_done();
}
