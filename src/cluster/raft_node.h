/* A Raft node of the metadata quorum: the pure core (raft.h) driven on an
 * event loop, with the metadata log on disk and a transport to the other
 * nodes. It turns the core's outputs into actions:
 *   - requests to other nodes, as Kafka's KRaft messages (raft_wire.h),
 *     through the transport, and their responses back into the core;
 *   - responses to requests that came in (raft_node_request), answered
 *     when the core says (a parked Fetch waits at the leader);
 *   - appends (a proposal's batch, the epoch's LeaderChangeMessage, the
 *     batches a follower fetched, kept as they came), truncations, and a
 *     flush after them on a worker thread (never an fsync on the loop);
 *   - the quorum-state file, written on a worker; the messages that
 *     depend on it leave only once it is durable;
 *   - the high watermark: the user learns that the log is committed up to
 *     it and reads the committed batches (raft_node_read).
 *
 * The transport is a seam: the broker's is its outbound connections and
 * the controller listener; a test's can be an in-process exchange. */
#ifndef STRAND_CLUSTER_RAFT_NODE_H
#define STRAND_CLUSTER_RAFT_NODE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/meta_rec.h"
#include "cluster/meta_snap.h"
#include "cluster/raft.h"
#include "cluster/raft_wire.h"
#include "log/log.h"
#include "net/net_loop.h"
#include "net/net_pool.h"
#include "util/arena.h"
#include "util/buf.h"

typedef struct raft_node_s raft_node_t;

/* A response body to a request the node sent, or NULL when none came
 * (the peer is unreachable, the connection closed, the request timed
 * out). The body is read in the call only. */
typedef void raft_resp_fn(void *arg, const uint8_t *body, size_t len);

typedef struct raft_transport_s {
    void *ctx;
    /* Sends a request body (api_key, version) to node_id; takes the
     * memory of *body (buf_free'd by the transport). cb runs exactly
     * once, later, never inside send. */
    void (*send)(void *ctx, int32_t node_id, int16_t api_key, int16_t version, buf_t *body,
                 raft_resp_fn *cb, void *arg);
    /* Optional: node_id is reached at host[0..host_len):port (a leader's
     * endpoint a response named: Fetch, Vote, BeginQuorumEpoch and
     * EndQuorumEpoch; or the LeaderEndpoints of a BeginQuorumEpoch or
     * EndQuorumEpoch request, naming its sender). */
    void (*learn)(void *ctx, int32_t node_id, const char *host, int32_t host_len, int32_t port);
    /* Optional: where node_id is reached now: 0 with *host (the
     * transport's, valid until its next learn) and *port, or -1 when
     * unknown. The leader endpoint of the responses this node sends. */
    int (*addr)(void *ctx, int32_t node_id, const char **host, int *port);
} raft_transport_t;

/* The answer to a request that came in: a response body at the request's
 * version, whose memory the callee takes. */
typedef void raft_reply_fn(void *arg, buf_t *body);

typedef struct raft_node_hooks_s {
    void *ctx;
    /* The log is committed below hw (it only grows). */
    void (*on_commit)(void *ctx, int64_t hw);
    /* The role, epoch or leader changed. */
    void (*on_role)(void *ctx, int role, int32_t epoch, int32_t leader);
    /* The metadata log failed (an append, truncation or flush): the node
     * cannot go on. Should not return (the node aborts if it does). */
    void (*on_fatal)(void *ctx);
    /* A snapshot fetched from the leader replaced the log: the log starts
     * at id.end_offset now and img (an image the callee takes: it frees
     * it, or moves it with a struct copy) is the committed state there;
     * last_ts is its last record's time. */
    void (*on_snapshot)(void *ctx, meta_snap_id_t id, meta_image_t *img, int64_t last_ts);
} raft_node_hooks_t;

typedef struct raft_node_config_s {
    raft_config_t raft;
    raft_wire_t wire;
    /* Where an observer that knows no leader sends its fetches: voter
     * ids, tried in turn. */
    int32_t bootstrap[RAFT_MAX_VOTERS];
    int nbootstrap;
    uint64_t seed;              /* election timeouts' randomness */
    /* A dynamic quorum (kraft.version 1): the quorum-state is written at
     * data_version 1. epoch_ctl[0..nepoch_ctl): the KRaftVersion and
     * Voters records (raft_voters.h) a leader writes after its
     * LeaderChangeMessage while the voter set is only the bootstrap
     * checkpoint's (raft.epoch_extra is nepoch_ctl); values borrowed,
     * outliving the node. Once written, no later epoch repeats them. */
    int kraft_version;
    meta_snap_ctl_t epoch_ctl[2];
    int nepoch_ctl;
} raft_node_config_t;

/* A node over log (the metadata log, owned by the caller, outliving the
 * node), whose quorum-state lives in the log's directory. Reads the
 * quorum-state and the log's epochs, then starts the core. Returns the
 * node owned by the caller (raft_node_free), or NULL with Kafka-like
 * words in err (a malformed quorum-state). */
raft_node_t *raft_node_new(const raft_node_config_t *cfg, log_t *log, net_loop_t *loop,
                           net_pool_t *pool, const raft_transport_t *tr,
                           const raft_node_hooks_t *hooks, char *err, size_t errlen);
/* Requests still waiting are dropped unanswered and the transport's
 * callbacks of requests in flight must not run any more: call when the
 * transport is gone. Disk work in flight is waited for. */
void raft_node_free(raft_node_t *node);

/* A KRaft request that came in (Vote, BeginQuorumEpoch, EndQuorumEpoch,
 * Fetch of the metadata log, FetchSnapshot): reply(reply_arg, body) runs once, in the
 * call or later, unless raft_node_cancel(reply_arg) comes first. Returns
 * 0, or -1 when the body is malformed (nothing will be answered: close
 * the connection). */
int raft_node_request(raft_node_t *node, int16_t api_key, int16_t version, const uint8_t *body,
                      size_t len, raft_reply_fn *reply, void *reply_arg);
/* The requests of reply_arg (a closing connection) are not answered. */
void raft_node_cancel(raft_node_t *node, void *reply_arg);

/* On the leader: recs[0..n) as one batch at the current epoch. Returns
 * the batch's last offset (it is committed once the high watermark
 * passes it), or -1 when this node is not the leader or the batch cannot
 * be built. */
int64_t raft_node_propose(raft_node_t *node, const meta_rec_t *recs, int n);
/* On the leader: one control record (a VotersRecord of a voter change)
 * as a control batch at the current epoch. Returns its offset, or -1
 * when this node is not the leader. */
int64_t raft_node_propose_control(raft_node_t *node, int16_t type, const uint8_t *value,
                                  size_t len);
/* The voter set in force changed (raft_set_voters). */
void raft_node_set_voters(raft_node_t *node, const int32_t *ids, int n);
/* Committed batches from offset on (whole, up to max_bytes, at least
 * one) appended to out. Returns 0 or a Kafka error code. */
int16_t raft_node_read(raft_node_t *node, int64_t offset, int32_t max_bytes, buf_t *out);
/* Leaves gracefully: a leader hands over (EndQuorumEpoch). */
void raft_node_resign(raft_node_t *node);

raft_t *raft_node_core(raft_node_t *node);

#endif
