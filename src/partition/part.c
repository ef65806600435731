/* The topic registry: lookups, watches, partitions and their replicas,
 * and building the registry at start-up from the metadata image
 * (part_delta.c follows the changes after that). */
#include "partition/part.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_pool.h"
#include "partition/part_fetcher.h"
#include "partition/part_int.h"
#include "partition/part_select.h"
#include "util/logging.h"
#include "util/mem.h"
#include "util/uuid.h"

void part_topic_cfg_defaults(topic_cfg_t *cfg)
{
    cfg_topic_defaults(cfg);
}

void part_norm(const char *name, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++)
        out[i] = name[i] == '.' ? '_' : name[i];
}

topic_t *part_topic_new(part_reg_t *reg, const char *name, size_t len, const uint8_t id[16],
                        const topic_cfg_t *cfg)
{
    topic_t *topic = xcalloc(1, sizeof(*topic));
    char norm[256];

    topic->name = xstrndup(name, len);
    topic->name_len = len;
    memcpy(topic->id, id, 16);
    topic->cfg = *cfg;
    topic->internal = len > 2 && name[0] == '_' && name[1] == '_';
    smap_put(&reg->by_name, name, len, topic);
    smap_put(&reg->by_id, topic->id, 16, topic);
    part_norm(name, len, norm);
    smap_put(&reg->by_norm, norm, len, topic);
    return topic;
}

void part_topic_unlink(part_reg_t *reg, topic_t *topic)
{
    char norm[256];
    smap_del(&reg->by_name, topic->name, topic->name_len);
    smap_del(&reg->by_id, topic->id, 16);
    part_norm(topic->name, topic->name_len, norm);
    if (smap_get(&reg->by_norm, norm, topic->name_len) == topic)
        smap_del(&reg->by_norm, norm, topic->name_len);
}

void part_topic_free(topic_t *topic)
{
    for (int32_t i = 0; i < topic->nparts; i++)
        part_free(topic->parts[i]);
    free(topic->parts);
    free(topic->creating);
    free(topic->name);
    free(topic);
}

part_t *part_new(topic_t *topic, int32_t index, log_t *log, int32_t node_id)
{
    part_t *part = xcalloc(1, sizeof(*part));
    part->topic = topic;
    part->index = index;
    part->log = log;
    part->node_id = node_id;
    part->leader = node_id;
    part->fetching = -1;
    part->nreplicas = part->nisr = 1;
    part->replicas = xcalloc(1, sizeof(*part->replicas));
    part->replicas[0].node_id = node_id;
    part->replicas[0].log_end_offset = log_end_offset(log);
    part->replicas[0].broker_epoch = -1;
    part->isr = xcalloc(1, sizeof(*part->isr));
    part->isr[0] = node_id;
    part->flush_hold = part->flush_hold_next = INT64_MAX;
    part->watchers.next = part->watchers.prev = &part->watchers;
    return part;
}

void part_free(part_t *part)
{
    if (!part)
        return;
    free(part->replicas);
    free(part->isr);
    free(part->pend_isr);
    free(part);
}

part_replica_t *part_replica_get(part_t *part, int32_t node_id)
{
    for (int32_t i = 0; i < part->nreplicas; i++)
        if (part->replicas[i].node_id == node_id)
            return &part->replicas[i];
    return NULL;
}

int part_update_hwm(part_t *part)
{
    int64_t leo = log_end_offset(part->log), hwm = leo;
    part_replica_t *self = part_replica_get(part, part->node_id);

    if (!part_is_leader(part))
        return 0;
    if (self)
        self->log_end_offset = leo;
    /* As Kafka's: below min.insync.replicas (at most the replica count)
     * the high watermark stays, so what an ISR that small has is never
     * taken as committed; acks=all waits, and times out. */
    if (part->nisr < part_min_isr(part))
        return 0;
    for (int32_t i = 0; i < part->nisr + part->npend; i++) {
        int32_t id = i < part->nisr ? part->isr[i] : part->pend_isr[i - part->nisr];
        const part_replica_t *r = part_replica_get(part, id);
        if (r && r->log_end_offset < hwm)
            hwm = r->log_end_offset;
    }
    if (hwm > part->flush_hold)
        hwm = part->flush_hold;
    if (hwm > part->flush_hold_next)
        hwm = part->flush_hold_next;
    if (hwm <= log_high_watermark(part->log))
        return 0;
    log_set_high_watermark(part->log, hwm);
    return 1;
}

void part_topic_grow(topic_t *topic, int32_t nparts)
{
    if (nparts <= topic->nparts)
        return;
    topic->parts = xrealloc(topic->parts, (size_t)nparts * sizeof(part_t *));
    topic->creating = xrealloc(topic->creating, (size_t)nparts);
    for (int32_t i = topic->nparts; i < nparts; i++) {
        topic->parts[i] = NULL;
        topic->creating[i] = 0;
    }
    topic->nparts = nparts;
}

void part_lead(part_t *part, int32_t epoch)
{
    part->leader_epoch = epoch;
    part_update_hwm(part);
}

/* Leadership is (re)taken at start: a new epoch begins at the log end. */
void part_take_leadership(part_t *part)
{
    int32_t epoch = log_latest_epoch(part->log) + 1;
    part->leader_epoch = epoch;
    part_update_hwm(part);
    if (log_epoch_assign(part->log, epoch, log_end_offset(part->log)) < 0)
        lg_warn("%s-%d: cannot write leader-epoch-checkpoint: %s", part->topic->name,
                part->index, strerror(errno));
}

/* ---- start-up ---- */

/* A partition log the image does not know, collected for deletion. */
typedef struct part_stray_s {
    char *topic;
    int32_t partition;
} part_stray_t;

typedef struct part_scan_s {
    part_reg_t *reg;
    part_stray_t *v;
    int n, cap;
} part_scan_t;

static void part_scan_one(log_t *log, void *opaque)
{
    part_scan_t *sc = opaque;
    const char *name = log_topic(log);
    int32_t p = log_partition(log);
    const mi_topic_t *mt;
    uint8_t id[16];

    if (!strcmp(name, META_LOG_TOPIC))
        return;
    mt = meta_image_topic(&sc->reg->meta->img, name, strlen(name));
    if (mt && p < mt->nparts && mt->parts[p].present &&
        (!log_mgr_topic_id(sc->reg->logs, name, p, id) || !memcmp(id, mt->id, 16)))
        return;
    if (sc->n == sc->cap) {
        sc->cap = sc->cap ? 2 * sc->cap : 16;
        sc->v = xrealloc(sc->v, (size_t)sc->cap * sizeof(*sc->v));
    }
    sc->v[sc->n].topic = xstrdup(name);
    sc->v[sc->n].partition = p;
    sc->n++;
}

/* Partition directories of topics deleted (or never committed) before a
 * crash: the metadata log says they do not exist, so they go, as Kafka
 * removes stray replicas. */
static void part_reg_purge_strays(part_reg_t *reg, int64_t now_ms)
{
    part_scan_t sc = {reg, NULL, 0, 0};
    log_mgr_foreach(reg->logs, part_scan_one, &sc);
    for (int i = 0; i < sc.n; i++) {
        lg_warn("partition %s-%d is not in the metadata log (deleted before a crash?): "
                "deleting it", sc.v[i].topic, sc.v[i].partition);
        if (log_mgr_delete(reg->logs, sc.v[i].topic, sc.v[i].partition, now_ms) < 0)
            lg_error("cannot delete %s-%d: %s", sc.v[i].topic, sc.v[i].partition,
                     strerror(errno));
        free(sc.v[i].topic);
    }
    free(sc.v);
}

/* Whether log is what a partition of the registry serves. */
static int part_reg_holds(part_reg_t *reg, log_t *log)
{
    const char *name = log_topic(log);
    topic_t *topic = part_topic_get(reg, name, strlen(name));
    part_t *part = topic ? part_get(topic, log_partition(log)) : NULL;
    return part && part->log == log;
}

static void part_scan_unheld(log_t *log, void *opaque)
{
    part_scan_t *sc = opaque;

    if (!strcmp(log_topic(log), META_LOG_TOPIC) || part_reg_holds(sc->reg, log))
        return;
    if (sc->n == sc->cap) {
        sc->cap = sc->cap ? 2 * sc->cap : 16;
        sc->v = xrealloc(sc->v, (size_t)sc->cap * sizeof(*sc->v));
    }
    sc->v[sc->n].topic = xstrdup(log_topic(log));
    sc->v[sc->n].partition = log_partition(log);
    sc->n++;
}

static int part_reg_set_aside_strays(part_reg_t *reg)
{
    part_scan_t sc = {reg, NULL, 0, 0};
    int n = 0;

    log_mgr_foreach(reg->logs, part_scan_unheld, &sc);
    for (int i = 0; i < sc.n; i++) {
        if (log_mgr_set_aside(reg->logs, sc.v[i].topic, sc.v[i].partition) == 0)
            n++;
        else
            lg_error("cannot set %s-%d aside: %s", sc.v[i].topic, sc.v[i].partition,
                     strerror(errno));
        free(sc.v[i].topic);
    }
    free(sc.v);
    return n;
}

static void part_reg_take_roles(part_reg_t *reg, int64_t now_ms)
{
    size_t pos = 0;
    topic_t *topic;
    while ((topic = part_topic_next(reg, &pos))) {
        const mi_topic_t *mt = meta_image_topic_by_id(&reg->meta->img, topic->id);
        for (int32_t i = 0; mt && i < topic->nparts && i < mt->nparts; i++)
            if (topic->parts[i] && mt->parts[i].present)
                part_set_role(reg, topic->parts[i], &mt->parts[i], now_ms);
    }
}

void part_reg_caught_up(part_reg_t *reg, int64_t now_ms)
{
    if (!reg->quorum || reg->caught_up)
        return;
    reg->caught_up = true;
    part_reg_take_roles(reg, now_ms);
    int n = part_reg_set_aside_strays(reg);
    lg_info("caught up with the metadata log: partitions take their roles%s",
            n ? ", strays set aside" : "");
}

static int part_dir_known(part_reg_t *reg, const uint8_t dir[16])
{
    uint8_t id[16];
    for (int i = 0; i < log_mgr_ndirs(reg->logs); i++) {
        log_mgr_dir_id(reg->logs, i, id);
        if (!memcmp(id, dir, 16))
            return 1;
    }
    return 0;
}

/* Opens (or creates) one partition's log as the image describes it, in
 * the log dir the image gives this node's replica; NULL when that log dir
 * is gone, which leaves the partition offline. */
static log_t *part_load_log(part_reg_t *reg, topic_t *topic, int32_t i, const uint8_t dir[16],
                            int64_t now_ms)
{
    log_config_t lc;
    log_t *log = log_mgr_get(reg->logs, topic->name, i);

    cfg_topic_log_config(&topic->cfg, &lc);
    if (!log && !uuid_is_zero(dir) && !part_dir_known(reg, dir)) {
        lg_error("topic %s: partition %d lived in a log dir that is not configured any more; "
                 "it is offline", topic->name, i);
        return NULL;
    }
    if (!log)
        lg_warn("topic %s: partition %d has no log on disk: creating it empty", topic->name, i);
    log = log_mgr_create(reg->logs, topic->name, i, topic->id, &lc, now_ms);
    if (!log)
        lg_error("topic %s: cannot open partition %d: %s", topic->name, i, strerror(errno));
    return log;
}

/* The log dir of this node's replica of mp, or NULL when the partition
 * has none here (another broker's, or not in the image). A single node
 * holds every partition of its image. */
static const uint8_t *part_load_dir(part_reg_t *reg, const mi_part_t *mp)
{
    static const uint8_t zero[16];
    const uint8_t *dir = mp->present ? mi_part_dir_of(mp, reg->node_id) : NULL;
    if (!dir && mp->present && !reg->meta->quorum)
        return zero;
    return dir;
}

static void part_reg_load(part_reg_t *reg, int64_t now_ms)
{
    size_t pos = 0;
    const mi_topic_t *mt;
    topic_cfg_t cfg;

    while ((mt = meta_image_topic_next(&reg->meta->img, &pos))) {
        cfg_topic_build(&cfg, &reg->defaults,
                        meta_image_config(&reg->meta->img, META_RES_TOPIC, mt->name, mt->name_len));
        topic_t *topic = part_topic_new(reg, mt->name, mt->name_len, mt->id, &cfg);
        part_topic_grow(topic, mt->nparts);
        for (int32_t i = 0; i < mt->nparts; i++) {
            const uint8_t *dir = part_load_dir(reg, &mt->parts[i]);
            log_t *log = dir ? part_load_log(reg, topic, i, dir, now_ms) : NULL;
            if (!log)
                continue;
            topic->parts[i] = part_new(topic, i, log, reg->node_id);
            if (reg->quorum) /* the controller's choice, as the snapshot has it */
                part_set_role(reg, topic->parts[i], &mt->parts[i], now_ms);
            else
                part_take_leadership(topic->parts[i]);
        }
        lg_info("loaded topic %s with %d partitions", topic->name, topic->nparts);
    }
}

part_reg_t *part_reg_open_ex(log_mgr_t *logs, const part_reg_config_t *cfg, int64_t now_ms)
{
    part_reg_t *reg = xcalloc(1, sizeof(*reg));

    smap_init(&reg->by_name);
    smap_init(&reg->by_id);
    smap_init(&reg->by_norm);
    reg->logs = logs;
    reg->base = reg->defaults = cfg->defaults;
    reg->props = cfg->props;
    snprintf(reg->node_name, sizeof(reg->node_name), "%d", cfg->node_id);
    reg->num_partitions = cfg->num_partitions;
    reg->node_id = cfg->node_id;
    reg->ctl = cfg->ctl;
    reg->meta = ctl_meta(cfg->ctl);
    reg->quorum = reg->meta->quorum;
    reg->inter_broker = cfg->inter_broker;
    /* A quorum's node has at start only its snapshot's metadata: a
     * partition it does not hold may come back as the log is committed
     * again (part_delta.c takes its log up then), so nothing is deleted. */
    if (!reg->meta->quorum)
        part_reg_purge_strays(reg, now_ms);
    /* The dynamic broker configs are in the image already: the topics load
     * with the defaults they make. */
    part_reg_broker_configs(reg);
    part_reg_load(reg, now_ms);
    /* From now on (the broker has read its start-up values itself). */
    reg->on_broker_config = cfg->on_broker_config;
    reg->on_broker_config_arg = cfg->on_broker_config_arg;
    reg->meta->listener.ctx = reg;
    reg->meta->listener.on_commit = part_delta_apply;
    return reg;
}

void part_attach(part_reg_t *reg, net_loop_t *loop, net_pool_t *pool)
{
    reg->loop = loop;
    reg->pool = pool;
    part_select_init(reg);
    if (reg->quorum && loop && !reg->fetchers && !reg->stopping)
        part_fetchers_new(reg);
    if (reg->quorum && loop && !reg->isr_mgr && !reg->stopping)
        part_isr_new(reg);
}

void part_reg_free(part_reg_t *reg)
{
    size_t pos = 0;
    topic_t *topic;
    if (!reg)
        return;
    part_fetchers_free(reg->fetchers);
    part_isr_free(reg);
    while ((topic = part_topic_next(reg, &pos)))
        part_topic_free(topic);
    smap_free(&reg->by_name);
    smap_free(&reg->by_id);
    smap_free(&reg->by_norm);
    if (reg->meta && reg->meta->listener.ctx == reg)
        reg->meta->listener.on_commit = NULL;
    free(reg);
}

void part_topic_apply_cfg(topic_t *topic, const topic_cfg_t *cfg)
{
    log_config_t lc;
    topic->cfg = *cfg;
    cfg_topic_log_config(&topic->cfg, &lc);
    for (int32_t i = 0; i < topic->nparts; i++)
        if (topic->parts[i])
            log_set_config(topic->parts[i]->log, &lc);
}

/* ---- lookups ---- */

topic_t *part_topic_get(part_reg_t *reg, const char *name, size_t len)
{
    return smap_get(&reg->by_name, name, len);
}

topic_t *part_topic_by_id(part_reg_t *reg, const uint8_t id[16])
{
    return smap_get(&reg->by_id, id, 16);
}

topic_t *part_topic_next(part_reg_t *reg, size_t *pos)
{
    void *v;
    return smap_next(&reg->by_name, pos, NULL, NULL, &v) ? v : NULL;
}

const mi_config_t *part_topic_dynamic(const part_reg_t *reg, const topic_t *topic)
{
    return meta_image_config(&reg->meta->img, META_RES_TOPIC, topic->name, topic->name_len);
}

/* ---- watches ---- */

void part_watch_add(part_t *part, part_watch_t *w)
{
    w->next = &part->watchers;
    w->prev = part->watchers.prev;
    part->watchers.prev->next = w;
    part->watchers.prev = w;
}

void part_watch_del(part_watch_t *w)
{
    if (!w->next)
        return;
    w->prev->next = w->next;
    w->next->prev = w->prev;
    w->next = w->prev = NULL;
}

void part_notify(part_t *part)
{
    /* Callbacks remove themselves (and may remove others of the same
     * request), so walk a detached list. */
    part_watch_t head = part->watchers;
    if (head.next == &part->watchers)
        return;
    head.next->prev = &head;
    head.prev->next = &head;
    part->watchers.next = part->watchers.prev = &part->watchers;
    while (head.next != &head) {
        part_watch_t *w = head.next;
        part_watch_del(w);
        w->cb(w);
    }
}
