/* Changes to the set of topics, their partitions and configs. Each one
 * is a metadata batch (meta_log_commit: appended and fsynced) plus the
 * matching change of the live registry and logs. The order makes a crash
 * at any point harmless: logs are created before the records that make
 * them exist (a crash in between leaves directories the next start
 * deletes as strays), and removed after the record that deletes them (a
 * crash in between leaves strays again). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "partition/part_int.h"
#include "util/logging.h"
#include "util/mem.h"
#include "util/uuid.h"

#define PART_MAX_NEW_PARTITIONS 100000

/* Records of one change; PartitionRecords point at dirs[] and node. */
typedef struct part_batch_s {
    meta_rec_t *v;
    int n, cap;
    uint8_t (*dirs)[16];
    int ndirs;
} part_batch_t;

static meta_rec_t *part_batch_add(part_batch_t *b, int16_t type)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        b->v = xrealloc(b->v, (size_t)b->cap * sizeof(*b->v));
    }
    meta_rec_init(&b->v[b->n], type);
    return &b->v[b->n++];
}

static void part_batch_free(part_batch_t *b)
{
    free(b->v);
    free(b->dirs);
}

static meta_str_t part_mstr(const char *s, size_t len)
{
    meta_str_t m = {s, s ? (int32_t)len : -1};
    return m;
}

/* A PartitionRecord as Kafka's controller writes it for a new partition:
 * this node the only replica, in the ISR and leader, epochs 0. */
static void part_batch_partition(part_batch_t *b, part_reg_t *reg, const uint8_t id[16],
                                 int32_t p, const char *topic)
{
    meta_rec_t *r = part_batch_add(b, META_REC_PARTITION);
    meta_part_rec_t *pr = &r->u.part;
    int d = log_mgr_dir_of(reg->logs, topic, p);

    pr->partition_id = p;
    memcpy(pr->topic_id, id, 16);
    pr->replicas.n = pr->isr.n = 1;
    pr->replicas.v = pr->isr.v = &reg->node_id;
    pr->removing.n = pr->adding.n = 0;
    pr->leader = reg->node_id;
    pr->leader_epoch = 0;
    pr->partition_epoch = 0;
    pr->directories.n = 1;
    pr->directories.v = &b->dirs[b->ndirs];
    memset(b->dirs[b->ndirs], 0, 16);
    if (d >= 0)
        log_mgr_dir_id(reg->logs, d, b->dirs[b->ndirs]);
    b->ndirs++;
}

static void part_batch_config(part_batch_t *b, const char *topic, size_t len, const char *key,
                              const char *value)
{
    meta_rec_t *r = part_batch_add(b, META_REC_CONFIG);
    r->u.config.resource_type = META_RES_TOPIC;
    r->u.config.resource_name = part_mstr(topic, len);
    r->u.config.name = part_mstr(key, strlen(key));
    r->u.config.value = part_mstr(value, value ? strlen(value) : 0);
}

/* ---- bootstrap ---- */

typedef struct part_boot_topic_s {
    uint8_t id[16];
    int has_id;
    int32_t nparts;
} part_boot_topic_t;

static void part_boot_scan(log_t *log, void *opaque)
{
    part_reg_t *reg = ((void **)opaque)[0];
    smap_t *topics = ((void **)opaque)[1];
    const char *name = log_topic(log);
    int32_t p = log_partition(log);
    uint8_t id[16];

    if (!strcmp(name, META_LOG_TOPIC))
        return;
    part_boot_topic_t *t = smap_get(topics, name, strlen(name));
    if (!t) {
        t = xcalloc(1, sizeof(*t));
        smap_put(topics, name, strlen(name), t);
    }
    if (p + 1 > t->nparts)
        t->nparts = p + 1;
    if (!t->has_id && log_mgr_topic_id(reg->logs, name, p, id)) {
        memcpy(t->id, id, 16);
        t->has_id = 1;
    }
}

/* Records for the topics a data dir holds from before the metadata log:
 * their ids from partition.metadata (or new ones), their partitions, no
 * dynamic configs (the old code kept none). */
static int16_t part_boot_topics(part_reg_t *reg, part_batch_t *b, smap_t *topics)
{
    const void *key;
    size_t klen, pos = 0, npart = 0;
    void *v;

    while (smap_next(topics, &pos, NULL, NULL, &v))
        npart += (size_t)((part_boot_topic_t *)v)->nparts;
    b->dirs = xcalloc(npart + 1, 16);
    pos = 0;
    while (smap_next(topics, &pos, &key, &klen, &v)) {
        part_boot_topic_t *t = v;
        char name[256];
        snprintf(name, sizeof(name), "%.*s", (int)klen, (const char *)key);
        if (!t->has_id && uuid_generate(t->id) < 0)
            return KERR_KAFKA_STORAGE_ERROR;
        meta_rec_t *r = part_batch_add(b, META_REC_TOPIC);
        /* key points into the map, which outlives the commit */
        r->u.topic.name = part_mstr(key, klen);
        memcpy(r->u.topic.id, t->id, 16);
        for (int32_t p = 0; p < t->nparts; p++)
            part_batch_partition(b, reg, t->id, p, name);
        lg_info("metadata log: adopting topic %s with %d partitions from the log dirs", name,
                t->nparts);
    }
    return 0;
}

int16_t part_meta_bootstrap(part_reg_t *reg, int64_t now_ms)
{
    part_batch_t b = {0};
    smap_t topics;
    void *ctx[2] = {reg, &topics};
    size_t pos = 0;
    void *v;
    int16_t err;

    smap_init(&topics);
    log_mgr_foreach(reg->logs, part_boot_scan, ctx);
    meta_rec_t *fr = part_batch_add(&b, META_REC_FEATURE_LEVEL);
    fr->u.feature.name = part_mstr("metadata.version", strlen("metadata.version"));
    fr->u.feature.level = META_LOG_METADATA_VERSION;
    err = part_boot_topics(reg, &b, &topics);
    if (!err)
        err = meta_log_commit(reg->meta, b.v, b.n, now_ms);
    while (smap_next(&topics, &pos, NULL, NULL, &v))
        free(v);
    smap_free(&topics);
    part_batch_free(&b);
    return err;
}

/* ---- create ---- */

int16_t part_topic_name_error(const char *name, size_t len, char *err, size_t errlen)
{
    if (!part_topic_name_check(name, len))
        return 0;
    if (len == 0)
        snprintf(err, errlen, "Topic name is illegal, it can't be empty");
    else if (len > 249)
        snprintf(err, errlen,
                 "Topic name is invalid: the length of '%.*s' is longer than the max allowed "
                 "length 249", (int)len, name);
    else if ((len == 1 && name[0] == '.') || (len == 2 && !memcmp(name, "..", 2)))
        snprintf(err, errlen, "Topic name is invalid: '%.*s' is not allowed", (int)len, name);
    else
        snprintf(err, errlen,
                 "Topic name is invalid: '%.*s' contains one or more characters other than "
                 "ASCII alphanumerics, '.', '_' and '-'", (int)len, name);
    return KERR_INVALID_TOPIC_EXCEPTION;
}

/* Checks kv as a topic's complete set of dynamic configs and builds the
 * resulting config into *out. */
static int16_t part_check_configs(part_reg_t *reg, const part_kv_t *kv, int nkv, topic_cfg_t *out,
                                  char *err, size_t errlen)
{
    *out = reg->defaults;
    /* As Kafka: an unknown key is reported before any bad value. */
    for (int i = 0; i < nkv; i++)
        if (!cfg_topic_find(kv[i].key, strlen(kv[i].key))) {
            snprintf(err, errlen, "Unknown topic config name: %s", kv[i].key);
            return KERR_INVALID_CONFIG;
        }
    for (int i = 0; i < nkv; i++) {
        const cfg_topic_key_t *k = cfg_topic_find(kv[i].key, strlen(kv[i].key));
        int16_t e;
        if ((e = cfg_topic_check(k, kv[i].value, err, errlen)))
            return e;
        cfg_topic_apply(out, k, kv[i].value);
    }
    return cfg_topic_check_all(out, err, errlen);
}

int16_t part_topic_check_new(part_reg_t *reg, const char *name, size_t len, int32_t nparts,
                             const part_kv_t *kv, int nkv, char *err, size_t errlen)
{
    char norm[256];
    topic_t *other;
    topic_cfg_t cfg;
    int16_t e;

    if (part_topic_name_check(name, len))
        return part_topic_name_error(name, len, err, errlen);
    if (len == strlen(META_LOG_TOPIC) && !memcmp(name, META_LOG_TOPIC, len)) {
        snprintf(err, errlen, "Creation of internal topic %s is prohibited.", META_LOG_TOPIC);
        return KERR_INVALID_REQUEST;
    }
    if (smap_get(&reg->by_name, name, len)) {
        snprintf(err, errlen, "Topic '%.*s' already exists.", (int)len, name);
        return KERR_TOPIC_ALREADY_EXISTS;
    }
    part_norm(name, len, norm);
    if ((other = smap_get(&reg->by_norm, norm, len))) {
        snprintf(err, errlen, "Topic '%.*s' collides with existing topic: %s", (int)len, name,
                 other->name);
        return KERR_INVALID_TOPIC_EXCEPTION;
    }
    if ((e = part_check_configs(reg, kv, nkv, &cfg, err, errlen)))
        return e;
    if (nparts < 1) {
        snprintf(err, errlen, "Number of partitions was set to an invalid non-positive value.");
        return KERR_INVALID_PARTITIONS;
    }
    return 0;
}

/* Creates the logs of partitions [from, to); on failure deletes the ones
 * it made and returns -1. */
static int part_create_logs(part_reg_t *reg, const char *name, const uint8_t id[16],
                            const topic_cfg_t *cfg, int32_t from, int32_t to, int64_t now_ms)
{
    log_config_t lc;
    cfg_topic_log_config(cfg, &lc);
    for (int32_t i = from; i < to; i++) {
        if (log_mgr_create(reg->logs, name, i, id, &lc, now_ms))
            continue;
        lg_error("cannot create partition %s-%d: %s", name, i, strerror(errno));
        while (--i >= from)
            log_mgr_delete(reg->logs, name, i, now_ms);
        return -1;
    }
    return 0;
}

static void part_drop_logs(part_reg_t *reg, const char *name, int32_t from, int32_t to,
                           int64_t now_ms)
{
    for (int32_t i = from; i < to; i++)
        if (log_mgr_delete(reg->logs, name, i, now_ms) < 0)
            lg_error("cannot delete %s-%d: %s", name, i, strerror(errno));
}

/* Wraps the new logs [from, to) of topic into live partitions. */
static void part_adopt(part_reg_t *reg, topic_t *topic, int32_t from, int32_t to)
{
    part_topic_grow(topic, to);
    for (int32_t i = from; i < to; i++) {
        topic->parts[i] =
            part_new(topic, i, log_mgr_get(reg->logs, topic->name, i), reg->node_id);
        part_take_leadership(topic->parts[i]);
    }
}

static int part_new_id(part_reg_t *reg, uint8_t id[16])
{
    do {
        if (uuid_generate(id) < 0)
            return -1;
    } while (smap_get(&reg->by_id, id, 16) || meta_image_topic_by_id(&reg->meta->img, id));
    return 0;
}

int part_meta_offline(const part_reg_t *reg)
{
    return log_offline(reg->meta->log);
}

/* Why a metadata change failed, in err; returns e. */
static int16_t part_meta_failed(const part_reg_t *reg, int16_t e, char *err, size_t errlen)
{
    snprintf(err, errlen, "%s",
             part_meta_offline(reg) ? PART_META_OFFLINE_MSG : "Cannot write the metadata log");
    return e;
}

int16_t part_topic_create_kv(part_reg_t *reg, const char *name, size_t len, int32_t nparts,
                             const part_kv_t *kv, int nkv, int64_t now_ms, topic_t **out,
                             char *err, size_t errlen)
{
    char cname[256];
    uint8_t id[16];
    topic_cfg_t cfg;
    part_batch_t b = {0};
    int16_t e;

    *out = NULL;
    if ((e = part_topic_check_new(reg, name, len, nparts, kv, nkv, err, errlen)))
        return e;
    if (nparts > PART_MAX_NEW_PARTITIONS) {
        snprintf(err, errlen, "Excessively large number of partitions per request.");
        return KERR_POLICY_VIOLATION;
    }
    part_check_configs(reg, kv, nkv, &cfg, err, errlen);
    if (part_meta_offline(reg))
        return part_meta_failed(reg, KERR_KAFKA_STORAGE_ERROR, err, errlen);
    snprintf(cname, sizeof(cname), "%.*s", (int)len, name);
    if (part_new_id(reg, id) < 0 || part_create_logs(reg, cname, id, &cfg, 0, nparts, now_ms) < 0) {
        snprintf(err, errlen, "Cannot create the partition logs of %s", cname);
        return KERR_KAFKA_STORAGE_ERROR;
    }
    /* Kafka's order: the topic, its configs, its partitions. */
    meta_rec_t *r = part_batch_add(&b, META_REC_TOPIC);
    r->u.topic.name = part_mstr(cname, len);
    memcpy(r->u.topic.id, id, 16);
    for (int i = 0; i < nkv; i++)
        if (kv[i].value)
            part_batch_config(&b, cname, len, kv[i].key, kv[i].value);
    b.dirs = xcalloc((size_t)nparts, 16);
    for (int32_t i = 0; i < nparts; i++)
        part_batch_partition(&b, reg, id, i, cname);
    e = meta_log_commit(reg->meta, b.v, b.n, now_ms);
    part_batch_free(&b);
    if (e) {
        part_drop_logs(reg, cname, 0, nparts, now_ms);
        return part_meta_failed(reg, e, err, errlen);
    }
    *out = part_topic_new(reg, cname, len, id, &cfg);
    part_adopt(reg, *out, 0, nparts);
    lg_info("created topic %s with %d partitions", cname, nparts);
    return 0;
}

int16_t part_topic_create(part_reg_t *reg, const char *name, size_t len, int32_t nparts,
                          const topic_cfg_t *cfg, int64_t now_ms, topic_t **out)
{
    cfg_kv_t diff[32];
    part_kv_t kv[32];
    char err[512];
    int n = cfg ? cfg_topic_diff(&reg->defaults, cfg, diff, 32) : 0;

    for (int i = 0; i < n; i++) {
        kv[i].key = diff[i].key;
        kv[i].value = diff[i].value;
    }
    int16_t e = part_topic_create_kv(reg, name, len, nparts, kv, n, now_ms, out, err, sizeof(err));
    if (e && e != KERR_TOPIC_ALREADY_EXISTS)
        lg_debug("creating topic %.*s: %s", (int)len, name, err);
    return e;
}

/* ---- delete ---- */

int16_t part_topic_delete(part_reg_t *reg, topic_t *topic, int64_t now_ms)
{
    meta_rec_t r;
    int16_t e;

    meta_rec_init(&r, META_REC_REMOVE_TOPIC);
    memcpy(r.u.remove_topic_id, topic->id, 16);
    if ((e = meta_log_commit(reg->meta, &r, 1, now_ms)))
        return e;
    part_topic_unlink(reg, topic);
    for (int32_t i = 0; i < topic->nparts; i++) {
        part_t *part = topic->parts[i];
        if (!part)
            continue;
        /* Parked fetches look their partitions up again when woken and
         * find the topic gone. */
        part_notify(part);
        if (log_mgr_delete(reg->logs, topic->name, i, now_ms) < 0)
            lg_error("deleting %s-%d: %s (removed at the next start)", topic->name, i,
                     strerror(errno));
    }
    lg_info("deleted topic %s", topic->name);
    part_topic_free(topic);
    return 0;
}

/* ---- partitions ---- */

int16_t part_topic_add_partitions(part_reg_t *reg, topic_t *topic, int32_t count,
                                  int validate_only, int64_t now_ms, char *err, size_t errlen)
{
    int32_t from = topic->nparts;
    part_batch_t b = {0};
    int16_t e;

    if (count == from) {
        snprintf(err, errlen, "Topic already has %d partition(s).", from);
        return KERR_INVALID_PARTITIONS;
    }
    if (count < from) {
        snprintf(err, errlen,
                 "The topic %s currently has %d partition(s); %d would not be an increase.",
                 topic->name, from, count);
        return KERR_INVALID_PARTITIONS;
    }
    if (count - from > PART_MAX_NEW_PARTITIONS) {
        snprintf(err, errlen, "Excessively large number of partitions per request.");
        return KERR_POLICY_VIOLATION;
    }
    if (validate_only)
        return 0;
    if (part_meta_offline(reg))
        return part_meta_failed(reg, KERR_KAFKA_STORAGE_ERROR, err, errlen);
    if (part_create_logs(reg, topic->name, topic->id, &topic->cfg, from, count, now_ms) < 0) {
        snprintf(err, errlen, "Cannot create the new partition logs");
        return KERR_KAFKA_STORAGE_ERROR;
    }
    b.dirs = xcalloc((size_t)(count - from), 16);
    for (int32_t i = from; i < count; i++)
        part_batch_partition(&b, reg, topic->id, i, topic->name);
    e = meta_log_commit(reg->meta, b.v, b.n, now_ms);
    part_batch_free(&b);
    if (e) {
        part_drop_logs(reg, topic->name, from, count, now_ms);
        return part_meta_failed(reg, e, err, errlen);
    }
    part_adopt(reg, topic, from, count);
    lg_info("topic %s: partitions %d -> %d", topic->name, from, count);
    return 0;
}

/* ---- configs ---- */

/* The dynamic config set after a change: copies of the current keys
 * (unless replaced) with kv applied; value NULL = removed. */
typedef struct part_cfgset_s {
    part_kv_t *v;
    int n;
} part_cfgset_t;

static void part_cfgset_put(part_cfgset_t *s, const char *key, const char *value)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].key, key)) {
            free((char *)s->v[i].value);
            s->v[i].value = value ? xstrdup(value) : NULL;
            return;
        }
    s->v[s->n].key = xstrdup(key);
    s->v[s->n].value = value ? xstrdup(value) : NULL;
    s->n++;
}

static void part_cfgset_free(part_cfgset_t *s)
{
    for (int i = 0; i < s->n; i++) {
        free((char *)s->v[i].key);
        free((char *)s->v[i].value);
    }
    free(s->v);
}

/* The records that turn the current set cur into s. */
static void part_cfgset_records(const part_cfgset_t *s, const mi_config_t *cur, topic_t *topic,
                                part_batch_t *b)
{
    for (int i = 0; i < s->n; i++) {
        const char *old = NULL;
        for (int j = 0; cur && j < cur->n; j++)
            if (!strcmp(cur->v[j].key, s->v[i].key))
                old = cur->v[j].value;
        if ((!old && !s->v[i].value) || (old && s->v[i].value && !strcmp(old, s->v[i].value)))
            continue;
        part_batch_config(b, topic->name, topic->name_len, s->v[i].key, s->v[i].value);
    }
}

static int16_t part_cfgset_check(part_reg_t *reg, const part_cfgset_t *s, const part_kv_t *kv,
                                 int nkv, topic_cfg_t *out, char *err, size_t errlen)
{
    int16_t e;
    *out = reg->defaults;
    for (int i = 0; i < nkv; i++) { /* unknown keys may only be deleted */
        if (kv[i].value && !cfg_topic_find(kv[i].key, strlen(kv[i].key))) {
            snprintf(err, errlen, "Unknown topic config name: %s", kv[i].key);
            return KERR_INVALID_CONFIG;
        }
    }
    for (int i = 0; i < s->n; i++) {
        const cfg_topic_key_t *k = cfg_topic_find(s->v[i].key, strlen(s->v[i].key));
        if (!k || !s->v[i].value)
            continue;
        if ((e = cfg_topic_check(k, s->v[i].value, err, errlen)))
            return e;
        cfg_topic_apply(out, k, s->v[i].value);
    }
    return cfg_topic_check_all(out, err, errlen);
}

static void part_topic_reconfigure(part_reg_t *reg, topic_t *topic)
{
    topic_cfg_t cfg;
    cfg_topic_build(&cfg, &reg->defaults, part_topic_dynamic(reg, topic));
    part_topic_apply_cfg(topic, &cfg);
}

int16_t part_topic_alter_configs(part_reg_t *reg, topic_t *topic, const part_kv_t *kv, int nkv,
                                 int replace, int validate_only, int64_t now_ms, char *err,
                                 size_t errlen)
{
    const mi_config_t *cur = part_topic_dynamic(reg, topic);
    part_cfgset_t s = {xcalloc((size_t)(nkv + (cur ? cur->n : 0) + 1), sizeof(part_kv_t)), 0};
    part_batch_t b = {0};
    topic_cfg_t cfg;
    int16_t e;

    for (int i = 0; cur && i < cur->n; i++)
        part_cfgset_put(&s, cur->v[i].key, replace ? NULL : cur->v[i].value);
    for (int i = 0; i < nkv; i++)
        part_cfgset_put(&s, kv[i].key, kv[i].value);
    e = part_cfgset_check(reg, &s, kv, nkv, &cfg, err, errlen);
    if (!e && !validate_only) {
        part_cfgset_records(&s, cur, topic, &b);
        if (b.n > 0)
            e = meta_log_commit(reg->meta, b.v, b.n, now_ms);
        if (e)
            part_meta_failed(reg, e, err, errlen);
        else
            part_topic_reconfigure(reg, topic);
    }
    part_batch_free(&b);
    part_cfgset_free(&s);
    return e;
}
