/* FetchSnapshot (59) of __cluster_metadata-0 on the wire: a follower
 * whose fetch was answered with a snapshot id reads that snapshot from
 * the leader in slices (a position, and up to max bytes from it), as
 * KRaft does. Not a message of the core (raft.h): the Raft node serves
 * and fetches snapshots itself (raft_node_snap.c). */
#ifndef STRAND_CLUSTER_RAFT_WIRE_SNAP_H
#define STRAND_CLUSTER_RAFT_WIRE_SNAP_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/raft_wire.h"
#include "util/arena.h"
#include "util/buf.h"

#define RAFT_WIRE_SNAP_VERSION 1 /* what Kafka 4.4 sends */

typedef struct raft_snap_req_s {
    int32_t replica_id;
    int32_t max_bytes;
    int32_t leader_epoch;     /* CurrentLeaderEpoch */
    int64_t end_offset;       /* the snapshot id */
    int32_t epoch;
    int64_t position;
} raft_snap_req_t;

typedef struct raft_snap_resp_s {
    int16_t err;              /* top level, or the partition's */
    int32_t leader_id;        /* CurrentLeader */
    int32_t leader_epoch;
    int64_t end_offset;       /* the snapshot id */
    int32_t epoch;
    int64_t size;             /* of the whole snapshot */
    int64_t position;         /* of bytes[0] */
    const uint8_t *bytes;     /* the slice (into the body, or the caller's) */
    size_t len;
} raft_snap_resp_t;

void raft_wire_snap_req(const raft_wire_t *w, const raft_snap_req_t *r, int16_t version,
                        buf_t *out);
/* A FetchSnapshot request body into r. Returns 0; a Kafka error code
 * (> 0) for the whole request (INCONSISTENT_CLUSTER_ID, or
 * INVALID_REQUEST when it names other than one partition); or -1 when
 * malformed. *other is set when the one partition it names is not
 * __cluster_metadata-0 (the caller answers UNKNOWN_TOPIC_OR_PARTITION). */
int raft_wire_snap_req_decode(const raft_wire_t *w, int16_t version, const uint8_t *body,
                              size_t len, arena_t *arena, raft_snap_req_t *r, int *other);
/* A response: r->err 0 with the slice, or a partition error (with the
 * leader); w gives the leader's endpoint (v1) when it is this node. */
void raft_wire_snap_resp(const raft_wire_t *w, const raft_snap_resp_t *r, int16_t version,
                         buf_t *out);
/* A response with only a top-level error. */
void raft_wire_snap_error(int16_t version, int16_t err, buf_t *out);
/* A response body into r (bytes point into body). 0, or -1 when
 * malformed. */
int raft_wire_snap_resp_decode(int16_t version, const uint8_t *body, size_t len, arena_t *arena,
                               raft_snap_resp_t *r);

#endif
