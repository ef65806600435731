/* Partition reassignments (bkr.h), as Kafka 4.4's controller runs them:
 *
 *   1. AlterPartitionReassignments writes a PartitionChangeRecord whose
 *      replicas are the target replicas followed by those being removed,
 *      with addingReplicas (target less current) and removingReplicas
 *      (current less target). The new replicas' brokers create the
 *      partition and follow its leader.
 *   2. Once the leader has taken every adding replica into its ISR
 *      (AlterPartition, bkr_alter.c), the change that says so also
 *      finishes the reassignment: the removing replicas leave the replica
 *      list and the ISR, nothing is adding or removing any more, and a
 *      leader being removed hands over to the first target replica in the
 *      ISR. Their brokers delete the partition.
 *
 * A reassignment that only reorders replicas, or whose ISR already holds
 * every target replica, finishes in step 1. Pure, as the rest of bkr*. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cluster/bkr_int.h"
#include "util/kerr.h"

static bool bkr_ra_has(const int32_t *v, int32_t n, int32_t id)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == id)
            return true;
    return false;
}

/* a less b, in a's order, into arena: the count. */
static int32_t bkr_ra_minus(arena_t *arena, const int32_t *a, int32_t na, const int32_t *b,
                            int32_t nb, int32_t **out)
{
    int32_t n = 0;
    *out = arena_calloc(arena, (size_t)na + 1, sizeof(int32_t));
    for (int32_t i = 0; i < na; i++)
        if (!bkr_ra_has(b, nb, a[i]))
            (*out)[n++] = a[i];
    return n;
}

/* a's members that are in b, in a's order, into arena: the count. */
static int32_t bkr_ra_keep(arena_t *arena, const int32_t *a, int32_t na, const int32_t *b,
                           int32_t nb, int32_t **out)
{
    int32_t n = 0;
    *out = arena_calloc(arena, (size_t)na + 1, sizeof(int32_t));
    for (int32_t i = 0; i < na; i++)
        if (bkr_ra_has(b, nb, a[i]))
            (*out)[n++] = a[i];
    return n;
}

bool bkr_reassign_complete(bkr_target_t *t, arena_t *arena)
{
    int32_t *isr, *reps;
    if (t->nadding == 0 && t->nremoving == 0)
        return false;
    int32_t nisr = bkr_ra_minus(arena, t->isr, t->nisr, t->removing, t->nremoving, &isr);
    int32_t nreps =
        bkr_ra_minus(arena, t->replicas, t->nreplicas, t->removing, t->nremoving, &reps);
    if (nisr == 0 || nreps == 0)
        return false;
    for (int32_t i = 0; i < nreps; i++)
        if (!bkr_ra_has(isr, nisr, reps[i]))
            return false;
    t->replicas = reps;
    t->nreplicas = nreps;
    t->isr = isr;
    t->nisr = nisr;
    t->nadding = t->nremoving = 0;
    return true;
}

int32_t bkr_target_write(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *topic,
                         int32_t partition, const bkr_target_t *t, bkr_out_t *out)
{
    bkr_pcb_t b;
    bkr_pcb_init(&b, bc, img, topic, partition);
    b.tg = *t;
    return bkr_pcb_build(&b, out);
}

/* ---- AlterPartitionReassignments ---- */

static void bkr_ra_fail(bkr_reassign_req_t *req, bkr_reassign_part_t *rp, int16_t err,
                        const char *fmt, ...) __attribute__((format(printf, 4, 5)));
static void bkr_ra_fail(bkr_reassign_req_t *req, bkr_reassign_part_t *rp, int16_t err,
                        const char *fmt, ...)
{
    char buf[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    rp->err = err;
    rp->msg = arena_strndup(req->arena, buf, strlen(buf));
}

/* The reassignment in progress undone (Kafka's PartitionReassignmentRevert):
 * the replicas before it, the adding ones out of the ISR. */
static void bkr_ra_cancel(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t,
                          bkr_reassign_req_t *req, bkr_reassign_part_t *rp, bkr_out_t *out)
{
    const mi_part_t *p = &t->parts[rp->partition];
    bkr_target_t tg = {0};
    if (p->nadding == 0 && p->nremoving == 0) {
        rp->err = KERR_NO_REASSIGNMENT_IN_PROGRESS; /* no message, as Kafka's */
        return;
    }
    tg.nreplicas = bkr_ra_minus(&out->arena, p->replicas, p->nreplicas, p->adding, p->nadding,
                                &tg.replicas);
    tg.nisr = bkr_ra_minus(&out->arena, p->isr, p->nisr, p->adding, p->nadding, &tg.isr);
    if (tg.nisr == 0) {
        if (!bkr_unclean_enabled(bc, img, t)) {
            bkr_ra_fail(req, rp, KERR_INVALID_REPLICA_ASSIGNMENT, "Unable to revert partition "
                        "assignment for %s:%d because it would require an unclean leader "
                        "election.", t->name, (int)rp->partition);
            return;
        }
        tg.isr = tg.replicas; /* the leader among them is elected uncleanly */
        tg.nisr = tg.nreplicas;
    }
    bkr_target_write(bc, img, t, rp->partition, &tg, out);
}

/* KIP-860: the replica count before the reassignment, against the
 * target's. */
static bool bkr_ra_rf_changes(const mi_part_t *p, const bkr_reassign_part_t *rp)
{
    return p->nreplicas - p->nadding != rp->nreplicas;
}

static void bkr_ra_change(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t,
                          bkr_reassign_req_t *req, bkr_reassign_part_t *rp, bkr_out_t *out)
{
    const mi_part_t *p = &t->parts[rp->partition];
    bkr_target_t tg = {0};
    char msg[256];
    int32_t *orig, *removing;
    rp->err = bkr_check_assignment(img, rp->replicas, rp->nreplicas, 0, msg, sizeof(msg));
    if (rp->err) {
        rp->msg = arena_strndup(req->arena, msg, strlen(msg));
        return;
    }
    if (!req->allow_rf_change && bkr_ra_rf_changes(p, rp)) {
        bkr_ra_fail(req, rp, KERR_INVALID_REPLICATION_FACTOR, "The replication factor is "
                    "changed from %d to %d",
                    (int)(p->nreplicas - p->nadding), (int)rp->nreplicas);
        return;
    }
    /* from the replicas before any reassignment in progress */
    int32_t norig = bkr_ra_minus(&out->arena, p->replicas, p->nreplicas, p->adding, p->nadding,
                                 &orig);
    int32_t nrem = bkr_ra_minus(&out->arena, orig, norig, rp->replicas, rp->nreplicas, &removing);
    tg.nadding = bkr_ra_minus(&out->arena, rp->replicas, rp->nreplicas, orig, norig, &tg.adding);
    tg.removing = removing;
    tg.nremoving = nrem;
    tg.replicas = arena_calloc(&out->arena, (size_t)(rp->nreplicas + nrem) + 1, sizeof(int32_t));
    memcpy(tg.replicas, rp->replicas, (size_t)rp->nreplicas * sizeof(int32_t));
    memcpy(tg.replicas + rp->nreplicas, removing, (size_t)nrem * sizeof(int32_t));
    tg.nreplicas = rp->nreplicas + nrem;
    /* a replica no longer being added leaves the ISR it may have joined */
    tg.nisr = bkr_ra_keep(&out->arena, p->isr, p->nisr, tg.replicas, tg.nreplicas, &tg.isr);
    bkr_reassign_complete(&tg, &out->arena);
    bkr_target_write(bc, img, t, rp->partition, &tg, out);
}

void bkr_reassign(const bkr_ctl_t *bc, const meta_image_t *img, bkr_reassign_req_t *req,
                  bkr_out_t *out)
{
    for (int i = 0; i < req->ntopics; i++) {
        bkr_reassign_topic_t *rt = &req->topics[i];
        const mi_topic_t *t = meta_image_topic(img, rt->name.p, (size_t)rt->name.len);
        for (int j = 0; j < rt->nparts; j++) {
            bkr_reassign_part_t *rp = &rt->parts[j];
            if (!t)
                bkr_ra_fail(req, rp, KERR_UNKNOWN_TOPIC_OR_PARTITION, "Unable to find a topic "
                            "named %.*s.", (int)rt->name.len, rt->name.p);
            else if (rp->partition < 0 || rp->partition >= t->nparts ||
                     !t->parts[rp->partition].present)
                bkr_ra_fail(req, rp, KERR_UNKNOWN_TOPIC_OR_PARTITION, "Unable to find partition "
                            "%s:%d.", t->name, (int)rp->partition);
            else if (!rp->replicas)
                bkr_ra_cancel(bc, img, t, req, rp, out);
            else
                bkr_ra_change(bc, img, t, req, rp, out);
        }
    }
}
