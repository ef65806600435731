/* The Raft core's messages (raft.h) on the wire: Kafka's Vote (52),
 * BeginQuorumEpoch (53), EndQuorumEpoch (54) and Fetch (1) of
 * __cluster_metadata-0, through the generated codecs, so a Strand quorum
 * speaks KRaft's own protocol.
 *
 * Each message names the one partition of the metadata log (by name, and
 * in Fetch v13+ by Kafka's fixed topic id of the metadata topic); the
 * cluster id is checked as KRaft checks it (null passes, anything else
 * must be ours: INCONSISTENT_CLUSTER_ID), answered at the top level as
 * KRaft answers it; the voter key a Vote or BeginQuorumEpoch names is
 * checked too (msg.other_voter), which the core answers in the partition
 * (INVALID_VOTER_KEY), as KRaft does. Leader endpoints: a response
 * names its leader's (NodeEndpoints: this node's when it leads, else
 * msg.leader_host), BeginQuorumEpoch and EndQuorumEpoch requests this
 * node's controller listener (LeaderEndpoints); decoding puts either in
 * msg.leader_host (for a request: the entry of w's listener name). A
 * response does not repeat its request's fields, so decoding one takes
 * the request it answers (its peer, pre-vote flag, fetch position). */
#ifndef STRAND_CLUSTER_RAFT_WIRE_H
#define STRAND_CLUSTER_RAFT_WIRE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/raft.h"
#include "util/arena.h"
#include "util/buf.h"

/* The versions a Strand voter sends (the highest Kafka 4.4 accepts). */
#define RAFT_WIRE_VOTE_VERSION 2
#define RAFT_WIRE_BEGIN_VERSION 1
#define RAFT_WIRE_END_VERSION 1
#define RAFT_WIRE_FETCH_VERSION 18

typedef struct raft_wire_s {
    const char *cluster_id;  /* ours, or NULL: any is accepted */
    int32_t node_id;         /* this node */
    uint8_t dir_id[16];      /* this node's metadata directory id */
    const char *listener;    /* the controller listener's name, host and */
    const char *host;        /* port this node is reached on (leader */
    uint16_t port;           /* endpoints) */
    int32_t max_bytes;       /* of a Fetch response */
} raft_wire_t;

/* The API key of a message type, request or response. */
int16_t raft_wire_api_key(int type);

/* A request of the core (type *_REQ) as the body of a Kafka request at
 * version, appended to out. */
void raft_wire_encode_req(const raft_wire_t *w, const raft_msg_t *msg, int16_t version, buf_t *out);
/* A Kafka request body into msg (src, dst and the fields). Returns 0; a
 * Kafka error code (> 0) to answer with at the top level; or -1 when the
 * body is malformed (close the connection). Decoded strings and arrays
 * live in arena. */
int raft_wire_decode_req(const raft_wire_t *w, int16_t api_key, int16_t version,
                         const uint8_t *body, size_t len, arena_t *arena, raft_msg_t *msg);

/* A response of the core (type *_RESP) at version into out; a Fetch
 * response carries records[0..rec_len) (whole batches of the log, or
 * none). */
void raft_wire_encode_resp(const raft_wire_t *w, const raft_msg_t *msg, int16_t version,
                           const uint8_t *records, size_t rec_len, buf_t *out);
/* A response carrying only a top-level error (the request was refused). */
void raft_wire_encode_error(int16_t api_key, int16_t version, int16_t err, buf_t *out);
/* A Kafka response body to the request req into msg. A Fetch response's
 * records are left in *records (pointing into body) for the caller to
 * split into batches. Returns 0 or -1 when malformed. */
int raft_wire_decode_resp(const raft_msg_t *req, int16_t version, const uint8_t *body, size_t len,
                          arena_t *arena, raft_msg_t *msg, const uint8_t **records,
                          size_t *rec_len);

/* The batches of a run of records (base offset, last offset, leader
 * epoch from each v2 batch header) into out[0..cap). Returns how many
 * whole batches there were (a torn last one is left out), or -1 when a
 * batch header is not a v2 one. */
int raft_wire_batches(const uint8_t *records, size_t len, raft_batch_t *out, int cap);

#endif
