/* The Raft core's state, shared by raft.c (roles, timers, outputs),
 * raft_vote.c (elections) and raft_fetch.c (replication). */
#ifndef STRAND_CLUSTER_RAFT_INT_H
#define STRAND_CLUSTER_RAFT_INT_H

#include "cluster/raft.h"

/* A replica as the leader sees it. */
typedef struct raft_peer_s {
    int32_t id;
    int voter;
    int64_t end;           /* its last fetch offset, or -1 */
    int64_t last_fetch_ms; /* -1: not in this epoch */
    int64_t caught_up_ms;  /* when it last fetched at our end, or -1 */
    uint8_t dir_id[16];    /* the directory id of its last fetch */
    int parked;            /* a fetch waits in park */
    raft_msg_t park;       /* that fetch */
    int64_t park_deadline;
} raft_peer_t;

struct raft_s {
    raft_config_t cfg;
    uint64_t (*rand64)(void *arg);
    void *rand_arg;
    int voter;             /* this node is one of cfg.voters */

    /* the election state; epoch, leader and voted are persisted */
    int role;
    int32_t epoch, leader, voted;
    uint64_t state_seq;    /* the last quorum-state write asked for */
    uint64_t state_durable; /* the last one durable */

    /* the log's shape */
    int64_t log_start;
    int32_t snap_epoch;
    int64_t latest_end;    /* the latest snapshot (a fetch below the start
                              is sent to it), or -1 */
    int32_t latest_epoch;
    int64_t end, durable, hw;
    raft_batch_t *epochs;  /* owned; base: each epoch's first offset */
    int nepochs, capepochs;

    /* timers */
    int64_t election_at;   /* unattached, prospective, candidate, resigned */
    int64_t prevote_at;    /* prospective: when to ask (after a backoff) */
    int prevote_sent;
    int64_t fetch_deadline; /* follower: the leader is lost after this */
    int64_t leader_contact_ms; /* follower: the last good fetch, or -1 */
    int64_t begin_resend_at; /* leader: BeginQuorumEpoch to silent voters */
    int64_t check_quorum_at; /* leader */

    /* elections: votes by voter index */
    uint32_t granted, rejected;

    /* the fetch loop of a follower or observer */
    int fetch_inflight;
    int64_t fetch_sent_ms;
    int64_t fetch_retry_at;
    /* the snapshot the leader sent us to (FetchSnapshot); -1: none. The
     * log stays as it is meanwhile: no fetches until it is installed */
    int64_t snap_want_end;
    int32_t snap_want_epoch;

    /* resigned: the voters (by index) yet to acknowledge its
     * EndQuorumEpoch, sent again to them until they do or the epoch ends */
    uint32_t end_unacked;
    int64_t end_resend_at;
    int32_t successors[RAFT_MAX_VOTERS];
    int nsuccessors;

    /* leader */
    int64_t epoch_start;
    raft_peer_t peers[RAFT_MAX_VOTERS + RAFT_MAX_OBSERVERS];
    int npeers;

    /* outputs, in order */
    raft_out_t out[RAFT_MAX_OUT];
    int nout;
};

/* raft.c */
void raft_become(raft_t *raft, int role, int64_t now_ms);
void raft_set_state(raft_t *raft, int32_t epoch, int32_t leader, int32_t voted);
void raft_send(raft_t *raft, const raft_msg_t *msg, int gated);
raft_out_t *raft_out_push(raft_t *raft, int kind);
int raft_voter_index(const raft_t *raft, int32_t id);
int raft_majority(const raft_t *raft);
int64_t raft_rand_ms(raft_t *raft, int32_t range_ms);
void raft_observe(raft_t *raft, int32_t epoch, int32_t leader, int64_t now_ms);
void raft_msg_reply(const raft_t *raft, const raft_msg_t *req, raft_msg_t *resp, int type);

/* raft_epochs.c: the log's epochs */
int32_t raft_last_epoch(const raft_t *raft);
void raft_epoch_append(raft_t *raft, int32_t epoch, int64_t base);
void raft_epoch_truncate(raft_t *raft, int64_t offset);
/* The largest epoch <= epoch in the log and where it ends (Kafka's end
 * offset for an epoch); *found_epoch -1 when the log has none. */
int64_t raft_epoch_end(const raft_t *raft, int32_t epoch, int32_t *found_epoch);

/* raft_vote.c */
void raft_on_vote_req(raft_t *raft, const raft_msg_t *msg, int64_t now_ms);
void raft_on_vote_resp(raft_t *raft, const raft_msg_t *msg, int64_t now_ms);
void raft_on_begin_req(raft_t *raft, const raft_msg_t *msg, int64_t now_ms);
void raft_on_end_req(raft_t *raft, const raft_msg_t *msg, int64_t now_ms);
void raft_start_prevote(raft_t *raft, int64_t now_ms);
void raft_start_election(raft_t *raft, int64_t now_ms);

/* raft_check.c: KRaft's checks of a request before it is acted on; 0 or
 * the error its answer carries in the partition */
int16_t raft_check_vote_req(const raft_t *raft, const raft_msg_t *msg);
int16_t raft_check_leader_notice(const raft_t *raft, const raft_msg_t *msg);
int16_t raft_check_fetch_req(const raft_msg_t *msg);

/* raft_resign.c */
void raft_resigned_enter(raft_t *raft, const int32_t *successors, int n, int64_t now_ms);
void raft_resigned_tick(raft_t *raft, int64_t now_ms);
void raft_on_end_resp(raft_t *raft, const raft_msg_t *msg, int64_t now_ms);

/* raft_fetch.c */
void raft_on_fetch_req(raft_t *raft, const raft_msg_t *msg, int64_t now_ms);
void raft_on_fetch_resp(raft_t *raft, const raft_msg_t *msg, int64_t now_ms);
void raft_fetch_tick(raft_t *raft, int64_t now_ms);
void raft_leader_tick(raft_t *raft, int64_t now_ms);
void raft_leader_start(raft_t *raft, int64_t now_ms);
void raft_update_hw(raft_t *raft, int64_t now_ms);
void raft_wake_parked(raft_t *raft, int64_t now_ms, int all);
void raft_fail_parked(raft_t *raft);
raft_peer_t *raft_peer(raft_t *raft, int32_t id, int create);
int raft_fetches_leader(const raft_t *raft);
void raft_fetch_failed(raft_t *raft, int64_t now_ms);

#endif
