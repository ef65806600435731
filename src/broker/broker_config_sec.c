/* Security settings Strand does not implement yet: TLS, SASL,
 * authorization, delegation tokens. A file that sets one of them to
 * anything but Kafka's default is refused, with a message naming the key,
 * rather than run a broker that silently ignores it: a user who configured
 * authorization must never get a broker open to everyone, nor one who
 * configured TLS a plaintext one. Kafka 4.4 starts with most of these on a
 * PLAINTEXT-only broker (it reads ssl.* and sasl.* keys for listeners of
 * those protocols only, and the standard authorizer's keys only with an
 * authorizer); Strand differs there on purpose, until the security work
 * implements them.
 *
 * The keys that count:
 *   - ssl.* (TLS) and sasl.* (SASL), also per listener:
 *     listener.name.<listener>.ssl.*, listener.name.<listener>.sasl.* and
 *     listener.name.<listener>.<mechanism>.sasl.*;
 *   - authorizer.class.name, and the standard authorizer's super.users and
 *     allow.everyone.if.no.acl.found;
 *   - principal.builder.class, connections.max.reauth.ms (SASL
 *     re-authentication), security.inter.broker.protocol, delegation.token.*.
 * A key set to Kafka's default does not count (configuration templates
 * list them): its default in the key table, or "" for super.users and
 * "false" for allow.everyone.if.no.acl.found; nor does an empty value of a
 * key whose default is null (unset in effect). */
#include "broker/broker_config_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster/cfg_broker.h"
#include "cluster/cfg_val.h"

enum bcfg_sec_kind { SEC_NONE, SEC_TLS, SEC_SASL, SEC_AUTHZ, SEC_OTHER };

/* The key a per-listener override stands for ("ssl.keystore.location" for
 * "listener.name.internal.ssl.keystore.location", "sasl.jaas.config" for
 * "listener.name.x.plain.sasl.jaas.config"), or key itself. */
static const char *bcfg_sec_base(const char *key)
{
    const char *p;

    if (strncmp(key, "listener.name.", 14) != 0)
        return key;
    if (!(p = strchr(key + 14, '.')))
        return key;
    p++;
    if (!strncmp(p, "ssl.", 4) || !strncmp(p, "sasl.", 5))
        return p;
    if (strchr(p, '.') && !strncmp(strchr(p, '.') + 1, "sasl.", 5))
        return strchr(p, '.') + 1; /* <mechanism>.sasl.* */
    return p;
}

static enum bcfg_sec_kind bcfg_sec_kind(const char *base)
{
    static const char *const authz[] = {"authorizer.class.name", "super.users",
                                        "allow.everyone.if.no.acl.found", NULL};
    static const char *const other[] = {"principal.builder.class", "connections.max.reauth.ms",
                                        "security.inter.broker.protocol", NULL};

    if (!strncmp(base, "ssl.", 4))
        return SEC_TLS;
    if (!strncmp(base, "sasl.", 5))
        return SEC_SASL;
    if (cfg_val_in(authz, base, strlen(base), 0))
        return SEC_AUTHZ;
    if (cfg_val_in(other, base, strlen(base), 0) || !strncmp(base, "delegation.token.", 17))
        return SEC_OTHER;
    return SEC_NONE;
}

typedef struct bcfg_items_s {
    char v[32][128];
    int n;
} bcfg_items_t;

static int bcfg_sec_item(const char *item, size_t len, void *arg)
{
    bcfg_items_t *it = arg;
    if (it->n < 32)
        snprintf(it->v[it->n++], sizeof(it->v[0]), "%.*s", (int)len, item);
    return 0;
}

/* Whether value says what Kafka's default says: the same elements of a
 * list, the same boolean in any case, the same text once trimmed. */
static bool bcfg_is_default(const char *base, const char *value)
{
    const cfg_broker_key_t *k = cfg_broker_find(base);
    const char *dflt = k ? k->dflt : NULL;
    char a[1024], b[1024];
    bcfg_items_t x = {.n = 0}, y = {.n = 0};

    if (!strcmp(base, "super.users"))
        dflt = "";
    else if (!strcmp(base, "allow.everyone.if.no.acl.found"))
        dflt = "false";
    cfg_val_trim(value, a, sizeof(a));
    if (!dflt)
        return !*a; /* a null default: only "unset" is the default */
    cfg_val_trim(dflt, b, sizeof(b));
    if (k && k->type == CFG_T_LIST) {
        cfg_val_items(a, bcfg_sec_item, &x);
        cfg_val_items(b, bcfg_sec_item, &y);
        for (int i = 0; i < x.n && x.n == y.n; i++)
            if (strcmp(x.v[i], y.v[i]))
                return false;
        return x.n == y.n;
    }
    return (k && k->type == CFG_T_BOOLEAN) || !strcmp(base, "allow.everyone.if.no.acl.found")
               ? !strcasecmp(a, b)
               : !strcmp(a, b);
}

static int bcfg_sec_refuse(const broker_config_t *cfg, const char *key,
                           enum bcfg_sec_kind kind)
{
    static const char *const what[] = {
        [SEC_TLS] = "a TLS setting, and Strand does not implement TLS yet",
        [SEC_SASL] = "a SASL setting, and Strand does not implement SASL yet",
        [SEC_AUTHZ] = "an authorization setting, and Strand does not implement authorization "
                      "yet (it would serve every client unchecked)",
        [SEC_OTHER] = "a security setting Strand does not implement yet",
    };
    if (cfg->err) /* a dynamic change */
        return bcfg_refuse(cfg, "'%s' is %s: refusing the change rather than ignore it", key,
                           what[kind]);
    return bcfg_refuse(cfg, "'%s' is %s: refusing to start rather than ignore it (remove the "
                       "key, or give it Kafka's default)", key, what[kind]);
}

int bcfg_check_security(broker_config_t *cfg)
{
    for (int i = 0; i < cfg->props.n; i++) {
        const char *key = cfg->props.v[i].key, *base = bcfg_sec_base(key);
        enum bcfg_sec_kind kind = bcfg_sec_kind(base);
        if (kind != SEC_NONE && !bcfg_is_default(base, cfg->props.v[i].value))
            return bcfg_sec_refuse(cfg, key, kind);
    }
    return 0;
}
