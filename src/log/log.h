/* A partition's log: Kafka's on-disk layout (protocol/FORMATS.md §7), so a data
 * directory written by strand can be read by Kafka's own tools.
 *
 * One log_t per partition directory "<topic>-<partition>". It owns the
 * ordered segments (<20-digit base>.log/.index/.timeindex), the leader
 * epoch cache (leader-epoch-checkpoint), the producer state used for
 * idempotence (<offset>.snapshot) and the recovery of all of these after
 * a crash. Everything runs on the caller's thread: there are no threads
 * and no locks; time is passed in (now_ms) so policies are testable.
 *
 * Offsets are int64 Kafka offsets; "LEO" is the log end offset (the offset
 * the next appended record gets).
 *
 * When the disk fails. Every file operation goes through util/fault.h, and
 * each failure is handled in one of two ways:
 *  - Undone, when the files can be put back exactly as they were: the
 *    operation reports the error (KAFKA_STORAGE_ERROR, or -1 and errno)
 *    and the log goes on as if it had not been tried, so it works again
 *    as soon as the disk does (space freed, a transient error gone). A
 *    failed append cuts what it wrote (LEO, indexes and producer state
 *    unchanged); a failed roll removes the new segment and makes the old
 *    one active again; a failed checkpoint, snapshot or epoch-cache write
 *    never touches the previous file (tmp + fsync + rename) and a failed
 *    epoch write puts the cache back; a segment that cannot be deleted
 *    stays in the log and is deleted by a later retention run.
 *  - Offline, when the state of the files is no longer known: an fsync
 *    (or msync of an index) failed - after a writeback error the kernel
 *    may have dropped the pages or marked them clean, so no later fsync can
 *    make the data since the last good flush durable ("fsyncgate"); or an
 *    undo itself failed; or a truncation failed half way. An offline log
 *    answers KAFKA_STORAGE_ERROR (or -1, errno EIO) to appends, reads,
 *    rolls, flushes and DeleteRecords until it is reopened, which recovers
 *    it from its last good recovery point. It still allows log_truncate_to
 *    (to take back a batch whose flush failed) and is closed without
 *    writing anything.
 * Kafka takes the whole log dir offline on any I/O error. We only do so at
 * shutdown (an offline log leaves its dir without the clean-shutdown
 * marker): with one log dir, a full disk would otherwise cost every
 * partition, the metadata log and the group offsets until a restart, for
 * failures that the undo paths leave without a trace. */
#ifndef STRAND_LOG_LOG_H
#define STRAND_LOG_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "log/log_batch.h"
#include "util/buf.h"

/* Topic-level configuration; the Kafka key names are in the comments. */
typedef struct log_config_s {
    int64_t segment_bytes;        /* segment.bytes, 1073741824 */
    int64_t segment_ms;           /* segment.ms (log.roll.ms), 7 days */
    int64_t retention_ms;         /* retention.ms, 7 days; -1 = forever */
    int64_t retention_bytes;      /* retention.bytes, -1 = unlimited */
    int32_t index_interval_bytes; /* index.interval.bytes, 4096 */
    int32_t segment_index_bytes;  /* segment.index.bytes, 10485760 */
    int64_t file_delete_delay_ms; /* file.delete.delay.ms, 60000 */
    int64_t flush_messages;       /* flush.messages, INT64_MAX (never) */
    int64_t flush_ms;             /* flush.ms, INT64_MAX (never) */
    int32_t producer_id_expiration_ms; /* producer.id.expiration.ms, 86400000 */
    int8_t timestamp_type;        /* message.timestamp.type: 0 CreateTime,
                                     1 LogAppendTime */
} log_config_t;

/* Fills Kafka's defaults. */
void log_config_defaults(log_config_t *cfg);

typedef struct log_s log_t;

/* What the log manager knows about a partition when it opens it (from
 * the checkpoint files of its log dir); -1 / 0 when unknown. */
typedef struct log_open_args_s {
    const char *topic;
    int32_t partition;
    int64_t recovery_point;  /* recovery-point-offset-checkpoint, or 0 */
    int64_t log_start_offset; /* log-start-offset-checkpoint, or -1 */
    int64_t high_watermark;  /* replication-offset-checkpoint, or -1 */
    int clean_shutdown;      /* .kafka_cleanshutdown was present */
    int64_t now_ms;
} log_open_args_t;

/* Opens (creating if needed) the log in directory dir, recovering it
 * when the shutdown was not clean: segments above the recovery point are
 * scanned, a torn or corrupt tail is cut off, broken indexes rebuilt,
 * producer state loaded from the newest snapshot and replayed from the
 * log. Returns a log owned by the caller (free with log_close()), or NULL
 * with errno set. Copies cfg and the strings it is given. */
log_t *log_open(const char *dir, const log_config_t *cfg,
                const log_open_args_t *args);

/* Clean close: flushes, trims the active indexes to their real size,
 * writes a producer snapshot at the LEO, and frees the log. Returns 0, or
 * -1 with errno if some step failed or the log was offline (the log is
 * freed anyway; the next open must then recover it). */
int log_close(log_t *log);

/* Frees the log without flushing or writing anything (for a dying disk
 * or a partition being deleted). */
void log_free(log_t *log);

/* 1 when the log is offline (see "When the disk fails" above): it refuses
 * appends, reads and flushes until it is reopened. */
int log_offline(const log_t *log);

/* Replaces the configuration (dynamic topic config changes). The new
 * segment/index sizes apply from the next roll. */
void log_set_config(log_t *log, const log_config_t *cfg);
const log_config_t *log_config(const log_t *log);

const char *log_dir(const log_t *log);   /* owned by the log */
const char *log_topic(const log_t *log); /* owned by the log */
int32_t log_partition(const log_t *log);

/* ---- append ---- */

typedef struct log_append_result_s {
    int64_t base_offset;     /* first offset of the batch */
    int64_t last_offset;     /* last offset of the batch */
    int64_t log_append_time; /* the broker time if LogAppendTime, else -1 */
    int64_t log_start_offset;
    int duplicate;           /* 1: a retry of one of the producer's last 5
                                batches; nothing was written and the
                                offsets are those of the original */
} log_append_result_t;

/* Appends one validated magic-2 batch as leader. The bytes are modified
 * in place: base offset = LEO, partitionLeaderEpoch = leader_epoch, and
 * for LogAppendTime topics the timestamp type and maxTimestamp (with the
 * CRC recomputed). Rolls the active segment first when it is full or too
 * old. Returns a Kafka error code: 0; a retry of one of the producer's
 * last 5 batches is reported through res->duplicate with error 0 and the
 * original offsets; from the idempotence checks (as Kafka 4.x:
 * ProducerAppendInfo) OUT_OF_ORDER_SEQUENCE_NUMBER (45) for a gap or a
 * new epoch not starting at 0, INVALID_PRODUCER_EPOCH (47) for an older
 * epoch, INVALID_TXN_STATE (48) for a non-transactional batch during the
 * producer's transaction; an unknown producer id is accepted at any
 * sequence (Kafka 4.x never answers UNKNOWN_PRODUCER_ID (59) here);
 * CORRUPT_MESSAGE (2) for a short or non-v2 batch; RECORD_LIST_TOO_LARGE
 * (18) when it is larger than segment.bytes; KAFKA_STORAGE_ERROR (56) on
 * I/O failure (nothing of the batch stays: LEO, indexes and producer
 * state are as before, unless the log went offline) or when offline. */
int16_t log_append(log_t *log, uint8_t *batch, size_t len,
                   int32_t leader_epoch, int64_t now_ms,
                   log_append_result_t *res);
/* A coordinator's append (Kafka's AppendOrigin.COORDINATOR): a batch of a
 * producer id is checked for its epoch only, never for its sequence or as
 * a retry, and a transaction marker against the producer's state. */
#define LOG_APPEND_COORDINATOR 1
/* log_append with flags (LOG_APPEND_*). */
int16_t log_append_flags(log_t *log, uint8_t *batch, size_t len, int32_t leader_epoch,
                         int64_t now_ms, int flags, log_append_result_t *res);

/* "Not now": the log has batches placed and not yet committed
 * (log_append_place); not a Kafka error code. */
#define LOG_APPEND_AGAIN (-2)

/* A leader append in three steps, so that the bytes can be written by
 * another thread while the loop goes on: log_append_place (loop) does
 * what log_append does but the write, and puts the batch after the
 * batches already placed; log_write_run (any thread) writes it;
 * log_append_commit (loop, in the order of placing) makes it part of the
 * log. Until then readers see the log without it (LEO, sizes, indexes),
 * so nothing reads bytes not yet written. The writer owns wr->fd, a
 * duplicate of the segment's, so the log may even be deleted meanwhile:
 * the caller then drops wr without commit (see log_uid). */
typedef struct log_write_s {
    int fd;                 /* -1 when nothing is to be written */
    int64_t pos;
    const uint8_t *batch;   /* the caller's, patched as log_append does */
    size_t len;
    log_batch_hdr_t h;      /* with the final offsets */
    int err;                /* errno of a failed write, else 0 */
    struct log_segment_s *seg;
} log_write_t;

/* As log_append, except that on success without duplicate the batch is
 * only placed: wr gets the write to run, the log one more pending write.
 * LOG_APPEND_AGAIN when it needs a roll while writes are pending (nothing
 * changed: try again after they are committed). */
int16_t log_append_place(log_t *log, uint8_t *batch, size_t len, int32_t leader_epoch,
                         int64_t now_ms, log_append_result_t *res, log_write_t *wr);
int16_t log_append_place_flags(log_t *log, uint8_t *batch, size_t len, int32_t leader_epoch,
                               int64_t now_ms, int flags, log_append_result_t *res,
                               log_write_t *wr);
/* Writes wr's bytes and closes wr->fd. Thread-safe: touches only wr. */
void log_write_run(log_write_t *wr);
/* Takes a written batch into the log; writes must be committed in the
 * order they were placed. A failed write fails the batches placed after
 * it too (they lie past a gap), and log_append_place refuses new ones
 * until the last of them is committed; the log is then as before the
 * failed one (undone), and takes appends again. Returns 0 or
 * KAFKA_STORAGE_ERROR. */
int16_t log_append_commit(log_t *log, log_write_t *wr);
/* Batches placed and not yet committed. */
int log_pending_writes(const log_t *log);
/* A number that no other log opened by this process has: a caller that
 * kept it can tell whether the log it finds is still the one it used. */
uint64_t log_uid(const log_t *log);

/* Appends batches fetched from a leader (one or more back to back) as
 * they are: offsets and epochs are kept, producer state is updated
 * without sequence checks. The first batch must start at the LEO or
 * later. Returns 0, CORRUPT_MESSAGE (2), OFFSET_OUT_OF_RANGE (1) or
 * KAFKA_STORAGE_ERROR (56). */
int16_t log_append_replica(log_t *log, const uint8_t *batches, size_t len,
                           int64_t now_ms);

/* Closes the active segment and opens a new one at the LEO (no-op if the
 * active segment is empty). Returns 0 or KAFKA_STORAGE_ERROR (the log is
 * then as before, or offline). */
int16_t log_roll(log_t *log, int64_t now_ms);

/* ---- read ---- */

/* An aborted transaction (a .txnindex entry). */
typedef struct log_aborted_s {
    int64_t producer_id;
    int64_t first_offset;       /* the transaction's first batch */
    int64_t last_offset;        /* its ABORT marker */
    int64_t last_stable_offset; /* the LSO once the marker was appended */
} log_aborted_t;

/* A list of aborted transactions; v owned by whoever holds the list. */
typedef struct log_aborted_list_s {
    log_aborted_t *v;
    int n;
    int cap;
} log_aborted_list_t;

void log_aborted_list_add(log_aborted_list_t *l, const log_aborted_t *a);
void log_aborted_list_free(log_aborted_list_t *l);

/* A region of a segment file. fd is a dup() owned by the caller (give it
 * to buf_put_file() or close it), or -1 when len is 0. */
typedef struct log_read_result_s {
    int fd;
    int64_t file_pos;
    int32_t len;
    int64_t first_offset; /* base offset of the first batch, or -1 */
} log_read_result_t;

/* Reads whole batches, starting with the one that contains `offset`, from
 * one segment, up to max_bytes (at least one whole batch when min_one is
 * set, otherwise nothing if the first is larger), and only batches whose
 * last offset is below max_offset (the high watermark, or the LEO).
 * Returns 0 (an empty result at the LEO) or OFFSET_OUT_OF_RANGE (1) when
 * offset < log start or > LEO, KAFKA_STORAGE_ERROR (56) on a read error
 * or when the log is offline. */
int16_t log_read(log_t *log, int64_t offset, int32_t max_bytes, int min_one,
                 int64_t max_offset, log_read_result_t *out);

/* ---- transactions ---- */

/* The last stable offset: the high watermark, or the first offset of the
 * oldest transaction below it that is open or whose marker the high
 * watermark has not passed. read_committed readers stop there. */
int64_t log_last_stable_offset(const log_t *log);
/* Where the aborted transactions a read_committed reader of r (log_read's
 * result, len > 0, the log unchanged since) must know of end: Kafka's
 * fetch upper bound, the offset index's first entry past the region, else
 * the next segment's base or the LEO. Only read_committed readers ask, so
 * other reads pay nothing for it. */
int64_t log_read_upper_offset(log_t *log, const log_read_result_t *r);
/* Adds to out (the caller's) the aborted transactions that a read from
 * offset with upper bound upper (log_read_upper_offset) meets, in the
 * order of their markers, as Kafka's collectAbortedTransactions. Returns 0
 * or KAFKA_STORAGE_ERROR. */
int16_t log_aborted_txns(log_t *log, int64_t offset, int64_t upper, log_aborted_list_t *out);

/* ---- offsets ---- */

int64_t log_end_offset(const log_t *log);
int64_t log_start_offset(const log_t *log);
/* The recovery point: everything below it has been fsynced. */
int64_t log_recovery_point(const log_t *log);
/* The high watermark is owned by the partition layer; the log keeps it
 * (clamped to [log start, LEO]) so it can be checkpointed and so that
 * retention never deletes at or past it. */
int64_t log_high_watermark(const log_t *log);
void log_set_high_watermark(log_t *log, int64_t hwm);
/* Bytes in all segment .log files. */
int64_t log_size_bytes(const log_t *log);
int log_segment_count(const log_t *log);

typedef struct log_ts_offset_s {
    int64_t timestamp;
    int64_t offset;
    int32_t leader_epoch; /* epoch of that offset, -1 if unknown */
} log_ts_offset_t;

/* ListOffsets by timestamp: the first record (offset >= log start) whose
 * timestamp is >= ts, via the time index and then record iteration.
 * Returns 0 found, 1 none (every record is older), KAFKA_STORAGE_ERROR
 * (56) or CORRUPT_MESSAGE (2) on a bad read. */
int16_t log_offset_for_timestamp(log_t *log, int64_t ts,
                                 log_ts_offset_t *out);

/* ListOffsets MAX_TIMESTAMP (-3): the record with the largest timestamp
 * (the first one if several share it) and its batch's leader epoch.
 * Returns 0 found, 1 empty log, or an error code. */
int16_t log_max_timestamp(log_t *log, log_ts_offset_t *out);

/* ---- deletion ---- */

/* Deletes old segments by retention.ms (on each segment's max timestamp)
 * and retention.bytes, then those wholly below the log start offset.
 * Never deletes the active segment, nor a segment that is not wholly
 * below the high watermark. Advances the log start offset. Returns the
 * number of segments deleted, or -1 with errno if one could not be (it
 * and those after it stay, whole; the next call tries again). Does nothing
 * on an offline log. */
int log_retention(log_t *log, int64_t now_ms);

/* DeleteRecords: advances the log start offset to `offset` (which must be
 * <= the high watermark) and deletes the segments wholly below it (those
 * that cannot be deleted now are by a later log_retention()). Returns 0 or
 * OFFSET_OUT_OF_RANGE (1), KAFKA_STORAGE_ERROR (56) when offline. */
int16_t log_delete_records(log_t *log, int64_t offset);

/* Removes every record at or above `offset` (replica truncation), with
 * the indexes, epoch cache and producer state. No-op if offset >= LEO.
 * Returns 0, or -1 with errno: a truncation cannot be undone half way, so
 * the log is then offline. Allowed on an offline log (it stays offline),
 * to take back a batch whose flush failed. */
int log_truncate_to(log_t *log, int64_t offset);

/* Removes every record and starts the log empty at offset (which may be
 * past its end): its start, end, recovery point and high watermark are
 * offset, and the epoch cache is emptied. What a follower does when a
 * fetched snapshot replaces its log. Returns 0, or -1 with errno (the log
 * is then offline). */
int log_reset_to(log_t *log, int64_t offset, int64_t now_ms);

/* ---- durability ---- */

/* fsyncs the segments written since the last flush, the epoch checkpoint
 * if it was rewritten, and their directory, then advances the recovery point to the LEO. Returns 0 or -1/errno; a
 * failed fsync takes the log offline for good (see "When the disk fails"),
 * so that no later call reports as flushed what may not be on disk. */
int log_flush(log_t *log, int64_t now_ms);
/* fsyncs the segments that rolled since the last flush and moves the
 * recovery point to the active segment's base, so that a crash only
 * rescans the active segment. Kafka does this in the background after
 * each roll; call it from a timer. Returns 0 or -1 with errno. */
int log_flush_rolled(log_t *log);
/* The same in three steps, so that the fsyncs run on a worker thread:
 * log_sync_begin (loop) decides what the flush covers - the segments,
 * index files and directory written since the recovery point, up to what
 * is committed now (rolled_only: up to the active segment's base, as
 * log_flush_rolled) - and takes duplicates of their descriptors;
 * log_sync_run (any thread) syncs them; log_sync_end (loop) then moves
 * the recovery point, or takes the log offline if a sync failed. Appends
 * may go on meanwhile; they are not covered. Several flushes of a log may
 * be out at once. */
typedef struct log_sync_s {
    int *fds;
    int nfds;
    int dir_fd;
    int64_t target;    /* the recovery point once synced */
    int64_t unflushed; /* records the flush covers */
    int err;           /* errno of a failed sync */
    uint64_t uid;      /* the log's (log_uid) */
} log_sync_t;

/* Returns 0 (s may have nothing to sync: log_sync_pending), or -1 with
 * errno when the log is offline, or when a descriptor cannot be had,
 * which takes it offline as a failed fsync would. */
int log_sync_begin(log_t *log, int rolled_only, log_sync_t *s);
int log_sync_pending(const log_sync_t *s);
/* Thread-safe: touches only s. */
void log_sync_run(log_sync_t *s);
/* After log_sync_run; log must be the log s was begun on (same uid, else
 * -1/EINVAL and nothing changes). Returns 0, or -1 with errno (the log is
 * offline when a sync failed). */
int log_sync_end(log_t *log, log_sync_t *s, int64_t now_ms);
/* Forgets s without ending it (its log is gone). */
void log_sync_drop(log_sync_t *s);
/* Records appended since the last flush (the flush.messages policy); 0
 * for an offline log, which has nothing it could flush. */
int64_t log_unflushed_messages(const log_t *log);
/* Time of the last flush, or of the open (the flush.ms policy). */
int64_t log_last_flush_ms(const log_t *log);

/* ---- leader epochs (leader-epoch-checkpoint) ---- */

/* Records that `epoch` starts at `start_offset` (a new leader does this
 * with its LEO before taking appends). Ignores an epoch older than the
 * latest one; writes the checkpoint, which the next flush fsyncs.
 * Returns 0, or -1 with errno (the cache is then unchanged, as its file
 * is; EIO when the log is offline). */
int log_epoch_assign(log_t *log, int32_t epoch, int64_t start_offset);
/* The latest epoch in the cache, or -1. */
int32_t log_latest_epoch(const log_t *log);
/* OffsetForLeaderEpoch: the largest epoch <= `epoch` and its end offset
 * (the start offset of the next epoch, or the LEO for the latest one).
 * Both -1 when no such epoch is known. */
void log_epoch_end_offset(const log_t *log, int32_t epoch,
                          int64_t *end_offset, int32_t *epoch_out);

/* ---- producer state ---- */

/* A producer state snapshot, rendered on the loop and written (with its
 * fsyncs) on a worker. A roll renders one; the caller takes it
 * (log_snapshot_take), writes it (log_snap_write, any thread) and hands it
 * back (log_snapshot_done, or log_snap_free when the log is gone). One not
 * taken is written at the next roll or at close. */
typedef struct log_snap_s {
    char *path;
    buf_t data;
    int64_t offset;
    int rc;  /* log_ckpt_write_file's result */
    int err; /* its errno */
} log_snap_t;

/* 1 and *snap when a rendered snapshot waits to be written, else 0. */
int log_snapshot_take(log_t *log, log_snap_t *snap);
void log_snap_write(log_snap_t *snap);
void log_snapshot_done(log_t *log, log_snap_t *snap);
void log_snap_free(log_snap_t *snap);

typedef struct log_producer_info_s {
    int64_t producer_id;
    int16_t epoch;
    int32_t last_sequence;
    int64_t last_offset;
    int64_t last_timestamp;
    int32_t coordinator_epoch;
    int64_t current_txn_first_offset; /* -1 if none */
} log_producer_info_t;

/* Returns 1 and fills *out when the producer is known, else 0. */
int log_producer_lookup(const log_t *log, int64_t producer_id,
                        log_producer_info_t *out);
/* Calls fn for every producer the log keeps state for (those not expired
 * yet, as Kafka's DescribeProducers lists them), in no particular order;
 * returns how many. */
typedef void log_producer_fn(void *arg, const log_producer_info_t *p);
int log_producers(const log_t *log, log_producer_fn *fn, void *arg);
/* Drops producers idle longer than producer.id.expiration.ms (and not in
 * a transaction). Returns how many were dropped. */
int log_expire_producers(log_t *log, int64_t now_ms);

#endif
