/* The partition layer follows the metadata log (cluster/meta_log.h's
 * listener), as a KRaft broker's replica manager applies each metadata
 * delta: a committed TopicRecord makes the topic known here, a
 * PartitionRecord naming this node as a replica creates its log and the
 * partition, a RemoveTopicRecord deletes the topic's logs, a ConfigRecord
 * of a topic changes its live config, and one of a broker resource (the
 * cluster-wide default or this node) the defaults of every topic that
 * sets nothing itself. The records are already in the
 * image when this runs. A crash between a commit and these changes is
 * harmless: the start-up load creates the logs the image has and the disk
 * lacks, and deletes the directories the image does not know. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_pool.h"

#include "net/net_loop.h"
#include "partition/part_fetcher.h"
#include "partition/part_int.h"
#include "util/logging.h"
#include "util/mem.h"

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
    part_topic_new(reg, r->name.p, len, r->topic_id.b, &cfg);
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
    return log_mgr_dir_index(reg->logs, r->directories.v[0].b);
}

/* A quorum's partition takes its role from the image (part_set_role):
 * after its PartitionRecord (a new one, one taken up again after a
 * restart, or one committed again for a partition we have) and after
 * each PartitionChangeRecord. */
static void part_delta_role(part_reg_t *reg, part_t *part, const meta_image_t *img,
                            int64_t now_ms)
{
    const mi_topic_t *mt = meta_image_topic_by_id(img, part->topic->id);
    if (!reg->quorum || !mt || part->index >= mt->nparts || !mt->parts[part->index].present)
        return;
    part_set_role(reg, part, &mt->parts[part->index], now_ms);
}


/* A committed change being applied: its requester is answered once every
 * log it creates exists, so that a client may use a topic as soon as it
 * is told it was created. */
typedef struct part_delta_s {
    void (*applied)(void *arg);
    void *arg;
    int pending;
} part_delta_t;

static void part_delta_unref(part_delta_t *d)
{
    if (--d->pending > 0)
        return;
    d->applied(d->arg);
    free(d);
}

/* One partition's log, made on a worker (log_mgr_new_*). */
typedef struct part_make_s {
    net_job_t job; /* first */
    part_reg_t *reg;
    part_delta_t *delta;
    uint8_t topic_id[16];
    int32_t partition;
    int32_t leader_epoch;
    log_mgr_new_t n;
} part_make_t;

static void part_make_work(net_job_t *job)
{
    log_mgr_new_build(&((part_make_t *)job)->n);
}

/* The log is made: the partition joins its topic, unless the topic went
 * meanwhile (its files go again). */
static void part_make_done(net_job_t *job)
{
    part_make_t *m = (part_make_t *)job;
    part_reg_t *reg = m->reg;
    topic_t *topic = part_topic_by_id(reg, m->topic_id);
    int32_t p = m->partition;

    part_delta_t *d = m->delta;
    if (!topic || !part_creating(topic, p)) {
        log_mgr_new_discard(&m->n);
        free(m);
        part_delta_unref(d);
        return;
    }
    topic->creating[p] = 0;
    log_t *log = log_mgr_new_adopt(reg->logs, &m->n);
    if (!log) /* as a Kafka broker whose log dir fails: offline until a restart makes it */
        lg_error("cannot create partition %s-%d: %s; it is offline", topic->name, p,
                 strerror(errno));
    else {
        topic->parts[p] = part_new(topic, p, log, reg->node_id);
        part_lead(topic->parts[p], m->leader_epoch);
        part_delta_role(reg, topic->parts[p], &reg->meta->img, net_now_wall_ms());
    }
    free(m);
    part_delta_unref(d);
}

/* A Raft quorum's node knows at start only the metadata its snapshot
 * holds, so a partition it hosted may come back through the log: its log,
 * still on disk, is taken up again, unless it belonged to an older topic
 * of the same name. Returns 1 when the partition is ours again. */
static int part_delta_adopt(part_reg_t *reg, topic_t *topic, const meta_part_rec_t *r,
                            int64_t now_ms)
{
    uint8_t id[16];
    int32_t p = r->partition_id;
    log_t *log = log_mgr_get(reg->logs, topic->name, p);

    if (!log)
        return 0;
    if (log_mgr_topic_id(reg->logs, topic->name, p, id) && memcmp(id, topic->id, 16)) {
        lg_warn("%s-%d on disk belongs to an older topic of that name: deleting it",
                topic->name, p);
        if (log_mgr_delete(reg->logs, topic->name, p, now_ms) < 0)
            lg_error("deleting %s-%d: %s", topic->name, p, strerror(errno));
        return 0;
    }
    log_config_t lc;
    cfg_topic_log_config(&topic->cfg, &lc); /* it was opened with the defaults */
    log_set_config(log, &lc);
    topic->parts[p] = part_new(topic, p, log, reg->node_id);
    part_lead(topic->parts[p], r->leader_epoch < 0 ? 0 : r->leader_epoch);
    part_delta_role(reg, topic->parts[p], &reg->meta->img, now_ms);
    return 1;
}

/* A partition of ours: its log is made on a worker (creating a thousand
 * partitions would otherwise stop the loop for seconds of file creation
 * and fsyncs); meanwhile it answers as not led here yet. */
static void part_delta_partition(part_reg_t *reg, const meta_part_rec_t *r, int64_t now_ms,
                                 part_delta_t *d)
{
    topic_t *topic = part_topic_by_id(reg, r->topic_id.b);
    log_config_t lc;

    if (topic && part_get(topic, r->partition_id)) {
        part_delta_role(reg, part_get(topic, r->partition_id), &reg->meta->img, now_ms);
        return;
    }
    if (!topic || !part_delta_replica_here(reg, r) || part_creating(topic, r->partition_id))
        return;
    part_topic_grow(topic, r->partition_id + 1);
    if (part_delta_adopt(reg, topic, r, now_ms))
        return;
    cfg_topic_log_config(&topic->cfg, &lc);
    part_make_t *m = xcalloc(1, sizeof(*m));
    if (log_mgr_new_prepare(reg->logs, part_delta_dir(reg, r), topic->name, r->partition_id,
                            topic->id, &lc, now_ms, &m->n) < 0) {
        lg_error("cannot create partition %s-%d: %s; it is offline", topic->name,
                 r->partition_id, strerror(errno));
        free(m);
        return;
    }
    m->reg = reg;
    m->delta = d;
    d->pending++;
    memcpy(m->topic_id, topic->id, 16);
    m->partition = r->partition_id;
    m->leader_epoch = r->leader_epoch < 0 ? 0 : r->leader_epoch;
    m->n.leader_epoch = m->leader_epoch;
    m->job.work = part_make_work;
    m->job.done = part_make_done;
    topic->creating[r->partition_id] = 1;
    net_pool_run(reg->stopping ? NULL : reg->pool, &m->job);
}

/* A reassignment made this node a replica (the partition is created
 * and follows its leader from offset 0), or took it away (the partition
 * goes, its log deleted), as a KRaft broker's replica manager applies a
 * PartitionChangeRecord's new replica list. */
static void part_delta_join(part_reg_t *reg, const mi_part_t *mp,
                            const meta_part_change_rec_t *r, int64_t now_ms, part_delta_t *d)
{
    meta_part_rec_t pr;
    proto_rec_partition_record_init(&pr);
    memcpy(pr.topic_id.b, r->topic_id.b, 16);
    pr.partition_id = r->partition_id;
    pr.replicas = (meta_i32s_t){mp->nreplicas, mp->replicas};
    pr.leader = mp->leader;
    pr.leader_epoch = mp->leader_epoch;
    pr.directories.n = 0;
    part_delta_partition(reg, &pr, now_ms, d);
}

static void part_delta_drop(part_reg_t *reg, topic_t *topic, int32_t p, int64_t now_ms)
{
    part_t *part = topic->parts[p];
    part_fetcher_unfollow(reg, part);
    part_notify(part);
    topic->parts[p] = NULL;
    if (log_mgr_delete(reg->logs, topic->name, p, now_ms) < 0)
        lg_error("deleting %s-%d: %s (removed at the next start)", topic->name, (int)p,
                 strerror(errno));
    else
        lg_info("%s-%d: no longer a replica here; its log is deleted", topic->name, (int)p);
    part_free(part);
}

static void part_delta_change(part_reg_t *reg, const meta_part_change_rec_t *r,
                              const meta_image_t *img, int64_t now_ms, part_delta_t *d)
{
    topic_t *topic = part_topic_by_id(reg, r->topic_id.b);
    part_t *part = topic ? part_get(topic, r->partition_id) : NULL;
    const mi_topic_t *mt = meta_image_topic_by_id(img, r->topic_id.b);
    const mi_part_t *mp = mt && r->partition_id >= 0 && r->partition_id < mt->nparts
                              ? &mt->parts[r->partition_id]
                              : NULL;
    bool here = false;
    for (int32_t i = 0; mp && i < mp->nreplicas; i++)
        here |= mp->replicas[i] == reg->node_id;
    if (part && reg->quorum && r->replicas.n >= 0 && !here)
        part_delta_drop(reg, topic, r->partition_id, now_ms);
    else if (part)
        part_delta_role(reg, part, img, now_ms);
    else if (topic && reg->quorum && here && r->replicas.n >= 0)
        part_delta_join(reg, mp, r, now_ms, d);
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
        part_fetcher_unfollow(reg, part);
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

void part_reg_broker_configs(part_reg_t *reg)
{
    cfg_bview_t bv;
    topic_cfg_t cfg;
    topic_t *topic;
    size_t pos = 0;

    cfg_bview_init(&bv, &reg->meta->img, reg->node_name, reg->props);
    reg->defaults = reg->base;
    cfg_topic_apply_broker(&reg->defaults, &bv);
    while ((topic = part_topic_next(reg, &pos))) {
        part_delta_cfg(reg, &reg->meta->img, topic->name, topic->name_len, &cfg);
        part_topic_apply_cfg(topic, &cfg);
    }
    if (reg->on_broker_config)
        reg->on_broker_config(reg->on_broker_config_arg);
}

/* The topic's partition count is the image's: a quorum's broker hosts
 * only some of them (maybe none). */
static void part_delta_log_topic(part_reg_t *reg, const meta_image_t *img, const uint8_t id[16],
                                 int32_t from)
{
    topic_t *topic = part_topic_by_id(reg, id);
    const mi_topic_t *mt = meta_image_topic_by_id(img, id);
    if (!topic)
        return;
    int32_t n = mt ? mt->nparts : topic->nparts;
    if (from == 0)
        lg_info("created topic %s with %d partitions", topic->name, (int)n);
    else
        lg_info("topic %s: partitions %d -> %d", topic->name, from, (int)n);
}

void part_delta_apply(void *ctx, const meta_rec_t *recs, int n, const meta_image_t *img,
                      int64_t now_ms, void (*applied)(void *arg), void *arg)
{
    part_reg_t *reg = ctx;
    int32_t first = -1;
    const uint8_t *grown = NULL;
    bool broker_cfg = false;
    part_delta_t *d = xcalloc(1, sizeof(*d));

    d->applied = applied;
    d->arg = arg;
    d->pending = 1; /* until every record is looked at */

    for (int i = 0; i < n; i++) {
        const meta_rec_t *r = &recs[i];
        switch (r->type) {
        case META_REC_TOPIC: part_delta_topic(reg, &r->u.topic, img); break;
        case META_REC_PARTITION:
            if (!grown) {
                grown = r->u.part.topic_id.b;
                first = r->u.part.partition_id;
            }
            part_delta_partition(reg, &r->u.part, now_ms, d);
            break;
        case META_REC_PARTITION_CHANGE:
            part_delta_change(reg, &r->u.change, img, now_ms, d);
            break;
        case META_REC_REMOVE_TOPIC: part_delta_remove(reg, r->u.remove_topic.topic_id.b, now_ms); break;
        case META_REC_CONFIG:
            broker_cfg |= r->u.config.resource_type == META_RES_BROKER;
            part_delta_config(reg, &r->u.config, img);
            break;
        default: break;
        }
    }
    if (grown)
        part_delta_log_topic(reg, img, grown, first);
    if (broker_cfg) /* the topics follow the defaults; the broker its keys */
        part_reg_broker_configs(reg);
    part_delta_unref(d);
}
