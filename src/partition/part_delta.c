/* The partition layer follows the metadata log (cluster/meta_log.h's
 * listener), as a KRaft broker's replica manager applies each metadata
 * delta: a committed TopicRecord makes the topic known here, a
 * PartitionRecord naming this node as a replica creates its log and the
 * partition, a RemoveTopicRecord deletes the topic's logs, a ConfigRecord
 * of a topic changes its live config. The records are already in the
 * image when this runs. A crash between a commit and these changes is
 * harmless: the start-up load creates the logs the image has and the disk
 * lacks, and deletes the directories the image does not know. */
#include <errno.h>
#include <string.h>

#include "partition/part_int.h"
#include "util/logging.h"

static void part_delta_cfg(part_reg_t *reg, const meta_image_t *img, const char *name,
                           size_t len, topic_cfg_t *cfg)
{
    cfg_topic_build(cfg, &reg->defaults, meta_image_config(img, META_RES_TOPIC, name, len));
}

static void part_delta_topic(part_reg_t *reg, const meta_topic_rec_t *r, const meta_image_t *img)
{
    topic_cfg_t cfg;
    size_t len = (size_t)r->name.len;
    if (part_topic_get(reg, r->name.p, len))
        return;
    part_delta_cfg(reg, img, r->name.p, len, &cfg);
    part_topic_new(reg, r->name.p, len, r->id, &cfg);
}

static int part_delta_replica_here(const part_reg_t *reg, const meta_part_rec_t *r)
{
    for (int32_t i = 0; i < r->replicas.n; i++)
        if (r->replicas.v[i] == reg->node_id)
            return 1;
    return 0;
}

/* The log dir the record names for our replica (the first, as there is
 * one replica per node), or -1 for the log manager's choice. */
static int part_delta_dir(const part_reg_t *reg, const meta_part_rec_t *r)
{
    if (r->directories.n < 1)
        return -1;
    return log_mgr_dir_index(reg->logs, r->directories.v[0]);
}

static void part_delta_partition(part_reg_t *reg, const meta_part_rec_t *r, int64_t now_ms)
{
    topic_t *topic = part_topic_by_id(reg, r->topic_id);
    log_config_t lc;

    if (!topic || !part_delta_replica_here(reg, r) || part_get(topic, r->partition_id))
        return;
    cfg_topic_log_config(&topic->cfg, &lc);
    log_t *log = log_mgr_create_in(reg->logs, part_delta_dir(reg, r), topic->name,
                                   r->partition_id, topic->id, &lc, now_ms);
    part_topic_grow(topic, r->partition_id + 1);
    if (!log) {
        /* As a Kafka broker whose log dir fails: the partition is offline
         * here until a restart creates it. */
        lg_error("cannot create partition %s-%d: %s; it is offline", topic->name,
                 r->partition_id, strerror(errno));
        return;
    }
    topic->parts[r->partition_id] = part_new(topic, r->partition_id, log, reg->node_id);
    part_take_leadership(topic->parts[r->partition_id]);
}

/* The topic goes: waiting operations are woken first (they look their
 * partitions up again and find the topic gone), then every log is closed
 * and its directory renamed for deletion (log_mgr_purge removes the files
 * later), then the topic is freed. */
static void part_delta_remove(part_reg_t *reg, const uint8_t id[16], int64_t now_ms)
{
    topic_t *topic = part_topic_by_id(reg, id);
    if (!topic)
        return;
    part_topic_unlink(reg, topic);
    for (int32_t i = 0; i < topic->nparts; i++) {
        part_t *part = topic->parts[i];
        if (!part)
            continue;
        part_notify(part);
        if (log_mgr_delete(reg->logs, topic->name, i, now_ms) < 0)
            lg_error("deleting %s-%d: %s (removed at the next start)", topic->name, i,
                     strerror(errno));
    }
    lg_info("deleted topic %s", topic->name);
    part_topic_free(topic);
}

static void part_delta_config(part_reg_t *reg, const meta_config_rec_t *r,
                              const meta_image_t *img)
{
    topic_cfg_t cfg;
    if (r->resource_type != META_RES_TOPIC || r->resource_name.len < 0)
        return;
    topic_t *topic = part_topic_get(reg, r->resource_name.p, (size_t)r->resource_name.len);
    if (!topic)
        return;
    part_delta_cfg(reg, img, topic->name, topic->name_len, &cfg);
    part_topic_apply_cfg(topic, &cfg);
}

static void part_delta_log_topic(part_reg_t *reg, const uint8_t id[16], int32_t from)
{
    topic_t *topic = part_topic_by_id(reg, id);
    if (!topic)
        return;
    if (from == 0)
        lg_info("created topic %s with %d partitions", topic->name, topic->nparts);
    else
        lg_info("topic %s: partitions %d -> %d", topic->name, from, topic->nparts);
}

void part_delta_apply(void *ctx, const meta_rec_t *recs, int n, const meta_image_t *img,
                      int64_t now_ms)
{
    part_reg_t *reg = ctx;
    int32_t first = -1;
    const uint8_t *grown = NULL;

    for (int i = 0; i < n; i++) {
        const meta_rec_t *r = &recs[i];
        switch (r->type) {
        case META_REC_TOPIC: part_delta_topic(reg, &r->u.topic, img); break;
        case META_REC_PARTITION:
            if (!grown) {
                grown = r->u.part.topic_id;
                first = r->u.part.partition_id;
            }
            part_delta_partition(reg, &r->u.part, now_ms);
            break;
        case META_REC_REMOVE_TOPIC: part_delta_remove(reg, r->u.remove_topic_id, now_ms); break;
        case META_REC_CONFIG: part_delta_config(reg, &r->u.config, img); break;
        default: break;
        }
    }
    if (grown)
        part_delta_log_topic(reg, grown, first);
}
