/* 0008-fetch-sessions: incremental fetch sessions (KIP-227) on a raw
 * socket, with requests and responses made by our generated codecs (the
 * stock-client proof is compat/java.sh, whose Java consumer fetches
 * through a session). Checks, against strand or Kafka (KAFKA_REF=1):
 *
 *   full fetch with epoch 0       a session id, all 3 partitions answered
 *   incremental, nothing new      no partition answered, same session id
 *   incremental after a produce   only the partition that grew
 *   a reused epoch                INVALID_FETCH_SESSION_EPOCH (71)
 *   an unknown session id         FETCH_SESSION_ID_NOT_FOUND (70)
 *   a forgotten partition         no longer answered, even with news
 *   epoch -1 on the session       sessionless answer (session id 0) */
#include "testlib/testlib.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "proto/proto.h"

static int sock;
static int32_t corr = 1;
static const char *topic;

static void produce_one(rd_kafka_t *rk, int32_t partition, const char *value)
{
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
        RD_KAFKA_V_VALUE((void *)value, strlen(value)), RD_KAFKA_V_END);
    TL_ASSERT(!err, "produce: %s", rd_kafka_err2str(err));
    TL_ASSERT(rd_kafka_flush(rk, 10000) == 0, "flush timed out");
}

/* Sends Fetch v12 naming `parts` (offset per partition, -1 = leave out)
 * and decodes the answer into *resp (memory from arena). */
static void fetch(arena_t *arena, int32_t sid, int32_t epoch, const int64_t offs[3],
                  int forget, proto_fetch_resp_t *resp)
{
    proto_fetch_req_t req;
    proto_req_header_t h = {1, 12, corr++, PROTO_STR("t0008")};
    buf_t out;
    proto_fetch_req_fetch_topic_t ft;
    proto_fetch_req_fetch_partition_t fp[3];
    proto_fetch_req_forgotten_topic_t fg;
    int32_t fg_part = 2;
    int n = 0;

    proto_fetch_req_init(&req);
    req.max_wait_ms = 0;
    req.min_bytes = 0;
    req.max_bytes = 1 << 20;
    req.session_id = sid;
    req.session_epoch = epoch;
    proto_fetch_req_fetch_topic_init(&ft);
    ft.topic.p = topic;
    ft.topic.len = (int32_t)strlen(topic);
    for (int i = 0; i < 3; i++) {
        if (offs[i] < 0)
            continue;
        proto_fetch_req_fetch_partition_init(&fp[n]);
        fp[n].partition = i;
        fp[n].fetch_offset = offs[i];
        fp[n].partition_max_bytes = 1 << 20;
        n++;
    }
    ft.partitions.n = n;
    ft.partitions.v = fp;
    req.topics.n = n ? 1 : 0;
    req.topics.v = &ft;
    if (forget) {
        proto_fetch_req_forgotten_topic_init(&fg);
        fg.topic = ft.topic;
        fg.partitions.n = 1;
        fg.partitions.v = &fg_part;
        req.forgotten_topics_data.n = 1;
        req.forgotten_topics_data.v = &fg;
    }
    buf_init(&out);
    buf_put_i32(&out, 0);
    proto_req_header_encode(&out, &h);
    proto_fetch_req_encode(&req, 12, &out);
    buf_set_i32(&out, 0, (int32_t)(out.len - 4));
    TL_ASSERT(tl_send_all(sock, out.p, out.len) == 0, "send failed");
    buf_free(&out);

    uint8_t *frame;
    int len = tl_recv_frame(sock, &frame, 10000);
    TL_ASSERT(len > 5, "no Fetch answer");
    /* Response header v1: correlation id, then an empty tag section. */
    TL_ASSERT(frame[4] == 0, "response header has tagged fields");
    uint8_t *body = arena_alloc(arena, (size_t)len);
    memcpy(body, frame, (size_t)len);
    free(frame);
    proto_fetch_resp_init(resp);
    TL_ASSERT(proto_fetch_resp_decode(resp, 12, body + 5, (size_t)len - 5, arena) == 0,
              "undecodable Fetch answer");
}

/* Partition indexes answered, as a bit set; records seen per partition. */
static unsigned answered(const proto_fetch_resp_t *r, unsigned *with_records)
{
    unsigned set = 0;
    *with_records = 0;
    for (int32_t i = 0; i < r->responses.n; i++)
        for (int32_t j = 0; j < r->responses.v[i].partitions.n; j++) {
            const proto_fetch_resp_partition_data_t *p = &r->responses.v[i].partitions.v[j];
            TL_ASSERT(p->error_code == 0, "partition %d: error %d", p->partition_index,
                      p->error_code);
            set |= 1u << p->partition_index;
            if (p->records.len > 0)
                *with_records |= 1u << p->partition_index;
        }
    return set;
}

int main(void)
{
    tl_init("0008-fetch-sessions");
    const char *bs = tl_bootstrap();
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    arena_t arena;
    proto_fetch_resp_t r;
    unsigned recs;

    topic = tl_topic_name("t0008");
    TL_ASSERT(tl_create_topic(rk, topic, 4) >= 3, "topic needs 3 partitions");
    produce_one(rk, 0, "a");
    produce_one(rk, 1, "b");
    arena_init(&arena, 65536);
    sock = tl_connect(bs, 10000);
    TL_ASSERT(sock >= 0, "connect failed");

    int64_t all[3] = {0, 0, 0};
    fetch(&arena, 0, 0, all, 0, &r);
    TL_ASSERT(r.error_code == 0, "full fetch: error %d", r.error_code);
    int32_t sid = r.session_id;
    TL_ASSERT(sid != 0, "full fetch with epoch 0 created no session");
    TL_ASSERT_EQ(answered(&r, &recs), 7u);
    TL_ASSERT_EQ(recs, 3u);

    int64_t moved[3] = {1, 1, -1};
    fetch(&arena, sid, 1, moved, 0, &r);
    TL_ASSERT(r.error_code == 0 && r.session_id == sid, "incremental: error %d, session %d",
              r.error_code, r.session_id);
    TL_ASSERT_EQ(answered(&r, &recs), 0u);

    produce_one(rk, 2, "c");
    int64_t none[3] = {-1, -1, -1};
    fetch(&arena, sid, 2, none, 0, &r);
    TL_ASSERT_EQ(answered(&r, &recs), 4u);
    TL_ASSERT_EQ(recs, 4u);

    fetch(&arena, sid, 2, none, 0, &r);
    TL_ASSERT_EQ(r.error_code, 71);
    fetch(&arena, sid + 1000, 1, none, 0, &r);
    TL_ASSERT_EQ(r.error_code, 70);

    fetch(&arena, sid, 3, none, 1, &r); /* forget partition 2 */
    TL_ASSERT(r.error_code == 0, "forget: error %d", r.error_code);
    produce_one(rk, 2, "d");
    fetch(&arena, sid, 4, none, 0, &r);
    TL_ASSERT_EQ(answered(&r, &recs) & 4u, 0u);

    int64_t one[3] = {0, -1, -1};
    fetch(&arena, sid, -1, one, 0, &r);
    TL_ASSERT(r.error_code == 0 && r.session_id == 0, "closing: error %d, session %d",
              r.error_code, r.session_id);
    TL_ASSERT_EQ(answered(&r, &recs), 1u);

    close(sock);
    arena_destroy(&arena);
    rd_kafka_destroy(rk);
    return tl_done();
}
