/* The one append path of the data plane, as Kafka's
 * ReplicaManager.appendRecords: Produce, the group coordinator's store
 * and every other writer of a partition go through part_append.
 *
 * An append is a set of batches, one per partition, that completes as a
 * whole. Each batch is checked (partition hosted, online and led here,
 * internal topics only for internal writers, min.insync.replicas),
 * validated (CRC, records, timestamps, compression: log_batch_validate),
 * recompressed to the topic's compression.type, then placed in its log
 * (offsets and producer state, on the loop), written (on a worker for
 * large appends, through the write queue), committed in placing order,
 * flushed when the flush policy says so (the group commit rounds of
 * part_flush.c, whose fsyncs run on a worker), and waited for as the acks
 * ask: acks=-1 until the high watermark passes the batch (delayed produce,
 * REQUEST_TIMED_OUT after timeout_ms). Then done runs, once, on the loop.
 *
 * Small appends, when no write is queued, do all of this on the loop in
 * the call (done may run before part_append returns): a thread hop would
 * cost them more latency than it saves. */
#ifndef STRAND_PARTITION_PART_APPEND_H
#define STRAND_PARTITION_PART_APPEND_H

#include <stdint.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "net/net_pool.h"
#include "partition/part.h"
#include "partition/part_flush.h"
#include "util/buf.h"

/* One partition's batch. The caller fills the inputs; the layer fills the
 * results before done. */
typedef struct part_append_ent_s {
    /* in: the partition, by topic name or (by_id) topic id */
    const char *topic;
    size_t topic_len;
    uint8_t topic_id[16];
    int by_id;
    int32_t partition;
    uint8_t *records; /* one batch; writable (offsets are patched in) */
    int32_t len;
    int txn_verified; /* a transactional batch the coordinator verified as
                         part of its producer's ongoing transaction */
    /* out */
    int16_t err;
    int16_t verr;           /* err came from validation: info says which record */
    log_batch_vinfo_t info;
    int64_t base_offset;
    int64_t last_offset;
    int64_t log_append_time; /* -1 unless LogAppendTime */
    int64_t log_start_offset;
    /* the layer's */
    uint8_t id[16]; /* the topic id once found: looked up again after each hop */
    log_batch_limits_t lim;
    log_batch_hdr_t hdr;
    log_write_t wr;
    uint64_t log_uid;
    buf_t rebuilt;
    int flush;      /* waits for a flush round */
    int committed;  /* in the log, visible up to the high watermark */
} part_append_ent_t;

typedef struct part_append_s part_append_t;
typedef void part_append_done_fn(part_append_t *op);

/* Who writes: clients may not write to internal topics, the coordinators
 * may. */
enum part_origin { PART_ORIGIN_CLIENT, PART_ORIGIN_COORDINATOR };

struct part_append_s {
    /* in */
    part_reg_t *reg;
    int16_t acks;             /* 0, 1 or -1 */
    int origin;               /* enum part_origin */
    int16_t produce_version;  /* limits that depend on it (zstd needs v7+) */
    int64_t now_ms;
    int32_t timeout_ms;       /* acks=-1: how long to wait for the replicas */
    int inline_place;         /* placed in the call, on the loop, whatever the
                                 queue holds: for writers that alone write
                                 their partitions (the coordinators), who act
                                 on the offsets at once (done may still come
                                 later, after the flush and acks waits) */
    part_append_ent_t *ents;
    int nents;
    part_append_done_fn *done;
    void *udata;
    /* the layer's */
    net_job_t job;
    part_flush_waiter_t fw;
    int nplaced;
    int nwait;                /* flush rounds and replica waits still out */
    struct part_append_s *wq_next;
    struct part_delay_s *delay;
};

/* Starts op; op and its entries must stay valid (and unchanged) until
 * done has run. Entries with err set on entry are left as they are. */
void part_append(part_append_t *op);

/* Shutdown, after the pool is gone: writes what the write queue still
 * holds and frees its state. */
void part_append_shutdown(part_reg_t *reg);

#endif
