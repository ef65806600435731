/* The checks a Kafka 4.4 broker makes of a BROKER resource's dynamic
 * config set before it asks its controller to store it, in its order and
 * with its messages (see cfg_broker.h). */
#include "cluster/cfg_broker.h"

#include <stdio.h>
#include <string.h>

#include "cluster/cfg_val.h"

/* Kafka's keystore and truststore keys: dynamic only with a listener
 * prefix, since each listener has its own. */
static const char *const cfg_dyn_security[] = {
    "ssl.key.password",        "ssl.keystore.certificate.chain", "ssl.keystore.key",
    "ssl.keystore.location",   "ssl.keystore.password",          "ssl.keystore.type",
    "ssl.truststore.certificates", "ssl.truststore.location",    "ssl.truststore.password",
    "ssl.truststore.type",     NULL};

/* Listener overrides of these may be set cluster-wide too. */
static const char *const cfg_dyn_cluster_listener[] = {"max.connections",
                                                       "max.connection.creation.rate",
                                                       "num.network.threads", NULL};

static int cfg_dyn_in(const char *const *set, const char *name)
{
    for (int i = 0; set[i]; i++)
        if (!strcmp(set[i], name))
            return 1;
    return 0;
}

static int cfg_dyn_read_only(const char *name)
{
    const cfg_broker_key_t *k = cfg_broker_find(name);
    return k && (k->flags & CFG_RO);
}

static int cfg_dyn_security_key(const char *name)
{
    return cfg_dyn_in(cfg_dyn_security, name);
}

static int cfg_dyn_per_broker(const char *name)
{
    const cfg_broker_key_t *k = cfg_broker_find(name);
    const char *base = cfg_broker_listener_base(name);

    if (base)
        return !cfg_dyn_in(cfg_dyn_cluster_listener, base);
    return k && (k->flags & CFG_PER_BROKER);
}

/* A class Kafka would load: Strand loads none, so only Kafka's default
 * (or no class) can be set. */
static int cfg_dyn_class(const cfg_broker_key_t *k, const char *value, char *err, size_t errlen)
{
    char t[512];

    if (k->type != CFG_T_CLASS || !*cfg_val_trim(value, t, sizeof(t)) ||
        (k->dflt && !strcmp(t, k->dflt)))
        return 0;
    snprintf(err, errlen, "Invalid value %s for configuration %s: Class %s could not be found.", t,
             k->name, t);
    return 1;
}

/* "<what>: [a, b]" for the keys of kv that match, as Kafka's message
 * names a set of keys. 1 if there were any. */
static int cfg_dyn_list(const mi_kv_t *kv, int n, int (*match)(const char *), const char *what,
                        char *err, size_t errlen)
{
    size_t o = (size_t)snprintf(err, errlen, "%s: [", what);
    int found = 0;

    for (int i = 0; i < n; i++)
        if (match(kv[i].key) && o < errlen)
            o += (size_t)snprintf(err + o, errlen - o, "%s%s", found++ ? ", " : "", kv[i].key);
    if (o < errlen)
        snprintf(err + o, errlen - o, "]");
    return found > 0;
}

int16_t cfg_broker_dyn_check(const mi_kv_t *kv, int n, bool per_broker, char *err, size_t errlen)
{
    if (cfg_dyn_list(kv, n, cfg_dyn_read_only, "Cannot update these configs dynamically", err,
                     errlen))
        return KERR_INVALID_REQUEST;
    if (cfg_dyn_list(kv, n, cfg_dyn_security_key,
                     "These security configs can be dynamically updated only per-listener "
                     "using the listener prefix",
                     err, errlen))
        return KERR_INVALID_REQUEST;
    for (int i = 0; i < n; i++) {
        const cfg_broker_key_t *k = cfg_broker_key_of(kv[i].key);
        if (k && kv[i].value && (cfg_broker_check(k, kv[i].value, err, errlen) ||
                                 cfg_dyn_class(k, kv[i].value, err, errlen)))
            return KERR_INVALID_REQUEST;
    }
    if (!per_broker &&
        cfg_dyn_list(kv, n, cfg_dyn_per_broker,
                     "Cannot update these configs at default cluster level, broker id must be "
                     "specified",
                     err, errlen))
        return KERR_INVALID_REQUEST;
    *err = '\0';
    return KERR_NONE;
}
