/* The controller's topic changes: each kind's checks, in Kafka's order and
 * with Kafka's messages, against the metadata image, and the records that
 * make it, in Kafka's order (a topic, its configs, its partitions). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cfg_val.h"
#include "cluster/ctl_int.h"
#include "util/kerr.h"
#include "util/mem.h"
#include "util/uuid.h"

/* Kafka's controller caps what one request may create. */
#define CTL_MAX_NEW_PARTITIONS 100000

/* ---- records ---- */

meta_rec_t *ctl_batch_add(ctl_batch_t *b, int16_t type)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 16;
        b->v = xrealloc(b->v, (size_t)b->cap * sizeof(*b->v));
    }
    meta_rec_init(&b->v[b->n], type);
    return &b->v[b->n++];
}

void *ctl_batch_block(ctl_batch_t *b, size_t n)
{
    b->strs = xrealloc(b->strs, (size_t)(b->nstrs + 1) * sizeof(*b->strs));
    return b->strs[b->nstrs++] = xcalloc(1, n ? n : 1);
}

void ctl_batch_free(ctl_batch_t *b)
{
    for (int i = 0; i < b->nstrs; i++)
        free(b->strs[i]);
    free(b->strs);
    free(b->v);
    memset(b, 0, sizeof(*b));
}

static meta_str_t ctl_mstr(const char *s, size_t len)
{
    meta_str_t m = {s, s ? (int32_t)len : -1};
    return m;
}

/* A copy the batch owns (the op's strings may be the request's). */
static const char *ctl_batch_str(ctl_batch_t *b, const char *s, size_t len)
{
    b->strs = xrealloc(b->strs, (size_t)(b->nstrs + 1) * sizeof(*b->strs));
    return b->strs[b->nstrs++] = xstrndup(s, len);
}

/* The log dir of a replica on another broker: its only one, else
 * unassigned (zero), as Kafka's controller assigns it. */
static void ctl_remote_dir(const ctl_t *ctl, int32_t id, uint8_t out[16])
{
    const mi_broker_t *mb = meta_image_broker(&ctl->meta->img, id);
    memset(out, 0, 16);
    if (mb && mb->ndirs == 1)
        memcpy(out, mb->dirs[0], 16);
}

/* One PartitionRecord: replicas rep[0..rf) (the request's or the
 * placer's, copied), the active ones the ISR and the first of them the
 * leader; dirs[0..rf) its replicas' log dirs. */
static void ctl_batch_partition(ctl_batch_t *b, ctl_t *ctl, const uint8_t id[16], int32_t p,
                                const int32_t *rep, int rf, proto_uuid_t *dirs)
{
    meta_part_rec_t *pr = &ctl_batch_add(b, META_REC_PARTITION)->u.part;
    int32_t *v = ctl_batch_block(b, (size_t)rf * 2 * sizeof(int32_t));
    int nisr = 0;
    memcpy(v, rep, (size_t)rf * sizeof(int32_t));
    for (int k = 0; k < rf; k++)
        if (rep[k] == ctl->node_id || meta_image_broker_active(&ctl->meta->img, rep[k]) ||
            ctl->meta->img.nbrokers == 0)
            v[rf + nisr++] = rep[k];
    pr->partition_id = p;
    memcpy(pr->topic_id.b, id, 16);
    pr->replicas.n = rf;
    pr->replicas.v = v;
    pr->isr.n = nisr;
    pr->isr.v = v + rf;
    pr->removing_replicas.n = pr->adding_replicas.n = 0;
    pr->leader = nisr ? v[rf] : -1;
    pr->leader_epoch = 0;
    pr->partition_epoch = 0;
    pr->directories.n = rf;
    pr->directories.v = dirs;
}

void ctl_batch_partitions(ctl_batch_t *b, ctl_t *ctl, const uint8_t id[16], int32_t from,
                          int32_t to, const int32_t *assign, int rf)
{
    int nd = log_mgr_ndirs(ctl->logs);
    int *load = xcalloc((size_t)nd + 1, sizeof(int));

    if (!assign)
        rf = 1;
    for (int d = 0; d < nd; d++) /* a cordoned dir takes no new partition */
        load[d] = ctl_dir_cordoned(ctl, d) ? INT32_MAX : log_mgr_dir_nparts(ctl->logs, d);
    for (int32_t p = from; p < to; p++) {
        const int32_t *rep = assign ? &assign[(size_t)(p - from) * (size_t)rf] : &ctl->node_id;
        proto_uuid_t *dirs = ctl_batch_block(b, (size_t)rf * sizeof(proto_uuid_t));
        for (int k = 0; k < rf; k++) {
            if (rep[k] != ctl->node_id) {
                ctl_remote_dir(ctl, rep[k], dirs[k].b);
                continue;
            }
            int best = 0;
            for (int d = 1; d < nd; d++) /* where the log manager would put it */
                if (load[d] < load[best])
                    best = d;
            if (load[best] < INT32_MAX)
                load[best]++;
            log_mgr_dir_id(ctl->logs, best, dirs[k].b);
        }
        ctl_batch_partition(b, ctl, id, p, rep, rf, dirs);
    }
    free(load);
}

static void ctl_batch_config(ctl_batch_t *b, const char *topic, size_t len, const char *key,
                             const char *value)
{
    meta_rec_t *r = ctl_batch_add(b, META_REC_CONFIG);
    r->u.config.resource_type = META_RES_TOPIC;
    r->u.config.resource_name = ctl_mstr(topic, len);
    r->u.config.name = ctl_mstr(ctl_batch_str(b, key, strlen(key)), strlen(key));
    r->u.config.value = value ? ctl_mstr(ctl_batch_str(b, value, strlen(value)), strlen(value))
                              : ctl_mstr(NULL, 0);
}

/* ---- checks ---- */

static int16_t ctl_fail(ctl_op_t *op, int16_t err, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

static int16_t ctl_fail(ctl_op_t *op, int16_t err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(op->msg, sizeof(op->msg), fmt, ap);
    va_end(ap);
    return err;
}

static int ctl_name_ok(const char *name, size_t len)
{
    if (len == 0 || len > 249)
        return 0;
    if ((len == 1 && name[0] == '.') || (len == 2 && name[0] == '.' && name[1] == '.'))
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = name[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

int16_t ctl_topic_name_check(const char *name, size_t len, char *err, size_t errlen)
{
    if (ctl_name_ok(name, len))
        return KERR_NONE;
    if (!err)
        return KERR_INVALID_TOPIC_EXCEPTION;
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

/* kv as a topic's complete set of dynamic configs, into *out. */
static int16_t ctl_check_configs(ctl_t *ctl, ctl_op_t *op, topic_cfg_t *out)
{
    *out = ctl->defaults;
    /* As Kafka: an unknown key is reported before any bad value. */
    for (int i = 0; i < op->nkv; i++)
        if (!cfg_topic_find(op->kv[i].key, strlen(op->kv[i].key)))
            return ctl_fail(op, KERR_INVALID_CONFIG, "Unknown topic config name: %s",
                            op->kv[i].key);
    for (int i = 0; i < op->nkv; i++) {
        const cfg_topic_key_t *k = cfg_topic_find(op->kv[i].key, strlen(op->kv[i].key));
        int16_t e;
        if ((e = cfg_topic_check(k, op->kv[i].value, op->msg, sizeof(op->msg))))
            return e;
        cfg_topic_apply(out, k, op->kv[i].value);
    }
    return cfg_topic_check_all(out, op->msg, sizeof(op->msg));
}

/* The replication factor of a new topic: -1 is the default (1). */
static int16_t ctl_rf(const ctl_op_t *op)
{
    return op->rf == -1 ? 1 : op->rf;
}

/* What Kafka's controller checks before it places replicas: the name, the
 * internal names, existence, a '.'/'_' collision, the configs, then the
 * replication factor and the partition count. */
static int16_t ctl_check_create(ctl_t *ctl, ctl_op_t *op)
{
    const meta_image_t *img = &ctl->meta->img;
    const mi_topic_t *other;
    topic_cfg_t cfg;
    int16_t e;

    if ((e = ctl_topic_name_check(op->name, op->name_len, op->msg, sizeof(op->msg))))
        return e;
    if (op->name_len == strlen(META_LOG_TOPIC) && !memcmp(op->name, META_LOG_TOPIC, op->name_len))
        return ctl_fail(op, KERR_INVALID_REQUEST, "Creation of internal topic %s is prohibited.",
                        META_LOG_TOPIC);
    if (meta_image_topic(img, op->name, op->name_len))
        return ctl_fail(op, KERR_TOPIC_ALREADY_EXISTS, "Topic '%.*s' already exists.",
                        (int)op->name_len, op->name);
    if ((other = meta_image_topic_colliding(img, op->name, op->name_len)))
        return ctl_fail(op, KERR_INVALID_TOPIC_EXCEPTION,
                        "Topic '%.*s' collides with existing topic: %s", (int)op->name_len,
                        op->name, other->name);
    if ((e = ctl_check_configs(ctl, op, &cfg)))
        return e;
    if (op->rf == 0 || op->rf < -1)
        return ctl_fail(op, KERR_INVALID_REPLICATION_FACTOR,
                        "Replication factor must be larger than 0, or -1 to use the default "
                        "value.");
    int32_t *none = NULL;
    if (op->nassign <= 0) /* enough brokers, one unfenced */
        e = ctl_place(ctl, op, 0, ctl_rf(op), &none);
    free(none);
    if (e)
        return e;
    if (op->nparts < 1)
        return ctl_fail(op, KERR_INVALID_PARTITIONS,
                        "Number of partitions was set to an invalid non-positive value.");
    if (op->nparts > CTL_MAX_NEW_PARTITIONS)
        return ctl_fail(op, KERR_POLICY_VIOLATION,
                        "Excessively large number of partitions per request.");
    return ctl_check_placeable(ctl, op);
}

static int ctl_new_id(const ctl_t *ctl, uint8_t id[16])
{
    do {
        if (uuid_generate(id) < 0)
            return -1;
    } while (meta_image_topic_by_id(&ctl->meta->img, id));
    return 0;
}

/* The new topic's records (none for validate_only): its TopicRecord,
 * ConfigRecords and PartitionRecords. */
static int16_t ctl_batch_create(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b, const int32_t *assign,
                                int rf)
{
    if (ctl_new_id(ctl, op->created_id) < 0)
        return ctl_fail(op, KERR_UNKNOWN_SERVER_ERROR, "No topic id could be generated");
    if (op->validate_only)
        return KERR_NONE;
    const char *name = ctl_batch_str(b, op->name, op->name_len);
    meta_rec_t *r = ctl_batch_add(b, META_REC_TOPIC);
    r->u.topic.name = ctl_mstr(name, op->name_len);
    memcpy(r->u.topic.topic_id.b, op->created_id, 16);
    for (int i = 0; i < op->nkv; i++)
        if (op->kv[i].value)
            ctl_batch_config(b, name, op->name_len, op->kv[i].key, op->kv[i].value);
    ctl_batch_partitions(b, ctl, op->created_id, 0, op->nparts, assign, rf);
    return KERR_NONE;
}

/* The new topic's replicas: the request's (checked against the
 * registered brokers), else the placer's. */
static int16_t ctl_create_replicas(ctl_t *ctl, ctl_op_t *op, int32_t **assign, int *rf)
{
    *rf = ctl_rf(op);
    if (op->nassign > 0)
        return ctl_assignment(ctl, op, 0, -1, assign, rf);
    return ctl_place(ctl, op, op->nparts, ctl_rf(op), assign);
}

static int16_t ctl_plan_create(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    int32_t *assign = NULL;
    int rf;
    int16_t e = ctl_check_create(ctl, op);
    if (!e)
        e = ctl_create_replicas(ctl, op, &assign, &rf);
    if (!e)
        e = ctl_batch_create(ctl, op, b, assign, rf);
    free(assign);
    return e;
}

static const mi_topic_t *ctl_topic(ctl_t *ctl, ctl_op_t *op)
{
    return meta_image_topic_by_id(&ctl->meta->img, op->topic_id);
}

static int16_t ctl_plan_delete(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    if (!ctl_topic(ctl, op))
        return ctl_fail(op, KERR_UNKNOWN_TOPIC_ID, "This server does not host this topic ID.");
    if (op->validate_only)
        return KERR_NONE;
    meta_rec_t *r = ctl_batch_add(b, META_REC_REMOVE_TOPIC);
    memcpy(r->u.remove_topic.topic_id.b, op->topic_id, 16);
    return KERR_NONE;
}

/* The count of an explicit assignment, then its brokers (ctl_place.c);
 * without one, the placer's, at the replication factor of partition 0. */
static int16_t ctl_new_replicas(ctl_t *ctl, ctl_op_t *op, const mi_topic_t *t, int32_t **assign,
                                int *rf)
{
    int32_t adding = op->nparts - t->nparts;
    int rf_now = t->nparts > 0 && t->parts[0].present ? t->parts[0].nreplicas : 1;
    *assign = NULL;
    *rf = rf_now;
    if (op->nassign < 0)
        return ctl_place(ctl, op, adding, (int16_t)rf_now, assign);
    if (op->nassign != adding)
        return ctl_fail(op, KERR_INVALID_REPLICA_ASSIGNMENT,
                        "Attempted to add %d additional partition(s), but only %d assignment(s) "
                        "were specified.", adding, op->nassign);
    return ctl_assignment(ctl, op, t->nparts, rf_now, assign, rf);
}

/* Counts first (Kafka's order), then the assignment. */
static int16_t ctl_plan_partitions(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    const mi_topic_t *t = ctl_topic(ctl, op);
    int16_t e;

    if (!t)
        return ctl_fail(op, KERR_UNKNOWN_TOPIC_OR_PARTITION,
                        "This server does not host this topic-partition.");
    if (op->nparts == t->nparts)
        return ctl_fail(op, KERR_INVALID_PARTITIONS, "Topic already has %d partition(s).",
                        t->nparts);
    if (op->nparts < t->nparts)
        return ctl_fail(op, KERR_INVALID_PARTITIONS,
                        "The topic %s currently has %d partition(s); %d would not be an "
                        "increase.", t->name, t->nparts, op->nparts);
    if (op->nparts - t->nparts > CTL_MAX_NEW_PARTITIONS)
        return ctl_fail(op, KERR_POLICY_VIOLATION,
                        "Excessively large number of partitions per request.");
    int32_t *assign;
    int rf;
    if ((e = ctl_new_replicas(ctl, op, t, &assign, &rf)) == KERR_NONE &&
        (e = ctl_check_placeable(ctl, op)) == KERR_NONE && !op->validate_only)
        ctl_batch_partitions(b, ctl, op->topic_id, t->nparts, op->nparts, assign, rf);
    free(assign);
    return e;
}

/* ---- configs ---- */

/* The dynamic config set after a change: copies of the current keys
 * (unless replaced) with kv applied; value NULL = removed. */
typedef struct ctl_cfgset_s {
    ctl_kv_t *v;
    int n;
} ctl_cfgset_t;

static void ctl_cfgset_put(ctl_cfgset_t *s, const char *key, const char *value)
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

static void ctl_cfgset_free(ctl_cfgset_t *s)
{
    for (int i = 0; i < s->n; i++) {
        free((char *)s->v[i].key);
        free((char *)s->v[i].value);
    }
    free(s->v);
}

/* The records that turn the current set cur into s. */
static void ctl_cfgset_records(const ctl_cfgset_t *s, const mi_config_t *cur, const mi_topic_t *t,
                               ctl_batch_t *b)
{
    const char *name = ctl_batch_str(b, t->name, t->name_len);
    for (int i = 0; i < s->n; i++) {
        const char *old = NULL;
        for (int j = 0; cur && j < cur->n; j++)
            if (!strcmp(cur->v[j].key, s->v[i].key))
                old = cur->v[j].value;
        if ((!old && !s->v[i].value) || (old && s->v[i].value && !strcmp(old, s->v[i].value)))
            continue;
        ctl_batch_config(b, name, t->name_len, s->v[i].key, s->v[i].value);
    }
}

/* Unknown keys may only be deleted; the set as a whole must be valid. */
static int16_t ctl_cfgset_check(ctl_t *ctl, const ctl_cfgset_t *s, ctl_op_t *op)
{
    topic_cfg_t out = ctl->defaults;
    int16_t e;
    for (int i = 0; i < op->nkv; i++)
        if (op->kv[i].value && !cfg_topic_find(op->kv[i].key, strlen(op->kv[i].key)))
            return ctl_fail(op, KERR_INVALID_CONFIG, "Unknown topic config name: %s",
                            op->kv[i].key);
    for (int i = 0; i < s->n; i++) {
        const cfg_topic_key_t *k = cfg_topic_find(s->v[i].key, strlen(s->v[i].key));
        if (!k || !s->v[i].value)
            continue;
        if ((e = cfg_topic_check(k, s->v[i].value, op->msg, sizeof(op->msg))))
            return e;
        cfg_topic_apply(&out, k, s->v[i].value);
    }
    return cfg_topic_check_all(&out, op->msg, sizeof(op->msg));
}

bool ctl_min_isr_changes(const ctl_t *ctl, const char *old, const char *now)
{
    if (meta_image_feature(&ctl->meta->img, CTL_FEATURE_ELR) < 1)
        return false;
    return old && now ? strcmp(old, now) != 0 : old != now;
}

void ctl_elr_min_isr(ctl_t *ctl, const mi_topic_t *t, const char *value, ctl_batch_t *b)
{
    char buf[32];
    int64_t n = ctl->bkr.min_isr_default;
    if (value && cfg_val_long(cfg_val_trim(value, buf, sizeof(buf)), &n) < 0)
        return;
    bkr_out_reset(&ctl->bout);
    bkr_min_isr_changed(&ctl->bkr, &ctl->meta->img, t, n, &ctl->bout);
    for (int i = 0; i < ctl->bout.n; i++) /* encoded at submit, as bkr's others */
        *ctl_batch_add(b, ctl->bout.v[i].type) = ctl->bout.v[i];
}

static const char *ctl_cfgset_get(const ctl_cfgset_t *s, const char *key)
{
    for (int i = 0; i < s->n; i++)
        if (!strcmp(s->v[i].key, key))
            return s->v[i].value;
    return NULL;
}

static int16_t ctl_plan_configs(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    const mi_topic_t *t = ctl_topic(ctl, op);
    if (!t)
        return ctl_fail(op, KERR_UNKNOWN_TOPIC_OR_PARTITION,
                        "This server does not host this topic-partition.");
    const mi_config_t *cur =
        meta_image_config(&ctl->meta->img, META_RES_TOPIC, t->name, t->name_len);
    ctl_cfgset_t s = {xcalloc((size_t)(op->nkv + (cur ? cur->n : 0) + 1), sizeof(ctl_kv_t)), 0};
    for (int i = 0; cur && i < cur->n; i++)
        ctl_cfgset_put(&s, cur->v[i].key, op->replace ? NULL : cur->v[i].value);
    for (int i = 0; i < op->nkv; i++)
        ctl_cfgset_put(&s, op->kv[i].key, op->kv[i].value);
    int16_t e = ctl_cfgset_check(ctl, &s, op);
    if (!e && !op->validate_only) {
        const char *k = "min.insync.replicas", *now = ctl_cfgset_get(&s, k);
        ctl_cfgset_records(&s, cur, t, b);
        if (ctl_min_isr_changes(ctl, cur ? meta_image_config_get(&ctl->meta->img, META_RES_TOPIC,
                                                                 t->name, t->name_len, k)
                                         : NULL, now))
            ctl_elr_min_isr(ctl, t, now, b);
    }
    ctl_cfgset_free(&s);
    return e;
}

int16_t ctl_plan(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    op->msg[0] = '\0';
    switch (op->kind) {
    case CTL_CREATE_TOPIC: return ctl_plan_create(ctl, op, b);
    case CTL_DELETE_TOPIC: return ctl_plan_delete(ctl, op, b);
    case CTL_CREATE_PARTITIONS: return ctl_plan_partitions(ctl, op, b);
    case CTL_ALTER_CONFIGS: return ctl_plan_configs(ctl, op, b);
    case CTL_ALLOC_PRODUCER_IDS: return ctl_plan_producer_ids(ctl, op, b);
    case CTL_ALTER_BROKER_CONFIGS: return ctl_plan_broker_configs(ctl, op, b);
    case CTL_UPDATE_FEATURES: return ctl_plan_features(ctl, op, b);
    case CTL_NODE_HEARTBEAT: return ctl_plan_node_heartbeat(ctl, op, b);
    case CTL_BOOTSTRAP: return ctl_plan_bootstrap(ctl, op, b);
    case CTL_BROKER_REGISTER:
    case CTL_BROKER_HEARTBEAT:
    case CTL_FENCE_STALE:
    case CTL_ALTER_PARTITION:
    case CTL_UNREGISTER_BROKER:
    case CTL_ELECT_LEADERS:
    case CTL_REASSIGN: return ctl_plan_remote_broker(ctl, op, b);
    case CTL_LIST_REASSIGN: return 0;
    case CTL_CONTROLLER_REGISTER: return ctl_plan_controller_register(ctl, op, b);
    case CTL_NOOP: ctl_batch_add(b, META_REC_NOOP); return 0;
    case CTL_REBALANCE: return ctl_plan_rebalance(ctl, op, b);
    case CTL_UNCLEAN_ELECT: return ctl_plan_unclean(ctl, op, b);
    default: return ctl_fail(op, KERR_INVALID_REQUEST, "Unknown metadata change");
    }
}
