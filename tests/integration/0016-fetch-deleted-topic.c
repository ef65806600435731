/* A consumer of two topics, one of which is deleted, does not spin: its
 * fetch (v13, topics by id) is answered with UNKNOWN_TOPIC_ID for the
 * deleted topic's partition only after waiting its max_wait_ms on the live
 * one, as Kafka sets partitions its metadata does not know aside before it
 * reads; data arriving on the live topic ends the wait at once. A fetch of
 * the deleted topic alone is answered at once (nothing to wait for). The
 * bug this guards: every fetch was answered at once, and a consumer sent
 * thousands a second until it dropped the topic. Passes against Kafka. */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log_batch.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"

static arena_t arena;
static int wfd;

static proto_str_t S(const char *s)
{
    return tl_wire_str(s);
}

static void topic_id(const char *topic, uint8_t id[16])
{
    proto_metadata_resp_t md;
    tl_wire_metadata(wfd, &arena, 12, topic, 0, &md);
    TL_ASSERT(md.topics.n == 1 && md.topics.v[0].error_code == 0, "metadata of %s", topic);
    memcpy(id, md.topics.v[0].topic_id.b, 16);
}

static void delete_topic(const char *topic)
{
    proto_delete_topics_req_t r;
    proto_delete_topics_resp_t resp;
    proto_delete_topics_req_delete_topic_state_t t;
    proto_delete_topics_req_init(&r);
    proto_delete_topics_req_delete_topic_state_init(&t);
    t.name = S(topic);
    r.topics.n = 1;
    r.topics.v = &t;
    r.timeout_ms = 30000;
    TL_WIRE_CALL(wfd, &arena, delete_topics, 20, 6, &r, &resp);
    TL_ASSERT_EQ(resp.responses.v[0].error_code, 0);
}

/* Fetch v13 of partition 0 of each topic id at its end (offset 0: both
 * are empty), min_bytes 1; returns the seconds it took. */
static double fetch(const uint8_t (*ids)[16], int n, int32_t max_wait, proto_fetch_resp_t *resp)
{
    proto_fetch_req_t r;
    proto_fetch_req_fetch_topic_t t[2];
    proto_fetch_req_fetch_partition_t p[2];
    proto_fetch_req_init(&r);
    r.replica_id = -1;
    r.max_wait_ms = max_wait;
    r.min_bytes = 1;
    r.max_bytes = 1 << 20;
    r.session_id = 0;
    r.session_epoch = -1;
    r.rack_id = S("");
    for (int i = 0; i < n; i++) {
        proto_fetch_req_fetch_topic_init(&t[i]);
        proto_fetch_req_fetch_partition_init(&p[i]);
        memcpy(t[i].topic_id.b, ids[i], 16);
        p[i].partition = 0;
        p[i].fetch_offset = 0;
        p[i].partition_max_bytes = 1 << 20;
        t[i].partitions.n = 1;
        t[i].partitions.v = &p[i];
    }
    r.topics.n = n;
    r.topics.v = t;
    double t0 = tl_now();
    TL_WIRE_CALL(wfd, &arena, fetch, 1, 13, &r, resp);
    return tl_now() - t0;
}

static int16_t part_error(const proto_fetch_resp_t *resp, const uint8_t id[16])
{
    for (int32_t i = 0; i < resp->responses.n; i++)
        if (!memcmp(resp->responses.v[i].topic_id.b, id, 16))
            return resp->responses.v[i].partitions.v[0].error_code;
    tl_fail("no answer for a topic");
    return -1;
}

/* The live partition's record bytes in a fetch answer. */
static int32_t live_bytes(const proto_fetch_resp_t *resp, const uint8_t id[16])
{
    for (int32_t i = 0; i < resp->responses.n; i++)
        if (!memcmp(resp->responses.v[i].topic_id.b, id, 16))
            return resp->responses.v[i].partitions.v[0].records.len;
    return 0;
}

typedef struct produce_later_s {
    rd_kafka_t *rk;
    const char *topic;
} produce_later_t;

/* One record, half a second after the fetch went out. */
static void *produce_later(void *arg)
{
    produce_later_t *pl = arg;
    usleep(500 * 1000);
    if (rd_kafka_producev(pl->rk, RD_KAFKA_V_TOPIC(pl->topic), RD_KAFKA_V_PARTITION(0),
                          RD_KAFKA_V_VALUE("v", 1), RD_KAFKA_V_END) == 0)
        rd_kafka_flush(pl->rk, 10000);
    return NULL;
}

int main(void)
{
    const char *bs = tl_bootstrap();
    rd_kafka_t *rk;
    char *live, *gone;
    uint8_t ids[2][16];
    proto_fetch_resp_t resp;

    tl_init("0016-fetch-deleted-topic");
    arena_init(&arena, 1 << 16);
    live = tl_topic_name("t0016-live");
    gone = tl_topic_name("t0016-gone");
    rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    TL_ASSERT_EQ(tl_create_topic(rk, live, 1), 1);
    TL_ASSERT_EQ(tl_create_topic(rk, gone, 1), 1);
    wfd = tl_connect(bs, 20000);
    TL_ASSERT(wfd >= 0, "connect");
    topic_id(live, ids[0]);
    topic_id(gone, ids[1]);
    delete_topic(gone);
    sleep(1); /* the deletion reaches every broker's metadata */

    /* The live partition holds the fetch for its wait. */
    double took = fetch((const uint8_t(*)[16])ids, 2, 800, &resp);
    TL_ASSERT_EQ(resp.error_code, 0);
    TL_ASSERT_EQ(part_error(&resp, ids[1]), 100); /* UNKNOWN_TOPIC_ID */
    TL_ASSERT_EQ(part_error(&resp, ids[0]), 0);
    TL_ASSERT(took >= 0.6, "answered after %.3f s, not after its wait", took);
    tl_log("fetch of live + deleted: %.3f s", took);

    /* Alone, the deleted one is answered at once. */
    took = fetch((const uint8_t(*)[16])&ids[1], 1, 5000, &resp);
    TL_ASSERT_EQ(part_error(&resp, ids[1]), 100);
    TL_ASSERT(took < 2.0, "deleted topic alone took %.3f s", took);

    /* Data arriving on the live topic while the fetch waits ends the wait
     * at once (the fetch parked with the deleted partition set aside is
     * woken by the append). */
    produce_later_t pl = {rk, live};
    pthread_t th;
    TL_ASSERT_EQ(pthread_create(&th, NULL, produce_later, &pl), 0);
    took = fetch((const uint8_t(*)[16])ids, 2, 5000, &resp);
    pthread_join(th, NULL);
    TL_ASSERT_EQ(part_error(&resp, ids[0]), 0);
    TL_ASSERT(live_bytes(&resp, ids[0]) > 0, "the record did not come back");
    TL_ASSERT(took >= 0.3 && took < 3.0, "the fetch took %.3f s: the produce is 0.5 s in", took);
    tl_log("fetch woken by data: %.3f s", took);
    close(wfd);
    rd_kafka_destroy(rk);
    free(live);
    free(gone);
    arena_destroy(&arena);
    return tl_done();
}
