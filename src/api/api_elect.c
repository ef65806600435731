/* ElectLeaders (43, v0-2): preferred and unclean leader elections on
 * demand (kafka-leader-election.sh, Admin.electLeaders), decided by the
 * controller's broker logic (cluster/bkr.h, bkr_elect_leaders) and
 * answered once its PartitionChangeRecords are committed. A quorum's
 * broker forwards it to the active controller (api_forward.c), as Kafka's
 * does; a controller that is not the active one answers NOT_CONTROLLER.
 *
 * Answers as Kafka's: a null topic list elects every partition and lists
 * every topic with the partitions an election was made or failed for; an
 * empty list is answered at once, empty. An error of the whole request
 * (NOT_CONTROLLER, an unknown election type, a timeout of 0 or less, a
 * forwarded request that timed out) is the top-level error from v1 and every named partition's;
 * v0 has no top-level error, so there it is only the partitions'. */
#include <string.h>

#include "api/api_admin.h"
#include "cluster/bkr.h"
#include "cluster/ctl.h"
#include "util/kerr.h"

typedef struct api_elect_s {
    api_admin_wait_t w;
    ctl_op_t op;
    bkr_elect_req_t elect;
    bkr_answer_t ans;
} api_elect_t;

static void api_elect_done(ctl_op_t *op)
{
    api_admin_wait_done(&((api_elect_t *)op->udata)->w);
}

static void api_elect_part(api_req_t *req, const bkr_elect_part_t *ep, int16_t err,
                           const char *msg, proto_elect_leaders_resp_partition_result_t *pr)
{
    proto_elect_leaders_resp_partition_result_init(pr);
    pr->partition_id = ep->partition;
    pr->error_code = err ? err : ep->err;
    pr->error_message = api_admin_msg(req, err ? msg : ep->msg);
}

static void api_elect_answer(api_admin_wait_t *w)
{
    api_elect_t *r = (api_elect_t *)w;
    api_req_t *req = w->req;
    proto_elect_leaders_resp_t resp;
    int16_t err = r->op.err;
    const char *msg = err ? api_admin_op_text(&r->op) : NULL;

    proto_elect_leaders_resp_init(&resp);
    resp.error_code = err;
    /* a refused request for every partition names none */
    int nt = err && r->elect.all ? 0 : r->elect.ntopics;
    resp.replica_election_results.n = nt;
    resp.replica_election_results.v =
        arena_calloc(req->arena, (size_t)nt + 1, sizeof(*resp.replica_election_results.v));
    for (int i = 0; i < nt; i++) {
        const bkr_elect_topic_t *et = &r->elect.topics[i];
        proto_elect_leaders_resp_replica_election_result_t *tr =
            &resp.replica_election_results.v[i];
        proto_elect_leaders_resp_replica_election_result_init(tr);
        tr->topic = (proto_str_t){et->name.p, et->name.len};
        tr->partition_result.n = et->nparts;
        tr->partition_result.v =
            arena_calloc(req->arena, (size_t)et->nparts + 1, sizeof(*tr->partition_result.v));
        for (int j = 0; j < et->nparts; j++)
            api_elect_part(req, &et->parts[j], err, msg, &tr->partition_result.v[j]);
    }
    API_REPLY(req, elect_leaders, &resp);
}

/* The request's topics and partitions into the decision's (the arena). */
static void api_elect_fill(api_req_t *req, const proto_elect_leaders_req_t *m,
                           bkr_elect_req_t *er)
{
    er->type = req->hdr.api_version >= 1 ? m->election_type : BKR_ELECT_PREFERRED;
    er->arena = req->arena;
    er->all = m->topic_partitions.n < 0;
    if (er->all)
        return;
    er->ntopics = m->topic_partitions.n;
    er->topics = arena_calloc(req->arena, (size_t)er->ntopics + 1, sizeof(*er->topics));
    for (int i = 0; i < er->ntopics; i++) {
        const proto_elect_leaders_req_topic_partitions_t *tp = &m->topic_partitions.v[i];
        bkr_elect_topic_t *et = &er->topics[i];
        int np = tp->partitions.n > 0 ? tp->partitions.n : 0;
        et->name = (meta_str_t){tp->topic.p, tp->topic.len};
        et->nparts = np;
        et->parts = arena_calloc(req->arena, (size_t)np + 1, sizeof(*et->parts));
        for (int j = 0; j < np; j++)
            et->parts[j].partition = tp->partitions.v[j];
    }
}

void api_elect_leaders(api_req_t *req)
{
    proto_elect_leaders_req_t m;
    api_elect_t *r = arena_calloc(req->arena, 1, sizeof(*r));
    proto_elect_leaders_req_init(&m);
    if (proto_elect_leaders_req_decode(&m, req->hdr.api_version, req->body, req->body_len,
                                       req->arena) < 0) {
        api_close(req, "malformed ElectLeaders request");
        return;
    }
    api_admin_wait_init(&r->w, req, api_elect_answer);
    api_elect_fill(req, &m, &r->elect);
    if (!r->elect.all && r->elect.ntopics == 0) {
        api_admin_wait_end(&r->w); /* nothing to elect: Kafka answers at once */
        return;
    }
    if (api_admin_timed_out(m.timeout_ms)) {
        api_admin_op_timed_out(&r->op);
        api_admin_wait_end(&r->w);
        return;
    }
    r->op.kind = CTL_ELECT_LEADERS;
    r->op.nassign = -1;
    r->op.elect = &r->elect;
    r->op.broker_ans = &r->ans;
    r->op.now_ms = req->now_ms;
    r->op.done = api_elect_done;
    r->op.udata = r;
    api_admin_submit(&r->w, &r->op);
    api_admin_wait_end(&r->w);
}
