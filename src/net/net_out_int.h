/* Internals of the outbound connection shared by its two files:
 * net_out.c (requests, framing, responses, timeouts, the public API) and
 * net_out_dial.c (resolving, connecting, backoff, the socket's events).
 *
 * Lifetime. The owner's reference is dropped by net_out_free; every entry
 * from the loop (io event, timer, deferred kick) holds one more for its
 * duration, and after each user callback checks `freed` before it touches
 * anything else, so a callback may free the connection. */
#ifndef STRAND_NET_OUT_INT_H
#define STRAND_NET_OUT_INT_H

#include <netdb.h>

#include "net/net_out.h"
#include "net/net_xprt.h"

typedef struct net_out_req_s net_out_req_t;

struct net_out_req_s {
    net_out_req_t *next;
    int16_t api_key, api_version;
    int32_t corr;      /* -1 until sent */
    int64_t deadline;  /* monotonic ms */
    buf_t body;        /* until copied into the output buffer */
    net_out_cb *cb;
    void *arg;
    int16_t err;       /* on the done list: the outcome to report */
    int sys_errno;
};

/* A FIFO of requests. */
typedef struct net_out_list_s {
    net_out_req_t *head, *tail;
    int n;
} net_out_list_t;

struct net_out_s {
    net_io_t io;       /* fd -1 while disconnected */
    net_xprt_t xprt;
    net_loop_t *loop;
    net_out_config_t cfg; /* host and client_id point at the copies below */
    char *host, *client_id;
    net_out_state_t state;

    net_out_list_t wait; /* not yet sent */
    net_out_list_t fly;  /* on the wire, oldest first */
    net_out_list_t done; /* failed, callback not yet run */
    int32_t next_corr;

    buf_t wbuf;        /* framed requests not yet written */
    size_t wpos;
    uint8_t *rbuf;     /* response bytes: [rpos, rlen) unconsumed */
    size_t rpos, rlen, rcap;
    uint64_t gen;      /* bumped whenever the connection is dropped */

    struct addrinfo *addrs, *addr_next; /* this attempt's addresses */
    int failures;      /* consecutive failed attempts or lost connections */
    int last_errno;    /* of the last failed attempt, 0 once connected */
    net_timer_id_t dial_timer;  /* backoff wait or connect timeout */
    net_timer_id_t req_timer;   /* earliest request deadline */
    int64_t req_timer_due;
    uint64_t rng;      /* xorshift state of the jitter */

    int refs;
    int freed;
    int kick_pending;  /* a deferred net_out_kick is queued */
};

/* net_out_dial.c */
/* Starts connecting (resolve, then the addresses in turn). */
void net_out_dial(net_out_t *out);
/* Closes the socket and forgets the attempt's addresses. */
void net_out_sock_close(net_out_t *out);
/* After a failed attempt or a lost connection: waits out the backoff
 * (NET_OUT_BACKOFF), then connects again if requests wait. Returns -1 if
 * the state callback freed the connection. */
int net_out_backoff(net_out_t *out, int err);
/* Registers the socket's events for the current state. Returns 0, or -1
 * if that failed and the connection (or this attempt) was dropped. */
int net_out_update_events(net_out_t *out);
/* Reports a state change to cfg.on_state; returns 0, or -1 if the
 * callback freed the connection. */
int net_out_set_state(net_out_t *out, net_out_state_t state, int err);
void net_out_cancel_dial_timer(net_out_t *out);

/* net_out.c */
/* The socket is connected: sends what waits. */
void net_out_ready(net_out_t *out);
/* The socket can be written / read. */
void net_out_on_writable(net_out_t *out);
void net_out_on_readable(net_out_t *out);
/* Drops the connection: requests on the wire fail with (err, sys_errno)
 * and their callbacks run; then the backoff starts. Returns -1 (the
 * connection is gone; `freed` tells whether a callback freed it). */
int net_out_drop(net_out_t *out, int16_t err, int sys_errno);
void net_out_hold(net_out_t *out);
void net_out_release(net_out_t *out);

#endif
