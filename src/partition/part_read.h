/* The one read path of the data plane, and the other questions clients
 * ask of a partition's log (as Kafka's ReplicaManager and Partition
 * answer them): a fetch's read, with the leader epoch checks, the high
 * watermark and last stable offset a consumer may read up to, and the
 * diverging epoch a follower must truncate to; offsets by time or
 * position; the end offset of a leader epoch; DeleteRecords; a log's
 * size and dir. Handlers never touch a partition's log themselves. */
#ifndef STRAND_PARTITION_PART_READ_H
#define STRAND_PARTITION_PART_READ_H

#include <stdint.h>

#include "partition/part.h"

/* The partition of a request that touches its log, found as Kafka's
 * ReplicaManager.getPartitionOrError finds it: UNKNOWN_TOPIC_OR_PARTITION
 * when topic (may be NULL) has no such partition, KAFKA_STORAGE_ERROR when
 * its log is offline here (part_offline), NOT_LEADER_OR_FOLLOWER when
 * another node leads it; else 0 with *part set. Kafka checks this before
 * anything else about the partition (leader epoch, offsets, records). */
int16_t part_find(topic_t *topic, int32_t index, part_t **part);
/* part_find for a consumer that may read from a follower (Fetch v11+,
 * KIP-392, as Kafka's fetchOnlyLeader false): a follower's replica is
 * found as a leader's; NOT_LEADER_OR_FOLLOWER only where this node holds
 * no replica that takes reads. */
int16_t part_find_local(topic_t *topic, int32_t index, part_t **part);
/* part_find with the topic looked up by name (len < 0: null name). */
int16_t part_find_by_name(part_reg_t *reg, const char *name, int32_t len, int32_t index,
                          part_t **part);
/* Kafka's check of a client's current_leader_epoch against ours: -1 skips
 * it, an older one is fenced, a newer one is not known yet. */
int16_t part_check_epoch(const part_t *part, int32_t current);

/* One partition's part of a fetch. */
typedef struct part_read_s {
    /* in */
    int64_t fetch_offset;
    int32_t max_bytes;            /* partition_max_bytes */
    int32_t current_leader_epoch; /* -1: unchecked */
    int32_t last_fetched_epoch;   /* -1: no divergence check */
    int8_t isolation;             /* 0 read_uncommitted, 1 read_committed */
    int replica;                  /* a follower's: read up to the log end */
    int64_t replica_log_start;    /* a follower's log start (-1: unknown) */
    /* out: err, or the offsets and a region of a segment file (fd a dup
     * owned by the reader, -1 when len is 0), or a diverging epoch */
    int16_t err;
    int64_t high_watermark;
    int64_t last_stable_offset;
    int64_t log_start_offset;
    int32_t diverging_epoch;      /* -1: none */
    int64_t diverging_end_offset;
    int32_t preferred_read_replica; /* -1: none; else no records, read there */
    int fd;
    int64_t file_pos;
    int32_t len;
    /* read_committed: the aborted transactions the region meets, oldest
     * marker first (v owned: part_read_release) */
    log_aborted_list_t aborted;
} part_read_t;

/* Reads from part (found with part_find) up to min(rd->max_bytes,
 * *budget) bytes of whole batches (at least one when min_one, even past
 * the limits, as Kafka's first partition of a fetch); *budget goes down by
 * what was read. Errors carry -1 offsets, as Kafka answers them. */
void part_read(part_t *part, part_read_t *rd, int64_t *budget, int min_one);
/* A follower's fetch: the replica must be one of part's (Kafka's
 * followerReplicaOrThrow: UNKNOWN_LEADER_EPOCH when the fetch names a
 * leader epoch, as a replica being added retries, else
 * NOT_LEADER_OR_FOLLOWER). Returns 0 or the error. */
int16_t part_read_replica_check(part_t *part, int32_t replica_id, int32_t current_leader_epoch);
/* Sets rd as an answer with err and no offsets. */
void part_read_error(part_read_t *rd, int16_t err);
/* Closes rd's region and frees its aborted list. */
void part_read_release(part_read_t *rd);

/* ListOffsets' special timestamps. */
#define PART_OFFSET_LATEST (-1)
#define PART_OFFSET_EARLIEST (-2)
#define PART_OFFSET_MAX_TIMESTAMP (-3)
#define PART_OFFSET_EARLIEST_LOCAL (-4)
#define PART_OFFSET_LATEST_TIERED (-5)
#define PART_OFFSET_EARLIEST_PENDING_UPLOAD (-6)

typedef struct part_offset_s {
    int64_t offset;    /* -1: none */
    int64_t timestamp; /* -1: none */
    int32_t leader_epoch;
} part_offset_t;

/* ListOffsets for one partition: by timestamp (the first record at or
 * after it, below the high watermark, or for read_committed (isolation 1)
 * the last stable offset, which LATEST is then too) or one of
 * PART_OFFSET_*. Returns 0 (out->offset -1 when nothing matches) or a
 * Kafka error code. */
int16_t part_list_offset(part_t *part, int64_t timestamp, int32_t current_leader_epoch,
                         int8_t isolation, part_offset_t *out);
/* OffsetForLeaderEpoch: the largest epoch <= epoch and its end offset
 * (both -1 when unknown). Returns 0 or the epoch check's error. */
int16_t part_epoch_end(part_t *part, int32_t current_leader_epoch, int32_t epoch,
                       int64_t *end_offset, int32_t *epoch_out);
/* DeleteRecords: moves the log start up to offset (-1: the high
 * watermark). *low gets the log start after it, or -1 on error. Returns
 * 0, POLICY_VIOLATION for a compacted topic without the delete policy,
 * OFFSET_OUT_OF_RANGE, or KAFKA_STORAGE_ERROR. */
int16_t part_delete_records(part_t *part, int64_t offset, int64_t *low);

/* Starts a new segment at the log end (no-op if the active one is
 * empty). Returns 0 or KAFKA_STORAGE_ERROR. */
int16_t part_roll(part_reg_t *reg, part_t *part, int64_t now_ms);
/* Reads whole batches from offset up to max_bytes (at least one) below
 * end, for a local reader of the log (a coordinator replaying it):
 * returns 0 with a region (len 0 at end), or OFFSET_OUT_OF_RANGE,
 * KAFKA_STORAGE_ERROR. */
int16_t part_read_local(part_t *part, int64_t offset, int32_t max_bytes, int64_t end,
                        int *fd, int64_t *file_pos, int32_t *len);
/* The log end offset. */
int64_t part_log_end(const part_t *part);
/* Calls fn for every producer the partition's log keeps state for
 * (DescribeProducers; log_producers). Returns how many. */
int part_producers(const part_t *part, log_producer_fn *fn, void *arg);
/* The log's size in bytes and its start offset. */
int64_t part_size_bytes(const part_t *part);
int64_t part_log_start(const part_t *part);
/* Index of the log dir holding the partition (log_mgr order), or -1. */
int part_dir(const part_reg_t *reg, const part_t *part);
/* The log dirs (log.dirs, in order) and their paths. */
int part_ndirs(const part_reg_t *reg);
const char *part_dir_path(const part_reg_t *reg, int d);

#endif
