/* Producer state of one partition (Kafka's ProducerStateManager): for each
 * producer id its epoch, the metadata of its last 5 batches (to answer a
 * retried batch with the original offsets instead of writing it twice),
 * its coordinator epoch and ongoing transaction, and the snapshots
 * <offset>.snapshot that spare a full log scan at startup. */
#ifndef STRAND_LOG_LOG_PSTATE_H
#define STRAND_LOG_LOG_PSTATE_H

#include <stddef.h>
#include <stdint.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "log/log_txnidx.h"
#include "util/smap.h"

#define LOG_PSTATE_BATCHES 5 /* Kafka's NUM_BATCHES_TO_RETAIN */

typedef struct log_pstate_batch_s {
    int32_t first_seq;
    int32_t last_seq;
    int64_t first_offset;
    int64_t last_offset;
    int64_t timestamp; /* the batch's max timestamp */
} log_pstate_batch_t;

typedef struct log_pstate_entry_s {
    int64_t producer_id;
    int16_t epoch;
    int32_t coordinator_epoch;
    int64_t last_timestamp;
    int64_t current_txn_first_offset; /* -1 none */
    int nbatches;                     /* oldest first */
    log_pstate_batch_t batches[LOG_PSTATE_BATCHES];
} log_pstate_entry_t;

/* A transaction the log holds part of, for the last stable offset (as
 * Kafka's ongoingTxns and unreplicatedTxns). */
typedef struct log_txn_s {
    int64_t producer_id;
    int64_t first_offset;
    int64_t last_offset; /* its marker's; -1 while it is open */
} log_txn_t;

typedef struct log_txn_list_s {
    log_txn_t *v; /* owned */
    int n;
    int cap;
} log_txn_list_t;

typedef struct log_pstate_s {
    char *dir;            /* owned */
    smap_t producers;     /* 8-byte producer id -> entry (owned) */
    log_txn_list_t ongoing; /* open transactions, by first offset */
    log_txn_list_t unrepl;  /* ended ones whose marker the high watermark
                               has not passed, in marker order */
    int64_t map_end_offset;  /* the state covers offsets below this */
    int64_t last_snap_offset;
    int64_t *snaps;       /* offsets of the snapshot files, ascending */
    int nsnaps;
} log_pstate_t;

/* Lists the snapshot files of dir. Returns 0 or -1 with errno. */
int log_pstate_init(log_pstate_t *ps, const char *dir);
void log_pstate_free(log_pstate_t *ps);

/* The entry of a producer, or NULL. Owned by ps. */
log_pstate_entry_t *log_pstate_get(const log_pstate_t *ps, int64_t producer_id);

/* Checks a client batch (h: header with its final offsets not needed)
 * against the producer's state as Kafka 4.x does (a coordinator's batch,
 * coordinator set: its epoch only). Returns 0 and *dup =
 * NULL to append; 0 and *dup = the original batch for a retry of one of
 * the last 5; INVALID_PRODUCER_EPOCH 47, OUT_OF_ORDER_SEQUENCE_NUMBER 45,
 * INVALID_TXN_STATE 48 otherwise. */
int16_t log_pstate_check(log_pstate_t *ps, const log_batch_hdr_t *h, int coordinator,
                         const log_pstate_batch_t **dup);

/* Checks a coordinator's transaction marker (batch: its bytes) against
 * the producer's state as Kafka's appendEndTxnMarker does: an epoch older
 * than the producer's is INVALID_PRODUCER_EPOCH 47, a coordinator epoch
 * older than the last marker's TRANSACTION_COORDINATOR_FENCED 52, an
 * unreadable marker CORRUPT_MESSAGE 2; else 0. */
int16_t log_pstate_check_marker(const log_pstate_t *ps, const log_batch_hdr_t *h,
                                const uint8_t *batch, size_t len);

/* Applies an appended batch (h with its final base offset; batch = its
 * bytes, needed for control batches, may be NULL otherwise) and moves the
 * map end offset past it. No checks (replication and replay use it).
 * Returns 1 when the batch is an ABORT marker, with *ab the transaction
 * it ends as the aborted-transaction index records it; else 0. */
int log_pstate_update(log_pstate_t *ps, const log_batch_hdr_t *h,
                      const uint8_t *batch, size_t len, log_aborted_t *ab);
/* The first offset of the oldest transaction that is open or whose
 * marker is not below the high watermark yet; -1 when there is none. */
int64_t log_pstate_first_unstable(const log_pstate_t *ps);
/* The high watermark moved to hw: ended transactions whose markers are
 * below it become stable. */
void log_pstate_hw_moved(log_pstate_t *ps, int64_t hw);
void log_pstate_set_end(log_pstate_t *ps, int64_t offset);

/* Drops producers idle for expiration_ms (not in a transaction). Returns
 * how many. */
int log_pstate_expire(log_pstate_t *ps, int64_t now_ms, int64_t expiration_ms);

/* Forgets all producers; deletes snapshots above leo or at or below
 * log_start; loads the newest remaining snapshot (skipping corrupt ones,
 * which are deleted). The map end offset is then that snapshot's offset,
 * or log_start: the caller replays the log from there. Returns 0, or -1
 * with errno if a snapshot could not be read, or one above leo could not
 * be deleted (the state is then empty at log_start). */
int log_pstate_reload(log_pstate_t *ps, int64_t log_start, int64_t leo,
                      int64_t now_ms, int64_t expiration_ms);

/* Writes <map end offset>.snapshot if the state moved since the last one.
 * Returns 0 or -1 with errno. */
int log_pstate_snapshot(log_pstate_t *ps);
/* The same in three steps (see log_snap_t in log.h): render the state now
 * (1; 0 when no snapshot is due), write (any thread), then list the file
 * (returns 0, or -1 with errno when the write failed). */
int log_pstate_snapshot_render(log_pstate_t *ps, log_snap_t *snap);
int log_pstate_snapshot_done(log_pstate_t *ps, log_snap_t *snap);
/* Deletes the snapshot files below offset (those that cannot be deleted
 * stay listed and are retried by the next call). */
void log_pstate_delete_before(log_pstate_t *ps, int64_t offset);
/* Forgets everything and deletes all snapshots; the state restarts at
 * offset. Returns 0, or -1 with errno if a snapshot could not be deleted
 * (it would describe offsets the log no longer has). */
int log_pstate_reset(log_pstate_t *ps, int64_t offset);

/* Sequence arithmetic with Kafka's wrap past INT32_MAX to 0. */
int32_t log_pstate_seq_add(int32_t seq, int32_t n);

#endif
