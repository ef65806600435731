/* 0014-versions-44: the versions Kafka 4.4 added to the data-plane and
 * admin APIs we serve, on the wire through the generated codecs, each
 * answer checked field by field against what Kafka 4.4 answers:
 *
 * - Produce v13 names topics by id: records go to the topic of that id
 *   (offsets 0.. of the batch, read back by Fetch v12 by name), the answer
 *   carries the id, an unknown id gets UNKNOWN_TOPIC_ID (100) and a
 *   partition past the end UNKNOWN_TOPIC_OR_PARTITION (3), both with -1
 *   offsets; Produce v12 by name appends after them; a v13 request of
 *   40 KB (checked and written on the worker threads) too.
 * - Fetch v18 (a consumer's request with the new HighWatermark tag) reads
 *   the batches back byte for byte, by topic id; an unknown id gets
 *   UNKNOWN_TOPIC_ID.
 * - ListOffsets v11: the new EARLIEST_PENDING_UPLOAD timestamp (-6) is
 *   answered as by a broker without tiered storage (offset -1, epoch -1,
 *   no error); each special timestamp before the version that added it,
 *   and any other negative one, gets UNSUPPORTED_VERSION (35), checked
 *   before the topic is (so even for a missing topic).
 * - DescribeLogDirs v5: the partition with its size, the volume's total
 *   and usable bytes, IsCordoned false (no cordoned.log.dirs).
 * - InitProducerId v6 is not accepted: its top version is unstable in
 *   Kafka 4.4, which closes the connection of such a request. */
#include "testlib/testlib.h"
#include "testlib/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log_batch.h"

#define S tl_wire_str
#define CALL(fd, api, key, ver, reqp, respp) TL_WIRE_CALL(fd, &arena, api, key, ver, reqp, respp)

#define E_UNKNOWN_TOPIC_OR_PARTITION 3
#define E_UNSUPPORTED_VERSION 35
#define E_UNKNOWN_TOPIC_ID 100

static arena_t arena;
static char *topic;
static uint8_t topic_id[16];

#define BIG_VALUE 5000

/* One uncompressed batch of n records "<tag> i", padded to pad bytes. */
static void make_batch(buf_t *out, const char *tag, int n, int pad)
{
    log_record_t recs[8];
    static char vals[8][BIG_VALUE];
    log_batch_build_t opt;
    TL_ASSERT(n <= 8 && pad <= BIG_VALUE, "batch of %d", n);
    memset(recs, 0, sizeof(recs));
    for (int i = 0; i < n; i++) {
        int len = snprintf(vals[i], sizeof(vals[i]), "%s %d", tag, i);
        for (; len < pad; len++)
            vals[i][len] = (char)('a' + (len * 7 + i) % 26);
        recs[i].timestamp = 1700000000000LL + i;
        recs[i].key_len = -1;
        recs[i].value = (const uint8_t *)vals[i];
        recs[i].value_len = len;
    }
    log_batch_build_init(&opt);
    buf_init(out);
    TL_ASSERT(log_batch_build(out, &opt, recs, n) == 0, "log_batch_build");
}

/* ---- Produce v13 ---- */

/* One topic of one partition per request; the answer's partition. */
static proto_produce_resp_partition_produce_response_t *
produce(int fd, int16_t ver, const uint8_t *id, int32_t partition, const buf_t *batch,
        proto_produce_resp_t *resp)
{
    proto_produce_req_t r;
    proto_produce_req_topic_produce_data_t td;
    proto_produce_req_partition_produce_data_t pd;
    proto_produce_req_init(&r);
    proto_produce_req_topic_produce_data_init(&td);
    proto_produce_req_partition_produce_data_init(&pd);
    r.acks = -1;
    r.timeout_ms = 10000;
    if (id)
        memcpy(td.topic_id.b, id, 16);
    td.name = S(topic);
    pd.index = partition;
    pd.records.p = batch->p;
    pd.records.len = (int32_t)batch->len;
    td.partition_data.n = 1;
    td.partition_data.v = &pd;
    r.topic_data.n = 1;
    r.topic_data.v = &td;
    CALL(fd, produce, 0, ver, &r, resp);
    TL_ASSERT(resp->responses.n == 1 && resp->responses.v[0].partition_responses.n == 1,
              "Produce v%d: %d topics", ver, resp->responses.n);
    if (ver >= 13)
        TL_ASSERT(!memcmp(resp->responses.v[0].topic_id.b, id, 16),
                  "Produce v13: the answer names another topic id");
    proto_produce_resp_partition_produce_response_t *pr =
        &resp->responses.v[0].partition_responses.v[0];
    TL_ASSERT_EQ(pr->index, partition);
    return pr;
}

static void produces(int fd, buf_t *b1, buf_t *b2)
{
    proto_produce_resp_t resp;
    proto_produce_resp_partition_produce_response_t *pr;
    uint8_t unknown[16];

    pr = produce(fd, 13, topic_id, 0, b1, &resp);
    TL_ASSERT(pr->error_code == 0 && pr->base_offset == 0 && pr->log_start_offset == 0,
              "Produce v13 by id: error %d offset %" PRId64, pr->error_code, pr->base_offset);
    TL_ASSERT_EQ(pr->log_append_time_ms, -1);

    for (int i = 0; i < 16; i++)
        unknown[i] = (uint8_t)(topic_id[i] ^ 0x5a);
    pr = produce(fd, 13, unknown, 0, b1, &resp);
    TL_ASSERT(pr->error_code == E_UNKNOWN_TOPIC_ID && pr->base_offset == -1,
              "Produce v13, unknown id: error %d offset %" PRId64, pr->error_code,
              pr->base_offset);
    TL_ASSERT_EQ(pr->log_start_offset, -1);

    pr = produce(fd, 13, topic_id, 7, b1, &resp);
    TL_ASSERT(pr->error_code == E_UNKNOWN_TOPIC_OR_PARTITION && pr->base_offset == -1,
              "Produce v13, partition 7 of 2: error %d", pr->error_code);

    pr = produce(fd, 12, NULL, 0, b2, &resp);
    TL_ASSERT(pr->error_code == 0 && pr->base_offset == 3,
              "Produce v12 by name after v13: error %d offset %" PRId64, pr->error_code,
              pr->base_offset);
}

/* ---- Fetch v18 ---- */

static proto_fetch_resp_partition_data_t *fetch_at(int fd, int16_t ver, const uint8_t *id,
                                                   int64_t offset, proto_fetch_resp_t *resp)
{
    proto_fetch_req_t r;
    proto_fetch_req_fetch_topic_t t;
    proto_fetch_req_fetch_partition_t p;
    proto_fetch_req_init(&r);
    proto_fetch_req_fetch_topic_init(&t);
    proto_fetch_req_fetch_partition_init(&p);
    r.max_wait_ms = 100;
    r.min_bytes = 1;
    r.max_bytes = 1 << 20;
    t.topic = S(topic);
    if (id)
        memcpy(t.topic_id.b, id, 16);
    p.partition = 0;
    p.fetch_offset = offset;
    p.partition_max_bytes = 1 << 20;
    p.high_watermark = 2; /* a replica's view; a consumer's is ignored */
    t.partitions.n = 1;
    t.partitions.v = &p;
    r.topics.n = 1;
    r.topics.v = &t;
    CALL(fd, fetch, 1, ver, &r, resp);
    TL_ASSERT(resp->error_code == 0 && resp->responses.n == 1 &&
                  resp->responses.v[0].partitions.n == 1,
              "Fetch v%d: error %d, %d topics", ver, resp->error_code, resp->responses.n);
    if (ver >= 13)
        TL_ASSERT(!memcmp(resp->responses.v[0].topic_id.b, id, 16), "Fetch v%d: topic id", ver);
    return &resp->responses.v[0].partitions.v[0];
}

static proto_fetch_resp_partition_data_t *fetch(int fd, int16_t ver, const uint8_t *id,
                                                proto_fetch_resp_t *resp)
{
    return fetch_at(fd, ver, id, 0, resp);
}

static void fetches(int fd, const buf_t *b1, const buf_t *b2)
{
    proto_fetch_resp_t resp;
    proto_fetch_resp_partition_data_t *pd;
    uint8_t unknown[16];

    for (int16_t ver = 12; ver <= 18; ver += 6) {
        pd = fetch(fd, ver, topic_id, &resp);
        TL_ASSERT(pd->error_code == 0 && pd->high_watermark == 5 && pd->log_start_offset == 0,
                  "Fetch v%d: error %d hw %" PRId64, ver, pd->error_code, pd->high_watermark);
        /* The batches as stored: base offsets 0 and 3, else the bytes sent
         * (the leader epoch is the broker's, the CRC does not cover it). */
        size_t l1 = b1->len, l2 = b2->len;
        TL_ASSERT(pd->records.len >= 0 && (size_t)pd->records.len == l1 + l2,
                  "Fetch v%d: %d record bytes, sent %zu", ver, pd->records.len, l1 + l2);
        const uint8_t *got = pd->records.p;
        TL_ASSERT(!memcmp(got + 16, b1->p + 16, l1 - 16), "Fetch v%d: first batch", ver);
        TL_ASSERT(!memcmp(got + l1 + 16, b2->p + 16, l2 - 16), "Fetch v%d: second batch", ver);
        TL_ASSERT(tl_get_i32(got + 4) == 0 && tl_get_i32(got + l1 + 4) == 3,
                  "Fetch v%d: base offsets", ver);
    }
    for (int i = 0; i < 16; i++)
        unknown[i] = (uint8_t)(topic_id[i] ^ 0xa5);
    pd = fetch(fd, 18, unknown, &resp);
    TL_ASSERT(pd->error_code == E_UNKNOWN_TOPIC_ID && pd->high_watermark == -1,
              "Fetch v18, unknown id: error %d hw %" PRId64, pd->error_code, pd->high_watermark);
}

/* ---- ListOffsets v11 ---- */

static proto_list_offsets_resp_list_offsets_partition_response_t *
list_offset(int fd, int16_t ver, const char *t, int64_t ts, proto_list_offsets_resp_t *resp)
{
    proto_list_offsets_req_t r;
    proto_list_offsets_req_list_offsets_topic_t rt;
    proto_list_offsets_req_list_offsets_partition_t rp;
    proto_list_offsets_req_init(&r);
    proto_list_offsets_req_list_offsets_topic_init(&rt);
    proto_list_offsets_req_list_offsets_partition_init(&rp);
    r.replica_id = -1;
    r.timeout_ms = 10000;
    rt.name = S(t);
    rp.partition_index = 0;
    rp.timestamp = ts;
    rt.partitions.n = 1;
    rt.partitions.v = &rp;
    r.topics.n = 1;
    r.topics.v = &rt;
    CALL(fd, list_offsets, 2, ver, &r, resp);
    TL_ASSERT(resp->topics.n == 1 && resp->topics.v[0].partitions.n == 1, "ListOffsets v%d",
              ver);
    return &resp->topics.v[0].partitions.v[0];
}

static void list_offsets(int fd)
{
    /* The special timestamps and the version that brought each. */
    static const struct {
        int64_t ts;
        int16_t since;
        int64_t offset;
    } special[] = {{-3, 7, 2}, {-4, 8, 0}, {-5, 9, -1}, {-6, 11, -1}};
    proto_list_offsets_resp_t resp;
    proto_list_offsets_resp_list_offsets_partition_response_t *pr;

    for (size_t i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
        pr = list_offset(fd, special[i].since, topic, special[i].ts, &resp);
        TL_ASSERT(pr->error_code == 0 && pr->offset == special[i].offset,
                  "ListOffsets v%d ts %" PRId64 ": error %d offset %" PRId64, special[i].since,
                  special[i].ts, pr->error_code, pr->offset);
        if (special[i].offset < 0)
            TL_ASSERT(pr->leader_epoch == -1 && pr->timestamp == -1, "ts %" PRId64 ": epoch %d",
                      special[i].ts, pr->leader_epoch);
        for (int16_t ver = 1; ver < special[i].since; ver += 5) {
            pr = list_offset(fd, ver, topic, special[i].ts, &resp);
            TL_ASSERT(pr->error_code == E_UNSUPPORTED_VERSION && pr->offset == -1,
                      "ListOffsets v%d ts %" PRId64 ": error %d", ver, special[i].ts,
                      pr->error_code);
        }
        pr = list_offset(fd, special[i].since - 1, topic, special[i].ts, &resp);
        TL_ASSERT_EQ(pr->error_code, E_UNSUPPORTED_VERSION);
    }
    pr = list_offset(fd, 11, topic, -7, &resp);
    TL_ASSERT(pr->error_code == E_UNSUPPORTED_VERSION, "ListOffsets v11 ts -7: error %d",
              pr->error_code);
    pr = list_offset(fd, 11, topic, -1000, &resp);
    TL_ASSERT_EQ(pr->error_code, E_UNSUPPORTED_VERSION);
    /* The version check comes before the topic's. */
    pr = list_offset(fd, 10, "no-such-topic-0014", -6, &resp);
    TL_ASSERT_EQ(pr->error_code, E_UNSUPPORTED_VERSION);
    pr = list_offset(fd, 11, "no-such-topic-0014", -6, &resp);
    TL_ASSERT_EQ(pr->error_code, E_UNKNOWN_TOPIC_OR_PARTITION);
    /* Latest and by timestamp still as before at v11. */
    pr = list_offset(fd, 11, topic, -1, &resp);
    TL_ASSERT(pr->error_code == 0 && pr->offset == 5, "v11 latest: %" PRId64, pr->offset);
    pr = list_offset(fd, 11, topic, 1700000000001LL, &resp);
    TL_ASSERT(pr->error_code == 0 && pr->offset == 1 && pr->timestamp == 1700000000001LL,
              "v11 by timestamp: %" PRId64, pr->offset);
}

/* A v13 request large enough for the worker threads (32 KB of records
 * and more are checked and written off the event loop), read back. */
static void produce_big(int fd)
{
    proto_produce_resp_t resp;
    proto_fetch_resp_t fresp;
    proto_list_offsets_resp_t lresp;
    buf_t big;
    make_batch(&big, "big", 8, BIG_VALUE);
    TL_ASSERT(big.len > 32 * 1024, "%zu bytes", big.len);
    proto_produce_resp_partition_produce_response_t *pr = produce(fd, 13, topic_id, 0, &big, &resp);
    TL_ASSERT(pr->error_code == 0 && pr->base_offset == 5, "Produce v13 of %zu bytes: error %d "
              "offset %" PRId64, big.len, pr->error_code, pr->base_offset);
    proto_fetch_resp_partition_data_t *pd = fetch_at(fd, 18, topic_id, 5, &fresp);
    TL_ASSERT(pd->error_code == 0 && pd->high_watermark == 13 && pd->records.len >= 0 &&
                  (size_t)pd->records.len == big.len &&
                  !memcmp(pd->records.p + 16, big.p + 16, big.len - 16),
              "Fetch v18 of the large batch: error %d hw %" PRId64 ", %d bytes", pd->error_code,
              pd->high_watermark, pd->records.len);
    TL_ASSERT_EQ(list_offset(fd, 11, topic, -1, &lresp)->offset, 13);
    buf_free(&big);
}

/* ---- DescribeLogDirs v5 ---- */

static void describe_log_dirs(int fd, size_t bytes)
{
    proto_describe_log_dirs_req_t r;
    proto_describe_log_dirs_resp_t resp;
    proto_describe_log_dirs_req_describable_log_dir_topic_t t;
    int32_t parts[1] = {0};
    proto_describe_log_dirs_req_init(&r);
    proto_describe_log_dirs_req_describable_log_dir_topic_init(&t);
    t.topic = S(topic);
    t.partitions.n = 1;
    t.partitions.v = parts;
    r.topics.n = 1;
    r.topics.v = &t;
    CALL(fd, describe_log_dirs, 35, 5, &r, &resp);
    TL_ASSERT(resp.error_code == 0 && resp.results.n >= 1, "DescribeLogDirs v5: error %d, %d dirs",
              resp.error_code, resp.results.n);
    int found = 0;
    for (int32_t i = 0; i < resp.results.n; i++) {
        proto_describe_log_dirs_resp_describe_log_dirs_result_t *d = &resp.results.v[i];
        TL_ASSERT(!d->error_code && d->log_dir.len > 0 && d->log_dir.p[0] == '/',
                  "DescribeLogDirs v5: dir %d error %d", i, d->error_code);
        TL_ASSERT(d->total_bytes > 0 && d->usable_bytes >= 0 && d->usable_bytes <= d->total_bytes,
                  "DescribeLogDirs v5: total %" PRId64 " usable %" PRId64, d->total_bytes,
                  d->usable_bytes);
        TL_ASSERT(!d->is_cordoned, "DescribeLogDirs v5: dir %d cordoned", i);
        for (int32_t j = 0; j < d->topics.n; j++) {
            TL_ASSERT(d->topics.v[j].partitions.n == 1, "partitions");
            proto_describe_log_dirs_resp_describe_log_dirs_partition_t *p =
                &d->topics.v[j].partitions.v[0];
            TL_ASSERT(p->partition_index == 0 && p->partition_size == (int64_t)bytes &&
                          p->offset_lag == 0 && !p->is_future_key,
                      "DescribeLogDirs v5: partition %d size %" PRId64 ", wanted %zu",
                      p->partition_index, p->partition_size, bytes);
            found++;
        }
    }
    TL_ASSERT_EQ(found, 1);
}

/* ---- InitProducerId v6 ---- */

static void init_producer_id_v6(void)
{
    proto_init_producer_id_req_t r;
    proto_init_producer_id_resp_t resp;
    buf_t b;
    size_t got = 0;
    int fd = tl_connect(tl_bootstrap(), 20000);
    TL_ASSERT(fd >= 0, "connect");

    proto_init_producer_id_req_init(&r);
    r.transactional_id = S(NULL);
    r.transaction_timeout_ms = 60000;
    CALL(fd, init_producer_id, 22, 5, &r, &resp);
    TL_ASSERT(resp.error_code == 0 || resp.error_code == 14 /* Kafka: a first call may */,
              "InitProducerId v5: error %d", resp.error_code);
    buf_init(&b);
    proto_init_producer_id_req_encode(&r, 6, &b);
    tl_wire_send(fd, 22, 6, &b);
    buf_free(&b);
    TL_ASSERT(tl_wait_closed(fd, 10000, &got) == 1,
              "InitProducerId v6 was answered (%zu bytes), Kafka 4.4 closes", got);
    close(fd);
}

int main(void)
{
    const char *bs;
    proto_metadata_resp_t md;
    buf_t b1, b2;

    tl_init("0014-versions-44");
    tl_wire_set_client_id("v0014");
    bs = tl_bootstrap();
    arena_init(&arena, 65536);
    topic = tl_topic_name("t0014");
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    TL_ASSERT_EQ(tl_create_topic(rk, topic, 2), 2);
    rd_kafka_destroy(rk);

    int fd = tl_connect(bs, 20000);
    TL_ASSERT(fd >= 0, "connect %s", bs);
    tl_wire_metadata(fd, &arena, 12, topic, 0, &md);
    TL_ASSERT(md.topics.n == 1 && md.topics.v[0].error_code == 0, "Metadata of %s", topic);
    memcpy(topic_id, md.topics.v[0].topic_id.b, 16);

    make_batch(&b1, "by id", 3, 0);
    make_batch(&b2, "by name", 2, 0);
    produces(fd, &b1, &b2);
    fetches(fd, &b1, &b2);
    list_offsets(fd);
    describe_log_dirs(fd, b1.len + b2.len);
    produce_big(fd);
    init_producer_id_v6();
    tl_log("Produce v13, Fetch v18, ListOffsets v11, DescribeLogDirs v5 answered as Kafka 4.4");

    close(fd);
    buf_free(&b1);
    buf_free(&b2);
    arena_destroy(&arena);
    free(topic);
    return tl_done();
}
