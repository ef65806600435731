/* Config values read as Kafka's ConfigDef reads them (Java's parsing: a
 * value is trimmed, then parsed by its type), and the text of Kafka's
 * ConfigException for a bad one, so that a value is accepted or refused
 * with the same words whether it is a topic config (cfg_topic.h) or a
 * broker config (cfg_broker.h). */
#ifndef STRAND_CLUSTER_CFG_VAL_H
#define STRAND_CLUSTER_CFG_VAL_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/cfg_def.h"

/* Copies s without surrounding whitespace into buf (cut at cap - 1);
 * returns buf. */
const char *cfg_val_trim(const char *s, char *buf, size_t cap);
/* Long.parseLong: optional sign, decimal digits, no overflow. 0 or -1. */
int cfg_val_long(const char *s, int64_t *out);
/* Boolean: "true" or "false" in any case. 0 or -1. */
int cfg_val_bool(const char *s, bool *out);
/* Double.parseDouble, as far as C's strtod agrees. 0 or -1. */
int cfg_val_double(const char *s, double *out);
/* Whether s[0..len) is one of choices (NULL-terminated); nocase: in any
 * case. */
int cfg_val_in(const char *const *choices, const char *s, size_t len, int nocase);
/* The elements of a Java list: a blank string is the empty list, any
 * other is split on commas, each element trimmed (and possibly empty).
 * Calls fn(item, len, arg) for each until one returns nonzero, and returns
 * that (0 when every element passed). */
typedef int (*cfg_val_item_fn)(const char *item, size_t len, void *arg);
int cfg_val_items(const char *s, cfg_val_item_fn fn, void *arg);
/* Fills err with "Invalid value <value> for configuration <key>: <why>"
 * and returns INVALID_CONFIG. */
int16_t cfg_val_bad(char *err, size_t errlen, const char *value, const char *key,
                    const char *why);
/* The trimmed value t of a BOOLEAN, INT, SHORT or LONG key parsed as its
 * type parses it: 0 with *out the number (1 or 0 for a boolean), or
 * INVALID_CONFIG with Kafka's words in err ("Expected value to be either
 * true or false", "Not a number of type INT"), which show raw, the value
 * as given. Topic and broker configs check their values through it. */
int16_t cfg_val_parse_int(enum cfg_type type, const char *t, const char *raw, const char *key,
                          int64_t *out, char *err, size_t errlen);
/* The trimmed value t of a DOUBLE key: 0, or INVALID_CONFIG with Kafka's
 * words ("Not a number of type DOUBLE", showing raw; with ratio, outside
 * 0..1 "Value must be at least 0" / "no more than 1", showing the parsed
 * value as Java writes it, "2.0"). */
int16_t cfg_val_parse_double(const char *t, const char *raw, const char *key, int ratio,
                             char *err, size_t errlen);
/* "String must be one of: a, b, c" (nocase: "... one of (case
 * insensitive): ..."), into buf. */
void cfg_val_choices_text(const char *const *choices, int nocase, char *buf, size_t cap);
/* d as Java's Double.toString writes it ("2.0", "1.0E10"), which is how
 * Kafka's messages show a DOUBLE value. */
void cfg_val_java_double(double d, char *buf, size_t cap);

#endif
