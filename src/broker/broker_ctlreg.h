/* A controller's registration with its quorum's active controller
 * (broker_ctlreg.c). */
#ifndef STRAND_BROKER_CTLREG_H
#define STRAND_BROKER_CTLREG_H

#include "broker/broker.h"

typedef struct broker_ctlreg_s broker_ctlreg_t;

/* Starts registering when this node is a controller of a quorum of
 * others (its Raft node runs). Returns 0. */
int broker_ctlreg_start(broker_t *b);
/* Stops it (what is in flight is called back first). */
void broker_ctlreg_stop(broker_t *b);

#endif
