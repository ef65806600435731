/* Leader elections on demand (ElectLeaders) and by policy (the periodic
 * preferred elections of auto.leader.rebalance.enable, the periodic
 * unclean elections), as Kafka 4.4's ReplicationControlManager makes
 * them; the partition change builder (bkr_pcb.c) decides each:
 *
 *   - preferred: the first replica when it may lead; else the current
 *     leader stays if it still may (no change); else the next replica in
 *     replica order that may;
 *   - unclean: the current leader if it may lead, else the first replica
 *     that may (a clean election), else the first active replica of all:
 *     the ISR becomes that replica alone and the partition RECOVERING,
 *     until its leader says it has recovered (AlterPartition,
 *     bkr_alter.c). Data the old ISR had may be lost.
 *
 * A replica may lead when it is in the ISR (or, the ISR empty, in the
 * eligible leader replicas) and active (registered, unfenced, not
 * shutting down). A change of leader is a PartitionChangeRecord;
 * applied, it bumps both epochs. The partitions are found by scans of
 * the image, as in bkr_isr.c: elections are rare and the image keeps no
 * index of the imbalanced ones. */
#include <stdio.h>
#include <string.h>

#include "cluster/bkr_int.h"
#include "cluster/cfg_val.h"
#include "util/kerr.h"

/* Kafka's default messages of the errors an election answers. */
#define BKR_MSG_NOT_NEEDED "Leader election not needed for topic partition."
#define BKR_MSG_PREFERRED "The preferred leader was not available."
#define BKR_MSG_ELIGIBLE "Eligible topic partition leaders are not available."

static bool bkr_el_has_preferred(const mi_part_t *p)
{
    return p->leader == (p->nreplicas > 0 ? p->replicas[0] : -1);
}

/* The election of partition part of t (bkr_pcb.c decides it); true when
 * it elected a leader other than the current one. */
static bool bkr_el_change(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t,
                          int32_t part, int type, bkr_out_t *out)
{
    bkr_pcb_t b;
    int first = out->n;
    bkr_pcb_init(&b, bc, img, t, part);
    b.election = type == BKR_ELECT_PREFERRED ? BKR_PCB_PREFERRED : BKR_PCB_UNCLEAN;
    if (bkr_pcb_build(&b, out) != t->parts[part].leader)
        return true;
    out->n = first; /* no new leader: no change */
    return false;
}

/* Kafka's electLeader: one partition named by topic name and id. */
static int16_t bkr_el_one(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t,
                          meta_str_t name, int32_t part, int type, arena_t *arena,
                          bkr_out_t *out, const char **msg)
{
    char buf[400];
    if (!t || part < 0 || part >= t->nparts || !t->parts[part].present) {
        if (!t)
            snprintf(buf, sizeof(buf), "No such topic as %.*s", (int)name.len, name.p);
        else
            snprintf(buf, sizeof(buf), "No such partition as %.*s-%d", (int)name.len, name.p,
                     (int)part);
        *msg = arena_strndup(arena, buf, strlen(buf));
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    const mi_part_t *p = &t->parts[part];
    if (type == BKR_ELECT_PREFERRED ? bkr_el_has_preferred(p) : p->leader != -1) {
        *msg = BKR_MSG_NOT_NEEDED;
        return KERR_ELECTION_NOT_NEEDED;
    }
    if (!bkr_el_change(bc, img, t, part, type, out)) {
        *msg = type == BKR_ELECT_PREFERRED ? BKR_MSG_PREFERRED : BKR_MSG_ELIGIBLE;
        return type == BKR_ELECT_PREFERRED ? KERR_PREFERRED_LEADER_NOT_AVAILABLE
                                           : KERR_ELIGIBLE_LEADERS_NOT_AVAILABLE;
    }
    *msg = NULL;
    return KERR_NONE;
}

/* Every partition of t, listing those an election was made or failed
 * for (ELECTION_NOT_NEEDED is left out, as Kafka leaves it). */
static void bkr_el_topic_all(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t,
                             bkr_elect_req_t *req, bkr_elect_topic_t *et, bkr_out_t *out)
{
    et->name = (meta_str_t){t->name, (int32_t)t->name_len};
    et->parts = arena_calloc(req->arena, (size_t)t->nparts + 1, sizeof(*et->parts));
    et->nparts = 0;
    for (int32_t i = 0; i < t->nparts; i++) {
        if (!t->parts[i].present)
            continue;
        bkr_elect_part_t *ep = &et->parts[et->nparts];
        ep->partition = i;
        ep->err = bkr_el_one(bc, img, t, et->name, i, req->type, req->arena, out, &ep->msg);
        if (ep->err != KERR_ELECTION_NOT_NEEDED)
            et->nparts++;
    }
}

static void bkr_el_all(const bkr_ctl_t *bc, const meta_image_t *img, bkr_elect_req_t *req,
                       bkr_out_t *out)
{
    size_t pos = 0, n = 0;
    const mi_topic_t *t;
    while (meta_image_topic_next(img, &pos))
        n++;
    req->topics = arena_calloc(req->arena, n + 1, sizeof(*req->topics));
    req->ntopics = 0;
    pos = 0;
    while ((t = meta_image_topic_next(img, &pos)))
        bkr_el_topic_all(bc, img, t, req, &req->topics[req->ntopics++], out);
}

void bkr_elect_leaders(const bkr_ctl_t *bc, const meta_image_t *img, bkr_elect_req_t *req,
                       bkr_out_t *out)
{
    req->err = KERR_NONE;
    req->msg[0] = '\0';
    if (req->type != BKR_ELECT_PREFERRED && req->type != BKR_ELECT_UNCLEAN) {
        req->err = KERR_INVALID_REQUEST;
        snprintf(req->msg, sizeof(req->msg), "Unknown election type %d", (int)req->type);
        return;
    }
    if (req->all) {
        bkr_el_all(bc, img, req, out);
        return;
    }
    for (int i = 0; i < req->ntopics; i++) {
        bkr_elect_topic_t *et = &req->topics[i];
        const mi_topic_t *t = meta_image_topic(img, et->name.p, (size_t)et->name.len);
        for (int j = 0; j < et->nparts; j++) {
            bkr_elect_part_t *ep = &et->parts[j];
            ep->err = bkr_el_one(bc, img, t, et->name, ep->partition, req->type, req->arena,
                                 out, &ep->msg);
        }
    }
}

int bkr_elect_rebalance(const bkr_ctl_t *bc, const meta_image_t *img, int max, bkr_out_t *out)
{
    size_t pos = 0;
    const mi_topic_t *t;
    while ((t = meta_image_topic_next(img, &pos)))
        for (int32_t i = 0; i < t->nparts; i++) {
            if (!t->parts[i].present || bkr_el_has_preferred(&t->parts[i]))
                continue;
            if (out->n >= max)
                return 1;
            bkr_el_change(bc, img, t, i, BKR_ELECT_PREFERRED, out);
        }
    return 0;
}

bool bkr_elect_imbalanced(const meta_image_t *img)
{
    size_t pos = 0;
    const mi_topic_t *t;
    while ((t = meta_image_topic_next(img, &pos)))
        for (int32_t i = 0; i < t->nparts; i++)
            if (t->parts[i].present && !bkr_el_has_preferred(&t->parts[i]))
                return true;
    return false;
}

bool bkr_unclean_enabled(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t)
{
    char buf[16];
    bool on;
    const char *v = meta_image_config_get(img, META_RES_TOPIC, t->name, t->name_len,
                                          "unclean.leader.election.enable");
    if (!v || cfg_val_bool(cfg_val_trim(v, buf, sizeof(buf)), &on) < 0)
        return bc->unclean_default;
    return on;
}

int bkr_elect_unclean_all(const bkr_ctl_t *bc, const meta_image_t *img, int max, bkr_out_t *out)
{
    size_t pos = 0;
    const mi_topic_t *t;
    while ((t = meta_image_topic_next(img, &pos)))
        for (int32_t i = 0; i < t->nparts; i++) {
            if (!t->parts[i].present || t->parts[i].leader != -1 ||
                !bkr_unclean_enabled(bc, img, t))
                continue;
            if (out->n >= max)
                return 1;
            bkr_el_change(bc, img, t, i, BKR_ELECT_UNCLEAN, out);
        }
    return 0;
}
