/* Changes of a dynamic quorum's voters on its leader, as KRaft makes them
 * for AddRaftVoter and RemoveRaftVoter: one at a time, only once the
 * leader's epoch and the voter set in force are committed, a new voter
 * only when it is an observer caught up with the leader and fetching with
 * the directory id it asks to join with; the new VotersRecord is appended
 * as a control batch and takes effect on the leader at once (raft.h,
 * raft_set_voters); the requester is answered once it commits, or with
 * REQUEST_TIMED_OUT when it has not by its deadline. A leader removed
 * from the set hands over once the removal commits. */
#ifndef STRAND_CLUSTER_RAFT_RECONF_H
#define STRAND_CLUSTER_RAFT_RECONF_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/raft_node.h"
#include "cluster/raft_voters.h"

/* The answer: err 0 or a Kafka error code, msg NULL or Kafka's words
 * (valid in the call only). */
typedef void raft_reconf_done_fn(void *arg, int16_t err, const char *msg);

typedef struct raft_reconf_s {
    raft_node_t *node;        /* borrowed */
    raft_voters_hist_t *hist; /* borrowed: the voter sets, written here on the leader */
    int32_t self_id;          /* this node */
    int32_t fetch_timeout_ms; /* how recent a caught-up fetch must be */
    /* the change in flight */
    int pending;
    int64_t offset;           /* its VotersRecord's */
    int64_t deadline_ms;
    int resign;               /* the leader removed itself: hand over at commit */
    raft_reconf_done_fn *done;
    void *arg;
    /* told after the set in force changed (peers' addresses) */
    void (*on_set)(void *ctx);
    void *ctx;
} raft_reconf_t;

/* AddRaftVoter of v (its id, directory id, endpoints, kraft.version
 * range). Returns 0 when the change is under way (done is called later),
 * or the error to answer now, with Kafka's words in *msg (buf holds them:
 * at least 512 bytes). */
int16_t raft_reconf_add(raft_reconf_t *rc, const raft_voter_t *v, int64_t now_ms,
                        int32_t timeout_ms, raft_reconf_done_fn *done, void *arg, char *buf,
                        size_t cap, const char **msg);
/* RemoveRaftVoter of (id, dir). As raft_reconf_add. */
int16_t raft_reconf_remove(raft_reconf_t *rc, int32_t id, const uint8_t dir[16], int64_t now_ms,
                           int32_t timeout_ms, raft_reconf_done_fn *done, void *arg, char *buf,
                           size_t cap, const char **msg);
/* UpdateRaftVoter of v (an existing voter's new endpoints and
 * kraft.version range) in leader epoch `epoch`. Answered at once, as
 * Kafka answers it once the new set is appended: 0, or the error with
 * Kafka's words in *msg. */
int16_t raft_reconf_update(raft_reconf_t *rc, const raft_voter_t *v, int32_t epoch,
                           int64_t now_ms, int32_t timeout_ms, char *buf, size_t cap,
                           const char **msg);
/* The log is committed below hw: a change in flight may be answered. */
void raft_reconf_committed(raft_reconf_t *rc, int64_t hw);
/* Deadlines, and a leader that lost its role (the change is answered as
 * not leader; its record, if it commits, is the next leader's). */
void raft_reconf_tick(raft_reconf_t *rc, int64_t now_ms);
/* The requester of arg is gone: it is not answered. */
void raft_reconf_cancel(raft_reconf_t *rc, void *arg);

#endif
