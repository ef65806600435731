/* Cold consume through raw Fetch requests: what the broker can serve,
 * with no client library in the way. The reader only walks the batch
 * headers to find the next offset and discards the bytes, like the
 * loopback limit's reader, so the two figures compare directly. Counted
 * bytes are record-batch bytes (as stored), not value bytes.
 *
 * Fetch v4 request body (non-flexible, big-endian):
 *   int32 replica_id (-1) | int32 max_wait_ms | int32 min_bytes |
 *   int32 max_bytes | int8 isolation_level | int32 1 (topics) |
 *   string topic | int32 1 (partitions) | int32 partition |
 *   int64 fetch_offset | int32 partition_max_bytes
 * Response v4: int32 throttle_time_ms | int32 topics | string topic |
 *   int32 partitions | int32 partition | int16 error_code |
 *   int64 high_watermark | int64 last_stable_offset |
 *   int32 aborted count (-1: null) + 16 bytes each | int32 records length
 *   (-1: null) | record batches (the last may be cut short). */
#include "bench/bench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct bench_fetch_s {
    int64_t next;  /* offset to fetch from */
    int64_t msgs;  /* records received */
    double bytes;  /* batch bytes received */
    int64_t hwm;
} bench_fetch_t;

static size_t bench_fetch_req(uint8_t *b, const bench_opts_t *o, int part, int64_t offset,
                              int32_t max)
{
    size_t n = 0, tlen = strlen(o->topic);
    if (tlen > 200)
        bench_die("topic name too long");
    n += bench_put32(b + n, -1);
    n += bench_put32(b + n, 500);
    n += bench_put32(b + n, 1);
    n += bench_put32(b + n, max);
    b[n++] = 0;
    n += bench_put32(b + n, 1);
    n += bench_put16(b + n, (int)tlen);
    memcpy(b + n, o->topic, tlen);
    n += tlen;
    n += bench_put32(b + n, 1);
    n += bench_put32(b + n, part);
    n += bench_put64(b + n, offset);
    n += bench_put32(b + n, max);
    return n;
}

/* Walks the complete batches of one partition's records. */
static void bench_fetch_batches(bench_fetch_t *f, const uint8_t *p, size_t len)
{
    /* baseOffset(0) batchLength(8) ... lastOffsetDelta(23) ... count(57) */
    while (len >= 61) {
        int64_t base = bench_get64(p);
        int32_t blen = bench_get32(p + 8);
        if (blen < 49 || (size_t)blen + 12 > len)
            break;
        f->next = base + bench_get32(p + 23) + 1;
        f->msgs += bench_get32(p + 57);
        f->bytes += (double)blen + 12;
        p += (size_t)blen + 12;
        len -= (size_t)blen + 12;
    }
}

/* Parses one Fetch v4 response for a single topic and partition. */
static void bench_fetch_parse(bench_fetch_t *f, const uint8_t *r, size_t len)
{
    size_t off = 8; /* throttle_time_ms, topics count */
    if (len < off + 2)
        bench_die("fetch: short response");
    off += 2 + (size_t)bench_get16(r + off); /* topic name */
    off += 4;                                /* partitions count */
    if (len < off + 30)
        bench_die("fetch: short response");
    int16_t err = bench_get16(r + off + 4);
    if (err)
        bench_die("fetch: error code %d", err);
    f->hwm = bench_get64(r + off + 6);
    off += 22;
    int32_t aborted = bench_get32(r + off);
    off += 4 + (aborted > 0 ? (size_t)aborted * 16 : 0);
    if (len < off + 4)
        bench_die("fetch: short response");
    int32_t rlen = bench_get32(r + off);
    off += 4;
    if (rlen > 0 && (size_t)rlen <= len - off)
        bench_fetch_batches(f, r + off, (size_t)rlen);
}

int bench_cmd_fetch(const bench_opts_t *o)
{
    bench_fetch_t f = {0, 0, 0, 0};
    bench_wbuf_t wb = {NULL, 0};
    uint8_t body[512];
    char host[256];
    int port, part = o->pin_partition >= 0 ? o->pin_partition : 0;
    size_t len;
    bench_hostport(o->bootstrap, host, sizeof(host), &port);
    int fd = bench_wire_connect(host, port, 30000);
    if (fd < 0)
        bench_die("fetch: cannot connect to %s", o->bootstrap);
    /* the end offset first, from an answer carrying one batch at most */
    size_t blen = bench_fetch_req(body, o, part, 0, 1);
    const uint8_t *r = bench_wire_call(fd, 1, 4, body, blen, &wb, &len);
    if (!r)
        bench_die("fetch: no answer");
    bench_fetch_parse(&f, r, len);
    int64_t end = f.hwm;
    f.next = 0;
    f.msgs = 0;
    f.bytes = 0;

    bench_result("cold", bench_settle(o->drop_caches));
    bench_cpu_t cpu0;
    bench_cpu_start(o, &cpu0);
    double t0 = bench_now();
    while (f.next < end) {
        int64_t before = f.next;
        blen = bench_fetch_req(body, o, part, f.next, (int32_t)o->fetch_bytes);
        r = bench_wire_call(fd, 1, 4, body, blen, &wb, &len);
        if (!r)
            bench_die("fetch: connection lost at offset %lld", (long long)f.next);
        bench_fetch_parse(&f, r, len);
        if (f.next == before && bench_now() - t0 > 60)
            bench_die("fetch: stuck at offset %lld", (long long)f.next);
    }
    double secs = bench_now() - t0;
    bench_report_cpu(o, &cpu0, f.msgs, f.bytes);
    bench_result("msgs", (double)f.msgs);
    bench_result("mb_per_s", f.bytes / 1e6 / secs);
    close(fd);
    free(wb.p);
    return 0;
}
