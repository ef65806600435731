/* Outbound connections (net/net_out.h) against a scripted Kafka-framed
 * server on loopback, run on its own thread with blocking sockets. The
 * server decodes each request header with the generated codecs and
 * answers with the response header of the request's version; what it
 * answers is the test's script: the request body echoed, nothing, a wrong
 * correlation id, an oversized frame, or half a response and a close.
 *
 * Each test checks what comes back to the callbacks (order, bytes, error
 * codes and errnos), the timing of reconnect attempts against Kafka's
 * backoff schedule, the bound on requests in flight as the server sees
 * it, and that nothing is called back after net_out_free (ASan checks
 * the memory). The transport seam's plain TCP is checked here too. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net_out.h"
#include "net/net_xprt_tcp.h"
#include "proto/proto.h"
#include "tests/unit/unit.h"
#include "util/arena.h"
#include "util/kerr.h"

/* ---- the scripted server ---- */

enum srv_mode { SRV_ECHO, SRV_BATCH, SRV_SILENT, SRV_WRONG_CORR, SRV_BIG, SRV_CLOSE_MID };

#define SRV_MAX_CONNS 8

typedef struct srv_s {
    int lfd, port;
    pthread_t th;
    int modes[SRV_MAX_CONNS]; /* per accepted connection; the last repeats */
    int close_after;          /* SRV_CLOSE_MID: answers this many whole */
    atomic_int stop;
    atomic_int conns;         /* accepted */
    atomic_int received;      /* request frames */
    atomic_int max_outstanding;
    atomic_int bad_client_id;
} srv_t;

static int srv_read_full(int fd, uint8_t *p, size_t n)
{
    while (n) {
        ssize_t r = read(fd, p, n);
        if (r <= 0)
            return -1;
        p += r;
        n -= (size_t)r;
    }
    return 0;
}

static void srv_write_all(int fd, const uint8_t *p, size_t n)
{
    while (n) {
        ssize_t w = write(fd, p, n);
        if (w <= 0)
            return;
        p += w;
        n -= (size_t)w;
    }
}

/* One pending request: its frame without the size. */
typedef struct srv_req_s {
    uint8_t *frame;
    size_t len;
} srv_req_t;

/* The answer to req: the response header of its version, then its body
 * echoed, with the correlation id shifted by corr_delta. */
static void srv_answer(srv_t *srv, int fd, const srv_req_t *req, int corr_delta, int half)
{
    proto_req_header_t h;
    size_t hl;
    buf_t b;

    if (proto_req_header_decode(&h, req->frame, req->len, &hl) < 0)
        return;
    if (h.client_id.len != 7 || memcmp(h.client_id.p, "unit-no", 7))
        atomic_fetch_add(&srv->bad_client_id, 1);
    buf_init(&b);
    buf_put_i32(&b, 0);
    proto_resp_header_encode(&b, h.api_key, h.api_version, h.correlation_id + corr_delta);
    buf_put(&b, req->frame + hl, req->len - hl);
    buf_set_i32(&b, 0, (int32_t)(b.len - 4));
    srv_write_all(fd, b.p, half ? b.len / 2 : b.len);
    buf_free(&b);
}

/* Reads one frame if one is readable within ms. 1: got one, 0: quiet,
 * -1: the client closed. */
static int srv_next(int fd, int ms, srv_req_t *req)
{
    struct pollfd pfd = {.fd = fd, .events = POLLIN};
    uint8_t sz[4];
    if (poll(&pfd, 1, ms) <= 0)
        return 0;
    if (srv_read_full(fd, sz, 4) < 0)
        return -1;
    req->len = ((size_t)sz[0] << 24) | ((size_t)sz[1] << 16) | ((size_t)sz[2] << 8) | sz[3];
    req->frame = malloc(req->len ? req->len : 1);
    if (srv_read_full(fd, req->frame, req->len) < 0) {
        free(req->frame);
        return -1;
    }
    return 1;
}

/* Answers the pending requests as the mode says. Returns -1 to close. */
static int srv_flush(srv_t *srv, int fd, int mode, srv_req_t *pend, int *npend, int *answered)
{
    int rc = 0;
    for (int i = 0; i < *npend; i++) {
        if (rc == 0 && mode == SRV_CLOSE_MID && *answered == srv->close_after) {
            srv_answer(srv, fd, &pend[i], 0, 1);
            rc = -1;
        } else if (rc == 0) {
            srv_answer(srv, fd, &pend[i], mode == SRV_WRONG_CORR ? 1000 : 0, 0);
            (*answered)++;
        }
        free(pend[i].frame);
    }
    *npend = 0;
    return rc;
}

static void srv_serve(srv_t *srv, int fd, int mode)
{
    srv_req_t pend[256];
    int npend = 0, answered = 0;
    /* These answer once the client stops sending, all at once. */
    int batch = mode == SRV_BATCH || mode == SRV_CLOSE_MID;
    while (!atomic_load(&srv->stop)) {
        int r = srv_next(fd, batch ? 15 : 5, &pend[npend]);
        if (r < 0)
            break;
        if (r == 1) {
            atomic_fetch_add(&srv->received, 1);
            npend++;
            if (npend > atomic_load(&srv->max_outstanding))
                atomic_store(&srv->max_outstanding, npend);
            if (mode == SRV_BIG) {
                /* A size prefix over the client's limit, and no more. */
                uint8_t big[8] = {0, 0x10, 0, 0, 0, 0, 0, 1};
                srv_write_all(fd, big, sizeof(big));
            }
        }
        if (mode == SRV_SILENT || mode == SRV_BIG || (batch && r == 1 && npend < 256))
            continue;
        if (srv_flush(srv, fd, mode, pend, &npend, &answered) < 0)
            break;
    }
    for (int i = 0; i < npend; i++)
        free(pend[i].frame);
    close(fd);
}

static void *srv_main(void *arg)
{
    srv_t *srv = arg;
    while (!atomic_load(&srv->stop)) {
        struct pollfd pfd = {.fd = srv->lfd, .events = POLLIN};
        if (poll(&pfd, 1, 10) <= 0)
            continue;
        int fd = accept(srv->lfd, NULL, NULL);
        if (fd < 0)
            continue;
        int n = atomic_fetch_add(&srv->conns, 1);
        srv_serve(srv, fd, srv->modes[n < SRV_MAX_CONNS ? n : SRV_MAX_CONNS - 1]);
    }
    return NULL;
}

/* A loopback socket bound to a free port; listening if listen_too. */
static int bound_socket(int *port, int listen_too)
{
    struct sockaddr_in a = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
    socklen_t al = sizeof(a);
    int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    CU_ASSERT_FATAL(bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0);
    if (listen_too)
        CU_ASSERT_FATAL(listen(fd, 16) == 0);
    getsockname(fd, (struct sockaddr *)&a, &al);
    *port = ntohs(a.sin_port);
    return fd;
}

/* Starts a server whose connections follow modes (the last repeats). */
static void srv_start(srv_t *srv, const int *modes, int nmodes)
{
    memset(srv, 0, sizeof(*srv));
    for (int i = 0; i < SRV_MAX_CONNS; i++)
        srv->modes[i] = modes[i < nmodes ? i : nmodes - 1];
    srv->lfd = bound_socket(&srv->port, 1);
    CU_ASSERT_FATAL(pthread_create(&srv->th, NULL, srv_main, srv) == 0);
}

static void srv_stop(srv_t *srv)
{
    atomic_store(&srv->stop, 1);
    pthread_join(srv->th, NULL);
    close(srv->lfd);
}

/* ---- the client side ---- */

#define MAX_REQS 128

typedef struct call_s {
    int idx;
    int calls;    /* times called back: must end at 1 */
    int order;    /* position among all callbacks */
    int16_t err;
    int sys_errno;
    int32_t corr;
    int64_t at;   /* monotonic ms */
    char body[32];
} call_t;

static net_loop_t *loop;
static call_t calls[MAX_REQS];
static int ncalled, nexpect;
static net_out_t *free_on_error; /* a callback frees this on its first error */
static int64_t t0;

static void on_resp(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    call_t *c = arg;
    (void)out;
    c->calls++;
    c->order = ncalled++;
    c->err = resp->err;
    c->sys_errno = resp->sys_errno;
    c->corr = resp->correlation_id;
    c->at = net_now_mono_ms();
    if (resp->err == KERR_NONE && resp->len < sizeof(c->body))
        memcpy(c->body, resp->body, resp->len);
    if (resp->err != KERR_NONE && free_on_error) {
        net_out_t *o = free_on_error;
        free_on_error = NULL;
        net_out_free(o);
    }
    if (ncalled == nexpect)
        net_loop_stop(loop);
}

static void stop_loop(net_loop_t *l, void *data)
{
    (void)data;
    net_loop_stop(l);
}

/* Runs the loop until every expected callback came, or ms passed. */
static void run_for(int64_t ms)
{
    net_timer_id_t t = net_timer_add(loop, ms, stop_loop, NULL);
    net_loop_run(loop);
    net_timer_cancel(loop, t);
}

static void reset_calls(int expect)
{
    memset(calls, 0, sizeof(calls));
    for (int i = 0; i < MAX_REQS; i++)
        calls[i].idx = i;
    ncalled = 0;
    nexpect = expect;
    free_on_error = NULL;
    t0 = net_now_mono_ms();
}

static net_out_t *client(const char *host, int port, net_out_config_t *cfg)
{
    net_out_config_t def;
    if (!cfg) {
        net_out_config_init(&def);
        cfg = &def;
    }
    cfg->host = host;
    cfg->port = port;
    cfg->client_id = "unit-no";
    cfg->seed = 12345;
    return net_out_new(loop, cfg);
}

/* Sends request i: a body of "req-<i>" as the API and version given. */
static void send_req(net_out_t *out, int i, int16_t key, int16_t ver, int64_t timeout_ms)
{
    buf_t b;
    char s[32];
    buf_init(&b);
    snprintf(s, sizeof(s), "req-%d", i);
    buf_put(&b, s, strlen(s));
    CU_ASSERT_EQUAL(net_out_send(out, key, ver, &b, timeout_ms, on_resp, &calls[i]), 0);
    CU_ASSERT_EQUAL(b.len, 0);
}

static int echoed(int i)
{
    char s[32];
    snprintf(s, sizeof(s), "req-%d", i);
    return calls[i].calls == 1 && calls[i].err == KERR_NONE && !strcmp(calls[i].body, s);
}

/* ---- tests ---- */

/* 100 requests pipelined: all answered, in order, bytes intact, the
 * correlation ids increasing, never more than max_in_flight at the server
 * (which answers only once the client stops sending). */
static void test_pipelining(void)
{
    int modes[] = {SRV_BATCH};
    srv_t srv;
    srv_start(&srv, modes, 1);
    net_out_t *out = client("localhost", srv.port, NULL);
    reset_calls(100);
    for (int i = 0; i < 100; i++)
        send_req(out, i, PROTO_API_METADATA, 4, 0);
    CU_ASSERT_EQUAL(net_out_waiting(out), 100);
    CU_ASSERT_EQUAL(ncalled, 0); /* never called back from inside send */
    run_for(10000);
    CU_ASSERT_EQUAL(ncalled, 100);
    int bad = 0;
    for (int i = 0; i < 100; i++)
        bad += !echoed(i) || calls[i].order != i || (i && calls[i].corr != calls[i - 1].corr + 1);
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_EQUAL(atomic_load(&srv.max_outstanding), 5);
    CU_ASSERT_EQUAL(atomic_load(&srv.conns), 1);
    CU_ASSERT_EQUAL(atomic_load(&srv.bad_client_id), 0);
    CU_ASSERT_EQUAL(net_out_state(out), NET_OUT_READY);
    net_out_free(out);
    srv_stop(&srv);
}

/* Flexible versions: request header v2 and response header v1 (tagged
 * sections), except ApiVersions whose response header stays v0; a body
 * read at the wrong offset would not echo. */
static void test_header_versions(void)
{
    int modes[] = {SRV_ECHO};
    srv_t srv;
    srv_start(&srv, modes, 1);
    net_out_t *out = client("127.0.0.1", srv.port, NULL);
    reset_calls(4);
    send_req(out, 0, PROTO_API_METADATA, 12, 0);
    send_req(out, 1, PROTO_API_API_VERSIONS, 3, 0);
    send_req(out, 2, PROTO_API_METADATA, 4, 0);
    send_req(out, 3, PROTO_API_API_VERSIONS, 0, 0);
    run_for(5000);
    CU_ASSERT(echoed(0) && echoed(1) && echoed(2) && echoed(3));
    CU_ASSERT_EQUAL(atomic_load(&srv.bad_client_id), 0);
    net_out_free(out);
    srv_stop(&srv);
}

/* The server takes five, answers two, then half of the third and closes:
 * the three left on the wire fail (NETWORK_EXCEPTION, ECONNRESET), and
 * so do the ones the two answers let out if they went before the close;
 * those not yet sent wait, and go out on the next connection after the
 * backoff. Every request is called back once, the failures before the
 * answers of the new connection. */
static void test_close_mid_response(void)
{
    int modes[] = {SRV_CLOSE_MID, SRV_ECHO};
    srv_t srv;
    net_out_config_t cfg;
    srv_start(&srv, modes, 2);
    srv.close_after = 2;
    net_out_config_init(&cfg);
    net_out_t *out = client("127.0.0.1", srv.port, &cfg);
    reset_calls(8);
    for (int i = 0; i < 8; i++)
        send_req(out, i, PROTO_API_METADATA, 4, 0);
    run_for(10000);
    CU_ASSERT_EQUAL(ncalled, 8);
    CU_ASSERT(echoed(0) && echoed(1));
    int failed = 2;
    while (failed < 8 && calls[failed].err == KERR_NETWORK_EXCEPTION &&
           calls[failed].sys_errno == ECONNRESET && calls[failed].order == failed)
        failed++;
    CU_ASSERT(failed >= 5 && failed <= 7);
    for (int i = failed; i < 8; i++)
        CU_ASSERT(echoed(i) && calls[i].order == i);
    /* the retries waited for the backoff (50 ms +-20 %) */
    CU_ASSERT(calls[failed].at - calls[failed - 1].at >= 35);
    CU_ASSERT_EQUAL(atomic_load(&srv.conns), 2);
    net_out_free(out);
    srv_stop(&srv);
}

static int64_t attempt_at[16];
static int nattempts, last_backoff_errno;

static void on_state(net_out_t *out, net_out_state_t st, int err, void *arg)
{
    (void)out;
    (void)arg;
    if (st == NET_OUT_CONNECTING && nattempts < 16)
        attempt_at[nattempts++] = net_now_mono_ms();
    if (st == NET_OUT_BACKOFF)
        last_backoff_errno = err;
}

/* Connection refused: the attempts follow 50, 100, 200, 400, 800, 1000 ms
 * (+-20 % jitter; generous slack above for a loaded machine), and the
 * request waiting all along times out with the refusal as its cause. */
static void test_refused_backoff(void)
{
    int port;
    net_out_config_t cfg;
    int fd = bound_socket(&port, 0); /* bound, not listening: refused */
    net_out_config_init(&cfg);
    cfg.on_state = on_state;
    net_out_t *out = client("127.0.0.1", port, &cfg);
    nattempts = 0;
    reset_calls(1);
    send_req(out, 0, PROTO_API_METADATA, 4, 3500);
    run_for(7000);
    CU_ASSERT_EQUAL(ncalled, 1);
    CU_ASSERT_EQUAL(calls[0].err, KERR_REQUEST_TIMED_OUT);
    CU_ASSERT_EQUAL(calls[0].sys_errno, ECONNREFUSED);
    CU_ASSERT_EQUAL(calls[0].corr, -1);
    CU_ASSERT(calls[0].at - t0 >= 3490 && calls[0].at - t0 < 5000);
    CU_ASSERT_EQUAL(last_backoff_errno, ECONNREFUSED);
    CU_ASSERT_FATAL(nattempts >= 7);
    for (int i = 1; i < 7; i++) {
        int64_t base = net_out_backoff_base(&cfg, i - 1), gap = attempt_at[i] - attempt_at[i - 1];
        CU_ASSERT(gap >= base * 8 / 10 - 2 && gap <= base * 12 / 10 + 150);
        if (gap < base * 8 / 10 - 2 || gap > base * 12 / 10 + 150)
            printf("attempt %d after %lld ms, expected %lld +-20%%\n", i, (long long)gap,
                   (long long)base);
    }
    CU_ASSERT(net_out_failures(out) >= 6);
    net_out_free(out);
    close(fd);
}

static void test_backoff_schedule(void)
{
    net_out_config_t cfg;
    net_out_config_init(&cfg);
    int64_t want[] = {50, 100, 200, 400, 800, 1000, 1000, 1000};
    for (int i = 0; i < 8; i++)
        CU_ASSERT_EQUAL(net_out_backoff_base(&cfg, i), want[i]);
    cfg.reconnect_backoff_ms = 300; /* max not above: constant */
    cfg.reconnect_backoff_max_ms = 200;
    CU_ASSERT_EQUAL(net_out_backoff_base(&cfg, 5), 300);
}

/* A silent server: the request times out (REQUEST_TIMED_OUT, ETIMEDOUT)
 * after its timeout, the other one on the wire fails with ECONNABORTED as
 * the connection is dropped, and the one waiting behind them
 * (max_in_flight 2) goes out on the next connection and is answered. */
static void test_request_timeout(void)
{
    int modes[] = {SRV_SILENT, SRV_ECHO};
    srv_t srv;
    net_out_config_t cfg;
    srv_start(&srv, modes, 2);
    net_out_config_init(&cfg);
    cfg.max_in_flight = 2;
    net_out_t *out = client("127.0.0.1", srv.port, &cfg);
    reset_calls(3);
    send_req(out, 0, PROTO_API_METADATA, 4, 300);
    send_req(out, 1, PROTO_API_METADATA, 4, 5000);
    send_req(out, 2, PROTO_API_METADATA, 4, 5000);
    run_for(8000);
    CU_ASSERT_EQUAL(ncalled, 3);
    CU_ASSERT_EQUAL(calls[0].err, KERR_REQUEST_TIMED_OUT);
    CU_ASSERT_EQUAL(calls[0].sys_errno, ETIMEDOUT);
    CU_ASSERT(calls[0].at - t0 >= 295 && calls[0].at - t0 < 1500);
    CU_ASSERT_EQUAL(calls[1].err, KERR_NETWORK_EXCEPTION);
    CU_ASSERT_EQUAL(calls[1].sys_errno, ECONNABORTED);
    CU_ASSERT(echoed(2));
    CU_ASSERT_EQUAL(atomic_load(&srv.conns), 2);
    net_out_free(out);
    srv_stop(&srv);
}

/* A response with another request's correlation id is a protocol error:
 * the request fails (EPROTO), the connection is dropped, and the next
 * request is answered on a new one. */
static void test_wrong_correlation_id(void)
{
    int modes[] = {SRV_WRONG_CORR, SRV_ECHO};
    srv_t srv;
    srv_start(&srv, modes, 2);
    net_out_t *out = client("127.0.0.1", srv.port, NULL);
    reset_calls(1);
    send_req(out, 0, PROTO_API_METADATA, 4, 0);
    run_for(5000);
    CU_ASSERT_EQUAL(calls[0].err, KERR_NETWORK_EXCEPTION);
    CU_ASSERT_EQUAL(calls[0].sys_errno, EPROTO);
    CU_ASSERT_NOT_EQUAL(net_out_state(out), NET_OUT_READY);
    reset_calls(1);
    send_req(out, 1, PROTO_API_METADATA, 4, 0);
    run_for(5000);
    CU_ASSERT(echoed(1));
    CU_ASSERT_EQUAL(atomic_load(&srv.conns), 2);
    net_out_free(out);
    srv_stop(&srv);
}

/* A size prefix over max_response_bytes fails the request at once
 * (EMSGSIZE), without waiting for a megabyte that never comes. */
static void test_frame_too_large(void)
{
    int modes[] = {SRV_BIG};
    srv_t srv;
    net_out_config_t cfg;
    srv_start(&srv, modes, 1);
    net_out_config_init(&cfg);
    cfg.max_response_bytes = 64 << 10;
    net_out_t *out = client("127.0.0.1", srv.port, &cfg);
    reset_calls(1);
    send_req(out, 0, PROTO_API_METADATA, 4, 0);
    run_for(5000);
    CU_ASSERT_EQUAL(ncalled, 1);
    CU_ASSERT_EQUAL(calls[0].err, KERR_NETWORK_EXCEPTION);
    CU_ASSERT_EQUAL(calls[0].sys_errno, EMSGSIZE);
    CU_ASSERT(calls[0].at - t0 < 2000);
    net_out_free(out);
    srv_stop(&srv);
}

/* Freed with five requests on the wire and five waiting: all ten are
 * called back inside net_out_free (ECANCELED), none after. */
static void test_free_in_flight(void)
{
    int modes[] = {SRV_SILENT};
    srv_t srv;
    srv_start(&srv, modes, 1);
    net_out_t *out = client("127.0.0.1", srv.port, NULL);
    reset_calls(-1);
    for (int i = 0; i < 10; i++)
        send_req(out, i, PROTO_API_METADATA, 4, 0);
    for (int i = 0; i < 100 && atomic_load(&srv.received) < 5; i++)
        run_for(20);
    CU_ASSERT_EQUAL(atomic_load(&srv.received), 5);
    CU_ASSERT_EQUAL(net_out_in_flight(out), 5);
    CU_ASSERT_EQUAL(net_out_waiting(out), 5);
    net_out_free(out);
    CU_ASSERT_EQUAL(ncalled, 10);
    int bad = 0;
    for (int i = 0; i < 10; i++)
        bad += calls[i].calls != 1 || calls[i].err != KERR_NETWORK_EXCEPTION ||
               calls[i].sys_errno != ECANCELED;
    CU_ASSERT_EQUAL(bad, 0);
    run_for(200);
    CU_ASSERT_EQUAL(ncalled, 10);
    srv_stop(&srv);
}

/* A callback that frees the connection on the first error (the server
 * closed mid-response): every request is called back exactly once, the
 * ones not yet reported inside that net_out_free, none afterwards. */
static void test_free_from_callback(void)
{
    int modes[] = {SRV_CLOSE_MID};
    srv_t srv;
    srv_start(&srv, modes, 1);
    srv.close_after = 1;
    net_out_t *out = client("127.0.0.1", srv.port, NULL);
    reset_calls(-1);
    for (int i = 0; i < 8; i++)
        send_req(out, i, PROTO_API_METADATA, 4, 0);
    free_on_error = out;
    for (int i = 0; i < 250 && ncalled < 8; i++)
        run_for(20);
    CU_ASSERT_EQUAL(ncalled, 8);
    CU_ASSERT(echoed(0));
    int bad = 0;
    for (int i = 1; i < 8; i++)
        bad += calls[i].calls != 1 || calls[i].err != KERR_NETWORK_EXCEPTION;
    CU_ASSERT_EQUAL(bad, 0);
    CU_ASSERT_PTR_NULL(free_on_error);
    run_for(200);
    CU_ASSERT_EQUAL(ncalled, 8);
    srv_stop(&srv);
}

/* net_out_close cancels everything pending, and the connection works
 * again for the next request. */
static void test_close_then_reuse(void)
{
    int modes[] = {SRV_SILENT, SRV_ECHO};
    srv_t srv;
    srv_start(&srv, modes, 2);
    net_out_t *out = client("127.0.0.1", srv.port, NULL);
    reset_calls(-1);
    send_req(out, 0, PROTO_API_METADATA, 4, 0);
    for (int i = 0; i < 100 && atomic_load(&srv.received) < 1; i++)
        run_for(20);
    net_out_close(out);
    CU_ASSERT_EQUAL(calls[0].calls, 1);
    CU_ASSERT_EQUAL(calls[0].sys_errno, ECANCELED);
    CU_ASSERT_EQUAL(net_out_state(out), NET_OUT_IDLE);
    reset_calls(1);
    send_req(out, 1, PROTO_API_METADATA, 4, 0);
    run_for(5000);
    CU_ASSERT(echoed(1));
    net_out_free(out);
    srv_stop(&srv);
}

/* Plain TCP behind the seam: bytes both ways, shutdown ends the sending
 * direction only (the peer reads EOF and can still answer). */
static void test_xprt_tcp(void)
{
    int sv[2];
    net_xprt_t x;
    char buf[8];
    struct iovec iov = {"ping", 4};
    CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM, 0, sv) == 0);
    net_xprt_tcp_attach(&x);
    CU_ASSERT_STRING_EQUAL(x.ops->name, "tcp");
    CU_ASSERT_EQUAL(x.ops->writev(x.ctx, sv[0], &iov, 1), 4);
    CU_ASSERT_EQUAL(x.ops->shutdown(x.ctx, sv[0]), 0);
    CU_ASSERT_EQUAL(read(sv[1], buf, sizeof(buf)), 4);
    CU_ASSERT_EQUAL(read(sv[1], buf, sizeof(buf)), 0);
    CU_ASSERT_EQUAL(write(sv[1], "pong", 4), 4);
    CU_ASSERT_EQUAL(x.ops->read(x.ctx, sv[0], buf, sizeof(buf)), 4);
    CU_ASSERT_EQUAL(memcmp(buf, "pong", 4), 0);
    x.ops->close(x.ctx, sv[0]);
    close(sv[1]);
}

int main(void)
{
    signal(SIGPIPE, SIG_IGN);
    loop = net_loop_new();
    if (CU_initialize_registry() != CUE_SUCCESS || !loop)
        return 1;
    CU_pSuite s = CU_add_suite("net_out", NULL, NULL);
    CU_add_test(s, "100 requests pipelined, in order", test_pipelining);
    CU_add_test(s, "request and response header versions", test_header_versions);
    CU_add_test(s, "server closes mid-response: errors, reconnect", test_close_mid_response);
    CU_add_test(s, "backoff schedule", test_backoff_schedule);
    CU_add_test(s, "connection refused: backoff growth", test_refused_backoff);
    CU_add_test(s, "request timeout resets the connection", test_request_timeout);
    CU_add_test(s, "wrong correlation id", test_wrong_correlation_id);
    CU_add_test(s, "frame over the size limit", test_frame_too_large);
    CU_add_test(s, "free with requests in flight", test_free_in_flight);
    CU_add_test(s, "free from inside a callback", test_free_from_callback);
    CU_add_test(s, "close cancels, then reuse", test_close_then_reuse);
    CU_add_test(s, "plain TCP transport", test_xprt_tcp);
    int rc = unit_run();
    net_loop_free(loop);
    return rc;
}
