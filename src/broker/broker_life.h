/* A broker's registration and heartbeats with its quorum's active
 * controller (broker_life.c). */
#ifndef STRAND_BROKER_LIFE_H
#define STRAND_BROKER_LIFE_H

#include "broker/broker.h"

/* Starts registering when this node is a broker of a quorum (its Raft
 * node follows the quorum as an observer or a voter). Returns 0. */
int broker_life_start(broker_t *b);
/* Controlled shutdown, before the listeners close: the controller moves
 * this broker's leaderships away first (up to 5 s). */
void broker_life_shutdown(broker_t *b);
/* Stops it (the connections' requests are called back first). */
void broker_life_stop(broker_t *b);

#endif
