/* Connections to the two brokers: one blocking socket each, a request
 * framed by hand (so that a case can lie in its header or size), and the
 * marker that tells "no answer" from "slow answer" without waiting out a
 * timeout: after each case an ApiVersions v0 request follows on the same
 * connection, and a broker answers in order, so the marker's answer
 * coming first means the case got none. */
#include "diff/diff.h"

#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "testlib/testlib.h"
#include "util/mem.h"

#define DIFF_MARKER_CORR 0x7fff0000
#define DIFF_MAX_ANSWER (64 << 20)

void diff_broker_init(diff_broker_t *b, const char *label, const char *bootstrap)
{
    memset(b, 0, sizeof(*b));
    b->label = label;
    snprintf(b->bootstrap, sizeof(b->bootstrap), "%s", bootstrap);
    b->fd = -1;
    b->corr = 1;
    for (int k = 0; k < DIFF_MAX_KEY; k++)
        b->vmin[k] = b->vmax[k] = -1;
    arena_init(&b->arena, 1 << 16);
}

void diff_broker_free(diff_broker_t *b)
{
    diff_broker_disconnect(b);
    arena_destroy(&b->arena);
}

int diff_broker_connect(diff_broker_t *b)
{
    if (b->fd >= 0)
        return 0;
    for (int i = 0; i < 50 && b->fd < 0; i++) {
        b->fd = tl_connect(b->bootstrap, 5000);
        if (b->fd < 0)
            usleep(100 * 1000);
    }
    return b->fd < 0 ? -1 : 0;
}

void diff_broker_disconnect(diff_broker_t *b)
{
    if (b->fd >= 0)
        close(b->fd);
    b->fd = -1;
}

static double diff_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Reads n bytes before the deadline: 1 done, 0 closed before any byte of
 * a frame, -1 timeout, -2 closed or failed in mid-frame. */
static int diff_read(int fd, uint8_t *p, size_t n, double deadline, int first)
{
    size_t got = 0;
    while (got < n) {
        int ms = (int)((deadline - diff_now()) * 1000);
        struct pollfd pfd = {fd, POLLIN, 0};
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

/* One frame into the broker's arena: 1, or the diff_read codes. */
static int diff_recv(diff_broker_t *b, double deadline, uint8_t **frame, size_t *len)
{
    uint8_t sz[4];
    int rc = diff_read(b->fd, sz, 4, deadline, 1);
    if (rc != 1)
        return rc;
    int32_t n = tl_get_i32(sz);
    if (n < 4 || n > DIFF_MAX_ANSWER)
        return -2;
    *frame = arena_alloc(&b->arena, (size_t)n);
    *len = (size_t)n;
    return diff_read(b->fd, *frame, (size_t)n, deadline + 5, 0) == 1 ? 1 : -2;
}

static void diff_send_marker(diff_broker_t *b)
{
    buf_t m;
    buf_init(&m);
    diff_frame(&m, PROTO_API_API_VERSIONS, 0, DIFF_MARKER_CORR, "strand-diff", NULL, 0);
    tl_send_all(b->fd, m.p, m.len);
    buf_free(&m);
}

/* The response header: v1 (a tagged section) when flexible, but
 * ApiVersions always answers with v0. Returns its size, 0 if malformed. */
static size_t diff_resp_hdr_len(int16_t key, int16_t ver, const uint8_t *p, size_t len)
{
    proto_response_header_t h;
    size_t used = 0;
    int16_t hv = key != PROTO_API_API_VERSIONS && proto_is_flexible(key, ver) ? 1 : 0;
    if (proto_msg_decode(&proto_msg_response_header, &h, hv, p, len, NULL, &used) < 0)
        return 0;
    return used;
}

static void diff_answer_set(diff_answer_t *ans, int outcome, const uint8_t *body, size_t len)
{
    ans->outcome = outcome;
    ans->body = body;
    ans->len = len;
}

/* 1 when fd has something to read (or was closed) within ms. */
static int diff_readable(int fd, int ms)
{
    struct pollfd pfd = {fd, POLLIN, 0};
    int rc;
    while ((rc = poll(&pfd, 1, ms)) < 0 && errno == EINTR)
        ;
    return rc > 0;
}

/* 1 when the broker answers an ApiVersions request on a new connection
 * within 2 s: it is alive and not too busy to answer. */
static int diff_alive(diff_broker_t *b)
{
    diff_broker_t probe;
    uint8_t *f;
    size_t n;
    diff_broker_init(&probe, b->label, b->bootstrap);
    probe.fd = tl_connect(b->bootstrap, 2000);
    int ok = probe.fd >= 0;
    if (ok) {
        diff_send_marker(&probe);
        ok = diff_recv(&probe, diff_now() + 2, &f, &n) == 1;
    }
    diff_broker_free(&probe);
    return ok;
}

/* How long to wait for a case: a broker answers every request but a long
 * poll at once, so after 0.3 s a probe on another connection
 * asks whether the broker is alive; if it is, this connection gets 1.5 s
 * more (a request the broker never answers costs about two seconds, not
 * the whole timeout); if not, the broker is slow and gets the whole of it. */
static double diff_deadline(diff_broker_t *b, double deadline)
{
    if (diff_readable(b->fd, 300) || !diff_alive(b))
        return deadline;
    double next = diff_now() + 1.5;
    return next < deadline ? next : deadline;
}

/* Reads what follows a sent case: its answer (then the marker's, which
 * is dropped), the marker's alone, or a close. */
static void diff_collect(diff_broker_t *b, int16_t key, int16_t ver, int32_t corr, int marker,
                         double deadline, diff_answer_t *ans)
{
    uint8_t *f = NULL;
    size_t n = 0;
    int rc = diff_recv(b, diff_deadline(b, deadline), &f, &n);
    if (rc != 1) {
        diff_answer_set(ans, rc == -1 ? DIFF_TIMEOUT : DIFF_CLOSED, NULL, 0);
        return;
    }
    int32_t got = tl_get_i32(f);
    if (marker && got == DIFF_MARKER_CORR && corr != DIFF_MARKER_CORR) {
        diff_answer_set(ans, DIFF_NOANSWER, NULL, 0);
        return;
    }
    if (got != corr) {
        diff_answer_set(ans, DIFF_WRONGID, NULL, 0);
        diff_broker_disconnect(b);
        return;
    }
    size_t hl = diff_resp_hdr_len(key, ver, f, n);
    diff_answer_set(ans, DIFF_ANSWERED, f + (hl ? hl : n), hl ? n - hl : 0);
    if (marker && diff_recv(b, deadline, &f, &n) != 1)
        diff_broker_disconnect(b);
}

void diff_broker_send(diff_broker_t *b, const buf_t *frame, int32_t corr, int marker,
                      int timeout_ms, diff_answer_t *ans)
{
    int16_t key = -1, ver = -1;
    if (diff_broker_connect(b) < 0) {
        diff_answer_set(ans, DIFF_CLOSED, NULL, 0);
        return;
    }
    if (frame->len >= 8) {
        key = (int16_t)tl_get_i16(frame->p + 4);
        ver = (int16_t)tl_get_i16(frame->p + 6);
    }
    if (tl_send_all(b->fd, frame->p, frame->len) < 0) {
        diff_broker_disconnect(b);
        diff_answer_set(ans, DIFF_CLOSED, NULL, 0);
        return;
    }
    if (marker)
        diff_send_marker(b);
    diff_collect(b, key, ver, corr, marker, diff_now() + timeout_ms / 1000.0, ans);
    if (ans->outcome != DIFF_ANSWERED && ans->outcome != DIFF_NOANSWER)
        diff_broker_disconnect(b);
}

void diff_frame(buf_t *out, int16_t key, int16_t ver, int32_t corr, const char *client_id,
                const uint8_t *body, size_t len)
{
    const proto_api_info_t *api = proto_api_info(key);
    int flex = api && api->flex_min >= 0 && ver >= api->flex_min;
    size_t start = out->len;
    buf_put_i32(out, 0);
    buf_put_i16(out, key);
    buf_put_i16(out, ver);
    buf_put_i32(out, corr);
    if (client_id) {
        buf_put_i16(out, (int16_t)strlen(client_id));
        buf_put(out, client_id, strlen(client_id));
    } else {
        buf_put_i16(out, -1);
    }
    if (flex)
        buf_put_uvarint(out, 0);
    if (len)
        buf_put(out, body, len);
    buf_set_i32(out, start, (int32_t)(out->len - start - 4));
}

int diff_broker_call(diff_broker_t *b, int16_t key, int16_t ver, const void *req, void *resp)
{
    const proto_msg_t *rq = proto_msg_lookup(key, 0), *rs = proto_msg_lookup(key, 1);
    buf_t body, frame;
    diff_answer_t ans;
    int32_t corr = b->corr++;
    buf_init(&body);
    buf_init(&frame);
    proto_msg_encode(rq, req, ver, &body);
    diff_frame(&frame, key, ver, corr, "strand-diff", body.p, body.len);
    diff_broker_send(b, &frame, corr, 0, 30000, &ans);
    buf_free(&body);
    buf_free(&frame);
    if (ans.outcome != DIFF_ANSWERED ||
        proto_msg_decode(rs, resp, ver, ans.body, ans.len, &b->arena, NULL) < 0) {
        tl_log("%s: set-up %s v%d: no answer that decodes (outcome %d)", b->label,
               diff_api_name(key), ver, ans.outcome);
        return -1;
    }
    return 0;
}

int diff_broker_versions(diff_broker_t *b)
{
    proto_api_versions_req_t req;
    proto_api_versions_resp_t resp;
    proto_api_versions_req_init(&req);
    req.client_software_name = PROTO_STR("strand-diff");
    req.client_software_version = PROTO_STR("1.0");
    if (diff_broker_call(b, PROTO_API_API_VERSIONS, 3, &req, &resp) < 0 || resp.error_code)
        return -1;
    for (int i = 0; i < resp.api_keys.n; i++) {
        int16_t k = resp.api_keys.v[i].api_key;
        if (k >= 0 && k < DIFF_MAX_KEY) {
            b->vmin[k] = resp.api_keys.v[i].min_version;
            b->vmax[k] = resp.api_keys.v[i].max_version;
        }
    }
    return 0;
}
