/* The group coordinator, classic protocol: Kafka's consumer-group state
 * machine (Empty, PreparingRebalance, CompletingRebalance, Stable, Dead),
 * members and their timeouts, leader election, protocol selection, static
 * membership, and the committed offsets of every group.
 *
 * The core does no I/O. Time, timers, randomness and the appends to
 * __consumer_offsets come through grp_env_t, so the unit tests drive it
 * with a fake clock and an in-memory store; grp_log.c supplies the real
 * ones (the event loop, the partition logs). State changes are persisted
 * as Kafka's records (grp_rec.h) and applied in memory only after the
 * append succeeded, as Kafka applies them after the write is committed.
 *
 * JoinGroup and SyncGroup may have to wait for the rest of the group: the
 * caller passes a grp_waiter_t, which is answered through its callback,
 * at once or later from another member's request or a timer.
 *
 * Ids (group, member, instance and client ids, protocol types and names)
 * are C strings in the form of util/cstr.h: a NUL byte of the protocol
 * string is kept as C0 80, so that ids differing only after a NUL stay
 * apart; records and answers carry the original bytes.
 *
 * Everything runs on the event-loop thread; nothing locks. */
#ifndef STRAND_COORD_GRP_H
#define STRAND_COORD_GRP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "proto/proto_types.h"
#include "util/buf.h"
#include "util/kerr.h"
#include "util/smap.h"

typedef enum grp_state_e {
    GRP_EMPTY,
    GRP_PREPARING_REBALANCE,
    GRP_COMPLETING_REBALANCE,
    GRP_STABLE,
    GRP_DEAD,
} grp_state_t;

/* Kafka's names ("Empty", "PreparingRebalance", ...). */
const char *grp_state_name(grp_state_t s);

typedef struct grp_coord_s grp_coord_t;
typedef struct grp_s grp_t;
typedef struct grp_member_s grp_member_t;
typedef struct grp_waiter_s grp_waiter_t;

/* A one-shot timer embedded in its owner. */
typedef struct grp_timer_s grp_timer_t;
struct grp_timer_s {
    uint64_t id;  /* armed when non-zero */
    int64_t due;  /* monotonic ms */
    int32_t slot; /* the host's bookkeeping */
    void (*cb)(grp_timer_t *t);
};

/* For the host's timer callback: marks t disarmed and runs it. */
void grp_timer_fire(grp_timer_t *t);

/* Records to append to one __consumer_offsets partition: keys and values
 * back to back in data; a value length of -1 is a tombstone. */
typedef struct grp_recs_s {
    int64_t producer_id;    /* a transaction's records (TxnOffsetCommit), else -1 */
    int16_t producer_epoch;
    buf_t data;
    struct grp_recs_ent_s {
        size_t key_off, val_off;
        int32_t key_len, val_len;
    } *v;
    int n, cap;
} grp_recs_t;

/* What the core needs from its host. */
typedef struct grp_env_s {
    void *ctx;
    int64_t (*now_mono)(void *ctx);
    int64_t (*now_wall)(void *ctx);
    /* Runs grp_timer_fire(t) once after ms (t->due is set already);
     * returns a non-zero id. Cancel forgets an armed t. */
    uint64_t (*timer_add)(void *ctx, int64_t ms, grp_timer_t *t);
    void (*timer_cancel)(void *ctx, grp_timer_t *t);
    /* 16 random bytes (member ids). */
    void (*random)(void *ctx, uint8_t out[16]);
    /* Appends recs to partition `part` of __consumer_offsets, all or
     * nothing. Returns 0 or a Kafka error code. */
    int16_t (*store)(void *ctx, int32_t part, const grp_recs_t *recs);
    /* true when partition `part` of __consumer_offsets is offline (its
     * log failed, see partition/part.h part_offline). NULL: never. */
    bool (*offline)(void *ctx, int32_t part);
} grp_env_t;

typedef struct grp_config_s {
    int32_t num_partitions;          /* offsets.topic.num.partitions, 50 */
    int64_t initial_rebalance_delay_ms; /* group.initial.rebalance.delay.ms, 3000 */
    int32_t max_size;                /* group.max.size, INT32_MAX */
    int32_t min_session_timeout_ms;  /* group.min.session.timeout.ms, 6000 */
    int32_t max_session_timeout_ms;  /* group.max.session.timeout.ms, 1800000 */
    int64_t offsets_retention_ms;    /* offsets.retention.minutes, 7 days */
    int64_t offsets_retention_check_ms; /* offsets.retention.check.interval.ms, 600000 */
    int32_t offset_metadata_max_bytes;  /* offset.metadata.max.bytes, 4096 */
    int64_t new_member_join_timeout_ms; /* Kafka's fixed 5 minutes */
} grp_config_t;

void grp_config_defaults(grp_config_t *cfg);

/* ---- the model (read-only outside the coordinator) ---- */

typedef struct grp_protocol_s {
    char *name;
    uint8_t *meta;
    int32_t meta_len;
} grp_protocol_t;

struct grp_member_s {
    grp_member_t *next, *prev; /* the group's members, in join order */
    grp_t *grp;
    char *id;
    char *instance_id; /* NULL: dynamic member */
    char *client_id;
    char *client_host;
    int32_t session_timeout;
    int32_t rebalance_timeout;
    char *protocol_type;
    grp_protocol_t *protocols; /* in the member's order of preference */
    int nprotocols;
    uint8_t *assignment;
    int32_t assignment_len;

    bool awaiting_join;  /* Kafka's awaitingJoinCallback != null */
    bool awaiting_sync;
    bool pending_sync;   /* joined this generation, SyncGroup not seen yet */
    bool is_new;
    grp_waiter_t *join_w; /* where to answer; NULL if the client went away */
    grp_waiter_t *sync_w;

    /* Session: the member expires at hb_deadline (0: not now). One timer
     * runs at or before it and re-arms itself, so a heartbeat only moves
     * the deadline. */
    int64_t hb_deadline;
    grp_timer_t hb_timer;
};

/* A member id from the first JoinGroup (MEMBER_ID_REQUIRED) that has not
 * joined with it yet. */
typedef struct grp_pending_s {
    grp_t *grp;
    char *id;
    grp_timer_t timer;
} grp_pending_t;

/* A committed offset. */
typedef struct grp_offset_s {
    char *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;
    char *metadata;       /* metadata_len bytes, any of them NUL (then a NUL) */
    int32_t metadata_len;
    int64_t commit_ts;
    int64_t expire_ts; /* -1: by offsets.retention */
    uint64_t seq;      /* the coordinator's order of commits (grp_txn.c) */
} grp_offset_t;

/* An offset committed in a transaction not decided yet (TxnOffsetCommit):
 * it becomes the group's committed offset when the transaction commits
 * (its marker on the group's partition), unless a later commit won. */
typedef struct grp_txn_off_s {
    int64_t producer_id;
    char *topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;
    char *metadata;
    int32_t metadata_len;
    int64_t commit_ts;
    uint64_t seq;
} grp_txn_off_t;

struct grp_s {
    grp_coord_t *coord;
    char *id;
    size_t id_len;
    int32_t part; /* partition of __consumer_offsets */
    grp_state_t state;
    int64_t state_ts; /* wall ms of the last transition, -1 unknown */
    int32_t generation;
    char *protocol_type; /* NULL: none (a group that only stores offsets) */
    char *protocol_name; /* NULL between generations */
    grp_member_t *leader;
    grp_member_t members; /* list head */
    int nmembers;
    int nawaiting_join;
    int npending_sync;
    smap_t by_id;       /* member id -> grp_member_t */
    smap_t by_instance; /* group.instance.id -> grp_member_t */
    smap_t pending;     /* member id -> grp_pending_t */
    bool new_member_added;
    /* The running delayed join: an initial delay, or the rebalance
     * timeout; join_remaining is what the initial delay may still add. */
    grp_timer_t join_timer;
    bool join_initial;
    int64_t join_delay;
    int64_t join_remaining;
    grp_timer_t sync_timer;
    int32_t sync_generation;
    /* Topics the members subscribe to (consumer protocol), for offset
     * expiry and OffsetDelete; subscribed_known 0 when they cannot be
     * told. */
    char **subscribed;
    int nsubscribed;
    bool subscribed_known;
    smap_t offsets; /* "topic\0partition" -> grp_offset_t */
    /* The GroupMetadata value last written (or loaded), as written: what
     * a rewrite of the partition must keep (grp_part_snapshot). */
    uint8_t *meta_rec;
    int32_t meta_rec_len;
    grp_txn_off_t *txn_offs; /* of transactions not decided yet */
    int ntxn_offs, captxn_offs;
};

/* ---- waiters ---- */

typedef struct grp_join_member_s {
    const char *member_id;
    const char *instance_id; /* NULL: none */
    const uint8_t *meta;
    int32_t meta_len;
} grp_join_member_t;

typedef struct grp_join_result_s {
    int16_t error;
    const char *member_id;
    int32_t generation;
    const char *protocol_type; /* NULL: null */
    const char *protocol_name; /* NULL: null */
    const char *leader;
    bool skip_assignment;
    int nmembers;              /* the leader's list, else 0 */
    const grp_join_member_t *members;
} grp_join_result_t;

typedef struct grp_sync_result_s {
    int16_t error;
    const char *protocol_type; /* NULL: null */
    const char *protocol_name;
    const uint8_t *assignment;
    int32_t assignment_len;
} grp_sync_result_t;

/* Embedded in the caller's parked request. The results' strings live in
 * coordinator memory and are valid only during the callback. */
struct grp_waiter_s {
    void (*join_done)(grp_waiter_t *w, const grp_join_result_t *res);
    void (*sync_done)(grp_waiter_t *w, const grp_sync_result_t *res);
    grp_member_t *member; /* set by the coordinator while it holds w */
};

/* ---- lifecycle ---- */

/* Returns a coordinator owned by the caller (grp_coord_free). Copies cfg;
 * env must outlive it. Every partition starts as loaded; a host that
 * replays __consumer_offsets marks them loading first. */
grp_coord_t *grp_coord_new(const grp_config_t *cfg, const grp_env_t *env);
/* Cancels every timer; waiters are dropped without an answer. */
void grp_coord_free(grp_coord_t *c);
const grp_env_t *grp_coord_env(const grp_coord_t *c);

/* ---- loading (replay of __consumer_offsets) ---- */

void grp_load_begin(grp_coord_t *c, int32_t part);
/* Applies one record of partition part (value NULL/-1: tombstone).
 * Returns 0, or -1 if the record is malformed (it is skipped). */
int grp_load_record(grp_coord_t *c, int32_t part, const uint8_t *key, int32_t key_len,
                    const uint8_t *value, int32_t value_len);
/* Ends loading: members of loaded groups get their session timers, as
 * after Kafka's load. */
void grp_load_end(grp_coord_t *c, int32_t part);
bool grp_part_loading(const grp_coord_t *c, int32_t part);
/* The partition is no longer led here: its groups go from memory, as
 * Kafka's coordinator unloads them; a JoinGroup or SyncGroup waiting in
 * one is answered NOT_COORDINATOR, their timers are cancelled. A load in
 * progress ends. Another load (grp_load_begin) brings them back. */
void grp_unload(grp_coord_t *c, int32_t part);

/* ---- offline partitions ----
 *
 * When a partition of __consumer_offsets goes offline, Kafka's controller
 * leaves it without a leader and the coordinator unloads its groups: they
 * are not listed, FindCoordinator answers COORDINATOR_NOT_AVAILABLE for
 * them and every other group API NOT_COORDINATOR, until the partition is
 * back (here: after a restart). The groups stay in memory, untouched by
 * requests; timers still run, and whatever they would write fails. */

bool grp_part_offline(const grp_coord_t *c, int32_t part);
/* FindCoordinator for one group: 0, or COORDINATOR_NOT_AVAILABLE while
 * the group's partition is offline. */
int16_t grp_find_coordinator(grp_coord_t *c, const char *group_id);

/* ---- the group APIs ---- */

typedef struct grp_join_req_s {
    const char *group_id;
    const char *member_id;   /* "" for a first join */
    const char *instance_id; /* NULL: dynamic member */
    const char *client_id;
    const char *client_host;
    int32_t session_timeout;
    int32_t rebalance_timeout;
    const char *protocol_type;
    int nprotocols;
    const grp_protocol_t *protocols;
    bool require_known_member_id; /* JoinGroup v4+ without instance id */
    bool support_skip_assignment; /* JoinGroup v9+ */
    const char *reason;           /* may be NULL */
} grp_join_req_t;

/* Handles a JoinGroup. Returns false when w has been answered already,
 * true when it is parked (then w must stay valid until answered or
 * grp_waiter_cancel). The coordinator copies what it keeps of req and
 * never reads req after answering w, so req may live in memory that the
 * answer frees (the request's arena). */
bool grp_join(grp_coord_t *c, const grp_join_req_t *req, grp_waiter_t *w);

typedef struct grp_assignment_s {
    const char *member_id;
    const uint8_t *data;
    int32_t len;
} grp_assignment_t;

typedef struct grp_sync_req_s {
    const char *group_id;
    int32_t generation;
    const char *member_id;
    const char *instance_id;   /* NULL: none */
    const char *protocol_type; /* NULL: not checked (v0-4) */
    const char *protocol_name;
    int nassignments;
    const grp_assignment_t *assignments;
} grp_sync_req_t;

/* SyncGroup; same contract as grp_join. */
bool grp_sync(grp_coord_t *c, const grp_sync_req_t *req, grp_waiter_t *w);

/* The client of a parked waiter went away: forget w. The member stays as
 * it is (Kafka cannot tell either; its session timeout decides). */
void grp_waiter_cancel(grp_coord_t *c, grp_waiter_t *w);

int16_t grp_heartbeat(grp_coord_t *c, const char *group_id, int32_t generation,
                      const char *member_id, const char *instance_id);

typedef struct grp_leave_member_s {
    const char *member_id;
    const char *instance_id; /* NULL: none */
    const char *reason;
    int16_t error;           /* out */
} grp_leave_member_t;

/* LeaveGroup (batched, v3+). Returns the top-level error; members' own
 * errors go into their entries. */
int16_t grp_leave(grp_coord_t *c, const char *group_id, grp_leave_member_t *members, int n);

/* ---- offsets ---- */

typedef struct grp_commit_part_s {
    proto_str_t topic;
    int32_t partition;
    int64_t offset;
    int32_t leader_epoch;
    proto_str_t metadata; /* len -1: null */
    int16_t error;        /* in: non-zero skips it (checked by the caller); out */
} grp_commit_part_t;

typedef struct grp_commit_req_s {
    const char *group_id;
    int32_t generation;      /* -1: not a group member (admin, simple consumer) */
    const char *member_id;
    const char *instance_id; /* NULL: none */
    int64_t retention_ms;    /* -1: the broker's retention */
    int16_t api_version;     /* GROUP_ID_NOT_FOUND is v9+ */
    int nparts;
    grp_commit_part_t *parts;
} grp_commit_req_t;

/* OffsetCommit: sets each part's error. */
void grp_commit(grp_coord_t *c, grp_commit_req_t *req);
/* TxnOffsetCommit (grp_txn.c): the offsets are written as the
 * transaction's records and stay pending until grp_txn_complete. Sets
 * each part's error. */
void grp_txn_commit(grp_coord_t *c, grp_commit_req_t *req, int64_t producer_id,
                    int16_t producer_epoch);
/* A marker of producer_id's transaction was written to (or replayed from)
 * partition part: its pending offsets there become committed, or go. */
void grp_txn_complete(grp_coord_t *c, int32_t part, int64_t producer_id, bool commit);
/* Whether an undecided transaction holds an offset of the group for that
 * partition (OffsetFetch's RequireStable: UNSTABLE_OFFSET_COMMIT). */
bool grp_txn_pending(const grp_t *g, const char *topic, size_t topic_len, int32_t partition);
/* Loading: a record of a transaction's batch (producer_id's). */
int grp_load_txn_record(grp_coord_t *c, int32_t part, int64_t producer_id, const uint8_t *key,
                        int32_t key_len, const uint8_t *value, int32_t value_len);

/* For OffsetFetch: 0, INVALID_GROUP_ID (NULL id),
 * COORDINATOR_LOAD_IN_PROGRESS, or GROUP_ID_NOT_FOUND (dead group;
 * answered as "no offsets"). *grp gets the group or NULL. */
int16_t grp_offsets_group(grp_coord_t *c, const char *group_id, grp_t **grp);
/* The committed offset or NULL. */
const grp_offset_t *grp_offset_get(const grp_t *grp, const char *topic, size_t topic_len,
                                   int32_t partition);
/* Iteration over a group's offsets: start with *pos = 0; NULL at the end. */
const grp_offset_t *grp_offset_next(const grp_t *grp, size_t *pos);

typedef struct grp_offset_del_s {
    proto_str_t topic;
    int32_t partition;
    int16_t error; /* in: non-zero skips it; out */
} grp_offset_del_t;

/* OffsetDelete: returns the group error; sets the partitions' errors. */
int16_t grp_offset_delete(grp_coord_t *c, const char *group_id, grp_offset_del_t *parts, int n);

/* ---- admin ---- */

/* DeleteGroups, one group: 0, INVALID_GROUP_ID, NOT_COORDINATOR,
 * COORDINATOR_LOAD_IN_PROGRESS, GROUP_ID_NOT_FOUND, NON_EMPTY_GROUP, or a
 * store error. */
int16_t grp_delete(grp_coord_t *c, const char *group_id);
/* DescribeGroups: 0 with *grp (NULL when the group does not exist), or
 * INVALID_GROUP_ID, NOT_COORDINATOR, COORDINATOR_LOAD_IN_PROGRESS. */
int16_t grp_describe(grp_coord_t *c, const char *group_id, grp_t **grp);
/* Iteration over live (not Dead) groups of partitions that are loaded
 * and online: start with *pos = 0. */
grp_t *grp_next(grp_coord_t *c, size_t *pos);
/* 1 while some partition is still loading (ListGroups). */
bool grp_loading(const grp_coord_t *c);
/* The metadata a member gave for the group's protocol, or NULL. */
const grp_protocol_t *grp_member_protocol(const grp_member_t *m, const char *name);

/* ---- housekeeping ---- */

/* A topic was deleted: its committed offsets go from every group, with
 * tombstones, as Kafka's coordinator does on partition deletion (so a new
 * topic of the same name does not inherit them). Returns the number of
 * offsets removed. */
int grp_topic_deleted(grp_coord_t *c, const char *topic, size_t len);

/* The records that rebuild the current state of partition part: each
 * group's last GroupMetadata record and its committed offsets, appended
 * to recs. Replaying them alone gives the state replaying the whole
 * partition gives, so the host may append them and drop what precedes
 * them (the partition's own compaction). Returns the number of records,
 * or -1 (nothing appended) while a transaction's offsets there are
 * undecided: their records must stay until the marker. */
int grp_part_snapshot(grp_coord_t *c, int32_t part, grp_recs_t *recs);

/* Removes expired offsets (offsets.retention.minutes) and then the empty
 * groups left without offsets, writing tombstones. Runs on its own every
 * offsets.retention.check.interval.ms; exposed for tests. Returns the
 * number of offsets removed. */
int grp_expire_offsets(grp_coord_t *c);

/* What Kafka answers for a coordinator write that failed with err (the
 * partition layer's error): NOT_COORDINATOR when the partition cannot be
 * written here, REBALANCE_IN_PROGRESS or (for_offsets) REQUEST_TIMED_OUT
 * for a timeout, INVALID_COMMIT_OFFSET_SIZE for records too large, ... */
int16_t grp_write_error(int16_t err, int for_offsets);
void grp_recs_init(grp_recs_t *recs);
void grp_recs_free(grp_recs_t *recs);

#endif
