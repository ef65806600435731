#include "partition/part.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/logging.h"
#include "util/mem.h"
#include "util/uuid.h"

#define KERR_INVALID_TOPIC 17
#define KERR_TOPIC_EXISTS 36
#define KERR_INVALID_PARTITIONS 37
#define KERR_STORAGE 56

void part_topic_cfg_defaults(topic_cfg_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    log_config_defaults(&cfg->log);
    cfg->max_message_bytes = 1048588;
    cfg->min_insync_replicas = 1;
    cfg->ts_before_max_ms = INT64_MAX;
    cfg->ts_after_max_ms = 3600000;
    cfg->flush_messages = INT64_MAX;
    cfg->flush_ms = INT64_MAX;
}

static void part_norm(const char *name, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++)
        out[i] = name[i] == '.' ? '_' : name[i];
}

static topic_t *part_topic_alloc(part_reg_t *reg, const char *name, size_t len,
                                 const topic_cfg_t *cfg)
{
    topic_t *topic = xcalloc(1, sizeof(*topic));
    char norm[256];

    topic->name = xstrndup(name, len);
    topic->name_len = len;
    topic->cfg = cfg ? *cfg : reg->defaults;
    topic->internal = len > 2 && name[0] == '_' && name[1] == '_';
    smap_put(&reg->by_name, name, len, topic);
    part_norm(name, len, norm);
    smap_put(&reg->by_norm, norm, len, topic);
    return topic;
}

static part_t *part_new(topic_t *topic, int32_t index, log_t *log)
{
    part_t *part = xcalloc(1, sizeof(*part));
    part->topic = topic;
    part->index = index;
    part->log = log;
    part->watchers.next = part->watchers.prev = &part->watchers;
    return part;
}

static void part_topic_set_part(topic_t *topic, int32_t index, part_t *part)
{
    if (index >= topic->nparts) {
        topic->parts = xrealloc(topic->parts, (size_t)(index + 1) * sizeof(part_t *));
        for (int32_t i = topic->nparts; i <= index; i++)
            topic->parts[i] = NULL;
        topic->nparts = index + 1;
    }
    topic->parts[index] = part;
}

/* Leadership is (re)taken at start: a new epoch begins at the log end. */
static void part_take_leadership(part_t *part)
{
    int32_t epoch = log_latest_epoch(part->log) + 1;
    part->leader_epoch = epoch;
    /* The only replica: everything in the log is committed. */
    log_set_high_watermark(part->log, log_end_offset(part->log));
    if (log_epoch_assign(part->log, epoch, log_end_offset(part->log)) < 0)
        lg_warn("%s-%d: cannot write leader-epoch-checkpoint: %s", part->topic->name,
                part->index, strerror(errno));
}

typedef struct part_open_ctx_s {
    part_reg_t *reg;
} part_open_ctx_t;

static void part_adopt_log(log_t *log, void *opaque)
{
    part_reg_t *reg = ((part_open_ctx_t *)opaque)->reg;
    const char *name = log_topic(log);
    size_t len = strlen(name);
    topic_t *topic = smap_get(&reg->by_name, name, len);

    if (!topic) {
        topic = part_topic_alloc(reg, name, len, NULL);
        if (log_mgr_topic_id(reg->logs, name, log_partition(log), topic->id))
            smap_put(&reg->by_id, topic->id, 16, topic);
    }
    part_t *part = part_new(topic, log_partition(log), log);
    part_topic_set_part(topic, part->index, part);
    part_take_leadership(part);
}

part_reg_t *part_reg_open(log_mgr_t *logs, const topic_cfg_t *defaults, int32_t num_partitions)
{
    part_reg_t *reg = xcalloc(1, sizeof(*reg));
    part_open_ctx_t ctx = {reg};
    size_t pos = 0;
    topic_t *topic;

    smap_init(&reg->by_name);
    smap_init(&reg->by_id);
    smap_init(&reg->by_norm);
    reg->logs = logs;
    reg->defaults = *defaults;
    reg->num_partitions = num_partitions;
    log_mgr_foreach(logs, part_adopt_log, &ctx);
    while ((topic = part_topic_next(reg, &pos))) {
        for (int32_t i = 0; i < topic->nparts; i++)
            if (!topic->parts[i])
                lg_error("topic %s: partition %d is missing from every log dir", topic->name, i);
        lg_info("loaded topic %s with %d partitions", topic->name, topic->nparts);
    }
    return reg;
}

void part_reg_free(part_reg_t *reg)
{
    size_t pos = 0;
    topic_t *topic;
    if (!reg)
        return;
    while ((topic = part_topic_next(reg, &pos))) {
        for (int32_t i = 0; i < topic->nparts; i++)
            free(topic->parts[i]);
        free(topic->parts);
        free(topic->name);
        free(topic);
    }
    smap_free(&reg->by_name);
    smap_free(&reg->by_id);
    smap_free(&reg->by_norm);
    free(reg);
}

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

int16_t part_topic_name_check(const char *name, size_t len)
{
    if (len == 0 || len > 249)
        return KERR_INVALID_TOPIC;
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return KERR_INVALID_TOPIC;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return KERR_INVALID_TOPIC;
    }
    return 0;
}

int16_t part_topic_create(part_reg_t *reg, const char *name, size_t len, int32_t nparts,
                          const topic_cfg_t *cfg, int64_t now_ms, topic_t **out)
{
    char norm[256];
    int16_t err = part_topic_name_check(name, len);

    *out = NULL;
    if (err)
        return err;
    if (smap_get(&reg->by_name, name, len))
        return KERR_TOPIC_EXISTS;
    part_norm(name, len, norm);
    if (smap_get(&reg->by_norm, norm, len))
        return KERR_INVALID_TOPIC;
    if (nparts < 1)
        return KERR_INVALID_PARTITIONS;

    topic_t *topic = part_topic_alloc(reg, name, len, cfg);
    uuid_generate(topic->id);
    smap_put(&reg->by_id, topic->id, 16, topic);
    for (int32_t i = 0; i < nparts; i++) {
        log_t *log = log_mgr_create(reg->logs, topic->name, i, topic->id, &topic->cfg.log, now_ms);
        if (!log) {
            lg_error("cannot create partition %s-%d: %s", topic->name, i, strerror(errno));
            /* Partitions made so far stay; the topic is usable up to i. */
            if (i == 0) {
                smap_del(&reg->by_name, name, len);
                smap_del(&reg->by_norm, norm, len);
                smap_del(&reg->by_id, topic->id, 16);
                free(topic->parts);
                free(topic->name);
                free(topic);
            }
            return KERR_STORAGE;
        }
        part_t *part = part_new(topic, i, log);
        part_topic_set_part(topic, i, part);
        part_take_leadership(part);
    }
    lg_info("created topic %s with %d partitions", topic->name, nparts);
    *out = topic;
    return 0;
}

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
