/* Broker configs: the one table of every broker key Kafka 4.4 defines
 * (cfg_broker_table.c), with its type, default, run-time update mode,
 * sensitivity, documentation and value check. The server.properties parser
 * (broker/broker_config.c) takes defaults and checks from it, and
 * DescribeConfigs of a BROKER resource reports it, resolving each key's
 * value from the node's server.properties: keys Strand does not act on are
 * reported with the value the file gives or Kafka's default, as a Kafka
 * broker would, so that tools that list a broker's configs see the full
 * set. */
#ifndef STRAND_CLUSTER_CFG_BROKER_H
#define STRAND_CLUSTER_CFG_BROKER_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/cfg_def.h"
#include "cluster/meta_image.h"
#include "util/props.h"

/* What a value must be beyond its type, as Kafka's validator of the key. */
enum cfg_check {
    CFG_CK_NONE,
    CFG_CK_MIN,         /* at least min */
    CFG_CK_RANGE,       /* min to max */
    CFG_CK_RANGE_OR_M1, /* min to max, or -1 */
    CFG_CK_RATIO,       /* a DOUBLE from 0 to 1 */
    CFG_CK_NONEMPTY,    /* a non-empty string */
    CFG_CK_CHOICE,      /* one of choices (each element, for a LIST) */
    CFG_CK_CHOICE_CI,   /* one of choices, in any case */
    CFG_CK_VOTERS,      /* id@host:port, ... */
    CFG_CK_HOSTPORTS,   /* host:port, ... */
};

typedef struct cfg_broker_key_s {
    const char *name;
    int8_t type;       /* enum cfg_type */
    const char *dflt;  /* Kafka's default, NULL = null (or none: CFG_REQ) */
    uint8_t flags;     /* one of CFG_RO, CFG_PER_BROKER, CFG_CLUSTER_WIDE;
                          CFG_SENS, CFG_REQ, CFG_NONEMPTY */
    uint8_t check;     /* enum cfg_check */
    int64_t min, max;  /* for CFG_CK_MIN / _RANGE / _RANGE_OR_M1 */
    const char *const *choices; /* for CFG_CK_CHOICE / _CHOICE_CI */
    const char *doc;   /* ours, for the keys Strand acts on; else NULL */
} cfg_broker_key_t;

/* The table, sorted by name; *n gets its length. */
const cfg_broker_key_t *cfg_broker_keys(int *n);
/* NULL when Kafka defines no broker key of that name. */
const cfg_broker_key_t *cfg_broker_find(const char *name);
/* The key's default (owned by the table), or NULL. */
const char *cfg_broker_default(const char *name);

/* Checks a value of k as Kafka's ConfigDef does at start-up: trimmed,
 * parsed by type, then k's check. Returns 0, or INVALID_CONFIG (40) with
 * Kafka's message in err. */
int16_t cfg_broker_check(const cfg_broker_key_t *k, const char *value, char *err,
                         size_t errlen);

/* A key's value for node `node` (its id as a string): a dynamic config of
 * the node in img, then one of the cluster default ("" resource), then
 * server.properties (props), then the default. img and props may be NULL.
 * Sensitive values are reported as null. */
void cfg_broker_resolve(const cfg_broker_key_t *k, const meta_image_t *img, const char *node,
                        const props_t *props, cfg_resolved_t *out);

#endif
