/* The controller on a Raft quorum (ctl.h, ctl_use_raft): it decides only
 * while this node is the active controller (meta_log_active); becoming
 * it, the controller takes up the image the quorum has committed (the
 * producer id blocks, the topic defaults) and, on a new cluster's empty
 * log, writes the bootstrap records first, as a Kafka controller writes
 * those of its bootstrap metadata on its first activation. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/ctl_int.h"
#include "net/net_loop.h"
#include "util/kerr.h"
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

/* ---- brokers' sessions on the active controller ---- */

/* A change of the controller's own, in an op it keeps. */
static void ctl_own_submit(ctl_t *ctl, ctl_op_t *op, int kind, int64_t now,
                           void (*done)(ctl_op_t *op))
{
    memset(op, 0, sizeof(*op));
    op->kind = kind;
    op->nassign = -1;
    op->now_ms = now;
    op->done = done;
    op->udata = ctl;
    ctl_submit(ctl, op);
}

static void ctl_fence_done(ctl_op_t *op)
{
    ctl_t *ctl = op->udata;
    ctl->fence_busy = 0;
}

static void ctl_noop_done(ctl_op_t *op)
{
    ctl_t *ctl = op->udata;
    ctl->noop_busy = 0;
}

/* An idle active controller appends a NoOpRecord every
 * metadata.max.idle.interval.ms, as Kafka's does: the high watermark
 * keeps moving, so brokers and followers see the quorum alive and can
 * tell how far behind they are. */
static void ctl_noop_check(ctl_t *ctl, int64_t now)
{
    if (ctl->idle_ms <= 0 || ctl->noop_busy || ctl->head || now - ctl->meta->last_ts < ctl->idle_ms)
        return;
    ctl->noop_busy = 1;
    ctl_own_submit(ctl, &ctl->noop_op, CTL_NOOP, now, ctl_noop_done);
}

/* Fences the expired sessions, one per commit, as Kafka's controller
 * does from its periodic task. */
static void ctl_fence_tick(net_loop_t *loop, void *arg)
{
    ctl_t *ctl = arg;
    int64_t now = net_now_wall_ms();
    int64_t every = ctl->idle_ms > 0 && ctl->idle_ms < 250 ? ctl->idle_ms : 250;
    ctl->fence_timer = net_timer_add(loop, every, ctl_fence_tick, ctl);
    if (!meta_log_active(ctl->meta))
        return;
    ctl_noop_check(ctl, now);
    ctl_elect_tick(ctl, now);
    if (ctl->fence_busy || now < bkr_next_deadline(&ctl->bkr, &ctl->meta->img))
        return;
    ctl->fence_busy = 1;
    ctl_own_submit(ctl, &ctl->fence_op, CTL_FENCE_STALE, now, ctl_fence_done);
}

void ctl_quorum_stop(ctl_t *ctl)
{
    if (ctl->fence_timer && ctl->meta && ctl->meta->loop)
        net_timer_cancel(ctl->meta->loop, ctl->fence_timer);
    ctl->fence_timer = 0;
}

/* ElectLeaders: its own refusal becomes the answer's error. */
static void ctl_elect_leaders(ctl_t *ctl, bkr_elect_req_t *req, bkr_answer_t *ans)
{
    bkr_elect_leaders(&ctl->bkr, &ctl->meta->img, req, &ctl->bout);
    if (req->err) {
        ans->err = req->err;
        snprintf(ans->msg, sizeof(ans->msg), "%s", req->msg);
    }
}

/* A remote broker's registration, heartbeat or AlterPartition, an
 * UnregisterBroker, ElectLeaders, or the session check: the decision
 * (bkr.h) at the offset the batch will land at. */
int16_t ctl_plan_remote_broker(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    bkr_answer_t scratch, *ans = op->broker_ans ? op->broker_ans : &scratch;
    int64_t next = meta_log_next_offset(ctl->meta);
    memset(ans, 0, sizeof(*ans));
    bkr_out_reset(&ctl->bout);
    if (op->kind == CTL_BROKER_REGISTER)
        bkr_register(&ctl->bkr, &ctl->meta->img, op->broker_req, next, op->now_ms, &ctl->bout, ans);
    else if (op->kind == CTL_BROKER_HEARTBEAT)
        bkr_heartbeat(&ctl->bkr, &ctl->meta->img, op->broker_req, next, op->now_ms, &ctl->bout,
                      ans);
    else if (op->kind == CTL_ALTER_PARTITION)
        bkr_alter_partition(&ctl->bkr, &ctl->meta->img, op->alter, &ctl->bout, ans);
    else if (op->kind == CTL_UNREGISTER_BROKER)
        bkr_unregister(&ctl->bkr, &ctl->meta->img, op->nparts, &ctl->bout, ans);
    else if (op->kind == CTL_ELECT_LEADERS)
        ctl_elect_leaders(ctl, op->elect, ans);
    else if (op->kind == CTL_REASSIGN)
        bkr_reassign(&ctl->bkr, &ctl->meta->img, op->reassign, &ctl->bout);
    else if (bkr_fence_stale(&ctl->bkr, &ctl->meta->img, op->now_ms, &ctl->bout) >= 0)
        lg_info("metadata quorum: a broker's session expired: fenced");
    if (ans->err) {
        snprintf(op->msg, sizeof(op->msg), "%s", ans->msg);
        return ans->err;
    }
    /* encoded at submit, while bout still holds what the records name */
    for (int i = 0; i < ctl->bout.n; i++)
        *ctl_batch_add(b, ctl->bout.v[i].type) = ctl->bout.v[i];
    return KERR_NONE;
}

static void ctl_on_active(void *arg)
{
    ctl_t *ctl = arg;
    ctl_pid_load(ctl);
    ctl_defaults_refresh(ctl);
    bkr_ctl_activate(&ctl->bkr, &ctl->meta->img, net_now_wall_ms());
    ctl_elect_activate(ctl, net_now_wall_ms());
    if (!ctl->fence_timer && ctl->meta->loop)
        ctl->fence_timer = net_timer_add(ctl->meta->loop, 250, ctl_fence_tick, ctl);
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
    if (!raft)
        ctl_quorum_stop(ctl);
    meta_log_use_raft(ctl->meta, raft, ctl_on_active, ctl);
}

/* The records of a new quorum, as a Kafka 4.4 controller writes its
 * bootstrap on an empty log: one batch, a metadata transaction
 * (BeginTransactionRecord "Bootstrap records" ... EndTransactionRecord)
 * around a FeatureLevelRecord for each feature finalized above level 0
 * (the levels of this node's bootstrap checkpoint): metadata.version and,
 * when on, eligible.leader.replicas.version with its safety records
 * (ctl_boot_elr); every other feature stands at 0 (what Strand
 * implements of it), and Kafka writes no record for a feature at 0. */
int16_t ctl_plan_bootstrap(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    static const char txn_name[] = "Bootstrap records";
    (void)op;
    if (meta_image_feature(&ctl->meta->img, "metadata.version") > 0)
        return 0; /* another controller wrote them meanwhile */
    meta_rec_t *begin = ctl_batch_add(b, PROTO_REC_BEGIN_TRANSACTION_RECORD);
    begin->u.any.begin_transaction_record.name.p = txn_name;
    begin->u.any.begin_transaction_record.name.len = (int32_t)strlen(txn_name);
    meta_rec_t *fr = ctl_batch_add(b, META_REC_FEATURE_LEVEL);
    fr->u.feature.name.p = "metadata.version";
    fr->u.feature.name.len = (int32_t)strlen("metadata.version");
    fr->u.feature.feature_level = ctl->boot_mv;
    ctl_boot_elr(ctl, b);
    ctl_batch_add(b, PROTO_REC_END_TRANSACTION_RECORD);
    return 0;
}
