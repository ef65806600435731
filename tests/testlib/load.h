/* load: the failure tests' traffic. An idempotent acks=all librdkafka
 * producer writes to every partition of a topic at a steady rate, and a
 * consumer (assigned every partition from its start) reads alongside it,
 * both served by tl_load_pump from the test's main thread:
 *   - every acknowledgement must come without error, at the offset of its
 *     message's place in its partition, after the one before it (the test
 *     fails at once otherwise: a duplicate or a hole);
 *   - every consumed message must be one of ours, at the next offset of
 *     its partition; a sequence number seen again counts as duplicated,
 *     one skipped as lost;
 *   - tl_load_drain waits until all that was sent is acknowledged and
 *     consumed, logs acknowledged / consumed / lost / duplicated, and fails
 *     the test unless nothing was lost or duplicated.
 * Values are "p<partition>-m<seq>-<hash>", so a consumed value is checked
 * whole. */
#ifndef STRAND_TESTLIB_LOAD_H
#define STRAND_TESTLIB_LOAD_H
#include <stdint.h>

typedef struct tl_load tl_load;

/* A load on topic (nparts partitions) through bootstrap, rate messages a
 * second over all partitions. Caller owns it: tl_load_free. */
tl_load *tl_load_new(const char *bootstrap, const char *topic, int nparts, int rate);
void tl_load_free(tl_load *l);
/* Produces (unless producing is 0) and consumes for ms. */
void tl_load_pump(tl_load *l, int producing, int ms);
/* The same from a thread of its own, until tl_load_bg_stop, while the
 * test's thread does something that blocks (a node's stop or start);
 * meanwhile the test calls nothing else of l. */
void tl_load_bg_start(tl_load *l, int producing);
void tl_load_bg_stop(tl_load *l);
/* Acknowledged so far: in partition p, or in all (p -1). */
int64_t tl_load_acked(const tl_load *l, int32_t p);
/* Whether every partition has had n acknowledgements since tl_load_mark. */
int tl_load_moved(const tl_load *l, int64_t n);
void tl_load_mark(tl_load *l);
/* From now on, the first acknowledgement of partition p from a broker
 * other than broker ends a failover: tl_load_failover gives its seconds
 * since this call, -1 until then. */
void tl_load_watch(tl_load *l, int32_t p, int broker);
double tl_load_failover(const tl_load *l);
/* The longest time without any acknowledgement since the last call (or
 * the start), in seconds, while messages were waiting for one. */
double tl_load_max_gap(tl_load *l);
/* Stops producing, then waits (timeout_s at most) until everything sent
 * is acknowledged and consumed; logs the counts; fails the test on any
 * loss or duplicate. */
void tl_load_drain(tl_load *l, double timeout_s);
#endif
