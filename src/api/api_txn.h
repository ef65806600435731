/* The transaction APIs (api_txn.c: the coordinator's lifetime,
 * InitProducerId with a transactional id, FindCoordinator's transaction
 * keys, the produce path's verification; api_txn_ops.c:
 * AddPartitionsToTxn, AddOffsetsToTxn, EndTxn; api_txn_markers.c:
 * WriteTxnMarkers; api_txn_admin.c: DescribeTransactions,
 * ListTransactions). Served on a single node; a quorum's brokers refuse
 * transactional ids until markers go to other brokers' leaders. */
#ifndef STRAND_API_API_TXN_H
#define STRAND_API_API_TXN_H

#include "api/api.h"
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
/* FindCoordinator of a transactional id: 0 with this node as its
 * coordinator, or the error (COORDINATOR_NOT_AVAILABLE while the
 * coordinator starts; TRANSACTIONAL_ID_AUTHORIZATION_FAILED where
 * transactions are not served). */
int16_t api_txn_find_coordinator(api_req_t *req, proto_str_t id);

/* A transactional batch (h) of a Produce naming transactional id id for
 * topic/partition led here: 0 when it belongs to its producer's ongoing
 * transaction, else the error the Produce answers for it (Kafka's
 * mapping for produce_version: retriable coordinator errors become
 * NOT_ENOUGH_REPLICAS, PRODUCER_FENCED INVALID_PRODUCER_EPOCH, and a
 * partition outside the transaction INVALID_TXN_STATE below v11). */
int16_t api_txn_verify_produce(api_req_t *req, proto_str_t id, const log_batch_hdr_t *h,
                               const char *topic, int32_t partition);

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
