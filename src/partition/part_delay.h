/* Delayed operations keyed by partition, as Kafka's purgatories: a
 * long-poll fetch, an acks=-1 produce waiting for the replicas, a writer
 * waiting for its batches to be committed. An operation watches some
 * partitions and is tried again whenever one of them changes (its log end
 * or high watermark moves, it goes offline, its topic is deleted), on a
 * later turn of the loop so that the change that woke it has finished;
 * at its timeout it is tried a last time and must complete then.
 *
 * The layer owns the operation's handle; the owner's data is only ever
 * touched through try, and never after the operation completed or was
 * cancelled, so the owner may free it right after either. */
#ifndef STRAND_PARTITION_PART_DELAY_H
#define STRAND_PARTITION_PART_DELAY_H

#include <stdint.h>

#include "partition/part.h"

typedef struct part_delay_s part_delay_t;

/* Returns 1 when the operation is complete (it is then forgotten), 0 to
 * keep waiting; with expired set it must complete. */
typedef int part_delay_try_fn(void *owner, int expired);

/* Starts an operation that expires after timeout_ms (< 0: never) and
 * watches nothing yet. The handle is the layer's, valid until the
 * operation completes or is cancelled. */
part_delay_t *part_delay_new(part_reg_t *reg, int64_t timeout_ms, part_delay_try_fn *try,
                             void *owner);
/* Adds partition `index` of the topic with this id to the set to watch
 * (looked up again each time the watches are renewed: a deleted topic
 * drops out). Watching starts with part_delay_arm, after the last one. */
void part_delay_watch(part_delay_t *d, const uint8_t topic_id[16], int32_t index);
void part_delay_arm(part_delay_t *d);
/* The owner is gone: try will not be called again. */
void part_delay_cancel(part_delay_t *d);
/* Shutdown: tries it now as if expired. */
void part_delay_expire(part_delay_t *d);

#endif
