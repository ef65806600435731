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

/* Kafka's message in ans (printf format); returns err. */
int16_t bkr_fail(bkr_answer_t *ans, int16_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
