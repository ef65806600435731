/* Where new partitions go (ctl_int.h): Kafka's striped placement over the
 * image's usable brokers for a replication factor (bkr_place.c), and
 * CreatePartitions' explicit assignments checked against the image's
 * brokers, as Kafka's ReplicationControlManager does both. Until the
 * image has a broker (a node's first start registers it after the
 * bootstrap), this node is the only one. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/ctl_int.h"
#include "util/kerr.h"
#include "util/mem.h"

static int ctl_usable(ctl_t *ctl, bkr_usable_t **u)
{
    int n = bkr_usable(&ctl->meta->img, u);
    /* A single node places on itself before its registration; a quorum's
     * controllers place only on the brokers registered with it. */
    if (ctl->meta->img.nbrokers == 0 && !ctl->quorum) {
        (*u)[0] = (bkr_usable_t){ctl->node_id, ctl->rack, false};
        n = 1;
    }
    return n;
}

int16_t ctl_place(ctl_t *ctl, ctl_op_t *op, int32_t nparts, int16_t rf, int32_t **assign)
{
    bkr_usable_t *u;
    char msg[384];
    int n = ctl_usable(ctl, &u);
    uint64_t seed = (uint64_t)op->now_ms * 0x9e3779b97f4a7c15ULL ^ (uint64_t)ctl->node_epoch;

    *assign = xcalloc((size_t)(nparts > 0 ? nparts : 0) * (size_t)(rf > 0 ? rf : 1) + 1,
                      sizeof(int32_t));
    int16_t err = bkr_place(u, n, nparts, rf, seed, *assign, msg, sizeof(msg));
    free(u);
    if (err)
        snprintf(op->msg, sizeof(op->msg), "Unable to replicate the partition %d time(s): %s",
                 rf, msg);
    return err;
}

int16_t ctl_assignment(ctl_t *ctl, ctl_op_t *op, int32_t from, int rf_now, int32_t **assign,
                       int *rf)
{
    const meta_image_t *img = &ctl->meta->img;
    int16_t err = KERR_NONE;

    *rf = op->nassign > 0 ? op->assign_n[0] : rf_now;
    *assign = xcalloc((size_t)op->nassign * (size_t)(*rf > 0 ? *rf : 1) + 1, sizeof(int32_t));
    for (int32_t i = 0; !err && i < op->nassign; i++) {
        int n = op->assign_n[i];
        if (img->nbrokers == 0 && !ctl->quorum) /* before the registration: this node alone */
            err = n == 1 && op->assign[i][0] == ctl->node_id ? KERR_NONE
                                                              : KERR_INVALID_REPLICA_ASSIGNMENT;
        else
            err = bkr_check_assignment(img, op->assign[i], n, rf_now, op->msg, sizeof(op->msg));
        if (!err && img->nbrokers) {
            int32_t *isr = xcalloc((size_t)n + 1, sizeof(int32_t));
            if (!bkr_assignment_isr(img, op->assign[i], n, from + i, isr, op->msg,
                                    sizeof(op->msg)))
                err = KERR_INVALID_REPLICA_ASSIGNMENT;
            free(isr);
        }
        if (!err)
            memcpy(*assign + (size_t)i * (size_t)*rf, op->assign[i], (size_t)n * sizeof(int32_t));
    }
    if (err && !op->msg[0])
        snprintf(op->msg, sizeof(op->msg), "The manual partition assignment includes broker %d, "
                 "but no such broker is registered.", (int)op->assign[0][0]);
    return err;
}
