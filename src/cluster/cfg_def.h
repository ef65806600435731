/* Shared vocabulary of the config definitions (cfg_topic.h, cfg_broker.h):
 * value types and sources numbered as on the wire (DescribeConfigs
 * config_type and config_source), and the resolved form of one key. */
#ifndef STRAND_CLUSTER_CFG_DEF_H
#define STRAND_CLUSTER_CFG_DEF_H

#include <stdint.h>

#include "util/kerr.h"

/* DescribeConfigs v3+ ConfigType. */
enum cfg_type {
    CFG_T_UNKNOWN = 0,
    CFG_T_BOOLEAN = 1,
    CFG_T_STRING = 2,
    CFG_T_INT = 3,
    CFG_T_SHORT = 4,
    CFG_T_LONG = 5,
    CFG_T_DOUBLE = 6,
    CFG_T_LIST = 7,
    CFG_T_CLASS = 8,
    CFG_T_PASSWORD = 9,
};

/* DescribeConfigs v1+ ConfigSource. */
enum cfg_source {
    CFG_SRC_UNKNOWN = 0,
    CFG_SRC_DYNAMIC_TOPIC = 1,
    CFG_SRC_DYNAMIC_BROKER = 2,
    CFG_SRC_DYNAMIC_DEFAULT_BROKER = 3,
    CFG_SRC_STATIC_BROKER = 4,
    CFG_SRC_DEFAULT = 5,
};

/* Key flags. A broker key has exactly one of CFG_RO, CFG_PER_BROKER and
 * CFG_CLUSTER_WIDE: how Kafka 4.4 lets it change at run time (its docs'
 * "Update Mode"). */
#define CFG_RO 1           /* read-only: cannot be changed at run time */
#define CFG_SENS 2         /* sensitive: the value is never shown */
#define CFG_PER_BROKER 4   /* dynamic for one broker at a time */
#define CFG_CLUSTER_WIDE 8 /* dynamic as the cluster-wide default too */
#define CFG_REQ 16         /* no default: a broker does not start without it */
#define CFG_NONEMPTY 32    /* a list that may not be set empty */
#define CFG_UNLISTED 64    /* reported by DescribeConfigs only once set */

#define CFG_MAX_SYN 12

typedef struct cfg_syn_s {
    const char *name;
    const char *value; /* NULL = null */
    int8_t source;
} cfg_syn_t;

/* One key as DescribeConfigs reports it. The strings point into the
 * definitions, the image, the broker's properties or scaled[]; they stay
 * valid until one of those changes (i.e. for the current request). */
typedef struct cfg_resolved_s {
    const char *name;
    const char *value; /* NULL = null */
    int8_t source;
    int8_t type;       /* enum cfg_type */
    uint8_t flags;     /* CFG_RO, CFG_SENS, ... (the key's) */
    const char *doc;   /* NULL = none */
    int nsyn;
    cfg_syn_t syn[CFG_MAX_SYN];
    char scaled[256];  /* the value as Kafka renders it, when that is not
                          the stored text (hours in ms, a parsed number) */
} cfg_resolved_t;

#endif
