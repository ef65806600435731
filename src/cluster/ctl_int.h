/* The controller's state and its steps, shared by ctl.c (the queue, the
 * commit, start-up) and ctl_topics.c (the checks and the records of each
 * kind of change). */
#ifndef STRAND_CLUSTER_CTL_INT_H
#define STRAND_CLUSTER_CTL_INT_H

#include "cluster/bkr.h"
#include "cluster/ctl.h"

struct ctl_s {
    meta_log_t *meta;
    log_mgr_t *logs;
    int32_t node_id;
    char node_name[12];   /* node_id as a string */
    topic_cfg_t base;     /* server.properties' topic defaults */
    topic_cfg_t defaults; /* base with the dynamic broker configs applied */
    const props_t *props;
    ctl_broker_check_fn *broker_check;
    void *broker_check_arg;
    int quorum;           /* ctl_config_t.quorum */
    int16_t boot_mv;      /* the level a new cluster's bootstrap records set */
    int16_t boot_elr;     /* and the eligible.leader.replicas.version */
    ctl_op_t *head, *tail; /* queued; the head may be committing */
    int committing;
    /* Producer ids (ctl_pid.c): the block being handed out, its next
     * allocation, who waits for it, and the floor a data dir from before
     * ProducerIdsRecords gives. */
    int64_t pid_next, pid_end;
    int64_t pid_floor;
    ctl_op_t *pid_op;
    int (*pid_fetch)(void *arg);  /* a quorum's broker: a block from the
                                     active controller (ctl_use_pid_source) */
    void *pid_fetch_arg;
    int pid_fetching;
    ctl_pid_wait_t *pid_head, *pid_tail;
    /* Brokers (ctl_brokers.c): their sessions, the records of the last
     * decision, this node's registration and its heartbeat op. */
    bkr_ctl_t bkr;
    bkr_out_t bout;
    char *rack;
    uint8_t incarnation[16];
    int64_t node_epoch;
    ctl_op_t hb;          /* this node's heartbeat */
    int hb_busy;          /* hb is queued or committing */
    uint64_t fence_timer; /* a quorum's active controller: the session check */
    ctl_op_t fence_op;    /* CTL_FENCE_STALE, while fence_busy */
    int fence_busy;
    ctl_op_t noop_op;     /* CTL_NOOP, while noop_busy */
    int noop_busy;
    int64_t idle_ms;      /* metadata.max.idle.interval.ms (0: no no-ops) */
    /* Periodic elections (ctl_elect.c): auto.leader.rebalance.enable's
     * preferred ones every leader.imbalance.check.interval.seconds. */
    int64_t rebalance_ms; /* 0: off */
    int64_t rebalance_at; /* wall ms of the next round */
    int rebalance_more;   /* the last round stopped at its cap */
    ctl_op_t rebalance_op;
    int rebalance_busy;
    /* ... and the unclean ones of leaderless partitions whose topic
     * allows them, every unclean.leader.election.interval.ms. */
    int64_t unclean_ms;
    int64_t unclean_at;
    int unclean_more;
    ctl_op_t unclean_op;
    int unclean_busy;
};

/* The records of one change. Strings and arrays they point to are the
 * batch's own (dirs, strs: every block ctl_batch_block gave) or the
 * op's. */
typedef struct ctl_batch_s {
    meta_rec_t *v;
    int n, cap;
    char **strs;
    int nstrs;
} ctl_batch_t;

meta_rec_t *ctl_batch_add(ctl_batch_t *b, int16_t type);
void ctl_batch_free(ctl_batch_t *b);
/* PartitionRecords for partitions [from, to) of the topic id, epochs 0:
 * partition from + i on assign[i * rf .. + rf) (NULL: this node alone),
 * its active replicas the ISR and the first of them the leader; this
 * node's replicas in the log dirs the log manager would pick, another
 * broker's in its only dir (else unassigned). */
void ctl_batch_partitions(ctl_batch_t *b, ctl_t *ctl, const uint8_t id[16], int32_t from,
                          int32_t to, const int32_t *assign, int rf);
/* n zeroed bytes the batch owns (freed with it). */
void *ctl_batch_block(ctl_batch_t *b, size_t n);
/* Places nparts partitions of rf replicas over the image's usable brokers
 * (ctl_place.c; this node alone while the image has no broker), into
 * *assign (the caller frees). Returns 0 or INVALID_REPLICATION_FACTOR with
 * Kafka's message in op->msg. nparts 0: the check alone. */
int16_t ctl_place(ctl_t *ctl, ctl_op_t *op, int32_t nparts, int16_t rf, int32_t **assign);
/* CreatePartitions' explicit assignment, checked as Kafka checks it
 * against the image's brokers, into *assign (the caller frees) with *rf
 * its replica count (ctl_place.c). Returns 0 or INVALID_REPLICA_ASSIGNMENT
 * with Kafka's message in op->msg. */
int16_t ctl_assignment(ctl_t *ctl, ctl_op_t *op, int32_t from, int rf_now, int32_t **assign,
                       int *rf);

/* Checks op against the image and fills b with the records that make it
 * (none for validate_only). Returns 0 or a Kafka error code with Kafka's
 * message in op->msg. */
int16_t ctl_plan(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b);
/* The records of CTL_ALLOC_PRODUCER_IDS (ctl_pid.c). */
int16_t ctl_plan_producer_ids(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b);
/* The records of CTL_UPDATE_FEATURES (ctl_features.c). */
int16_t ctl_plan_features(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b);
/* 1 when a metadata.version level in (to, from] changed the metadata
 * records, so that a downgrade from `from` to `to` is refused. */
int ctl_mv_changed_between(int16_t to, int16_t from);
/* Reads the producer id floor an older data dir left (ctl_pid.c). */
void ctl_pid_load(ctl_t *ctl);
/* Shutdown: waiters for producer ids are answered with an error. */
void ctl_pid_serve_shutdown(ctl_t *ctl);
/* The records of CTL_ALTER_BROKER_CONFIGS (ctl_configs.c). */
int16_t ctl_plan_broker_configs(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b);
/* Whether log dir i is cordoned (cordoned.log.dirs: "*", or dirs named
 * as in log.dirs): it gets no new partition (ctl_configs.c). */
int ctl_dir_cordoned(const ctl_t *ctl, int i);
/* 0, or INVALID_REPLICATION_FACTOR with Kafka's message when every log dir
 * is cordoned and no new partition can be placed (ctl_configs.c). */
int16_t ctl_check_placeable(const ctl_t *ctl, ctl_op_t *op);
/* The records of CTL_NODE_HEARTBEAT (ctl_brokers.c). */
int16_t ctl_plan_node_heartbeat(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b);
int16_t ctl_plan_bootstrap(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b);
int16_t ctl_plan_remote_broker(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b);
/* The record of CTL_CONTROLLER_REGISTER (ctl_controllers.c). */
int16_t ctl_plan_controller_register(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b);
/* The periodic elections (ctl_elect.c): their keys read at start-up,
 * their clock restarted when this node becomes the active controller,
 * the tick of the active controller, and the records of a round. */
void ctl_elect_init(ctl_t *ctl, const props_t *props);
/* unclean.leader.election.enable of the broker config in force, the
 * default of topics without their own (ctl_defaults_refresh). */
struct cfg_bview_s;
void ctl_elect_defaults(ctl_t *ctl, const struct cfg_bview_s *bv);
void ctl_elect_activate(ctl_t *ctl, int64_t now_ms);
void ctl_elect_tick(ctl_t *ctl, int64_t now_ms);
int16_t ctl_plan_rebalance(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b);
int16_t ctl_plan_unclean(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b);
/* Stops the session check (ctl_quorum.c). */
void ctl_quorum_stop(ctl_t *ctl);
/* Start-up and shutdown of the broker part (ctl_brokers.c). */
void ctl_brokers_init(ctl_t *ctl, const ctl_config_t *cfg);
void ctl_brokers_free(ctl_t *ctl);

/* Kafka's maybeGenerateElrSafetyRecords, added to b before the records
 * that turn eligible leader replicas on: a cluster-level
 * min.insync.replicas (server.properties' value) unless there is one,
 * and no broker-level one, so that every node sees the same min ISR. */
void ctl_elr_safety(ctl_t *ctl, ctl_batch_t *b);
/* The ELR changes (bkr_min_isr_changed) of topic t's min.insync.replicas
 * becoming value (NULL: the cluster's or server.properties'), added to b
 * after the config records. */
void ctl_elr_min_isr(ctl_t *ctl, const mi_topic_t *t, const char *value, ctl_batch_t *b);
/* Whether a min.insync.replicas going from old to now (NULL: unset) is an
 * ELR recomputation: eligible leader replicas on, and the value changes
 * (a config change of any other key recomputes nothing). */
bool ctl_min_isr_changes(const ctl_t *ctl, const char *old, const char *now);
/* A new cluster's eligible.leader.replicas.version (ctl->boot_elr): when
 * on, its FeatureLevelRecord and the cluster's min.insync.replicas
 * (Kafka's activation records), added to b. */
void ctl_boot_elr(ctl_t *ctl, ctl_batch_t *b);
/* Recomputes ctl->defaults from the image: at start-up, and after a
 * broker config change is committed (ctl_configs.c). */
void ctl_defaults_refresh(ctl_t *ctl);

#endif
