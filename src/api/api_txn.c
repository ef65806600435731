/* The transaction coordinator on the broker (api_txn.h): its lifetime,
 * InitProducerId of transactional ids, FindCoordinator's answer for them,
 * and the verification of a Produce's transactional batches (Kafka's
 * transaction.partition.verification.enable, on by default: a batch is
 * appended only when its producer's ongoing transaction holds the
 * partition, so no hanging transaction can start from a late batch). */
#include "api/api_txn.h"
#include "api/api_group.h"
#include "api/api_util.h"

#include <string.h>

#include "api/api_brokers.h"
#include "cluster/ctl.h"
#include "cluster/meta_image.h"
#include "coord/grp_log.h"
#include "coord/grp_rec.h"
#include "coord/txn_log.h"
#include "partition/part_peer.h"
#include "util/kerr.h"
#include "util/logging.h"

const api_entry_t api_txn_entries[API_TXN_NENTRIES] = {
    {24, 0, 5, 0, api_add_partitions_to_txn, API_L_BROKER},
    {25, 0, 4, 0, api_add_offsets_to_txn, API_L_BROKER},
    {26, 0, 5, 0, api_end_txn, API_L_BROKER},
    {27, 1, 2, 1, api_write_txn_markers, API_L_BROKER},
    {28, 0, 6, 0, api_txn_offset_commit, API_L_BROKER},
    {65, 0, 0, 0, api_describe_transactions, API_L_BROKER},
    {66, 0, 2, 0, api_list_transactions, API_L_BROKER},
};

/* ---- the coordinator ---- */

static void api_txn_config(api_node_t *b, txn_log_config_t *cfg)
{
    txn_config_defaults(&cfg->txn);
    cfg->txn.num_partitions =
        (int32_t)api_node_prop(b, "transaction.state.log.num.partitions", 50);
    cfg->txn.max_timeout_ms = (int32_t)api_node_prop(b, "transaction.max.timeout.ms", 900000);
    cfg->txn.id_expiration_ms =
        api_node_prop(b, "transactional.id.expiration.ms", 604800000LL);
    cfg->img = b->raft ? ctl_image(b->ctl) : NULL;
    cfg->node_id = b->cfg.node_id;
    cfg->abort_interval_ms =
        api_node_prop(b, "transaction.abort.timed.out.transaction.cleanup.interval.ms", 10000);
    cfg->remove_interval_ms =
        api_node_prop(b, "transaction.remove.expired.transaction.cleanup.interval.ms", 3600000);
    cfg->timeout_ms = (int32_t)api_node_prop(b, "request.timeout.ms", 30000);
    cfg->on_marker = api_txn_marker_written;
    cfg->marker_ctx = b;
}

/* Whether __transaction_state exists: here, or on a quorum in the image
 * (this node may host none of it). */
static bool api_txn_topic_exists(api_node_t *b)
{
    if (b->raft)
        return meta_image_topic(ctl_image(b->ctl), TXN_TOPIC, strlen(TXN_TOPIC)) != NULL;
    return part_topic_get(b->reg, TXN_TOPIC, strlen(TXN_TOPIC)) != NULL;
}

struct txn_coord_s *api_txn_coord(api_node_t *b)
{
    txn_log_config_t cfg;

    if (b->txn) {
        txn_log_follow(b->txn);
        return b->txn;
    }
    api_txn_config(b, &cfg);
    if (!api_txn_topic_exists(b)) {
        topic_cfg_t tcfg;
        txn_log_topic_config(&b->reg->defaults,
                             api_node_prop(b, "transaction.state.log.segment.bytes", 104857600),
                             (int32_t)api_node_prop(b, "transaction.state.log.min.isr", 2), &tcfg);
        b->txn_topic.name = TXN_TOPIC;
        api_itopic_create(b, &b->txn_topic, cfg.txn.num_partitions,
                          (int16_t)api_node_prop(b, "transaction.state.log.replication.factor", 3),
                          &tcfg);
    }
    b->txn = txn_log_open(b->loop, b->reg, b->ctl, &cfg);
    return b->txn;
}

void api_txn_shutdown(api_node_t *b)
{
    txn_log_close(b->txn);
    b->txn = NULL;
    part_peers_free(b->txn_peers);
    b->txn_peers = NULL;
}

void api_txn_marker_written(void *ctx, const char *topic, int32_t partition,
                            int64_t producer_id, bool commit)
{
    api_node_t *b = ctx;

    if (strcmp(topic, GRP_LOG_TOPIC) != 0 || !b->grp)
        return;
    grp_txn_complete(b->grp, partition, producer_id, commit);
}

/* ---- InitProducerId ---- */

typedef struct api_txn_pid_s {
    api_req_t *req;
} api_txn_pid_t;

static void api_txn_pid_answer(void *arg, int16_t err, int64_t pid, int16_t epoch)
{
    api_txn_pid_t *p = arg;
    net_conn_t *conn = p->req->conn;
    proto_init_producer_id_resp_t resp;

    if (!conn->closing) {
        proto_init_producer_id_resp_init(&resp);
        resp.error_code = api_txn_fenced(err, p->req->hdr.api_version, 4);
        resp.producer_id = err ? -1 : pid;
        resp.producer_epoch = err ? -1 : epoch;
        API_REPLY(p->req, init_producer_id, &resp);
    }
    net_conn_release(conn);
}

void api_txn_init_producer_id(api_req_t *req, proto_str_t id, int32_t timeout_ms,
                              int64_t producer_id, int16_t epoch)
{
    struct txn_coord_s *c = api_txn_coord(req->b);
    api_txn_pid_t *p = arena_calloc(req->arena, 1, sizeof(*p));

    p->req = req;
    net_conn_hold(req->conn);
    if (!c) {
        api_txn_pid_answer(p, KERR_COORDINATOR_NOT_AVAILABLE, -1, -1);
        return;
    }
    txn_init_producer_id(c, id.p, (size_t)id.len, timeout_ms, producer_id, epoch,
                         api_txn_pid_answer, p);
}

/* ---- FindCoordinator ---- */

/* The broker leading the partition of __transaction_state that holds id:
 * this node on a single node; on a quorum the image's leader, if it is
 * an alive broker. -1 when there is none (yet). */
int32_t api_txn_coordinator_of(api_node_t *b, proto_str_t id)
{
    const mi_topic_t *mt;
    int32_t p;

    if (!b->raft)
        return b->cfg.node_id;
    mt = meta_image_topic(ctl_image(b->ctl), TXN_TOPIC, strlen(TXN_TOPIC));
    if (!mt || mt->nparts <= 0)
        return -1;
    p = grp_rec_partition_for(id.p ? id.p : "", id.len > 0 ? (size_t)id.len : 0, mt->nparts);
    return mt->parts[p].present ? mt->parts[p].leader : -1;
}

int16_t api_txn_find_coordinator(api_req_t *req, proto_str_t id, api_broker_t *ab)
{
    struct txn_coord_s *c = api_txn_coord(req->b); /* asks for the topic when it is missing */
    int32_t leader;

    if (id.len < 0)
        return KERR_INVALID_REQUEST;
    if (!c && !req->b->raft)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    /* Kafka answers from the partition's leader, loaded or not: the
     * requests that follow get COORDINATOR_LOAD_IN_PROGRESS meanwhile */
    leader = api_txn_coordinator_of(req->b, id);
    if (leader < 0 || api_broker_alive(req, leader, ab) < 0)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    return KERR_NONE;
}

/* ---- the produce path ---- */

int16_t api_txn_produce_error(int16_t err, int16_t version)
{
    switch (err) {
    case KERR_NONE:
        return KERR_NONE;
    case KERR_COORDINATOR_LOAD_IN_PROGRESS:
    case KERR_CONCURRENT_TRANSACTIONS:
    case KERR_COORDINATOR_NOT_AVAILABLE:
    case KERR_NOT_COORDINATOR:
        return KERR_NOT_ENOUGH_REPLICAS; /* retriable for every producer */
    case KERR_PRODUCER_FENCED:
        return KERR_INVALID_PRODUCER_EPOCH;
    case KERR_TRANSACTION_ABORTABLE:
        return version >= 11 ? err : KERR_INVALID_TXN_STATE;
    default:
        return err;
    }
}
