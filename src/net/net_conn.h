/* A client connection: Kafka's length-prefixed framing in, an ordered
 * queue of responses out. Requests are handed up one at a time, in order:
 * the next frame is dispatched only after the previous request has been
 * answered (net_conn_reply) or completed without answer (net_conn_done),
 * which keeps responses in request order even when a handler answers later
 * (long-poll fetch). While a request is outstanding the socket is not read,
 * as Kafka mutes a channel, so the frame bytes stay where they are and
 * decoded requests may point into them. Every byte goes through the
 * connection's transport (net_xprt.h): plain TCP today. */
#ifndef STRAND_NET_CONN_H
#define STRAND_NET_CONN_H

#include <stddef.h>
#include <stdint.h>

#include "net/net_loop.h"
#include "net/net_xprt.h"
#include "util/arena.h"
#include "util/buf.h"

typedef struct net_conn_s net_conn_t;

typedef struct net_conn_ops_s {
    /* A whole frame (without its size prefix) has arrived. frame stays
     * valid and writable until the request completes. */
    void (*on_request)(net_conn_t *conn, uint8_t *frame, size_t len);
    /* The connection is closing: drop every reference to it. */
    void (*on_close)(net_conn_t *conn);
} net_conn_ops_t;

typedef struct net_outq_s net_outq_t;

struct net_conn_s {
    net_io_t io;
    net_xprt_t xprt;    /* how bytes move on io.fd */
    net_loop_t *loop;
    const net_conn_ops_t *ops;
    void *udata;        /* upper layer's per-connection state: udata_size
                           bytes allocated with the connection, NULL once
                           the connection has closed */
    size_t alloc_size;
    arena_t arena;      /* per-request scratch, reset when a request completes */
    char peer[64];      /* "ip:port", for logs */
    uint64_t id;
    int32_t max_frame;  /* socket.request.max.bytes */
    int64_t last_active; /* monotonic ms */

    uint8_t *rbuf;
    size_t rpos, rlen, rcap; /* unconsumed bytes are rbuf[rpos, rlen) */
    size_t cur_frame;    /* bytes of the outstanding request's frame incl. prefix */
    int busy;            /* a request is outstanding */
    int in_process;      /* inside net_conn_process: do not recurse */
    int closing;
    int refs;
    int eof;

    net_outq_t *outq_head, *outq_tail;
    size_t out_pending;  /* bytes queued and not yet written */

    net_conn_t *next, *prev; /* owner's list of connections */
};

/* Wraps an accepted socket, with udata_size zeroed bytes for the upper
 * layer at conn->udata. Returns a connection freed by the loop after it
 * closes, never NULL. */
net_conn_t *net_conn_new(net_loop_t *loop, int fd, const net_conn_ops_t *ops, int32_t max_frame,
                         size_t udata_size);
/* Queues resp as the answer to the outstanding request and completes it.
 * Takes ownership of resp's contents (resp itself is reinitialised). */
void net_conn_reply(net_conn_t *conn, buf_t *resp);
/* Completes the outstanding request without an answer (acks=0). */
void net_conn_done(net_conn_t *conn);
/* Closes after logging why; safe to call from callbacks. */
void net_conn_close(net_conn_t *conn, const char *why);
/* Gives back the buffers of a connection with nothing in flight, so that
 * thousands of idle clients cost little memory. Returns 1 if it freed
 * anything, 0 otherwise. */
int net_conn_trim(net_conn_t *conn);
void net_conn_hold(net_conn_t *conn);
void net_conn_release(net_conn_t *conn);

#endif
