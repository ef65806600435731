/* The partition changes that follow a broker's state, as Kafka 4.4's
 * ReplicationControlManager.generateLeaderAndIsrUpdates makes them: a
 * broker that is fenced, shuts down or unregisters leaves the ISR of
 * every partition and its leaderships; a broker being unfenced may take
 * up the partitions that have no leader; a broker that registers after
 * an unclean shutdown leaves the ISRs and ELRs. What each change is (the
 * new leader, ISR, ELR) the partition change builder decides
 * (bkr_pcb.c).
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

static void bkr_remove_one(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t,
                           int32_t part, int32_t id, bool unclean, bkr_out_t *out)
{
    const mi_part_t *p = &t->parts[part];
    int32_t *isr = arena_alloc(&out->arena, ((size_t)p->nisr + 1) * sizeof(int32_t));
    int32_t n = 0;
    bkr_pcb_t b;
    for (int32_t i = 0; i < p->nisr; i++)
        if (p->isr[i] != id)
            isr[n++] = p->isr[i];
    bkr_pcb_init(&b, bc, img, t, part);
    b.leaving = unclean ? -1 : id;
    b.unclean_shutdown = unclean ? id : -1;
    b.tg.isr = isr;
    b.tg.nisr = n;
    bkr_pcb_build(&b, out);
}

static bool bkr_in_isr_or_elr(const mi_part_t *p, int32_t id)
{
    return p->present && (bkr_has(p->isr, p->nisr, id) || bkr_has(p->elr, p->nelr, id));
}

void bkr_isr_remove(const bkr_ctl_t *bc, const meta_image_t *img, int32_t id, bkr_out_t *out)
{
    size_t pos = 0;
    const mi_topic_t *t;
    while ((t = meta_image_topic_next(img, &pos)))
        for (int32_t i = 0; i < t->nparts; i++)
            if (t->parts[i].present && bkr_has(t->parts[i].isr, t->parts[i].nisr, id))
                bkr_remove_one(bc, img, t, i, id, false, out);
}

void bkr_isr_unclean_shutdown(const bkr_ctl_t *bc, const meta_image_t *img, int32_t id,
                              bkr_out_t *out)
{
    size_t pos = 0;
    const mi_topic_t *t;
    if (meta_image_feature(img, BKR_ELR_FEATURE) < 1)
        return;
    while ((t = meta_image_topic_next(img, &pos)))
        for (int32_t i = 0; i < t->nparts; i++)
            if (bkr_in_isr_or_elr(&t->parts[i], id))
                bkr_remove_one(bc, img, t, i, id, true, out);
}

void bkr_isr_elect_with(const bkr_ctl_t *bc, const meta_image_t *img, int32_t id,
                        bkr_out_t *out)
{
    size_t pos = 0;
    const mi_topic_t *t;
    while ((t = meta_image_topic_next(img, &pos)))
        for (int32_t i = 0; i < t->nparts; i++) {
            bkr_pcb_t b;
            if (!t->parts[i].present || t->parts[i].leader != -1)
                continue;
            bkr_pcb_init(&b, bc, img, t, i);
            b.joining = id;
            bkr_pcb_build(&b, out);
        }
}

void bkr_min_isr_changed(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t,
                         int64_t min_isr, bkr_out_t *out)
{
    if (meta_image_feature(img, BKR_ELR_FEATURE) < 1)
        return;
    for (int32_t i = 0; i < t->nparts; i++) {
        bkr_pcb_t b;
        if (!t->parts[i].present)
            continue;
        bkr_pcb_init(&b, bc, img, t, i);
        b.min_isr = min_isr < 1 ? 1 : min_isr < t->parts[i].nreplicas ? (int32_t)min_isr
                                                                       : t->parts[i].nreplicas;
        bkr_pcb_build(&b, out);
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
