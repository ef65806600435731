/* Broker configs: lookups in the table (cfg_broker_table.c), the check of
 * a value as Kafka's ConfigDef makes it at start-up, and the resolution of
 * a key for DescribeConfigs. */
#include "cluster/cfg_broker.h"

#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cluster/cfg_topic.h"
#include "cluster/cfg_val.h"

const cfg_broker_key_t *cfg_broker_find(const char *name)
{
    int n;
    const cfg_broker_key_t *t = cfg_broker_keys(&n);
    int lo = 0, hi = n - 1;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2, c = strcmp(t[mid].name, name);
        if (c == 0)
            return &t[mid];
        if (c < 0)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return NULL;
}

/* ---- checks ---- */

typedef struct cfg_bchk_s {
    const cfg_broker_key_t *k;
    char *err;
    size_t errlen;
} cfg_bchk_t;

static int16_t cfg_broker_range(const cfg_broker_key_t *k, int64_t v, const char *raw, char *err,
                                size_t errlen)
{
    char why[96];

    if (k->check == CFG_CK_RANGE_OR_M1 && v != -1 && (v < k->min || v > k->max)) {
        snprintf(why, sizeof(why), "Value must be between %" PRId64 " and %" PRId64
                 " or equal to -1", k->min, k->max);
        return cfg_val_bad(err, errlen, raw, k->name, why);
    }
    if ((k->check == CFG_CK_MIN || k->check == CFG_CK_RANGE) && v < k->min) {
        snprintf(why, sizeof(why), "Value must be at least %" PRId64, k->min);
        return cfg_val_bad(err, errlen, raw, k->name, why);
    }
    if (k->check == CFG_CK_RANGE && v > k->max) {
        snprintf(why, sizeof(why), "Value must be no more than %" PRId64, k->max);
        return cfg_val_bad(err, errlen, raw, k->name, why);
    }
    return 0;
}

/* host:port: a host (a name, an address, or [v6]) and decimal digits. */
static int cfg_hostport_ok(const char *s, size_t n)
{
    size_t colon = n;

    while (colon > 0 && s[colon - 1] != ':')
        colon--;
    if (colon < 2 || colon == n) /* no ':', no host, or no port */
        return 0;
    for (size_t i = colon; i < n; i++)
        if (!isdigit((unsigned char)s[i]))
            return 0;
    return 1;
}

/* An element of a list key: its choices, or its address form. */
static int cfg_broker_item(const char *item, size_t len, void *arg)
{
    cfg_bchk_t *c = arg;
    const cfg_broker_key_t *k = c->k;
    char shown[256], why[256];
    const char *at;

    snprintf(shown, sizeof(shown), "%.*s", (int)(len < 200 ? len : 200), item);
    if (len == 0 && k->check != CFG_CK_VOTERS && k->check != CFG_CK_HOSTPORTS) {
        snprintf(c->err, c->errlen, "Configuration '%s' values must not be empty.", k->name);
        return KERR_INVALID_CONFIG;
    }
    if (k->check == CFG_CK_CHOICE || k->check == CFG_CK_CHOICE_CI) {
        if (cfg_val_in(k->choices, item, len, k->check == CFG_CK_CHOICE_CI))
            return 0;
        cfg_val_choices_text(k->choices, k->check == CFG_CK_CHOICE_CI, why, sizeof(why));
        return cfg_val_bad(c->err, c->errlen, shown, k->name, why);
    }
    if (k->check == CFG_CK_VOTERS) {
        at = memchr(item, '@', len);
        if (!at || at == item || strspn(item, "0123456789") != (size_t)(at - item)) {
            snprintf(c->err, c->errlen, "Invalid configuration value for %s. Each entry should "
                     "be in the form `{id}@{host}:{port}`.", k->name);
            return KERR_INVALID_CONFIG;
        }
        if (cfg_hostport_ok(at + 1, len - (size_t)(at - item) - 1))
            return 0;
        snprintf(c->err, c->errlen, "Failed to parse host name from entry %s for the "
                 "configuration %s. Each entry should be in the form `{id}@{host}:{port}`.",
                 shown, k->name);
        return KERR_INVALID_CONFIG;
    }
    if (k->check == CFG_CK_HOSTPORTS && !cfg_hostport_ok(item, len)) {
        snprintf(c->err, c->errlen, "Failed to parse host name from %s for the configuration %s. "
                 "Each entry should be in the form \"{host}:{port}\"", shown, k->name);
        return KERR_INVALID_CONFIG;
    }
    return 0;
}

/* The type's part, with Kafka's words for a value that does not parse. */
static int16_t cfg_broker_number(const cfg_broker_key_t *k, const char *t, const char *raw,
                                 char *err, size_t errlen)
{
    static const char *const names[] = {[CFG_T_INT] = "INT", [CFG_T_SHORT] = "SHORT",
                                        [CFG_T_LONG] = "LONG"};
    char why[64];
    int64_t v;

    if (cfg_val_long(t, &v) < 0 || (k->type == CFG_T_INT && (v < INT32_MIN || v > INT32_MAX)) ||
        (k->type == CFG_T_SHORT && (v < INT16_MIN || v > INT16_MAX))) {
        snprintf(why, sizeof(why), "Not a number of type %s", names[k->type]);
        return cfg_val_bad(err, errlen, raw, k->name, why);
    }
    return cfg_broker_range(k, v, raw, err, errlen);
}

static int16_t cfg_broker_double(const cfg_broker_key_t *k, const char *t, const char *raw,
                                 char *err, size_t errlen)
{
    double d;

    if (cfg_val_double(t, &d) < 0)
        return cfg_val_bad(err, errlen, raw, k->name, "Not a number of type DOUBLE");
    if (k->check == CFG_CK_RATIO && d < 0)
        return cfg_val_bad(err, errlen, raw, k->name, "Value must be at least 0");
    if (k->check == CFG_CK_RATIO && d > 1)
        return cfg_val_bad(err, errlen, raw, k->name, "Value must be no more than 1");
    return 0;
}

static int16_t cfg_broker_string(const cfg_broker_key_t *k, const char *t, const char *raw,
                                 char *err, size_t errlen)
{
    char why[256];

    if (k->check == CFG_CK_NONEMPTY && !*t)
        return cfg_val_bad(err, errlen, raw, k->name, "String must be non-empty");
    if ((k->check == CFG_CK_CHOICE || k->check == CFG_CK_CHOICE_CI) &&
        !cfg_val_in(k->choices, t, strlen(t), k->check == CFG_CK_CHOICE_CI)) {
        cfg_val_choices_text(k->choices, k->check == CFG_CK_CHOICE_CI, why, sizeof(why));
        return cfg_val_bad(err, errlen, raw, k->name, why);
    }
    return 0;
}

/* Kafka's words for an empty list where one is required. */
static int16_t cfg_broker_empty_list(const cfg_broker_key_t *k, char *err, size_t errlen)
{
    size_t n = (size_t)snprintf(err, errlen, "Configuration '%s' must not be empty. Valid values "
                                "include: ", k->name);
    if (!k->choices) {
        snprintf(err + n, n < errlen ? errlen - n : 0, "any non-empty value");
        return KERR_INVALID_CONFIG;
    }
    for (int i = 0; k->choices[i] && n < errlen; i++)
        n += (size_t)snprintf(err + n, errlen - n, "%s%s", i ? ", " : "[", k->choices[i]);
    if (n < errlen)
        snprintf(err + n, errlen - n, "]");
    return KERR_INVALID_CONFIG;
}

int16_t cfg_broker_check(const cfg_broker_key_t *k, const char *value, char *err,
                         size_t errlen)
{
    char t[4096];
    cfg_bchk_t c = {k, err, errlen};
    bool b;

    cfg_val_trim(value, t, sizeof(t));
    switch (k->type) {
    case CFG_T_BOOLEAN:
        if (cfg_val_bool(t, &b) < 0)
            return cfg_val_bad(err, errlen, value, k->name,
                               "Expected value to be either true or false");
        return 0;
    case CFG_T_INT:
    case CFG_T_SHORT:
    case CFG_T_LONG:
        return cfg_broker_number(k, t, value, err, errlen);
    case CFG_T_DOUBLE:
        return cfg_broker_double(k, t, value, err, errlen);
    case CFG_T_LIST:
        if (!*t && (k->flags & CFG_NONEMPTY))
            return cfg_broker_empty_list(k, err, errlen);
        return (int16_t)cfg_val_items(t, cfg_broker_item, &c);
    default:
        return cfg_broker_string(k, t, value, err, errlen);
    }
}

const char *cfg_broker_default(const char *name)
{
    const cfg_broker_key_t *k = cfg_broker_find(name);
    return k ? k->dflt : NULL;
}

/* ---- DescribeConfigs ---- */

static void cfg_broker_syn(cfg_resolved_t *out, const char *value, int8_t source)
{
    if (out->nsyn >= CFG_MAX_SYN)
        return;
    out->syn[out->nsyn].name = out->name;
    out->syn[out->nsyn].value = (out->flags & CFG_SENS) ? NULL : value;
    out->syn[out->nsyn].source = source;
    out->nsyn++;
}

void cfg_broker_resolve(const cfg_broker_key_t *k, const meta_image_t *img, const char *node,
                        const props_t *props, cfg_resolved_t *out)
{
    const char *v;

    memset(out, 0, sizeof(*out));
    out->name = k->name;
    out->type = k->type;
    out->flags = k->flags;
    out->doc = k->doc;
    if (img && (v = meta_image_config_get(img, META_RES_BROKER, node, strlen(node), k->name)))
        cfg_broker_syn(out, v, CFG_SRC_DYNAMIC_BROKER);
    if (img && (v = meta_image_config_get(img, META_RES_BROKER, "", 0, k->name)))
        cfg_broker_syn(out, v, CFG_SRC_DYNAMIC_DEFAULT_BROKER);
    if ((v = cfg_props_peek(props, k->name)))
        cfg_broker_syn(out, v, CFG_SRC_STATIC_BROKER);
    if (k->dflt)
        cfg_broker_syn(out, k->dflt, CFG_SRC_DEFAULT);
    if (out->nsyn) {
        out->value = out->syn[0].value;
        out->source = out->syn[0].source;
    } else {
        out->value = NULL;
        out->source = CFG_SRC_DEFAULT;
    }
}
