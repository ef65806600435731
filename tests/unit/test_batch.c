/* Record batches: exact bytes against batches written by a real Kafka
 * broker, the encoder, iteration of every codec, every validation error
 * code, in-place patches and truncation/corruption fuzzing under ASan. */
#include <stdlib.h>
#include <string.h>

#include "log/log_batch.h"
#include "tests/unit/unit.h"

/* Two batches as a Kafka broker stored them (a fetch captured in
 * kafka-python's test data): 1 record (null key, value "123"), and 2
 * records at offsets 1..2 with a timestamp delta of 168. */
static const uint8_t kafka_batch1[] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x3b, 0x00, 0x00, 0x00,
    0x01, 0x02, 0x03, 0x18, 0xa2, 0x70, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01,
    0x5d, 0xff, 0x7b, 0x06, 0x3c, 0x00, 0x00, 0x01, 0x5d, 0xff, 0x7b, 0x06, 0x3c, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00,
    0x01, 0x12, 0x00, 0x00, 0x00, 0x01, 0x06, 0x31, 0x32, 0x33, 0x00};
static const uint8_t kafka_batch2[] = {
    0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x40, 0x00, 0x00, 0x00,
    0x02, 0x02, 0xc8, 0x5c, 0xbd, 0x23, 0x00, 0x00, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x01,
    0x5d, 0xff, 0x7c, 0xdd, 0x6c, 0x00, 0x00, 0x01, 0x5d, 0xff, 0x7c, 0xde, 0x14, 0xff, 0xff,
    0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x00, 0x00, 0x00,
    0x02, 0x0c, 0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x0e, 0x00, 0xd0, 0x02, 0x02, 0x01, 0x00,
    0x00};
#define TS1 0x15dff7b063cLL
#define TS2 0x15dff7cdd6cLL

#define NOW 1700000000000LL

static log_batch_limits_t limits(void)
{
    log_batch_limits_t lim;
    memset(&lim, 0, sizeof(lim));
    lim.max_message_bytes = 1048588;
    lim.ts_before_max_ms = INT64_MAX;
    lim.ts_after_max_ms = INT64_MAX;
    lim.now_ms = NOW;
    lim.produce_version = 9;
    return lim;
}

static void test_kafka_batches_parse(void)
{
    log_batch_hdr_t h;
    CU_ASSERT_EQUAL_FATAL(log_batch_hdr_parse(kafka_batch1, sizeof(kafka_batch1), &h), 0);
    CU_ASSERT_EQUAL(h.base_offset, 0);
    CU_ASSERT_EQUAL(h.batch_length, 59);
    CU_ASSERT_EQUAL(h.leader_epoch, 1);
    CU_ASSERT_EQUAL(h.magic, 2);
    CU_ASSERT_EQUAL(h.crc, 0x0318a270u);
    CU_ASSERT_EQUAL(h.attributes, 0);
    CU_ASSERT_EQUAL(h.last_offset_delta, 0);
    CU_ASSERT_EQUAL(h.base_timestamp, TS1);
    CU_ASSERT_EQUAL(h.max_timestamp, TS1);
    CU_ASSERT_EQUAL(h.producer_id, -1);
    CU_ASSERT_EQUAL(h.producer_epoch, -1);
    CU_ASSERT_EQUAL(h.base_sequence, -1);
    CU_ASSERT_EQUAL(h.records_count, 1);
    CU_ASSERT(log_batch_crc_ok(kafka_batch1, sizeof(kafka_batch1)));
    CU_ASSERT(log_batch_crc_ok(kafka_batch2, sizeof(kafka_batch2)));
    CU_ASSERT_EQUAL(log_batch_total_size(kafka_batch2, sizeof(kafka_batch2)), (int64_t)sizeof(kafka_batch2));
    CU_ASSERT_EQUAL(log_batch_hdr_parse(kafka_batch1, 60, &h), -1);
    uint8_t m1[sizeof(kafka_batch1)];
    memcpy(m1, kafka_batch1, sizeof(m1));
    m1[16] = 1;
    CU_ASSERT_EQUAL(log_batch_hdr_parse(m1, sizeof(m1), &h), -1);
    m1[16] = 2;
    m1[70] ^= 1;
    CU_ASSERT(!log_batch_crc_ok(m1, sizeof(m1)));
    CU_ASSERT(!log_batch_crc_ok(kafka_batch1, sizeof(kafka_batch1) - 1));
}

static void test_kafka_batches_iterate(void)
{
    log_record_t rec;
    log_batch_iter_t *it = log_batch_iter_new(kafka_batch1, sizeof(kafka_batch1));
    CU_ASSERT_PTR_NOT_NULL_FATAL(it);
    CU_ASSERT_EQUAL(log_batch_iter_next(it, &rec), 1);
    CU_ASSERT_EQUAL(rec.offset, 0);
    CU_ASSERT_EQUAL(rec.timestamp, TS1);
    CU_ASSERT_EQUAL(rec.key_len, -1);
    CU_ASSERT_PTR_NULL(rec.key);
    CU_ASSERT_EQUAL(rec.value_len, 3);
    CU_ASSERT(memcmp(rec.value, "123", 3) == 0);
    CU_ASSERT_EQUAL(rec.headers_count, 0);
    CU_ASSERT_EQUAL(log_batch_iter_next(it, &rec), 0);
    log_batch_iter_free(it);

    it = log_batch_iter_new(kafka_batch2, sizeof(kafka_batch2));
    CU_ASSERT_PTR_NOT_NULL_FATAL(it);
    CU_ASSERT_EQUAL(log_batch_iter_next(it, &rec), 1);
    CU_ASSERT_EQUAL(rec.offset, 1);
    CU_ASSERT_EQUAL(rec.timestamp, TS2);
    CU_ASSERT_EQUAL(rec.value_len, 0);
    CU_ASSERT_EQUAL(log_batch_iter_next(it, &rec), 1);
    CU_ASSERT_EQUAL(rec.offset, 2);
    CU_ASSERT_EQUAL(rec.timestamp, TS2 + 168);
    CU_ASSERT_EQUAL(log_batch_iter_next(it, &rec), 0);
    log_batch_iter_free(it);
}

/* Our encoder must reproduce Kafka's bytes exactly, CRC included. */
static void test_build_matches_kafka(void)
{
    buf_t out;
    buf_init(&out);
    log_batch_build_t opt;
    log_batch_build_init(&opt);
    opt.leader_epoch = 1;
    log_record_t r1 = {.timestamp = TS1, .key_len = -1, .value = (const uint8_t *)"123", .value_len = 3};
    CU_ASSERT_EQUAL(log_batch_build(&out, &opt, &r1, 1), 0);
    CU_ASSERT_EQUAL(out.len, sizeof(kafka_batch1));
    CU_ASSERT(out.len == sizeof(kafka_batch1) && memcmp(out.p, kafka_batch1, out.len) == 0);

    out.len = 0;
    opt.base_offset = 1;
    opt.leader_epoch = 2;
    log_record_t r2[2] = {
        {.timestamp = TS2, .key_len = -1, .value = (const uint8_t *)"", .value_len = 0},
        {.timestamp = TS2 + 168, .key_len = -1, .value = (const uint8_t *)"", .value_len = 0},
    };
    CU_ASSERT_EQUAL(log_batch_build(&out, &opt, r2, 2), 0);
    CU_ASSERT(out.len == sizeof(kafka_batch2) && memcmp(out.p, kafka_batch2, out.len) == 0);
    buf_free(&out);
}

/* A mixed set of records: null/empty/long keys and values, headers. */
#define NREC 40
typedef struct recset_s {
    log_record_t rec[NREC];
    buf_t hdrs[NREC];
    uint8_t *big;
} recset_t;

static void recset_init(recset_t *rs)
{
    memset(rs, 0, sizeof(*rs));
    rs->big = malloc(5000);
    for (int i = 0; i < 5000; i++)
        rs->big[i] = (uint8_t)(i * 31);
    for (int i = 0; i < NREC; i++) {
        log_record_t *r = &rs->rec[i];
        r->timestamp = NOW - 1000 + i * 7;
        if (i % 5 == 0) {
            r->key_len = -1;
        } else {
            r->key = rs->big + i;
            r->key_len = i % 7;
        }
        if (i % 9 == 3) {
            r->value_len = -1;
        } else {
            r->value = rs->big + 2 * i;
            r->value_len = i == 17 ? 4000 : i * 3;
        }
        buf_init(&rs->hdrs[i]);
        for (int k = 0; k < i % 4; k++)
            log_record_put_header(&rs->hdrs[i], "hk", 2, k == 1 ? NULL : "hval", k == 1 ? -1 : 4);
        r->headers_count = i % 4;
        r->headers = rs->hdrs[i].p;
        r->headers_len = rs->hdrs[i].len;
    }
}

static void recset_free(recset_t *rs)
{
    for (int i = 0; i < NREC; i++)
        buf_free(&rs->hdrs[i]);
    free(rs->big);
}

static void build(buf_t *out, const recset_t *rs, int codec, int n)
{
    log_batch_build_t opt;
    log_batch_build_init(&opt);
    opt.attributes = (int16_t)codec;
    out->len = 0;
    CU_ASSERT_EQUAL_FATAL(log_batch_build(out, &opt, rs->rec, n), 0);
}

static int field_eq(const uint8_t *a, int32_t alen, const uint8_t *b, int32_t blen)
{
    return alen == blen && (alen <= 0 || memcmp(a, b, (size_t)alen) == 0);
}

static void check_records(const uint8_t *p, size_t len, const recset_t *rs, int n)
{
    log_batch_iter_t *it = log_batch_iter_new(p, len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(it);
    int bad = 0, i = 0;
    log_record_t rec;
    while (log_batch_iter_next(it, &rec) == 1) {
        const log_record_t *w = &rs->rec[i];
        if (rec.offset != i || rec.timestamp != w->timestamp ||
            !field_eq(rec.key, rec.key_len, w->key, w->key_len) ||
            !field_eq(rec.value, rec.value_len, w->value, w->value_len) ||
            rec.headers_count != w->headers_count || rec.headers_len != w->headers_len ||
            (rec.headers_len && memcmp(rec.headers, w->headers, rec.headers_len) != 0))
            bad++;
        const uint8_t *hp = rec.headers, *he = rec.headers + rec.headers_len;
        log_header_t hdr;
        int k = 0;
        while (log_record_header_next(&hp, he, &hdr) == 1) {
            if (hdr.key_len != 2 || memcmp(hdr.key, "hk", 2) != 0)
                bad++;
            if (k == 1 ? hdr.value_len != -1 : (hdr.value_len != 4 || memcmp(hdr.value, "hval", 4) != 0))
                bad++;
            k++;
        }
        if (k != w->headers_count)
            bad++;
        i++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(i, n);
    log_batch_iter_free(it);
}

static void test_codecs_validate_and_iterate(void)
{
    recset_t rs;
    recset_init(&rs);
    buf_t out;
    buf_init(&out);
    for (int codec = 0; codec <= 4; codec++) {
        build(&out, &rs, codec, NREC);
        log_batch_limits_t lim = limits();
        log_batch_hdr_t h;
        log_batch_vinfo_t info;
        CU_ASSERT_EQUAL(log_batch_validate_ex(out.p, out.len, &lim, &h, &info), 0);
        CU_ASSERT_EQUAL(h.records_count, NREC);
        CU_ASSERT_EQUAL(h.last_offset_delta, NREC - 1);
        CU_ASSERT_EQUAL(LOG_BATCH_ATTR_CODEC(h.attributes), codec);
        CU_ASSERT_EQUAL(h.batch_length + 12, (int32_t)out.len);
        CU_ASSERT_EQUAL(h.base_timestamp, rs.rec[0].timestamp);
        CU_ASSERT_EQUAL(h.max_timestamp, rs.rec[NREC - 1].timestamp);
        CU_ASSERT_EQUAL(info.max_timestamp, rs.rec[NREC - 1].timestamp);
        CU_ASSERT_EQUAL(info.max_timestamp_delta, NREC - 1);
        CU_ASSERT_EQUAL(info.error_index, -1);
        if (codec)
            CU_ASSERT(out.len < 4000); /* the 4000-byte value compresses */
        check_records(out.p, out.len, &rs, NREC);
    }
    buf_free(&out);
    recset_free(&rs);
    log_batch_thread_cleanup();
}

/* Patches a header field and recomputes the CRC, so the check under test
 * is the one that fires. */
static void put32(uint8_t *p, int32_t v)
{
    p[0] = (uint8_t)((uint32_t)v >> 24);
    p[1] = (uint8_t)((uint32_t)v >> 16);
    p[2] = (uint8_t)((uint32_t)v >> 8);
    p[3] = (uint8_t)v;
}

static uint32_t get_crc(const uint8_t *p)
{
    return ((uint32_t)p[17] << 24) | ((uint32_t)p[18] << 16) | ((uint32_t)p[19] << 8) | p[20];
}

static int16_t validate(const uint8_t *p, size_t len, const log_batch_limits_t *lim)
{
    log_batch_hdr_t h;
    return log_batch_validate(p, len, lim, &h);
}

static void test_validate_frame_errors(void)
{
    log_batch_limits_t lim = limits();
    uint8_t b[256];
    memcpy(b, kafka_batch1, sizeof(kafka_batch1));
    size_t n = sizeof(kafka_batch1);
    b[12] = b[13] = b[14] = b[15] = 0; /* leader epoch: not covered by the CRC */
    CU_ASSERT_EQUAL(validate(b, n, &lim), 0);
    CU_ASSERT_EQUAL(validate(b, 0, &lim), 87);
    CU_ASSERT_EQUAL(validate(b, 16, &lim), 87);
    CU_ASSERT_EQUAL(validate(b, n - 1, &lim), 87);
    put32(b + 8, 10);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 2);
    CU_ASSERT_EQUAL(validate(b, 12, &lim), 2);
    put32(b + 8, 40); /* below the v2 header but above the v0 minimum */
    CU_ASSERT_EQUAL(validate(b, n, &lim), 2);
    put32(b + 8, 59);
    b[16] = 1;
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    b[16] = 3;
    CU_ASSERT_EQUAL(validate(b, n, &lim), 2);
    b[16] = 2;
    /* a complete second batch, a partial one, a corrupt one */
    memcpy(b + n, kafka_batch1, n);
    CU_ASSERT_EQUAL(validate(b, 2 * n, &lim), 87);
    CU_ASSERT_EQUAL(validate(b, 2 * n - 1, &lim), 0);
    CU_ASSERT_EQUAL(validate(b, n + 5, &lim), 0);
    put32(b + n + 8, 3);
    CU_ASSERT_EQUAL(validate(b, n + 12, &lim), 2);
    /* codecs */
    b[22] = 6;
    CU_ASSERT_EQUAL(validate(b, n, &lim), 76);
    b[22] = 0;
    b[7] = 5; /* base offset, not covered by the CRC */
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    b[7] = 0;
    lim.max_message_bytes = (int32_t)n - 1;
    CU_ASSERT_EQUAL(validate(b, n, &lim), 10);
    lim.max_message_bytes = (int32_t)n;
    CU_ASSERT_EQUAL(validate(b, n, &lim), 0);
    b[n - 2] ^= 1;
    CU_ASSERT_EQUAL(validate(b, n, &lim), 2);
}

static void test_validate_zstd_version(void)
{
    recset_t rs;
    recset_init(&rs);
    buf_t out;
    buf_init(&out);
    build(&out, &rs, 4, 5);
    log_batch_limits_t lim = limits();
    lim.produce_version = 6;
    CU_ASSERT_EQUAL(validate(out.p, out.len, &lim), 76);
    lim.produce_version = 7;
    CU_ASSERT_EQUAL(validate(out.p, out.len, &lim), 0);
    lim.produce_version = 0;
    CU_ASSERT_EQUAL(validate(out.p, out.len, &lim), 0);
    buf_free(&out);
    recset_free(&rs);
}

static void test_validate_batch_fields(void)
{
    log_batch_limits_t lim = limits();
    uint8_t b[sizeof(kafka_batch2)];
    size_t n = sizeof(b);
#define RESET() (memcpy(b, kafka_batch2, n), memset(b, 0, 8))
    RESET();
    CU_ASSERT_EQUAL(validate(b, n, &lim), 0);
    /* lastOffsetDelta / count disagreements */
    put32(b + 23, 0);
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    RESET();
    put32(b + 23, -1);
    put32(b + 57, 0);
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    /* count 3 for 2 records: premature end */
    RESET();
    put32(b + 23, 2);
    put32(b + 57, 3);
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    /* count 1 for 2 records: bytes left over */
    RESET();
    put32(b + 23, 0);
    put32(b + 57, 1);
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    /* producer id without sequence; then with one */
    RESET();
    memset(b + 43, 0, 8);
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    put32(b + 53, 0);
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 0);
    /* control batch from a client */
    RESET();
    b[22] = LOG_BATCH_ATTR_CONTROL;
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    /* offset deltas out of order (0x00 and 0x02 swapped) */
    RESET();
    b[64] = 0x02;
    b[72] = 0x00;
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    /* record length lies (one byte short / long) */
    RESET();
    b[61] = 0x0a;
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    RESET();
    b[61] = 0x0e;
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    /* truncated record: batch one byte shorter */
    RESET();
    put32(b + 8, 63);
    log_batch_update_crc(b, n - 1);
    CU_ASSERT_EQUAL(validate(b, n - 1, &lim), 87);
    /* a negative length and a too-long key length */
    RESET();
    b[61] = 0x0b; /* -6 */
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    RESET();
    b[65] = 0x40; /* key length 32 > record */
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
    /* negative header count */
    RESET();
    b[67] = 0x01;
    log_batch_update_crc(b, n);
    CU_ASSERT_EQUAL(validate(b, n, &lim), 87);
#undef RESET
}

/* A varint that never ends: 6 continuation bytes in the record length. */
static void test_validate_bad_varint(void)
{
    log_batch_limits_t lim = limits();
    uint8_t b[sizeof(kafka_batch1) + 5];
    memcpy(b, kafka_batch1, 61);
    memset(b, 0, 8);
    memset(b + 61, 0xff, 6);
    memcpy(b + 67, kafka_batch1 + 62, 9);
    put32(b + 8, (int32_t)sizeof(b) - 12);
    log_batch_update_crc(b, sizeof(b));
    CU_ASSERT_EQUAL(validate(b, sizeof(b), &lim), 87);
    log_batch_iter_t *it = log_batch_iter_new(b, sizeof(b));
    CU_ASSERT_PTR_NOT_NULL_FATAL(it);
    log_record_t rec;
    CU_ASSERT_EQUAL(log_batch_iter_next(it, &rec), -1);
    log_batch_iter_free(it);
}

static void test_validate_timestamps_and_keys(void)
{
    recset_t rs;
    recset_init(&rs);
    buf_t out;
    buf_init(&out);
    log_batch_limits_t lim = limits();
    log_batch_vinfo_t info;
    log_batch_hdr_t h;
    for (int codec = 0; codec <= 4; codec += 4) {
        build(&out, &rs, codec, NREC);
        /* the oldest record is 1000 ms old */
        lim.ts_before_max_ms = 999;
        CU_ASSERT_EQUAL(log_batch_validate_ex(out.p, out.len, &lim, &h, &info), 32);
        CU_ASSERT_EQUAL(info.error_index, 0);
        lim.ts_before_max_ms = 1000;
        CU_ASSERT_EQUAL(validate(out.p, out.len, &lim), 0);
        /* the newest is 1000 - 7*39 = 727 ms old */
        lim.now_ms = NOW - 1000;
        lim.ts_after_max_ms = 272;
        CU_ASSERT_EQUAL(log_batch_validate_ex(out.p, out.len, &lim, &h, &info), 32);
        CU_ASSERT_EQUAL(info.error_index, 39);
        lim.ts_after_max_ms = 273;
        CU_ASSERT_EQUAL(validate(out.p, out.len, &lim), 0);
        lim = limits();
        /* compacted: records 0, 5, 10... have null keys */
        lim.compacted = 1;
        CU_ASSERT_EQUAL(log_batch_validate_ex(out.p, out.len, &lim, &h, &info), 87);
        CU_ASSERT_EQUAL(info.error_index, 0);
        CU_ASSERT_PTR_NOT_NULL(info.error_message);
        /* a timestamp error anywhere wins over key errors (record 0 has
         * both problems, only its key error counts, as in Kafka) */
        lim.ts_before_max_ms = 990;
        CU_ASSERT_EQUAL(log_batch_validate_ex(out.p, out.len, &lim, &h, &info), 32);
        CU_ASSERT_EQUAL(info.error_index, 1);
        lim = limits();
        /* LogAppendTime topic: the producer may not claim LogAppendTime */
        lim.timestamp_log_append = 1;
        lim.ts_before_max_ms = 0; /* not checked for LogAppendTime */
        CU_ASSERT_EQUAL(validate(out.p, out.len, &lim), 0);
        log_batch_set_log_append_time(out.p, out.len, NOW);
        CU_ASSERT_EQUAL(validate(out.p, out.len, &lim), 32);
        lim = limits();
    }
    /* timestamp -1 is never range-checked */
    for (int i = 0; i < NREC; i++)
        rs.rec[i].timestamp = -1;
    build(&out, &rs, 0, NREC);
    lim.ts_before_max_ms = 0;
    lim.ts_after_max_ms = 0;
    CU_ASSERT_EQUAL(log_batch_validate_ex(out.p, out.len, &lim, &h, &info), 0);
    CU_ASSERT_EQUAL(info.max_timestamp, -1);
    buf_free(&out);
    recset_free(&rs);
}

static void test_validate_bad_compressed(void)
{
    recset_t rs;
    recset_init(&rs);
    buf_t out;
    buf_init(&out);
    log_batch_limits_t lim = limits();
    for (int codec = 1; codec <= 4; codec++) {
        build(&out, &rs, codec, NREC);
        /* garbage in the compressed payload, CRC made valid */
        for (size_t i = 61; i < out.len; i += 7)
            out.p[i] ^= 0xa5;
        log_batch_update_crc(out.p, out.len);
        CU_ASSERT_EQUAL(validate(out.p, out.len, &lim), -1);
        CU_ASSERT_PTR_NULL(log_batch_iter_new(out.p, out.len));
    }
    buf_free(&out);
    recset_free(&rs);
}

/* 80 MiB of zeros in one record: a few KB on the wire, over the 64 MiB
 * decompression bound. */
static void test_validate_bomb(void)
{
    size_t n = 80 << 20;
    uint8_t *z = calloc(1, n);
    log_record_t rec = {.timestamp = NOW, .key_len = 1, .key = z, .value = z, .value_len = (int32_t)n};
    buf_t out;
    buf_init(&out);
    log_batch_build_t opt;
    log_batch_build_init(&opt);
    opt.attributes = LOG_BATCH_CODEC_ZSTD;
    CU_ASSERT_EQUAL_FATAL(log_batch_build(&out, &opt, &rec, 1), 0);
    free(z);
    CU_ASSERT(out.len < 100000);
    log_batch_limits_t lim = limits();
    log_batch_vinfo_t info;
    log_batch_hdr_t h;
    CU_ASSERT_EQUAL(log_batch_validate_ex(out.p, out.len, &lim, &h, &info), 10);
    buf_free(&out);
    log_batch_thread_cleanup();
}

static void test_patches(void)
{
    recset_t rs;
    recset_init(&rs);
    buf_t out;
    buf_init(&out);
    build(&out, &rs, 3, NREC);
    log_batch_set_base_offset(out.p, 1000);
    log_batch_set_leader_epoch(out.p, 7);
    CU_ASSERT(log_batch_crc_ok(out.p, out.len));
    uint32_t crc_before = get_crc(out.p);
    log_batch_set_max_timestamp(out.p, out.len, 0, rs.rec[NREC - 1].timestamp); /* no change */
    CU_ASSERT_EQUAL(get_crc(out.p), crc_before);
    log_batch_set_log_append_time(out.p, out.len, NOW + 5);
    CU_ASSERT(log_batch_crc_ok(out.p, out.len));
    log_batch_hdr_t h;
    log_batch_hdr_parse(out.p, out.len, &h);
    CU_ASSERT_EQUAL(h.base_offset, 1000);
    CU_ASSERT_EQUAL(h.leader_epoch, 7);
    CU_ASSERT_EQUAL(h.attributes, LOG_BATCH_ATTR_TIMESTAMP_TYPE | LOG_BATCH_CODEC_LZ4);
    CU_ASSERT_EQUAL(h.max_timestamp, NOW + 5);
    log_batch_iter_t *it = log_batch_iter_new(out.p, out.len);
    log_record_t rec;
    int bad = 0, i = 0;
    while (log_batch_iter_next(it, &rec) == 1) {
        if (rec.timestamp != NOW + 5 || rec.offset != 1000 + i)
            bad++;
        i++;
    }
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(i, NREC);
    log_batch_iter_free(it);
    buf_free(&out);
    recset_free(&rs);
}

static void test_txn_marker(void)
{
    buf_t out;
    buf_init(&out);
    log_batch_build_txn_marker(&out, 4242, 3, 1, 0x01020304, NOW);
    log_batch_hdr_t h;
    CU_ASSERT_EQUAL_FATAL(log_batch_hdr_parse(out.p, out.len, &h), 0);
    CU_ASSERT_EQUAL(h.attributes, 0x30);
    CU_ASSERT_EQUAL(h.producer_id, 4242);
    CU_ASSERT_EQUAL(h.producer_epoch, 3);
    CU_ASSERT_EQUAL(h.base_sequence, -1);
    CU_ASSERT_EQUAL(h.records_count, 1);
    CU_ASSERT(log_batch_crc_ok(out.p, out.len));
    log_batch_iter_t *it = log_batch_iter_new(out.p, out.len);
    log_record_t rec;
    CU_ASSERT_EQUAL_FATAL(log_batch_iter_next(it, &rec), 1);
    CU_ASSERT(rec.key_len == 4 && memcmp(rec.key, "\0\0\0\1", 4) == 0);
    CU_ASSERT(rec.value_len == 6 && memcmp(rec.value, "\0\0\1\2\3\4", 6) == 0);
    log_batch_iter_free(it);
    log_batch_limits_t lim = limits();
    CU_ASSERT_EQUAL(validate(out.p, out.len, &lim), 87); /* clients may not write these */
    buf_free(&out);
}

/* Every truncation and many single-byte corruptions of valid batches of
 * every codec: never a crash or an ASan report, always an error code. */
static void test_fuzz(void)
{
    recset_t rs;
    recset_init(&rs);
    buf_t out;
    buf_init(&out);
    log_batch_limits_t lim = limits();
    int bad = 0;
    for (int codec = 0; codec <= 4; codec++) {
        build(&out, &rs, codec, 12);
        size_t n = out.len;
        uint8_t *cp = malloc(n);
        for (size_t len = 0; len < n; len++) {
            memcpy(cp, out.p, len); /* exact-size copy so ASan sees overreads */
            uint8_t *t = malloc(len ? len : 1);
            memcpy(t, cp, len);
            if (validate(t, len, &lim) == 0)
                bad++;
            log_batch_iter_t *it = log_batch_iter_new(t, len);
            if (it) {
                log_record_t rec;
                while (log_batch_iter_next(it, &rec) == 1)
                    ;
                log_batch_iter_free(it);
            }
            free(t);
        }
        for (size_t pos = 0; pos < n; pos++) {
            memcpy(cp, out.p, n);
            cp[pos] ^= (uint8_t)(0x5a + pos);
            log_batch_update_crc(cp, n); /* get past the CRC */
            (void)validate(cp, n, &lim);
            log_batch_iter_t *it = log_batch_iter_new(cp, n);
            if (it) {
                log_record_t rec;
                int guard = 0;
                while (log_batch_iter_next(it, &rec) == 1 && guard++ < 100000)
                    ;
                log_batch_iter_free(it);
            }
        }
        free(cp);
    }
    CU_ASSERT_EQUAL(bad, 0);
    buf_free(&out);
    recset_free(&rs);
    log_batch_thread_cleanup();
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("batch", NULL, NULL);
    CU_add_test(s, "kafka batches: header and crc", test_kafka_batches_parse);
    CU_add_test(s, "kafka batches: iterate", test_kafka_batches_iterate);
    CU_add_test(s, "encoder matches kafka bytes", test_build_matches_kafka);
    CU_add_test(s, "every codec validates and iterates", test_codecs_validate_and_iterate);
    CU_add_test(s, "validate: frame errors", test_validate_frame_errors);
    CU_add_test(s, "validate: zstd needs produce v7", test_validate_zstd_version);
    CU_add_test(s, "validate: batch fields and records", test_validate_batch_fields);
    CU_add_test(s, "validate: unterminated varint", test_validate_bad_varint);
    CU_add_test(s, "validate: timestamps and keys", test_validate_timestamps_and_keys);
    CU_add_test(s, "validate: undecodable payload", test_validate_bad_compressed);
    CU_add_test(s, "validate: decompression bomb", test_validate_bomb);
    CU_add_test(s, "patches keep the crc right", test_patches);
    CU_add_test(s, "transaction marker", test_txn_marker);
    CU_add_test(s, "fuzz: truncation and corruption", test_fuzz);
    int r = unit_run();
    log_batch_thread_cleanup();
    return r;
}
