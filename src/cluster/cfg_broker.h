/* Broker configs as DescribeConfigs reports them for a BROKER resource:
 * every key Kafka 4.x defines for a broker, with its type, default and
 * read-only/sensitive flags, and the resolution of a key's value from the
 * node's server.properties. Strand reads only some of these keys (see
 * broker/broker_config.c); the others are reported with the value the
 * file gives or Kafka's default, as a Kafka broker would, so that tools
 * that list a broker's configs see the full set. */
#ifndef STRAND_CLUSTER_CFG_BROKER_H
#define STRAND_CLUSTER_CFG_BROKER_H

#include <stdint.h>

#include "cluster/cfg_def.h"
#include "cluster/meta_image.h"
#include "util/props.h"

typedef struct cfg_broker_key_s {
    const char *name;
    int8_t type;       /* enum cfg_type */
    const char *dflt;  /* Kafka's default, NULL = null */
    uint8_t flags;     /* CFG_RO, CFG_SENS */
} cfg_broker_key_t;

/* The table, sorted by name; *n gets its length. */
const cfg_broker_key_t *cfg_broker_keys(int *n);
/* NULL when Kafka defines no broker key of that name. */
const cfg_broker_key_t *cfg_broker_find(const char *name);

/* A key's value for node `node` (its id as a string): a dynamic config of
 * the node in img, then one of the cluster default ("" resource), then
 * server.properties (props), then the default. img and props may be NULL.
 * Sensitive values are reported as null. */
void cfg_broker_resolve(const cfg_broker_key_t *k, const meta_image_t *img, const char *node,
                        const props_t *props, cfg_resolved_t *out);

#endif
