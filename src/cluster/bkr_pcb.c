/* The partition change builder (bkr_int.h): every PartitionChangeRecord
 * of the controller's broker logic is made here, in the steps of Kafka
 * 4.4's PartitionChangeBuilder.build, so that a fencing, an unfencing,
 * an ISR change, an election and a reassignment decide the leader, the
 * ISR and the eligible leader replicas (KIP-966) the same way:
 *
 *   1. ELR on and the target ISR below the topic's min ISR: the ELR
 *      becomes the current ELR and ISR less the target ISR and less a
 *      broker that shut down uncleanly; at or above min ISR it empties.
 *   2. The election: a replica may lead when it is in the target ISR
 *      (or, with the ISR empty, in the ELR) and acceptable (active or the
 *      broker being unfenced, never the one leaving). The current leader
 *      stays when it may; else the first replica in replica order that
 *      may (preferred: the first replica first); else, with ELR on and
 *      both sets empty, the last known leader when acceptable (an
 *      unclean election); else, for an unclean election, the first
 *      acceptable replica. A leader taken from the ELR leads an ISR of
 *      itself; one elected uncleanly too, RECOVERING, the ELR emptied.
 *   3. Replicas dropped by a reassignment bump the leader epoch.
 *   4. The ISR is written when it differs; an empty ISR only with ELR on
 *      (without it the last member stays, so the ISR is never empty).
 *   5. The last known ELR (with ELR on) takes the leader the first time
 *      the ISR empties, and empties once there is a leader again.
 *
 * ELR lists are in ascending id order: Kafka builds them from a hash set
 * of small integers, which iterates so. */
#include <string.h>

#include "cluster/bkr_int.h"
#include "cluster/cfg_val.h"

static bool pcb_has(const int32_t *v, int32_t n, int32_t id)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == id)
            return true;
    return false;
}

static bool pcb_same(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    return na == nb && (na == 0 || !memcmp(a, b, (size_t)na * sizeof(int32_t)));
}

static bool pcb_has_all(const int32_t *a, int32_t na, const int32_t *b, int32_t nb)
{
    for (int32_t i = 0; i < nb; i++)
        if (!pcb_has(a, na, b[i]))
            return false;
    return true;
}

int32_t bkr_topic_min_isr(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t)
{
    char buf[16];
    int64_t n = bc->min_isr_default;
    const char *v = meta_image_config_get(img, META_RES_TOPIC, t->name, t->name_len,
                                          "min.insync.replicas");
    if (v && cfg_val_long(cfg_val_trim(v, buf, sizeof(buf)), &n) < 0)
        n = bc->min_isr_default;
    int32_t rf = t->nparts > 0 && t->parts[0].present ? t->parts[0].nreplicas : 1;
    return n < rf ? (int32_t)(n < 1 ? 1 : n) : rf;
}

void bkr_pcb_init(bkr_pcb_t *b, const bkr_ctl_t *bc, const meta_image_t *img,
                  const mi_topic_t *t, int32_t part)
{
    const mi_part_t *p = &t->parts[part];
    memset(b, 0, sizeof(*b));
    b->img = img;
    b->topic = t;
    b->part = part;
    b->p = p;
    b->election = bkr_unclean_enabled(bc, img, t) ? BKR_PCB_UNCLEAN : BKR_PCB_ONLINE;
    b->leaving = b->joining = b->unclean_shutdown = -1;
    b->elr_on = meta_image_feature(img, BKR_ELR_FEATURE) >= 1;
    b->min_isr = bkr_topic_min_isr(bc, img, t);
    b->tg = (bkr_target_t){p->replicas, p->nreplicas, p->isr, p->nisr,
                           p->adding,   p->nadding,   p->removing, p->nremoving};
    b->elr = p->elr;
    b->nelr = p->nelr;
    b->recovery_state = p->recovery_state;
}

static bool pcb_acceptable(const bkr_pcb_t *b, int32_t r)
{
    return r >= 0 && r != b->leaving && (r == b->joining || meta_image_broker_active(b->img, r));
}

static bool pcb_valid(const bkr_pcb_t *b, int32_t r)
{
    return (pcb_has(b->tg.isr, b->tg.nisr, r) ||
            (b->tg.nisr == 0 && pcb_has(b->elr, b->nelr, r))) &&
           pcb_acceptable(b, r);
}

/* Step 1: the target ELR from the current ELR and ISR (ascending). */
static void pcb_populate_elr(bkr_pcb_t *b, arena_t *arena)
{
    const mi_part_t *p = b->p;
    if (!b->elr_on)
        return;
    if (b->tg.nisr >= b->min_isr) {
        b->nelr = 0;
        return;
    }
    int32_t *v = arena_calloc(arena, (size_t)(b->nelr + p->nisr) + 1, sizeof(int32_t));
    int32_t n = 0;
    for (int32_t k = 0; k < 2; k++) {
        const int32_t *src = k ? p->isr : b->elr;
        int32_t nsrc = k ? p->nisr : b->nelr;
        for (int32_t i = 0; i < nsrc; i++) {
            int32_t r = src[i], j = n;
            if (pcb_has(v, n, r) || pcb_has(b->tg.isr, b->tg.nisr, r) || r == b->unclean_shutdown)
                continue;
            while (j > 0 && v[j - 1] > r) { /* insertion keeps it ascending */
                v[j] = v[j - 1];
                j--;
            }
            v[j] = r;
            n++;
        }
    }
    b->elr = v;
    b->nelr = n;
}

/* The last known leader may lead: ELR on, ISR and ELR empty, and it is
 * the only last known ELR member and acceptable. */
static bool pcb_last_known_ok(const bkr_pcb_t *b)
{
    return b->elr_on && b->tg.nisr == 0 && b->nelr == 0 && b->p->nlast_elr == 1 &&
           pcb_acceptable(b, b->p->last_elr[0]);
}

static int32_t pcb_first_valid(const bkr_pcb_t *b, int32_t from)
{
    for (int32_t i = from; i < b->tg.nreplicas; i++)
        if (pcb_valid(b, b->tg.replicas[i]))
            return b->tg.replicas[i];
    return -1;
}

/* Step 2's choice: the leader, and whether it is an unclean election. */
static int32_t pcb_choose(const bkr_pcb_t *b, bool *unclean)
{
    int32_t r;
    *unclean = false;
    if (b->election == BKR_PCB_PREFERRED && b->tg.nreplicas > 0 &&
        pcb_valid(b, b->tg.replicas[0]))
        return b->tg.replicas[0];
    if (pcb_valid(b, b->p->leader))
        return b->p->leader;
    if ((r = pcb_first_valid(b, b->election == BKR_PCB_PREFERRED ? 1 : 0)) >= 0)
        return r;
    if (pcb_last_known_ok(b)) {
        *unclean = true;
        return b->p->last_elr[0];
    }
    if (b->election != BKR_PCB_UNCLEAN)
        return -1;
    for (int32_t i = 0; i < b->tg.nreplicas; i++)
        if (pcb_acceptable(b, b->tg.replicas[i])) {
            *unclean = true;
            return b->tg.replicas[i];
        }
    return -1;
}

static int32_t *pcb_one(arena_t *arena, int32_t id)
{
    int32_t *v = arena_alloc(arena, sizeof(int32_t));
    *v = id;
    return v;
}

static void pcb_elect(bkr_pcb_t *b, meta_part_change_rec_t *c, arena_t *arena)
{
    bool unclean;
    int32_t leader = pcb_choose(b, &unclean);
    if (leader == b->p->leader)
        return;
    if (pcb_has(b->elr, b->nelr, leader)) {
        int32_t n = 0, *v = arena_calloc(arena, (size_t)b->nelr + 1, sizeof(int32_t));
        for (int32_t i = 0; i < b->nelr; i++)
            if (b->elr[i] != leader)
                v[n++] = b->elr[i];
        b->elr = v;
        b->nelr = n;
        b->tg.isr = pcb_one(arena, leader);
        b->tg.nisr = 1;
    }
    c->leader = leader;
    if (unclean) {
        c->isr = (meta_i32s_t){1, pcb_one(arena, leader)};
        if (b->p->recovery_state != 1)
            c->leader_recovery_state = b->recovery_state = 1;
    }
}

/* Steps 4 and 5, and the ELR itself (emptied by an unclean election). */
static void pcb_elr_fields(bkr_pcb_t *b, meta_part_change_rec_t *c, arena_t *arena)
{
    const mi_part_t *p = b->p;
    if (c->isr.n >= 0 || !b->elr_on)
        b->nelr = 0;
    if (!pcb_same(b->elr, b->nelr, p->elr, p->nelr))
        c->eligible_leader_replicas = (meta_i32s_t){b->nelr, b->elr};
    if (c->isr.n < 0 && (b->tg.nisr > 0 || b->elr_on) &&
        !pcb_same(b->tg.isr, b->tg.nisr, p->isr, p->nisr))
        c->isr = (meta_i32s_t){b->tg.nisr, b->tg.isr};
    if (!b->elr_on)
        return;
    if (c->isr.n == 0 && p->leader >= 0 && (p->nlast_elr != 1 || p->last_elr[0] != p->leader))
        c->last_known_elr = (meta_i32s_t){1, pcb_one(arena, p->leader)};
    else if ((c->leader >= 0 || (p->leader != -1 && c->leader != -1)) && p->nlast_elr > 0)
        c->last_known_elr = (meta_i32s_t){0, NULL};
}

static bool pcb_noop(const meta_part_change_rec_t *c)
{
    return c->isr.n < 0 && c->eligible_leader_replicas.n < 0 && c->last_known_elr.n < 0 &&
           c->leader == -2 && c->replicas.n < 0 && c->removing_replicas.n < 0 &&
           c->adding_replicas.n < 0 && c->leader_recovery_state == -1;
}

int32_t bkr_pcb_build(bkr_pcb_t *b, bkr_out_t *out)
{
    const mi_part_t *p = b->p;
    meta_rec_t *r = bkr_out_add(out, META_REC_PARTITION_CHANGE, META_PART_CHANGE_REC_VERSION);
    meta_part_change_rec_t *c = &r->u.change;

    memcpy(c->topic_id.b, b->topic->id, 16);
    c->partition_id = b->part;
    pcb_populate_elr(b, &out->arena);
    pcb_elect(b, c, &out->arena);
    if (c->leader == -2 && !pcb_has_all(b->tg.replicas, b->tg.nreplicas, p->replicas,
                                        p->nreplicas))
        c->leader = p->leader; /* a new leader epoch fences the dropped replicas */
    pcb_elr_fields(b, c, &out->arena);
    if (!pcb_same(b->tg.replicas, b->tg.nreplicas, p->replicas, p->nreplicas))
        c->replicas = (meta_i32s_t){b->tg.nreplicas, b->tg.replicas};
    if (!pcb_same(b->tg.removing, b->tg.nremoving, p->removing, p->nremoving))
        c->removing_replicas = (meta_i32s_t){b->tg.nremoving, b->tg.removing};
    if (!pcb_same(b->tg.adding, b->tg.nadding, p->adding, p->nadding))
        c->adding_replicas = (meta_i32s_t){b->tg.nadding, b->tg.adding};
    if (c->leader_recovery_state == -1 && b->recovery_state != p->recovery_state)
        c->leader_recovery_state = b->recovery_state;
    int32_t leader = c->leader == -2 ? p->leader : c->leader;
    if (pcb_noop(c))
        out->n--; /* nothing changes: no record */
    return leader;
}
