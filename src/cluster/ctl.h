/* The controller: decides the changes to the cluster's metadata (topics,
 * their partitions and replicas, configs) and commits them to the
 * metadata log, as a KRaft controller does. It checks a change against
 * the metadata image in Kafka's order and with Kafka's messages, turns it
 * into records, commits them (meta_log_submit: the fsync runs on a
 * worker), and only then tells its requester; the layers above learn of
 * each committed change through the metadata log's listener, before the
 * requester does. Changes run one at a time, in arrival order, so each is
 * checked against the image the ones before it made.
 *
 * One node is its own quorum today; the Raft quorum will commit the same
 * records, and this interface stays. */
#ifndef STRAND_CLUSTER_CTL_H
#define STRAND_CLUSTER_CTL_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/cfg_topic.h"
#include "cluster/meta_log.h"
#include "log/log_mgr.h"
#include "util/props.h"

typedef struct ctl_s ctl_t;

/* The broker's own check of a dynamic broker config change (its rules
 * between keys, and what the running broker can take), given the whole
 * config the change would make: server.properties with the dynamic
 * defaults and this node's dynamic configs over it (merged). Returns 0,
 * or a Kafka error code with Kafka's message in err. */
typedef int16_t ctl_broker_check_fn(void *arg, const props_t *merged, char *err, size_t errlen);

typedef struct ctl_config_s {
    int32_t node_id;     /* the only broker, replica of every partition */
    topic_cfg_t defaults; /* the topic defaults of server.properties */
    const props_t *props; /* server.properties (borrowed, outlives the
                             controller), under the dynamic broker configs */
    ctl_broker_check_fn *broker_check; /* NULL: none */
    void *broker_check_arg;
    const char *rack;    /* broker.rack (copied), NULL or "": none */
    int64_t session_timeout_ms; /* broker.session.timeout.ms, 0: 9000 */
    int quorum;          /* the metadata log is a Raft quorum's
                            (cluster/raft_node.h): nothing is written to
                            it here, and changes are refused
                            (NOT_CONTROLLER) until the controller runs
                            over the quorum */
    int16_t boot_metadata_version; /* the level of metadata.version a new
                                      cluster starts at (format's bootstrap
                                      checkpoint); 0: META_LOG_METADATA_VERSION */
    int16_t boot_elr_version;      /* eligible.leader.replicas.version there;
                                      -1: none read (CTL_BOOT_ELR_DEFAULT) */
    int64_t heartbeat_interval_ms; /* broker.heartbeat.interval.ms, 0: 2000 */
} ctl_config_t;

/* Opens the metadata log (creating it on a first start, or synthesizing
 * its records from the partition directories of a data dir that predates
 * it) and replays it. Synchronous: for start-up. Returns a controller
 * owned by the caller (ctl_free), or NULL after logging why. */
ctl_t *ctl_open(log_mgr_t *logs, const ctl_config_t *cfg, int64_t now_ms);
/* Frees the controller and the metadata log's image (the log belongs to
 * the log manager). Changes still queued are dropped unanswered: call
 * after the connections are gone. */
void ctl_free(ctl_t *ctl);
/* Commits fsync on the pool from now on (NULL: on the loop's thread, in
 * the call). */
void ctl_attach(ctl_t *ctl, struct net_loop_s *loop, struct net_pool_s *pool);
/* The metadata log and its image (owned by the controller). */
meta_log_t *ctl_meta(ctl_t *ctl);
const meta_image_t *ctl_image(const ctl_t *ctl);
/* 1 when the metadata log is offline (its fsync failed): no change can be
 * made until a restart recovers it. Kafka halts such a node; Strand keeps
 * serving, and refuses changes with KAFKA_STORAGE_ERROR and this. */
int ctl_offline(const ctl_t *ctl);
#define CTL_OFFLINE_MSG                                                                           \
    "The metadata log is offline after a disk failure: topics and configs cannot change until "  \
    "the broker is restarted."

/* The words of Kafka's NOT_CONTROLLER. */
#define CTL_NOT_CONTROLLER_MSG "This is not the correct controller for this cluster."

/* On a quorum (ctl_config_t.quorum): the Raft node the metadata log
 * commits through. Once this node is the active controller it takes
 * changes, and on a new cluster's log first writes the bootstrap records
 * (metadata.version). */
void ctl_use_raft(ctl_t *ctl, struct raft_node_s *raft);

/* A quorum's broker takes its producer id blocks from the active
 * controller (AllocateProducerIds): fetch(arg) asks for one (0, or -1
 * when it cannot now) and ctl_pid_block gives its answer. */
void ctl_use_pid_source(ctl_t *ctl, int (*fetch)(void *arg), void *arg);
void ctl_pid_block(ctl_t *ctl, int16_t err, int64_t start, int32_t len);
/* The size of a block (Kafka's). */
#define CTL_PID_BLOCK_SIZE 1000

/* A config change: value NULL deletes the key (back to the default). */
typedef struct ctl_kv_s {
    const char *key;
    const char *value;
} ctl_kv_t;

enum ctl_kind {
    CTL_CREATE_TOPIC,     /* name, nparts, kv (its dynamic configs) */
    CTL_DELETE_TOPIC,     /* topic_id */
    CTL_CREATE_PARTITIONS, /* topic_id, nparts = the new count */
    CTL_ALTER_CONFIGS,    /* topic_id, kv set (or delete) on top of the
                             current ones, or with replace the whole set */
    CTL_ALLOC_PRODUCER_IDS, /* the next block: the controller's own, or a
                               broker's (broker_req: a bkr_heartbeat_req_t
                               with its id and epoch) */
    CTL_ALTER_BROKER_CONFIGS, /* name: "" (the cluster-wide default) or this
                                 node's id; kv set (or delete) on top of its
                                 dynamic configs, or with replace the whole
                                 set (ctl_configs.c) */
    CTL_UPDATE_FEATURES,  /* features[0..nfeatures): finalized levels */
    CTL_BOOTSTRAP,        /* the controller's own: a new quorum's first
                             records (metadata.version, in a metadata
                             transaction) */
    CTL_BROKER_REGISTER,  /* a broker's BrokerRegistration (broker_req) */
    CTL_BROKER_HEARTBEAT, /* a broker's BrokerHeartbeat (broker_req) */
    CTL_FENCE_STALE,      /* the controller's own: fence an expired session */
    CTL_NOOP,             /* the controller's own: a NoOpRecord when idle */
    CTL_NODE_HEARTBEAT,   /* the controller's own: this node's heartbeat
                             (ctl_brokers.c) */
    CTL_ALTER_PARTITION,  /* a partition leader's AlterPartition (alter) */
    CTL_UNREGISTER_BROKER, /* UnregisterBroker of broker nparts (its id) */
    CTL_ELECT_LEADERS,    /* ElectLeaders (elect: a bkr_elect_req_t,
                             whose answers are filled in) */
    CTL_REASSIGN,         /* AlterPartitionReassignments (reassign: a
                             bkr_reassign_req_t, answers filled in) */
    CTL_LIST_REASSIGN,    /* ListPartitionReassignments: nothing written,
                             answered from the active controller's image */
    CTL_REBALANCE,        /* the controller's own: a round of preferred
                             elections (auto.leader.rebalance.enable) */
    CTL_UNCLEAN_ELECT,    /* the controller's own: a round of unclean
                             elections (unclean.leader.election.enable) */
    CTL_CONTROLLER_REGISTER, /* a controller's ControllerRegistration
                                (broker_req: the
                                proto_rec_register_controller_record_t to
                                write, its lists alive until done) */
};

/* UpdateFeatures' upgrade types, numbered as on the wire; any other value
 * is refused as Kafka refuses an unknown one. */
enum ctl_upgrade_type {
    CTL_UPGRADE = 1,
    CTL_SAFE_DOWNGRADE = 2,
    CTL_UNSAFE_DOWNGRADE = 3,
};

/* One feature update of CTL_UPDATE_FEATURES; name need not be
 * NUL-terminated. A feature named twice takes its last values. */
typedef struct ctl_feature_update_s {
    const char *name;
    size_t name_len;
    int16_t level;
    int8_t upgrade_type; /* enum ctl_upgrade_type */
} ctl_feature_update_t;

typedef struct ctl_op_s ctl_op_t;
struct ctl_op_s {
    /* in */
    int kind;                /* enum ctl_kind */
    const char *name;        /* CTL_CREATE_TOPIC, CTL_ALTER_BROKER_CONFIGS */
    size_t name_len;
    uint8_t topic_id[16];    /* the others */
    int32_t nparts;
    int16_t rf;              /* CTL_CREATE_TOPIC: replication factor */
    int32_t nassign;         /* CTL_CREATE_TOPIC, CTL_CREATE_PARTITIONS:
                                replicas of each new partition as the
                                request names them, in partition order, or
                                -1 (placed by the controller; a new topic's
                                also with 0) */
    const int32_t *const *assign;
    const int32_t *assign_n;
    const ctl_kv_t *kv;
    int nkv;
    const ctl_feature_update_t *features;
    int nfeatures;
    int replace;
    int validate_only;       /* check only, commit nothing */
    int64_t now_ms;
    int16_t refuse_err;      /* on a node that is not the active controller:
                                the refusal's error (0: NOT_CONTROLLER) */
    const void *broker_req;  /* CTL_BROKER_REGISTER: a bkr_register_req_t,
                                CTL_BROKER_HEARTBEAT: a bkr_heartbeat_req_t
                                (cluster/bkr.h) */
    void *broker_ans;        /* both, and CTL_ALTER_PARTITION: the
                                bkr_answer_t to fill */
    void *alter;             /* CTL_ALTER_PARTITION: a bkr_alter_req_t,
                                whose answers are filled in */
    void *elect;             /* CTL_ELECT_LEADERS: a bkr_elect_req_t */
    void *reassign;          /* CTL_REASSIGN: a bkr_reassign_req_t */
    void (*done)(ctl_op_t *op);
    void *udata;
    /* out */
    int16_t err;             /* 0 or a Kafka error code */
    char msg[512];           /* Kafka's message for err */
    uint8_t created_id[16];  /* CTL_CREATE_TOPIC: the new topic's id */
    /* the controller's */
    ctl_op_t *next;
};

/* Queues op; done runs once, on the loop, when it is committed or
 * refused (in the call when nothing is ahead of it and it is refused or
 * only checked, or without a pool). op must stay valid until then. */
void ctl_submit(ctl_t *ctl, ctl_op_t *op);

/* A creation the broker makes itself (auto-creation, the internal
 * topics): a heap op for a topic with config cfg (NULL: the defaults; the
 * keys where it differs from them become its dynamic configs), rf -1,
 * to ctl_submit; the caller frees it with ctl_op_free, in done at the
 * latest. */
ctl_op_t *ctl_op_new_topic(const ctl_t *ctl, const char *name, size_t len, int32_t nparts,
                           const topic_cfg_t *cfg, int64_t now_ms);
void ctl_op_free(ctl_op_t *op);

/* Producer ids are handed out from blocks the controller commits as
 * ProducerIdsRecords, as a KRaft controller allocates them, so no id is
 * handed out twice, across restarts too. ctl_producer_id returns an id
 * (>= 0) at once while the current block lasts; at its end it returns -1
 * and w->cb(w, id, err) runs once the next block is committed (err
 * KAFKA_STORAGE_ERROR and id -1 when it cannot be), possibly before
 * ctl_producer_id returns. w must stay valid until then. */
typedef struct ctl_pid_wait_s ctl_pid_wait_t;
struct ctl_pid_wait_s {
    void (*cb)(ctl_pid_wait_t *w, int64_t pid, int16_t err);
    ctl_pid_wait_t *next;
};
int64_t ctl_producer_id(ctl_t *ctl, ctl_pid_wait_t *w);

/* Feature levels (ctl_features.c). A feature this node knows, and the
 * levels of it whose behaviour Strand implements; the others are refused
 * by CTL_UPDATE_FEATURES, and a metadata log finalizing one is refused at
 * start-up. */
#define CTL_FEATURE_METADATA_VERSION "metadata.version"
#define CTL_FEATURE_KRAFT_VERSION "kraft.version"
#define CTL_FEATURE_ELR "eligible.leader.replicas.version"
/* The level of a node started without format's checkpoint: on, as a
 * Kafka 4.4 node formatted at its default release. */
#define CTL_BOOT_ELR_DEFAULT 1
typedef struct ctl_feature_s {
    const char *name;
    int16_t min_level, max_level;
} ctl_feature_t;
/* Every feature this node knows, in a fixed order; *n gets the count. */
const ctl_feature_t *ctl_features(int *n);
/* The highest level of f a node of a quorum names in its registrations
 * (BrokerRegistration, ControllerRegistration): the table's, but 1 for
 * kraft.version, which this node runs (a dynamic quorum is at 1) though
 * UpdateFeatures cannot move it there. Kafka's nodes name 0-1 on any
 * quorum, and a Kafka controller of a dynamic quorum refuses a broker
 * whose range lacks the finalized 1. */
int16_t ctl_feature_registered_max(const ctl_feature_t *f);
/* The feature named so, or NULL. */
const ctl_feature_t *ctl_feature_find(const char *name, size_t len);
/* The finalized features are the image's (meta_image_feature_next); their
 * epoch is the offset of the last record applied to it, or -1. */
int64_t ctl_features_epoch(const ctl_t *ctl);
/* 0 when every feature img finalizes is at a level this node supports,
 * and metadata.version is set; else -1 with the reason in err. */
int ctl_features_check(const meta_image_t *img, char *err, size_t errlen);

/* This node as a broker of the cluster (ctl_brokers.c), as a Kafka
 * combined node registers with its own controller, without the network:
 * a BrokerRegistration with its advertised listeners (listeners[0..n),
 * not controller ones), every feature at the levels Strand supports,
 * broker.rack and its log dir ids, under a new incarnation id; then the
 * heartbeat that finds it caught up unfences it. Both are committed
 * before the call returns (start-up: call before the loop runs, after
 * the listeners are bound). Returns 0 or the registration's error
 * (logged). */
struct bkr_listener_s;
int16_t ctl_register_node(ctl_t *ctl, const struct bkr_listener_s *listeners, int n,
                          int64_t now_ms);
/* Keeps this node's session fresh, every broker.heartbeat.interval.ms:
 * a heartbeat as a broker sends its controller, through the queue of
 * changes (records only when its state changes: unfenced again once
 * caught up). */
void ctl_node_heartbeat(ctl_t *ctl, int64_t now_ms);
/* This node's broker epoch (the offset of its registration), or -1. */
int64_t ctl_node_epoch(const ctl_t *ctl);
/* The connection a broker sent its heartbeats on (registered at epoch)
 * closed at now_ms: its session ends sooner unless it heartbeats again
 * (bkr_link_lost). */
void ctl_broker_link_lost(ctl_t *ctl, int32_t id, int64_t epoch, int64_t now_ms);

/* Kafka's topic name rules: 1..249 chars of [a-zA-Z0-9._-], not "." or
 * "..". Returns 0, or INVALID_TOPIC_EXCEPTION with Kafka's message in err
 * (may be NULL). */
int16_t ctl_topic_name_check(const char *name, size_t len, char *err, size_t errlen);

/* The topic defaults changes are checked against: server.properties' with
 * the dynamic broker configs of this node applied. */
const topic_cfg_t *ctl_topic_defaults(const ctl_t *ctl);
/* This node's id as BROKER resources name it (owned by the controller). */
const char *ctl_node_name(const ctl_t *ctl);

#endif
