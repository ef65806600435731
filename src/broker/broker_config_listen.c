/* Listeners as Kafka 4.4 reads them: listeners and advertised.listeners
 * are lists of NAME://host:port, the host a name, an address or [IPv6],
 * possibly empty (every interface); listener names are compared in any
 * case and kept in upper case (Kafka normalises them so); each name maps
 * to a security protocol through listener.security.protocol.map. When
 * that key is not set, Kafka's default map applies (each protocol's name
 * to itself) and the controller listener names map to PLAINTEXT, as Kafka
 * 4.4 does (by their names as written). The checks and their messages are those Kafka makes at
 * start-up. */
#include "broker/broker_config_int.h"

#include <arpa/inet.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cluster/cfg_broker.h"
#include "cluster/cfg_topic.h"
#include "cluster/cfg_val.h"
#include "util/mem.h"

static const char *const bcfg_protocols[] = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL",
                                             NULL};

/* The protocol of each listener name (both upper case). */
typedef struct bcfg_map_s {
    const broker_config_t *cfg; /* whose errors these are */
    char **name;
    char **proto;
    int n;
} bcfg_map_t;

static char *bcfg_upper(const char *s, size_t n)
{
    char *u = xstrndup(s, n);
    for (char *p = u; *p; p++)
        *p = (char)toupper((unsigned char)*p);
    return u;
}

/* upper: the name in upper case (as Kafka normalises the map's names);
 * else as given. */
static void bcfg_map_add(bcfg_map_t *m, const char *name, size_t nlen, int upper,
                         const char *proto, size_t plen)
{
    m->name = xrealloc(m->name, (size_t)(m->n + 1) * sizeof(char *));
    m->proto = xrealloc(m->proto, (size_t)(m->n + 1) * sizeof(char *));
    m->name[m->n] = upper ? bcfg_upper(name, nlen) : xstrndup(name, nlen);
    m->proto[m->n] = bcfg_upper(proto, plen);
    m->n++;
}

static void bcfg_map_free(bcfg_map_t *m)
{
    for (int i = 0; i < m->n; i++) {
        free(m->name[i]);
        free(m->proto[i]);
    }
    free(m->name);
    free(m->proto);
}

static const char *bcfg_map_get(const bcfg_map_t *m, const char *name)
{
    for (int i = 0; i < m->n; i++)
        if (!strcmp(m->name[i], name))
            return m->proto[i];
    return NULL;
}

/* One "NAME:PROTOCOL" element of an explicit map. */
static int bcfg_map_item(const char *item, size_t len, void *arg)
{
    bcfg_map_t *m = arg;
    const char *colon = memchr(item, ':', len);
    size_t nlen, plen;
    const char *p;

    if (!colon)
        return bcfg_refuse(m->cfg, "Error parsing configuration property "
                           "'listener.security.protocol.map': '%.*s' is not NAME:PROTOCOL",
                           (int)len, item);
    nlen = (size_t)(colon - item);
    while (nlen && isspace((unsigned char)item[nlen - 1]))
        nlen--;
    for (p = colon + 1; p < item + len && isspace((unsigned char)*p); p++)
        ;
    plen = (size_t)(item + len - p);
    if (!cfg_val_in(bcfg_protocols, p, plen, 1))
        return bcfg_refuse(m->cfg, "Invalid security protocol `%.*s` defined in "
                           "listener.security.protocol.map", (int)plen, p);
    bcfg_map_add(m, item, nlen, 1, p, plen);
    return 0;
}

/* Adds each controller listener name to a default map (as PLAINTEXT).
 * Kafka adds the name as written, not in upper case: a controller listener
 * named in lower case then finds no protocol. */
static int bcfg_map_ctrl_item(const char *item, size_t len, void *arg)
{
    bcfg_map_t *m = arg;
    char *name = xstrndup(item, len);

    if (len && !bcfg_map_get(m, name))
        bcfg_map_add(m, item, len, 0, "PLAINTEXT", 9);
    free(name);
    return 0;
}

static int bcfg_map_load(broker_config_t *cfg, bcfg_map_t *m)
{
    const char *spec = props_get(&cfg->props, "listener.security.protocol.map");

    memset(m, 0, sizeof(*m));
    m->cfg = cfg;
    if (spec) {
        if (!cfg_val_items(spec, bcfg_map_item, m))
            return 0;
        bcfg_map_free(m); /* the elements before the bad one */
        return -1;
    }
    for (int i = 0; bcfg_protocols[i]; i++)
        bcfg_map_add(m, bcfg_protocols[i], strlen(bcfg_protocols[i]), 1, bcfg_protocols[i],
                     strlen(bcfg_protocols[i]));
    cfg_val_items(cfg_props_peek(&cfg->props, "controller.listener.names"), bcfg_map_ctrl_item,
                  m); /* as written */
    return 0;
}

/* ---- one endpoint ---- */

/* The characters Kafka allows in a listener's host. */
static int bcfg_host_ok(const char *h, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isalnum((unsigned char)h[i]) && !strchr("-%._:", h[i]))
            return 0;
    return 1;
}

/* Parses NAME://host:port or NAME://[v6]:port into l (name upper case).
 * Returns 0, or -1 when Kafka could not parse it either. */
static int bcfg_parse_endpoint(const char *s, size_t n, bcfg_listener_t *l)
{
    const char *sep = memmem(s, n, "://", 3), *host, *colon, *end = s + n;
    size_t hlen;
    int64_t port;
    char pbuf[16];

    if (!sep)
        return -1;
    host = sep + 3;
    for (colon = end; colon > host && colon[-1] != ':'; colon--)
        ;
    if (colon == host || (size_t)(end - colon) >= sizeof(pbuf))
        return -1;
    hlen = (size_t)(colon - 1 - host);
    if (hlen >= 2 && host[0] == '[' && host[hlen - 1] == ']')
        host++, hlen -= 2;
    memcpy(pbuf, colon, (size_t)(end - colon));
    pbuf[end - colon] = '\0';
    if (!bcfg_host_ok(host, hlen) || cfg_val_long(pbuf, &port) < 0 || pbuf[0] == '+')
        return -1;
    l->name = bcfg_upper(s, (size_t)(sep - s));
    l->host = xstrndup(host, hlen);
    l->port = port < -1 || port > INT32_MAX ? -1 : (int)port;
    return 0;
}

/* ---- a list of endpoints ---- */

typedef struct bcfg_lparse_s {
    const char *key;
    const char *raw;
    const bcfg_map_t *map;
    const char *ctrl;
    bcfg_listener_t *v;
    int n;
} bcfg_lparse_t;

static int bcfg_join_item(const char *item, size_t len, void *arg)
{
    char *out = arg;
    size_t n = strlen(out);
    snprintf(out + n, 1024 - n, "%s%.*s", n ? ", " : "", (int)len, item);
    return 0;
}

/* A listener name the map lacks. A dynamic change is answered with the
 * words of Kafka's reconfiguration, naming the listeners as it lists
 * them. */
static int bcfg_no_protocol(const bcfg_lparse_t *lp, const char *name)
{
    char list[1024] = "";

    if (!lp->map->cfg->err)
        return bcfg_refuse(lp->map->cfg, "%s: No security protocol defined for listener %s",
                           lp->key, name);
    cfg_val_items(lp->raw, bcfg_join_item, list);
    return bcfg_refuse(lp->map->cfg, "Error creating broker listeners from '[%s]': No security "
                       "protocol defined for listener %s", list, name);
}

static int bcfg_endpoint_item(const char *item, size_t len, void *arg)
{
    bcfg_lparse_t *lp = arg;
    bcfg_listener_t l = {0};
    const char *proto;

    if (bcfg_parse_endpoint(item, len, &l) < 0)
        return bcfg_refuse(lp->map->cfg, "%s: Unable to parse %.*s to a broker endpoint", lp->key,
                           (int)len, item);
    lp->v = xrealloc(lp->v, (size_t)(lp->n + 1) * sizeof(*lp->v));
    lp->v[lp->n++] = l;
    if (!(proto = bcfg_map_get(lp->map, l.name)))
        return bcfg_no_protocol(lp, l.name);
    lp->v[lp->n - 1].protocol = xstrdup(proto);
    lp->v[lp->n - 1].controller = bcfg_list_has(lp->ctrl, l.name, strlen(l.name));
    if (l.port < 0 || l.port > 65535)
        return bcfg_refuse(lp->map->cfg, "%s: %s: port %d is not a TCP port (0 to 65535)", lp->key,
                           l.name, l.port);
    return 0;
}

static int bcfg_is_v6(const char *h)
{
    struct in6_addr a6;
    return inet_pton(AF_INET6, h, &a6) == 1;
}

static int bcfg_is_ip(const char *h)
{
    struct in_addr a4;
    return inet_pton(AF_INET, h, &a4) == 1 || bcfg_is_v6(h);
}

/* Kafka's rule for two listeners on one port: only an IPv4 and an IPv6
 * address may share it. */
static int bcfg_check_ports(const bcfg_lparse_t *lp)
{
    for (int i = 0; i < lp->n; i++)
        for (int j = i + 1; j < lp->n; j++) {
            const bcfg_listener_t *a = &lp->v[i], *b = &lp->v[j];
            if (a->port != b->port)
                continue;
            if (!bcfg_is_ip(a->host) || !bcfg_is_ip(b->host))
                return bcfg_refuse(lp->map->cfg, "%s: Each listener must have a different port, "
                                   "listeners: %s", lp->key, lp->raw);
            if (bcfg_is_v6(a->host) == bcfg_is_v6(b->host))
                return bcfg_refuse(lp->map->cfg, "%s: If you have two listeners on the same port "
                                   "then one needs to be IPv4 and the other IPv6, listeners: %s",
                                   lp->key, lp->raw);
        }
    return 0;
}

static int bcfg_check_names(const bcfg_lparse_t *lp)
{
    for (int i = 0; i < lp->n; i++)
        for (int j = i + 1; j < lp->n; j++)
            if (!strcmp(lp->v[i].name, lp->v[j].name))
                return bcfg_refuse(lp->map->cfg, "%s: Each listener must have a different name, "
                                   "listeners: %s", lp->key, lp->raw);
    return 0;
}

/* Parses and checks one list key; *out and *n get the listeners (owned by the
 * caller, also on failure). */
static int bcfg_parse_list(const char *key, const char *raw, const bcfg_map_t *map,
                           const char *ctrl, bcfg_listener_t **out, int *n)
{
    bcfg_lparse_t lp = {key, raw, map, ctrl, NULL, 0};
    int rc = cfg_val_items(raw, bcfg_endpoint_item, &lp) ? -1 : 0;

    if (rc == 0)
        rc = bcfg_check_names(&lp);
    if (rc == 0)
        rc = bcfg_check_ports(&lp);
    *out = lp.v;
    *n = lp.n;
    return rc;
}

/* advertised.listeners: a subset of the listeners' names, never 0.0.0.0. */
static int bcfg_check_advertised(const broker_config_t *cfg)
{
    char found[512] = "", valid[512] = "";
    int subset = 1;

    for (int i = 0; i < cfg->nadvertised; i++) {
        const bcfg_listener_t *a = &cfg->advertised[i];
        int known = 0;
        if (!strcmp(a->host, "0.0.0.0"))
            return bcfg_require(cfg, "advertised.listeners cannot use the nonroutable meta-address "
                               "0.0.0.0. Use a routable IP address.");
        for (int j = 0; j < cfg->nlisteners; j++)
            known |= !strcmp(cfg->listeners[j].name, a->name);
        subset &= known;
        snprintf(found + strlen(found), sizeof(found) - strlen(found), "%s%s", i ? "," : "",
                 a->name);
    }
    if (subset)
        return 0;
    for (int j = 0; j < cfg->nlisteners; j++)
        snprintf(valid + strlen(valid), sizeof(valid) - strlen(valid), "%s%s", j ? "," : "",
                 cfg->listeners[j].name);
    return bcfg_require(cfg, "advertised.listeners listener names must be equal to or a subset of "
                        "the ones defined in listeners. Found %s. The valid options based on the "
                        "current configuration are %s", found, valid);
}

bool bcfg_map_has(broker_config_t *cfg, const char *name)
{
    bcfg_map_t map;
    bool has;

    if (bcfg_map_load(cfg, &map) < 0)
        return false;
    has = bcfg_map_get(&map, name) != NULL;
    bcfg_map_free(&map);
    return has;
}

int bcfg_load_listeners(broker_config_t *cfg)
{
    const char *spec = props_get(&cfg->props, "listeners");
    const char *adv = props_get(&cfg->props, "advertised.listeners");
    bcfg_map_t map;
    int rc;

    if (!spec)
        spec = cfg_broker_default("listeners");
    if (bcfg_map_load(cfg, &map) < 0)
        return -1;
    rc = bcfg_parse_list("listeners", spec, &map, cfg->controller_listener_names,
                         &cfg->listeners, &cfg->nlisteners);
    if (rc == 0 && adv)
        rc = bcfg_parse_list("advertised.listeners", adv, &map, cfg->controller_listener_names,
                             &cfg->advertised, &cfg->nadvertised);
    if (rc == 0)
        rc = bcfg_check_advertised(cfg);
    bcfg_map_free(&map);
    return rc;
}
