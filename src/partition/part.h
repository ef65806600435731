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

#include "log/log.h"
#include "log/log_mgr.h"
#include "util/smap.h"

typedef struct part_watch_s part_watch_t;
/* A waiter on a partition. Embedded in its owner; cb runs when the
 * partition's high watermark moves. */
struct part_watch_s {
    part_watch_t *next, *prev;
    void (*cb)(part_watch_t *w);
    void *data;
};

/* Topic-level settings beyond the log's own. */
typedef struct topic_cfg_s {
    log_config_t log;
    int32_t max_message_bytes;   /* max.message.bytes */
    int32_t min_insync_replicas; /* min.insync.replicas */
    int64_t ts_before_max_ms;    /* message.timestamp.before.max.ms */
    int64_t ts_after_max_ms;     /* message.timestamp.after.max.ms */
    bool compacted;              /* cleanup.policy has compact */
    int64_t flush_messages;      /* flush.messages */
    int64_t flush_ms;            /* flush.ms */
} topic_cfg_t;

typedef struct topic_s topic_t;

typedef struct part_s {
    topic_t *topic;
    int32_t index;
    log_t *log;
    int32_t leader_epoch;
    part_watch_t watchers; /* list head */
} part_t;

struct topic_s {
    char *name; /* NUL-terminated */
    size_t name_len;
    uint8_t id[16];
    int32_t nparts;
    part_t **parts;
    topic_cfg_t cfg;
    bool internal;
};

typedef struct part_reg_s {
    smap_t by_name;
    smap_t by_id;
    smap_t by_norm; /* name with '.' as '_', for collision checks */
    log_mgr_t *logs;
    topic_cfg_t defaults;
    int32_t num_partitions; /* num.partitions, for auto-creation */
} part_reg_t;

/* Builds the registry from the logs the manager opened; bumps every
 * partition's leader epoch, as a KRaft controller does when the only
 * broker comes back. Returns a registry owned by the caller
 * (part_reg_free), never NULL. */
part_reg_t *part_reg_open(log_mgr_t *logs, const topic_cfg_t *defaults, int32_t num_partitions);
/* Frees topics and partitions; the logs belong to the log manager. */
void part_reg_free(part_reg_t *reg);

topic_t *part_topic_get(part_reg_t *reg, const char *name, size_t len);
topic_t *part_topic_by_id(part_reg_t *reg, const uint8_t id[16]);
/* Kafka's topic name rules: 1..249 chars of [a-zA-Z0-9._-], not "." or
 * "..". Returns 0 or INVALID_TOPIC_EXCEPTION (17). */
int16_t part_topic_name_check(const char *name, size_t len);
/* Creates a topic with nparts partitions (cfg NULL = defaults). Returns
 * 0 and *out, or TOPIC_ALREADY_EXISTS (36), INVALID_TOPIC_EXCEPTION (17)
 * for a bad name or a '.'/'_' collision, INVALID_PARTITIONS (37),
 * KAFKA_STORAGE_ERROR (56). */
int16_t part_topic_create(part_reg_t *reg, const char *name, size_t len, int32_t nparts,
                          const topic_cfg_t *cfg, int64_t now_ms, topic_t **out);
/* Iteration over topics: start with *pos = 0; NULL at the end. */
topic_t *part_topic_next(part_reg_t *reg, size_t *pos);

static inline part_t *part_get(topic_t *topic, int32_t index)
{
    return index >= 0 && index < topic->nparts ? topic->parts[index] : NULL;
}

/* One replica: everything appended is committed. */
static inline int64_t part_hwm(const part_t *part)
{
    return log_end_offset(part->log);
}

/* After an append: the high watermark follows the log end at once (the
 * leader is the whole ISR); the log keeps it for retention, DeleteRecords
 * and replication-offset-checkpoint. */
static inline void part_appended(part_t *part)
{
    log_set_high_watermark(part->log, log_end_offset(part->log));
}

void part_watch_add(part_t *part, part_watch_t *w);
/* Safe on a watch that is not in a list. */
void part_watch_del(part_watch_t *w);
/* Runs the callbacks of everyone waiting on part. */
void part_notify(part_t *part);

/* Fills the topic defaults from log defaults. */
void part_topic_cfg_defaults(topic_cfg_t *cfg);

#endif
