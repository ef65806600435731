#include "cluster/meta_image.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

void meta_image_init(meta_image_t *img)
{
    memset(img, 0, sizeof(*img));
    smap_init(&img->by_name);
    smap_init(&img->by_norm);
    smap_init(&img->by_id);
    smap_init(&img->configs);
    smap_init(&img->features);
}

static void mi_topic_free(mi_topic_t *t)
{
    for (int32_t i = 0; i < t->nparts; i++) {
        free(t->parts[i].replicas);
        free(t->parts[i].isr);
        free(t->parts[i].dirs);
        free(t->parts[i].adding);
        free(t->parts[i].removing);
        free(t->parts[i].elr);
        free(t->parts[i].last_elr);
    }
    free(t->parts);
    free(t->name);
    free(t);
}

static void mi_config_free(mi_config_t *c)
{
    for (int i = 0; i < c->n; i++) {
        free(c->v[i].key);
        free(c->v[i].value);
    }
    free(c->v);
    free(c->name);
    free(c);
}

void meta_image_free(meta_image_t *img)
{
    size_t pos = 0;
    void *v;

    while (smap_next(&img->by_name, &pos, NULL, NULL, &v))
        mi_topic_free(v);
    pos = 0;
    while (smap_next(&img->configs, &pos, NULL, NULL, &v))
        mi_config_free(v);
    smap_free(&img->by_name);
    smap_free(&img->by_norm);
    smap_free(&img->by_id);
    smap_free(&img->configs);
    smap_free(&img->features);
    meta_image_brokers_free(img);
}

mi_topic_t *meta_image_topic(const meta_image_t *img, const char *name, size_t len)
{
    return smap_get(&img->by_name, name, len);
}

mi_topic_t *meta_image_topic_by_id(const meta_image_t *img, const uint8_t id[16])
{
    return smap_get(&img->by_id, id, 16);
}

mi_topic_t *meta_image_topic_next(const meta_image_t *img, size_t *pos)
{
    void *v;
    return smap_next(&img->by_name, pos, NULL, NULL, &v) ? v : NULL;
}

/* Config resources are keyed by their type byte followed by the name. */
static size_t mi_config_key(int8_t type, const char *name, size_t len, char *key, size_t cap)
{
    if (len + 1 > cap)
        len = cap - 1;
    key[0] = (char)type;
    memcpy(key + 1, name, len);
    return len + 1;
}

mi_config_t *meta_image_config(const meta_image_t *img, int8_t type, const char *name,
                               size_t len)
{
    char key[512];
    if (len > sizeof(key) - 1)
        return NULL;
    return smap_get(&img->configs, key, mi_config_key(type, name, len, key, sizeof(key)));
}

const char *meta_image_config_get(const meta_image_t *img, int8_t type, const char *name,
                                  size_t len, const char *key)
{
    mi_config_t *c = meta_image_config(img, type, name, len);
    for (int i = 0; c && i < c->n; i++)
        if (!strcmp(c->v[i].key, key))
            return c->v[i].value;
    return NULL;
}

mi_config_t *meta_image_config_next(const meta_image_t *img, size_t *pos)
{
    void *v;
    return smap_next(&img->configs, pos, NULL, NULL, &v) ? v : NULL;
}

int meta_image_feature(const meta_image_t *img, const char *name)
{
    void *v = smap_get(&img->features, name, strlen(name));
    return v ? (int)(intptr_t)v : 0;
}

int meta_image_feature_next(const meta_image_t *img, size_t *pos, meta_str_t *name,
                            int16_t *level)
{
    const void *key;
    size_t klen;
    void *v;

    if (!smap_next(&img->features, pos, &key, &klen, &v))
        return 0;
    name->p = key;
    name->len = (int32_t)klen;
    *level = (int16_t)(intptr_t)v;
    return 1;
}

/* ---- apply ---- */

/* name with '.' as '_' into out (len bytes, at most 255). */
static void mi_norm(const char *name, size_t len, char *out)
{
    for (size_t i = 0; i < len; i++)
        out[i] = name[i] == '.' ? '_' : name[i];
}

mi_topic_t *meta_image_topic_colliding(const meta_image_t *img, const char *name, size_t len)
{
    char norm[256];
    if (len > sizeof(norm))
        return NULL;
    mi_norm(name, len, norm);
    return smap_get(&img->by_norm, norm, len);
}

static int mi_fail(char *err, size_t errlen, const char *what, const char *name)
{
    if (err && errlen)
        snprintf(err, errlen, "%s%s%s", what, name ? ": " : "", name ? name : "");
    return -1;
}

static int mi_apply_topic(meta_image_t *img, const meta_topic_rec_t *r, char *err, size_t errlen)
{
    size_t len = (size_t)r->name.len;
    if (smap_get(&img->by_name, r->name.p, len))
        return mi_fail(err, errlen, "TopicRecord for a topic that exists", NULL);
    if (smap_get(&img->by_id, r->topic_id.b, 16))
        return mi_fail(err, errlen, "TopicRecord with a topic id in use", NULL);
    mi_topic_t *t = xcalloc(1, sizeof(*t));
    t->name = xstrndup(r->name.p, len);
    t->name_len = len;
    memcpy(t->id, r->topic_id.b, 16);
    smap_put(&img->by_name, t->name, len, t);
    smap_put(&img->by_id, t->id, 16, t);
    if (len <= 255) {
        char norm[256];
        mi_norm(t->name, len, norm);
        smap_put(&img->by_norm, norm, len, t);
    }
    return 0;
}

static int32_t *mi_copy_i32s(meta_i32s_t a, int32_t *n)
{
    *n = a.n < 0 ? 0 : a.n;
    if (*n == 0)
        return NULL;
    int32_t *v = xmalloc((size_t)*n * sizeof(int32_t));
    memcpy(v, a.v, (size_t)*n * sizeof(int32_t));
    return v;
}

/* A record's directories, one per replica; a shorter list (an older
 * record version) leaves the rest unknown. */
static void mi_part_set_dirs(mi_part_t *p, const proto_uuid_t *v, int32_t n)
{
    free(p->dirs);
    p->dirs = p->nreplicas > 0 ? xcalloc((size_t)p->nreplicas, sizeof(*p->dirs)) : NULL;
    for (int32_t i = 0; i < n && i < p->nreplicas; i++)
        memcpy(p->dirs[i], v[i].b, 16);
}

const uint8_t *mi_part_dir_of(const mi_part_t *p, int32_t node)
{
    static const uint8_t zero[16];
    for (int32_t i = 0; i < p->nreplicas; i++)
        if (p->replicas[i] == node)
            return p->dirs ? p->dirs[i] : zero;
    return NULL;
}

static mi_part_t *mi_part_slot(mi_topic_t *t, int32_t id)
{
    if (id >= t->nparts) {
        t->parts = xrealloc(t->parts, (size_t)(id + 1) * sizeof(*t->parts));
        memset(&t->parts[t->nparts], 0, (size_t)(id + 1 - t->nparts) * sizeof(*t->parts));
        t->nparts = id + 1;
    }
    return &t->parts[id];
}

static int mi_apply_part(meta_image_t *img, const meta_part_rec_t *r, char *err, size_t errlen)
{
    mi_topic_t *t = smap_get(&img->by_id, r->topic_id.b, 16);
    if (!t)
        return mi_fail(err, errlen, "PartitionRecord of an unknown topic id", NULL);
    if (r->partition_id < 0 || r->partition_id >= 1000000)
        return mi_fail(err, errlen, "PartitionRecord with a bad partition id", t->name);
    mi_part_t *p = mi_part_slot(t, r->partition_id);
    free(p->replicas);
    free(p->isr);
    free(p->dirs);
    free(p->adding);
    free(p->removing);
    free(p->elr);
    free(p->last_elr);
    memset(p, 0, sizeof(*p));
    p->present = true;
    p->leader = r->leader;
    p->leader_epoch = r->leader_epoch;
    p->partition_epoch = r->partition_epoch;
    p->recovery_state = r->leader_recovery_state;
    p->replicas = mi_copy_i32s(r->replicas, &p->nreplicas);
    p->isr = mi_copy_i32s(r->isr, &p->nisr);
    p->adding = mi_copy_i32s(r->adding_replicas, &p->nadding);
    p->removing = mi_copy_i32s(r->removing_replicas, &p->nremoving);
    p->elr = mi_copy_i32s(r->eligible_leader_replicas, &p->nelr);
    p->last_elr = mi_copy_i32s(r->last_known_elr, &p->nlast_elr);
    mi_part_set_dirs(p, r->directories.v, r->directories.n);
    return 0;
}

/* Kafka's PartitionRegistration.merge: every change is a new partition
 * epoch; a new leader is also a new leader epoch. */
static int mi_apply_change(meta_image_t *img, const meta_part_change_rec_t *r, char *err,
                           size_t errlen)
{
    mi_topic_t *t = smap_get(&img->by_id, r->topic_id.b, 16);
    if (!t || r->partition_id < 0 || r->partition_id >= t->nparts ||
        !t->parts[r->partition_id].present)
        return mi_fail(err, errlen, "PartitionChangeRecord of an unknown partition", NULL);
    mi_part_t *p = &t->parts[r->partition_id];
    if (r->isr.n >= 0) {
        free(p->isr);
        p->isr = mi_copy_i32s(r->isr, &p->nisr);
    }
    if (r->replicas.n >= 0) {
        free(p->replicas);
        p->replicas = mi_copy_i32s(r->replicas, &p->nreplicas);
    }
    if (r->adding_replicas.n >= 0) {
        free(p->adding);
        p->adding = mi_copy_i32s(r->adding_replicas, &p->nadding);
    }
    if (r->removing_replicas.n >= 0) {
        free(p->removing);
        p->removing = mi_copy_i32s(r->removing_replicas, &p->nremoving);
    }
    if (r->eligible_leader_replicas.n >= 0) {
        free(p->elr);
        p->elr = mi_copy_i32s(r->eligible_leader_replicas, &p->nelr);
    }
    if (r->last_known_elr.n >= 0) {
        free(p->last_elr);
        p->last_elr = mi_copy_i32s(r->last_known_elr, &p->nlast_elr);
    }
    if (r->leader != -2) {
        p->leader = r->leader;
        p->leader_epoch++;
    }
    if (r->leader_recovery_state != -1)
        p->recovery_state = r->leader_recovery_state;
    /* New replicas come with their directories; so does a replica's move
     * to another dir (Kafka's AssignReplicasToDirs). */
    if (r->directories.n > 0 || r->replicas.n >= 0)
        mi_part_set_dirs(p, r->directories.v, r->directories.n > 0 ? r->directories.n : 0);
    p->partition_epoch++;
    return 0;
}

static void mi_config_del_resource(meta_image_t *img, int8_t type, const char *name, size_t len)
{
    char key[512];
    if (len > sizeof(key) - 1)
        return;
    mi_config_t *c = smap_del(&img->configs, key, mi_config_key(type, name, len, key, sizeof(key)));
    if (c)
        mi_config_free(c);
}

static int mi_apply_remove(meta_image_t *img, const uint8_t id[16], char *err, size_t errlen)
{
    mi_topic_t *t = smap_get(&img->by_id, id, 16);
    if (!t)
        return mi_fail(err, errlen, "RemoveTopicRecord of an unknown topic id", NULL);
    smap_del(&img->by_id, t->id, 16);
    smap_del(&img->by_name, t->name, t->name_len);
    if (t->name_len <= 255) {
        char norm[256];
        mi_norm(t->name, t->name_len, norm);
        if (smap_get(&img->by_norm, norm, t->name_len) == t)
            smap_del(&img->by_norm, norm, t->name_len);
    }
    /* A topic's configs go with it (Kafka's ConfigurationsDelta does the
     * same on replay), so a new topic of that name starts clean. */
    mi_config_del_resource(img, META_RES_TOPIC, t->name, t->name_len);
    mi_topic_free(t);
    return 0;
}

static void mi_config_unset(meta_image_t *img, mi_config_t *c, int i)
{
    free(c->v[i].key);
    free(c->v[i].value);
    c->v[i] = c->v[--c->n];
    if (c->n == 0)
        mi_config_del_resource(img, c->type, c->name, strlen(c->name));
}

static int mi_apply_config(meta_image_t *img, const meta_config_rec_t *r, char *err,
                           size_t errlen)
{
    char key[512], *name = NULL;
    size_t nlen = (size_t)r->resource_name.len;
    if (nlen > sizeof(key) - 1)
        return mi_fail(err, errlen, "ConfigRecord with an overlong resource name", NULL);
    size_t klen = mi_config_key(r->resource_type, r->resource_name.p, nlen, key, sizeof(key));
    mi_config_t *c = smap_get(&img->configs, key, klen);
    name = xstrndup(r->name.p, (size_t)r->name.len);
    for (int i = 0; c && i < c->n; i++) {
        if (strcmp(c->v[i].key, name) != 0)
            continue;
        if (r->value.len < 0) {
            mi_config_unset(img, c, i);
        } else {
            free(c->v[i].value);
            c->v[i].value = xstrndup(r->value.p, (size_t)r->value.len);
        }
        free(name);
        return 0;
    }
    if (r->value.len < 0) { /* deleting a key that is not set */
        free(name);
        return 0;
    }
    if (!c) {
        c = xcalloc(1, sizeof(*c));
        c->type = r->resource_type;
        c->name = xstrndup(r->resource_name.p, nlen);
        smap_put(&img->configs, key, klen, c);
    }
    if (c->n == c->cap) {
        c->cap = c->cap ? 2 * c->cap : 8;
        c->v = xrealloc(c->v, (size_t)c->cap * sizeof(*c->v));
    }
    c->v[c->n].key = name;
    c->v[c->n].value = xstrndup(r->value.p, (size_t)r->value.len);
    c->n++;
    return 0;
}

/* Level 0 takes the feature out of the finalized set, as Kafka's replay
 * does: a feature at 0 is one the cluster does not use. */
static void mi_apply_feature(meta_image_t *img, const meta_feature_rec_t *r)
{
    size_t len = (size_t)(r->name.len < 0 ? 0 : r->name.len);
    if (r->feature_level <= 0)
        smap_del(&img->features, r->name.p, len);
    else
        smap_put(&img->features, r->name.p, len, (void *)(intptr_t)r->feature_level);
}

int meta_image_apply(meta_image_t *img, const meta_rec_t *rec, char *err, size_t errlen)
{
    int rc = 0;
    switch (rec->type) {
    case META_REC_TOPIC:
        rc = mi_apply_topic(img, &rec->u.topic, err, errlen);
        break;
    case META_REC_PARTITION:
        rc = mi_apply_part(img, &rec->u.part, err, errlen);
        break;
    case META_REC_PARTITION_CHANGE:
        rc = mi_apply_change(img, &rec->u.change, err, errlen);
        break;
    case META_REC_CONFIG:
        rc = mi_apply_config(img, &rec->u.config, err, errlen);
        break;
    case META_REC_REMOVE_TOPIC:
        rc = mi_apply_remove(img, rec->u.remove_topic.topic_id.b, err, errlen);
        break;
    case META_REC_FEATURE_LEVEL:
        mi_apply_feature(img, &rec->u.feature);
        break;
    case META_REC_PRODUCER_IDS:
        if (rec->u.producer_ids.next_producer_id > img->next_producer_id)
            img->next_producer_id = rec->u.producer_ids.next_producer_id;
        break;
    default:
        rc = meta_image_apply_broker(img, rec, err, errlen);
        if (rc == 1)
            rc = 0;
        break;
    }
    if (rc == 0)
        img->records++;
    return rc;
}
