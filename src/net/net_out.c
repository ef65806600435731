/* The outbound connection's requests: queueing, framing, the responses
 * and the timeouts (see net_out.h for the guarantees; net_out_dial.c
 * gets the socket connected).
 *
 * A request goes wait -> fly -> callback. It is framed only when it moves
 * to fly, once connected and below max_in_flight: its correlation id is
 * assigned then, in wire order, so ids on one connection increase and the
 * oldest request on the wire is always the one the next response answers.
 * Frame on the wire (Kafka's):
 *
 *   int32 size | request header v1/v2 (api key, version, correlation id,
 *   client id) | body
 *
 * and back: int32 size | response header v0/v1 (correlation id) | body.
 * Failed requests go to the done list first and are called back from
 * there, so that every list is consistent whenever a callback runs, and
 * net_out_free can still call back what it finds there. */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_out_int.h"
#include "proto/proto.h"
#include "proto/proto_desc.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

#define NET_OUT_RBUF_MIN 4096
/* Reads per readiness event: a peer streaming responses cannot keep the
 * loop from its other connections. */
#define NET_OUT_READS_PER_EVENT 16

/* ---- lists ---- */

static void net_out_push(net_out_list_t *l, net_out_req_t *req)
{
    req->next = NULL;
    if (l->tail)
        l->tail->next = req;
    else
        l->head = req;
    l->tail = req;
    l->n++;
}

static net_out_req_t *net_out_pop(net_out_list_t *l)
{
    net_out_req_t *req = l->head;
    if (!req)
        return NULL;
    l->head = req->next;
    if (!l->head)
        l->tail = NULL;
    l->n--;
    req->next = NULL;
    return req;
}

/* Moves every request of l to the done list with the outcome given. */
static void net_out_fail_all(net_out_t *out, net_out_list_t *l, int16_t err, int sys_errno)
{
    net_out_req_t *req;
    while ((req = net_out_pop(l)) != NULL) {
        req->err = err;
        req->sys_errno = sys_errno;
        net_out_push(&out->done, req);
    }
}

static void net_out_req_free(net_out_req_t *req)
{
    buf_free(&req->body);
    free(req);
}

/* ---- callbacks ---- */

static void net_out_call(net_out_t *out, net_out_req_t *req, int16_t err, int sys_errno,
                         const uint8_t *body, size_t len)
{
    net_out_resp_t resp = {
        .err = err,
        .sys_errno = sys_errno,
        .api_key = req->api_key,
        .api_version = req->api_version,
        .correlation_id = req->corr,
        .body = body,
        .len = len,
    };
    req->cb(out, &resp, req->arg);
}

/* Calls back the done list; stops early if a callback frees the
 * connection (net_out_free calls back the rest). Returns -1 then. */
static int net_out_run_done(net_out_t *out)
{
    net_out_req_t *req;
    while (!out->freed && (req = net_out_pop(&out->done)) != NULL) {
        net_out_call(out, req, req->err, req->sys_errno, NULL, 0);
        net_out_req_free(req);
    }
    return out->freed ? -1 : 0;
}

void net_out_hold(net_out_t *out)
{
    out->refs++;
}

void net_out_release(net_out_t *out)
{
    if (--out->refs > 0)
        return;
    net_out_sock_close(out);
    buf_free(&out->wbuf);
    free(out->rbuf);
    free(out->host);
    free(out->client_id);
    free(out);
}

/* ---- timeouts ---- */

static void net_out_req_timer_fire(net_loop_t *loop, void *data);

static void net_out_arm_req_timer(net_out_t *out, int64_t due)
{
    if (out->req_timer && out->req_timer_due <= due)
        return;
    if (out->req_timer)
        net_timer_cancel(out->loop, out->req_timer);
    out->req_timer_due = due;
    out->req_timer = net_timer_add(out->loop, due - net_now_mono_ms(), net_out_req_timer_fire, out);
}

static void net_out_rearm_req_timer(net_out_t *out)
{
    int64_t due = INT64_MAX;
    for (net_out_req_t *r = out->wait.head; r; r = r->next)
        due = r->deadline < due ? r->deadline : due;
    for (net_out_req_t *r = out->fly.head; r; r = r->next)
        due = r->deadline < due ? r->deadline : due;
    if (due != INT64_MAX)
        net_out_arm_req_timer(out, due);
}

/* Moves the requests of l whose deadline has passed to the done list.
 * Returns how many. */
static int net_out_expire(net_out_t *out, net_out_list_t *l, int64_t now, int sys_errno)
{
    net_out_list_t keep = {0};
    net_out_req_t *req;
    int n = 0;
    while ((req = net_out_pop(l)) != NULL) {
        if (req->deadline > now) {
            net_out_push(&keep, req);
            continue;
        }
        req->err = KERR_REQUEST_TIMED_OUT;
        req->sys_errno = sys_errno;
        net_out_push(&out->done, req);
        n++;
    }
    *l = keep;
    return n;
}

/* A request that times out on the wire takes the connection down: its
 * answer may still come, and would be taken for the next request's. */
static void net_out_req_timer_fire(net_loop_t *loop, void *data)
{
    net_out_t *out = data;
    int64_t now = net_now_mono_ms();
    int down_errno = out->state != NET_OUT_READY && out->last_errno ? out->last_errno : ETIMEDOUT;
    (void)loop;
    out->req_timer = 0;
    net_out_hold(out);
    net_out_expire(out, &out->wait, now, down_errno);
    if (net_out_expire(out, &out->fly, now, ETIMEDOUT) > 0) {
        lg_warn("request to %s:%d timed out: dropping the connection", out->host, out->cfg.port);
        net_out_drop(out, KERR_NETWORK_EXCEPTION, ECONNABORTED);
    } else {
        net_out_run_done(out);
    }
    if (!out->freed)
        net_out_rearm_req_timer(out);
    net_out_release(out);
}

/* ---- sending ---- */

static void net_out_frame(net_out_t *out, net_out_req_t *req)
{
    proto_req_header_t h = {
        .api_key = req->api_key,
        .api_version = req->api_version,
        .correlation_id = out->next_corr,
        .client_id = {out->client_id, out->client_id ? (int32_t)strlen(out->client_id) : -1},
    };
    size_t at = out->wbuf.len;

    req->corr = out->next_corr;
    out->next_corr = out->next_corr == INT32_MAX ? 0 : out->next_corr + 1;
    buf_put_i32(&out->wbuf, 0);
    proto_req_header_encode(&out->wbuf, &h);
    buf_put(&out->wbuf, req->body.p, req->body.len);
    buf_set_i32(&out->wbuf, at, (int32_t)(out->wbuf.len - at - 4));
    buf_free(&req->body);
    buf_init(&req->body);
}

/* Writes what the socket takes. Returns 0, or -1 if the connection was
 * dropped. */
static int net_out_flush(net_out_t *out)
{
    while (out->wpos < out->wbuf.len) {
        struct iovec iov = {out->wbuf.p + out->wpos, out->wbuf.len - out->wpos};
        ssize_t w = out->xprt.ops->writev(out->xprt.ctx, out->io.fd, &iov, 1);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            if (errno == EAGAIN)
                break;
            return net_out_drop(out, KERR_NETWORK_EXCEPTION, errno);
        }
        out->wpos += (size_t)w;
    }
    if (out->wpos == out->wbuf.len)
        out->wpos = out->wbuf.len = 0;
    return net_out_update_events(out);
}

/* Frames what waits, up to max_in_flight on the wire, and writes it. */
static int net_out_pump(net_out_t *out)
{
    while (out->wait.head && out->fly.n < out->cfg.max_in_flight) {
        net_out_req_t *req = net_out_pop(&out->wait);
        net_out_frame(out, req);
        net_out_push(&out->fly, req);
    }
    return net_out_flush(out);
}

void net_out_ready(net_out_t *out)
{
    net_out_pump(out);
}

void net_out_on_writable(net_out_t *out)
{
    net_out_flush(out);
}

static void net_out_kick(net_out_t *out)
{
    if (out->state == NET_OUT_IDLE && out->wait.n > 0)
        net_out_dial(out);
    else if (out->state == NET_OUT_READY)
        net_out_pump(out);
}

static void net_out_kick_deferred(net_loop_t *loop, void *data)
{
    net_out_t *out = data;
    (void)loop;
    out->kick_pending = 0;
    if (!out->freed)
        net_out_kick(out);
    net_out_release(out);
}

/* Sends from the loop, after the current batch of events: net_out_send
 * never calls back from inside, and a burst of sends goes out in one
 * write. */
static void net_out_kick_later(net_out_t *out)
{
    if (out->kick_pending)
        return;
    out->kick_pending = 1;
    net_out_hold(out);
    net_loop_defer(out->loop, net_out_kick_deferred, out);
}

int net_out_send(net_out_t *out, int16_t api_key, int16_t api_version, buf_t *body,
                 int64_t timeout_ms, net_out_cb *cb, void *arg)
{
    if (out->freed) {
        errno = ESHUTDOWN;
        return -1;
    }
    if (body->nspl) {
        errno = EINVAL;
        return -1;
    }
    net_out_req_t *req = xcalloc(1, sizeof(*req));
    req->api_key = api_key;
    req->api_version = api_version;
    req->corr = -1;
    req->body = *body;
    buf_init(body);
    req->cb = cb;
    req->arg = arg;
    req->deadline =
        net_now_mono_ms() + (timeout_ms > 0 ? timeout_ms : out->cfg.request_timeout_ms);
    net_out_push(&out->wait, req);
    net_out_arm_req_timer(out, req->deadline);
    net_out_kick_later(out);
    return 0;
}

/* ---- receiving ---- */

static int32_t net_out_be32(const uint8_t *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
                     p[3]);
}

/* Hands one whole response (without its size) to the oldest request on
 * the wire. Returns -1 if the connection was dropped or freed. */
static int net_out_deliver(net_out_t *out, const uint8_t *frame, size_t len)
{
    net_out_req_t *req = out->fly.head;
    proto_response_header_t rh;
    size_t used = 0;

    proto_response_header_init(&rh);

    if (!req) {
        lg_warn("response from %s:%d with no request outstanding", out->host, out->cfg.port);
        return net_out_drop(out, KERR_NETWORK_EXCEPTION, EPROTO);
    }
    int16_t hv = req->api_key != PROTO_API_API_VERSIONS &&
                 proto_is_flexible(req->api_key, req->api_version);
    if (proto_msg_decode(&proto_msg_response_header, &rh, hv, frame, len, NULL, &used) < 0 ||
        rh.correlation_id != req->corr) {
        lg_warn("response from %s:%d: correlation id %d, expected %d", out->host, out->cfg.port,
                rh.correlation_id, req->corr);
        return net_out_drop(out, KERR_NETWORK_EXCEPTION, EPROTO);
    }
    net_out_pop(&out->fly);
    net_out_call(out, req, KERR_NONE, 0, frame + used, len - used);
    net_out_req_free(req);
    if (out->freed)
        return -1;
    if (out->wait.head)
        net_out_kick_later(out);
    return 0;
}

/* Hands over every whole response buffered. Returns -1 if the connection
 * was dropped or freed meanwhile. */
static int net_out_parse(net_out_t *out)
{
    uint64_t gen = out->gen;
    while (out->rlen - out->rpos >= 4) {
        const uint8_t *p = out->rbuf + out->rpos;
        int32_t size = net_out_be32(p);
        if (size < 4 || size > out->cfg.max_response_bytes) {
            lg_warn("response from %s:%d of %d bytes, outside 4..%d", out->host, out->cfg.port,
                    size, out->cfg.max_response_bytes);
            return net_out_drop(out, KERR_NETWORK_EXCEPTION, size < 4 ? EPROTO : EMSGSIZE);
        }
        if (out->rlen - out->rpos < 4 + (size_t)size)
            break;
        if (net_out_deliver(out, p + 4, (size_t)size) < 0 || out->gen != gen)
            return -1;
        out->rpos += 4 + (size_t)size;
    }
    return 0;
}

/* Room for the rest of the current response, compacting first. The
 * buffer is never moved while a callback may hold a body in it. */
static void net_out_rbuf_room(net_out_t *out)
{
    if (out->rpos == out->rlen) {
        out->rpos = out->rlen = 0;
    } else if (out->rpos > 0) {
        memmove(out->rbuf, out->rbuf + out->rpos, out->rlen - out->rpos);
        out->rlen -= out->rpos;
        out->rpos = 0;
    }
    size_t want = NET_OUT_RBUF_MIN;
    if (out->rlen >= 4) {
        int32_t size = net_out_be32(out->rbuf);
        if (size > 0 && (size_t)size + 4 > want)
            want = (size_t)size + 4;
    }
    if (want < out->rlen + 1024)
        want = out->rlen + 65536;
    if (out->rcap < want) {
        out->rbuf = xrealloc(out->rbuf, want);
        out->rcap = want;
    }
}

void net_out_on_readable(net_out_t *out)
{
    uint64_t gen = out->gen;
    for (int i = 0; i < NET_OUT_READS_PER_EVENT; i++) {
        net_out_rbuf_room(out);
        ssize_t r = out->xprt.ops->read(out->xprt.ctx, out->io.fd, out->rbuf + out->rlen,
                                        out->rcap - out->rlen);
        if (r < 0 && errno == EINTR)
            continue;
        if (r < 0 && errno == EAGAIN)
            return;
        if (r <= 0) {
            net_out_drop(out, KERR_NETWORK_EXCEPTION, r == 0 ? ECONNRESET : errno);
            return;
        }
        out->rlen += (size_t)r;
        if (net_out_parse(out) < 0 || out->freed || out->gen != gen)
            return;
    }
}

int net_out_drop(net_out_t *out, int16_t err, int sys_errno)
{
    if (out->fly.n)
        lg_info("connection to %s:%d lost with %d requests in flight: %s", out->host,
                out->cfg.port, out->fly.n, strerror(sys_errno));
    out->gen++;
    net_out_fail_all(out, &out->fly, err, sys_errno);
    out->wbuf.len = out->wpos = 0;
    out->rpos = out->rlen = 0;
    if (net_out_backoff(out, sys_errno) == 0)
        net_out_run_done(out);
    return -1;
}

/* ---- the connection ---- */

void net_out_config_init(net_out_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->reconnect_backoff_ms = 50;
    cfg->reconnect_backoff_max_ms = 1000;
    cfg->request_timeout_ms = 30000;
    cfg->connect_timeout_ms = 10000;
    cfg->max_in_flight = 5;
    cfg->max_response_bytes = 100 << 20;
}

net_out_t *net_out_new(net_loop_t *loop, const net_out_config_t *cfg)
{
    net_out_t *out = xcalloc(1, sizeof(*out));

    out->cfg = *cfg;
    out->host = xstrdup(cfg->host ? cfg->host : "");
    out->client_id = cfg->client_id ? xstrdup(cfg->client_id) : NULL;
    out->cfg.host = out->host;
    out->cfg.client_id = out->client_id;
    if (out->cfg.max_in_flight < 1)
        out->cfg.max_in_flight = 1;
    if (out->cfg.max_response_bytes < 4)
        out->cfg.max_response_bytes = 100 << 20;
    if (out->cfg.request_timeout_ms <= 0)
        out->cfg.request_timeout_ms = 30000;
    if (out->cfg.connect_timeout_ms <= 0)
        out->cfg.connect_timeout_ms = 10000;
    out->io.fd = -1;
    out->loop = loop;
    out->state = NET_OUT_IDLE;
    out->refs = 1;
    out->next_corr = 1;
    out->rng = cfg->seed ? cfg->seed : (uint64_t)net_now_wall_ms() ^ (uint64_t)(uintptr_t)out;
    out->rng |= 1;
    buf_init(&out->wbuf);
    return out;
}

void net_out_close(net_out_t *out)
{
    net_out_req_t *req;

    net_out_hold(out);
    out->gen++;
    net_out_cancel_dial_timer(out);
    if (out->req_timer)
        net_timer_cancel(out->loop, out->req_timer);
    out->req_timer = 0;
    net_out_sock_close(out);
    out->wbuf.len = out->wpos = 0;
    out->rpos = out->rlen = 0;
    out->state = NET_OUT_IDLE;
    net_out_fail_all(out, &out->fly, KERR_NETWORK_EXCEPTION, ECANCELED);
    net_out_fail_all(out, &out->wait, KERR_NETWORK_EXCEPTION, ECANCELED);
    /* Not net_out_run_done: this runs on when a callback frees. */
    while ((req = net_out_pop(&out->done)) != NULL) {
        net_out_call(out, req, req->err, req->sys_errno, NULL, 0);
        net_out_req_free(req);
    }
    net_out_release(out);
}

void net_out_free(net_out_t *out)
{
    if (!out || out->freed)
        return;
    out->freed = 1;
    net_out_close(out);
    net_out_release(out);
}

net_out_state_t net_out_state(const net_out_t *out)
{
    return out->state;
}

int net_out_in_flight(const net_out_t *out)
{
    return out->fly.n;
}

int net_out_waiting(const net_out_t *out)
{
    return out->wait.n;
}

int net_out_failures(const net_out_t *out)
{
    return out->failures;
}
