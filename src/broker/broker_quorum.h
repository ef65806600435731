/* The metadata quorum of a node that is one of several controllers
 * (broker_quorum.c). */
#ifndef STRAND_BROKER_QUORUM_H
#define STRAND_BROKER_QUORUM_H

#include "broker/broker.h"

/* Whether cfg makes this node a voter of a quorum of others. */
int broker_quorum_wanted(const broker_config_t *cfg);
/* Starts the Raft node when wanted (after the pool, before the
 * listeners). Returns 0, or -1 after logging why. */
int broker_quorum_start(broker_t *b);
/* Hands over (a leader resigns), then stops it: before the logs close. */
void broker_quorum_stop(broker_t *b);

#endif
