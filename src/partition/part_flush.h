/* Group commit for the flush policy (flush.messages, log.flush.interval.
 * messages): an append that must reach the disk before it completes does
 * not fsync on its own; it names its partition and waits for the next
 * round. A round begins every named log's flush on the loop
 * (log_sync_begin), runs the fsyncs on a worker, and ends them on the
 * loop, then completes every waiter. One round is out at a time; what
 * arrives meanwhile joins the next, so the cost of durability falls as
 * the load grows, and the loop never waits for a disk. */
#ifndef STRAND_PARTITION_PART_FLUSH_H
#define STRAND_PARTITION_PART_FLUSH_H

#include <stdint.h>

#include "partition/part.h"

/* A partition whose flush failed in a round. */
typedef struct part_flush_fail_s {
    uint8_t topic_id[16];
    int32_t partition;
} part_flush_fail_t;

typedef struct part_flush_waiter_s part_flush_waiter_t;
struct part_flush_waiter_s {
    part_flush_waiter_t *next, *prev;
    /* Runs after the round that covers everything named before the wait;
     * failed[0..nfailed) are the partitions whose flush failed (their logs
     * are offline now). */
    void (*done)(part_flush_waiter_t *w, const part_flush_fail_t *failed, int nfailed);
};

/* Names part for the next round (once per round). */
void part_flush_add(part_reg_t *reg, part_t *part);
/* Parks w until the round that covers what was named so far is done. */
void part_flush_wait(part_reg_t *reg, part_flush_waiter_t *w);
/* Shutdown: runs what is pending now, on this thread, and frees the
 * round state. */
void part_flush_shutdown(part_reg_t *reg);
/* Flushes the logs whose oldest unflushed record is older than their
 * flush.ms (Kafka's log flusher), in a round of their own. */
void part_flush_due(part_reg_t *reg, int64_t now_ms);
/* Flushes the segments that rolled since each log's last flush and moves
 * its recovery point to the active segment, so that a crash only rescans
 * that one (Kafka does this in the background after each roll). */
void part_flush_rolled(part_reg_t *reg);
/* The producer snapshot a roll of part's log rendered, written and
 * fsynced on a worker (no-op when none is due). */
void part_flush_snapshot(part_reg_t *reg, part_t *part);

#endif
