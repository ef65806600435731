/* Plain TCP as a transport (net_xprt.h): each call is the system call of
 * the same name on the socket; no per-connection state. */
#ifndef STRAND_NET_XPRT_TCP_H
#define STRAND_NET_XPRT_TCP_H

#include "net/net_xprt.h"

/* Points x at plain TCP (ctx NULL). */
void net_xprt_tcp_attach(net_xprt_t *x);

#endif
