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

#include <stdbool.h>
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

/* ---- the layers of a broker's config ---- */

/* A broker's config in layers, highest first, as a Kafka broker merges
 * them: this node's dynamic configs and the cluster-wide dynamic defaults
 * (ConfigRecords of BROKER resources "<node id>" and ""), then
 * server.properties, then Kafka's defaults. The pointers are borrowed. */
typedef struct cfg_bview_s {
    const mi_config_t *node; /* NULL: none */
    const mi_config_t *dflt; /* NULL: none */
    const props_t *props;    /* NULL: none */
} cfg_bview_t;

/* The layers of node `node` (its id as a string) in img (may be NULL). */
void cfg_bview_init(cfg_bview_t *v, const meta_image_t *img, const char *node,
                    const props_t *props);
/* The config the broker runs with, into out (props_free): props, then the
 * dynamic defaults, then the node's dynamic configs over them. */
void cfg_bview_merge(const cfg_bview_t *v, props_t *out);
/* A key's value at the highest layer above Kafka's defaults that sets
 * it, with that layer's source in *src (may be NULL); NULL when none
 * does. */
const char *cfg_bview_set(const cfg_bview_t *v, const char *key, int8_t *src);
/* The same, falling back to Kafka's default (NULL: null). */
const char *cfg_bview_get(const cfg_bview_t *v, const char *key);

/* For "listener.name.<listener>.<key>", the <key> part; else NULL. */
const char *cfg_broker_listener_base(const char *name);
/* The one replica.selector.class there is besides the leader (KIP-392;
 * partition/part_select.h acts on it). */
#define CFG_RACK_AWARE_SELECTOR "org.apache.kafka.common.replica.RackAwareReplicaSelector"
/* Which selector value (replica.selector.class, untrimmed; NULL: unset)
 * names: 1 the rack-aware one, 0 none, -1 another class (which Kafka
 * cannot load either). */
int cfg_broker_selector(const char *value);
/* The table's key of name, or of the key a listener-prefixed name
 * overrides; NULL for a key Kafka does not define. */
const cfg_broker_key_t *cfg_broker_key_of(const char *name);
/* Kafka's synonyms of a broker key, highest precedence first: the key's
 * unit family (log.retention.ms, .minutes, .hours; log.roll.*;
 * log.roll.jitter.*; log.flush.interval.ms then
 * log.flush.scheduler.interval.ms), or a listener-prefixed key and the key
 * it overrides, or the key alone. Points into the table or name; returns
 * the count (at most 3). */
int cfg_broker_synonyms(const char *name, const char *names[3]);

/* The synonyms DescribeConfigs lists for key self, whose synonym names are
 * names[0..n): for each layer in turn (all of them when per_broker, else
 * the dynamic defaults alone, as Kafka describes its default resource),
 * every name with a value there, and then the ones before the first entry
 * named self dropped, as Kafka does. Appends to out->syn; sensitive values
 * are null. */
void cfg_broker_synlist(const cfg_bview_t *v, const char *self, const char *const *names, int n,
                        bool per_broker, bool sensitive, cfg_resolved_t *out);

/* One broker key for DescribeConfigs. per_broker: of the node resource
 * (the key's value in every layer); else of the cluster-wide default
 * resource (its value there). A key outside the table (a listener
 * override, or one Kafka does not define, which a dynamic config may
 * hold) is typed as its base key, or UNKNOWN and sensitive; both are
 * reported read-only, as Kafka does. out's strings point into the table,
 * the image, the properties or name. */
void cfg_broker_resolve(const char *name, const cfg_bview_t *v, bool per_broker,
                        cfg_resolved_t *out);

/* ---- dynamic changes (cfg_broker_dyn.c) ---- */

/* Checks kv[0..n), the whole dynamic config set a BROKER resource would
 * have after a change, as Kafka's broker does before it asks its
 * controller: keys that cannot change at run time ("Cannot update these
 * configs dynamically: [...]"), keystore and truststore keys without a
 * listener prefix, each value (a listener override as the key it
 * overrides), and, for the cluster-wide default (!per_broker), keys that
 * only a broker may have. Keys Kafka does not define pass, as in Kafka.
 * Returns 0, or INVALID_REQUEST (42) with Kafka's message in err. */
int16_t cfg_broker_dyn_check(const mi_kv_t *kv, int n, bool per_broker, char *err, size_t errlen);

#endif
