/* The transport seam: everything a connection does to its socket goes
 * through one of these vtables, so that plain TCP (net_xprt_tcp.h) and,
 * later, TLS are interchangeable under net_conn and net_out. The idea is
 * HAProxy's xprt layer: the connection owns the buffers, the framing and
 * the event interest; the transport owns the bytes' way on and off the
 * wire.
 *
 * Each call has its system call's contract: it returns what read(2),
 * writev(2) or sendfile(2) would, -1 with errno on failure, EAGAIN when
 * it would block. A transport with state of its own (a TLS session) may
 * need the socket to become readable before it can write, or the other
 * way round (a handshake, a renegotiation): it then fails the call with
 * EAGAIN and its wants() maps the events the connection asked for to the
 * ones to wait for. A transport that never needs that leaves wants NULL,
 * and the connection registers what it asked for as it is.
 *
 * Cost: one indirect call per system call, nothing else on the hot path.
 * Type-only header: cheap to include. */
#ifndef STRAND_NET_XPRT_H
#define STRAND_NET_XPRT_H

#include <stddef.h>
#include <sys/types.h>
#include <sys/uio.h>

typedef struct net_xprt_ops_s {
    const char *name; /* for logs: "tcp" */
    /* Reads up to n bytes into p; 0 at the peer's end of stream. */
    ssize_t (*read)(void *ctx, int fd, void *p, size_t n);
    ssize_t (*writev)(void *ctx, int fd, const struct iovec *iov, int iovcnt);
    /* Sends n bytes of file_fd from *off (advanced by what was sent); 0
     * when the file ends first. */
    ssize_t (*sendfile)(void *ctx, int fd, int file_fd, off_t *off, size_t n);
    /* Ends the sending direction after what was written (TCP FIN, TLS
     * close_notify); reads go on. Returns 0 or -1 with errno. */
    int (*shutdown)(void *ctx, int fd);
    /* Frees ctx and closes fd. */
    void (*close)(void *ctx, int fd);
    /* events (NET_READ | NET_WRITE of net_loop.h) the connection wants to
     * wait for; returns the ones to register instead. NULL: as asked. */
    int (*wants)(void *ctx, int events);
} net_xprt_ops_t;

/* Embedded in each connection: the transport and its per-connection state
 * (NULL for plain TCP). */
typedef struct net_xprt_s {
    const net_xprt_ops_t *ops;
    void *ctx;
} net_xprt_t;

#endif
