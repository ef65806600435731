/* The controller on a Raft quorum (ctl.h, ctl_use_raft): it decides only
 * while this node is the active controller (meta_log_active); becoming
 * it, the controller takes up the image the quorum has committed (the
 * producer id blocks, the topic defaults) and, on a new cluster's empty
 * log, writes the bootstrap records first, as a Kafka controller writes
 * those of its bootstrap metadata on its first activation. */
#include <stdlib.h>
#include <string.h>

#include "cluster/ctl_int.h"
#include "net/net_loop.h"
#include "util/logging.h"
#include "util/mem.h"

static void ctl_boot_done(ctl_op_t *op)
{
    if (op->err)
        lg_warn("metadata quorum: the bootstrap records were not written (%s); the next active "
                "controller writes them",
                op->msg);
    free(op);
}

static void ctl_on_active(void *arg)
{
    ctl_t *ctl = arg;
    ctl_pid_load(ctl);
    ctl_defaults_refresh(ctl);
    if (meta_image_feature(&ctl->meta->img, "metadata.version") > 0)
        return;
    ctl_op_t *op = xcalloc(1, sizeof(*op));
    op->kind = CTL_BOOTSTRAP;
    op->now_ms = net_now_wall_ms();
    op->done = ctl_boot_done;
    ctl_submit(ctl, op);
}

void ctl_use_raft(ctl_t *ctl, struct raft_node_s *raft)
{
    meta_log_use_raft(ctl->meta, raft, ctl_on_active, ctl);
}

/* The records of a new quorum: the metadata.version this node runs. */
int16_t ctl_plan_bootstrap(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    (void)op;
    if (meta_image_feature(&ctl->meta->img, "metadata.version") > 0)
        return 0; /* another controller wrote them meanwhile */
    meta_rec_t *fr = ctl_batch_add(b, META_REC_FEATURE_LEVEL);
    fr->u.feature.name.p = "metadata.version";
    fr->u.feature.name.len = (int32_t)strlen("metadata.version");
    fr->u.feature.feature_level = META_LOG_METADATA_VERSION;
    return 0;
}
