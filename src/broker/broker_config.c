/* The broker's configuration: server.properties read as Kafka 4.4 reads
 * it. Every key Kafka defines is checked against the one key table
 * (cluster/cfg_broker_table.c) with Kafka's messages, the keys Strand acts
 * on land in broker_config_t, listeners are read by broker_config_listen.c
 * and the rules between keys are checked by broker_config_rules.c, so that
 * a file Kafka accepts starts Strand and one Kafka refuses is refused for
 * the same reason. */
#include "broker/broker_config_int.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cfg_broker.h"
#include "cluster/cfg_topic.h"
#include "cluster/cfg_val.h"
#include "util/logging.h"
#include "util/mem.h"

/* Where each key Strand acts on lands in broker_config_t: the C type of
 * the field (Kafka's type, default and check come from the one table).
 * Keys with synonyms or structure (log.dirs, listeners, retention and roll
 * units, roles) are handled in code below. */
enum bcfg_kind { BF_BOOL, BF_I32, BF_I64, BF_STR };

typedef struct bcfg_field_s {
    const char *key;
    enum bcfg_kind kind;
    size_t off;
} bcfg_field_t;

#define F(name, kind, field) {name, kind, offsetof(broker_config_t, field)}

static const bcfg_field_t bcfg_fields[] = {
    F("node.id", BF_I32, node_id),
    F("num.partitions", BF_I32, num_partitions),
    F("num.io.threads", BF_I32, num_io_threads),
    F("default.replication.factor", BF_I32, default_replication_factor),
    F("auto.create.topics.enable", BF_BOOL, auto_create_topics_enable),
    F("delete.topic.enable", BF_BOOL, delete_topic_enable),
    F("socket.request.max.bytes", BF_I32, socket_request_max_bytes),
    F("socket.send.buffer.bytes", BF_I32, socket_send_buffer_bytes),
    F("socket.receive.buffer.bytes", BF_I32, socket_receive_buffer_bytes),
    F("connections.max.idle.ms", BF_I64, connections_max_idle_ms),
    F("max.connections", BF_I32, max_connections),
    F("message.max.bytes", BF_I32, message_max_bytes),
    F("log.segment.bytes", BF_I64, log_segment_bytes),
    F("log.retention.bytes", BF_I64, log_retention_bytes),
    F("log.retention.check.interval.ms", BF_I64, log_retention_check_interval_ms),
    F("log.index.interval.bytes", BF_I32, log_index_interval_bytes),
    F("log.index.size.max.bytes", BF_I32, log_index_size_max_bytes),
    F("log.flush.interval.messages", BF_I64, log_flush_interval_messages),
    F("log.flush.scheduler.interval.ms", BF_I64, log_flush_scheduler_interval_ms),
    F("log.flush.offset.checkpoint.interval.ms", BF_I64, log_flush_offset_checkpoint_interval_ms),
    F("replica.high.watermark.checkpoint.interval.ms", BF_I64,
      replica_high_watermark_checkpoint_interval_ms),
    F("log.segment.delete.delay.ms", BF_I64, log_segment_delete_delay_ms),
    F("log.message.timestamp.before.max.ms", BF_I64, log_message_timestamp_before_max_ms),
    F("log.message.timestamp.after.max.ms", BF_I64, log_message_timestamp_after_max_ms),
    F("min.insync.replicas", BF_I32, min_insync_replicas),
    F("compression.type", BF_STR, compression_type),
    F("log.cleanup.policy", BF_STR, log_cleanup_policy),
    F("producer.id.expiration.ms", BF_I32, producer_id_expiration_ms),
    F("transactional.id.expiration.ms", BF_I32, transactional_id_expiration_ms),
    F("group.initial.rebalance.delay.ms", BF_I64, group_initial_rebalance_delay_ms),
    F("offsets.topic.num.partitions", BF_I32, offsets_topic_num_partitions),
    F("max.incremental.fetch.session.cache.slots", BF_I32,
      max_incremental_fetch_session_cache_slots),
    F("controller.listener.names", BF_STR, controller_listener_names),
    F("inter.broker.listener.name", BF_STR, inter_broker_listener_name),
    F("controller.quorum.election.timeout.ms", BF_I32, quorum.election_timeout_ms),
    F("controller.quorum.fetch.timeout.ms", BF_I32, quorum.fetch_timeout_ms),
    F("controller.quorum.election.backoff.max.ms", BF_I32, quorum.election_backoff_max_ms),
    F("controller.quorum.request.timeout.ms", BF_I32, quorum.request_timeout_ms),
    F("controller.quorum.retry.backoff.ms", BF_I32, quorum.retry_backoff_ms),
    F("broker.heartbeat.interval.ms", BF_I32, quorum.heartbeat_interval_ms),
    F("broker.session.timeout.ms", BF_I32, quorum.session_timeout_ms),
    F("metadata.log.max.record.bytes.between.snapshots", BF_I64, quorum.snapshot_max_bytes),
    F("metadata.log.max.snapshot.interval.ms", BF_I64, quorum.snapshot_interval_ms),
    F("metadata.max.idle.interval.ms", BF_I32, quorum.max_idle_interval_ms),
    F("broker.rack", BF_STR, quorum.rack),
};

#define BCFG_NFIELDS (sizeof(bcfg_fields) / sizeof(bcfg_fields[0]))

int bcfg_check(const broker_config_t *cfg, const char *key, const char *val)
{
    const cfg_broker_key_t *k = cfg_broker_find(key);
    char err[512];

    if (!k || cfg_broker_check(k, val, err, sizeof(err)) == 0)
        return 0;
    return bcfg_refuse(cfg, "%s", err);
}

int bcfg_refuse(const broker_config_t *cfg, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    if (!cfg->err)
        lg_error("config: %s", msg);
    else if (!*cfg->err) /* the first reason is the answer */
        snprintf(cfg->err, cfg->errlen, "%s", msg);
    return -1;
}

int bcfg_require(const broker_config_t *cfg, const char *fmt, ...)
{
    char msg[1024];
    va_list ap;

    va_start(ap, fmt);
    vsnprintf(msg, sizeof(msg), fmt, ap);
    va_end(ap);
    /* A dynamic change is answered as Kafka answers it, the message of
     * the failed requirement with its prefix; the start-up log shows the
     * reason alone. */
    return bcfg_refuse(cfg, "%s%s", cfg->err ? "requirement failed: " : "", msg);
}

typedef struct bcfg_find_s {
    const char *name;
    size_t len;
} bcfg_find_t;

static int bcfg_find_item(const char *item, size_t len, void *arg)
{
    const bcfg_find_t *f = arg;
    return len == f->len && !strncasecmp(item, f->name, len);
}

bool bcfg_list_has(const char *list, const char *name, size_t len)
{
    bcfg_find_t f = {name, len};
    return list && cfg_val_items(list, bcfg_find_item, &f) == 1;
}

/* Every key of the file that Kafka defines, checked as Kafka checks it at
 * start-up (also those Strand does not act on), after the keys Kafka
 * cannot start without. */
static int bcfg_check_present(broker_config_t *cfg)
{
    int n;
    const cfg_broker_key_t *t = cfg_broker_keys(&n);

    for (int i = 0; i < n; i++)
        if ((t[i].flags & CFG_REQ) && !cfg_props_peek(&cfg->props, t[i].name))
            return bcfg_refuse(cfg, "Missing required configuration \"%s\" which has no default "
                               "value.", t[i].name);
    for (int i = 0; i < cfg->props.n; i++)
        if (bcfg_check(cfg, cfg->props.v[i].key, cfg->props.v[i].value) < 0)
            return -1;
    return 0;
}

static int bcfg_parse_i64(const char *s, int64_t *out)
{
    char t[64];
    return cfg_val_long(cfg_val_trim(s, t, sizeof(t)), out);
}

/* Stores a checked value in its field. */
static void bcfg_store(broker_config_t *cfg, const bcfg_field_t *f, const char *val)
{
    void *field = (char *)cfg + f->off;
    char t[1024];
    int64_t v = 0;
    bool b = false;

    cfg_val_trim(val, t, sizeof(t));
    switch (f->kind) {
    case BF_BOOL:
        cfg_val_bool(t, &b);
        *(bool *)field = b;
        break;
    case BF_I32:
        cfg_val_long(t, &v);
        *(int32_t *)field = (int32_t)v;
        break;
    case BF_I64:
        cfg_val_long(t, &v);
        *(int64_t *)field = v;
        break;
    case BF_STR:
        free(*(char **)field);
        *(char **)field = xstrdup(t);
        break;
    }
}

/* Every field: the file's value (checked already), or Kafka's default;
 * a field whose key is not set and has a null default stays 0 / NULL. */
static int bcfg_load_fields(broker_config_t *cfg)
{
    for (size_t i = 0; i < BCFG_NFIELDS; i++) {
        const bcfg_field_t *f = &bcfg_fields[i];
        const cfg_broker_key_t *k = cfg_broker_find(f->key);
        const char *v = props_get(&cfg->props, f->key);
        if (!v)
            v = k ? k->dflt : NULL;
        if (v)
            bcfg_store(cfg, f, v);
    }
    return 0;
}

/* Reads the first of several synonym keys that is set, scaled to ms. */
static int bcfg_ms_synonyms(broker_config_t *cfg, const char *const *keys, const int64_t *scale,
                            int n, int64_t dflt, int64_t *out)
{
    *out = dflt;
    for (int i = 0; i < n; i++) {
        const char *s = props_get(&cfg->props, keys[i]);
        int64_t v;
        if (!s)
            continue;
        if (bcfg_parse_i64(s, &v) < 0) /* checked already */
            return -1;
        *out = v < 0 ? -1 : v * scale[i];
        return 0;
    }
    return 0;
}

static char *bcfg_trim(char *s)
{
    while (isspace((unsigned char)*s))
        s++;
    char *e = s + strlen(s);
    while (e > s && isspace((unsigned char)e[-1]))
        *--e = '\0';
    return s;
}

const bcfg_listener_t *broker_config_controller_listener(const broker_config_t *cfg)
{
    for (int i = 0; i < cfg->nadvertised; i++)
        if (cfg->advertised[i].controller)
            return &cfg->advertised[i];
    for (int i = 0; i < cfg->nlisteners; i++)
        if (cfg->listeners[i].controller)
            return &cfg->listeners[i];
    return NULL;
}

void broker_config_free_listeners(bcfg_listener_t *l, int n)
{
    for (int i = 0; i < n; i++) {
        free(l[i].name);
        free(l[i].host);
        free(l[i].protocol);
    }
    free(l);
}

static int bcfg_role_item(const char *item, size_t len, void *arg)
{
    broker_config_t *cfg = arg;

    if (len == 6 && !memcmp(item, "broker", 6))
        cfg->role_broker = true;
    else
        cfg->role_controller = true; /* the only other value the check lets through */
    return 0;
}

/* process.roles (present and checked: required, one of broker and
 * controller, not empty). */
static void bcfg_load_roles(broker_config_t *cfg)
{
    cfg_val_items(props_get(&cfg->props, "process.roles"), bcfg_role_item, cfg);
}

/* The controller listener names as one upper-case list, as Kafka
 * normalises listener names. */
static void bcfg_norm_controller_names(broker_config_t *cfg)
{
    for (char *p = cfg->controller_listener_names; p && *p; p++)
        *p = (char)toupper((unsigned char)*p);
}

/* log.dirs, or log.dir (checked: neither is empty). */
static int bcfg_load_dirs(broker_config_t *cfg)
{
    const char *dirs = props_get(&cfg->props, "log.dirs");
    if (!dirs)
        dirs = props_get(&cfg->props, "log.dir");
    if (!dirs)
        dirs = cfg_broker_default("log.dir");
    char *copy = xstrdup(dirs), *save = NULL;
    for (char *tok = strtok_r(copy, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        tok = bcfg_trim(tok);
        if (!*tok)
            continue;
        cfg->log_dirs = xrealloc(cfg->log_dirs, (size_t)(cfg->nlog_dirs + 1) * sizeof(char *));
        cfg->log_dirs[cfg->nlog_dirs++] = xstrdup(tok);
    }
    free(copy);
    return 0;
}

static int bcfg_load_special(broker_config_t *cfg)
{
    static const char *ret_keys[] = {"log.retention.ms", "log.retention.minutes",
                                     "log.retention.hours"};
    static const int64_t ret_scale[] = {1, 60000, 3600000};
    static const char *roll_keys[] = {"log.roll.ms", "log.roll.hours"};
    static const int64_t roll_scale[] = {1, 3600000};
    static const char *flush_keys[] = {"log.flush.interval.ms"};
    static const int64_t flush_scale[] = {1};

    bcfg_load_roles(cfg);
    bcfg_norm_controller_names(cfg);
    bcfg_load_quorum(cfg);
    if (bcfg_load_dirs(cfg) < 0 || bcfg_load_listeners(cfg) < 0)
        return -1;
    if (bcfg_ms_synonyms(cfg, ret_keys, ret_scale, 3, 168 * 3600000LL, &cfg->log_retention_ms) ||
        bcfg_ms_synonyms(cfg, roll_keys, roll_scale, 2, 168 * 3600000LL, &cfg->log_roll_ms) ||
        bcfg_ms_synonyms(cfg, flush_keys, flush_scale, 1, -1, &cfg->log_flush_interval_ms))
        return -1;
    if (cfg->log_flush_interval_ms < 0) /* Kafka: defaults to the scheduler interval */
        cfg->log_flush_interval_ms = cfg->log_flush_scheduler_interval_ms;
    const char *tt = props_get(&cfg->props, "log.message.timestamp.type");
    char t[32];
    cfg->log_message_timestamp_log_append =
        tt && !strcmp(cfg_val_trim(tt, t, sizeof(t)), "LogAppendTime");
    const char *lvl = props_get(&cfg->props, "log.level");
    cfg->log_level = LG_INFO;
    if (lvl && !strcasecmp(lvl, "debug"))
        cfg->log_level = LG_DEBUG;
    else if (lvl && !strcasecmp(lvl, "warn"))
        cfg->log_level = LG_WARN;
    else if (lvl && !strcasecmp(lvl, "error"))
        cfg->log_level = LG_ERROR;
    return bcfg_check_rules(cfg);
}

int broker_config_load(broker_config_t *cfg, const char *path, char *const *overrides,
                       int noverrides)
{
    int errline = 0;

    memset(cfg, 0, sizeof(*cfg));
    props_init(&cfg->props);
    if (path && props_load(&cfg->props, path, &errline) < 0) {
        if (errno == EINVAL)
            lg_error("config: %s:%d: malformed line", path, errline);
        else
            lg_error("config: cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    for (int i = 0; i < noverrides; i++) {
        const char *eq = strchr(overrides[i], '=');
        if (!eq) {
            lg_error("config: --override '%s' is not key=value", overrides[i]);
            return -1;
        }
        char *key = xstrndup(overrides[i], (size_t)(eq - overrides[i]));
        props_set(&cfg->props, bcfg_trim(key), eq + 1);
        free(key);
    }
    if (bcfg_check_present(cfg) < 0 || bcfg_load_fields(cfg) < 0)
        return -1;
    return bcfg_load_special(cfg);
}

int broker_config_check(broker_config_t *cfg, const props_t *props, char *err, size_t errlen)
{
    memset(cfg, 0, sizeof(*cfg));
    props_init(&cfg->props);
    for (int i = 0; i < props->n; i++)
        props_set(&cfg->props, props->v[i].key, props->v[i].value);
    cfg->err = err;
    cfg->errlen = errlen;
    *err = '\0';
    if (bcfg_check_present(cfg) < 0 || bcfg_load_fields(cfg) < 0 || bcfg_load_special(cfg) < 0) {
        broker_config_free(cfg);
        return -1;
    }
    cfg->err = NULL;
    return 0;
}

void broker_config_report_ignored(broker_config_t *cfg)
{
    for (int i = 0; i < cfg->props.n; i++)
        if (!cfg->props.v[i].used)
            lg_warn("config: '%s' is not implemented by Strand yet and is ignored",
                    cfg->props.v[i].key);
}

void broker_config_free(broker_config_t *cfg)
{
    for (size_t i = 0; i < BCFG_NFIELDS; i++)
        if (bcfg_fields[i].kind == BF_STR)
            free(*(char **)((char *)cfg + bcfg_fields[i].off));
    for (int i = 0; i < cfg->nlog_dirs; i++)
        free(cfg->log_dirs[i]);
    free(cfg->log_dirs);
    broker_config_free_listeners(cfg->listeners, cfg->nlisteners);
    broker_config_free_listeners(cfg->advertised, cfg->nadvertised);
    bcfg_free_quorum(&cfg->quorum);
    props_free(&cfg->props);
}
