/* The rules between keys that a Kafka 4.4 broker checks at start-up, after
 * each key's own value, with Kafka's messages: the quorum is given, a
 * controller is one of its voters, broker.id agrees with node.id, the
 * controller listeners are (or, on a broker-only node, are not) among the
 * listeners, the inter-broker listener is one of the advertised broker
 * listeners, the connection quotas, the cleaner's buffer and the cordoned
 * log dirs are consistent; then a listener whose security protocol is not
 * PLAINTEXT (no TLS or SASL yet; security keys are refused before that,
 * broker_config_sec.c). Every shape of node Kafka runs (controller-only,
 * broker-only, combined; on a static or a dynamic quorum) is one Strand
 * runs (broker/broker_quorum.c). */
#include "broker/broker_config_int.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster/cfg_broker.h"
#include "cluster/cfg_topic.h"
#include "cluster/cfg_val.h"
#include "util/logging.h"
#include "util/mem.h"

static bool bcfg_blank(const char *s)
{
    while (s && isspace((unsigned char)*s))
        s++;
    return !s || !*s;
}

/* The voter ids as Kafka lists them in its message: "1, 2, 3". */
static void bcfg_voter_ids(const bcfg_quorum_t *q, char *out, size_t cap)
{
    out[0] = '\0';
    for (int i = 0; i < q->nvoters; i++) {
        size_t n = strlen(out);
        snprintf(out + n, cap - n, "%s%d", i ? ", " : "", q->voters[i].id);
    }
}

bool broker_config_is_voter(const broker_config_t *cfg, int32_t id)
{
    for (int i = 0; i < cfg->quorum.nvoters; i++)
        if (cfg->quorum.voters[i].id == id)
            return true;
    return false;
}

static int bcfg_rule_quorum(broker_config_t *cfg)
{
    const bcfg_quorum_t *q = &cfg->quorum;
    char ids[256];

    if (!q->nvoters && !q->nbootstrap)
        return bcfg_refuse(cfg, "If using process.roles, either "
                           "controller.quorum.bootstrap.servers must contain the set of bootstrap "
                           "controllers or controller.quorum.voters must contain a parseable set "
                           "of controllers.");
    bcfg_voter_ids(q, ids, sizeof(ids));
    if (cfg->role_controller && q->nvoters && !broker_config_is_voter(cfg, cfg->node_id))
        return bcfg_require(cfg, "If process.roles contains the 'controller' role, the node id %d "
                            "must be included in the set of voters "
                            "controller.quorum.voters=Set(%s)", cfg->node_id, ids);
    return 0;
}

static int bcfg_rule_broker_id(broker_config_t *cfg)
{
    const char *bid = props_get(&cfg->props, "broker.id");
    char t[32];
    int64_t id;

    if (bid && cfg_val_long(cfg_val_trim(bid, t, sizeof(t)), &id) == 0 && id != cfg->node_id)
        return bcfg_require(cfg, "`node.id` and `broker.id` must be set to the same value. "
                            "`broker.id` is deprecated, please use `node.id` instead.");
    return 0;
}

typedef struct bcfg_cln_s {
    const broker_config_t *cfg;
    int in, out;
} bcfg_cln_t;

static int bcfg_cln_item(const char *item, size_t len, void *arg)
{
    bcfg_cln_t *c = arg;
    bool found = false;

    for (int i = 0; i < c->cfg->nlisteners; i++)
        found |= strlen(c->cfg->listeners[i].name) == len &&
                 !strncasecmp(c->cfg->listeners[i].name, item, len);
    c->in += found;
    c->out += !found;
    return 0;
}

static int bcfg_rule_controller_names(broker_config_t *cfg)
{
    bcfg_cln_t c = {cfg, 0, 0};

    cfg_val_items(cfg->controller_listener_names, bcfg_cln_item, &c);
    if (cfg->role_controller && c.in == 0)
        return bcfg_require(cfg, "controller.listener.names must contain at least one value "
                            "appearing in the 'listeners' configuration when running the KRaft "
                            "controller role");
    if (cfg->role_controller && c.out > 0)
        return bcfg_require(cfg, "controller.listener.names must only contain values appearing in "
                            "the 'listeners' configuration when running the KRaft controller role");
    if (!cfg->role_controller && c.in > 0)
        return bcfg_require(cfg, "controller.listener.names must not contain a value appearing in "
                            "the 'listeners' configuration when running KRaft with just the "
                            "broker role");
    return 0;
}

/* The listener brokers use between each other: inter.broker.listener.name,
 * or the listener named after security.inter.broker.protocol. */
static int bcfg_inter_broker_name(broker_config_t *cfg)
{
    const char *sibp = props_get(&cfg->props, "security.inter.broker.protocol");
    bool named = cfg->inter_broker_listener_name != NULL;
    char t[64];

    if (named && sibp)
        return bcfg_refuse(cfg, "Only one of inter.broker.listener.name and "
                           "security.inter.broker.protocol should be set.");
    if (!named)
        cfg->inter_broker_listener_name =
            xstrdup(sibp ? cfg_val_trim(sibp, t, sizeof(t))
                         : cfg_broker_default("security.inter.broker.protocol"));
    for (char *p = cfg->inter_broker_listener_name; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    /* a name given is looked up in the map; a protocol is its own */
    if (named && !bcfg_map_has(cfg, cfg->inter_broker_listener_name))
        return bcfg_refuse(cfg, "Listener with name %s defined in inter.broker.listener.name not "
                           "found in listener.security.protocol.map.",
                           cfg->inter_broker_listener_name);
    return 0;
}

/* A broker advertises at least one non-controller listener, the
 * inter-broker one among them. */
static int bcfg_rule_advertised(broker_config_t *cfg)
{
    const bcfg_listener_t *l = cfg->nadvertised ? cfg->advertised : cfg->listeners;
    int n = cfg->nadvertised ? cfg->nadvertised : cfg->nlisteners, found = 0, nb = 0;
    char names[512] = "";

    for (int i = 0; i < n; i++) {
        if (l[i].controller)
            continue;
        snprintf(names + strlen(names), sizeof(names) - strlen(names), "%s%s", nb++ ? "," : "",
                 l[i].name);
        found |= !strcmp(l[i].name, cfg->inter_broker_listener_name);
    }
    if (!nb)
        return bcfg_require(cfg, "There must be at least one broker advertised listener. Perhaps "
                            "all listeners appear in controller.listener.names?");
    if (!found)
        return bcfg_require(cfg, "inter.broker.listener.name must be a listener name defined in "
                           "advertised.listeners. The valid options based on currently "
                           "configured listeners are %s", names);
    return 0;
}

/* max.connections.per.ip.overrides: host:count, ... (each part trimmed). */
static int bcfg_override_item(const char *item, size_t len, void *arg)
{
    const broker_config_t *cfg = arg;
    const char *colon = memchr(item, ':', len);
    char raw[64], count[64];
    int64_t n;

    if (!colon) /* Java's substring to indexOf(':') = -1 */
        return bcfg_refuse(cfg, "Error parsing configuration property "
                           "'max.connections.per.ip.overrides': begin 0, end -1, length %zu", len);
    snprintf(raw, sizeof(raw), "%.*s", (int)(item + len - colon - 1), colon + 1);
    cfg_val_trim(raw, count, sizeof(count));
    if (cfg_val_long(count, &n) < 0 || n < INT32_MIN || n > INT32_MAX)
        return bcfg_refuse(cfg, "For input string: \"%s\"", count);
    return 0;
}

static int64_t bcfg_peek_long(const broker_config_t *cfg, const char *key)
{
    const char *v = cfg_props_peek(&cfg->props, key);
    char t[64];
    int64_t n = 0;

    if (!v)
        v = cfg_broker_default(key);
    if (v)
        cfg_val_long(cfg_val_trim(v, t, sizeof(t)), &n); /* checked already */
    return n;
}

/* The connection quotas: a per-ip limit of zero needs overrides. */
static int bcfg_rule_conn_quotas(const broker_config_t *cfg)
{
    const char *ov = cfg_props_peek(&cfg->props, "max.connections.per.ip.overrides");

    if (ov && cfg_val_items(ov, bcfg_override_item, (void *)cfg))
        return -1;
    if (bcfg_peek_long(cfg, "max.connections.per.ip") == 0 && bcfg_blank(ov))
        return bcfg_require(cfg, "max.connections.per.ip can be set to zero only if "
                            "max.connections.per.ip.overrides property is set.");
    return 0;
}

/* The cleaner: its dedupe buffer shared by its threads (Kafka divides by
 * the thread count, so zero threads fail as a division by zero). */
static int bcfg_rule_cleaner(const broker_config_t *cfg)
{
    int64_t threads = bcfg_peek_long(cfg, "log.cleaner.threads");

    if (threads == 0)
        return bcfg_refuse(cfg, "/ by zero");
    if (bcfg_peek_long(cfg, "log.cleaner.dedupe.buffer.size") / threads <= 1024 * 1024)
        return bcfg_require(cfg, "log.cleaner.dedupe.buffer.size must be at least 1MB per "
                            "cleaner thread.");
    return 0;
}

typedef struct bcfg_cordon_s {
    const broker_config_t *cfg;
    char missing[512];
} bcfg_cordon_t;

static int bcfg_cordon_item(const char *item, size_t len, void *arg)
{
    bcfg_cordon_t *c = arg;
    size_t n = strlen(c->missing);

    for (int i = 0; i < c->cfg->nlog_dirs; i++)
        if (strlen(c->cfg->log_dirs[i]) == len && !memcmp(c->cfg->log_dirs[i], item, len))
            return 0;
    snprintf(c->missing + n, sizeof(c->missing) - n, "%s%.*s", n ? ", " : "", (int)len, item);
    return 0;
}

/* cordoned.log.dirs names log dirs (or "*", all of them). */
static int bcfg_rule_cordoned(const broker_config_t *cfg)
{
    const char *v = cfg_props_peek(&cfg->props, "cordoned.log.dirs");
    bcfg_cordon_t c = {cfg, ""};
    char t[8];

    if (!v || !strcmp(cfg_val_trim(v, t, sizeof(t)), "*"))
        return 0;
    cfg_val_items(v, bcfg_cordon_item, &c);
    if (c.missing[0])
        return bcfg_require(cfg, "All entries in cordoned.log.dirs must be present in log.dirs "
                            "or log.dir. Missing entries : %s", c.missing);
    return 0;
}

/* replica.selector.class names a class Kafka loads at start: the
 * rack-aware selector is the one there is here. */
static int bcfg_rule_selector(const broker_config_t *cfg)
{
    const char *v = cfg_props_peek(&cfg->props, "replica.selector.class");
    char t[256];

    if (cfg_broker_selector(v) < 0)
        return bcfg_refuse(cfg, "replica.selector.class: class %s cannot be found (the one "
                           "selector there is: %s)", cfg_val_trim(v, t, sizeof(t)),
                           CFG_RACK_AWARE_SELECTOR);
    return 0;
}

/* Other requirements of Kafka's broker config between or on values. */
static int bcfg_rule_values(const broker_config_t *cfg)
{
    if (cfg_props_peek(&cfg->props, "log.roll.ms") && bcfg_peek_long(cfg, "log.roll.ms") < 1)
        return bcfg_require(cfg, "log.roll.ms must be greater than or equal to 1");
    if (bcfg_rule_conn_quotas(cfg) < 0 || bcfg_rule_cleaner(cfg) < 0 ||
        bcfg_rule_selector(cfg) < 0)
        return -1;
    return bcfg_rule_cordoned(cfg);
}

/* Listeners whose security protocol Strand cannot serve yet. */
static int bcfg_rule_protocols(const broker_config_t *cfg)
{
    for (int i = 0; i < cfg->nlisteners; i++)
        if (strcmp(cfg->listeners[i].protocol, "PLAINTEXT") != 0)
            return bcfg_refuse(cfg, "listener %s uses security protocol %s, which Strand does not "
                               "support yet (only PLAINTEXT)", cfg->listeners[i].name,
                               cfg->listeners[i].protocol);
    return 0;
}

/* A broker that heartbeats less often than twice a session loses its
 * lease between two heartbeats: Kafka logs this and starts all the same. */
static void bcfg_rule_heartbeat(const broker_config_t *cfg)
{
    const bcfg_quorum_t *q = &cfg->quorum;

    if (!cfg->err && (int64_t)q->heartbeat_interval_ms * 2 > q->session_timeout_ms)
        lg_error("config: broker.heartbeat.interval.ms (%d ms) must be less than or equal to half "
                 "of the broker.session.timeout.ms (%d ms); a broker that misses one heartbeat "
                 "is fenced", q->heartbeat_interval_ms, q->session_timeout_ms);
}

int bcfg_check_rules(broker_config_t *cfg)
{
    if (bcfg_rule_quorum(cfg) < 0 || bcfg_rule_broker_id(cfg) < 0 ||
        bcfg_rule_controller_names(cfg) < 0)
        return -1;
    if (cfg->role_broker && (bcfg_inter_broker_name(cfg) < 0 || bcfg_rule_advertised(cfg) < 0))
        return -1;
    if (bcfg_rule_values(cfg) < 0 || bcfg_check_security(cfg) < 0)
        return -1;
    bcfg_rule_heartbeat(cfg);
    return bcfg_rule_protocols(cfg);
}
