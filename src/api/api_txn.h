/* The transaction APIs (api_txn.c: the coordinator's lifetime,
 * InitProducerId with a transactional id, FindCoordinator's transaction
 * keys, the produce path's verification; api_txn_ops.c:
 * AddPartitionsToTxn, AddOffsetsToTxn, EndTxn; api_txn_markers.c:
 * WriteTxnMarkers; api_txn_admin.c: DescribeTransactions,
 * ListTransactions; api_txn_offsets.c: TxnOffsetCommit; api_txn_verify.c:
 * the verification with a coordinator on another broker). */
#ifndef STRAND_API_API_TXN_H
#define STRAND_API_API_TXN_H

#include "api/api.h"
#include "coord/txn.h"
#include "log/log_batch.h"
#include "util/kerr.h"

#define API_TXN_NENTRIES 7
extern const api_entry_t api_txn_entries[API_TXN_NENTRIES];

struct txn_coord_s;

/* The coordinator, opened on first use (asking for __transaction_state
 * first when it is missing); NULL until it can be, and on a quorum's
 * broker. */
struct txn_coord_s *api_txn_coord(api_node_t *b);
void api_txn_shutdown(api_node_t *b);

/* InitProducerId of a transactional id (r's); answers req. */
void api_txn_init_producer_id(api_req_t *req, proto_str_t id, int32_t timeout_ms,
                              int64_t producer_id, int16_t epoch);
/* FindCoordinator of a transactional id: 0 with its coordinator in *ab
 * (api_brokers.h), or COORDINATOR_NOT_AVAILABLE while there is none. */
struct api_broker_s;
int16_t api_txn_find_coordinator(api_req_t *req, proto_str_t id, struct api_broker_s *ab);
/* The broker id coordinating transactional id (this node on a single
 * node), or -1 when none is known. */
int32_t api_txn_coordinator_of(api_node_t *b, proto_str_t id);

/* Asks the coordinator of transactional id whether tps[0..n) are in
 * producer pid's ongoing transaction at epoch (api_txn_verify.c): errs[i]
 * gets 0 or the coordinator's error for tps[i], then done(arg) runs, in
 * the call when this node coordinates id, else when the coordinator's
 * broker answers. id, tps and errs must stay valid until then. */
typedef void api_txn_verified_fn(void *arg);
void api_txn_verify(api_node_t *b, proto_str_t id, int64_t pid, int16_t epoch, const txn_tp_t *tps,
                    int n, int16_t *errs, api_txn_verified_fn *done, void *arg);
/* What a Produce answers for a transactional batch the verification
 * refused with err (Kafka's mapping for produce_version: retriable
 * coordinator errors become NOT_ENOUGH_REPLICAS, PRODUCER_FENCED
 * INVALID_PRODUCER_EPOCH, a partition outside the transaction
 * INVALID_TXN_STATE below v11). */
int16_t api_txn_produce_error(int16_t err, int16_t produce_version);

/* KIP-588: PRODUCER_FENCED is answered from InitProducerId v4,
 * AddPartitionsToTxn, AddOffsetsToTxn and EndTxn v2, TxnOffsetCommit v3;
 * older versions get INVALID_PRODUCER_EPOCH, which their clients handle
 * the same way (Kafka's conversion). */
static inline int16_t api_txn_fenced(int16_t err, int16_t version, int16_t since)
{
    return err == KERR_PRODUCER_FENCED && version < since ? KERR_INVALID_PRODUCER_EPOCH : err;
}

void api_add_partitions_to_txn(api_req_t *req);
void api_add_offsets_to_txn(api_req_t *req);
void api_end_txn(api_req_t *req);
void api_write_txn_markers(api_req_t *req);
void api_txn_offset_commit(api_req_t *req);
void api_describe_transactions(api_req_t *req);
void api_list_transactions(api_req_t *req);

/* A marker appended to topic/partition (the coordinator's or a
 * WriteTxnMarkers'): the transaction's offsets of a __consumer_offsets
 * partition become visible or go. */
void api_txn_marker_written(void *ctx, const char *topic, int32_t partition,
                            int64_t producer_id, bool commit);

#endif
