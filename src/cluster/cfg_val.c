/* Config values as Kafka's ConfigDef reads them: see cfg_val.h. */
#include "cluster/cfg_val.h"

#include <ctype.h>
#include <math.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "util/kerr.h"

const char *cfg_val_trim(const char *s, char *buf, size_t cap)
{
    while (isspace((unsigned char)*s))
        s++;
    size_t n = strlen(s);
    while (n > 0 && isspace((unsigned char)s[n - 1]))
        n--;
    if (n >= cap)
        n = cap - 1;
    memcpy(buf, s, n);
    buf[n] = '\0';
    return buf;
}

int cfg_val_long(const char *s, int64_t *out)
{
    const char *p = s;
    int neg = 0;
    uint64_t v = 0, lim;

    if (*p == '+' || *p == '-')
        neg = *p++ == '-';
    if (!*p)
        return -1;
    lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
    for (; *p; p++) {
        if (*p < '0' || *p > '9')
            return -1;
        if (v > (lim - (uint64_t)(*p - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*p - '0');
    }
    *out = neg ? (int64_t)(0 - v) : (int64_t)v;
    return 0;
}

int cfg_val_bool(const char *s, bool *out)
{
    if (!strcasecmp(s, "true"))
        *out = true;
    else if (!strcasecmp(s, "false"))
        *out = false;
    else
        return -1;
    return 0;
}

int cfg_val_double(const char *s, double *out)
{
    char *end;
    if (!*s)
        return -1;
    errno = 0;
    *out = strtod(s, &end);
    return *end || errno == ERANGE ? -1 : 0;
}

int cfg_val_in(const char *const *choices, const char *s, size_t len, int nocase)
{
    for (int i = 0; choices[i]; i++)
        if (strlen(choices[i]) == len &&
            !(nocase ? strncasecmp(choices[i], s, len) : memcmp(choices[i], s, len)))
            return 1;
    return 0;
}

int cfg_val_items(const char *s, cfg_val_item_fn fn, void *arg)
{
    while (isspace((unsigned char)*s))
        s++;
    if (!*s)
        return 0;
    for (;;) {
        const char *e = strchr(s, ',');
        size_t n = e ? (size_t)(e - s) : strlen(s);
        int rc;
        while (n && isspace((unsigned char)*s))
            s++, n--;
        while (n && isspace((unsigned char)s[n - 1]))
            n--;
        if ((rc = fn(s, n, arg)) != 0 || !e)
            return rc;
        s = e + 1;
    }
}

int16_t cfg_val_bad(char *err, size_t errlen, const char *value, const char *key,
                    const char *why)
{
    snprintf(err, errlen, "Invalid value %s for configuration %s: %s", value, key, why);
    return KERR_INVALID_CONFIG;
}

int16_t cfg_val_parse_int(enum cfg_type type, const char *t, const char *raw, const char *key,
                          int64_t *out, char *err, size_t errlen)
{
    static const char *const names[] = {[CFG_T_INT] = "INT", [CFG_T_SHORT] = "SHORT",
                                        [CFG_T_LONG] = "LONG"};
    char why[64];
    bool b;

    if (type == CFG_T_BOOLEAN) {
        if (cfg_val_bool(t, &b) < 0)
            return cfg_val_bad(err, errlen, raw, key, "Expected value to be either true or false");
        *out = b;
        return 0;
    }
    if (cfg_val_long(t, out) < 0 || (type == CFG_T_INT && (*out < INT32_MIN || *out > INT32_MAX)) ||
        (type == CFG_T_SHORT && (*out < INT16_MIN || *out > INT16_MAX))) {
        snprintf(why, sizeof(why), "Not a number of type %s", names[type]);
        return cfg_val_bad(err, errlen, raw, key, why);
    }
    return 0;
}

void cfg_val_choices_text(const char *const *choices, int nocase, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "String must be one of%s: ",
                                nocase ? " (case insensitive)" : "");
    for (int i = 0; choices[i] && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", choices[i]);
}

/* The fewest significant digits that read back as d (d finite, not 0),
 * without sign or point, into digits; returns the decimal exponent of the
 * first. */
static int cfg_val_shortest(double d, char *digits, size_t cap)
{
    char e[40];
    size_t nd = 0;
    int p = 1;

    for (; p < 17; p++) {
        snprintf(e, sizeof(e), "%.*e", p - 1, d);
        if (strtod(e, NULL) == d)
            break;
    }
    snprintf(e, sizeof(e), "%.*e", p - 1, fabs(d));
    const char *x = strchr(e, 'e');
    for (const char *c = e; c < x && nd + 1 < cap; c++)
        if (isdigit((unsigned char)*c))
            digits[nd++] = *c;
    digits[nd] = '\0';
    return atoi(x + 1);
}

/* digits * 10^exp10 in plain form, at least one digit after the point. */
static void cfg_val_plain(const char *digits, int exp10, char *out, size_t cap)
{
    int nd = (int)strlen(digits);
    size_t o = 0;

    if (exp10 < 0) {
        o += (size_t)snprintf(out, cap, "0.");
        for (int i = -1; i > exp10 && o + 1 < cap; i--)
            out[o++] = '0';
        snprintf(out + o, cap - o, "%s", digits);
        return;
    }
    for (int i = 0; i <= exp10 && o + 1 < cap; i++)
        out[o++] = i < nd ? digits[i] : '0';
    snprintf(out + o, cap - o, ".%s", nd > exp10 + 1 ? digits + exp10 + 1 : "0");
}

/* Java's Double.toString: the fewest digits that read back as d, in
 * plain form ("2.0", "0.5") from 10^-3 to 10^7 and in Java's scientific
 * form ("1.0E10") outside. */
void cfg_val_java_double(double d, char *buf, size_t cap)
{
    char digits[24], plain[64];
    const char *sign = d < 0 ? "-" : "";
    int exp10;

    if (d != d || d - d != 0) {
        snprintf(buf, cap, "%s", d != d ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (d == 0) {
        snprintf(buf, cap, "%s", signbit(d) ? "-0.0" : "0.0");
        return;
    }
    exp10 = cfg_val_shortest(d, digits, sizeof(digits));
    if (fabs(d) >= 1e-3 && fabs(d) < 1e7) {
        cfg_val_plain(digits, exp10, plain, sizeof(plain));
        snprintf(buf, cap, "%s%s", sign, plain);
        return;
    }
    snprintf(buf, cap, "%s%c.%sE%d", sign, digits[0], digits[1] ? digits + 1 : "0", exp10);
}

int16_t cfg_val_parse_double(const char *t, const char *raw, const char *key, int ratio,
                             char *err, size_t errlen)
{
    char shown[40];
    double d;

    if (cfg_val_double(t, &d) < 0)
        return cfg_val_bad(err, errlen, raw, key, "Not a number of type DOUBLE");
    if (!ratio || (d >= 0 && d <= 1))
        return 0;
    cfg_val_java_double(d, shown, sizeof(shown));
    return cfg_val_bad(err, errlen, shown, key,
                       d < 0 ? "Value must be at least 0" : "Value must be no more than 1");
}
