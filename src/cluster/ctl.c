/* The controller (ctl.h): start-up, and the queue of changes. A change is
 * planned (checked and turned into records, ctl_topics.c) when it reaches
 * the head of the queue, so that it sees every change before it applied,
 * then committed; the next one starts when its commit is done. */
#include "cluster/ctl_int.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cfg_broker.h"
#include "net/net_loop.h"
#include "net/net_pool.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"
#include "util/smap.h"
#include "util/uuid.h"

/* ---- bootstrap ---- */

typedef struct ctl_boot_topic_s {
    uint8_t id[16];
    int has_id;
    int32_t nparts;
} ctl_boot_topic_t;

typedef struct ctl_boot_s {
    ctl_t *ctl;
    smap_t topics;
} ctl_boot_t;

static void ctl_boot_scan(log_t *log, void *opaque)
{
    ctl_boot_t *bt = opaque;
    const char *name = log_topic(log);
    int32_t p = log_partition(log);
    uint8_t id[16];

    if (!strcmp(name, META_LOG_TOPIC))
        return;
    ctl_boot_topic_t *t = smap_get(&bt->topics, name, strlen(name));
    if (!t) {
        t = xcalloc(1, sizeof(*t));
        smap_put(&bt->topics, name, strlen(name), t);
    }
    if (p + 1 > t->nparts)
        t->nparts = p + 1;
    if (!t->has_id && log_mgr_topic_id(bt->ctl->logs, name, p, id)) {
        memcpy(t->id, id, 16);
        t->has_id = 1;
    }
}

/* Records for the topics a data dir holds from before the metadata log:
 * their ids from partition.metadata (or new ones), their partitions, no
 * dynamic configs (the old code kept none). */
static int16_t ctl_boot_topics(ctl_boot_t *bt, ctl_batch_t *b)
{
    const void *key;
    size_t klen, pos = 0;
    void *v;

    while (smap_next(&bt->topics, &pos, &key, &klen, &v)) {
        ctl_boot_topic_t *t = v;
        if (!t->has_id && uuid_generate(t->id) < 0)
            return KERR_KAFKA_STORAGE_ERROR;
        meta_rec_t *r = ctl_batch_add(b, META_REC_TOPIC);
        /* key points into the map, which outlives the commit */
        r->u.topic.name.p = key;
        r->u.topic.name.len = (int32_t)klen;
        memcpy(r->u.topic.topic_id.b, t->id, 16);
        ctl_batch_partitions(b, bt->ctl, t->id, 0, t->nparts, NULL, 1);
        lg_info("metadata log: adopting topic %.*s with %d partitions from the log dirs",
                (int)klen, (const char *)key, t->nparts);
    }
    return KERR_NONE;
}

/* First start with this metadata log: the bootstrap records and, for a
 * data dir that has partition directories, records describing them. The
 * directories already exist, so their dirs are those the log manager has
 * them in: ctl_batch_partitions names the least loaded ones, which for the
 * single log dir of such an old data dir is the same. */
static int16_t ctl_bootstrap(ctl_t *ctl, int64_t now_ms)
{
    ctl_batch_t b = {0};
    ctl_boot_t bt = {ctl, {0}};
    size_t pos = 0;
    void *v;

    smap_init(&bt.topics);
    log_mgr_foreach(ctl->logs, ctl_boot_scan, &bt);
    meta_rec_t *fr = ctl_batch_add(&b, META_REC_FEATURE_LEVEL);
    fr->u.feature.name.p = "metadata.version";
    fr->u.feature.name.len = (int32_t)strlen("metadata.version");
    fr->u.feature.feature_level = ctl->boot_mv;
    ctl_boot_elr(ctl, &b);
    int16_t err = ctl_boot_topics(&bt, &b);
    if (!err)
        err = meta_log_commit(ctl->meta, b.v, b.n, now_ms);
    while (smap_next(&bt.topics, &pos, NULL, NULL, &v))
        free(v);
    smap_free(&bt.topics);
    ctl_batch_free(&b);
    return err;
}

/* A LONG key of server.properties, or Kafka's default (the parser has
 * checked the value against the key's type already). */
static int64_t ctl_prop_long(const props_t *props, const char *key)
{
    const char *v = props ? props_get((props_t *)props, key) : NULL;
    if (!v)
        v = cfg_broker_default(key);
    return v ? strtoll(v, NULL, 10) : 0;
}

static void ctl_snap_policy(ctl_t *ctl, const props_t *props)
{
    meta_log_policy_t pol;
    pol.max_bytes = ctl_prop_long(props, "metadata.log.max.record.bytes.between.snapshots");
    pol.interval_ms = ctl_prop_long(props, "metadata.log.max.snapshot.interval.ms");
    pol.retention_bytes = ctl_prop_long(props, "metadata.max.retention.bytes");
    pol.retention_ms = ctl_prop_long(props, "metadata.max.retention.ms");
    ctl->idle_ms = ctl_prop_long(props, "metadata.max.idle.interval.ms");
    meta_log_snap_policy(ctl->meta, &pol);
    ctl_elect_init(ctl, props);
}

ctl_t *ctl_open(log_mgr_t *logs, const ctl_config_t *cfg, int64_t now_ms)
{
    ctl_t *ctl = xcalloc(1, sizeof(*ctl));
    int fresh = 0;
    char err[256];

    ctl->logs = logs;
    ctl->node_id = cfg->node_id;
    snprintf(ctl->node_name, sizeof(ctl->node_name), "%d", cfg->node_id);
    ctl->base = ctl->defaults = cfg->defaults;
    ctl->props = cfg->props;
    ctl->broker_check = cfg->broker_check;
    ctl->broker_check_arg = cfg->broker_check_arg;
    ctl->quorum = cfg->quorum;
    ctl->boot_mv = cfg->boot_metadata_version > 0 ? cfg->boot_metadata_version
                                                  : META_LOG_METADATA_VERSION;
    ctl->boot_elr = cfg->boot_elr_version >= 0 ? cfg->boot_elr_version : CTL_BOOT_ELR_DEFAULT;
    ctl_brokers_init(ctl, cfg);
    ctl->meta = meta_log_open(logs, now_ms, ctl->quorum, &fresh);
    if (ctl->meta)
        ctl_snap_policy(ctl, cfg->props);
    if (!ctl->meta || (fresh && !ctl->quorum && ctl_bootstrap(ctl, now_ms) != 0)) {
        lg_error("cannot load the metadata log; refusing to start with an unknown set of topics");
        ctl_free(ctl);
        return NULL;
    }
    /* As a Kafka node that does not support the finalized levels (a
     * quorum's log gets them from its first leader). */
    if (!ctl->quorum && ctl_features_check(&ctl->meta->img, err, sizeof(err)) < 0) {
        lg_error("refusing to start: %s", err);
        ctl_free(ctl);
        return NULL;
    }
    ctl_pid_load(ctl);
    ctl_defaults_refresh(ctl);
    return ctl;
}

void ctl_free(ctl_t *ctl)
{
    if (!ctl)
        return;
    /* Changes still queued are refused, so that their owners free them. */
    while (ctl->head) {
        ctl_op_t *op = ctl->head;
        ctl->head = op->next;
        op->err = KERR_NOT_CONTROLLER;
        snprintf(op->msg, sizeof(op->msg), "The controller is shutting down.");
        op->done(op);
    }
    ctl->tail = NULL;
    ctl_quorum_stop(ctl);
    ctl_pid_serve_shutdown(ctl);
    ctl_brokers_free(ctl);
    meta_log_free(ctl->meta);
    free(ctl);
}

void ctl_attach(ctl_t *ctl, net_loop_t *loop, net_pool_t *pool)
{
    meta_log_attach(ctl->meta, loop, pool);
}

meta_log_t *ctl_meta(ctl_t *ctl)
{
    return ctl->meta;
}

const meta_image_t *ctl_image(const ctl_t *ctl)
{
    return &ctl->meta->img;
}

int ctl_offline(const ctl_t *ctl)
{
    return log_offline(ctl->meta->log);
}

const topic_cfg_t *ctl_topic_defaults(const ctl_t *ctl)
{
    return &ctl->defaults;
}

const char *ctl_node_name(const ctl_t *ctl)
{
    return ctl->node_name;
}

/* ---- the queue ---- */

static void ctl_next(ctl_t *ctl);

/* The head is done: off the queue, told, and the next one starts. */
static void ctl_finish(ctl_t *ctl, ctl_op_t *op)
{
    ctl->head = op->next;
    if (!ctl->head)
        ctl->tail = NULL;
    op->done(op);
    ctl_next(ctl);
}

typedef struct ctl_commit_s {
    ctl_t *ctl;
    ctl_op_t *op;
} ctl_commit_t;

static void ctl_committed(void *udata, int16_t err)
{
    ctl_commit_t *cc = udata;
    ctl_t *ctl = cc->ctl;
    ctl_op_t *op = cc->op;

    free(cc);
    ctl->committing = 0;
    if (err) {
        op->err = err;
        snprintf(op->msg, sizeof(op->msg), "%s",
                 err == KERR_NOT_CONTROLLER ? CTL_NOT_CONTROLLER_MSG
                 : ctl_offline(ctl)         ? CTL_OFFLINE_MSG
                                            : "Cannot write the metadata log");
    } else if (op->kind == CTL_ALTER_BROKER_CONFIGS)
        ctl_defaults_refresh(ctl);
    ctl_finish(ctl, op);
}

/* Plans the head; refusals and checks end at once, changes commit. */
static void ctl_start(ctl_t *ctl, ctl_op_t *op)
{
    ctl_batch_t b = {0};
    if (ctl->quorum && !meta_log_active(ctl->meta)) {
        /* only the active controller decides (Kafka's NOT_CONTROLLER;
         * a forwarded request that timed out, its caller's error) */
        op->err = op->refuse_err ? op->refuse_err : KERR_NOT_CONTROLLER;
        snprintf(op->msg, sizeof(op->msg), "%s", op->refuse_err ? "" : CTL_NOT_CONTROLLER_MSG);
        ctl_finish(ctl, op);
        return;
    }
    op->err = ctl_plan(ctl, op, &b);
    if (!op->err && b.n > 0 && ctl_offline(ctl)) {
        op->err = KERR_KAFKA_STORAGE_ERROR;
        snprintf(op->msg, sizeof(op->msg), "%s", CTL_OFFLINE_MSG);
    }
    if (op->err || b.n == 0) {
        ctl_batch_free(&b);
        ctl_finish(ctl, op);
        return;
    }
    ctl_commit_t *cc = xcalloc(1, sizeof(*cc));
    cc->ctl = ctl;
    cc->op = op;
    ctl->committing = 1;
    meta_log_submit(ctl->meta, b.v, b.n, op->now_ms, ctl_committed, cc);
    ctl_batch_free(&b);
}

static void ctl_next(ctl_t *ctl)
{
    if (ctl->head && !ctl->committing)
        ctl_start(ctl, ctl->head);
}

void ctl_submit(ctl_t *ctl, ctl_op_t *op)
{
    op->next = NULL;
    op->err = KERR_NONE;
    op->msg[0] = '\0';
    memset(op->created_id, 0, 16);

    if (ctl->tail)
        ctl->tail->next = op;
    else
        ctl->head = op;
    ctl->tail = op;
    if (ctl->head == op)
        ctl_next(ctl);
}

/* ---- the broker's own creations ---- */

typedef struct ctl_owned_s {
    ctl_op_t op; /* first */
    char *name;
    cfg_kv_t diff[32];
    ctl_kv_t kv[32];
} ctl_owned_t;

ctl_op_t *ctl_op_new_topic(const ctl_t *ctl, const char *name, size_t len, int32_t nparts,
                           const topic_cfg_t *cfg, int64_t now_ms)
{
    ctl_owned_t *o = xcalloc(1, sizeof(*o));
    int n = cfg ? cfg_topic_diff(&ctl->defaults, cfg, o->diff, 32) : 0;

    for (int i = 0; i < n; i++) {
        o->kv[i].key = o->diff[i].key;
        o->kv[i].value = o->diff[i].value;
    }
    o->name = xstrndup(name, len);
    o->op.kind = CTL_CREATE_TOPIC;
    o->op.name = o->name;
    o->op.name_len = len;
    o->op.nparts = nparts;
    o->op.rf = -1;
    o->op.nassign = -1;
    o->op.kv = o->kv;
    o->op.nkv = n;
    o->op.now_ms = now_ms;
    return &o->op;
}

void ctl_op_free(ctl_op_t *op)
{
    ctl_owned_t *o = (ctl_owned_t *)op;
    if (!o)
        return;
    free(o->name);
    free(o);
}
