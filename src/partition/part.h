/* Topics and the partitions this node hosts: the registry every request
 * handler looks names and ids up in, each partition's leader epoch and high
 * watermark, and the watch lists that wake delayed requests (long-poll
 * fetches) when a partition grows.
 *
 * On a single node every partition is led here with itself as the only
 * in-sync replica, so the high watermark is the log end offset. */
#ifndef STRAND_PARTITION_PART_H
#define STRAND_PARTITION_PART_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/cfg_topic.h"
#include "cluster/ctl.h"
#include "cluster/meta_log.h"
#include "log/log.h"
#include "log/log_mgr.h"
#include "util/buf.h"
#include "util/props.h"
#include "util/smap.h"

typedef struct part_watch_s part_watch_t;
/* A waiter on a partition. Embedded in its owner; cb runs when the
 * partition's high watermark moves. */
struct part_watch_s {
    part_watch_t *next, *prev;
    void (*cb)(part_watch_t *w);
    void *data;
};

typedef struct topic_s topic_t;

/* What the leader knows of one replica of its partition, as Kafka's
 * Replica keeps it: reset (log end -1, unknown) when this node becomes
 * leader at a new epoch, then updated by each of the follower's fetches
 * (part_replica_fetched). */
typedef struct part_replica_s {
    int32_t node_id;
    int64_t log_end_offset;    /* as last reported (this node's: its log's) */
    int64_t last_caught_up_ms; /* when it last had the leader's log end */
    int64_t last_fetch_ms;     /* its previous fetch, and the leader's log */
    int64_t last_fetch_leo;    /* end then: Kafka's caught-up rule */
    int64_t broker_epoch;      /* of its latest fetch; -1 before */
    int64_t log_start_offset;  /* as its latest fetch said; -1: unknown */
} part_replica_t;

typedef struct part_s {
    topic_t *topic;
    int32_t index;
    log_t *log;
    int32_t leader_epoch;
    int32_t partition_epoch;
    int32_t node_id;           /* this node */
    int32_t leader;            /* the leader's node id, -1 when none */
    int32_t fetching;          /* a follower: the leader its fetcher
                                  follows, -1 when none (part_fetcher.c) */
    part_replica_t *replicas;  /* owned; this node's among them */
    int32_t nreplicas;
    int32_t *isr;              /* owned: node ids of the in-sync replicas */
    int32_t nisr;
    /* An ISR change this leader has proposed to the controller and not
     * seen committed (part_isr.c), as Kafka's PendingExpandIsr and
     * PendingShrinkIsr states: until then the high watermark waits for
     * the members of both ISRs (Kafka's maximal ISR), and no other change
     * is proposed. */
    int32_t *pend_isr;         /* owned; NULL when none is pending */
    int32_t npend;
    uint8_t pend_state;        /* PART_ISR_* (part_int.h) */
    uint32_t pend_seq;         /* which proposal an answer is for */
    int64_t epoch_start;       /* the log end when this leadership began:
                                  a follower joins the ISR only past it */
    /* Batches whose append asked for a flush (flush.messages) become
     * visible only once flushed, as in Kafka, whose append flushes before
     * the high watermark moves: the high watermark stays below the oldest
     * such batch of the round out (flush_hold) and of the next one
     * (flush_hold_next); INT64_MAX when none waits. */
    int64_t flush_hold;
    int64_t flush_hold_next;
    part_watch_t watchers;     /* list head: delayed operations (part_delay.h) */
} part_t;

struct topic_s {
    char *name; /* NUL-terminated */
    size_t name_len;
    uint8_t id[16];
    int32_t nparts;
    part_t **parts;    /* NULL while offline or being created */
    uint8_t *creating; /* per partition: its log is being made on a worker */
    topic_cfg_t cfg;
    bool internal;
};

typedef struct part_reg_s {
    smap_t by_name;
    smap_t by_id;
    smap_t by_norm; /* name with '.' as '_', for collision checks */
    log_mgr_t *logs;
    topic_cfg_t base;       /* server.properties' topic defaults */
    topic_cfg_t defaults;   /* base with the dynamic broker configs: what a
                               topic has where it sets nothing itself */
    const props_t *props;   /* server.properties (the broker's) */
    char node_name[12];     /* node_id as BROKER resources name it */
    /* Told after a committed change of the broker's dynamic configs has
     * reached the topics (and at start-up, after the load): the broker
     * applies the keys it acts on itself. */
    void (*on_broker_config)(void *arg);
    void *on_broker_config_arg;
    int32_t num_partitions; /* num.partitions, for auto-creation */
    int32_t node_id;        /* the replica and leader of every partition */
    struct ctl_s *ctl;      /* the controller whose metadata log this follows */
    meta_log_t *meta;       /* its metadata log and image (the controller's) */
    /* The data plane's machinery (part_attach): the loop everything runs
     * on, worker threads for validation, writes and fsyncs (NULL: all on
     * the loop), the write queue and the flush rounds. */
    struct net_loop_s *loop;
    struct net_pool_s *pool;
    struct part_wq_s *wq;
    struct part_flush_s *flush;
    int stopping;           /* shutting down: no more work on the pool */
    /* A quorum's broker: roles come from the metadata image, followers
     * fetch from their leaders (part_fetcher.c) through the listener
     * named inter_broker (borrowed from the broker's config). */
    bool quorum;
    bool caught_up;         /* a quorum's: the controller said this node has
                               caught up (part_reg_caught_up); until then no
                               partition leads or follows */
    const char *inter_broker;
    struct part_fetchers_s *fetchers; /* owned; NULL until part_attach */
    struct part_isr_s *isr_mgr;       /* owned: ISR changes (part_isr.c) */
    bool rack_selector;     /* replica.selector.class is the rack-aware one */
} part_reg_t;

typedef struct part_reg_config_s {
    topic_cfg_t defaults;   /* topic defaults, server.properties applied */
    const props_t *props;   /* server.properties (borrowed, outlives the
                               registry), under the dynamic broker configs */
    void (*on_broker_config)(void *arg); /* NULL: none */
    void *on_broker_config_arg;
    int32_t num_partitions;
    int32_t node_id;
    struct ctl_s *ctl;      /* the controller (cluster/ctl.h): its metadata
                               log is what the registry follows */
    const char *inter_broker; /* inter.broker.listener.name (borrowed,
                                 outlives the registry); NULL: PLAINTEXT */
} part_reg_config_t;

/* Builds the registry from the controller's metadata image: every
 * partition's log with a replica on this node is opened with its topic's
 * config, created if the image has it and the disk does not, and (a
 * single node) a partition directory the image does not know (a topic
 * deleted just before a crash) is deleted; a quorum's node keeps them
 * until it has caught up (part_reg_caught_up). Bumps every
 * partition's leader epoch, as a KRaft controller does when the only
 * broker comes back. From then on the registry follows the metadata log:
 * each committed change is applied (part_delta.c) before its requester is
 * answered. Returns a registry owned by the caller (part_reg_free). */
part_reg_t *part_reg_open_ex(log_mgr_t *logs, const part_reg_config_t *cfg, int64_t now_ms);
/* A quorum's node, once it has caught up with the metadata log after its
 * start (the controller said so, as Kafka's broker waits for it before it
 * serves a partition): every partition takes its role from the image of
 * now, not from the snapshot it started with (where a former leader could
 * still lead); then every partition log on disk that no partition of the
 * registry serves (its topic was deleted, or its replica moved off this
 * node, while the node was down) is a stray, and is set aside as Kafka's
 * broker does (log_mgr_set_aside: renamed "-stray", kept). */
void part_reg_caught_up(part_reg_t *reg, int64_t now_ms);
/* Gives the registry its loop and pool (NULL: none, everything runs on
 * the loop). Before the first append. */
void part_attach(part_reg_t *reg, struct net_loop_s *loop, struct net_pool_s *pool);
/* Frees topics and partitions; the logs belong to the log manager. */
void part_reg_free(part_reg_t *reg);

/* topic_t and part_t pointers stay valid until the topic is deleted (its
 * RemoveTopicRecord is committed), so keep names or ids, not pointers,
 * across event-loop turns. */
topic_t *part_topic_get(part_reg_t *reg, const char *name, size_t len);
topic_t *part_topic_by_id(part_reg_t *reg, const uint8_t id[16]);

/* Makes cfg the topic's config, on its live logs too (retention, roll
 * and flush use it from their next run). */
void part_topic_apply_cfg(topic_t *topic, const topic_cfg_t *cfg);
/* The broker's dynamic configs changed (or were loaded): the defaults are
 * computed again and every topic's config built again over them, on the
 * live logs too (part_delta.c). */
void part_reg_broker_configs(part_reg_t *reg);

/* The topic's dynamic configs (owned by the image; valid until the next
 * change), or NULL when it has none. */
const mi_config_t *part_topic_dynamic(const part_reg_t *reg, const topic_t *topic);

/* Iteration over topics: start with *pos = 0; NULL at the end. */
topic_t *part_topic_next(part_reg_t *reg, size_t *pos);

static inline part_t *part_get(topic_t *topic, int32_t index)
{
    return index >= 0 && index < topic->nparts ? topic->parts[index] : NULL;
}

/* 1 when this node cannot serve the partition because its log is offline
 * (a failed fsync, see "When the disk fails" in log/log.h) until restart.
 * Kafka's ReplicaManager holds such a partition as HostedPartition.Offline:
 * the APIs that touch its log answer KAFKA_STORAGE_ERROR, and the
 * controller takes its only replica out of leadership (leader -1). A
 * partition whose log dir is gone at start-up has no part_t at all
 * (topic->parts[i] NULL) and counts as offline too. */
/* 1 while the partition's log is being created (its PartitionRecord is
 * committed, its files are made on a worker): clients are told to retry
 * as when a broker has not caught up with the metadata yet. */
static inline int part_creating(const topic_t *topic, int32_t index)
{
    return index >= 0 && index < topic->nparts && topic->creating && topic->creating[index];
}

static inline int part_offline(const part_t *part)
{
    return !part || log_offline(part->log);
}

/* The high watermark: what every in-sync replica has. The log keeps it,
 * for retention, DeleteRecords and replication-offset-checkpoint. */
static inline int64_t part_hwm(const part_t *part)
{
    return log_high_watermark(part->log);
}

static inline int part_is_leader(const part_t *part)
{
    return part->leader == part->node_id;
}

static inline int32_t part_isr_size(const part_t *part)
{
    return part->nisr;
}

/* min.insync.replicas as it applies to this partition: at most its
 * replica count, as Kafka's effective minimum ISR, so a topic of fewer
 * replicas than the key still takes acks=all. The one rule of the
 * check before an append, the one after it and the high watermark. */
static inline int32_t part_min_isr(const part_t *part)
{
    int32_t min_isr = part->topic->cfg.min_insync_replicas;
    if (part->nreplicas > 0 && min_isr > part->nreplicas)
        min_isr = part->nreplicas;
    return min_isr;
}

/* After the log end moved: the high watermark becomes the smallest log
 * end of the in-sync replicas, those of a pending change included (this
 * node's is its log's), unless the ISR is below min.insync.replicas (or
 * the replica count, when smaller). It never moves back, and only a
 * leader moves it so (a follower takes its leader's, part_fetcher.c).
 * Returns 1 if it moved. */
int part_update_hwm(part_t *part);

/* ---- roles and replicas (part_replica.c, part_isr.c) ---- */

struct net_out_s;
/* A quorum's broker: out(ctx) gives the connection to the active
 * controller (borrowed; NULL while none is known), through which the
 * partitions led here send their ISR changes (AlterPartition). NULL out:
 * none any more (shutdown). Changes wait while there is none. */
void part_use_controller(part_reg_t *reg, struct net_out_s *(*out)(void *ctx), void *ctx);
/* The in-sync replicas the high watermark waits for: the ISR, with the
 * members of a pending change (Kafka's maximal ISR). */
int32_t part_isr_maximal(const part_t *part);

struct mi_part_s;
/* The partition as the metadata image now has it (its PartitionRecord
 * and the PartitionChangeRecords after it): leader, leader and partition
 * epochs, replicas, ISR; on a quorum's node that has not caught up yet,
 * no leader (part_reg_caught_up gives the role). Becoming leader at a
 * new epoch starts that epoch
 * at the log end (leader-epoch-checkpoint) and forgets what was known of
 * the followers; becoming a follower hands the partition to the fetcher
 * of its leader (stopped when it leads or has no leader). Operations
 * waiting on the partition are woken (a delayed produce of a former
 * leader answers NOT_LEADER_OR_FOLLOWER). */
void part_set_role(part_reg_t *reg, part_t *part, const struct mi_part_s *mp, int64_t now_ms);
/* What a follower's fetch tells the leader, as Kafka's Partition
 * .updateFollowerFetchState records it: its log end (the fetch offset),
 * when it was caught up, its broker epoch, its log start (log_start, -1
 * when the fetch does not say); then the high watermark moves
 * (waiters woken), and a follower out of the ISR that has caught up is
 * proposed back into it (part_isr.c). Returns NOT_LEADER_OR_FOLLOWER for a fetch with an
 * older broker epoch than the replica's last (a former incarnation's),
 * else 0. */
int16_t part_replica_fetched(part_reg_t *reg, part_t *part, int32_t replica_id,
                             int64_t broker_epoch, int64_t fetch_offset, int64_t log_start,
                             int64_t now_ms);
/* The fetching replica's entry, or NULL when replica_id is not one of the
 * partition's replicas. */
part_replica_t *part_replica_get(part_t *part, int32_t replica_id);

/* compression.type for a produced, validated batch: when the topic names
 * a codec other than the batch's, the batch is rebuilt with that codec
 * into out (the caller's buffer) and *rewritten set; the caller appends
 * out's bytes instead. Otherwise (the common case, "producer") nothing is
 * done. Returns 0, CORRUPT_MESSAGE (2), or UNKNOWN_SERVER_ERROR (-1) when
 * the codec fails. */
int16_t part_recompress(const part_t *part, const uint8_t *batch, size_t len, buf_t *out,
                        int *rewritten);

void part_watch_add(part_t *part, part_watch_t *w);
/* Safe on a watch that is not in a list. */
void part_watch_del(part_watch_t *w);
/* Runs the callbacks of everyone waiting on part. */
void part_notify(part_t *part);

/* Fills Kafka's topic defaults (cfg_topic_defaults). */
void part_topic_cfg_defaults(topic_cfg_t *cfg);

#endif
