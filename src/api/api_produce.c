/* Produce (key 0): decode, hand every partition's batch to the partition
 * layer's append path (part_append.h: checks, validation, placing,
 * writing, flush policy and the acks waits all live there), encode the
 * answer when it completes. While an append is out the connection is
 * held and muted, so requests of one connection still append in order. */
#include <stddef.h>
#include <string.h>

#include "api/api_leader.h"
#include "api/api_produce_err.h"
#include "api/api_txn.h"
#include "api/api_util.h"
#include "partition/part_append.h"

typedef struct api_produce_s {
    part_append_t op; /* first */
    api_req_t *req;
    int verifying; /* transactional batches with their coordinator */
    proto_produce_resp_t resp;
    proto_produce_resp_partition_produce_response_t **prs; /* per entry */
    int held;      /* net_conn_hold until the answer */
    int cancelled; /* the connection closed: no answer */
} api_produce_t;

/* v8+: which records were rejected and why (Kafka lists the batch index
 * of every record the per-record checks rejected: api_produce_err.c; for
 * other errors the one index validation gave). */
static void api_produce_record_error(api_req_t *req, const part_append_ent_t *ent,
                                     proto_produce_resp_partition_produce_response_t *pr)
{
    const log_batch_vinfo_t *info = &ent->info;
    if (api_produce_record_errors(req, ent, pr))
        return;
    if (info->error_message) {
        pr->error_message.p = info->error_message;
        pr->error_message.len = (int32_t)strlen(info->error_message);
    }
    if (info->error_index < 0)
        return;
    pr->record_errors.n = 1;
    pr->record_errors.v = arena_calloc(req->arena, 1, sizeof(*pr->record_errors.v));
    proto_produce_resp_batch_index_and_error_message_init(&pr->record_errors.v[0]);
    pr->record_errors.v[0].batch_index = info->error_index;
    if (info->error_message)
        pr->record_errors.v[0].batch_index_error_message = pr->error_message;
}

/* v10+ (KIP-951): the partition's current leader, and its endpoint once
 * in the answer's NodeEndpoints. */
static void api_produce_leader(api_produce_t *ap, const part_append_ent_t *ent,
                               proto_produce_resp_partition_produce_response_t *pr)
{
    proto_produce_resp_t *resp = &ap->resp;
    api_leader_t l;

    if (ap->req->hdr.api_version < 10 || !api_leader_err(ent->err) ||
        api_leader_get(ap->req, ent->id, NULL, 0, ent->partition, &l) < 0)
        return;
    pr->current_leader.leader_id = l.leader_id;
    pr->current_leader.leader_epoch = l.leader_epoch;
    if (!l.has_endpoint)
        return;
    for (int32_t i = 0; i < resp->node_endpoints.n; i++)
        if (resp->node_endpoints.v[i].node_id == l.leader_id)
            return;
    if (!resp->node_endpoints.v)
        resp->node_endpoints.v = arena_calloc(ap->req->arena, (size_t)ap->op.nents + 1,
                                              sizeof(*resp->node_endpoints.v));
    proto_produce_resp_node_endpoint_t *ne = &resp->node_endpoints.v[resp->node_endpoints.n++];
    proto_produce_resp_node_endpoint_init(ne);
    ne->node_id = l.leader_id;
    ne->host = (proto_str_t){l.ep.host, (int32_t)strlen(l.ep.host)};
    ne->port = l.ep.port;
    if (l.ep.rack)
        ne->rack = (proto_str_t){l.ep.rack, (int32_t)strlen(l.ep.rack)};
}

static void api_produce_fill(api_produce_t *ap, const part_append_ent_t *ent,
                             proto_produce_resp_partition_produce_response_t *pr)
{
    api_produce_leader(ap, ent, pr);
    pr->error_code = ent->err;
    pr->base_offset = ent->base_offset;
    pr->log_append_time_ms = ent->log_append_time;
    pr->log_start_offset = ent->log_start_offset;
    if (ent->err && ent->err == ent->verr)
        api_produce_record_error(ap->req, ent, pr);
}

/* The answer ends the request and may free its memory, ap included:
 * nothing of ap is read after it. */
static void api_produce_done(part_append_t *op)
{
    api_produce_t *ap = (api_produce_t *)op;
    net_conn_t *conn = ap->req->conn;
    int failed = 0, held = ap->held;

    if (ap->cancelled)
        goto out;
    api_conn_t *ac = conn->udata;
    if (ac->pending == ap)
        ac->pending = NULL;
    for (int i = 0; i < op->nents; i++) {
        api_produce_fill(ap, &op->ents[i], ap->prs[i]);
        failed |= op->ents[i].err != 0;
    }
    if (op->acks != 0) {
        API_REPLY(ap->req, produce, &ap->resp);
    } else {
        /* No answer is expected; a failure can only be signalled by
         * closing the connection, as Kafka does. */
        if (failed)
            net_conn_close(conn, "acks=0 produce failed");
        net_conn_done(conn);
    }
out:
    if (held)
        net_conn_release(conn);
}

/* The connection closed while the append is out: it goes on (what is
 * placed is appended, as in Kafka), unanswered. */
static void api_produce_cancel(void *pending)
{
    ((api_produce_t *)pending)->cancelled = 1;
}

/* Shutting down: the pool's drain, the write queue and the last flush
 * round complete it. */
static void api_produce_finish(void *pending)
{
    (void)pending;
}

/* One entry per partition of the request, its answer beside it. From
 * v13 the request and the answer name topics by id (an unknown id is
 * UNKNOWN_TOPIC_ID, from the partition layer). */
static void api_produce_prepare(api_produce_t *ap, proto_produce_req_t *r)
{
    api_req_t *req = ap->req;
    proto_produce_resp_t *resp = &ap->resp;
    int n = 0;

    resp->responses.n = r->topic_data.n < 0 ? 0 : r->topic_data.n;
    resp->responses.v = arena_calloc(req->arena, (size_t)resp->responses.n + 1,
                                     sizeof(*resp->responses.v));
    for (int32_t i = 0; i < resp->responses.n; i++)
        n += r->topic_data.v[i].partition_data.n < 0 ? 0 : r->topic_data.v[i].partition_data.n;
    ap->op.ents = arena_calloc(req->arena, (size_t)n + 1, sizeof(*ap->op.ents));
    ap->prs = arena_calloc(req->arena, (size_t)n + 1, sizeof(*ap->prs));
    for (int32_t i = 0; i < resp->responses.n; i++) {
        proto_produce_req_topic_produce_data_t *td = &r->topic_data.v[i];
        proto_produce_resp_topic_produce_response_t *tr = &resp->responses.v[i];
        proto_produce_resp_topic_produce_response_init(tr);
        tr->name = td->name;
        tr->topic_id = td->topic_id;
        tr->partition_responses.n = td->partition_data.n < 0 ? 0 : td->partition_data.n;
        tr->partition_responses.v = arena_calloc(req->arena, (size_t)tr->partition_responses.n + 1,
                                                 sizeof(*tr->partition_responses.v));
        for (int32_t j = 0; j < tr->partition_responses.n; j++) {
            part_append_ent_t *ent = &ap->op.ents[ap->op.nents];
            proto_produce_req_partition_produce_data_t *pd = &td->partition_data.v[j];
            ap->prs[ap->op.nents++] = &tr->partition_responses.v[j];
            proto_produce_resp_partition_produce_response_init(&tr->partition_responses.v[j]);
            tr->partition_responses.v[j].index = pd->index;
            ent->topic = td->name.p;
            ent->topic_len = td->name.len < 0 ? 0 : (size_t)td->name.len;
            ent->by_id = req->hdr.api_version >= 13;
            memcpy(ent->topic_id, td->topic_id.b, 16);
            ent->err = !ent->by_id && td->name.len < 0 ? KERR_UNKNOWN_TOPIC_OR_PARTITION
                                                       : KERR_NONE;
            ent->partition = pd->index;
            ent->records = (uint8_t *)pd->records.p;
            ent->len = pd->records.len;
        }
    }
}

/* One transactional batch out for verification. */
typedef struct api_pv_s {
    api_produce_t *ap;
    part_append_ent_t *ent;
    txn_tp_t tp;
    int16_t err;
} api_pv_t;

static void api_produce_verified(void *arg)
{
    api_pv_t *v = arg;
    v->ent->err = api_txn_produce_error(v->err, v->ap->req->hdr.api_version);
    v->ent->txn_verified = !v->ent->err;
    if (--v->ap->verifying == 0)
        part_append(&v->ap->op);
}

/* Transactional batches of partitions led here go to their transaction
 * coordinator first (api_txn_verify); the others are the partition
 * layer's to refuse. The append starts once every answer is in. */
static void api_produce_verify(api_produce_t *ap, const proto_produce_req_t *r)
{
    api_req_t *req = ap->req;

    for (int i = 0; i < ap->op.nents; i++) {
        part_append_ent_t *ent = &ap->op.ents[i];
        log_batch_hdr_t h;
        topic_t *t;
        if (ent->err || !ent->records || ent->len < LOG_BATCH_HDR_SIZE ||
            log_batch_hdr_parse(ent->records, (size_t)ent->len, &h) < 0 ||
            !LOG_BATCH_ATTR_IS_TRANSACTIONAL(h.attributes) || LOG_BATCH_ATTR_IS_CONTROL(h.attributes))
            continue;
        t = ent->by_id ? part_topic_by_id(req->b->reg, ent->topic_id)
                       : part_topic_get(req->b->reg, ent->topic, ent->topic_len);
        part_t *part = t ? part_get(t, ent->partition) : NULL;
        if (!part || !part_is_leader(part))
            continue;
        if (r->transactional_id.len <= 0) { /* a transactional batch with no id */
            ent->err = KERR_INVALID_TXN_STATE;
            continue;
        }
        api_pv_t *v = arena_calloc(req->arena, 1, sizeof(*v));
        v->ap = ap;
        v->ent = ent;
        v->tp.topic = arena_strndup(req->arena, t->name, t->name_len); /* the topic may go */
        v->tp.partition = ent->partition;
        ap->verifying++;
        api_txn_verify(req->b, r->transactional_id, h.producer_id, h.producer_epoch, &v->tp, 1,
                       &v->err, api_produce_verified, v);
    }
}

void api_produce(api_req_t *req)
{
    proto_produce_req_t r;
    api_produce_t *ap = arena_calloc(req->arena, 1, sizeof(*ap));

    proto_produce_req_init(&r);
    if (proto_produce_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                 req->arena) < 0) {
        api_close(req, "malformed Produce request");
        return;
    }
    ap->req = req;
    proto_produce_resp_init(&ap->resp);
    api_produce_prepare(ap, &r);
    ap->op.reg = req->b->reg;
    ap->op.acks = r.acks;
    ap->op.origin = PART_ORIGIN_CLIENT;
    ap->op.produce_version = req->hdr.api_version;
    ap->op.now_ms = req->now_ms;
    ap->op.timeout_ms = r.timeout_ms;
    ap->op.done = api_produce_done;
    /* Parked before it starts, as done may run within the call. */
    api_conn_t *ac = req->conn->udata;
    net_conn_hold(req->conn); /* until the answer, even if it closes */
    ap->held = 1;
    ac->pending = ap;
    ac->cancel = api_produce_cancel;
    ac->finish = api_produce_finish;
    ap->verifying = 1; /* held: answers in the call do not start it */
    api_produce_verify(ap, &r);
    if (--ap->verifying == 0)
        part_append(&ap->op);
}
