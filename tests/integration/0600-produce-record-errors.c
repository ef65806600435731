/* 0600-produce-record-errors: when several records of a produced batch
 * fail the per-record checks, the Produce answer (v8+) lists every one of
 * them in record_errors, by batch index and with its own message, and its
 * error_message sums them up, as Apache Kafka 4.4 answers (the texts below
 * were read from Kafka 4.4's answers to the same requests). A client then
 * fails exactly those records with the partition's error and the others
 * with a retriable one (compat/client-bugs-java.sh shows the Java
 * producer doing so). Raw Produce v9, v11 and v13 (topics by id) requests, each of one batch
 * of 8 records:
 *
 *   A. compacted topic, records 0, 2 and 5 without a key: INVALID_RECORD,
 *      record_errors [0, 2, 5] each "Compacted topic cannot accept message
 *      without key in topic partition T-0", and the summary of "3 record
 *      errors" showing the first three; the same for an lz4 batch.
 *   B. a CreateTime topic, records 0, 2 and 5 two hours in the future
 *      (message.timestamp.after.max.ms is 1 hour by default):
 *      INVALID_TIMESTAMP, record_errors [0, 2, 5] each naming the record's
 *      timestamp, its offset in the batch and the accepted range.
 *   C. compacted topic, record 1 without a key and record 3 (keyed) in the
 *      future: INVALID_TIMESTAMP (any timestamp error wins), both listed,
 *      each with its own message.
 * Nothing of a rejected batch is stored: a good batch then lands at
 * offset 0 of each partition. */
#include "testlib/testlib.h"
#include "testlib/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "0200-admin.h"
#include "log/log_batch.h"

#define NREC 8
#define E_NONE 0
#define E_INVALID_TIMESTAMP 32
#define E_INVALID_RECORD 87
#define HOUR_MS 3600000LL

static arena_t arena;
static int wfd = -1;

#define S tl_wire_str

static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One batch of NREC records: record i has no key when nokey has bit i, a
 * timestamp two hours ahead when future has bit i. */
static void build(buf_t *out, unsigned nokey, unsigned future, int codec, int64_t now)
{
    log_record_t recs[NREC];
    char keys[NREC][8], vals[NREC][16];
    log_batch_build_t opt;
    memset(recs, 0, sizeof(recs));
    for (int i = 0; i < NREC; i++) {
        recs[i].key_len = nokey >> i & 1 ? -1 : snprintf(keys[i], sizeof(keys[i]), "k%d", i);
        recs[i].key = (const uint8_t *)keys[i];
        recs[i].value_len = snprintf(vals[i], sizeof(vals[i]), "value %d", i);
        recs[i].value = (const uint8_t *)vals[i];
        recs[i].timestamp = now + i + (future >> i & 1 ? 2 * HOUR_MS : 0);
    }
    log_batch_build_init(&opt);
    opt.attributes = (int16_t)codec;
    TL_ASSERT(log_batch_build(out, &opt, recs, NREC) == 0, "log_batch_build");
}

static proto_produce_resp_partition_produce_response_t produce(const char *topic, int16_t ver,
                                                               const buf_t *batch)
{
    proto_produce_req_t r;
    proto_produce_resp_t resp;
    proto_produce_req_topic_produce_data_t t;
    proto_produce_req_partition_produce_data_t pd;
    proto_produce_req_init(&r);
    proto_produce_req_topic_produce_data_init(&t);
    proto_produce_req_partition_produce_data_init(&pd);
    pd.index = 0;
    pd.records.p = batch->p;
    pd.records.len = (int32_t)batch->len;
    r.acks = -1;
    r.timeout_ms = 10000;
    t.name = S(topic);
    if (ver >= 13) { /* topics by id only */
        proto_metadata_resp_t md;
        tl_wire_metadata(wfd, &arena, 12, topic, 0, &md);
        TL_ASSERT(md.topics.n == 1 && md.topics.v[0].error_code == 0, "metadata of %s", topic);
        memcpy(t.topic_id.b, md.topics.v[0].topic_id.b, 16);
    }
    t.partition_data.n = 1;
    t.partition_data.v = &pd;
    r.topic_data.n = 1;
    r.topic_data.v = &t;
    TL_WIRE_CALL(wfd, &arena, produce, 0, ver, &r, &resp);
    TL_ASSERT(resp.responses.n == 1 && resp.responses.v[0].partition_responses.n == 1,
              "Produce v%d: %d topics", ver, resp.responses.n);
    return resp.responses.v[0].partition_responses.v[0];
}

static int eq(proto_str_t a, const char *b)
{
    return a.len == (int32_t)strlen(b) && !memcmp(a.p, b, (size_t)a.len);
}

static void expect_str(proto_str_t got, const char *want, const char *what)
{
    TL_ASSERT(eq(got, want), "%s: '%.*s', expected '%s'", what, got.len < 0 ? 4 : (int)got.len,
              got.len < 0 ? "null" : got.p, want);
}

/* The fields every rejected answer has, as Kafka gives them: no offsets
 * but the log start offset (0 here), and indexes as listed. */
static void expect_rejected(const proto_produce_resp_partition_produce_response_t *pr,
                            int16_t err, const int *idx, int n)
{
    tl_log("error %d, message '%.*s'", pr->error_code, (int)pr->error_message.len,
           pr->error_message.p);
    for (int32_t i = 0; i < pr->record_errors.n; i++)
        tl_log("  record %d: '%.*s'", pr->record_errors.v[i].batch_index,
               (int)pr->record_errors.v[i].batch_index_error_message.len,
               pr->record_errors.v[i].batch_index_error_message.p);
    TL_ASSERT_EQ(pr->error_code, err);
    TL_ASSERT_EQ(pr->base_offset, -1);
    TL_ASSERT_EQ(pr->log_append_time_ms, -1);
    TL_ASSERT_EQ(pr->log_start_offset, 0);
    TL_ASSERT_EQ(pr->record_errors.n, n);
    for (int i = 0; i < n; i++)
        TL_ASSERT_EQ(pr->record_errors.v[i].batch_index, idx[i]);
}

static void expect_nokey(const proto_produce_resp_batch_index_and_error_message_t *e,
                         const char *topic)
{
    char want[300];
    snprintf(want, sizeof(want),
             "Compacted topic cannot accept message without key in topic partition %s-0", topic);
    expect_str(e->batch_index_error_message, want, "record error");
}

/* "Timestamp T of message with offset I is out of range. The timestamp
 * should be within [now - before.max, now + after.max]", with the broker's
 * now inside [t0, t1] and Kafka's default bounds (before: Long.MAX). */
static void expect_future(const proto_produce_resp_batch_index_and_error_message_t *e, int64_t ts,
                          int64_t t0, int64_t t1)
{
    char text[400], head[200];
    int64_t lo, hi;
    proto_str_t m = e->batch_index_error_message;
    TL_ASSERT(m.len > 0 && m.len < (int32_t)sizeof(text), "record %d: no message", e->batch_index);
    memcpy(text, m.p, (size_t)m.len);
    text[m.len] = 0;
    int n = snprintf(head, sizeof(head),
                     "Timestamp %" PRId64 " of message with offset %d is out of range. "
                     "The timestamp should be within [",
                     ts, e->batch_index);
    TL_ASSERT(!strncmp(text, head, (size_t)n), "record %d: '%s'", e->batch_index, text);
    char end;
    TL_ASSERT(sscanf(text + n, "%" SCNd64 ", %" SCNd64 "%c", &lo, &hi, &end) == 3 && end == ']',
              "record %d: range in '%s'", e->batch_index, text);
    int64_t now = hi - HOUR_MS;
    TL_ASSERT(now >= t0 && now <= t1, "record %d: now %" PRId64 " not in [%" PRId64 ", %" PRId64
              "]", e->batch_index, now, t0, t1);
    TL_ASSERT_EQ(lo, (int64_t)((uint64_t)now - (uint64_t)INT64_MAX));
}

static void scenario_a(const char *topic, int16_t ver, int codec)
{
    static const int idx[] = {0, 2, 5};
    char want[1200];
    buf_t b;
    buf_init(&b);
    build(&b, 1u << 0 | 1u << 2 | 1u << 5, 0, codec, wall_ms());
    proto_produce_resp_partition_produce_response_t pr = produce(topic, ver, &b);
    expect_rejected(&pr, E_INVALID_RECORD, idx, 3);
    for (int i = 0; i < 3; i++)
        expect_nokey(&pr.record_errors.v[i], topic);
    int n = snprintf(want, sizeof(want),
                     "One or more records have been rejected due to 3 record errors in total, and "
                     "only showing the first three errors at most: [");
    for (int i = 0; i < 3; i++)
        n += snprintf(want + n, sizeof(want) - (size_t)n,
                      "%sRecordError(batchIndex=%d, message='Compacted topic cannot accept message "
                      "without key in topic partition %s-0')",
                      i ? ", " : "", idx[i], topic);
    snprintf(want + n, sizeof(want) - (size_t)n, "]");
    expect_str(pr.error_message, want, "error message");
    buf_free(&b);
}

static void scenario_b(const char *topic, int16_t ver)
{
    static const int idx[] = {0, 2, 5};
    buf_t b;
    buf_init(&b);
    int64_t t0 = wall_ms();
    build(&b, 0, 1u << 0 | 1u << 2 | 1u << 5, 0, t0);
    proto_produce_resp_partition_produce_response_t pr = produce(topic, ver, &b);
    int64_t t1 = wall_ms();
    expect_rejected(&pr, E_INVALID_TIMESTAMP, idx, 3);
    for (int i = 0; i < 3; i++)
        expect_future(&pr.record_errors.v[i], t0 + idx[i] + 2 * HOUR_MS, t0, t1);
    expect_str(pr.error_message, "One or more records have been rejected due to invalid timestamp",
               "error message");
    buf_free(&b);
}

static void scenario_c(const char *topic, int16_t ver)
{
    static const int idx[] = {1, 3};
    buf_t b;
    buf_init(&b);
    int64_t t0 = wall_ms();
    build(&b, 1u << 1, 1u << 3, 0, t0);
    proto_produce_resp_partition_produce_response_t pr = produce(topic, ver, &b);
    int64_t t1 = wall_ms();
    expect_rejected(&pr, E_INVALID_TIMESTAMP, idx, 2);
    expect_nokey(&pr.record_errors.v[0], topic);
    expect_future(&pr.record_errors.v[1], t0 + 3 + 2 * HOUR_MS, t0, t1);
    expect_str(pr.error_message, "One or more records have been rejected due to invalid timestamp",
               "error message");
    buf_free(&b);
}

/* Nothing was stored: a sound batch lands at offset 0. */
static void expect_empty(const char *topic)
{
    buf_t b;
    buf_init(&b);
    build(&b, 0, 0, 0, wall_ms());
    proto_produce_resp_partition_produce_response_t pr = produce(topic, 9, &b);
    TL_ASSERT_EQ(pr.error_code, E_NONE);
    TL_ASSERT_EQ(pr.base_offset, 0);
    TL_ASSERT_EQ(pr.record_errors.n, 0);
    buf_free(&b);
}

int main(void)
{
    tl_init("0600-produce-record-errors");
    const char *bs = tl_bootstrap();
    static const char *const compact[] = {"cleanup.policy", "compact", NULL};
    char *tc = tl_topic_name("rec-err-compact"), *tt = tl_topic_name("rec-err-ts");
    char msg[256];

    rd_kafka_t *rk = adm_client(bs);
    TL_ASSERT_EQ(adm_create(rk, tc, 1, 1, compact, 0, msg, sizeof(msg)), E_NONE);
    TL_ASSERT_EQ(adm_create(rk, tt, 1, 1, NULL, 0, msg, sizeof(msg)), E_NONE);
    TL_ASSERT_EQ(tl_wait_topic(rk, tc, 20000), 1);
    TL_ASSERT_EQ(tl_wait_topic(rk, tt, 20000), 1);
    wfd = tl_connect(bs, 20000);
    TL_ASSERT(wfd >= 0, "connect %s", bs);

    static const int16_t vers[] = {9, 11, 13};
    for (int v = 0; v < 3; v++) {
        tl_log("Produce v%d", vers[v]);
        scenario_a(tc, vers[v], LOG_BATCH_CODEC_NONE);
        scenario_a(tc, vers[v], LOG_BATCH_CODEC_LZ4);
        scenario_b(tt, vers[v]);
        scenario_c(tc, vers[v]);
    }
    expect_empty(tc);
    expect_empty(tt);

    close(wfd);
    rd_kafka_destroy(rk);
    free(tc);
    free(tt);
    arena_destroy(&arena);
    return tl_done();
}
