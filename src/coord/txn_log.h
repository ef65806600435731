/* The transaction coordinator on a running broker: txn_env_t over the
 * event loop, the partition logs of __transaction_state (created on first
 * use, compacted, without retention), the controller's producer ids and
 * the partition layer's appends for the markers. At open every partition
 * led here is replayed from its log start, a slice per loop turn; on a
 * quorum's broker a partition is replayed again when this node becomes
 * its leader. Timers: the abort of timed-out transactions
 * (transaction.abort.timed.out.transaction.cleanup.interval.ms) and the
 * removal of expired ids
 * (transaction.remove.expired.transaction.cleanup.interval.ms). */
#ifndef STRAND_COORD_TXN_LOG_H
#define STRAND_COORD_TXN_LOG_H

#include "coord/txn.h"
#include "net/net_loop.h"
#include "partition/part.h"

struct meta_image_s;
struct ctl_s;

/* A marker appended to a partition (the group coordinator completes a
 * transaction's offsets when it is one of __consumer_offsets). */
typedef void txn_log_marker_fn(void *ctx, const char *topic, int32_t partition,
                               int64_t producer_id, bool commit);

typedef struct txn_log_config_s {
    txn_config_t txn;
    const struct meta_image_s *img; /* a quorum's broker: whose leaders say
                                       which partitions are this node's */
    int32_t node_id;
    int64_t abort_interval_ms;   /* 10000 */
    int64_t remove_interval_ms;  /* 3600000 */
    int32_t timeout_ms;          /* writes and markers: request.timeout.ms */
    txn_log_marker_fn *on_marker;
    void *marker_ctx;
} txn_log_config_t;

/* The config __transaction_state is created with: base compacted,
 * without retention, with transaction.state.log.segment.bytes and
 * min.insync.replicas transaction.state.log.min.isr. */
void txn_log_topic_config(const topic_cfg_t *base, int64_t segment_bytes, int32_t min_isr,
                          topic_cfg_t *t);
/* Opens the coordinator on __transaction_state (the caller creates it
 * first). Returns a coordinator owned by the caller (txn_log_close), or
 * NULL when the topic does not exist yet. */
txn_coord_t *txn_log_open(net_loop_t *loop, part_reg_t *reg, struct ctl_s *ctl,
                          const txn_log_config_t *cfg);
void txn_log_close(txn_coord_t *c);
/* On a quorum's broker, follows the image's leaders (as grp_log_follow). */
void txn_log_follow(txn_coord_t *c);

/* Appends a transaction marker (commit or abort of producer_id at epoch,
 * with the coordinator's epoch) to a partition led here, as Kafka's
 * WriteTxnMarkers does: through the partition layer, acks=-1 within
 * timeout_ms. done(arg, err) once, maybe in the call. */
typedef void txn_marker_done_fn(void *arg, int16_t err);
/* Appends batch (taken) to a partition led here as a coordinator writes:
 * acks=-1 within timeout_ms; done(arg, err) once, maybe in the call. topic
 * must stay valid until then. */
void txn_coord_append(part_reg_t *reg, const char *topic, size_t topic_len, int32_t partition,
                      buf_t *batch, int32_t timeout_ms, txn_marker_done_fn *done, void *arg);
void txn_marker_append(part_reg_t *reg, const char *topic, size_t topic_len, int32_t partition,
                       int64_t producer_id, int16_t epoch, bool commit, int32_t coordinator_epoch,
                       int32_t timeout_ms, txn_marker_done_fn *done, void *arg);

#endif
