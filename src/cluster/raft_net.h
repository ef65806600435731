/* The Raft node's transport over the network: one outbound connection
 * (net_out.h) per peer of the quorum, to its controller listener, which
 * keeps itself up (reconnects with backoff) and frames the KRaft
 * requests. A request to a peer the node cannot reach fails after the
 * request timeout (controller.quorum.request.timeout.ms), or at once
 * when the connection drops with it on the wire; the core then backs off
 * and asks again. */
#ifndef STRAND_CLUSTER_RAFT_NET_H
#define STRAND_CLUSTER_RAFT_NET_H

#include <stdint.h>

#include "cluster/raft_node.h"
#include "net/net_loop.h"

typedef struct raft_net_s raft_net_t;

typedef struct raft_net_peer_s {
    int32_t id;
    const char *host; /* copied */
    int port;
} raft_net_peer_t;

/* Connections to peers[0..n) (connected on first use). Returns the
 * transport owned by the caller (raft_net_free). */
raft_net_t *raft_net_new(net_loop_t *loop, const raft_net_peer_t *peers, int n,
                         const char *client_id, int64_t request_timeout_ms, int64_t backoff_max_ms);
/* Calls back every request still pending with no answer, then frees:
 * call before raft_node_free of the node using it. */
void raft_net_free(raft_net_t *net);
/* Node id is reached at host:port from now on (a new peer, or one that
 * moved: its connection is replaced). The transport's learn does this for
 * a leader's endpoint a Fetch response named. */
void raft_net_set_peer(raft_net_t *net, int32_t id, const char *host, int port);
/* Where node id is reached: 0 with *host (valid until that peer moves
 * or the transport is freed) and *port, or -1 for a node it does not
 * know. */
int raft_net_peer_addr(const raft_net_t *net, int32_t id, const char **host, int *port);
/* The seam for raft_node_new. */
raft_transport_t raft_net_transport(raft_net_t *net);

#endif
