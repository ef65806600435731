/* 0006-bad-input: malformed requests on raw sockets get the answer Apache
 * Kafka gives (checked against Kafka 4.x with KAFKA_REF=1):
 *
 *   truncated frame, then EOF             connection closed, nothing sent
 *   negative size prefix                  connection closed, nothing sent
 *   1 GB size prefix                      connection closed, nothing sent
 *   unknown API key                       connection closed, nothing sent
 *   Metadata v99                          connection closed, nothing sent
 *   Metadata v4 with an unparsable body   connection closed, nothing sent
 *   ApiVersions v99                       ApiVersions v0 answer, error 35
 *                                         (UNSUPPORTED_VERSION), listing
 *                                         ApiVersions' own range alone
 *   ApiVersions v0 + trailing garbage     the normal answer: Kafka ignores
 *                                         bytes after a complete body
 *
 * After every case a librdkafka client, connected all along, still gets
 * metadata and offsets, and a fresh raw connection gets an ApiVersions
 * answer. Against strand (not KAFKA_REF) the test runs its own broker and
 * checks that the data directory is byte for byte what it was. */
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define N_SEED_MSGS 10

static const char *bs;
static const char *topic;
static rd_kafka_topic_t *rkt;

/* Sends raw bytes and expects the broker to close without a word. */
static void expect_close(const char *what, const void *bytes, size_t len, int half_close)
{
    int fd = tl_connect(bs, 10000), rc;
    size_t got = 0;
    char why[100];
    TL_ASSERT(fd >= 0, "%s: connect failed", what);
    TL_ASSERT(tl_send_all(fd, bytes, len) == 0, "%s: send failed", what);
    if (half_close)
        shutdown(fd, SHUT_WR);
    rc = tl_wait_closed(fd, 10000, &got);
    if (rc == 0)
        snprintf(why, sizeof(why), "broker sent %zu bytes, then closed", got);
    else
        snprintf(why, sizeof(why), "broker kept the connection open for 10 s");
    TL_ASSERT(rc == 1, "%s: %s", what, why);
    close(fd);
    tl_log("%s: closed", what);
}

static void case_truncated(void)
{
    tl_req r;
    tl_req_header(&r, 3, 4, 1, "t0006"); /* Metadata v4, all topics */
    tl_req_i32(&r, -1);
    tl_req_i8(&r, 0);
    tl_req_finish(&r);
    expect_close("truncated frame", r.data, r.len - 5, 1);
}

static void case_negative_size(void)
{
    static const uint8_t b[] = {0xff, 0xff, 0xff, 0xf0, 0, 18, 0, 0, 0, 0, 0, 1};
    expect_close("negative size", b, sizeof(b), 0);
}

static void case_huge_size(void)
{
    static const uint8_t b[] = {0x40, 0, 0, 0, 0, 18, 0, 0, 0, 0, 0, 1};
    expect_close("1 GB size", b, sizeof(b), 0);
}

static void case_unknown_key(void)
{
    tl_req r;
    tl_req_header(&r, 9999, 0, 7, "t0006");
    tl_req_finish(&r);
    expect_close("unknown API key 9999", r.data, r.len, 0);
}

static void case_metadata_v99(void)
{
    tl_req r;
    tl_req_header(&r, 3, 99, 8, "t0006");
    tl_req_i32(&r, -1);
    tl_req_finish(&r);
    expect_close("Metadata v99", r.data, r.len, 0);
}

static void case_garbage_body(void)
{
    static const uint8_t junk[] = {0x00, 0x00, 0x00, 0x05, 0xff, 0xff, 0x12, 0x34, 0x56};
    tl_req r;
    tl_req_header(&r, 3, 4, 9, "t0006");
    tl_req_bytes(&r, junk, sizeof(junk)); /* 5 topics, the first named null */
    tl_req_finish(&r);
    expect_close("Metadata v4 garbage body", r.data, r.len, 0);

    tl_req_header(&r, 3, 4, 10, "t0006");
    tl_req_i32(&r, 0x7fffffff); /* 2^31-1 topics in 4 bytes */
    tl_req_i32(&r, 0x01020304);
    tl_req_finish(&r);
    expect_close("Metadata v4 huge array", r.data, r.len, 0);
}

/* ApiVersions v0 answer layout: correlation id, error code, [key min max]. */
static void check_api_versions_v0(const uint8_t *resp, int len, int32_t corr, int16_t want_err)
{
    int n, found = 0;
    TL_ASSERT(len >= 10, "ApiVersions answer of %d bytes", len);
    TL_ASSERT_EQ(tl_get_i32(resp), corr);
    TL_ASSERT_EQ(tl_get_i16(resp + 4), want_err);
    n = tl_get_i32(resp + 6);
    TL_ASSERT(n >= 1 && len == 10 + 6 * n, "%d api keys in %d bytes", n, len);
    for (int i = 0; i < n; i++) {
        const uint8_t *e = resp + 10 + 6 * i;
        if (tl_get_i16(e) == 18) {
            found = 1;
            TL_ASSERT_EQ(tl_get_i16(e + 2), 0);
            TL_ASSERT(tl_get_i16(e + 4) >= 3, "ApiVersions max %d", tl_get_i16(e + 4));
        }
    }
    TL_ASSERT(found, "no ApiVersions entry in the answer");
    if (want_err)
        TL_ASSERT_EQ(n, 1); /* the error answer lists ApiVersions alone */
}

static void case_api_versions_v99(void)
{
    tl_req r;
    uint8_t *resp;
    int fd = tl_connect(bs, 10000), len;
    TL_ASSERT(fd >= 0, "connect failed");
    tl_req_header(&r, 18, 99, 12345, "t0006");
    tl_req_bytes(&r, "\x00\x00\x00", 3); /* whatever a v99 body is */
    tl_req_finish(&r);
    TL_ASSERT_EQ(tl_send_all(fd, r.data, r.len), 0);
    len = tl_recv_frame(fd, &resp, 10000);
    TL_ASSERT(len > 0, "no answer to ApiVersions v99");
    check_api_versions_v0(resp, len, 12345, 35);
    free(resp);
    close(fd);
    tl_log("ApiVersions v99: UNSUPPORTED_VERSION with the v0 layout");
}

static void case_trailing_garbage(void)
{
    tl_req r;
    uint8_t *resp;
    int fd = tl_connect(bs, 10000), len;
    TL_ASSERT(fd >= 0, "connect failed");
    tl_req_header(&r, 18, 0, 4242, "t0006");
    tl_req_bytes(&r, "garbage!!", 9);
    tl_req_finish(&r);
    TL_ASSERT_EQ(tl_send_all(fd, r.data, r.len), 0);
    len = tl_recv_frame(fd, &resp, 10000);
    TL_ASSERT(len > 0, "no answer to ApiVersions v0 with trailing bytes");
    check_api_versions_v0(resp, len, 4242, 0);
    free(resp);
    close(fd);
    tl_log("ApiVersions v0 + trailing garbage: answered");
}

/* Between the cases: the long-lived client and a new connection work. */
static void check_alive(rd_kafka_t *rk, const char *after)
{
    const struct rd_kafka_metadata *md;
    int64_t lo, hi;
    tl_req r;
    uint8_t *resp;
    int fd, len;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, 10000);

    TL_ASSERT(!err, "after %s: metadata: %s", after, rd_kafka_err2name(err));
    TL_ASSERT(md->topic_cnt == 1 && md->topics[0].err == 0, "after %s: topic missing", after);
    rd_kafka_metadata_destroy(md);
    err = rd_kafka_query_watermark_offsets(rk, topic, 0, &lo, &hi, 10000);
    TL_ASSERT(!err && lo == 0 && hi == N_SEED_MSGS, "after %s: offsets %s %" PRId64 "..%" PRId64,
              after, rd_kafka_err2name(err), lo, hi);

    fd = tl_connect(bs, 10000);
    TL_ASSERT(fd >= 0, "after %s: connect failed", after);
    tl_req_header(&r, 18, 0, 77, "t0006");
    tl_req_finish(&r);
    TL_ASSERT_EQ(tl_send_all(fd, r.data, r.len), 0);
    len = tl_recv_frame(fd, &resp, 10000);
    TL_ASSERT(len > 0, "after %s: no ApiVersions answer", after);
    check_api_versions_v0(resp, len, 77, 0);
    free(resp);
    close(fd);
}

static void seed_topic(rd_kafka_t *rk)
{
    TL_ASSERT(tl_create_topic(rk, topic, 1) >= 1, "partitions");
    for (int i = 0; i < N_SEED_MSGS; i++)
        TL_ASSERT_EQ(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                       RD_KAFKA_V_VALUE("seed", 4), RD_KAFKA_V_END), 0);
    TL_ASSERT_EQ(rd_kafka_flush(rk, 30000), 0);
}

int main(void)
{
    static void (*const cases[])(void) = {
        case_truncated, case_negative_size, case_huge_size, case_unknown_key,
        case_metadata_v99, case_garbage_body, case_api_versions_v99,
        case_trailing_garbage,
    };
    tl_broker b = {0};
    char data[600], *dir = NULL;
    uint64_t before = 0;
    rd_kafka_t *rk;
    int own = !tl_is_kafka() && getenv("STRAND_BIN") && *getenv("STRAND_BIN");

    tl_init("0006-bad-input");
    if (own) { /* strand: an own broker, whose data dir we can watch */
        dir = tl_scratch_dir("0006-broker");
        tl_broker_start(&b, dir, NULL);
        bs = b.bootstrap;
    } else {
        bs = tl_bootstrap();
    }
    topic = tl_topic_name("t0006");
    rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    seed_topic(rk);
    rkt = rd_kafka_topic_new(rk, topic, NULL);
    check_alive(rk, "setup");
    if (own) {
        snprintf(data, sizeof(data), "%s/data", dir);
        before = tl_dir_digest(data);
    }
    for (size_t c = 0; c < sizeof(cases) / sizeof(cases[0]); c++) {
        char after[32];
        cases[c]();
        snprintf(after, sizeof(after), "case %zu", c + 1);
        check_alive(rk, after);
    }
    if (own) {
        TL_ASSERT(tl_dir_digest(data) == before, "the data directory %s changed", data);
        tl_log("data directory unchanged");
    }
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
    if (own)
        TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free((char *)topic);
    free(dir);
    return tl_done();
}
