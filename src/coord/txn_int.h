/* The transaction coordinator's internals, shared by its files only:
 * txn.c (entries, partitions, loading), txn_write.c (transitions and
 * their writes), txn_ops.c (the client requests), txn_end.c (markers,
 * completion, timeouts, expiry). */
#ifndef STRAND_COORD_TXN_INT_H
#define STRAND_COORD_TXN_INT_H

#include "coord/txn.h"
#include "util/smap.h"

/* Kafka's TxnTransitMetadata: what an entry becomes once its write is
 * committed. */
typedef struct txn_transit_s {
    txn_state_t state;
    int64_t producer_id, prev_producer_id, next_producer_id;
    int16_t epoch, last_epoch;
    int32_t timeout_ms;
    txn_tp_t *tps; /* owned */
    int ntps;
    int64_t start_ms, update_ms;
    int16_t client_version;
} txn_transit_t;

enum txn_part_e { TXN_PART_UNLOADED, TXN_PART_LOADING, TXN_PART_LOADED };

struct txn_coord_s {
    txn_config_t cfg;
    txn_env_t env;
    smap_t txns;       /* id -> txn_t (owned) */
    uint8_t *pstate;   /* enum txn_part_e per partition */
    uint32_t *pgen;    /* bumped at every load and unload of a partition */
};

/* What runs once a transition's write is committed (err 0, the entry
 * then has its new state) or failed (the error a client gets). t is NULL
 * when the entry is gone meanwhile (the partition unloaded). */
typedef struct txn_op_s txn_op_t;
typedef void txn_then_fn(txn_coord_t *c, txn_t *t, txn_op_t *op, int16_t err);
struct txn_op_s {
    txn_coord_t *c;
    char *id; /* owned */
    size_t id_len;
    int32_t part;
    uint32_t gen;
    txn_transit_t to;
    txn_then_fn *then;
    /* the request's answer */
    void *done;
    void *arg;
    bool commit;      /* EndTxn: which marker */
    bool from_client; /* EndTxn: a client's (else the coordinator's abort) */
};

/* ---- txn.c ---- */
/* len bytes (NULs included) and a NUL after them; owned by the caller. */
char *txn_strdup(const char *p, size_t len);
txn_t *txn_get(const txn_coord_t *c, const char *id, size_t id_len);
/* A new entry (producer id -1, epoch -1, Empty) in its partition. */
txn_t *txn_add(txn_coord_t *c, const char *id, size_t id_len, int32_t timeout_ms);
void txn_remove(txn_coord_t *c, txn_t *t);
/* txn_part_state of an id's partition, and the entry when served. */
int16_t txn_find(const txn_coord_t *c, const char *id, size_t id_len, txn_t **t);
bool txn_has_tp(const txn_t *t, const char *topic, int32_t partition);
/* The entries want(c, t, arg) picks, collected first (a caller's work on
 * them may run writes whose answers change entries). *out is malloc'd. */
typedef bool txn_want_fn(const txn_coord_t *c, const txn_t *t, const void *arg);
int txn_select(const txn_coord_t *c, txn_want_fn *want, const void *arg, txn_t ***out);
void txn_tps_free(txn_tp_t *tps, int n);
txn_tp_t *txn_tps_copy(const txn_tp_t *tps, int n);

/* ---- txn_write.c ---- */
/* The entry as it is, as a transit to change (Kafka's prepareTransitionTo
 * starts from the current values). */
void txn_transit_from(const txn_t *t, txn_transit_t *to);
/* Starts writing op->to for t: t->pending = op->to.state; op->then runs
 * when the write ends. Takes ownership of op. */
void txn_write(txn_coord_t *c, txn_t *t, txn_op_t *op);
/* A new op for t (then, done, arg), its transit from t. */
txn_op_t *txn_op_new(txn_coord_t *c, const txn_t *t, txn_then_fn *then, void *done, void *arg);
void txn_op_free(txn_op_t *op);
/* Applies a committed transit to t (Kafka's completeTransitionTo). */
void txn_apply(txn_t *t, txn_transit_t *to);

/* ---- txn_end.c ---- */
/* Kafka's endTransaction for t, a client's or the coordinator's own
 * (timeout, fencing): validates, writes the Prepare state, answers
 * done(arg, err) and sends the markers. */
void txn_end_entry(txn_coord_t *c, txn_t *t, int64_t producer_id, int16_t epoch, bool commit,
                   bool from_client, txn_write_done_fn *done, void *arg);
/* Writes the markers of t's Prepare state (after the write, or after a
 * load). */
void txn_send_markers(txn_coord_t *c, txn_t *t);

#endif
