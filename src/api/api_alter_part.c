/* AlterPartition (56) on a quorum's controller listener: a partition
 * leader's new ISR, decided by the controller's broker logic
 * (cluster/bkr.h, bkr_alter_partition) as a controller change and
 * answered once its PartitionChangeRecords are committed, with each
 * partition as it is then. A node that is not the active controller
 * answers NOT_CONTROLLER, as Kafka's. */
#include <string.h>

#include "api/api_admin.h"
#include "cluster/bkr.h"
#include "cluster/ctl.h"
#include "util/kerr.h"

typedef struct api_alter_s {
    api_admin_wait_t w;
    ctl_op_t op;
    bkr_alter_req_t alter;
    bkr_answer_t ans;
} api_alter_t;

static void api_alter_done(ctl_op_t *op)
{
    api_admin_wait_done(&((api_alter_t *)op->udata)->w);
}

static void api_alter_part_answer(const bkr_alter_part_t *a, int16_t err,
                                  proto_alter_partition_resp_partition_data_t *pd)
{
    proto_alter_partition_resp_partition_data_init(pd);
    pd->partition_index = a->partition;
    pd->error_code = err ? err : a->err;
    if (pd->error_code)
        return;
    pd->leader_id = a->leader;
    pd->leader_epoch = a->new_leader_epoch;
    pd->isr.n = a->nnew;
    pd->isr.v = (int32_t *)a->new_isr;
    pd->partition_epoch = a->new_partition_epoch;
    pd->leader_recovery_state = a->new_recovery_state;
}

/* A commit that failed fails every partition it would have changed;
 * those left as they were keep their answer. */
static void api_alter_answer(api_admin_wait_t *w)
{
    api_alter_t *r = (api_alter_t *)w;
    proto_alter_partition_resp_t resp;
    arena_t *a = w->req->arena;

    proto_alter_partition_resp_init(&resp);
    resp.error_code = r->op.err == KERR_STALE_BROKER_EPOCH ? r->op.err : KERR_NONE;
    if (r->op.err == KERR_NOT_CONTROLLER)
        resp.error_code = r->op.err;
    if (!resp.error_code) {
        resp.topics.n = r->alter.ntopics;
        resp.topics.v = arena_calloc(a, (size_t)r->alter.ntopics + 1, sizeof(*resp.topics.v));
    }
    for (int i = 0; i < resp.topics.n; i++) {
        const bkr_alter_topic_t *at = &r->alter.topics[i];
        proto_alter_partition_resp_topic_data_t *td = &resp.topics.v[i];
        proto_alter_partition_resp_topic_data_init(td);
        memcpy(td->topic_id.b, at->topic_id, 16);
        td->partitions.n = at->nparts;
        td->partitions.v = arena_calloc(a, (size_t)at->nparts + 1, sizeof(*td->partitions.v));
        for (int j = 0; j < at->nparts; j++)
            api_alter_part_answer(&at->parts[j], r->op.err, &td->partitions.v[j]);
    }
    API_REPLY(w->req, alter_partition, &resp);
}

/* The ISR of a version 2 request, or version 3's with each member's
 * broker epoch, into the decision's arrays (the request's arena). */
static void api_alter_isr(api_req_t *req, const proto_alter_partition_req_partition_data_t *pd,
                          bkr_alter_part_t *p)
{
    int v3 = req->hdr.api_version >= 3;
    int32_t n = v3 ? pd->new_isr_with_epochs.n : pd->new_isr.n;
    int32_t *isr = arena_calloc(req->arena, (size_t)(n > 0 ? n : 0) + 1, sizeof(*isr));
    int64_t *epochs = arena_calloc(req->arena, (size_t)(n > 0 ? n : 0) + 1, sizeof(*epochs));

    for (int32_t i = 0; i < n; i++) {
        isr[i] = v3 ? pd->new_isr_with_epochs.v[i].broker_id : pd->new_isr.v[i];
        epochs[i] = v3 ? pd->new_isr_with_epochs.v[i].broker_epoch : -1;
    }
    p->nisr = n > 0 ? n : 0;
    p->isr = isr;
    p->isr_epochs = epochs;
}

static void api_alter_fill(api_req_t *req, const proto_alter_partition_req_t *m,
                           bkr_alter_req_t *ar)
{
    int nt = m->topics.n > 0 ? m->topics.n : 0;
    ar->broker_id = m->broker_id;
    ar->broker_epoch = m->broker_epoch;
    ar->ntopics = nt;
    ar->topics = arena_calloc(req->arena, (size_t)nt + 1, sizeof(*ar->topics));
    for (int i = 0; i < nt; i++) {
        const proto_alter_partition_req_topic_data_t *td = &m->topics.v[i];
        bkr_alter_topic_t *at = &ar->topics[i];
        int np = td->partitions.n > 0 ? td->partitions.n : 0;
        memcpy(at->topic_id, td->topic_id.b, 16);
        at->nparts = np;
        at->parts = arena_calloc(req->arena, (size_t)np + 1, sizeof(*at->parts));
        for (int j = 0; j < np; j++) {
            const proto_alter_partition_req_partition_data_t *pd = &td->partitions.v[j];
            bkr_alter_part_t *p = &at->parts[j];
            p->partition = pd->partition_index;
            p->leader_epoch = pd->leader_epoch;
            p->partition_epoch = pd->partition_epoch;
            p->recovery_state = pd->leader_recovery_state;
            api_alter_isr(req, pd, p);
        }
    }
}

void api_alter_partition(api_req_t *req)
{
    proto_alter_partition_req_t m;
    api_alter_t *r = arena_calloc(req->arena, 1, sizeof(*r));
    proto_alter_partition_req_init(&m);
    if (proto_alter_partition_req_decode(&m, req->hdr.api_version, req->body, req->body_len,
                                         req->arena) < 0) {
        api_close(req, "malformed AlterPartition request");
        return;
    }
    api_admin_wait_init(&r->w, req, api_alter_answer);
    api_alter_fill(req, &m, &r->alter);
    r->op.kind = CTL_ALTER_PARTITION;
    r->op.nassign = -1;
    r->op.alter = &r->alter;
    r->op.broker_ans = &r->ans;
    r->op.done = api_alter_done;
    r->op.udata = r;
    api_admin_submit(&r->w, &r->op);
    api_admin_wait_end(&r->w);
}
