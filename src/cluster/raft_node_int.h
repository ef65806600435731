/* The Raft node's state, shared by raft_node.c (outputs, messages,
 * timer) and raft_node_disk.c (the log, flushes, quorum-state). */
#ifndef STRAND_CLUSTER_RAFT_NODE_INT_H
#define STRAND_CLUSTER_RAFT_NODE_INT_H

#include "cluster/meta_snap.h"
#include "cluster/raft_node.h"
#include "cluster/raft_state.h"

/* A request that came in, waiting for the core's answer. */
typedef struct rn_pending_s {
    int type;            /* the request's raft type */
    int32_t src;
    int16_t version;
    raft_reply_fn *reply;
    void *arg;
    struct rn_pending_s *next;
} rn_pending_t;

/* A disk action kept in order behind a truncation that waits for the
 * flush in flight (a flush begun before a truncation must not be taken
 * as covering what is appended after it). */
typedef struct rn_op_s {
    int kind;            /* RAFT_OUT_APPEND, _TRUNCATE, or _SNAPSHOT (install) */
    buf_t bytes;         /* APPEND: whole batches */
    int replica;         /* APPEND: fetched batches (offsets kept) */
    int32_t epoch;       /* APPEND as leader: its epoch */
    int64_t offset;      /* TRUNCATE */
    meta_snap_id_t snap; /* SNAPSHOT: the fetched snapshot, its image */
    meta_image_t *img;   /* (owned) and its last record's time */
    int64_t last_ts;
    struct rn_op_s *next;
} rn_op_t;

typedef struct rn_flush_s rn_flush_t;
typedef struct rn_snapfetch_s rn_snapfetch_t;
typedef struct rn_state_job_s rn_state_job_t;

struct raft_node_s {
    raft_node_config_t cfg;
    raft_t *raft;
    log_t *log;
    net_loop_t *loop;
    net_pool_t *pool;
    raft_transport_t tr;
    raft_node_hooks_t hooks;
    uint64_t rng;
    int next_bootstrap;

    net_timer_id_t timer;
    int64_t timer_at;

    rn_pending_t *pending;   /* requests that came in */
    int inflight;            /* requests sent, answers not yet back */

    /* the disk */
    rn_op_t *ops, **ops_tail;
    rn_flush_t *flush;       /* the flush in flight, or NULL */
    int flush_again;
    uint64_t trunc_gen;      /* bumped by each truncation */
    rn_state_job_t *state_job; /* the quorum-state write in flight */
    raft_qstate_t state_want; /* the latest asked for */
    uint64_t state_want_seq;
    int state_dirty;
    int closing;

    /* the fetch response being received: its records and batches */
    const uint8_t *rx_records;
    size_t *rx_pos;          /* byte offset of each batch, and the end */
    raft_batch_t *rx_batches;
    rn_snapfetch_t *snapfetch; /* the snapshot being fetched, or NULL */
    const uint8_t *proposal; /* the batch of raft_node_propose */
    size_t proposal_len;
};

/* raft_node.c */
void rn_drain(raft_node_t *node);
int64_t rn_now(void);

/* raft_node_disk.c */
void rn_fatal(raft_node_t *node, const char *what, const char *why) __attribute__((noreturn));
int rn_disk_load(raft_node_t *node, raft_disk_t *disk, raft_batch_t **epochs, char *err,
                 size_t errlen);
void rn_disk_persist(raft_node_t *node, const raft_out_t *out);
void rn_disk_append(raft_node_t *node, const raft_out_t *out);
void rn_disk_truncate(raft_node_t *node, int64_t offset);
int16_t rn_disk_records(raft_node_t *node, int64_t from, int64_t to, int32_t max_bytes, buf_t *out);
/* A fetched snapshot (its image taken) replaces the log, in order with
 * the appends and truncations queued before it. */
void rn_disk_install(raft_node_t *node, meta_snap_id_t id, meta_image_t *img, int64_t last_ts);
void rn_disk_close(raft_node_t *node);

/* raft_node_snap.c */
int rn_snap_serve(raft_node_t *node, int16_t version, const uint8_t *body, size_t len,
                  raft_reply_fn *reply, void *reply_arg);
void rn_snap_want(raft_node_t *node, const raft_out_t *out);
void rn_snap_close(raft_node_t *node);

#endif
