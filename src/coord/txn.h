/* The transaction coordinator: Kafka's TransactionCoordinator and
 * TransactionStateManager. One entry per transactional id, in the
 * __transaction_state partition its id hashes to, with Kafka's states
 * (Empty, Ongoing, PrepareCommit, PrepareAbort, CompleteCommit,
 * CompleteAbort, Dead, PrepareEpochFence), transitions and errors.
 *
 * The core does no I/O. The appends to __transaction_state, producer
 * ids, the markers and time come through txn_env_t, so unit tests drive
 * it with a fake clock and an in-memory log; txn_log.c supplies the real
 * ones. As in Kafka, a transition is written first and applied once the
 * write is committed; meanwhile the entry has a pending state and other
 * requests for it get CONCURRENT_TRANSACTIONS. Answers come through
 * callbacks, at once or after the write.
 *
 * Clients of transaction version 0 and 1 are served (explicit
 * AddPartitionsToTxn, epochs bumped by InitProducerId only).
 *
 * Everything runs on the event-loop thread; nothing locks. */
#ifndef STRAND_COORD_TXN_H
#define STRAND_COORD_TXN_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"
#include "util/kerr.h"

#define TXN_TOPIC "__transaction_state"

typedef enum txn_state_e {
    TXN_EMPTY = 0,
    TXN_ONGOING = 1,
    TXN_PREPARE_COMMIT = 2,
    TXN_PREPARE_ABORT = 3,
    TXN_COMPLETE_COMMIT = 4,
    TXN_COMPLETE_ABORT = 5,
    TXN_DEAD = 6,
    TXN_PREPARE_EPOCH_FENCE = 7,
    TXN_NONE = -1 /* no pending transition */
} txn_state_t;

/* Kafka's names ("Empty", "Ongoing", ...); NULL for none. */
const char *txn_state_name(txn_state_t s);
/* The state of a name (ListTransactions' filters), or TXN_NONE. */
txn_state_t txn_state_by_name(const char *name, size_t len);

typedef struct txn_coord_s txn_coord_t;

/* A partition of a transaction. */
typedef struct txn_tp_s {
    char *topic; /* owned by its holder */
    int32_t partition;
} txn_tp_t;

/* One transactional id (read-only outside the coordinator). */
typedef struct txn_s {
    char *id;  /* owned */
    size_t id_len;
    int32_t part;           /* its __transaction_state partition */
    int64_t producer_id;
    int64_t prev_producer_id; /* -1: none */
    int64_t next_producer_id; /* -1: none */
    int16_t epoch;          /* -1 before the first InitProducerId */
    int16_t last_epoch;     /* -1: none */
    int32_t timeout_ms;
    txn_state_t state;
    txn_tp_t *tps;          /* the partitions of the open transaction */
    int ntps, captps;
    int64_t start_ms;       /* the open transaction's first add, -1 */
    int64_t update_ms;
    int16_t client_version; /* transaction version the client speaks */
    /* the coordinator's */
    txn_state_t pending;    /* transition being written, TXN_NONE none */
    bool fence_failed;      /* Kafka's hasFailedEpochFence */
    int markers_out;        /* marker writes still out for a Prepare state */
    bool allocating;        /* waiting for a producer id */
} txn_t;

/* The markers of one transaction's end, for partitions tps[0..n), to be
 * written by the host (txn_env_t.markers); it answers with
 * txn_markers_done once every partition has its marker or cannot get
 * one any more. */
typedef struct txn_markers_s {
    int64_t producer_id;
    int16_t epoch;
    bool commit;
    int32_t coordinator_epoch;
    txn_tp_t *tps; /* owned by the coordinator */
    int n;
    /* the coordinator's */
    txn_coord_t *c;
    char *id;      /* owned */
    size_t id_len;
    int32_t part;
    uint32_t gen;
} txn_markers_t;

typedef void txn_write_done_fn(void *arg, int16_t err);
typedef void txn_pid_done_fn(void *arg, int64_t producer_id, int16_t err);

typedef struct txn_env_s {
    void *ctx;
    int64_t (*now_ms)(void *ctx); /* wall clock */
    /* Appends one record (value NULL: a tombstone) to partition part of
     * __transaction_state; done(arg, err) once it is committed (err 0) or
     * failed. done may run in the call. */
    void (*write)(void *ctx, int32_t part, const buf_t *key, const buf_t *value,
                  txn_write_done_fn *done, void *arg);
    /* A new producer id: done(arg, id, err), maybe in the call. */
    void (*producer_id)(void *ctx, txn_pid_done_fn *done, void *arg);
    /* Writes m's markers; the host owns nothing of m and calls
     * txn_markers_done(m) at the end. */
    void (*markers)(void *ctx, txn_markers_t *m);
    /* The coordinator epoch of partition part: its leader epoch. */
    int32_t (*coordinator_epoch)(void *ctx, int32_t part);
} txn_env_t;

typedef struct txn_config_s {
    int32_t num_partitions;      /* transaction.state.log.num.partitions, 50 */
    int32_t max_timeout_ms;      /* transaction.max.timeout.ms, 900000 */
    int64_t id_expiration_ms;    /* transactional.id.expiration.ms, 7 days */
} txn_config_t;

void txn_config_defaults(txn_config_t *cfg);

/* ---- lifecycle ---- */

/* Returns a coordinator owned by the caller (txn_coord_free). Copies cfg
 * and env. Every partition starts unloaded (NOT_COORDINATOR). */
txn_coord_t *txn_coord_new(const txn_config_t *cfg, const txn_env_t *env);
/* Frees everything; callbacks still out are never run. */
void txn_coord_free(txn_coord_t *c);
const txn_env_t *txn_coord_env(const txn_coord_t *c);

/* The partition of a transactional id. */
int32_t txn_partition_for(const txn_coord_t *c, const char *id, size_t len);

/* ---- loading (replay of __transaction_state) ---- */

/* Partition part is being loaded (COORDINATOR_LOAD_IN_PROGRESS). */
void txn_load_begin(txn_coord_t *c, int32_t part);
/* One record of part (value NULL: tombstone). Returns 0, or -1 for a
 * record that does not decode (skipped). */
int txn_load_record(txn_coord_t *c, int32_t part, const uint8_t *key, size_t key_len,
                    const uint8_t *value, int32_t value_len);
/* Loading ended: the partition is served; transactions left in a
 * Prepare state get their markers written again. */
void txn_load_end(txn_coord_t *c, int32_t part);
/* No longer led here: its entries go (their writes' answers too). */
void txn_unload(txn_coord_t *c, int32_t part);
/* 0 when part is led and loaded here, else NOT_COORDINATOR or
 * COORDINATOR_LOAD_IN_PROGRESS. */
int16_t txn_part_state(const txn_coord_t *c, int32_t part);
/* COORDINATOR_LOAD_IN_PROGRESS while a partition loads, else 0. */
int16_t txn_loading(const txn_coord_t *c);

/* ---- requests ---- */

/* InitProducerId with a transactional id: done(arg, err, pid, epoch). */
typedef void txn_pid_reply_fn(void *arg, int16_t err, int64_t producer_id, int16_t epoch);
void txn_init_producer_id(txn_coord_t *c, const char *id, size_t id_len, int32_t timeout_ms,
                          int64_t producer_id, int16_t epoch, txn_pid_reply_fn *done,
                          void *arg);

/* AddPartitionsToTxn (and AddOffsetsToTxn, with the group's
 * __consumer_offsets partition): done(arg, err) for all of tps. The
 * coordinator copies tps. */
void txn_add_partitions(txn_coord_t *c, const char *id, size_t id_len, int64_t producer_id,
                        int16_t epoch, const txn_tp_t *tps, int n, txn_write_done_fn *done,
                        void *arg);
/* AddPartitionsToTxn's verify-only form, and the partition leader's
 * check of a transactional produce: errs[i] for tps[i] (0 when it is in
 * the ongoing transaction). Returns an error for them all instead, or 0. */
int16_t txn_verify(txn_coord_t *c, const char *id, size_t id_len, int64_t producer_id,
                   int16_t epoch, const txn_tp_t *tps, int n, int16_t *errs);

/* EndTxn: done(arg, err) once the Prepare state is written (the markers
 * follow). */
void txn_end(txn_coord_t *c, const char *id, size_t id_len, int64_t producer_id, int16_t epoch,
             bool commit, txn_write_done_fn *done, void *arg);

/* The host wrote (or gave up on) every marker of m. */
void txn_markers_done(txn_markers_t *m);
/* Frees m without an answer (the host shutting down; its coordinator may
 * be gone already). */
void txn_markers_free(txn_markers_t *m);

/* Aborts transactions open longer than their timeout (Kafka's
 * abortTimedOutTransactions). */
void txn_abort_timed_out(txn_coord_t *c);
/* Removes transactional ids idle past transactional.id.expiration.ms. */
void txn_expire_ids(txn_coord_t *c);

/* ---- admin ---- */

/* The entry of an id, or NULL; *err as txn_part_state when its partition
 * is not served. */
const txn_t *txn_lookup(const txn_coord_t *c, const char *id, size_t id_len, int16_t *err);
/* Calls fn for every entry of every served partition (Dead ones
 * excluded). */
typedef void txn_each_fn(void *arg, const txn_t *t);
void txn_each(const txn_coord_t *c, txn_each_fn *fn, void *arg);

#endif
