/* The verification of a transactional write with its transaction
 * coordinator (api_txn.h), as Kafka's AddPartitionsToTxnManager asks it:
 * in the call when this node coordinates the transactional id, else an
 * AddPartitionsToTxn v4 with VerifyOnly to the coordinator's broker
 * (part_peer.h), whose answer arrives later. A coordinator that cannot be
 * reached, or none known, is COORDINATOR_NOT_AVAILABLE: the writer's
 * caller maps it to what its client retries. */
#include "api/api_txn.h"

#include <stdlib.h>
#include <string.h>

#include "coord/txn.h"
#include "partition/part_peer.h"
#include "proto/proto.h"
#include "util/mem.h"

#define API_TXN_VERIFY_VERSION 4

typedef struct api_tv_s {
    int16_t *errs;
    int n;
    const txn_tp_t *tps;
    api_txn_verified_fn *done;
    void *arg;
} api_tv_t;

static void api_tv_all(int16_t *errs, int n, int16_t err)
{
    for (int i = 0; i < n; i++)
        errs[i] = err;
}

/* The answer's error for tps[i] (the request-level one first). */
static int16_t api_tv_err(const proto_add_partitions_to_txn_resp_t *r, const txn_tp_t *tp)
{
    if (r->error_code)
        return r->error_code;
    for (int32_t a = 0; a < r->results_by_transaction.n; a++)
        for (int32_t b = 0; b < r->results_by_transaction.v[a].topic_results.n; b++) {
            const proto_add_partitions_to_txn_resp_add_partitions_to_txn_topic_result_t *t =
                &r->results_by_transaction.v[a].topic_results.v[b];
            if (t->name.len != (int32_t)strlen(tp->topic) ||
                memcmp(t->name.p, tp->topic, (size_t)t->name.len))
                continue;
            for (int32_t c = 0; c < t->results_by_partition.n; c++)
                if (t->results_by_partition.v[c].partition_index == tp->partition)
                    return t->results_by_partition.v[c].partition_error_code;
        }
    return KERR_COORDINATOR_NOT_AVAILABLE;
}

static void api_tv_resp(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    api_tv_t *v = arg;
    proto_add_partitions_to_txn_resp_t r;
    arena_t arena;

    (void)out;
    arena_init(&arena, 1024);
    proto_add_partitions_to_txn_resp_init(&r);
    if (resp->err || proto_add_partitions_to_txn_resp_decode(&r, resp->api_version, resp->body,
                                                             resp->len, &arena) < 0)
        api_tv_all(v->errs, v->n, KERR_COORDINATOR_NOT_AVAILABLE);
    else
        for (int i = 0; i < v->n; i++)
            v->errs[i] = api_tv_err(&r, &v->tps[i]);
    arena_destroy(&arena);
    v->done(v->arg);
    free(v);
}

static net_out_t *api_tv_out(api_node_t *b, int32_t broker)
{
    if (!b->txn_peers)
        b->txn_peers = part_peers_new(b->reg, "strand-txn-verifier",
                                      api_node_prop(b, "request.timeout.ms", 30000));
    return part_peer_out(b->txn_peers, broker);
}

/* The request: one transaction, VerifyOnly, tps grouped by topic. */
static void api_tv_encode(proto_str_t id, int64_t pid, int16_t epoch, const txn_tp_t *tps, int n,
                          buf_t *body)
{
    proto_add_partitions_to_txn_req_t r;
    proto_add_partitions_to_txn_req_add_partitions_to_txn_transaction_t t;
    arena_t arena;

    arena_init(&arena, 1024);
    proto_add_partitions_to_txn_req_init(&r);
    proto_add_partitions_to_txn_req_add_partitions_to_txn_transaction_init(&t);
    t.transactional_id = id;
    t.producer_id = pid;
    t.producer_epoch = epoch;
    t.verify_only = true;
    t.topics.v = arena_calloc(&arena, (size_t)n + 1, sizeof(*t.topics.v));
    for (int i = 0; i < n; i++) {
        proto_add_partitions_to_txn_req_add_partitions_to_txn_topic_t *tt = &t.topics.v[t.topics.n++];
        proto_add_partitions_to_txn_req_add_partitions_to_txn_topic_init(tt);
        tt->name = (proto_str_t){tps[i].topic, (int32_t)strlen(tps[i].topic)};
        tt->partitions.n = 1;
        tt->partitions.v = (int32_t *)&tps[i].partition;
    }
    r.transactions.n = 1;
    r.transactions.v = &t;
    buf_init(body);
    proto_add_partitions_to_txn_req_encode(&r, API_TXN_VERIFY_VERSION, body);
    arena_destroy(&arena);
}

void api_txn_verify(api_node_t *b, proto_str_t id, int64_t pid, int16_t epoch, const txn_tp_t *tps,
                    int n, int16_t *errs, api_txn_verified_fn *done, void *arg)
{
    struct txn_coord_s *c = api_txn_coord(b);
    int32_t coord = id.len > 0 ? api_txn_coordinator_of(b, id) : -1;
    net_out_t *out;
    buf_t body;

    if (coord == b->cfg.node_id && c) {
        int16_t err = txn_verify(c, id.p, (size_t)id.len, pid, epoch, tps, n, errs);
        if (err)
            api_tv_all(errs, n, err);
        done(arg);
        return;
    }
    if (coord < 0 || coord == b->cfg.node_id || !(out = api_tv_out(b, coord))) {
        /* Kafka's answer to an empty or null transactional id */
        api_tv_all(errs, n, id.len > 0 ? KERR_COORDINATOR_NOT_AVAILABLE : KERR_INVALID_REQUEST);
        done(arg);
        return;
    }
    api_tv_t *v = xcalloc(1, sizeof(*v));
    v->errs = errs;
    v->n = n;
    v->tps = tps;
    v->done = done;
    v->arg = arg;
    api_tv_encode(id, pid, epoch, tps, n, &body);
    if (net_out_send(out, PROTO_API_ADD_PARTITIONS_TO_TXN, API_TXN_VERIFY_VERSION, &body,
                     part_peer_timeout(out, api_node_prop(b, "request.timeout.ms", 30000)),
                     api_tv_resp, v) < 0) {
        buf_free(&body);
        free(v);
        api_tv_all(errs, n, KERR_COORDINATOR_NOT_AVAILABLE);
        done(arg);
    }
}
