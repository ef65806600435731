/* The layers of a broker's config (cfg_bview_t: this node's dynamic
 * configs, the cluster-wide dynamic defaults, server.properties, Kafka's
 * defaults), and DescribeConfigs' view of a broker key: its value, its
 * source and its synonyms, in the order and with the omissions of Kafka's
 * broker (its synonym list keeps only what follows the first entry of the
 * key itself, so a key set only through a lower-precedence synonym shows
 * none). */
#include "cluster/cfg_broker.h"

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cluster/cfg_topic.h"
#include "cluster/cfg_val.h"

static const char *cfg_mi_get(const mi_config_t *c, const char *key)
{
    for (int i = 0; c && i < c->n; i++)
        if (!strcmp(c->v[i].key, key))
            return c->v[i].value;
    return NULL;
}

void cfg_bview_init(cfg_bview_t *v, const meta_image_t *img, const char *node,
                    const props_t *props)
{
    v->node = img ? meta_image_config(img, META_RES_BROKER, node, strlen(node)) : NULL;
    v->dflt = img ? meta_image_config(img, META_RES_BROKER, "", 0) : NULL;
    v->props = props;
}

const char *cfg_bview_set(const cfg_bview_t *v, const char *key, int8_t *src)
{
    const char *s;
    int8_t source = CFG_SRC_DYNAMIC_BROKER;

    if (!(s = cfg_mi_get(v->node, key))) {
        source = CFG_SRC_DYNAMIC_DEFAULT_BROKER;
        if (!(s = cfg_mi_get(v->dflt, key))) {
            source = CFG_SRC_STATIC_BROKER;
            s = cfg_props_peek(v->props, key);
        }
    }
    if (s && src)
        *src = source;
    return s;
}

const char *cfg_bview_get(const cfg_bview_t *v, const char *key)
{
    const char *s = cfg_bview_set(v, key, NULL);
    return s ? s : cfg_broker_default(key);
}

const char *cfg_broker_listener_base(const char *name)
{
    static const char pre[] = "listener.name.";
    const char *dot;

    if (strncmp(name, pre, sizeof(pre) - 1) != 0)
        return NULL;
    dot = strchr(name + sizeof(pre) - 1, '.');
    return dot ? dot + 1 : NULL;
}

const cfg_broker_key_t *cfg_broker_key_of(const char *name)
{
    const cfg_broker_key_t *k = cfg_broker_find(name);
    const char *base;

    if (!k && (base = cfg_broker_listener_base(name)))
        k = cfg_broker_find(base);
    return k;
}

int cfg_broker_synonyms(const char *name, const char *names[3])
{
    static const char *const fam[][4] = {
        {"log.roll.ms", "log.roll.hours", NULL, NULL},
        {"log.roll.jitter.ms", "log.roll.jitter.hours", NULL, NULL},
        {"log.retention.ms", "log.retention.minutes", "log.retention.hours", NULL},
        {"log.flush.interval.ms", "log.flush.scheduler.interval.ms", NULL, NULL},
    };
    const char *base;
    int n = 0;

    for (size_t f = 0; f < sizeof(fam) / sizeof(fam[0]); f++)
        for (int i = 0; fam[f][i]; i++)
            if (!strcmp(fam[f][i], name)) {
                for (n = 0; fam[f][n]; n++)
                    names[n] = fam[f][n];
                return n;
            }
    names[n++] = name;
    if ((base = cfg_broker_listener_base(name)))
        names[n++] = base;
    return n;
}

static void cfg_syn_add(cfg_resolved_t *out, const char *name, const char *value, int8_t source)
{
    if (out->nsyn >= CFG_MAX_SYN)
        return;
    out->syn[out->nsyn].name = name;
    out->syn[out->nsyn].value = value;
    out->syn[out->nsyn].source = source;
    out->nsyn++;
}

void cfg_broker_synlist(const cfg_bview_t *v, const char *self, const char *const *names, int n,
                        bool per_broker, bool sensitive, cfg_resolved_t *out)
{
    int first = out->nsyn, keep;

    for (int layer = per_broker ? 0 : 1; layer < (per_broker ? 4 : 2); layer++)
        for (int i = 0; i < n; i++) {
            static const int8_t src[] = {CFG_SRC_DYNAMIC_BROKER, CFG_SRC_DYNAMIC_DEFAULT_BROKER,
                                         CFG_SRC_STATIC_BROKER, CFG_SRC_DEFAULT};
            const char *s = layer == 0   ? cfg_mi_get(v->node, names[i])
                            : layer == 1 ? cfg_mi_get(v->dflt, names[i])
                            : layer == 2 ? cfg_props_peek(v->props, names[i])
                                         : cfg_broker_default(names[i]);
            if (s)
                cfg_syn_add(out, names[i], sensitive ? NULL : s, src[layer]);
        }
    for (keep = first; keep < out->nsyn && strcmp(out->syn[keep].name, self); keep++)
        ;
    memmove(&out->syn[first], &out->syn[keep], (size_t)(out->nsyn - keep) * sizeof(cfg_syn_t));
    out->nsyn -= keep - first;
}

/* A value as a Kafka broker shows its parsed config: numbers without
 * blanks or leading zeros, booleans in lower case, doubles as Java prints
 * them, list elements trimmed. Into buf; raw itself when it does not
 * parse (it was checked when it was set). */
static const char *cfg_broker_normal(const cfg_broker_key_t *k, const char *raw, char *buf,
                                     size_t cap)
{
    char t[256];
    int64_t l;
    double d;
    bool b;

    cfg_val_trim(raw, t, sizeof(t));
    if ((k->type == CFG_T_INT || k->type == CFG_T_LONG || k->type == CFG_T_SHORT) &&
        cfg_val_long(t, &l) == 0)
        snprintf(buf, cap, "%" PRId64, l);
    else if (k->type == CFG_T_BOOLEAN && cfg_val_bool(t, &b) == 0)
        snprintf(buf, cap, "%s", b ? "true" : "false");
    else if (k->type == CFG_T_DOUBLE && cfg_val_double(t, &d) == 0)
        cfg_val_java_double(d, buf, cap);
    else if (k->type == CFG_T_LIST) {
        size_t o = 0;
        buf[0] = '\0';
        for (const char *p = t; *p && o + 1 < cap; p++)
            if (*p != ' ' && *p != '\t')
                buf[o++] = *p, buf[o] = '\0';
    } else if (k->type == CFG_T_STRING || k->type == CFG_T_CLASS)
        snprintf(buf, cap, "%s", t);
    else
        return raw;
    return buf;
}

void cfg_broker_resolve(const char *name, const cfg_bview_t *v, bool per_broker,
                        cfg_resolved_t *out)
{
    const cfg_broker_key_t *k = cfg_broker_find(name), *base = k ? k : cfg_broker_key_of(name);
    const char *names[3];
    bool sens = !base || (base->flags & CFG_SENS);
    int n = cfg_broker_synonyms(name, names);

    memset(out, 0, sizeof(*out));
    out->name = name;
    out->type = base ? base->type : CFG_T_UNKNOWN;
    out->flags = (uint8_t)((k ? k->flags : CFG_RO) | (sens ? CFG_SENS : 0));
    out->doc = k ? k->doc : NULL;
    out->value = per_broker ? cfg_bview_get(v, name) : cfg_mi_get(v->dflt, name);
    if (per_broker && out->value && k)
        out->value = cfg_broker_normal(k, out->value, out->scaled, sizeof(out->scaled));
    if (sens)
        out->value = NULL;
    cfg_broker_synlist(v, name, names, n, per_broker, sens, out);
    out->source = out->nsyn ? out->syn[0].source : CFG_SRC_DEFAULT;
}

void cfg_bview_merge(const cfg_bview_t *v, props_t *out)
{
    props_init(out);
    for (int i = 0; v->props && i < v->props->n; i++)
        props_set(out, v->props->v[i].key, v->props->v[i].value);
    for (int i = 0; v->dflt && i < v->dflt->n; i++)
        props_set(out, v->dflt->v[i].key, v->dflt->v[i].value);
    for (int i = 0; v->node && i < v->node->n; i++)
        props_set(out, v->node->v[i].key, v->node->v[i].value);
}
