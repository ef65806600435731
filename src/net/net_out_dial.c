/* The outbound connection's way to a connected socket: resolve the host
 * once per attempt, try each address with a non-blocking connect (each
 * under the connect timeout), and after a failed attempt or a lost
 * connection wait out Kafka's reconnect backoff before the next one:
 *
 *   backoff(n) = reconnect.backoff.ms * 2^min(n, log2(max / initial))
 *                * random(0.8, 1.2), at most reconnect.backoff.max.ms
 *
 * where n counts the failures since the last successful connect (so 50,
 * 100, 200, 400, 800, 1000, 1000 ms ... by default), and a constant
 * reconnect.backoff.ms when the maximum is not above it, as the Java
 * client computes it. The jitter keeps the followers of a restarted
 * leader from reconnecting in step. */
#include <errno.h>
#include <math.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>

#include "net/net_out_int.h"
#include "net/net_xprt_tcp.h"
#include "util/kerr.h"
#include "util/logging.h"

/* Kafka's reconnect jitter: +-20 %. */
#define NET_OUT_JITTER 0.2

static void net_out_try_next(net_out_t *out);

/* The unjittered term and whether it grows at all. */
static double net_out_backoff_term(const net_out_config_t *cfg, int failures, int *grows)
{
    double init = (double)cfg->reconnect_backoff_ms, max = (double)cfg->reconnect_backoff_max_ms;
    *grows = max > init;
    if (!*grows)
        return init < 0 ? 0 : init;
    double exp_max = log2(max / (init > 1 ? init : 1));
    double e = failures < exp_max ? (double)failures : exp_max;
    return (init < 0 ? 0 : init) * pow(2.0, e);
}

int64_t net_out_backoff_base(const net_out_config_t *cfg, int failures)
{
    int grows;
    double term = net_out_backoff_term(cfg, failures, &grows);
    double max = (double)cfg->reconnect_backoff_max_ms;
    return (int64_t)(grows && term > max ? max : term);
}

/* xorshift64*: a uniform double in [0, 1) from the connection's own
 * state, so that no generator is shared between connections or threads. */
static double net_out_rand01(net_out_t *out)
{
    uint64_t x = out->rng;
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    out->rng = x;
    return (double)((x * 2685821657736338717ULL) >> 11) / 9007199254740992.0;
}

static int64_t net_out_backoff_ms(net_out_t *out)
{
    int grows;
    double term = net_out_backoff_term(&out->cfg, out->failures, &grows);
    if (!grows)
        return (int64_t)term;
    double r = 1.0 - NET_OUT_JITTER + 2.0 * NET_OUT_JITTER * net_out_rand01(out);
    double v = term * r, max = (double)out->cfg.reconnect_backoff_max_ms;
    return (int64_t)(v > max ? max : v);
}

int net_out_set_state(net_out_t *out, net_out_state_t state, int err)
{
    out->state = state;
    if (!out->cfg.on_state)
        return 0;
    out->cfg.on_state(out, state, err, out->cfg.state_arg);
    return out->freed ? -1 : 0;
}

void net_out_cancel_dial_timer(net_out_t *out)
{
    if (out->dial_timer)
        net_timer_cancel(out->loop, out->dial_timer);
    out->dial_timer = 0;
}

static void net_out_fd_close(net_out_t *out)
{
    if (out->io.fd < 0)
        return;
    net_io_del(out->loop, &out->io);
    out->xprt.ops->close(out->xprt.ctx, out->io.fd);
    out->xprt.ctx = NULL;
    out->io.fd = -1;
}

void net_out_sock_close(net_out_t *out)
{
    net_out_fd_close(out);
    if (out->addrs)
        freeaddrinfo(out->addrs);
    out->addrs = out->addr_next = NULL;
}

int net_out_update_events(net_out_t *out)
{
    int ev = 0;
    if (out->io.fd < 0)
        return 0;
    if (out->state == NET_OUT_CONNECTING)
        ev = NET_WRITE;
    else if (out->state == NET_OUT_READY)
        ev = NET_READ | (out->wpos < out->wbuf.len ? NET_WRITE : 0);
    if (out->xprt.ops->wants)
        ev = out->xprt.ops->wants(out->xprt.ctx, ev);
    if (net_io_set(out->loop, &out->io, ev) == 0)
        return 0;
    if (out->state == NET_OUT_READY)
        return net_out_drop(out, KERR_NETWORK_EXCEPTION, errno);
    out->last_errno = errno;
    net_out_fd_close(out);
    net_out_try_next(out);
    return -1;
}

static void net_out_backoff_done(net_loop_t *loop, void *data)
{
    net_out_t *out = data;
    (void)loop;
    out->dial_timer = 0;
    if (out->state != NET_OUT_BACKOFF)
        return;
    net_out_hold(out);
    if (out->wait.n > 0)
        net_out_dial(out);
    else
        net_out_set_state(out, NET_OUT_IDLE, 0);
    net_out_release(out);
}

int net_out_backoff(net_out_t *out, int err)
{
    int64_t ms = net_out_backoff_ms(out);
    out->failures++;
    out->last_errno = err;
    net_out_sock_close(out);
    net_out_cancel_dial_timer(out);
    lg_debug("connection to %s:%d: %s; next attempt in %lld ms (failure %d)", out->host,
             out->cfg.port, strerror(err), (long long)ms, out->failures);
    out->dial_timer = net_timer_add(out->loop, ms, net_out_backoff_done, out);
    return net_out_set_state(out, NET_OUT_BACKOFF, err);
}

static void net_out_connected(net_out_t *out)
{
    net_out_cancel_dial_timer(out);
    if (out->addrs)
        freeaddrinfo(out->addrs);
    out->addrs = out->addr_next = NULL;
    if (out->failures)
        lg_info("connected to %s:%d after %d failed attempts", out->host, out->cfg.port,
                out->failures);
    out->failures = 0;
    out->last_errno = 0;
    if (net_out_set_state(out, NET_OUT_READY, 0) < 0)
        return;
    net_out_ready(out);
}

static void net_out_connect_timeout(net_loop_t *loop, void *data)
{
    net_out_t *out = data;
    (void)loop;
    out->dial_timer = 0;
    if (out->state != NET_OUT_CONNECTING)
        return;
    net_out_hold(out);
    out->last_errno = ETIMEDOUT;
    net_out_fd_close(out);
    net_out_try_next(out);
    net_out_release(out);
}

/* The pending connect finished (or the event is stale: still under way). */
static void net_out_on_connect(net_out_t *out)
{
    int err = 0;
    socklen_t len = sizeof(err);
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);

    if (getsockopt(out->io.fd, SOL_SOCKET, SO_ERROR, &err, &len) < 0)
        err = errno;
    if (!err && getpeername(out->io.fd, (struct sockaddr *)&ss, &sl) < 0) {
        if (errno == ENOTCONN)
            return;
        err = errno;
    }
    if (err) {
        out->last_errno = err;
        net_out_fd_close(out);
        net_out_try_next(out);
        return;
    }
    net_out_connected(out);
}

static void net_out_io(net_loop_t *loop, net_io_t *io, int events)
{
    net_out_t *out = io->data;
    uint64_t gen = out->gen;
    (void)loop;
    net_out_hold(out);
    if (out->state == NET_OUT_CONNECTING) {
        net_out_on_connect(out);
    } else if (out->state == NET_OUT_READY) {
        if (events & NET_WRITE)
            net_out_on_writable(out);
        if (!out->freed && out->gen == gen && (events & NET_READ))
            net_out_on_readable(out);
    }
    net_out_release(out);
}

static void net_out_sockopts(net_out_t *out, int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    if (out->cfg.send_buffer_bytes > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &out->cfg.send_buffer_bytes, sizeof(int));
    if (out->cfg.receive_buffer_bytes > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &out->cfg.receive_buffer_bytes, sizeof(int));
}

/* Returns 0 when connected at once, 1 when under way, -1 (last_errno
 * set, nothing left open) when this address failed. */
static int net_out_connect_addr(net_out_t *out, const struct addrinfo *ai)
{
    int fd = socket(ai->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    if (fd < 0) {
        out->last_errno = errno;
        return -1;
    }
    net_out_sockopts(out, fd);
    out->io.fd = fd;
    out->io.cb = net_out_io;
    out->io.data = out;
    out->io.events = 0;
    net_xprt_tcp_attach(&out->xprt);
    if (connect(fd, ai->ai_addr, ai->ai_addrlen) == 0)
        return 0;
    if (errno == EINPROGRESS)
        return 1;
    out->last_errno = errno;
    net_out_fd_close(out);
    return -1;
}

/* Tries the attempt's remaining addresses; when none is left the attempt
 * has failed. */
static void net_out_try_next(net_out_t *out)
{
    while (out->addr_next) {
        struct addrinfo *ai = out->addr_next;
        out->addr_next = ai->ai_next;
        int r = net_out_connect_addr(out, ai);
        if (r == 0) {
            net_out_connected(out);
            return;
        }
        if (r == 1) {
            net_out_cancel_dial_timer(out);
            out->dial_timer =
                net_timer_add(out->loop, out->cfg.connect_timeout_ms, net_out_connect_timeout, out);
            net_out_update_events(out);
            return;
        }
    }
    net_out_backoff(out, out->last_errno ? out->last_errno : EHOSTUNREACH);
}

void net_out_dial(net_out_t *out)
{
    struct addrinfo hints;
    char port[16];
    int rc;

    net_out_sock_close(out);
    net_out_cancel_dial_timer(out);
    if (net_out_set_state(out, NET_OUT_CONNECTING, 0) < 0)
        return;
    memset(&hints, 0, sizeof(hints));
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_NUMERICSERV;
    snprintf(port, sizeof(port), "%d", out->cfg.port);
    rc = getaddrinfo(out->host, port, &hints, &out->addrs);
    if (rc != 0) {
        int err = rc == EAI_SYSTEM ? errno : EHOSTUNREACH;
        lg_warn("cannot resolve %s: %s", out->host, gai_strerror(rc));
        out->addrs = NULL;
        net_out_backoff(out, err);
        return;
    }
    out->addr_next = out->addrs;
    out->last_errno = 0;
    net_out_try_next(out);
}
