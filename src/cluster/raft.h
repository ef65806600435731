/* The Raft core of the metadata quorum, as KRaft runs it: a pure state
 * machine. Messages, timer ticks and disk completions go in; messages to
 * send, log appends and truncations, and quorum-state writes come out.
 * No sockets, clocks, files or randomness of its own are inside, so a
 * seeded simulation can drive thousands of failure schedules through
 * exactly this code (tests/unit/test_raft_sim.c), and the driver that
 * connects it to the network and the disk stays thin.
 *
 * KRaft's shape, not the Raft paper's: followers and observers pull
 * (Fetch) from the leader, and the leader learns each voter's position
 * from the fetch offset it sends; the high watermark is the largest
 * offset a majority of voters has on disk, once it passes the start of
 * the leader's epoch. A fetch whose last fetched epoch disagrees with
 * the leader's log gets the diverging epoch and end offset back, and the
 * follower truncates to them. Elections start with a pre-vote round
 * (a node that still hears from its leader refuses it), then a vote at
 * the next epoch; a node's epoch and vote are on disk (quorum-state)
 * before any message that depends on them leaves.
 *
 * Offsets are the log's; the core knows only its shape (start, end,
 * what is on disk, the first offset of each epoch), not its bytes: a
 * fetch response's records are a range the driver reads from its log,
 * and received records are a list of batches the driver appends. */
#ifndef STRAND_CLUSTER_RAFT_H
#define STRAND_CLUSTER_RAFT_H

#include <stddef.h>
#include <stdint.h>

#define RAFT_MAX_VOTERS 16
#define RAFT_MAX_OBSERVERS 64
#define RAFT_MAX_OUT 256     /* outputs waiting to be polled */

enum raft_role {
    RAFT_UNATTACHED, /* an epoch with no known leader (possibly voted) */
    RAFT_PROSPECTIVE, /* asking for pre-votes, at the current epoch */
    RAFT_CANDIDATE,  /* asking for votes, at the epoch it started */
    RAFT_LEADER,
    RAFT_FOLLOWER,   /* knows the epoch's leader and fetches from it */
    RAFT_RESIGNED,   /* a leader that is leaving; answers, elects no one */
};

enum raft_msg_type {
    RAFT_VOTE_REQ = 1,
    RAFT_VOTE_RESP,
    RAFT_BEGIN_REQ,  /* BeginQuorumEpoch */
    RAFT_BEGIN_RESP,
    RAFT_END_REQ,    /* EndQuorumEpoch */
    RAFT_END_RESP,
    RAFT_FETCH_REQ,
    RAFT_FETCH_RESP,
};

/* A batch of received records: offsets [base, last], written at epoch. */
typedef struct raft_batch_s {
    int64_t base;
    int64_t last;
    int32_t epoch;
} raft_batch_t;

/* One message, either way. dst -1 on a request: any bootstrap server (an
 * observer that knows no leader). The driver turns it into the Kafka
 * request or response and back; responses are matched to requests by
 * type and peer, and stale ones are judged by their epoch. */
typedef struct raft_msg_s {
    int type;               /* enum raft_msg_type */
    int32_t src, dst;
    int16_t err;            /* responses: 0 or a Kafka error code */
    int8_t other_voter;     /* Vote and BeginQuorumEpoch requests: the voter
                               key they name is not this node's (answered
                               INVALID_VOTER_KEY once their epoch is seen) */
    int32_t epoch;          /* requests: the sender's epoch (the candidate's,
                               the leader's, the fetcher's); responses: the
                               responder's */
    int32_t leader_id;      /* responses: the leader it knows, or -1 */
    /* Vote */
    int32_t last_epoch;     /* the candidate's last log entry's epoch */
    int64_t last_offset;    /* its log end offset */
    int8_t prevote;
    int8_t granted;
    /* EndQuorumEpoch: the voters best placed to follow, best first */
    int32_t successors[RAFT_MAX_VOTERS];
    int nsuccessors;
    /* Fetch request; a response carries its request's two, so a late or
     * repeated one for an older position is told apart */
    int64_t fetch_offset;
    int32_t last_fetched_epoch;
    int32_t max_wait_ms;
    /* Fetch response; in a request (v18), the fetcher's high watermark
     * (INT64_MAX: not said) */
    int64_t hw;
    int64_t log_start;
    int32_t div_epoch;      /* diverging: the leader's end of div_epoch */
    int64_t div_end;        /* -1: not diverging */
    int32_t snap_epoch;     /* the snapshot to fetch instead, or -1 */
    int64_t snap_end;
    int64_t rec_from, rec_to; /* records [from, to) the driver sends */
    const raft_batch_t *batches; /* records the driver received; the core
                                    reads them in the call only */
    int nbatches;
    /* The driver's, never the core's: where leader_id is reached (a
     * response's NodeEndpoints entry, given or to be sent), or where the
     * sender of a BeginQuorumEpoch or EndQuorumEpoch request is (its
     * LeaderEndpoints); NULL when none */
    const char *leader_host;
    int32_t leader_host_len;
    int32_t leader_port;
    /* Fetch request: the fetcher's directory id (ReplicaDirectoryId, zero
     * when not sent), which the leader keeps for DescribeQuorum */
    uint8_t dir_id[16];
} raft_msg_t;

enum raft_out_kind {
    RAFT_OUT_SEND,     /* msg */
    RAFT_OUT_PERSIST,  /* write quorum-state durably, then raft_persisted */
    RAFT_OUT_APPEND,   /* append msg.batches' records (the received message's,
                          in the call that received it), or on the leader
                          the proposal [append_base, append_base + n) at
                          append_epoch; flush, then raft_flushed */
    RAFT_OUT_TRUNCATE, /* remove the log from offset on, before what follows */
    RAFT_OUT_HW,       /* the high watermark moved to offset: entries below
                          it are committed and may be applied */
    RAFT_OUT_ROLE,     /* the role or epoch changed (for the driver's view) */
    RAFT_OUT_SNAPSHOT, /* the leader's log starts after snapshot (offset,
                          append_epoch): fetch it from msg.src
                          (FetchSnapshot), then raft_snapshot_installed */
};

typedef struct raft_out_s {
    int kind;
    raft_msg_t msg;
    int64_t offset;     /* TRUNCATE, HW */
    int64_t append_base;
    int32_t append_epoch;
    int32_t append_n;   /* APPEND of a proposal; 0: of msg's batches */
    int control;        /* APPEND of a proposal: 1 for the epoch's first
                           batch, the LeaderChangeMessage */
    uint64_t seq;       /* PERSIST: its number, for raft_persisted */
    /* PERSIST: what to write */
    int32_t epoch, leader_id, voted_id;
    uint64_t need_seq;  /* the core's: the state that must be durable first */
} raft_out_t;

typedef struct raft_config_s {
    int32_t node_id;
    int32_t voters[RAFT_MAX_VOTERS];
    int nvoters;
    int32_t election_timeout_ms;     /* controller.quorum.election.timeout.ms */
    int32_t fetch_timeout_ms;        /* controller.quorum.fetch.timeout.ms */
    int32_t election_backoff_max_ms; /* controller.quorum.election.backoff.max.ms */
    int32_t request_timeout_ms;      /* controller.quorum.request.timeout.ms */
    int32_t fetch_max_wait_ms;       /* a follower's long poll */
    /* Control records the leader's epoch-first batch carries after its
     * LeaderChangeMessage: on a dynamic quorum whose voter set is only
     * the bootstrap checkpoint's, 2 (KRaftVersion and Voters, which the
     * driver writes there); else 0. raft_set_epoch_extra changes it. */
    int32_t epoch_extra;
} raft_config_t;

/* What the node found on disk at start-up. */
typedef struct raft_disk_s {
    int32_t epoch, leader_id, voted_id; /* quorum-state; 0, -1, -1 if none */
    int64_t log_start;       /* where the log starts: a snapshot's end, or 0 */
    int32_t snap_epoch;      /* that snapshot's epoch, or 0 */
    int64_t latest_end;      /* the latest snapshot (0: none but the above) */
    int32_t latest_epoch;
    int64_t log_end;         /* all durable */
    const raft_batch_t *epochs; /* each epoch's first batch in the log, in
                                   order (a batch per epoch suffices) */
    int nepochs;
} raft_disk_t;

typedef struct raft_s raft_t;

/* A new core from its config and what is on disk; the caller owns it
 * (raft_free). rand64 is the only source of randomness (election
 * timeouts): the simulation seeds it. Returns NULL with errno set. */
raft_t *raft_new(const raft_config_t *cfg, const raft_disk_t *disk,
                 uint64_t (*rand64)(void *arg), void *rand_arg, int64_t now_ms);
void raft_free(raft_t *raft);

/* Inputs. Each may queue outputs; poll them with raft_poll. */
void raft_tick(raft_t *raft, int64_t now_ms);
void raft_recv(raft_t *raft, const raft_msg_t *msg, int64_t now_ms);
/* The quorum-state write numbered seq is durable. */
void raft_persisted(raft_t *raft, uint64_t seq, int64_t now_ms);
/* The log is durable up to (excluding) offset. */
void raft_flushed(raft_t *raft, int64_t offset, int64_t now_ms);
/* On the leader: n records at the current epoch, appended at the log's
 * end. Returns their base offset, or -1 when not the leader (or the
 * leader's epoch has not started yet). */
int64_t raft_propose(raft_t *raft, int32_t n, int64_t now_ms);
/* A leader leaving gracefully: EndQuorumEpoch to the others. */
void raft_resign(raft_t *raft, int64_t now_ms);
/* Snapshots (raft_snap.c). After RAFT_OUT_SNAPSHOT the core waits for
 * that snapshot, fetching nothing else, until one of these (or a change
 * of role or epoch, after which it is no longer wanted). */
/* 1 while the core waits for snapshot (offset, epoch): ask right before
 * replacing the log with it, in the same turn of the loop. */
int raft_snapshot_wanted(const raft_t *raft, int64_t offset, int32_t epoch);
/* The log now holds only the snapshot ending at offset (written at
 * epoch) and nothing after it: a fetched snapshot replaced it. Ignored
 * unless raft_snapshot_wanted. */
void raft_snapshot_installed(raft_t *raft, int64_t offset, int32_t epoch, int64_t now_ms);
/* Fetching it failed (no answer, SNAPSHOT_NOT_FOUND, a bad file): the
 * core fetches again after a backoff and is told which snapshot then. */
void raft_snapshot_failed(raft_t *raft, int64_t now_ms);
/* A good FetchSnapshot answer came from the leader: it is alive. */
void raft_snapshot_progress(raft_t *raft, int64_t now_ms);
/* A snapshot of the committed log up to offset now exists (the latest):
 * a fetch below the log start is sent to it, as Kafka sends the latest. */
void raft_snapshot_latest(raft_t *raft, int64_t offset, int32_t epoch);
/* On the leader: replica id fetched a part of a snapshot (it counts as
 * heard from, as a fetch does, for check-quorum). */
void raft_snapshot_served(raft_t *raft, int32_t id, int64_t now_ms);
/* A snapshot of the committed log up to offset exists and the log before
 * it was deleted: fetches below it are sent the snapshot. offset must
 * not pass the high watermark. */
void raft_log_start_moved(raft_t *raft, int64_t offset, int32_t epoch);

/* The voter set in force is ids[0..n) from now on (a dynamic quorum's
 * VotersRecord: on the leader once appended, elsewhere once committed). */
void raft_set_voters(raft_t *raft, const int32_t *ids, int n, int64_t now_ms);
/* From now on the leader's epoch-first batch carries n control records
 * after the LeaderChangeMessage (raft_config_t.epoch_extra). */
void raft_set_epoch_extra(raft_t *raft, int32_t n);

/* The next output, in order: 1 with *out filled, or 0 when none is
 * ready (messages that need a quorum-state write wait for it). APPEND
 * of received batches must be taken in the raft_recv call's wake. */
int raft_poll(raft_t *raft, raft_out_t *out);
/* When the next tick is due (ms). */
int64_t raft_next_deadline(const raft_t *raft);

/* The view. */
int raft_role(const raft_t *raft);
int32_t raft_epoch(const raft_t *raft);
int32_t raft_leader(const raft_t *raft);
int32_t raft_voted(const raft_t *raft);
int64_t raft_hw(const raft_t *raft);
int64_t raft_log_end(const raft_t *raft);
/* On the leader: the offset of its epoch's first record (the
 * LeaderChangeMessage); everything before it is committed once the high
 * watermark passes it. -1 when not the leader. */
int64_t raft_epoch_start(const raft_t *raft);
int raft_is_voter(const raft_t *raft, int32_t id);
/* The leader's view of a replica (voter or observer): its fetched end
 * offset and when it last fetched (-1: unknown). Returns 0, or -1 when
 * not the leader or the replica is unknown. */
int raft_replica_state(const raft_t *raft, int32_t id, int64_t *end, int64_t *last_fetch_ms,
                       int64_t *caught_up_ms);
/* On the leader: the directory id a replica last fetched with (zero when
 * unknown or not sent). Returns 0, or -1 when not the leader or unknown. */
int raft_replica_dir(const raft_t *raft, int32_t id, uint8_t out[16]);
const char *raft_role_name(int role);
/* The voters that elected this leader (its LeaderChangeMessage). */
int raft_granting_voters(const raft_t *raft, int32_t *ids, int cap);
/* The replicas the leader knows (voters first, then the observers that
 * have fetched), ids into out[0..cap). Returns how many; 0 when not the
 * leader. */
int raft_replicas(const raft_t *raft, int32_t *ids, int *voter, int cap);
/* The voters, in the config's order. */
int raft_voters(const raft_t *raft, const int32_t **ids);

#endif
