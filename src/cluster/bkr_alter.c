/* AlterPartition (bkr.h): a partition leader's ISR change, checked
 * against the image and written as a PartitionChangeRecord. The leader
 * changes here only when the change finishes a reassignment that removes
 * it (bkr_reassign.c): the ISR must hold it. A leader elected
 * uncleanly says here that it has recovered (Kafka's leader does it with
 * its next ISR change). The change itself, with what it does to the
 * eligible leader replicas, is the partition change builder's
 * (bkr_pcb.c). */
#include <stdio.h>
#include <string.h>

#include "cluster/bkr_int.h"
#include "util/kerr.h"

static bool bkr_alter_has(const int32_t *v, int32_t n, int32_t id)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == id)
            return true;
    return false;
}

/* Kafka's Replicas.validateIsr: distinct replicas of the partition. */
static bool bkr_alter_isr_valid(const mi_part_t *p, const bkr_alter_part_t *a)
{
    for (int32_t i = 0; i < a->nisr; i++)
        if (!bkr_alter_has(p->replicas, p->nreplicas, a->isr[i]) ||
            bkr_alter_has(a->isr, i, a->isr[i]))
            return false;
    return true;
}

static bool bkr_alter_eligible(const meta_image_t *img, int32_t id, int64_t epoch)
{
    const mi_broker_t *b = meta_image_broker(img, id);
    return b && !b->in_controlled_shutdown && !b->fenced && (epoch == -1 || epoch == b->epoch);
}

/* Leader and partition epochs first: a request from a future the image
 * has not seen means this is not the controller any more. */
static int16_t bkr_alter_epochs(const mi_part_t *p, const bkr_alter_part_t *a, int32_t broker)
{
    if (a->leader_epoch > p->leader_epoch || a->partition_epoch > p->partition_epoch)
        return KERR_NOT_CONTROLLER;
    if (a->leader_epoch < p->leader_epoch)
        return KERR_FENCED_LEADER_EPOCH;
    if (broker != p->leader)
        return KERR_INVALID_REQUEST;
    if (a->partition_epoch < p->partition_epoch)
        return KERR_INVALID_UPDATE_VERSION;
    return KERR_NONE;
}

static int16_t bkr_alter_check(const meta_image_t *img, const mi_part_t *p,
                               const bkr_alter_part_t *a, int32_t broker)
{
    int16_t err = bkr_alter_epochs(p, a, broker);
    if (err)
        return err;
    if (!bkr_alter_isr_valid(p, a) || !bkr_alter_has(a->isr, a->nisr, p->leader))
        return KERR_INVALID_REQUEST;
    /* A leader elected uncleanly (bkr_elect.c) may stay recovering with
     * itself alone in the ISR, or say it has recovered; a recovered
     * partition never goes back. */
    if (a->recovery_state < 0 || a->recovery_state > 1 ||
        (a->recovery_state == 1 && (a->nisr > 1 || p->recovery_state == 0)))
        return KERR_INVALID_REQUEST;
    for (int32_t i = 0; i < a->nisr; i++)
        if (!bkr_alter_eligible(img, a->isr[i], a->isr_epochs ? a->isr_epochs[i] : -1))
            return KERR_INELIGIBLE_REPLICA;
    return KERR_NONE;
}

static bool bkr_alter_same_members(const mi_part_t *p, const bkr_alter_part_t *a)
{
    for (int32_t i = 0; i < a->nisr; i++)
        if (!bkr_alter_has(p->isr, p->nisr, a->isr[i]))
            return false;
    return true;
}

static bool bkr_alter_same(const mi_part_t *p, const bkr_alter_part_t *a)
{
    return p->nisr == a->nisr && p->recovery_state == a->recovery_state &&
           bkr_alter_same_members(p, a);
}

/* The change (bkr_pcb.c): the new ISR and recovery state, finishing a
 * reassignment in progress when the new ISR holds every target replica
 * (bkr_reassign_complete); the answer is the partition after it. */
static void bkr_alter_write(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t,
                            bkr_alter_part_t *a, bkr_out_t *out)
{
    bkr_pcb_t b;
    int first = out->n;
    bkr_pcb_init(&b, bc, img, t, a->partition);
    b.tg.isr = (int32_t *)a->isr;
    b.tg.nisr = a->nisr;
    b.recovery_state = a->recovery_state;
    bkr_reassign_complete(&b.tg, &out->arena);
    a->leader = bkr_pcb_build(&b, out);
    if (out->n == first)
        return;
    const meta_part_change_rec_t *c = &out->v[first].u.change;
    if (c->leader != -2)
        a->new_leader_epoch++;
    a->new_partition_epoch++;
    if (c->isr.n >= 0) {
        a->nnew = c->isr.n;
        a->new_isr = c->isr.v;
    }
    if (c->leader_recovery_state != -1)
        a->new_recovery_state = c->leader_recovery_state;
}

static void bkr_alter_one(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t,
                          bkr_alter_part_t *a, int32_t broker, bkr_out_t *out)
{
    const mi_part_t *p = a->partition >= 0 && a->partition < t->nparts &&
                                 t->parts[a->partition].present
                             ? &t->parts[a->partition]
                             : NULL;
    a->err = p ? bkr_alter_check(img, p, a, broker) : KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (a->err)
        return;
    a->leader = p->leader;
    a->new_leader_epoch = p->leader_epoch;
    a->new_partition_epoch = p->partition_epoch;
    a->nnew = p->nisr;
    a->new_isr = p->isr;
    a->new_recovery_state = p->recovery_state;
    if (!bkr_alter_same(p, a)) /* else the answer is the partition as it is */
        bkr_alter_write(bc, img, t, a, out);
}

void bkr_alter_partition(const bkr_ctl_t *bc, const meta_image_t *img, bkr_alter_req_t *req,
                         bkr_out_t *out, bkr_answer_t *ans)
{
    const mi_broker_t *b = meta_image_broker(img, req->broker_id);

    memset(ans, 0, sizeof(*ans));
    if (!b || b->epoch != req->broker_epoch) {
        ans->err = KERR_STALE_BROKER_EPOCH;
        if (!b)
            snprintf(ans->msg, sizeof(ans->msg), "No broker registration found for broker %d",
                     (int)req->broker_id);
        else
            snprintf(ans->msg, sizeof(ans->msg),
                     "Expected broker epoch %lld, but got broker epoch %lld",
                     (long long)b->epoch, (long long)req->broker_epoch);
        return;
    }
    for (int i = 0; i < req->ntopics; i++) {
        bkr_alter_topic_t *at = &req->topics[i];
        const mi_topic_t *t = meta_image_topic_by_id(img, at->topic_id);
        for (int j = 0; j < at->nparts; j++) {
            if (!t)
                at->parts[j].err = KERR_UNKNOWN_TOPIC_ID;
            else
                bkr_alter_one(bc, img, t, &at->parts[j], req->broker_id, out);
        }
    }
}
