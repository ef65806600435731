/* WriteTxnMarkers (27), v1-2: a transaction coordinator asks this
 * partition leader to append COMMIT or ABORT markers. Each partition's
 * marker is appended as the coordinator's own are (txn_marker_append:
 * acks=-1, checked against the producer's state), and once written a
 * marker of __consumer_offsets completes the transaction's offsets. The
 * answer waits for every partition, errors per partition as Kafka's:
 * UNKNOWN_TOPIC_OR_PARTITION, NOT_LEADER_OR_FOLLOWER, the log's. */
#include "api/api_txn.h"
#include "api/api_util.h"

#include <string.h>

#include "coord/txn_log.h"
#include "partition/part_read.h"
#include "util/kerr.h"

typedef proto_write_txn_markers_resp_writable_txn_marker_partition_result_t api_wtm_pres_t;

typedef struct api_wtm_s {
    api_req_t *req;
    proto_write_txn_markers_resp_t resp;
    int out;
} api_wtm_t;

typedef struct api_wtm_one_s {
    api_wtm_t *w;
    api_wtm_pres_t *res;
    const char *topic; /* the request's, as a C string */
    int32_t partition;
    int64_t producer_id;
    bool commit;
} api_wtm_one_t;

static void api_wtm_reply(api_wtm_t *w)
{
    net_conn_t *conn = w->req->conn;
    if (!conn->closing)
        API_REPLY(w->req, write_txn_markers, &w->resp);
    net_conn_release(conn);
}

static void api_wtm_done(void *arg, int16_t err)
{
    api_wtm_one_t *o = arg;
    o->res->error_code = err;
    if (!err)
        api_txn_marker_written(o->w->req->b, o->topic, o->partition, o->producer_id, o->commit);
    if (--o->w->out == 0)
        api_wtm_reply(o->w);
}

static void api_wtm_partition(api_wtm_t *w, const proto_write_txn_markers_req_writable_txn_marker_t *m,
                              proto_str_t name, api_wtm_pres_t *res)
{
    api_req_t *req = w->req;
    api_wtm_one_t *o = arena_calloc(req->arena, 1, sizeof(*o));
    part_t *part;
    int16_t err = part_find_by_name(req->b->reg, name.p, name.len, res->partition_index, &part);

    if (err) {
        res->error_code = err;
        return;
    }
    o->w = w;
    o->res = res;
    o->topic = api_cstr(req, name);
    o->partition = res->partition_index;
    o->producer_id = m->producer_id;
    o->commit = m->transaction_result;
    w->out++;
    txn_marker_append(req->b->reg, name.p, (size_t)name.len, res->partition_index,
                      m->producer_id, m->producer_epoch, m->transaction_result,
                      m->coordinator_epoch,
                      (int32_t)api_node_prop(req->b, "request.timeout.ms", 30000), api_wtm_done, o);
}

void api_write_txn_markers(api_req_t *req)
{
    proto_write_txn_markers_req_t r;
    api_wtm_t *w = arena_calloc(req->arena, 1, sizeof(*w));

    proto_write_txn_markers_req_init(&r);
    if (proto_write_txn_markers_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                           req->arena) < 0) {
        api_close(req, "malformed WriteTxnMarkers request");
        return;
    }
    w->req = req;
    proto_write_txn_markers_resp_init(&w->resp);
    int32_t n = r.markers.n < 0 ? 0 : r.markers.n;
    w->resp.markers.n = n;
    w->resp.markers.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*w->resp.markers.v));
    net_conn_hold(req->conn);
    w->out = 1;
    for (int32_t i = 0; i < n; i++) {
        const proto_write_txn_markers_req_writable_txn_marker_t *m = &r.markers.v[i];
        proto_write_txn_markers_resp_writable_txn_marker_result_t *mr = &w->resp.markers.v[i];
        proto_write_txn_markers_resp_writable_txn_marker_result_init(mr);
        mr->producer_id = m->producer_id;
        int32_t nt = m->topics.n < 0 ? 0 : m->topics.n;
        mr->topics.n = nt;
        mr->topics.v = arena_calloc(req->arena, (size_t)nt + 1, sizeof(*mr->topics.v));
        for (int32_t j = 0; j < nt; j++) {
            const proto_write_txn_markers_req_writable_txn_marker_topic_t *t = &m->topics.v[j];
            proto_write_txn_markers_resp_writable_txn_marker_topic_result_t *tr = &mr->topics.v[j];
            proto_write_txn_markers_resp_writable_txn_marker_topic_result_init(tr);
            tr->name = t->name;
            int32_t np = t->partition_indexes.n < 0 ? 0 : t->partition_indexes.n;
            tr->partitions.n = np;
            tr->partitions.v = arena_calloc(req->arena, (size_t)np + 1, sizeof(*tr->partitions.v));
            for (int32_t k = 0; k < np; k++) {
                proto_write_txn_markers_resp_writable_txn_marker_partition_result_init(
                    &tr->partitions.v[k]);
                tr->partitions.v[k].partition_index = t->partition_indexes.v[k];
                api_wtm_partition(w, m, t->name, &tr->partitions.v[k]);
            }
        }
    }
    if (--w->out == 0)
        api_wtm_reply(w);
}
