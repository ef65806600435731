/* AddPartitionsToTxn (24), AddOffsetsToTxn (25) and EndTxn (26), as
 * Kafka's KafkaApis hands them to its transaction coordinator: v0-3 of
 * AddPartitionsToTxn are a client's one transaction (partitions of
 * unknown topics get UNKNOWN_TOPIC_OR_PARTITION and the others
 * OPERATION_NOT_ATTEMPTED, without asking the coordinator); v4+ are a
 * broker's batch of transactions, each verified (VerifyOnly) or added. The
 * answers wait for the coordinator's write. */
#include "api/api_group.h"
#include "api/api_txn.h"
#include "api/api_util.h"

#include <string.h>

#include "coord/grp_log.h"
#include "coord/grp_rec.h"
#include "coord/txn.h"
#include "util/kerr.h"

typedef proto_add_partitions_to_txn_req_add_partitions_to_txn_topic_t api_apt_topic_t;
typedef proto_add_partitions_to_txn_resp_add_partitions_to_txn_topic_result_t api_apt_result_t;

/* A request waiting for the coordinator: answered once every part of it
 * (one per transaction of a v4+ request) is. */
typedef struct api_txn_w_s {
    api_req_t *req;
    int out;
    proto_add_partitions_to_txn_resp_t resp;
} api_txn_w_t;

/* One transaction of the request: its results get err for every
 * partition (0 included) unless already set. */
typedef struct api_txn_part_s {
    api_txn_w_t *w;
    api_apt_result_t *results;
    int32_t nresults;
} api_txn_part_t;

static void api_apt_fill(api_apt_result_t *v, int32_t n, int16_t err)
{
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < v[i].results_by_partition.n; j++)
            v[i].results_by_partition.v[j].partition_error_code = err;
}

static void api_apt_reply(api_txn_w_t *w)
{
    net_conn_t *conn = w->req->conn;
    if (!conn->closing)
        API_REPLY(w->req, add_partitions_to_txn, &w->resp);
    net_conn_release(conn);
}

static void api_apt_done(void *arg, int16_t err)
{
    api_txn_part_t *p = arg;
    api_apt_fill(p->results, p->nresults, api_txn_fenced(err, p->w->req->hdr.api_version, 2));
    if (--p->w->out == 0)
        api_apt_reply(p->w);
}

/* The results of topics tv[0..n), every partition at 0; *ntps the
 * partitions, their list in *tps (from the arena). */
static api_apt_result_t *api_apt_results(api_req_t *req, const api_apt_topic_t *tv, int32_t n,
                                         txn_tp_t **tps, int *ntps)
{
    api_apt_result_t *v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*v));
    int total = 0;

    for (int32_t i = 0; i < n; i++)
        total += tv[i].partitions.n > 0 ? tv[i].partitions.n : 0;
    *tps = arena_calloc(req->arena, (size_t)total + 1, sizeof(**tps));
    *ntps = 0;
    for (int32_t i = 0; i < n; i++) {
        proto_add_partitions_to_txn_resp_add_partitions_to_txn_topic_result_init(&v[i]);
        v[i].name = tv[i].name;
        int32_t np = tv[i].partitions.n > 0 ? tv[i].partitions.n : 0;
        v[i].results_by_partition.n = np;
        v[i].results_by_partition.v =
            arena_calloc(req->arena, (size_t)np + 1, sizeof(*v[i].results_by_partition.v));
        for (int32_t j = 0; j < np; j++) {
            v[i].results_by_partition.v[j].partition_index = tv[i].partitions.v[j];
            (*tps)[*ntps].topic = api_cstr(req, tv[i].name);
            (*tps)[(*ntps)++].partition = tv[i].partitions.v[j];
        }
    }
    return v;
}

/* Kafka's checks before the coordinator: a client (v0-3) may not add
 * an internal topic's partitions (TOPIC_AUTHORIZATION_FAILED, as its
 * authorizer filter leaves them out), and partitions its metadata does
 * not know are UNKNOWN_TOPIC_OR_PARTITION. Returns 1 when some were found
 * (their error set, the others OPERATION_NOT_ATTEMPTED). */
static int api_apt_unknown(api_req_t *req, api_apt_result_t *v, int32_t n)
{
    int bad = 0;

    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < v[i].results_by_partition.n; j++) {
            int16_t err = req->hdr.api_version < 4 && api_internal_topic(v[i].name)
                              ? KERR_TOPIC_AUTHORIZATION_FAILED
                              : api_group_part_check(req, v[i].name,
                                                     v[i].results_by_partition.v[j].partition_index);
            if (err) {
                v[i].results_by_partition.v[j].partition_error_code = err;
                bad = 1;
            }
        }
    if (!bad)
        return 0;
    for (int32_t i = 0; i < n; i++)
        for (int32_t j = 0; j < v[i].results_by_partition.n; j++)
            if (!v[i].results_by_partition.v[j].partition_error_code)
                v[i].results_by_partition.v[j].partition_error_code =
                    KERR_OPERATION_NOT_ATTEMPTED;
    return 1;
}

/* One transaction (a v0-3 request's, or one of a v4+ batch). */
static void api_apt_one(api_txn_w_t *w, struct txn_coord_s *c, proto_str_t id, int64_t pid,
                        int16_t epoch, bool verify_only, const api_apt_topic_t *tv, int32_t n,
                        api_apt_result_t **out, int32_t *nout)
{
    api_req_t *req = w->req;
    api_txn_part_t *p = arena_calloc(req->arena, 1, sizeof(*p));
    txn_tp_t *tps;
    int ntps;

    p->w = w;
    p->results = *out = api_apt_results(req, tv, n, &tps, &ntps);
    p->nresults = *nout = n;
    w->out++;
    if (!c) {
        api_apt_done(p, KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    if (api_apt_unknown(req, p->results, n)) {
        w->out--;
        return;
    }
    if (verify_only) {
        int16_t *errs = arena_calloc(req->arena, (size_t)ntps + 1, sizeof(*errs));
        int16_t err = txn_verify(c, id.p, id.len > 0 ? (size_t)id.len : 0, pid, epoch, tps, ntps,
                                 errs);
        for (int32_t i = 0, k = 0; i < n; i++)
            for (int32_t j = 0; j < p->results[i].results_by_partition.n; j++, k++)
                p->results[i].results_by_partition.v[j].partition_error_code =
                    err ? err : errs[k];
        w->out--;
        return;
    }
    txn_add_partitions(c, id.p, id.len > 0 ? (size_t)id.len : 0, pid, epoch, tps, ntps,
                       api_apt_done, p);
}

void api_add_partitions_to_txn(api_req_t *req)
{
    proto_add_partitions_to_txn_req_t r;
    api_txn_w_t *w = arena_calloc(req->arena, 1, sizeof(*w));
    struct txn_coord_s *c;

    proto_add_partitions_to_txn_req_init(&r);
    if (proto_add_partitions_to_txn_req_decode(&r, req->hdr.api_version, req->body,
                                               req->body_len, req->arena) < 0) {
        api_close(req, "malformed AddPartitionsToTxn request");
        return;
    }
    c = api_txn_coord(req->b);
    w->req = req;
    proto_add_partitions_to_txn_resp_init(&w->resp);
    net_conn_hold(req->conn);
    w->out = 1; /* held until every part is started */
    if (req->hdr.api_version < 4) {
        int32_t n = r.v3_and_below_topics.n < 0 ? 0 : r.v3_and_below_topics.n;
        api_apt_one(w, c, r.v3_and_below_transactional_id, r.v3_and_below_producer_id,
                    r.v3_and_below_producer_epoch, false, r.v3_and_below_topics.v, n,
                    &w->resp.results_by_topic_v3_and_below.v,
                    &w->resp.results_by_topic_v3_and_below.n);
    } else {
        int32_t n = r.transactions.n < 0 ? 0 : r.transactions.n;
        w->resp.results_by_transaction.n = n;
        w->resp.results_by_transaction.v =
            arena_calloc(req->arena, (size_t)n + 1, sizeof(*w->resp.results_by_transaction.v));
        for (int32_t i = 0; i < n; i++) {
            proto_add_partitions_to_txn_req_add_partitions_to_txn_transaction_t *t =
                &r.transactions.v[i];
            proto_add_partitions_to_txn_resp_add_partitions_to_txn_result_t *res =
                &w->resp.results_by_transaction.v[i];
            proto_add_partitions_to_txn_resp_add_partitions_to_txn_result_init(res);
            res->transactional_id = t->transactional_id;
            api_apt_one(w, c, t->transactional_id, t->producer_id, t->producer_epoch,
                        t->verify_only, t->topics.v, t->topics.n < 0 ? 0 : t->topics.n,
                        &res->topic_results.v, &res->topic_results.n);
        }
    }
    if (--w->out == 0)
        api_apt_reply(w);
}

/* ---- AddOffsetsToTxn and EndTxn: one error each ---- */

typedef struct api_txn_one_s {
    api_req_t *req;
    int end; /* EndTxn: the answer carries the producer (v5+) */
    int64_t pid;
    int16_t epoch;
} api_txn_one_t;

static void api_txn_one_done(void *arg, int16_t err)
{
    api_txn_one_t *o = arg;
    net_conn_t *conn = o->req->conn;

    err = api_txn_fenced(err, o->req->hdr.api_version, 2);
    if (!conn->closing && o->end) {
        proto_end_txn_resp_t resp;
        proto_end_txn_resp_init(&resp);
        resp.error_code = err;
        resp.producer_id = err ? -1 : o->pid;
        resp.producer_epoch = err ? -1 : o->epoch;
        API_REPLY(o->req, end_txn, &resp);
    } else if (!conn->closing) {
        proto_add_offsets_to_txn_resp_t resp;
        proto_add_offsets_to_txn_resp_init(&resp);
        resp.error_code = err;
        API_REPLY(o->req, add_offsets_to_txn, &resp);
    }
    net_conn_release(conn);
}

static api_txn_one_t *api_txn_one(api_req_t *req, struct txn_coord_s **c)
{
    api_txn_one_t *o = arena_calloc(req->arena, 1, sizeof(*o));
    o->req = req;
    net_conn_hold(req->conn);
    *c = api_txn_coord(req->b);
    return o;
}

void api_add_offsets_to_txn(api_req_t *req)
{
    proto_add_offsets_to_txn_req_t r;
    struct txn_coord_s *c;
    txn_tp_t tp;

    proto_add_offsets_to_txn_req_init(&r);
    if (proto_add_offsets_to_txn_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                            req->arena) < 0) {
        api_close(req, "malformed AddOffsetsToTxn request");
        return;
    }
    api_txn_one_t *o = api_txn_one(req, &c);
    if (!c) {
        api_txn_one_done(o, KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    /* the group's partition of __consumer_offsets joins the transaction */
    tp.topic = GRP_LOG_TOPIC;
    tp.partition = grp_rec_partition_for(r.group_id.p ? r.group_id.p : "",
                                         r.group_id.len > 0 ? (size_t)r.group_id.len : 0,
                                         req->b->cfg.offsets_topic_num_partitions);
    txn_add_partitions(c, r.transactional_id.p,
                       r.transactional_id.len > 0 ? (size_t)r.transactional_id.len : 0,
                       r.producer_id, r.producer_epoch, &tp, 1, api_txn_one_done, o);
}

void api_end_txn(api_req_t *req)
{
    proto_end_txn_req_t r;
    struct txn_coord_s *c;

    proto_end_txn_req_init(&r);
    if (proto_end_txn_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                 req->arena) < 0) {
        api_close(req, "malformed EndTxn request");
        return;
    }
    api_txn_one_t *o = api_txn_one(req, &c);
    o->end = 1;
    o->pid = r.producer_id;
    o->epoch = r.producer_epoch;
    if (!c) {
        api_txn_one_done(o, KERR_COORDINATOR_NOT_AVAILABLE);
        return;
    }
    txn_end(c, r.transactional_id.p,
            r.transactional_id.len > 0 ? (size_t)r.transactional_id.len : 0, r.producer_id,
            r.producer_epoch, r.committed, api_txn_one_done, o);
}
