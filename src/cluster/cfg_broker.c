/* Broker configs: lookups in the table (cfg_broker_table.c) and the check
 * of a value as Kafka's ConfigDef makes it. The layers of a broker's
 * config and DescribeConfigs' view of them are in cfg_broker_view.c. */
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

/* Kafka's validators see the parsed number: a message shows it as Java
 * prints it (" 007 " as 7). */
static int16_t cfg_broker_range(const cfg_broker_key_t *k, int64_t v, char *err, size_t errlen)
{
    char why[96], raw[24];

    snprintf(raw, sizeof(raw), "%" PRId64, v);

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

static int16_t cfg_broker_double(const cfg_broker_key_t *k, const char *t, const char *raw,
                                 char *err, size_t errlen)
{
    return cfg_val_parse_double(t, raw, k->name, k->check == CFG_CK_RATIO, err, errlen);
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
    int64_t v;
    int16_t e;

    cfg_val_trim(value, t, sizeof(t));
    switch (k->type) {
    case CFG_T_BOOLEAN:
        return cfg_val_parse_int(k->type, t, value, k->name, &v, err, errlen);
    case CFG_T_INT:
    case CFG_T_SHORT:
    case CFG_T_LONG:
        e = cfg_val_parse_int(k->type, t, value, k->name, &v, err, errlen);
        return e ? e : cfg_broker_range(k, v, err, errlen);
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

int cfg_broker_selector(const char *value)
{
    char t[256];
    if (!value || !*cfg_val_trim(value, t, sizeof(t)))
        return 0;
    return strcmp(t, CFG_RACK_AWARE_SELECTOR) ? -1 : 1;
}
