#include "net/net_conn.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/uio.h>

#include "net/net_xprt_tcp.h"
#include "util/logging.h"
#include "util/mem.h"

struct net_outq_s {
    net_outq_t *next;
    buf_t buf;
    size_t sent; /* logical bytes of buf already written */
};

/* Stop taking requests while this much is queued for a slow reader. */
#define NET_OUT_HIGH_WATER (4u << 20)
#define NET_RBUF_MIN 4096
#define NET_IOV_MAX 64

static void net_conn_io(net_loop_t *loop, net_io_t *io, int events);
static void net_conn_process(net_conn_t *conn);

/* Connection ids name a connection in the logs, so they must stay unique
 * in the process when several loops (one per core, or two brokers in one
 * test process) accept at once: one relaxed atomic add per accept, off
 * the request path. */
static atomic_uint_fast64_t net_conn_next_id = 1;

static void net_conn_peer(net_conn_t *conn)
{
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);
    char host[INET6_ADDRSTRLEN] = "?";
    int port = 0;

    if (getpeername(conn->io.fd, (struct sockaddr *)&ss, &sl) == 0) {
        if (ss.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&ss;
            inet_ntop(AF_INET, &a->sin_addr, host, sizeof(host));
            port = ntohs(a->sin_port);
        } else if (ss.ss_family == AF_INET6) {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&ss;
            inet_ntop(AF_INET6, &a->sin6_addr, host, sizeof(host));
            port = ntohs(a->sin6_port);
        }
    }
    snprintf(conn->peer, sizeof(conn->peer), "%s:%d", host, port);
}

net_conn_t *net_conn_new(net_loop_t *loop, int fd, const net_conn_ops_t *ops, int32_t max_frame,
                         size_t udata_size)
{
    size_t head = (sizeof(net_conn_t) + 15) & ~(size_t)15;
    net_conn_t *conn = net_loop_conn_alloc(loop, head + udata_size);
    int one = 1;

    conn->alloc_size = head + udata_size;
    conn->udata = udata_size ? (char *)conn + head : NULL;
    conn->io.fd = fd;
    conn->io.cb = net_conn_io;
    conn->io.data = conn;
    net_xprt_tcp_attach(&conn->xprt);
    conn->loop = loop;
    conn->ops = ops;
    conn->max_frame = max_frame;
    conn->refs = 1;
    conn->id = atomic_fetch_add_explicit(&net_conn_next_id, 1, memory_order_relaxed);
    conn->last_active = net_loop_now_mono(loop);
    arena_init(&conn->arena, 4096);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    net_conn_peer(conn);
    if (net_io_set(loop, &conn->io, NET_READ) < 0)
        net_conn_close(conn, strerror(errno));
    return conn;
}

int net_conn_trim(net_conn_t *conn)
{
    if (conn->busy || conn->rlen != conn->rpos || conn->outq_head ||
        (!conn->rbuf && !conn->arena.head))
        return 0;
    free(conn->rbuf);
    conn->rbuf = NULL;
    conn->rpos = conn->rlen = conn->rcap = 0;
    arena_destroy(&conn->arena);
    return 1;
}

void net_conn_hold(net_conn_t *conn)
{
    conn->refs++;
}

static void net_conn_free(net_conn_t *conn)
{
    net_outq_t *q = conn->outq_head;
    while (q) {
        net_outq_t *next = q->next;
        buf_free(&q->buf);
        free(q);
        q = next;
    }
    arena_destroy(&conn->arena);
    free(conn->rbuf);
    net_loop_conn_free(conn->loop, conn, conn->alloc_size);
}

void net_conn_release(net_conn_t *conn)
{
    if (--conn->refs == 0)
        net_conn_free(conn);
}

static void net_conn_release_deferred(net_loop_t *loop, void *data)
{
    (void)loop;
    net_conn_release(data);
}

void net_conn_close(net_conn_t *conn, const char *why)
{
    if (conn->closing)
        return;
    conn->closing = 1;
    if (why)
        lg_info("closing connection %llu from %s: %s", (unsigned long long)conn->id, conn->peer,
                why);
    net_io_del(conn->loop, &conn->io);
    conn->xprt.ops->close(conn->xprt.ctx, conn->io.fd);
    conn->xprt.ctx = NULL;
    conn->io.fd = -1;
    if (conn->ops->on_close)
        conn->ops->on_close(conn);
    /* Later events of this batch may still name the connection. */
    net_loop_defer(conn->loop, net_conn_release_deferred, conn);
}

/* Fills iov with the memory pieces of the queue from the cursor up to the
 * first file piece. Returns the count; *file_q is set to the queue entry
 * whose file piece comes first when the cursor stands on one. */
static int net_conn_gather(net_conn_t *conn, struct iovec *iov, net_outq_t **file_q,
                           int *file_idx)
{
    int n = 0;
    *file_q = NULL;
    for (net_outq_t *q = conn->outq_head; q && n < NET_IOV_MAX; q = q->next) {
        size_t logical = 0, mem = 0, sent = q->sent;
        for (int i = 0; i <= q->buf.nspl && n < NET_IOV_MAX; i++) {
            size_t mem_end = i < q->buf.nspl ? q->buf.spl[i].mem_pos : q->buf.len;
            size_t mlen = mem_end - mem;
            if (sent < logical + mlen) {
                size_t skip = sent > logical ? sent - logical : 0;
                iov[n].iov_base = q->buf.p + mem + skip;
                iov[n].iov_len = mlen - skip;
                n++;
            }
            logical += mlen;
            mem = mem_end;
            if (i == q->buf.nspl)
                break;
            if (sent < logical + q->buf.spl[i].len) {
                if (n == 0) {
                    *file_q = q;
                    *file_idx = i;
                }
                return n;
            }
            logical += q->buf.spl[i].len;
        }
    }
    return n;
}

/* Logical offset in q of the start of splice idx. */
static size_t net_splice_logical(const net_outq_t *q, int idx)
{
    size_t logical = q->buf.spl[idx].mem_pos;
    for (int i = 0; i < idx; i++)
        logical += q->buf.spl[i].len;
    return logical;
}

static void net_conn_advance(net_conn_t *conn, size_t n)
{
    conn->out_pending -= n;
    while (n && conn->outq_head) {
        net_outq_t *q = conn->outq_head;
        size_t left = buf_total(&q->buf) - q->sent;
        if (n < left) {
            q->sent += n;
            return;
        }
        n -= left;
        conn->outq_head = q->next;
        if (!conn->outq_head)
            conn->outq_tail = NULL;
        buf_free(&q->buf);
        free(q);
    }
}

static int net_conn_send_file(net_conn_t *conn, net_outq_t *q, int idx)
{
    buf_splice_t *s = &q->buf.spl[idx];
    size_t done = q->sent - net_splice_logical(q, idx);
    off_t off = (off_t)(s->off + (int64_t)done);
    ssize_t w = conn->xprt.ops->sendfile(conn->xprt.ctx, conn->io.fd, s->fd, &off, s->len - done);
    if (w < 0)
        return errno == EAGAIN || errno == EINTR ? 0 : -1;
    if (w == 0) {
        /* The file is shorter than promised (truncated under us): the
         * frame can no longer be completed, so the stream is lost. */
        errno = EIO;
        return -1;
    }
    net_conn_advance(conn, (size_t)w);
    return 1;
}

/* Writes as much as the socket takes. Returns 0, or -1 on a fatal error. */
static int net_conn_flush(net_conn_t *conn)
{
    struct iovec iov[NET_IOV_MAX];
    while (conn->outq_head) {
        net_outq_t *fq;
        int fidx = 0;
        int n = net_conn_gather(conn, iov, &fq, &fidx);
        if (n == 0 && fq) {
            int r = net_conn_send_file(conn, fq, fidx);
            if (r < 0)
                return -1;
            if (r == 0)
                break;
            continue;
        }
        ssize_t w = conn->xprt.ops->writev(conn->xprt.ctx, conn->io.fd, iov, n);
        if (w < 0) {
            if (errno == EAGAIN || errno == EINTR)
                break;
            return -1;
        }
        net_conn_advance(conn, (size_t)w);
    }
    return 0;
}

static void net_conn_update_events(net_conn_t *conn)
{
    int ev = 0;
    if (conn->closing)
        return;
    if (conn->outq_head)
        ev |= NET_WRITE;
    if (!conn->busy && !conn->eof && conn->out_pending < NET_OUT_HIGH_WATER)
        ev |= NET_READ;
    if (conn->xprt.ops->wants)
        ev = conn->xprt.ops->wants(conn->xprt.ctx, ev);
    if (net_io_set(conn->loop, &conn->io, ev) < 0)
        net_conn_close(conn, strerror(errno));
}

static void net_conn_process_deferred(net_loop_t *loop, void *data)
{
    net_conn_t *conn = data;
    (void)loop;
    if (!conn->closing)
        net_conn_process(conn);
    net_conn_release(conn);
}

static void net_conn_complete(net_conn_t *conn)
{
    conn->busy = 0;
    conn->rpos += conn->cur_frame;
    conn->cur_frame = 0;
    arena_reset(&conn->arena);
    conn->last_active = net_loop_now_mono(conn->loop);
    if (conn->closing)
        return;
    if (net_conn_flush(conn) < 0) {
        net_conn_close(conn, strerror(errno));
        return;
    }
    if (!conn->in_process) {
        /* Answered from outside this connection's own dispatch (a parked
         * fetch woken by another client's produce): take up the next
         * request later, not nested inside the other client's handler. */
        net_conn_hold(conn);
        net_loop_defer(conn->loop, net_conn_process_deferred, conn);
    }
}

void net_conn_reply(net_conn_t *conn, buf_t *resp)
{
    if (!conn->closing && buf_total(resp)) {
        net_outq_t *q = xcalloc(1, sizeof(*q));
        q->buf = *resp;
        conn->out_pending += buf_total(resp);
        if (conn->outq_tail)
            conn->outq_tail->next = q;
        else
            conn->outq_head = q;
        conn->outq_tail = q;
    } else {
        buf_free(resp);
    }
    buf_init(resp);
    net_conn_complete(conn);
}

void net_conn_done(net_conn_t *conn)
{
    net_conn_complete(conn);
}

static int32_t net_be32(const uint8_t *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) |
                     p[3]);
}

/* Dispatches buffered whole frames while no request is outstanding.
 * Returns after the first one that stays outstanding. */
static void net_conn_process(net_conn_t *conn)
{
    conn->in_process = 1;
    while (!conn->closing && !conn->busy && conn->out_pending < NET_OUT_HIGH_WATER) {
        size_t avail = conn->rlen - conn->rpos;
        if (avail < 4)
            break;
        int32_t size = net_be32(conn->rbuf + conn->rpos);
        if (size < 0 || size > conn->max_frame) {
            char why[96];
            snprintf(why, sizeof(why), "frame size %d outside 0..%d (socket.request.max.bytes)",
                     size, conn->max_frame);
            net_conn_close(conn, why);
            break;
        }
        if (avail < 4 + (size_t)size)
            break;
        conn->busy = 1;
        conn->cur_frame = 4 + (size_t)size;
        conn->ops->on_request(conn, conn->rbuf + conn->rpos + 4, (size_t)size);
    }
    conn->in_process = 0;
    if (!conn->closing && conn->eof && !conn->busy && !conn->outq_head)
        net_conn_close(conn, conn->rlen > conn->rpos ? "peer closed in the middle of a request"
                                                     : NULL);
    net_conn_update_events(conn);
}

/* Makes room for the rest of the current frame, compacting first. */
static void net_conn_rbuf_room(net_conn_t *conn)
{
    /* A drained buffer is kept, however big: a busy producer would
     * otherwise fault in a fresh one per request. Idle connections give
     * theirs back through net_conn_trim(). */
    if (conn->rpos == conn->rlen) {
        conn->rpos = conn->rlen = 0;
    } else if (conn->rpos > 0) {
        memmove(conn->rbuf, conn->rbuf + conn->rpos, conn->rlen - conn->rpos);
        conn->rlen -= conn->rpos;
        conn->rpos = 0;
    }
    size_t want = NET_RBUF_MIN;
    if (conn->rlen >= 4) {
        int32_t size = net_be32(conn->rbuf);
        if (size > 0 && size <= conn->max_frame && (size_t)size + 4 > want)
            want = (size_t)size + 4;
    }
    if (want < conn->rlen + 1024)
        want = conn->rlen + 65536;
    if (conn->rcap < want) {
        conn->rbuf = xrealloc(conn->rbuf, want);
        conn->rcap = want;
    }
}

static int net_conn_have_frame(const net_conn_t *conn)
{
    size_t avail = conn->rlen - conn->rpos;
    if (avail < 4)
        return 0;
    int32_t size = net_be32(conn->rbuf + conn->rpos);
    return size < 0 || avail >= 4 + (size_t)size;
}

/* Reads until EAGAIN, EOF, or one whole frame is buffered: a client that
 * pipelines without reading its answers is held back by TCP, not by our
 * memory. */
static void net_conn_read(net_conn_t *conn)
{
    for (;;) {
        net_conn_rbuf_room(conn);
        ssize_t r = conn->xprt.ops->read(conn->xprt.ctx, conn->io.fd, conn->rbuf + conn->rlen,
                                         conn->rcap - conn->rlen);
        if (r < 0) {
            if (errno == EINTR)
                continue;
            if (errno != EAGAIN)
                net_conn_close(conn, strerror(errno));
            return;
        }
        if (r == 0) {
            conn->eof = 1;
            return;
        }
        conn->rlen += (size_t)r;
        if (conn->rlen < conn->rcap || net_conn_have_frame(conn))
            return;
    }
}

static void net_conn_io(net_loop_t *loop, net_io_t *io, int events)
{
    net_conn_t *conn = io->data;
    if (conn->closing)
        return;
    net_conn_hold(conn);
    if ((events & NET_WRITE) && net_conn_flush(conn) < 0)
        net_conn_close(conn, strerror(errno));
    if (!conn->closing && (events & NET_READ) && !conn->busy) {
        net_conn_read(conn);
        conn->last_active = net_loop_now_mono(loop);
    }
    if (!conn->closing)
        net_conn_process(conn);
    net_conn_release(conn);
}
