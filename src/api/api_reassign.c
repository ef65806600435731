/* AlterPartitionReassignments (45, v0-1) and ListPartitionReassignments
 * (46, v0), as kafka-reassign-partitions.sh drives them: decided on the
 * active controller (cluster/bkr.h, bkr_reassign; the list from its
 * image), forwarded there by a quorum's broker (api_forward.c) as Kafka's
 * brokers forward them. An error of the whole request (NOT_CONTROLLER, a
 * timeout of 0 or less, a forwarded request that timed out) is the
 * top-level error, and every named partition's too. An empty topic list
 * is answered at once with the response's defaults, as Kafka's
 * controller does. */
#include <string.h>

#include "api/api_admin.h"
#include "cluster/bkr.h"
#include "cluster/ctl.h"
#include "util/kerr.h"

typedef struct api_reassign_s {
    api_admin_wait_t w;
    ctl_op_t op;
    bkr_reassign_req_t ra;
    bkr_answer_t ans;
    bool empty; /* no topics: answered at once, with an empty message */
    proto_list_partition_reassignments_req_t list; /* ListPartitionReassignments */
} api_reassign_t;

static void api_reassign_done(ctl_op_t *op)
{
    api_admin_wait_done(&((api_reassign_t *)op->udata)->w);
}

static void api_reassign_answer(api_admin_wait_t *w)
{
    api_reassign_t *r = (api_reassign_t *)w;
    api_req_t *req = w->req;
    proto_alter_partition_reassignments_resp_t resp;
    int16_t err = r->op.err;
    const char *msg = err ? api_admin_op_text(&r->op) : NULL;

    proto_alter_partition_reassignments_resp_init(&resp);
    resp.allow_replication_factor_change = r->empty || r->ra.allow_rf_change;
    resp.error_code = err;
    resp.error_message = api_admin_msg(req, r->empty ? "" : msg);
    resp.responses.n = r->ra.ntopics;
    resp.responses.v = arena_calloc(req->arena, (size_t)r->ra.ntopics + 1,
                                    sizeof(*resp.responses.v));
    for (int i = 0; i < r->ra.ntopics; i++) {
        const bkr_reassign_topic_t *rt = &r->ra.topics[i];
        proto_alter_partition_reassignments_resp_reassignable_topic_response_t *tr =
            &resp.responses.v[i];
        proto_alter_partition_reassignments_resp_reassignable_topic_response_init(tr);
        tr->name = (proto_str_t){rt->name.p, rt->name.len};
        tr->partitions.n = rt->nparts;
        tr->partitions.v = arena_calloc(req->arena, (size_t)rt->nparts + 1,
                                        sizeof(*tr->partitions.v));
        for (int j = 0; j < rt->nparts; j++) {
            proto_alter_partition_reassignments_resp_reassignable_partition_response_t *pr =
                &tr->partitions.v[j];
            proto_alter_partition_reassignments_resp_reassignable_partition_response_init(pr);
            pr->partition_index = rt->parts[j].partition;
            pr->error_code = err ? err : rt->parts[j].err;
            pr->error_message = api_admin_msg(req, err ? msg : rt->parts[j].msg);
        }
    }
    API_REPLY(req, alter_partition_reassignments, &resp);
}

static void api_reassign_fill(api_req_t *req, const proto_alter_partition_reassignments_req_t *m,
                              bkr_reassign_req_t *ra)
{
    ra->allow_rf_change = req->hdr.api_version < 1 || m->allow_replication_factor_change;
    ra->arena = req->arena;
    ra->ntopics = m->topics.n > 0 ? m->topics.n : 0;
    ra->topics = arena_calloc(req->arena, (size_t)ra->ntopics + 1, sizeof(*ra->topics));
    for (int i = 0; i < ra->ntopics; i++) {
        const proto_alter_partition_reassignments_req_reassignable_topic_t *t = &m->topics.v[i];
        bkr_reassign_topic_t *rt = &ra->topics[i];
        rt->name = (meta_str_t){t->name.p, t->name.len};
        rt->nparts = t->partitions.n > 0 ? t->partitions.n : 0;
        rt->parts = arena_calloc(req->arena, (size_t)rt->nparts + 1, sizeof(*rt->parts));
        for (int j = 0; j < rt->nparts; j++) {
            const proto_alter_partition_reassignments_req_reassignable_partition_t *p =
                &t->partitions.v[j];
            static const int32_t empty[1];
            rt->parts[j].partition = p->partition_index;
            /* null cancels; an empty list is a target, refused as one */
            rt->parts[j].replicas = p->replicas.n < 0 ? NULL : p->replicas.n ? p->replicas.v : empty;
            rt->parts[j].nreplicas = p->replicas.n > 0 ? p->replicas.n : 0;
        }
    }
}

static void api_reassign_submit(api_req_t *req, api_reassign_t *r, int kind)
{
    r->op.kind = kind;
    r->op.nassign = -1;
    r->op.reassign = &r->ra;
    r->op.broker_ans = &r->ans;
    r->op.done = api_reassign_done;
    r->op.udata = r;
    api_admin_submit(&r->w, &r->op);
    api_admin_wait_end(&r->w);
    (void)req;
}

void api_alter_partition_reassignments(api_req_t *req)
{
    proto_alter_partition_reassignments_req_t m;
    api_reassign_t *r = arena_calloc(req->arena, 1, sizeof(*r));
    proto_alter_partition_reassignments_req_init(&m);
    if (proto_alter_partition_reassignments_req_decode(&m, req->hdr.api_version, req->body,
                                                       req->body_len, req->arena) < 0) {
        api_close(req, "malformed AlterPartitionReassignments request");
        return;
    }
    api_admin_wait_init(&r->w, req, api_reassign_answer);
    api_reassign_fill(req, &m, &r->ra);
    if (m.topics.n <= 0) {
        r->empty = true; /* Kafka answers at once, its defaults */
        api_admin_wait_end(&r->w);
        return;
    }
    if (api_admin_timed_out(m.timeout_ms)) {
        api_admin_op_timed_out(&r->op);
        api_admin_wait_end(&r->w);
        return;
    }
    api_reassign_submit(req, r, CTL_REASSIGN);
}

/* ---- ListPartitionReassignments ---- */

static bool api_reassign_in(const proto_int32_array_t *want, int32_t p)
{
    for (int32_t i = 0; i < want->n; i++)
        if (want->v[i] == p)
            return true;
    return false;
}

/* The reassigning partitions of t (all, or those of want). */
static void api_reassign_topic(api_req_t *req, const mi_topic_t *t,
                               const proto_int32_array_t *want,
                               proto_list_partition_reassignments_resp_t *resp)
{
    proto_list_partition_reassignments_resp_ongoing_topic_reassignment_t *tr =
        &resp->topics.v[resp->topics.n];
    proto_list_partition_reassignments_resp_ongoing_topic_reassignment_init(tr);
    tr->name = (proto_str_t){t->name, (int32_t)t->name_len};
    tr->partitions.v = arena_calloc(req->arena, (size_t)t->nparts + 1, sizeof(*tr->partitions.v));
    for (int32_t i = 0; i < t->nparts; i++) {
        const mi_part_t *p = &t->parts[i];
        if (!p->present || (!p->nadding && !p->nremoving) || (want && !api_reassign_in(want, i)))
            continue;
        proto_list_partition_reassignments_resp_ongoing_partition_reassignment_t *pr =
            &tr->partitions.v[tr->partitions.n++];
        proto_list_partition_reassignments_resp_ongoing_partition_reassignment_init(pr);
        pr->partition_index = i;
        pr->replicas = (proto_int32_array_t){p->nreplicas, p->replicas};
        pr->adding_replicas = (proto_int32_array_t){p->nadding, p->adding};
        pr->removing_replicas = (proto_int32_array_t){p->nremoving, p->removing};
    }
    if (tr->partitions.n > 0)
        resp->topics.n++;
}

static void api_list_answer(api_admin_wait_t *w)
{
    api_reassign_t *r = (api_reassign_t *)w;
    api_req_t *req = w->req;
    const meta_image_t *img = ctl_image(req->b->ctl);
    proto_list_partition_reassignments_resp_t resp;
    size_t pos = 0, n = 0;
    const mi_topic_t *t;

    proto_list_partition_reassignments_resp_init(&resp);
    resp.error_code = r->op.err;
    resp.error_message = api_admin_msg(req, r->op.err ? api_admin_op_text(&r->op) : NULL);
    while (meta_image_topic_next(img, &pos))
        n++;
    resp.topics.v = arena_calloc(req->arena, n + 1, sizeof(*resp.topics.v));
    if (r->op.err)
        n = 0; /* the request's error: no topics */
    else if (r->list.topics.n < 0) {
        for (pos = 0; (t = meta_image_topic_next(img, &pos));)
            api_reassign_topic(req, t, NULL, &resp);
    }
    if (!r->op.err && r->list.topics.n >= 0) {
        for (int32_t i = 0; i < r->list.topics.n && resp.topics.n < (int32_t)n; i++) {
            const proto_list_partition_reassignments_req_list_partition_reassignments_topics_t
                *lt = &r->list.topics.v[i];
            t = meta_image_topic(img, lt->name.p, lt->name.len < 0 ? 0 : (size_t)lt->name.len);
            if (t)
                api_reassign_topic(req, t, &lt->partition_indexes, &resp);
        }
    }
    API_REPLY(req, list_partition_reassignments, &resp);
}

void api_list_partition_reassignments(api_req_t *req)
{
    api_reassign_t *r = arena_calloc(req->arena, 1, sizeof(*r));
    proto_list_partition_reassignments_req_init(&r->list);
    if (proto_list_partition_reassignments_req_decode(&r->list, req->hdr.api_version, req->body,
                                                      req->body_len, req->arena) < 0) {
        api_close(req, "malformed ListPartitionReassignments request");
        return;
    }
    api_admin_wait_init(&r->w, req, api_list_answer);
    api_reassign_submit(req, r, CTL_LIST_REASSIGN);
}
