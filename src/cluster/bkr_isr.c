/* The partition changes that follow a broker's state, as Kafka 4.4's
 * ReplicationControlManager.generateLeaderAndIsrUpdates and
 * PartitionChangeBuilder make them without eligible leader replicas: a
 * broker that is fenced, shuts down or
 * unregisters leaves the ISR of every partition (but the last member of
 * an ISR stays in it, so the ISR is never empty) and its leaderships; a
 * partition then led by no eligible replica gets leader -1. A broker
 * being unfenced may take up the partitions that have no leader, where
 * it is in the ISR. A new leader is the first replica in replica order
 * that is in the (new) ISR and acceptable: active, or the broker being
 * unfenced, never the one leaving. With no such replica, a topic of
 * unclean.leader.election.enable gets an unclean election (bkr_elect.c):
 * the first acceptable replica of all leads, alone in the ISR,
 * RECOVERING. A leader change bumps the leader epoch when applied; every
 * change bumps the partition epoch.
 *
 * The partitions are found by a scan of the image: a broker's state
 * changes rarely, and the image keeps no broker-to-partition index. */
#include <string.h>

#include "cluster/bkr_int.h"

static bool bkr_has(const int32_t *v, int n, int32_t id)
{
    for (int i = 0; i < n; i++)
        if (v[i] == id)
            return true;
    return false;
}

/* Whether replica r may lead with the given new ISR. leaving: the broker
 * that may not lead (-1: none); joining: the one that may although the
 * image does not show it active yet (-1: none). */
static bool bkr_valid(const meta_image_t *img, int32_t r, const int32_t *isr, int nisr,
                      int32_t leaving, int32_t joining)
{
    return r >= 0 && r != leaving && bkr_has(isr, nisr, r) &&
           (r == joining || meta_image_broker_active(img, r));
}

/* The leader after the change: the current one if it is still valid,
 * else the first valid replica, else -1. */
static int32_t bkr_elect(const meta_image_t *img, const mi_part_t *p, const int32_t *isr,
                         int nisr, int32_t leaving, int32_t joining)
{
    if (bkr_valid(img, p->leader, isr, nisr, leaving, joining))
        return p->leader;
    for (int i = 0; i < p->nreplicas; i++)
        if (bkr_valid(img, p->replicas[i], isr, nisr, leaving, joining))
            return p->replicas[i];
    return -1;
}

static meta_rec_t *bkr_change(bkr_out_t *out, const mi_topic_t *t, int32_t part)
{
    meta_rec_t *r = bkr_out_add(out, META_REC_PARTITION_CHANGE, META_PART_CHANGE_REC_VERSION);
    memcpy(r->u.change.topic_id.b, t->id, 16);
    r->u.change.partition_id = part;
    return r;
}

static void bkr_remove_one(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t,
                           int32_t part, int32_t id, bkr_out_t *out)
{
    const mi_part_t *p = &t->parts[part];
    int32_t *isr = arena_alloc(&out->arena, ((size_t)p->nisr + 1) * sizeof(int32_t));
    int n = 0;
    for (int i = 0; i < p->nisr; i++)
        if (p->isr[i] != id)
            isr[n++] = p->isr[i];
    int32_t leader = bkr_elect(img, p, isr, n, id, -1);
    if (leader < 0 && bkr_unclean_enabled(bc, img, t) &&
        (leader = bkr_elect_unclean_pick(img, p, id, -1)) >= 0) {
        bkr_elect_unclean_rec(t, part, leader, out);
        return;
    }
    if (leader == p->leader && n == 0)
        return; /* the last ISR member stays, and nothing else changes */
    meta_rec_t *r = bkr_change(out, t, part);
    if (leader != p->leader)
        r->u.change.leader = leader;
    if (n > 0) {
        r->u.change.isr.n = n;
        r->u.change.isr.v = isr;
    }
}

void bkr_isr_remove(const bkr_ctl_t *bc, const meta_image_t *img, int32_t id, bkr_out_t *out)
{
    size_t pos = 0;
    const mi_topic_t *t;
    while ((t = meta_image_topic_next(img, &pos)))
        for (int32_t i = 0; i < t->nparts; i++)
            if (t->parts[i].present && bkr_has(t->parts[i].isr, t->parts[i].nisr, id))
                bkr_remove_one(bc, img, t, i, id, out);
}

void bkr_isr_elect_with(const bkr_ctl_t *bc, const meta_image_t *img, int32_t id,
                        bkr_out_t *out)
{
    size_t pos = 0;
    const mi_topic_t *t;
    while ((t = meta_image_topic_next(img, &pos)))
        for (int32_t i = 0; i < t->nparts; i++) {
            const mi_part_t *p = &t->parts[i];
            if (!p->present || p->leader != -1)
                continue;
            int32_t leader = bkr_elect(img, p, p->isr, p->nisr, -1, id);
            if (leader >= 0)
                bkr_change(out, t, i)->u.change.leader = leader;
            else if (bkr_unclean_enabled(bc, img, t) &&
                     (leader = bkr_elect_unclean_pick(img, p, -1, id)) >= 0)
                bkr_elect_unclean_rec(t, i, leader, out);
        }
}

bool bkr_isr_leads_any(const meta_image_t *img, int32_t id)
{
    size_t pos = 0;
    const mi_topic_t *t;
    while ((t = meta_image_topic_next(img, &pos)))
        for (int32_t i = 0; i < t->nparts; i++)
            if (t->parts[i].present && t->parts[i].leader == id)
                return true;
    return false;
}
