/* The controller's broker logic, as Kafka 4.4's ClusterControlManager,
 * BrokerHeartbeatManager and the broker half of ReplicationControlManager
 * decide it: registrations (BrokerRegistration), heartbeats
 * (BrokerHeartbeat: sessions, fencing and unfencing, controlled
 * shutdown), UnregisterBroker, the partition changes that follow (a
 * fenced or departing broker leaves the ISR and leadership of its
 * partitions; an unfenced one may lead the partitions without a leader)
 * and replica placement (bkr_place.c).
 *
 * Pure: requests and now_ms ticks come in, metadata records and answers
 * go out; the metadata image is read, never written (the caller commits
 * the records and applies them to the image before the next call). No
 * sockets, no clocks, so a simulation can drive it. The request structs
 * hold no wire types: an API handler fills them from a decoded
 * BrokerRegistration / BrokerHeartbeat / UnregisterBroker request.
 *
 * The offset a registration is written at is the broker's epoch, so the
 * caller says where the next record will land (next_offset). */
#ifndef STRAND_CLUSTER_BKR_H
#define STRAND_CLUSTER_BKR_H

#include <stdbool.h>
#include <stdint.h>

#include "cluster/meta_image.h"
#include "cluster/meta_rec.h"
#include "util/arena.h"

/* The records one decision writes, as one batch. Strings and arrays the
 * records point to are in arena or the request's. */
typedef struct bkr_out_s {
    meta_rec_t *v;         /* owned */
    int n, cap;
    arena_t arena;
} bkr_out_t;

void bkr_out_init(bkr_out_t *out);
/* Drops the records (keeps the memory for the next decision). */
void bkr_out_reset(bkr_out_t *out);
void bkr_out_free(bkr_out_t *out);
/* A new record of type at the end, with the schema's defaults, at the
 * version given. */
meta_rec_t *bkr_out_add(bkr_out_t *out, int16_t type, int16_t version);

/* One broker's session, as BrokerHeartbeatManager keeps it: only the
 * active controller has these (a new one starts them at activation). */
typedef struct bkr_session_s {
    int32_t id;
    int64_t last_contact_ms;
    int64_t metadata_offset; /* the last one it reported, -1 */
    int64_t shutdown_offset; /* where its controlled shutdown records
                                ended, -1 when not shutting down */
    int64_t lost_by_ms;      /* its heartbeats' link closed: expires then
                                unless heard from first; INT64_MAX */
} bkr_session_t;

typedef struct bkr_ctl_s {
    char cluster_id[64];
    int64_t session_timeout_ms; /* broker.session.timeout.ms */
    int64_t link_grace_ms;      /* after a closed link (bkr_link_lost) */
    bkr_session_t *sessions;    /* owned, sorted by id */
    int nsessions;
    bool unclean_default;       /* unclean.leader.election.enable of this
                                   controller's broker config (dynamic or
                                   static), for topics without their own */
    int32_t min_isr_default;    /* min.insync.replicas, the same way */
} bkr_ctl_t;

/* cluster_id is copied (NUL-terminated, at most 63 bytes). A session
 * whose link closes ends one and a half heartbeat intervals
 * (broker.heartbeat.interval.ms) later, never later than the session
 * would: a live broker heartbeats again within an interval. */
void bkr_ctl_init(bkr_ctl_t *bc, const char *cluster_id, int64_t session_timeout_ms,
                  int64_t heartbeat_interval_ms);
void bkr_ctl_free(bkr_ctl_t *bc);
/* Becoming the active controller: every registered broker gets a fresh
 * session from now, as Kafka's ClusterControlManager.activate. */
void bkr_ctl_activate(bkr_ctl_t *bc, const meta_image_t *img, int64_t now_ms);

/* ---- registration (bkr_reg.c) ---- */

typedef struct bkr_listener_s {
    meta_str_t name, host;
    uint16_t port;
    int16_t security_protocol;
} bkr_listener_t;

typedef struct bkr_feature_s {
    meta_str_t name;
    int16_t min, max;
} bkr_feature_t;

typedef struct bkr_register_req_s {
    int32_t broker_id;
    meta_str_t cluster_id;
    uint8_t incarnation[16];
    const bkr_listener_t *listeners;
    int nlisteners;
    const bkr_feature_t *features;
    int nfeatures;
    meta_str_t rack;        /* len -1: none */
    bool migrating_zk;
    const uint8_t (*dirs)[16];
    int ndirs;
    int64_t prev_epoch;     /* of its last clean shutdown, -1: not clean */
} bkr_register_req_t;

typedef struct bkr_answer_s {
    int16_t err;            /* 0 or a Kafka error code */
    char msg[256];          /* Kafka's message for err */
    int64_t epoch;          /* registration: the broker's new epoch */
    bool caught_up;         /* heartbeat: isCaughtUp */
    bool fenced;            /* heartbeat: isFenced */
    bool in_controlled_shutdown;
    bool should_shutdown;   /* heartbeat: shouldShutDown */
} bkr_answer_t;

/* BrokerRegistration: Kafka's checks in its order (cluster id, a live
 * broker of another incarnation, ZK brokers, log dirs, features), then a
 * RegisterBrokerRecord (fenced) at next_offset, whose offset is the new
 * epoch; the session restarts at now_ms. A refusal writes nothing. */
void bkr_register(bkr_ctl_t *bc, const meta_image_t *img, const bkr_register_req_t *req,
                  int64_t next_offset, int64_t now_ms, bkr_out_t *out, bkr_answer_t *ans);

/* UnregisterBroker: the broker leaves every ISR and leadership, then an
 * UnregisterBrokerRecord; BROKER_ID_NOT_REGISTERED when it has no
 * registration. */
void bkr_unregister(bkr_ctl_t *bc, const meta_image_t *img, int32_t broker_id, bkr_out_t *out,
                    bkr_answer_t *ans);

/* ---- heartbeats (bkr_hb.c) ---- */

typedef struct bkr_heartbeat_req_s {
    int32_t broker_id;
    int64_t broker_epoch;
    int64_t current_metadata_offset;
    bool want_fence;
    bool want_shutdown;
} bkr_heartbeat_req_t;

/* BrokerHeartbeat: STALE_BROKER_EPOCH for an unregistered broker or
 * another epoch; else the broker's next state (fenced, unfenced, in
 * controlled shutdown, shut down now) and its records, the session
 * touched at now_ms. next_offset: where the first record will land. */
void bkr_heartbeat(bkr_ctl_t *bc, const meta_image_t *img, const bkr_heartbeat_req_t *req,
                   int64_t next_offset, int64_t now_ms, bkr_out_t *out, bkr_answer_t *ans);

/* The connection broker id (registered at epoch) sent its heartbeats on
 * has closed. A process that dies closes its connections at once, and
 * one that is only slow keeps them; a live broker that lost its link
 * connects again and heartbeats within an interval (Kafka's brokers
 * retry after 100 ms). So its session expires after the link grace
 * unless a heartbeat comes first: failover in one and a half heartbeat
 * intervals instead of a whole session. Nothing when the epoch is not
 * the registration's (an older incarnation's link). */
void bkr_link_lost(bkr_ctl_t *bc, const meta_image_t *img, int32_t id, int64_t epoch,
                   int64_t now_ms);

/* Fences the unfenced broker whose session expired longest ago (one per
 * call, as Kafka's maybeFenceOneStaleBroker: the caller commits, then
 * calls again until it returns -1). Returns its id, or -1 when every
 * session is valid. */
int32_t bkr_fence_stale(bkr_ctl_t *bc, const meta_image_t *img, int64_t now_ms,
                        bkr_out_t *out);
/* When bkr_fence_stale next has work: the earliest session expiry, or
 * INT64_MAX. */
int64_t bkr_next_deadline(const bkr_ctl_t *bc, const meta_image_t *img);
/* True while the broker has an unexpired session and is not fenced
 * (Kafka's hasValidSession). */
bool bkr_session_valid(const bkr_ctl_t *bc, const meta_image_t *img, int32_t id,
                       int64_t now_ms);

/* ---- AlterPartition (bkr_alter.c) ---- */

/* One partition of an AlterPartition request: in, as the leader sent it
 * (isr_epochs[i] -1: not checked, as every version below 3 is), and out,
 * its answer. */
typedef struct bkr_alter_part_s {
    int32_t partition;
    int32_t leader_epoch;
    int32_t partition_epoch;
    int8_t recovery_state;   /* LeaderRecoveryState: 0 recovered, 1 recovering */
    int32_t nisr;
    const int32_t *isr;
    const int64_t *isr_epochs;
    /* out: err, else the partition as it is once the batch is applied */
    int16_t err;
    int32_t leader, new_leader_epoch, new_partition_epoch;
    int32_t nnew;
    const int32_t *new_isr;  /* the request's or the image's */
    int8_t new_recovery_state;
} bkr_alter_part_t;

typedef struct bkr_alter_topic_s {
    uint8_t topic_id[16];
    bkr_alter_part_t *parts;
    int nparts;
} bkr_alter_topic_t;

typedef struct bkr_alter_req_s {
    int32_t broker_id;
    int64_t broker_epoch;
    bkr_alter_topic_t *topics;
    int ntopics;
} bkr_alter_req_t;

/* AlterPartition from a partition leader, as Kafka 4.4's controller takes
 * it without eligible leader replicas: STALE_BROKER_EPOCH (ans->err) for
 * a requester not registered at its epoch; else per partition, in
 * Kafka's order, UNKNOWN_TOPIC_ID, UNKNOWN_TOPIC_OR_PARTITION,
 * NOT_CONTROLLER (the leader knows newer epochs than this image),
 * FENCED_LEADER_EPOCH, INVALID_REQUEST (not the leader; an ISR that is
 * not a set of replicas or lacks the leader; RECOVERING with more than
 * the leader, or on a recovered partition), INVALID_UPDATE_VERSION (an older partition epoch),
 * INELIGIBLE_REPLICA (a member not registered, shutting down, fenced or
 * at another broker epoch); a new ISR becomes a PartitionChangeRecord. */
void bkr_alter_partition(const bkr_ctl_t *bc, const meta_image_t *img, bkr_alter_req_t *req,
                         bkr_out_t *out, bkr_answer_t *ans);

/* ---- partition changes (bkr_isr.c) ---- */

/* PartitionChangeRecords taking broker id out of the ISR and leadership
 * of every partition whose ISR holds it (bkr_pcb.c decides each: a new
 * leader from the ISR, or the ELR, or uncleanly; without eligible leader
 * replicas the last ISR member stays, with leader -1). */
void bkr_isr_remove(const bkr_ctl_t *bc, const meta_image_t *img, int32_t id, bkr_out_t *out);
/* With eligible leader replicas on: broker id registers after an unclean
 * shutdown (its log may have lost its tail), so it leaves every ISR and
 * ELR (Kafka's handleBrokerUncleanShutdown). */
void bkr_isr_unclean_shutdown(const bkr_ctl_t *bc, const meta_image_t *img, int32_t id,
                              bkr_out_t *out);
/* With eligible leader replicas on, topic t's min.insync.replicas about
 * to become min_isr: each partition's ELR as that min ISR makes it (an
 * ISR at it empties the ELR), Kafka's recomputation on a config change. */
void bkr_min_isr_changed(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t,
                         int64_t min_isr, bkr_out_t *out);
/* PartitionChangeRecords electing a leader for each partition without
 * one: from its ISR (or ELR) with broker id (being unfenced) acceptable,
 * else uncleanly where the topic allows it. */
void bkr_isr_elect_with(const bkr_ctl_t *bc, const meta_image_t *img, int32_t id,
                        bkr_out_t *out);
/* True when broker id leads a partition. */
bool bkr_isr_leads_any(const meta_image_t *img, int32_t id);

/* ---- leader elections (bkr_elect.c) ---- */

/* ElectLeaders' election types, numbered as on the wire. */
enum bkr_election {
    BKR_ELECT_PREFERRED = 0,
    BKR_ELECT_UNCLEAN = 1,
};

/* One partition of an ElectLeaders request: in, its id; out, its
 * answer (msg NULL: null on the wire). */
typedef struct bkr_elect_part_s {
    int32_t partition;
    int16_t err;
    const char *msg;         /* static or in the request's arena */
} bkr_elect_part_t;

typedef struct bkr_elect_topic_s {
    meta_str_t name;
    bkr_elect_part_t *parts;
    int nparts;
} bkr_elect_topic_t;

typedef struct bkr_elect_req_s {
    int8_t type;             /* enum bkr_election */
    bool all;                /* a null topic list: every partition, and
                                topics is filled in (out) */
    bkr_elect_topic_t *topics;
    int ntopics;
    arena_t *arena;          /* the messages, and the topics of all (the
                                caller's, alive until it has answered) */
    int16_t err;             /* out: the request's own error */
    char msg[128];
} bkr_elect_req_t;

/* ElectLeaders as Kafka 4.4's ReplicationControlManager.electLeaders
 * decides it without eligible leader replicas: an unknown type is the
 * request's INVALID_REQUEST; per partition UNKNOWN_TOPIC_OR_PARTITION,
 * ELECTION_NOT_NEEDED (preferred: the first replica leads; unclean: a
 * leader exists), else a PartitionChangeRecord of the new leader, or
 * PREFERRED_LEADER_NOT_AVAILABLE / ELIGIBLE_LEADERS_NOT_AVAILABLE when
 * none is found. With all, every topic is listed, with the partitions
 * an election was made or failed for. */
void bkr_elect_leaders(const bkr_ctl_t *bc, const meta_image_t *img, bkr_elect_req_t *req,
                       bkr_out_t *out);

/* The periodic preferred elections of auto.leader.rebalance.enable
 * (Kafka's maybeBalancePartitionLeaders): every partition whose first
 * replica does not lead gets a preferred election, at most max records.
 * Returns 1 when it stopped at max (more to do at once), else 0. */
int bkr_elect_rebalance(const bkr_ctl_t *bc, const meta_image_t *img, int max, bkr_out_t *out);
/* True while some partition is not led by its first replica (Kafka's
 * arePartitionLeadersImbalanced). */
bool bkr_elect_imbalanced(const meta_image_t *img);
/* Whether topic t may get an unclean leader: its own
 * unclean.leader.election.enable, else bc->unclean_default (Kafka's
 * uncleanLeaderElectionEnabledForTopic). */
bool bkr_unclean_enabled(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *t);
/* The periodic unclean elections (Kafka's maybeElectUncleanLeaders):
 * every partition without a leader whose topic allows it gets an unclean
 * election, at most max records. Returns 1 when it stopped at max. */
int bkr_elect_unclean_all(const bkr_ctl_t *bc, const meta_image_t *img, int max, bkr_out_t *out);

/* ---- replica placement (bkr_place.c) ---- */

/* A broker replicas may be placed on: registered and not in controlled
 * shutdown (a fenced one may hold followers, never a first replica). */
typedef struct bkr_usable_s {
    int32_t id;
    const char *rack;       /* NULL: none */
    bool fenced;
} bkr_usable_t;

/* Kafka's StripedReplicaPlacer: nparts partitions of rf replicas each
 * into assign (nparts * rf ids, partition-major); the first replica of
 * each is unfenced, replicas go to distinct brokers, striped over the
 * racks so that each partition spans as many racks as it can and
 * leaders and followers spread evenly. seed drives the shuffles
 * (Kafka's Random). Returns 0, or INVALID_REPLICATION_FACTOR with
 * Kafka's message in msg. */
int16_t bkr_place(const bkr_usable_t *brokers, int nbrokers, int32_t nparts, int16_t rf,
                  uint64_t seed, int32_t *assign, char *msg, size_t msglen);
/* The usable brokers of img into *out (malloc'd, the caller frees;
 * racks point into img). Returns the count. */
int bkr_usable(const meta_image_t *img, bkr_usable_t **out);

/* Checks one partition's explicit assignment as Kafka does: non-empty,
 * every broker registered, none twice, rf replicas when rf > 0. Returns
 * 0 or INVALID_REPLICA_ASSIGNMENT with Kafka's message. */
int16_t bkr_check_assignment(const meta_image_t *img, const int32_t *replicas, int n, int rf,
                             char *msg, size_t msglen);
/* The ISR of an explicitly assigned new partition: its active replicas,
 * into isr (room for n). Returns their count; 0 means
 * INVALID_REPLICA_ASSIGNMENT, and msg holds Kafka's message for
 * partition part. */
int bkr_assignment_isr(const meta_image_t *img, const int32_t *replicas, int n, int32_t part,
                       int32_t *isr, char *msg, size_t msglen);

/* ---- partition reassignments (bkr_reassign.c) ---- */

typedef struct bkr_reassign_part_s {
    int32_t partition;
    const int32_t *replicas; /* the target; NULL: cancel the one in progress */
    int32_t nreplicas;
    int16_t err;             /* out */
    const char *msg;         /* out: NULL, or in the request's arena */
} bkr_reassign_part_t;

typedef struct bkr_reassign_topic_s {
    meta_str_t name;
    bkr_reassign_part_t *parts;
    int nparts;
} bkr_reassign_topic_t;

typedef struct bkr_reassign_req_s {
    bool allow_rf_change;    /* AllowReplicationFactorChange (v1; true before) */
    bkr_reassign_topic_t *topics;
    int ntopics;
    arena_t *arena;          /* the messages (the caller's) */
} bkr_reassign_req_t;

/* AlterPartitionReassignments as Kafka 4.4's ReplicationControlManager
 * decides each partition (without eligible leader replicas): a target is
 * checked as a manual assignment; the PartitionChangeRecord puts the
 * target replicas, then those being removed, in the replica list, with
 * adding and removing replicas; it completes at once when the ISR holds
 * every target replica already (bkr_reassign_complete). A null target
 * cancels: back to the replicas before it, the adding ones out of the ISR
 * (NO_REASSIGNMENT_IN_PROGRESS when none is; INVALID_REPLICA_ASSIGNMENT
 * when that would empty the ISR and the topic does not allow an unclean
 * election). Every partition is answered in its entry. */
void bkr_reassign(const bkr_ctl_t *bc, const meta_image_t *img, bkr_reassign_req_t *req,
                  bkr_out_t *out);

/* A partition's next state, as PartitionChangeBuilder builds it. */
typedef struct bkr_target_s {
    int32_t *replicas, nreplicas;
    int32_t *isr, nisr;
    int32_t *adding, nadding;
    int32_t *removing, nremoving;
} bkr_target_t;

/* Kafka's maybeCompleteReassignment: when a reassignment is in progress
 * and the ISR less the removing replicas holds every target replica, t
 * becomes the finished state (replicas and ISR without the removing ones,
 * nothing adding or removing; arrays in arena) and true is returned. */
bool bkr_reassign_complete(bkr_target_t *t, arena_t *arena);
/* The PartitionChangeRecord from the partition to t (bkr_pcb.c: what
 * differs, the leader elected again when the current one may not lead
 * with t), or nothing when nothing differs. Returns the leader after it. */
int32_t bkr_target_write(const bkr_ctl_t *bc, const meta_image_t *img, const mi_topic_t *topic,
                         int32_t partition, const bkr_target_t *t, bkr_out_t *out);

#endif
