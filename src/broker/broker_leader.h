/* Outbound connections to a quorum's active controller (broker_leader.c),
 * for what a node sends it: a broker's registration and heartbeats
 * (broker_life.c), a controller's registration (broker_ctlreg.c). */
#ifndef STRAND_BROKER_LEADER_H
#define STRAND_BROKER_LEADER_H

#include "broker/broker.h"
#include "net/net_out.h"

typedef struct broker_leader_s broker_leader_t;

/* Connections of node b named client_id (borrowed: a string that outlives
 * them). Returns them, owned by the caller (broker_leader_free). */
broker_leader_t *broker_leader_new(broker_t *b, const char *client_id);
/* The connection to the quorum's leader at its controller listener
 * (broker_quorum_leader_addr), made on first use and made anew when the
 * leader's endpoint changed; NULL while no leader is known. Borrowed:
 * valid until broker_leader_free. */
net_out_t *broker_leader_out(broker_leader_t *lc);
/* Frees them; what is in flight is called back with an error first. */
void broker_leader_free(broker_leader_t *lc);

#endif
