/* Shared by part_isr.c and part_isr_wire.c only. */
#ifndef STRAND_PARTITION_PART_ISR_INT_H
#define STRAND_PARTITION_PART_ISR_INT_H

#include "net/net_loop.h"
#include "net/net_out.h"
#include "partition/part_int.h"

/* A partition whose proposed ISR waits for (or is in) an AlterPartition. */
typedef struct pisr_key_s {
    uint8_t topic_id[16];
    int32_t partition;
    uint32_t seq; /* the proposal's part_t.pend_seq */
} pisr_key_t;

typedef struct part_isr_s {
    part_reg_t *reg;
    net_out_t *(*out)(void *ctx); /* NULL: no controller link (yet, or any more) */
    void *ctx;
    pisr_key_t *queue;            /* owned: proposals not sent yet */
    int nq, cap;
    int inflight;                 /* an AlterPartition is out */
    int64_t lag_ms;               /* replica.lag.time.max.ms */
    net_timer_id_t check;         /* the periodic shrink check */
    net_timer_id_t retry;         /* the next send after an error */
} part_isr_t;

/* The partition a key names, while it still has that proposal in the
 * given state; NULL otherwise. */
part_t *pisr_part(part_isr_t *s, const pisr_key_t *k, uint8_t state);
/* Arms the next send in 100 ms (once). */
void pisr_retry_arm(part_isr_t *s);
/* Queues k again and arms the retry. */
void pisr_requeue(part_isr_t *s, const pisr_key_t *k);
/* Sends what is queued when nothing is out (part_isr_wire.c). */
void pisr_kick(part_isr_t *s);
/* The committed result of a proposal: the ISR the controller wrote. */
void pisr_committed(part_isr_t *s, part_t *part, const int32_t *isr, int32_t nisr,
                    int32_t leader_epoch, int32_t partition_epoch);

#endif
