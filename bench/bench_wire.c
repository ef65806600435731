/* Raw Kafka requests on a plain socket, for what librdkafka cannot tell or
 * would blur: the advertised API keys, and the first Metadata answer of a
 * starting broker (librdkafka's reconnect backoff would hide milliseconds).
 *
 * Request frames written here (big-endian, Kafka request header v1):
 *   int32 size | int16 api_key | int16 api_version | int32 correlation_id |
 *   int16 client_id length | client_id bytes | body
 * ApiVersions v0 has an empty body; Metadata v1's body is int32 0 (an empty
 * topic array: brokers only). Fetch: see bench_fetch.c. */
#include "bench/bench.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>


#define BENCH_CLIENT_ID "strand-bench"

void bench_hostport(const char *hp, char *hostbuf, size_t hostlen, int *port)
{
    const char *colon = strrchr(hp, ':');
    if (!colon || (size_t)(colon - hp) >= hostlen || !colon[1])
        bench_die("not host:port: %s", hp);
    memcpy(hostbuf, hp, (size_t)(colon - hp));
    hostbuf[colon - hp] = '\0';
    *port = atoi(colon + 1);
}

int bench_wire_connect(const char *host, int port, int timeout_ms)
{
    struct sockaddr_in sa;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    int one = 1;
    memset(&sa, 0, sizeof(sa));
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    if (inet_pton(AF_INET, host, &sa.sin_addr) != 1)
        bench_die("not an IPv4 address: %s", host);
    int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    return fd;
}

size_t bench_put16(uint8_t *p, int v)
{
    p[0] = (uint8_t)(v >> 8);
    p[1] = (uint8_t)v;
    return 2;
}

size_t bench_put32(uint8_t *p, int32_t v)
{
    uint32_t u = (uint32_t)v;
    p[0] = (uint8_t)(u >> 24);
    p[1] = (uint8_t)(u >> 16);
    p[2] = (uint8_t)(u >> 8);
    p[3] = (uint8_t)u;
    return 4;
}

int32_t bench_get32(const uint8_t *p)
{
    return (int32_t)((uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3]);
}

int16_t bench_get16(const uint8_t *p)
{
    return (int16_t)((uint16_t)p[0] << 8 | p[1]);
}

int64_t bench_get64(const uint8_t *p)
{
    return (int64_t)((uint64_t)(uint32_t)bench_get32(p) << 32 | (uint32_t)bench_get32(p + 4));
}

size_t bench_put64(uint8_t *p, int64_t v)
{
    bench_put32(p, (int32_t)((uint64_t)v >> 32));
    bench_put32(p + 4, (int32_t)(uint32_t)v);
    return 8;
}

int bench_io_all(int fd, void *buf, size_t len, int writing)
{
    uint8_t *p = buf;
    while (len) {
        ssize_t n = writing ? send(fd, p, len, MSG_NOSIGNAL) : recv(fd, p, len, 0);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

const uint8_t *bench_wire_call(int fd, int key, int ver, const uint8_t *body, size_t blen,
                               bench_wbuf_t *wb, size_t *len)
{
    uint8_t req[512], hdr[4];
    size_t n = 4, idlen = strlen(BENCH_CLIENT_ID);
    const int32_t corr = 0x5b5b;
    if (blen > sizeof(req) - 64)
        bench_die("request body of %zu bytes too large", blen);
    n += bench_put16(req + n, key);
    n += bench_put16(req + n, ver);
    n += bench_put32(req + n, corr);
    n += bench_put16(req + n, (int)idlen);
    memcpy(req + n, BENCH_CLIENT_ID, idlen);
    n += idlen;
    if (blen)
        memcpy(req + n, body, blen);
    n += blen;
    bench_put32(req, (int32_t)(n - 4));
    if (bench_io_all(fd, req, n, 1) < 0 || bench_io_all(fd, hdr, 4, 0) < 0)
        return NULL;
    int32_t size = bench_get32(hdr);
    if (size < 4 || size > (256 << 20))
        return NULL;
    if ((size_t)size > wb->cap) {
        free(wb->p);
        wb->cap = (size_t)size;
        wb->p = bench_alloc(wb->cap);
    }
    if (bench_io_all(fd, wb->p, (size_t)size, 0) < 0 || bench_get32(wb->p) != corr)
        return NULL;
    *len = (size_t)size - 4;
    return wb->p + 4;
}

int bench_wire_apiversions(const char *host, int port, int16_t *max_ver, int nkeys)
{
    bench_wbuf_t wb = {NULL, 0};
    size_t len = 0;
    int rc = -1;
    for (int i = 0; i < nkeys; i++)
        max_ver[i] = -1;
    int fd = bench_wire_connect(host, port, 5000);
    if (fd < 0)
        return -1;
    const uint8_t *r = bench_wire_call(fd, 18, 0, NULL, 0, &wb, &len);
    close(fd);
    /* int16 error_code | int32 count | count x (int16 key, int16 min, int16 max) */
    if (r && len >= 6 && bench_get16(r) == 0) {
        int32_t cnt = bench_get32(r + 2);
        if (cnt >= 0 && (size_t)cnt * 6 <= len - 6) {
            for (int32_t i = 0; i < cnt; i++) {
                const uint8_t *e = r + 6 + (size_t)i * 6;
                int key = bench_get16(e);
                if (key >= 0 && key < nkeys)
                    max_ver[key] = bench_get16(e + 4);
            }
            rc = 0;
        }
    }
    free(wb.p);
    return rc;
}

int bench_wire_metadata(const char *host, int port, int timeout_ms)
{
    static const uint8_t body[4] = {0, 0, 0, 0};
    bench_wbuf_t wb = {NULL, 0};
    size_t len = 0;
    int fd = bench_wire_connect(host, port, timeout_ms);
    if (fd < 0)
        return -1;
    const uint8_t *r = bench_wire_call(fd, 3, 1, body, sizeof(body), &wb, &len);
    close(fd);
    /* v1: brokers array first */
    int ok = r && len >= 4 && bench_get32(r) >= 1;
    free(wb.p);
    return ok ? 0 : -1;
}
