/* Connections to the other brokers of a quorum, at their inter-broker
 * listener (inter.broker.listener.name) as the metadata image registers
 * them, for the requests brokers send each other besides the followers'
 * fetches: a transaction coordinator's WriteTxnMarkers to partition
 * leaders, a leader's AddPartitionsToTxn verification with a coordinator.
 * One connection per broker, made on first use, made anew when its
 * endpoint changed (the old one is kept to the end: a change may be seen
 * inside one of its own callbacks). */
#ifndef STRAND_PARTITION_PART_PEER_H
#define STRAND_PARTITION_PART_PEER_H

#include "net/net_out.h"
#include "partition/part.h"

typedef struct part_peers_s part_peers_t;

/* Returns the connections of reg's node, owned by the caller
 * (part_peers_free); client_id borrowed (outlives them). */
part_peers_t *part_peers_new(part_reg_t *reg, const char *client_id, int64_t timeout_ms);
/* The connection to broker id, or NULL when the image has no endpoint of
 * it at the inter-broker listener. Borrowed until part_peers_free. */
net_out_t *part_peer_out(part_peers_t *ps, int32_t id);
/* The timeout for a request to out: normal_ms, or PART_PEER_DOWN_MS when
 * its last connection failed or was lost (a broker killed, not yet fenced:
 * a request queued there would wait out the whole request timeout while
 * its partitions or coordinators move elsewhere; the caller retries it
 * then, to whoever leads by that time). */
#define PART_PEER_DOWN_MS 1000
int64_t part_peer_timeout(net_out_t *out, int64_t normal_ms);
/* Frees them; what is in flight is called back with an error first. */
void part_peers_free(part_peers_t *ps);

#endif
