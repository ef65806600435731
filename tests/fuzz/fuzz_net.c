/* Blocking client sockets with deadlines, for the socket fuzzer: connect,
 * send everything, read one size-prefixed frame. */
#include "fuzz/fuzz_int.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

double fuzz_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int fuzz_net_connect(const char *hostport, int timeout_ms)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    struct addrinfo hints, *res = NULL;
    int fd = -1, one = 1;
    if (!colon || (size_t)(colon - hostport) >= sizeof(host))
        return -1;
    memcpy(host, hostport, (size_t)(colon - hostport));
    host[colon - hostport] = 0;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &res) != 0 || !res)
        return -1;
    fd = socket(res->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0) {
        struct timeval tv = { timeout_ms / 1000, (timeout_ms % 1000) * 1000 };
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
        setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
        if (connect(fd, res->ai_addr, res->ai_addrlen) < 0) {
            close(fd);
            fd = -1;
        }
    }
    freeaddrinfo(res);
    return fd;
}

int fuzz_net_send(int fd, const void *p, size_t n)
{
    const uint8_t *q = p;
    while (n) {
        ssize_t w = send(fd, q, n, MSG_NOSIGNAL);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        q += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Reads exactly n bytes before the deadline: 1 done, 0 EOF/reset before
 * the first byte of a frame, -1 timeout, -2 EOF or error in mid-frame. */
static int fuzz_net_read(int fd, uint8_t *p, size_t n, double deadline, int first)
{
    size_t got = 0;
    while (got < n) {
        int ms = (int)((deadline - fuzz_now()) * 1000);
        struct pollfd pfd = { fd, POLLIN, 0 };
        if (ms <= 0)
            return -1;
        int rc = poll(&pfd, 1, ms);
        if (rc < 0 && errno == EINTR)
            continue;
        if (rc == 0)
            return -1;
        ssize_t r = recv(fd, p + got, n - got, 0);
        if (r < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (r <= 0)
            return first && got == 0 ? 0 : -2;
        got += (size_t)r;
    }
    return 1;
}

int fuzz_net_recv(int fd, fuzz_bytes_t *out, int timeout_ms)
{
    double deadline = fuzz_now() + timeout_ms / 1000.0;
    uint8_t sz[4];
    int rc = fuzz_net_read(fd, sz, 4, deadline, 1);
    if (rc <= 0)
        return rc == 0 ? FUZZ_RECV_CLOSED : rc == -1 ? FUZZ_RECV_TIMEOUT : FUZZ_RECV_ERROR;
    int32_t len = (int32_t)((uint32_t)sz[0] << 24 | (uint32_t)sz[1] << 16 | (uint32_t)sz[2] << 8 | sz[3]);
    if (len < 0 || len > FUZZ_MAX_ANSWER)
        return FUZZ_RECV_ERROR;
    fuzz_bytes_set(out, NULL, 0);
    if (out->cap < (size_t)len + 1) {
        out->cap = (size_t)len + 1;
        out->p = realloc(out->p, out->cap);
        if (!out->p)
            abort();
    }
    out->len = (size_t)len;
    rc = fuzz_net_read(fd, out->p, (size_t)len, deadline + 5.0, 0);
    return rc == 1 ? FUZZ_RECV_FRAME : FUZZ_RECV_ERROR;
}
