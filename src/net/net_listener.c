#include "net/net_listener.h"

#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "util/logging.h"
#include "util/mem.h"

struct net_listener_s {
    net_io_t io;
    net_loop_t *loop;
    net_accept_cb *cb;
    void *data;
    int port;
};

static void net_listener_io(net_loop_t *loop, net_io_t *io, int events)
{
    net_listener_t *lst = io->data;
    (void)loop;
    (void)events;
    /* A bounded batch keeps one accept storm from starving the others. */
    for (int i = 0; i < 64; i++) {
        int fd = accept4(io->fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
        if (fd < 0) {
            if (errno == EMFILE || errno == ENFILE)
                lg_warn("accept: %s", strerror(errno));
            return;
        }
        lst->cb(lst, fd, lst->data);
    }
}

static int net_listener_bind(const char *host, int port)
{
    struct addrinfo hints = {0}, *res = NULL;
    char portstr[16];
    int fd = -1, one = 1, err;

    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    hints.ai_flags = AI_PASSIVE;
    snprintf(portstr, sizeof(portstr), "%d", port);
    err = getaddrinfo(host && *host ? host : NULL, portstr, &hints, &res);
    if (err) {
        errno = EADDRNOTAVAIL;
        return -1;
    }
    for (struct addrinfo *ai = res; ai; ai = ai->ai_next) {
        fd = socket(ai->ai_family, ai->ai_socktype | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
        if (fd < 0)
            continue;
        setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
        if (bind(fd, ai->ai_addr, ai->ai_addrlen) == 0 && listen(fd, 1024) == 0)
            break;
        err = errno;
        close(fd);
        fd = -1;
        errno = err;
    }
    freeaddrinfo(res);
    return fd;
}

net_listener_t *net_listener_new(net_loop_t *loop, const char *host, int port,
                                 net_accept_cb *cb, void *data)
{
    int fd = net_listener_bind(host, port);
    if (fd < 0)
        return NULL;
    net_listener_t *lst = xcalloc(1, sizeof(*lst));
    struct sockaddr_storage ss;
    socklen_t sl = sizeof(ss);

    lst->io.fd = fd;
    lst->io.cb = net_listener_io;
    lst->io.data = lst;
    lst->loop = loop;
    lst->cb = cb;
    lst->data = data;
    lst->port = port;
    if (getsockname(fd, (struct sockaddr *)&ss, &sl) == 0)
        lst->port = ntohs(ss.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&ss)->sin6_port
                                                   : ((struct sockaddr_in *)&ss)->sin_port);
    if (net_io_set(loop, &lst->io, NET_READ) < 0) {
        int e = errno;
        close(fd);
        free(lst);
        errno = e;
        return NULL;
    }
    return lst;
}

int net_listener_port(const net_listener_t *lst)
{
    return lst->port;
}

void net_listener_free(net_listener_t *lst)
{
    if (!lst)
        return;
    net_io_del(lst->loop, &lst->io);
    close(lst->io.fd);
    free(lst);
}
