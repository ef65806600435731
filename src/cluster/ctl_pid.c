/* Producer id blocks (ctl.h). A block is 1000 ids, as Kafka's; taking one
 * is a metadata change like any other (one ProducerIdsRecord naming the
 * first id after it), queued behind the changes before it. While it
 * commits, InitProducerId requests wait. Data dirs written before the
 * metadata log held these records kept the next block in a file of the
 * first log dir; its number is the floor of the first block taken here. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/bkr.h"
#include "cluster/ctl_int.h"
#include "cluster/meta_image.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

#define CTL_PID_BLOCK 1000
#define CTL_PID_LEGACY_FILE "strand-producer-id-block"

void ctl_pid_load(ctl_t *ctl)
{
    char path[4096];
    long long v = 0;
    snprintf(path, sizeof(path), "%s/%s", log_mgr_dir_path(ctl->logs, 0), CTL_PID_LEGACY_FILE);
    FILE *fp = fopen(path, "r");
    if (fp) {
        if (fscanf(fp, "%lld", &v) != 1 || v < 0)
            v = 0;
        fclose(fp);
    }
    ctl->pid_floor = v;
}

/* The first id of the next block: after every block any record took,
 * and after what an older data dir handed out. */
static int64_t ctl_pid_start(const ctl_t *ctl)
{
    int64_t start = ctl->meta->img.next_producer_id;
    if (start < ctl->pid_floor)
        start = ctl->pid_floor;
    if (start < ctl->pid_end)
        start = ctl->pid_end;
    return start;
}

/* A broker asking for a block must be registered at the epoch it names,
 * as Kafka's controller checks it: STALE_BROKER_EPOCH otherwise (a
 * broker whose registration was replaced gets no ids under the old
 * one). */
static int16_t ctl_pid_check_broker(const ctl_t *ctl, const bkr_heartbeat_req_t *req, ctl_op_t *op)
{
    const mi_broker_t *b = meta_image_broker(&ctl->meta->img, req->broker_id);
    if (!b) {
        snprintf(op->msg, sizeof(op->msg), "No broker registration found for broker %d",
                 (int)req->broker_id);
        return KERR_STALE_BROKER_EPOCH;
    }
    if (b->epoch != req->broker_epoch) {
        snprintf(op->msg, sizeof(op->msg), "Expected broker epoch %lld, but got broker epoch %lld",
                 (long long)b->epoch, (long long)req->broker_epoch);
        return KERR_STALE_BROKER_EPOCH;
    }
    return KERR_NONE;
}

int16_t ctl_plan_producer_ids(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    const bkr_heartbeat_req_t *req = op->broker_req;
    int16_t err = req ? ctl_pid_check_broker(ctl, req, op) : KERR_NONE;
    if (err)
        return err;
    meta_rec_t *r = ctl_batch_add(b, META_REC_PRODUCER_IDS);
    op->nparts = 0;
    r->u.producer_ids.broker_id = req ? req->broker_id : ctl->node_id;
    r->u.producer_ids.next_producer_id = ctl_pid_start(ctl) + CTL_PID_BLOCK;
    return KERR_NONE;
}

static void ctl_pid_alloc(ctl_t *ctl);

/* Hands the block out to the waiters, in their order; those left over
 * wait for the next one. */
static void ctl_pid_serve(ctl_t *ctl, int16_t err)
{
    while (ctl->pid_head && (err || ctl->pid_next < ctl->pid_end)) {
        ctl_pid_wait_t *w = ctl->pid_head;
        ctl->pid_head = w->next;
        if (!ctl->pid_head)
            ctl->pid_tail = NULL;
        w->cb(w, err ? -1 : ctl->pid_next++, err);
    }
    if (ctl->pid_head)
        ctl_pid_alloc(ctl);
}

static void ctl_pid_done(ctl_op_t *op)
{
    ctl_t *ctl = op->udata;
    int16_t err = op->err;
    int64_t next = ctl->meta->img.next_producer_id;

    ctl->pid_op = NULL;
    free(op);
    if (err) {
        lg_error("cannot take a block of producer ids: %s", kerr_name(err));
    } else {
        ctl->pid_next = next - CTL_PID_BLOCK;
        ctl->pid_end = next;
    }
    ctl_pid_serve(ctl, err);
}

void ctl_use_pid_source(ctl_t *ctl, int (*fetch)(void *arg), void *arg)
{
    ctl->pid_fetch = fetch;
    ctl->pid_fetch_arg = arg;
}

void ctl_pid_block(ctl_t *ctl, int16_t err, int64_t start, int32_t len)
{
    ctl->pid_fetching = 0;
    if (!err && len > 0 && start >= 0) {
        ctl->pid_next = start;
        ctl->pid_end = start + len;
    } else if (!err) {
        err = KERR_UNKNOWN_SERVER_ERROR;
    }
    ctl_pid_serve(ctl, err);
}

static void ctl_pid_alloc(ctl_t *ctl)
{
    if (ctl->pid_fetch && !meta_log_active(ctl->meta)) {
        /* a quorum's broker: the active controller hands out the block */
        if (!ctl->pid_fetching) {
            ctl->pid_fetching = 1;
            if (ctl->pid_fetch(ctl->pid_fetch_arg) < 0)
                ctl_pid_block(ctl, KERR_NOT_CONTROLLER, -1, 0);
        }
        return;
    }
    if (ctl->pid_op)
        return;
    ctl_op_t *op = xcalloc(1, sizeof(*op));
    op->kind = CTL_ALLOC_PRODUCER_IDS;
    op->nassign = -1;
    op->done = ctl_pid_done;
    op->udata = ctl;
    ctl->pid_op = op;
    ctl_submit(ctl, op);
}

int64_t ctl_producer_id(ctl_t *ctl, ctl_pid_wait_t *w)
{
    if (ctl->pid_next < ctl->pid_end && !ctl->pid_head)
        return ctl->pid_next++;
    w->next = NULL;
    if (ctl->pid_tail)
        ctl->pid_tail->next = w;
    else
        ctl->pid_head = w;
    ctl->pid_tail = w;
    ctl_pid_alloc(ctl);
    return -1;
}

void ctl_pid_serve_shutdown(ctl_t *ctl)
{
    ctl->pid_op = NULL; /* refused with the queue, and freed by its done */
    while (ctl->pid_head) {
        ctl_pid_wait_t *w = ctl->pid_head;
        ctl->pid_head = w->next;
        w->cb(w, -1, KERR_NOT_CONTROLLER);
    }
    ctl->pid_tail = NULL;
}
