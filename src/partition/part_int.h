/* Shared by the files of the partition module only. */
#ifndef STRAND_PARTITION_PART_INT_H
#define STRAND_PARTITION_PART_INT_H

#include "partition/part.h"
#include "util/kerr.h"

/* Kafka error codes the module returns. */

/* Writes name with '.' as '_' to out (len bytes). */
void part_norm(const char *name, size_t len, char *out);
/* Allocates a topic without partitions and enters it in the maps. */
topic_t *part_topic_new(part_reg_t *reg, const char *name, size_t len, const uint8_t id[16],
                        const topic_cfg_t *cfg);
/* Removes a topic from the maps (not freeing it). */
void part_topic_unlink(part_reg_t *reg, topic_t *topic);
/* Frees a topic and its part_t's (the logs belong to the manager). */
void part_topic_free(topic_t *topic);
/* A partition led by node_id with itself as the only replica and in-sync
 * replica (until the replication layer fills in others). */
part_t *part_new(topic_t *topic, int32_t index, log_t *log, int32_t node_id);
void part_free(part_t *part);
/* Grows the parts array to nparts (new slots NULL). */
void part_topic_grow(topic_t *topic, int32_t nparts);
/* Leadership taken again at start-up: a new epoch (the last one + 1)
 * begins at the log end. */
void part_take_leadership(part_t *part);
/* Leadership at a known epoch (a new partition's, from its record) whose
 * start the log's epoch cache has already. */
void part_lead(part_t *part, int32_t epoch);
/* The metadata log's listener (part_delta.c): applies a committed
 * change to the registry and the logs. */
void part_delta_apply(void *ctx, const meta_rec_t *recs, int n, const meta_image_t *img,
                      int64_t now_ms, void (*applied)(void *arg), void *arg);

/* The append path's steps shared with the write queue (part_wq.c). */
struct part_append_s;
struct part_append_ent_s;
/* Places ent's batch in its log (log_append_place). Returns
 * LOG_APPEND_AGAIN (nothing done: retry after the pending writes are
 * committed) or 0: the entry is final (ent->err), or has a write to run. */
int part_append_place(struct part_append_s *op, struct part_append_ent_s *ent);
/* Commits ent's written batch (the log is looked up again and must be
 * the one it was placed in), then wakes readers. */
void part_append_commit(struct part_append_s *op, struct part_append_ent_s *ent);
/* Every batch of op is placed and written: the flush and replica waits. */
void part_append_settle(struct part_append_s *op);
/* Queues op (validated) for placing and writing on the pool. */
void part_wq_add(part_reg_t *reg, struct part_append_s *op);
/* Nothing queued or being written: an append may run on the loop. */
int part_wq_idle(part_reg_t *reg);
/* Shutdown, after the pool is gone: writes what is left, frees the queue. */
void part_wq_free(part_reg_t *reg);

/* ---- ISR changes (part_isr.c) ---- */

/* part_t.pend_state */
enum {
    PART_ISR_NONE = 0,
    PART_ISR_QUEUED,   /* proposed, waiting for its AlterPartition */
    PART_ISR_SENT,     /* in an AlterPartition the controller has */
    PART_ISR_STALE     /* refused as stale: the metadata brings the truth */
};

/* A quorum's registry, once it has its loop: the ISR manager, with its
 * periodic shrink check (every replica.lag.time.max.ms / 2). Freed by
 * part_isr_free (safe when none). */
void part_isr_new(part_reg_t *reg);
void part_isr_free(part_reg_t *reg);
/* After follower r's fetch: a replica out of the ISR that is caught up to
 * the high watermark and to the start of this leadership, on a live
 * broker of the fetch's epoch, is proposed back into it. */
void part_isr_fetched(part_reg_t *reg, part_t *part, const part_replica_t *r);
/* Forgets a pending change (a new leadership or partition epoch, or
 * the partition going). */
void part_isr_clear(part_t *part);

#endif
