/* Produce throughput with raw Produce requests: what the broker can take,
 * with no client library in the way. One librdkafka producer spends about
 * a core of its own building batches, so on a small machine it measures
 * the client as much as the broker; here every request is built once and
 * sent again and again, so the client costs little more than the socket
 * copy and the broker is what limits the figure.
 *
 * Each of --connections threads (default 4; Kafka serves one request per
 * connection at a time, so one connection would leave its handler threads
 * idle) keeps up to 5 requests in flight, like librdkafka's
 * max.in.flight. A request carries one batch per partition; the batches of
 * one request hold about 1 MB of records together (at most 10,000 records
 * each), librdkafka's batch.size and batch.num.messages. The broker
 * decompresses, validates and assigns offsets to every copy as it would
 * to fresh data.
 *
 * Record batch v2 (big-endian; varints zigzag):
 *   int64 baseOffset | int32 batchLength | int32 partitionLeaderEpoch |
 *   int8 magic (2) | uint32 crc (CRC-32C of the rest) | int16 attributes
 *   (compression in bits 0-2) | int32 lastOffsetDelta | int64 baseTimestamp |
 *   int64 maxTimestamp | int64 producerId (-1) | int16 producerEpoch (-1) |
 *   int32 baseSequence (-1) | int32 count | records (compressed as a whole)
 * Record: varint length | int8 attributes | varlong timestampDelta |
 *   varint offsetDelta | varint keyLength (-1) | varint valueLength | value |
 *   varint headerCount (0)
 * Produce v7 body: int16 transactional_id (-1: null) | int16 acks |
 *   int32 timeout_ms | int32 1 | string topic | int32 partitions |
 *   partitions x (int32 index | int32 records length | records)
 * Response v7: int32 topics | string topic | int32 partitions | partitions x
 *   (int32 index | int16 error | int64 base_offset | int64 log_append_time |
 *   int64 log_start_offset) | int32 throttle_time_ms */
#include "bench/bench.h"

#include <errno.h>
#include <lz4frame.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#define RAW_REQ_BYTES (1 << 20)
#define RAW_MAX_RECORDS 10000
#define RAW_INFLIGHT 5
#define RAW_MAX_CONNS 64

typedef struct raw_req_s {
    uint8_t *p;      /* the whole frame, size prefix included */
    size_t len;
    int64_t records; /* per request, all partitions */
    int32_t per_part; /* records in each partition's batch */
} raw_req_t;

typedef struct raw_conn_s {
    const bench_opts_t *o;
    const raw_req_t *req;
    const char *host; /* the partition's leader */
    int port;
    double t0, end;       /* window: start, and when to stop sending */
    double last;          /* time of the last response */
    int64_t acked, failed;
} raw_conn_t;

static uint32_t raw_crc_table[256];

static void raw_crc_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = c & 1 ? (c >> 1) ^ 0x82F63B78u : c >> 1;
        raw_crc_table[i] = c;
    }
}

static uint32_t raw_crc32c(const uint8_t *p, size_t n)
{
    uint32_t c = 0xFFFFFFFFu;
    while (n--)
        c = raw_crc_table[(c ^ *p++) & 0xFF] ^ (c >> 8);
    return c ^ 0xFFFFFFFFu;
}

static size_t raw_varint(uint8_t *p, int64_t v)
{
    uint64_t u = ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
    size_t n = 0;
    while (u >= 0x80) {
        p[n++] = (uint8_t)(u | 0x80);
        u >>= 7;
    }
    p[n++] = (uint8_t)u;
    return n;
}

/* The records of one batch, uncompressed, into out (sized by the caller:
 * count * (size + 24)). Returns their length. */
static size_t raw_records(uint8_t *out, const bench_opts_t *o, int32_t count, uint64_t seed)
{
    size_t n = 0;
    for (int32_t i = 0; i < count; i++) {
        uint8_t body[32];
        size_t b = 0;
        body[b++] = 0;                     /* attributes */
        b += raw_varint(body + b, 0);      /* timestampDelta */
        b += raw_varint(body + b, i);      /* offsetDelta */
        b += raw_varint(body + b, -1);     /* key: null */
        b += raw_varint(body + b, o->size);
        n += raw_varint(out + n, (int64_t)(b + (size_t)o->size + 1));
        memcpy(out + n, body, b);
        n += b;
        memcpy(out + n, bench_payload(seed + (uint64_t)i, o->size), (size_t)o->size);
        n += (size_t)o->size;
        out[n++] = 0;                      /* headers */
    }
    return n;
}

static int raw_codec(const char *c)
{
    if (!strcmp(c, "none"))
        return 0;
    if (!strcmp(c, "gzip"))
        return 1;
    if (!strcmp(c, "lz4"))
        return 3;
    if (!strcmp(c, "zstd"))
        return 4;
    bench_die("rawproduce: compression %s not supported (none, gzip, lz4, zstd)", c);
}

static size_t raw_gzip(uint8_t *dst, size_t cap, const uint8_t *src, size_t n)
{
    z_stream z;
    memset(&z, 0, sizeof(z));
    if (deflateInit2(&z, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 31, 8, Z_DEFAULT_STRATEGY) != Z_OK)
        bench_die("gzip: init");
    z.next_in = (Bytef *)(uintptr_t)src;
    z.avail_in = (uInt)n;
    z.next_out = dst;
    z.avail_out = (uInt)cap;
    if (deflate(&z, Z_FINISH) != Z_STREAM_END)
        bench_die("gzip: deflate");
    size_t out = z.total_out;
    deflateEnd(&z);
    return out;
}

/* Compresses n bytes of src into dst (cap bytes) with codec; returns the
 * compressed length. LZ4 blocks are independent: Kafka refuses linked ones. */
static size_t raw_compress(int codec, uint8_t *dst, size_t cap, const uint8_t *src, size_t n)
{
    size_t out = 0;
    if (codec == 1) {
        out = raw_gzip(dst, cap, src, n);
    } else if (codec == 3) {
        LZ4F_preferences_t prefs;
        memset(&prefs, 0, sizeof(prefs));
        prefs.frameInfo.blockMode = LZ4F_blockIndependent;
        out = LZ4F_compressFrame(dst, cap, src, n, &prefs);
        if (LZ4F_isError(out))
            bench_die("lz4: %s", LZ4F_getErrorName(out));
    } else {
        out = ZSTD_compress(dst, cap, src, n, 1);
        if (ZSTD_isError(out))
            bench_die("zstd: %s", ZSTD_getErrorName(out));
    }
    return out;
}

/* One batch of count records at out; returns its length. */
static size_t raw_batch(uint8_t *out, const bench_opts_t *o, int32_t count, uint64_t seed)
{
    int codec = raw_codec(o->compression);
    size_t cap = (size_t)count * ((size_t)o->size + 24);
    uint8_t *recs = bench_alloc(cap), *body = out + 61;
    size_t rlen = raw_records(recs, o, count, seed);
    if (codec)
        rlen = raw_compress(codec, body, cap + 1024, recs, rlen);
    else
        memcpy(body, recs, rlen);
    free(recs);
    struct timeval tv;
    gettimeofday(&tv, NULL);
    int64_t ts = (int64_t)tv.tv_sec * 1000 + tv.tv_usec / 1000;
    bench_put64(out, 0);
    bench_put32(out + 8, (int32_t)(49 + rlen));
    bench_put32(out + 12, -1);
    out[16] = 2;
    bench_put16(out + 21, codec);
    bench_put32(out + 23, count - 1);
    bench_put64(out + 27, ts);
    bench_put64(out + 35, ts);
    bench_put64(out + 43, -1);
    bench_put16(out + 51, -1);
    bench_put32(out + 53, -1);
    bench_put32(out + 57, count);
    bench_put32(out + 17, (int32_t)raw_crc32c(out + 21, 40 + rlen));
    return 61 + rlen;
}

/* Builds the request every connection sends (the correlation id is
 * patched in per send). The caller owns req->p (free). */
static void raw_request(raw_req_t *req, const bench_opts_t *o)
{
    int parts = o->pin_partition >= 0 ? 1 : o->partitions;
    size_t per_rec = (size_t)o->size + 24, tlen = strlen(o->topic);
    int32_t count = (int32_t)(RAW_REQ_BYTES / parts / per_rec);
    if (count < 1)
        count = 1;
    if (count > RAW_MAX_RECORDS)
        count = RAW_MAX_RECORDS;
    size_t cap = 128 + tlen + (size_t)parts * (8 + 61 + 1024 + (size_t)count * per_rec * 2);
    uint8_t *p = bench_alloc(cap);
    size_t n = 4;
    n += bench_put16(p + n, 0); /* Produce */
    n += bench_put16(p + n, 7);
    n += bench_put32(p + n, 0); /* correlation id */
    n += bench_put16(p + n, 12);
    memcpy(p + n, "strand-bench", 12);
    n += 12;
    n += bench_put16(p + n, -1);
    n += bench_put16(p + n, o->acks);
    n += bench_put32(p + n, 30000);
    n += bench_put32(p + n, 1);
    n += bench_put16(p + n, (int)tlen);
    memcpy(p + n, o->topic, tlen);
    n += tlen;
    n += bench_put32(p + n, parts);
    for (int i = 0; i < parts; i++) {
        int part = o->pin_partition >= 0 ? o->pin_partition : i;
        n += bench_put32(p + n, part);
        size_t blen = raw_batch(p + n + 4, o, count, (uint64_t)i * (uint64_t)count);
        n += bench_put32(p + n, (int32_t)blen);
        n += blen;
    }
    bench_put32(p, (int32_t)(n - 4));
    req->p = p;
    req->len = n;
    req->per_part = count;
    req->records = (int64_t)count * parts;
}

/* Reads one response and counts its partitions' outcomes. */
static int raw_response(raw_conn_t *c, int fd, bench_wbuf_t *wb)
{
    uint8_t hdr[4];
    if (bench_io_all(fd, hdr, 4, 0) < 0)
        return -1;
    int32_t size = bench_get32(hdr);
    if (size < 8 || size > (16 << 20))
        return -1;
    if ((size_t)size > wb->cap) {
        free(wb->p);
        wb->cap = (size_t)size;
        wb->p = bench_alloc(wb->cap);
    }
    if (bench_io_all(fd, wb->p, (size_t)size, 0) < 0)
        return -1;
    const uint8_t *r = wb->p + 4, *end = wb->p + size; /* past the correlation id */
    if (end - r < 6)
        return -1;
    r += 4;
    r += 2 + bench_get16(r);
    if (end - r < 4)
        return -1;
    int32_t parts = bench_get32(r);
    r += 4;
    for (int32_t i = 0; i < parts; i++, r += 30) {
        if (end - r < 30)
            return -1;
        int16_t err = bench_get16(r + 4);
        if (err && c->failed++ < 5)
            bench_log("rawproduce: partition %d: error %d", bench_get32(r), err);
        if (!err)
            c->acked += c->req->per_part;
    }
    c->last = bench_now();
    return 0;
}

static void *raw_conn_run(void *arg)
{
    raw_conn_t *c = arg;
    bench_wbuf_t wb = {NULL, 0};
    uint8_t *frame = bench_alloc(c->req->len);
    int fd = bench_wire_connect(c->host, c->port, 30000), inflight = 0;
    int32_t corr = 0;
    if (fd < 0)
        bench_die("rawproduce: cannot connect");
    memcpy(frame, c->req->p, c->req->len);
    for (;;) {
        int more = bench_now() < c->end;
        if (more && inflight < RAW_INFLIGHT) {
            bench_put32(frame + 8, ++corr);
            if (bench_io_all(fd, frame, c->req->len, 1) < 0)
                bench_die("rawproduce: connection lost");
            inflight++;
            continue;
        }
        if (!inflight)
            break;
        if (raw_response(c, fd, &wb) < 0)
            bench_die("rawproduce: bad or no response");
        inflight--;
    }
    close(fd);
    free(frame);
    free(wb.p);
    return NULL;
}

/* Runs conns connections for secs; returns the records acknowledged and
 * sets *elapsed (start to the last response) and *failed. */
static int64_t raw_window(const bench_opts_t *o, const raw_req_t *req, const char *leader,
                          int conns, double secs, double *elapsed, int64_t *failed)
{
    raw_conn_t c[RAW_MAX_CONNS];
    pthread_t thr[RAW_MAX_CONNS];
    char host[256];
    int port;
    int64_t acked = 0;
    bench_hostport(leader, host, sizeof(host), &port);
    double t0 = bench_now(), last = t0;
    for (int i = 0; i < conns; i++) {
        c[i] = (raw_conn_t){o, req, host, port, t0, t0 + secs, t0, 0, 0};
        pthread_create(&thr[i], NULL, raw_conn_run, &c[i]);
    }
    *failed = 0;
    for (int i = 0; i < conns; i++) {
        pthread_join(thr[i], NULL);
        acked += c[i].acked;
        *failed += c[i].failed;
        if (c[i].last > last)
            last = c[i].last;
    }
    *elapsed = last - t0;
    return acked;
}

int bench_cmd_rawproduce(const bench_opts_t *o)
{
    raw_req_t req;
    double secs;
    int64_t failed;
    int conns = o->connections > 0 ? o->connections : 4;
    if (conns > RAW_MAX_CONNS)
        bench_die("rawproduce: at most %d connections", RAW_MAX_CONNS);
    char leader[300];
    raw_crc_init();
    /* the topic through librdkafka (CreateTopics or auto-creation), and
     * the broker that leads it: in a cluster (-b A,B,C) the requests go
     * there; a single node leads them all. With several partitions in a
     * cluster, the first's leader would refuse the others' (NOT_LEADER):
     * the cluster workloads pin one partition. */
    rd_kafka_t *rk = bench_new(RD_KAFKA_PRODUCER, bench_conf(o->bootstrap));
    bench_topic_ensure(rk, o);
    if (bench_leader_addr(rk, o->topic, o->pin_partition >= 0 ? o->pin_partition : 0, leader,
                          sizeof(leader)) < 0)
        bench_die("rawproduce: %s has no leader", o->topic);
    rd_kafka_destroy(rk);
    raw_request(&req, o);

    /* connections and the first segment; a new topic's partitions may
     * refuse writes (NOT_LEADER) for a moment after its creation */
    double until = bench_now() + 15;
    do {
        raw_window(o, &req, leader, conns, 0.2, &secs, &failed);
    } while (failed && bench_now() < until && !usleep(100000));
    if (failed)
        bench_die("rawproduce: the broker refused the warm-up requests for 15 s");
    bench_settle(0);
    bench_cpu_t cpu0;
    bench_cpu_start(o, &cpu0);
    int64_t msgs = raw_window(o, &req, leader, conns, o->seconds, &secs, &failed);
    double bytes = (double)msgs * o->size;
    bench_report_cpu(o, &cpu0, msgs, bytes);
    bench_result("msgs", (double)msgs);
    bench_result("errors", (double)failed);
    bench_result("request_bytes", (double)req.len);
    bench_result("msgs_per_s", (double)msgs / secs);
    bench_result("mb_per_s", bytes / 1e6 / secs);
    free(req.p);
    return failed ? 1 : 0;
}
