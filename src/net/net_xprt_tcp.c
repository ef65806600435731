/* Plain TCP behind the transport seam. Each function is the bare system
 * call: the connection above handles EINTR, EAGAIN and short transfers,
 * so that a TLS transport can share that logic. */
#include "net/net_xprt_tcp.h"

#include <sys/sendfile.h>
#include <sys/socket.h>
#include <unistd.h>

static ssize_t net_xprt_tcp_read(void *ctx, int fd, void *p, size_t n)
{
    (void)ctx;
    return read(fd, p, n);
}

static ssize_t net_xprt_tcp_writev(void *ctx, int fd, const struct iovec *iov, int iovcnt)
{
    (void)ctx;
    return writev(fd, iov, iovcnt);
}

static ssize_t net_xprt_tcp_sendfile(void *ctx, int fd, int file_fd, off_t *off, size_t n)
{
    (void)ctx;
    return sendfile(fd, file_fd, off, n);
}

static int net_xprt_tcp_shutdown(void *ctx, int fd)
{
    (void)ctx;
    return shutdown(fd, SHUT_WR);
}

static void net_xprt_tcp_close(void *ctx, int fd)
{
    (void)ctx;
    close(fd);
}

static const net_xprt_ops_t net_xprt_tcp_ops = {
    .name = "tcp",
    .read = net_xprt_tcp_read,
    .writev = net_xprt_tcp_writev,
    .sendfile = net_xprt_tcp_sendfile,
    .shutdown = net_xprt_tcp_shutdown,
    .close = net_xprt_tcp_close,
    .wants = NULL,
};

void net_xprt_tcp_attach(net_xprt_t *x)
{
    x->ops = &net_xprt_tcp_ops;
    x->ctx = NULL;
}
