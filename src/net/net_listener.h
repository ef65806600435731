/* Listening sockets: accept connections and hand them to a callback. */
#ifndef STRAND_NET_LISTENER_H
#define STRAND_NET_LISTENER_H

#include "net/net_loop.h"

typedef struct net_listener_s net_listener_t;
typedef void net_accept_cb(net_listener_t *lst, int fd, void *data);

/* Binds host:port ("" or "0.0.0.0" = any IPv4, "::" = any IPv6) and
 * starts accepting. Returns a listener owned by the caller
 * (net_listener_free), or NULL with errno. */
net_listener_t *net_listener_new(net_loop_t *loop, const char *host, int port,
                                 net_accept_cb *cb, void *data);
/* The bound port (useful when port 0 was asked). */
int net_listener_port(const net_listener_t *lst);
/* Stops accepting and closes the socket. */
void net_listener_free(net_listener_t *lst);

#endif
