/* logfiles: a partition's segment files compared across the nodes of a
 * cluster, byte for byte: replication's strongest check (a follower's log
 * is its leader's batches as they came, so once caught up every node holds
 * the same bytes, and a tail one node had and the others not is gone). */
#ifndef STRAND_TESTLIB_LOGFILES_H
#define STRAND_TESTLIB_LOGFILES_H
#include <stddef.h>
#include <stdint.h>

#include "testlib/cluster.h"

/* Whether topic-p's .log files are the same bytes on every node with the
 * broker role (and not empty); what differs in why. */
int tl_logfiles_same(tl_cluster *c, const char *topic, int32_t p, char *why, size_t cap);
/* Waits (timeout_s at most) until partitions 0..nparts-1 of topic are the
 * same on every node, failing the test otherwise; logs the time it took. */
void tl_logfiles_wait_same(tl_cluster *c, const char *topic, int32_t nparts, double timeout_s);
#endif
