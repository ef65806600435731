/* netns: a node in a network namespace of its own, for link cuts that no
 * user-space proxy can fake (the kernel's own view of a dead link).
 *
 * The node's namespace is joined to the test's by a veth pair on a /30 of
 * its own (10.A.B.x, A.B from the test's pid): the node listens on the
 * namespace side's address, the test reaches it through the other. A cut
 * takes the test's end of the pair down: the node's address is then
 * unreachable (new connections fail at once, open ones as their
 * retransmits go nowhere), and so are the node's answers; a heal brings it
 * up. The namespace's route is removed with it (a test killed by a signal
 * leaves its namespace and route, named after its pid: `ip netns del`).
 * Namespaces do not reach each other (no forwarding is set up on the
 * machine): node-to-node links go through proxies (testlib/proxy.h).
 *
 * Needs root and iproute2's `ip`: tl_netns_available says whether they
 * work here; the proxy needs neither. Strand nodes only (kafka-ref.sh
 * starts Kafka itself). The namespaces are removed with the cluster, on
 * tl_fail too. */
#ifndef STRAND_TESTLIB_NETNS_H
#define STRAND_TESTLIB_NETNS_H

#include "testlib/cluster.h"

/* 1 when this process can make network namespaces and veth pairs. */
int tl_netns_available(void);
/* Puts node in a namespace of its own (before it starts). */
void tl_node_netns(tl_node *node);
/* Takes node's link down / up again. */
void tl_netns_cut(tl_node *node);
void tl_netns_heal(tl_node *node);
/* Removes node's namespace (its processes must be gone). */
void tl_netns_remove(tl_node *node);

#endif
