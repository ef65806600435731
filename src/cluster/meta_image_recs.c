/* The image as records (meta_image_recs.h). Each record is built on the
 * stack, pointing into the image, and handed to the callback at once: a
 * snapshot of many topics needs no copy of the image. */
#include "cluster/meta_image_recs.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

#define MIR_METADATA_VERSION "metadata.version"

static meta_str_t mir_str(const char *s, size_t len)
{
    meta_str_t v = {s, (int32_t)len};
    return v;
}

static void mir_feature(const char *name, size_t len, int16_t level, meta_image_rec_fn *fn,
                        void *arg)
{
    meta_rec_t rec;
    meta_rec_init(&rec, META_REC_FEATURE_LEVEL);
    rec.version = 0;
    rec.u.feature.name = mir_str(name, len);
    rec.u.feature.feature_level = level;
    fn(arg, &rec);
}

typedef struct mir_feat_s {
    meta_str_t name;
    int16_t level;
} mir_feat_t;

static int mir_feat_cmp(const void *a, const void *b)
{
    const meta_str_t *x = &((const mir_feat_t *)a)->name, *y = &((const mir_feat_t *)b)->name;
    int32_t n = x->len < y->len ? x->len : y->len;
    int c = memcmp(x->p, y->p, (size_t)n);
    return c ? c : (x->len > y->len) - (x->len < y->len);
}

static int mir_is_mv(meta_str_t name)
{
    return name.len == (int32_t)strlen(MIR_METADATA_VERSION) &&
           !memcmp(name.p, MIR_METADATA_VERSION, (size_t)name.len);
}

void meta_image_features_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg)
{
    mir_feat_t *v = NULL, f;
    size_t pos = 0, n = 0, cap = 0;
    int mv = meta_image_feature(img, MIR_METADATA_VERSION);

    if (mv > 0)
        mir_feature(MIR_METADATA_VERSION, strlen(MIR_METADATA_VERSION), (int16_t)mv, fn, arg);
    while (meta_image_feature_next(img, &pos, &f.name, &f.level)) {
        if (mir_is_mv(f.name))
            continue;
        if (n == cap) {
            cap = cap ? 2 * cap : 8;
            v = xrealloc(v, cap * sizeof(*v));
        }
        v[n++] = f;
    }
    if (n)
        qsort(v, n, sizeof(*v), mir_feat_cmp);
    for (size_t i = 0; i < n; i++)
        mir_feature(v[i].name.p, (size_t)v[i].name.len, v[i].level, fn, arg);
    free(v);
}

/* Kafka writes one directory per replica; the image knows ours (the
 * first), the others are DirectoryId.UNASSIGNED (zero). rec is the
 * topic's PartitionRecord with its defaults, made once per topic (the
 * schema's init is the costly part of a record). */
static void mir_partition(const mi_topic_t *t, int32_t id, meta_rec_t *rec,
                          meta_image_rec_fn *fn, void *arg)
{
    const mi_part_t *p = &t->parts[id];
    proto_uuid_t stack[8], *dirs = stack;
    int32_t none = 0;
    meta_part_rec_t *r = &rec->u.part;

    if (p->nreplicas > 8)
        dirs = xcalloc((size_t)p->nreplicas, sizeof(*dirs));
    else
        memset(stack, 0, sizeof(stack));
    for (int32_t i = 0; p->dirs && i < p->nreplicas; i++)
        memcpy(dirs[i].b, p->dirs[i], 16);
    r->partition_id = id;
    r->replicas.n = p->nreplicas;
    r->replicas.v = p->replicas ? p->replicas : &none;
    r->isr.n = p->nisr;
    r->isr.v = p->isr ? p->isr : &none;
    r->adding_replicas.n = p->nadding;
    r->adding_replicas.v = p->adding ? p->adding : &none;
    r->removing_replicas.n = p->nremoving;
    r->removing_replicas.v = p->removing ? p->removing : &none;
    /* tagged: written only when not empty, as Kafka writes them */
    r->eligible_leader_replicas = p->nelr > 0 ? (proto_int32_array_t){p->nelr, p->elr}
                                              : (proto_int32_array_t){-1, NULL};
    r->last_known_elr = p->nlast_elr > 0 ? (proto_int32_array_t){p->nlast_elr, p->last_elr}
                                         : (proto_int32_array_t){-1, NULL};
    r->leader = p->leader;
    r->leader_epoch = p->leader_epoch;
    r->partition_epoch = p->partition_epoch;
    r->leader_recovery_state = p->recovery_state;
    r->directories.n = p->nreplicas > 0 ? p->nreplicas : 0;
    r->directories.v = dirs;
    fn(arg, rec);
    if (dirs != stack)
        free(dirs);
}

static void mir_topic(const mi_topic_t *t, meta_image_rec_fn *fn, void *arg)
{
    meta_rec_t rec;
    meta_rec_init(&rec, META_REC_TOPIC);
    rec.version = 0;
    rec.u.topic.name = mir_str(t->name, t->name_len);
    memcpy(rec.u.topic.topic_id.b, t->id, 16);
    fn(arg, &rec);
    meta_rec_init(&rec, META_REC_PARTITION);
    rec.version = META_PART_REC_VERSION;
    memcpy(rec.u.part.topic_id.b, t->id, 16);
    for (int32_t i = 0; i < t->nparts; i++)
        if (t->parts[i].present)
            mir_partition(t, i, &rec, fn, arg);
}

void meta_image_topics_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg)
{
    size_t pos = 0;
    const mi_topic_t *t;
    while ((t = meta_image_topic_next(img, &pos)) != NULL)
        mir_topic(t, fn, arg);
}

void meta_image_configs_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg)
{
    size_t pos = 0;
    const mi_config_t *c;
    meta_rec_t rec;

    while ((c = meta_image_config_next(img, &pos)) != NULL) {
        for (int i = 0; i < c->n; i++) {
            meta_rec_init(&rec, META_REC_CONFIG);
            rec.version = 0;
            rec.u.config.resource_type = c->type;
            rec.u.config.resource_name = mir_str(c->name, strlen(c->name));
            rec.u.config.name = mir_str(c->v[i].key, strlen(c->v[i].key));
            rec.u.config.value = mir_str(c->v[i].value, strlen(c->v[i].value));
            fn(arg, &rec);
        }
    }
}

void meta_image_pids_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg)
{
    meta_rec_t rec;
    if (img->next_producer_id <= 0)
        return;
    meta_rec_init(&rec, META_REC_PRODUCER_IDS);
    rec.version = 0;
    rec.u.producer_ids.broker_id = -1;
    rec.u.producer_ids.broker_epoch = -1;
    rec.u.producer_ids.next_producer_id = img->next_producer_id;
    fn(arg, &rec);
}

/* The endpoints and features of a registration into the record's arrays
 * (eps and fs: at least n + 1 entries, pointing into the image). */
#define MIR_FILL_ENDPOINTS(eps, src, n)                                                          \
    for (int i_ = 0; i_ < (n); i_++) {                                                           \
        (eps)[i_].name = mir_str((src)[i_].name, strlen((src)[i_].name));                        \
        (eps)[i_].host = mir_str((src)[i_].host, strlen((src)[i_].host));                        \
        (eps)[i_].port = (uint16_t)(src)[i_].port;                                               \
        (eps)[i_].security_protocol = (src)[i_].security_protocol;                               \
    }
#define MIR_FILL_FEATURES(fs, src, n)                                                            \
    for (int i_ = 0; i_ < (n); i_++) {                                                           \
        (fs)[i_].name = mir_str((src)[i_].name, strlen((src)[i_].name));                         \
        (fs)[i_].min_supported_version = (src)[i_].min;                                          \
        (fs)[i_].max_supported_version = (src)[i_].max;                                          \
    }

/* RegisterBrokerRecord v3 (log dirs, as Kafka writes it from 3.7-IV2's
 * directory assignment on): the registration as it stands, fenced and in
 * controlled shutdown as the later records left it. */
static void mir_broker(const mi_broker_t *b, meta_image_rec_fn *fn, void *arg)
{
    meta_rec_t rec;
    proto_rec_register_broker_record_t *r = &rec.u.register_broker;
    proto_rec_register_broker_record_broker_endpoint_t *eps =
        xcalloc((size_t)b->nendpoints + 1, sizeof(*eps));
    proto_rec_register_broker_record_broker_feature_t *fs =
        xcalloc((size_t)b->nfeatures + 1, sizeof(*fs));
    proto_uuid_t *dirs = xcalloc((size_t)b->ndirs + 1, sizeof(*dirs));

    meta_rec_init(&rec, META_REC_REGISTER_BROKER);
    rec.version = 3;
    r->broker_id = b->id;
    memcpy(r->incarnation_id.b, b->incarnation, 16);
    r->broker_epoch = b->epoch;
    r->is_migrating_zk_broker = b->zk_migrating;
    MIR_FILL_ENDPOINTS(eps, b->endpoints, b->nendpoints);
    r->end_points.n = b->nendpoints;
    r->end_points.v = eps;
    MIR_FILL_FEATURES(fs, b->features, b->nfeatures);
    r->features.n = b->nfeatures;
    r->features.v = fs;
    r->rack = b->rack ? mir_str(b->rack, strlen(b->rack)) : (meta_str_t){NULL, -1};
    r->fenced = b->fenced;
    r->in_controlled_shutdown = b->in_controlled_shutdown;
    for (int i = 0; i < b->ndirs; i++)
        memcpy(dirs[i].b, b->dirs[i], 16);
    r->log_dirs.n = b->ndirs;
    r->log_dirs.v = dirs;
    fn(arg, &rec);
    free(eps);
    free(fs);
    free(dirs);
}

static void mir_controller(const mi_controller_t *c, meta_image_rec_fn *fn, void *arg)
{
    meta_rec_t rec;
    proto_rec_register_controller_record_t *r = &rec.u.register_controller;
    proto_rec_register_controller_record_controller_endpoint_t *eps =
        xcalloc((size_t)c->nendpoints + 1, sizeof(*eps));
    proto_rec_register_controller_record_controller_feature_t *fs =
        xcalloc((size_t)c->nfeatures + 1, sizeof(*fs));

    meta_rec_init(&rec, META_REC_REGISTER_CONTROLLER);
    rec.version = 0;
    r->controller_id = c->id;
    memcpy(r->incarnation_id.b, c->incarnation, 16);
    r->zk_migration_ready = c->zk_migration_ready;
    MIR_FILL_ENDPOINTS(eps, c->endpoints, c->nendpoints);
    r->end_points.n = c->nendpoints;
    r->end_points.v = eps;
    MIR_FILL_FEATURES(fs, c->features, c->nfeatures);
    r->features.n = c->nfeatures;
    r->features.v = fs;
    fn(arg, &rec);
    free(eps);
    free(fs);
}

void meta_image_cluster_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg)
{
    for (int i = 0; i < img->nbrokers; i++)
        mir_broker(img->brokers[i], fn, arg);
    for (int i = 0; i < img->ncontrollers; i++)
        mir_controller(img->controllers[i], fn, arg);
}

void meta_image_records(const meta_image_t *img, meta_image_rec_fn *fn, void *arg)
{
    meta_image_features_records(img, fn, arg);
    meta_image_cluster_records(img, fn, arg);
    meta_image_topics_records(img, fn, arg);
    meta_image_configs_records(img, fn, arg);
    meta_image_pids_records(img, fn, arg);
}
