/* Group commit for the flush policy (flush.messages / log.flush.interval.
 * messages). A produce that must reach the disk before it is answered does
 * not fsync on its own: it names the partition and waits; once per turn of
 * the event loop every named log is flushed once and all waiting answers
 * go out. Requests that arrive while one round fsyncs share the next, so
 * the cost of durability falls as the load grows. */
#ifndef STRAND_API_FLUSH_H
#define STRAND_API_FLUSH_H

#include <stdint.h>

#include "broker/broker.h"

typedef struct api_flush_fail_s {
    uint8_t topic_id[16];
    int32_t partition;
} api_flush_fail_t;

typedef struct api_flush_waiter_s api_flush_waiter_t;
struct api_flush_waiter_s {
    api_flush_waiter_t *next, *prev;
    /* Runs after the round; failed_ids/nfailed name the partitions whose
     * flush failed (topic id + partition pairs). */
    void (*done)(api_flush_waiter_t *w, const api_flush_fail_t *failed, int nfailed);
};

/* Adds a partition to the next flush round (no-op if it is in already). */
void api_flush_add(broker_t *b, part_t *part);
/* Parks w until the round after the current handler has run. */
void api_flush_wait(broker_t *b, api_flush_waiter_t *w);
/* Takes w off the list (its connection closed). Safe if not listed. */
void api_flush_unwait(api_flush_waiter_t *w);
/* Runs the pending round now (shutdown). */
void api_flush_run(broker_t *b);
/* Frees the round state (after the last round). */
void api_flush_free(broker_t *b);

#endif
