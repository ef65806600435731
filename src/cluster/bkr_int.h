/* What the files of the controller's broker logic share (bkr_reg.c,
 * bkr_hb.c, bkr_isr.c): the session table and the records of a fencing. */
#ifndef STRAND_CLUSTER_BKR_INT_H
#define STRAND_CLUSTER_BKR_INT_H

#include "cluster/bkr.h"

/* The record versions Kafka writes at the metadata.version levels Strand
 * supports (23-29): RegisterBrokerRecord v3 (log dirs; v4 adds cordoned
 * dirs at 30), BrokerRegistrationChangeRecord v0 to fence or unfence and
 * v1 for controlled shutdown, UnregisterBrokerRecord v0. */
#define BKR_REGISTER_REC_VERSION 3
#define BKR_CHANGE_REC_VERSION_FENCE 0
#define BKR_CHANGE_REC_VERSION_SHUTDOWN 1

/* BrokerRegistrationChangeRecord's values, as Kafka numbers them. */
#define BKR_CHANGE_FENCE 1
#define BKR_CHANGE_UNFENCE (-1)
#define BKR_CHANGE_IN_SHUTDOWN 1

/* The session of id, or NULL. */
bkr_session_t *bkr_session_get(const bkr_ctl_t *bc, int32_t id);
/* A fresh session for id from now_ms (replacing any). */
bkr_session_t *bkr_session_start(bkr_ctl_t *bc, int32_t id, int64_t now_ms);
void bkr_session_end(bkr_ctl_t *bc, int32_t id);

/* Fencing broker id: out of every ISR and leadership, then a
 * BrokerRegistrationChangeRecord fencing its epoch. */
void bkr_fence_records(const bkr_ctl_t *bc, const meta_image_t *img, const mi_broker_t *b,
                       bkr_out_t *out);

/* ---- the partition change builder (bkr_pcb.c) ---- */

#define BKR_ELR_FEATURE "eligible.leader.replicas.version" /* CTL_FEATURE_ELR */

enum { BKR_PCB_ONLINE, BKR_PCB_PREFERRED, BKR_PCB_UNCLEAN };

/* One partition's change: the targets start as the partition is, and the
 * caller changes what its decision changes before bkr_pcb_build. */
typedef struct bkr_pcb_s {
    const meta_image_t *img;
    const mi_topic_t *topic;
    int32_t part;
    const mi_part_t *p;
    int election;             /* BKR_PCB_*: ONLINE, or UNCLEAN with the
                                 topic's unclean.leader.election.enable */
    int32_t leaving;          /* may not lead (-1: none) */
    int32_t joining;          /* may lead although not active yet (-1) */
    int32_t unclean_shutdown; /* leaves the ELR: it lost its log's tail */
    bool elr_on;              /* eligible.leader.replicas.version >= 1 */
    int32_t min_isr;          /* the topic's effective min ISR */
    bkr_target_t tg;          /* replicas, ISR, adding, removing */
    int32_t *elr;             /* the target ELR */
    int32_t nelr;
    int8_t recovery_state;
} bkr_pcb_t;

void bkr_pcb_init(bkr_pcb_t *b, const bkr_ctl_t *bc, const meta_image_t *img,
                  const mi_topic_t *t, int32_t part);
/* Adds the PartitionChangeRecord to out (arrays in out's arena; nothing
 * when nothing changes) and returns the leader after it. */
int32_t bkr_pcb_build(bkr_pcb_t *b, bkr_out_t *out);
/* Kafka's getTopicEffectiveMinIsr: the topic's min.insync.replicas (else
 * bc->min_isr_default), at most its replication factor. */
int32_t bkr_topic_min_isr(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t);

/* Kafka's message in ans (printf format); returns err. */
int16_t bkr_fail(bkr_answer_t *ans, int16_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
