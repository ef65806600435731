/* The controller's broker config changes (CTL_ALTER_BROKER_CONFIGS): the
 * dynamic configs of the cluster-wide default (resource "") and of this
 * node (resource "<node id>"), kept as a KRaft cluster keeps them, as
 * ConfigRecords of BROKER resources. A change is checked as Kafka checks
 * one, first each key of the set it would make (cfg_broker_dyn_check),
 * then the whole config the broker would run with (the broker's own check:
 * its rules between keys, what the running broker can take), and is
 * committed as the records of the keys whose values it changes. Once
 * committed, the topic defaults follow (ctl_defaults_refresh), and the
 * partition layer and the broker apply it through the metadata log's
 * listener. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cfg_val.h"
#include "cluster/ctl_int.h"
#include "util/kerr.h"
#include "util/mem.h"

/* A resource's dynamic config set: copies, values never NULL. */
typedef struct ctl_set_s {
    mi_kv_t *v;
    int n;
} ctl_set_t;

static void ctl_set_put(ctl_set_t *s, const char *key, const char *value)
{
    int i;
    for (i = 0; i < s->n && strcmp(s->v[i].key, key); i++)
        ;
    if (i < s->n) {
        free(s->v[i].value);
        if (value) {
            s->v[i].value = xstrdup(value);
            return;
        }
        free(s->v[i].key);
        s->v[i] = s->v[--s->n];
        return;
    }
    if (!value)
        return;
    s->v = xrealloc(s->v, (size_t)(s->n + 1) * sizeof(*s->v));
    s->v[s->n].key = xstrdup(key);
    s->v[s->n++].value = xstrdup(value);
}

static void ctl_set_free(ctl_set_t *s)
{
    for (int i = 0; i < s->n; i++) {
        free(s->v[i].key);
        free(s->v[i].value);
    }
    free(s->v);
}

static const char *ctl_set_get(const mi_kv_t *v, int n, const char *key)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(v[i].key, key))
            return v[i].value;
    return NULL;
}

/* server.properties, then the default set, then this node's: the config
 * the broker would run with. */
static void ctl_merged(const ctl_t *ctl, const mi_config_t *dflt, const mi_config_t *node,
                       props_t *out)
{
    cfg_bview_t v = {node, dflt, ctl->props};
    cfg_bview_merge(&v, out);
}

/* The broker's check of the config the change would make: the new set
 * takes its resource's place. */
static int16_t ctl_broker_check(ctl_t *ctl, ctl_op_t *op, const ctl_set_t *s)
{
    const meta_image_t *img = &ctl->meta->img;
    mi_config_t set = {META_RES_BROKER, (char *)op->name, s->n, s->n, s->v};
    bool per_broker = *op->name != '\0';
    const mi_config_t *dflt = per_broker ? meta_image_config(img, META_RES_BROKER, "", 0) : &set;
    const mi_config_t *node =
        per_broker ? &set : meta_image_config(img, META_RES_BROKER, ctl->node_name,
                                              strlen(ctl->node_name));
    props_t merged;
    int16_t e;

    if (!ctl->broker_check)
        return KERR_NONE;
    ctl_merged(ctl, dflt, node, &merged);
    e = ctl->broker_check(ctl->broker_check_arg, &merged, op->msg, sizeof(op->msg));
    props_free(&merged);
    return e;
}

/* A copy of s that the batch frees (the op's strings may be the
 * request's). */
static const char *ctl_cfg_str(ctl_batch_t *b, const char *s)
{
    b->strs = xrealloc(b->strs, (size_t)(b->nstrs + 1) * sizeof(*b->strs));
    return b->strs[b->nstrs++] = xstrdup(s);
}

static void ctl_cfg_record(ctl_batch_t *b, const char *name, const char *key, const char *value)
{
    meta_rec_t *r = ctl_batch_add(b, META_REC_CONFIG);
    const char *n = ctl_cfg_str(b, name), *k = ctl_cfg_str(b, key);

    r->u.config.resource_type = META_RES_BROKER;
    r->u.config.resource_name.p = n;
    r->u.config.resource_name.len = (int32_t)strlen(n);
    r->u.config.name.p = k;
    r->u.config.name.len = (int32_t)strlen(k);
    r->u.config.value.p = value ? ctl_cfg_str(b, value) : NULL;
    r->u.config.value.len = value ? (int32_t)strlen(value) : -1;
}

void ctl_elr_safety(ctl_t *ctl, ctl_batch_t *b)
{
    const meta_image_t *img = &ctl->meta->img;
    char v[16];
    size_t pos = 0;
    const mi_config_t *c;
    if (!meta_image_config_get(img, META_RES_BROKER, "", 0, "min.insync.replicas")) {
        snprintf(v, sizeof(v), "%d", (int)ctl->base.min_insync_replicas);
        ctl_cfg_record(b, "", "min.insync.replicas", v);
    }
    while ((c = meta_image_config_next(img, &pos)))
        if (c->type == META_RES_BROKER && *c->name &&
            ctl_set_get(c->v, c->n, "min.insync.replicas"))
            ctl_cfg_record(b, c->name, "min.insync.replicas", NULL);
}

void ctl_boot_elr(ctl_t *ctl, ctl_batch_t *b)
{
    char v[16];
    if (ctl->boot_elr < 1)
        return;
    meta_rec_t *fr = ctl_batch_add(b, META_REC_FEATURE_LEVEL);
    fr->u.feature.name.p = CTL_FEATURE_ELR;
    fr->u.feature.name.len = (int32_t)strlen(CTL_FEATURE_ELR);
    fr->u.feature.feature_level = ctl->boot_elr;
    snprintf(v, sizeof(v), "%d", (int)ctl->base.min_insync_replicas);
    ctl_cfg_record(b, "", "min.insync.replicas", v);
}

/* The records that turn cur into s: a key whose value changes or comes,
 * and one that goes (value null). */
static void ctl_cfg_records(const char *name, const mi_config_t *cur, const ctl_set_t *s,
                            ctl_batch_t *b)
{
    for (int i = 0; i < s->n; i++) {
        const char *old = cur ? ctl_set_get(cur->v, cur->n, s->v[i].key) : NULL;
        if (!old || strcmp(old, s->v[i].value))
            ctl_cfg_record(b, name, s->v[i].key, s->v[i].value);
    }
    for (int i = 0; cur && i < cur->n; i++)
        if (!ctl_set_get(s->v, s->n, cur->v[i].key))
            ctl_cfg_record(b, name, cur->v[i].key, NULL);
}

/* Kafka's isDisallowedBrokerMinIsrTransition and
 * isDisallowedClusterMinIsrTransition: with eligible leader replicas on,
 * a change that would write a broker-level min.insync.replicas, or remove
 * the cluster-level one, is refused (each node must judge min ISR the
 * same way: the ELR depends on it). */
static int16_t ctl_elr_min_isr_check(ctl_t *ctl, ctl_op_t *op, const mi_config_t *cur,
                                     const ctl_set_t *s)
{
    const char *key = "min.insync.replicas";
    const char *old = cur ? ctl_set_get(cur->v, cur->n, key) : NULL;
    const char *now = ctl_set_get(s->v, s->n, key);
    bool written = now ? !old || strcmp(old, now) : old != NULL;
    if (!written || meta_image_feature(&ctl->meta->img, CTL_FEATURE_ELR) < 1)
        return KERR_NONE;
    if (*op->name)
        snprintf(op->msg, sizeof(op->msg), "Broker-level %s cannot be altered while ELR is "
                 "enabled.", key);
    else if (!now)
        snprintf(op->msg, sizeof(op->msg), "Cluster-level %s cannot be removed while ELR is "
                 "enabled.", key);
    else
        return KERR_NONE;
    return KERR_INVALID_CONFIG;
}

/* The cluster's min.insync.replicas becoming value: the ELR of every
 * topic without its own. */
static void ctl_elr_cluster_min_isr(ctl_t *ctl, const char *value, ctl_batch_t *b)
{
    const meta_image_t *img = &ctl->meta->img;
    size_t pos = 0;
    const mi_topic_t *t;
    char v[32];
    if (!value) { /* back to server.properties' */
        snprintf(v, sizeof(v), "%d", (int)ctl->base.min_insync_replicas);
        value = v;
    }
    while ((t = meta_image_topic_next(img, &pos)))
        if (!meta_image_config_get(img, META_RES_TOPIC, t->name, t->name_len,
                                   "min.insync.replicas"))
            ctl_elr_min_isr(ctl, t, value, b);
}

int16_t ctl_plan_broker_configs(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    const char *name = op->name ? op->name : "";
    const mi_config_t *cur =
        meta_image_config(&ctl->meta->img, META_RES_BROKER, name, strlen(name));
    ctl_set_t s = {NULL, 0};
    int16_t e;

    op->name = name;
    if (*name && strcmp(name, ctl->node_name) && !ctl->quorum) {
        snprintf(op->msg, sizeof(op->msg), "Unexpected broker id, expected %s, but received %s",
                 ctl->node_name, name);
        return KERR_INVALID_REQUEST;
    }
    for (int i = 0; cur && !op->replace && i < cur->n; i++)
        ctl_set_put(&s, cur->v[i].key, cur->v[i].value);
    for (int i = 0; i < op->nkv; i++)
        ctl_set_put(&s, op->kv[i].key, op->kv[i].value);
    e = cfg_broker_dyn_check(s.v, s.n, *name != '\0', op->msg, sizeof(op->msg));
    if (!e)
        e = ctl_elr_min_isr_check(ctl, op, cur, &s);
    if (!e)
        e = ctl_broker_check(ctl, op, &s);
    if (!e && !op->validate_only) {
        const char *k = "min.insync.replicas", *now = ctl_set_get(s.v, s.n, k);
        ctl_cfg_records(name, cur, &s, b);
        if (!*name && ctl_min_isr_changes(ctl, cur ? ctl_set_get(cur->v, cur->n, k) : NULL, now))
            ctl_elr_cluster_min_isr(ctl, now, b);
    }
    ctl_set_free(&s);
    return e;
}

/* ---- cordoned log dirs ---- */

typedef struct ctl_cordon_s {
    const char *path;
    int found;
} ctl_cordon_t;

static int ctl_cordon_item(const char *item, size_t len, void *arg)
{
    ctl_cordon_t *c = arg;
    c->found |= (len == 1 && *item == '*') || (strlen(c->path) == len &&
                                                !memcmp(c->path, item, len));
    return 0;
}

int ctl_dir_cordoned(const ctl_t *ctl, int i)
{
    cfg_bview_t bv;
    ctl_cordon_t c = {log_mgr_dir_path(ctl->logs, i), 0};
    const char *v;

    cfg_bview_init(&bv, &ctl->meta->img, ctl->node_name, ctl->props);
    if ((v = cfg_bview_set(&bv, "cordoned.log.dirs", NULL)))
        cfg_val_items(v, ctl_cordon_item, &c);
    return c.found;
}

int16_t ctl_check_placeable(const ctl_t *ctl, ctl_op_t *op)
{
    int nd = log_mgr_ndirs(ctl->logs);

    for (int d = 0; d < nd; d++)
        if (!ctl_dir_cordoned(ctl, d))
            return KERR_NONE;
    snprintf(op->msg, sizeof(op->msg), "Unable to replicate the partition 1 time(s): All "
             "brokers are currently fenced, or have all their log directories cordoned.");
    return KERR_INVALID_REPLICATION_FACTOR;
}

void ctl_defaults_refresh(ctl_t *ctl)
{
    cfg_bview_t bv;

    cfg_bview_init(&bv, &ctl->meta->img, ctl->node_name, ctl->props);
    ctl->defaults = ctl->base;
    cfg_topic_apply_broker(&ctl->defaults, &bv);
    ctl_elect_defaults(ctl, &bv);
}
