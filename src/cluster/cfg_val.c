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

void cfg_val_choices_text(const char *const *choices, int nocase, char *buf, size_t cap)
{
    size_t n = (size_t)snprintf(buf, cap, "String must be one of%s: ",
                                nocase ? " (case insensitive)" : "");
    for (int i = 0; choices[i] && n < cap; i++)
        n += (size_t)snprintf(buf + n, cap - n, "%s%s", i ? ", " : "", choices[i]);
}

/* Java's Double.toString: the fewest digits that read back as d, in
 * plain form ("2.0", "0.5") from 10^-3 to 10^7 and in Java's scientific
 * form ("1.0E10") outside. */
void cfg_val_java_double(double d, char *buf, size_t cap)
{
    char e[40], digits[24];
    int p = 1, exp10;

    if (d != d || d - d != 0) {
        snprintf(buf, cap, "%s", d != d ? "NaN" : d > 0 ? "Infinity" : "-Infinity");
        return;
    }
    if (d == 0) {
        snprintf(buf, cap, "%s", signbit(d) ? "-0.0" : "0.0");
        return;
    }
    for (; p < 17; p++) {
        snprintf(e, sizeof(e), "%.*e", p - 1, d);
        if (strtod(e, NULL) == d)
            break;
    }
    snprintf(e, sizeof(e), "%.*e", p - 1, d);
    const char *m = e + (e[0] == '-'), *x = strchr(e, 'e');
    size_t nd = 0;
    for (const char *c = m; c < x; c++)
        if (isdigit((unsigned char)*c))
            digits[nd++] = *c;
    digits[nd] = '\0';
    exp10 = atoi(x + 1);
    const char *sign = d < 0 ? "-" : "";
    double a = fabs(d);
    if (a >= 1e-3 && a < 1e7) {
        char out[64];
        size_t o = 0;
        if (exp10 < 0) {
            o += (size_t)snprintf(out, sizeof(out), "0.");
            for (int i = -1; i > exp10; i--)
                out[o++] = '0';
            o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", digits);
        } else {
            for (int i = 0; i <= exp10; i++)
                out[o++] = i < (int)nd ? digits[i] : '0';
            out[o++] = '.';
            if ((int)nd > exp10 + 1)
                o += (size_t)snprintf(out + o, sizeof(out) - o, "%s", digits + exp10 + 1);
            else
                out[o++] = '0';
            out[o] = '\0';
        }
        snprintf(buf, cap, "%s%s", sign, out);
        return;
    }
    snprintf(buf, cap, "%s%c.%sE%d", sign, digits[0], nd > 1 ? digits + 1 : "0", exp10);
}
