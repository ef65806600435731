/* The metadata quorum of a node that is one of several controllers
 * (broker_quorum.c). */
#ifndef STRAND_BROKER_QUORUM_H
#define STRAND_BROKER_QUORUM_H

#include "broker/broker.h"

/* Whether cfg makes this node one of a quorum of others (a voter or an
 * observer), not the single node that is its own quorum. */
int broker_quorum_wanted(const broker_config_t *cfg);
/* The quorum's leader (the active controller) and where a broker reaches
 * it: its controller listener, from controller.quorum.voters, or on a
 * dynamic quorum from the voter set in force or the leader's endpoint
 * its Fetch responses named. Returns 0 with *id, *host (borrowed: valid
 * until the quorum's state changes; copy it) and *port, or -1 when no
 * leader is known or not where. */
int broker_quorum_leader_addr(const broker_t *b, int32_t *id, const char **host, int *port);
/* Starts the Raft node when wanted (after the pool, before the
 * listeners). Returns 0, or -1 after logging why. */
int broker_quorum_start(broker_t *b);
/* Hands over (a leader resigns), then stops it: before the logs close. */
void broker_quorum_stop(broker_t *b);

#endif
