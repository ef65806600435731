/* TxnOffsetCommit (28), v0-6: a transactional producer's offsets
 * (send_offsets_to_transaction), committed by the group coordinator as
 * the transaction's records and visible once the transaction commits
 * (grp_txn.c). As Kafka 4.4 does with transaction.partition.verification
 * on, the transaction coordinator is asked first whether the group's
 * partition of __consumer_offsets is in the producer's ongoing
 * transaction (AddOffsetsToTxn put it there). The answer waits for the
 * records' commit, as OffsetCommit's does. */
#include "api/api_group.h"
#include "api/api_txn.h"
#include "api/api_util.h"

#include <string.h>

#include "coord/grp_log.h"
#include "coord/txn.h"
#include "util/kerr.h"

typedef proto_txn_offset_commit_req_txn_offset_commit_request_topic_t api_toc_topic_t;

/* The request's partitions flattened; those of unknown topics (or all,
 * with err) carry their error already. */
static grp_commit_part_t *api_toc_parts(api_req_t *req, const proto_txn_offset_commit_req_t *r,
                                        int16_t err, int32_t *n)
{
    int16_t ver = req->hdr.api_version;
    grp_commit_part_t *parts;
    int32_t k = 0;

    *n = 0;
    for (int32_t i = 0; i < r->topics.n; i++)
        *n += r->topics.v[i].partitions.n > 0 ? r->topics.v[i].partitions.n : 0;
    parts = arena_calloc(req->arena, (size_t)*n + 1, sizeof(*parts));
    for (int32_t i = 0; i < r->topics.n; i++) {
        const api_toc_topic_t *t = &r->topics.v[i];
        proto_str_t name = t->name;
        int16_t terr = ver >= 6 ? api_group_topic_by_id(req, t->topic_id, &name) : 0;
        for (int32_t j = 0; j < t->partitions.n; j++, k++) {
            parts[k].topic = name;
            parts[k].partition = t->partitions.v[j].partition_index;
            parts[k].offset = t->partitions.v[j].committed_offset;
            parts[k].leader_epoch = ver >= 2 ? t->partitions.v[j].committed_leader_epoch : -1;
            parts[k].metadata = t->partitions.v[j].committed_metadata;
            /* Kafka's order: the partitions it does not know, then the
             * commit's error for the others */
            parts[k].error = terr ? terr : api_group_part_check(req, name, parts[k].partition);
            if (!parts[k].error)
                parts[k].error = err;
        }
    }
    return parts;
}

static void api_toc_answer(api_req_t *req, const proto_txn_offset_commit_req_t *r,
                           const grp_commit_part_t *parts, proto_txn_offset_commit_resp_t *resp)
{
    int32_t k = 0;

    int32_t nt = r->topics.n < 0 ? 0 : r->topics.n;
    resp->topics.n = 0;
    resp->topics.v = arena_calloc(req->arena, (size_t)nt + 1, sizeof(*resp->topics.v));
    for (int32_t i = 0; i < nt; i++) {
        int32_t np = r->topics.v[i].partitions.n < 0 ? 0 : r->topics.v[i].partitions.n;
        if (!np)
            continue; /* Kafka's answer has no topic without partitions */
        proto_txn_offset_commit_resp_txn_offset_commit_response_topic_t *t =
            &resp->topics.v[resp->topics.n++];
        proto_txn_offset_commit_resp_txn_offset_commit_response_topic_init(t);
        t->name = r->topics.v[i].name;
        t->topic_id = r->topics.v[i].topic_id;
        t->partitions.n = np;
        t->partitions.v = arena_calloc(req->arena, (size_t)np + 1, sizeof(*t->partitions.v));
        for (int32_t j = 0; j < np; j++, k++) {
            t->partitions.v[j].partition_index = parts[k].partition;
            t->partitions.v[j].error_code = parts[k].error;
        }
    }
}

typedef struct api_toc_s {
    api_req_t *req;
    proto_txn_offset_commit_req_t r;
    grp_commit_part_t *parts;
    int32_t n;
    grp_coord_t *c;
    const char *group;
    txn_tp_t tp;  /* the group's partition of __consumer_offsets */
    int16_t verr; /* the transaction coordinator's word on it */
} api_toc_t;

static void api_toc_fail(api_req_t *req, void *arg, int16_t err)
{
    api_toc_t *t = arg;
    proto_txn_offset_commit_resp_t resp;
    for (int32_t i = 0; i < t->n; i++)
        if (!t->parts[i].error)
            t->parts[i].error = err;
    proto_txn_offset_commit_resp_init(&resp);
    api_toc_answer(req, &t->r, t->parts, &resp);
    API_REPLY(req, txn_offset_commit, &resp);
}

/* The transaction coordinator's word on the group's partition, as the
 * commit's error: the retriable ones a client retries TxnOffsetCommit on,
 * a fenced producer as INVALID_PRODUCER_EPOCH below v3, a partition
 * outside the transaction INVALID_TXN_STATE below v5 (TRANSACTION_ABORTABLE
 * from). */
static int16_t api_toc_verr(int16_t err, int16_t version)
{
    switch (err) {
    case KERR_COORDINATOR_LOAD_IN_PROGRESS:
    case KERR_CONCURRENT_TRANSACTIONS:
    case KERR_NOT_COORDINATOR:
        return KERR_COORDINATOR_NOT_AVAILABLE;
    case KERR_TRANSACTION_ABORTABLE:
        return version >= 5 ? KERR_TRANSACTION_ABORTABLE : KERR_INVALID_TXN_STATE;
    default:
        return api_txn_fenced(err, version, 3);
    }
}

/* Verified (or refused before): commit, and answer after the write. */
static void api_toc_finish(void *arg)
{
    api_toc_t *t = arg;
    api_req_t *req = t->req;
    int16_t ver = req->hdr.api_version;
    int16_t err = api_toc_verr(t->verr, ver);
    proto_txn_offset_commit_resp_t resp;
    buf_t out;

    t->parts = api_toc_parts(req, &t->r, err, &t->n);
    if (!err) {
        grp_commit_req_t cr = {
            .group_id = t->group,
            .generation = ver >= 3 ? t->r.generation_id_or_member_epoch : -1,
            .member_id = ver >= 3 ? api_cstr(req, t->r.member_id) : "",
            .instance_id = ver >= 3 ? api_cstr(req, t->r.group_instance_id) : NULL,
            .retention_ms = -1,
            .api_version = ver,
            .nparts = t->n,
            .parts = t->parts,
        };
        if (!cr.member_id)
            cr.member_id = "";
        grp_txn_commit(t->c, &cr, t->r.producer_id, t->r.producer_epoch);
    }
    proto_txn_offset_commit_resp_init(&resp);
    api_toc_answer(req, &t->r, t->parts, &resp);
    API_ENCODE(req, txn_offset_commit, &resp, &out);
    net_conn_t *conn = req->conn;
    if (!conn->closing)
        api_group_send1(req, err ? NULL : t->c, t->group, &out, api_toc_fail, t, 1);
    else
        buf_free(&out);
    net_conn_release(conn);
}

void api_txn_offset_commit(api_req_t *req)
{
    api_toc_t *t = arena_calloc(req->arena, 1, sizeof(*t));
    int16_t ver = req->hdr.api_version;

    proto_txn_offset_commit_req_init(&t->r);
    if (proto_txn_offset_commit_req_decode(&t->r, ver, req->body, req->body_len, req->arena) < 0) {
        api_close(req, "malformed TxnOffsetCommit request");
        return;
    }
    t->req = req;
    t->c = api_group_coord(req->b);
    t->group = api_cstr(req, t->r.group_id);
    net_conn_hold(req->conn);
    if (!t->c)
        t->verr = KERR_COORDINATOR_NOT_AVAILABLE;
    else if (!t->group || !*t->group)
        t->verr = KERR_INVALID_GROUP_ID;
    if (t->verr) {
        api_toc_finish(t);
        return;
    }
    /* Kafka 4.4 verifies the transaction first (AddOffsetsToTxn put the
     * group's partition in it) */
    t->tp.topic = GRP_LOG_TOPIC;
    t->tp.partition = grp_log_partition(t->c, t->group);
    api_txn_verify(req->b, t->r.transactional_id, t->r.producer_id, t->r.producer_epoch, &t->tp, 1,
                   &t->verr, api_toc_finish, t);
}
