/* The metadata image: the state the metadata log describes (topics with
 * their ids and partitions, configs per resource, finalized features),
 * built by applying records in log order, as every Kafka node does with
 * its MetadataImage. Pure data: no I/O, so replay is unit-testable. */
#ifndef STRAND_CLUSTER_META_IMAGE_H
#define STRAND_CLUSTER_META_IMAGE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "cluster/meta_rec.h"
#include "util/smap.h"

typedef struct mi_part_s {
    bool present;          /* a PartitionRecord was applied */
    int32_t leader;
    int32_t leader_epoch;
    int32_t partition_epoch;
    int8_t recovery_state; /* LeaderRecoveryState: 0 recovered, 1 recovering
                              (a leader elected uncleanly, until it says
                              it has recovered) */
    int32_t nreplicas;
    int32_t *replicas;     /* owned */
    int32_t nisr;
    int32_t *isr;          /* owned */
    uint8_t (*dirs)[16];   /* owned, nreplicas entries or NULL: the log dir id
                              of each replica, zero where unknown */
    /* A reassignment in progress (Kafka's addingReplicas and
     * removingReplicas; both empty when none): replicas holds the target
     * replicas and then those being removed. */
    int32_t nadding;
    int32_t *adding;       /* owned */
    int32_t nremoving;
    int32_t *removing;     /* owned */
    /* Eligible leader replicas (KIP-966; empty unless the feature is on):
     * members that left an ISR below min.insync.replicas and still hold
     * everything committed, so they may lead once the ISR is empty. The
     * last known ELR holds the last leader once the partition has none. */
    int32_t nelr;
    int32_t *elr;          /* owned */
    int32_t nlast_elr;
    int32_t *last_elr;     /* owned */
} mi_part_t;

/* The log dir id of node's replica of p (zero if unknown), or NULL when
 * node is not one of p's replicas. */
const uint8_t *mi_part_dir_of(const mi_part_t *p, int32_t node);

typedef struct mi_topic_s {
    char *name;            /* owned, NUL-terminated */
    size_t name_len;
    uint8_t id[16];
    int32_t nparts;
    mi_part_t *parts;      /* owned, nparts entries */
} mi_topic_t;

typedef struct mi_kv_s {
    char *key;             /* owned */
    char *value;           /* owned */
} mi_kv_t;

/* The dynamic configs of one resource (ConfigRecords applied). */
typedef struct mi_config_s {
    int8_t type;           /* enum meta_resource_type */
    char *name;            /* owned; "" = cluster default (brokers) */
    int n, cap;
    mi_kv_t *v;
} mi_config_t;

/* A listener a broker or controller registered. */
typedef struct mi_endpoint_s {
    char *name;            /* owned */
    char *host;            /* owned */
    int32_t port;
    int16_t security_protocol;
} mi_endpoint_t;

/* A feature a node supports, and its range of levels. */
typedef struct mi_frange_s {
    char *name;            /* owned */
    int16_t min, max;
} mi_frange_t;

/* A broker's registration (RegisterBrokerRecord, then the fence,
 * unfence and registration change records of its epoch), as Kafka's
 * BrokerRegistration. */
typedef struct mi_broker_s {
    int32_t id;
    uint8_t incarnation[16];
    int64_t epoch;         /* the record's brokerEpoch: the offset a
                              controller wrote the registration at */
    int nendpoints;
    mi_endpoint_t *endpoints; /* owned, in the record's order */
    int nfeatures;
    mi_frange_t *features; /* owned */
    char *rack;            /* owned, NULL: no rack */
    bool fenced;
    bool in_controlled_shutdown;
    bool zk_migrating;
    int ndirs;
    uint8_t (*dirs)[16];   /* owned: its log dir ids */
} mi_broker_t;

/* A controller's registration (RegisterControllerRecord). */
typedef struct mi_controller_s {
    int32_t id;
    uint8_t incarnation[16];
    bool zk_migration_ready;
    int nendpoints;
    mi_endpoint_t *endpoints; /* owned */
    int nfeatures;
    mi_frange_t *features; /* owned */
} mi_controller_t;

typedef struct meta_image_s {
    smap_t by_name;        /* topic name -> mi_topic_t */
    smap_t by_id;          /* 16-byte id -> mi_topic_t */
    smap_t by_norm;        /* name with '.' as '_' -> mi_topic_t (collisions) */
    smap_t configs;        /* type byte + name -> mi_config_t */
    smap_t features;       /* name -> level (> 0) cast to a pointer */
    int64_t records;       /* records applied */
    int64_t next_producer_id; /* the first id no block has taken yet */
    mi_broker_t **brokers; /* owned, sorted by id (meta_image_brokers.c) */
    int nbrokers;
    mi_controller_t **controllers; /* owned, sorted by id */
    int ncontrollers;
} meta_image_t;

void meta_image_init(meta_image_t *img);
void meta_image_free(meta_image_t *img);

/* Applies one record. Returns 0, or -1 when the record does not fit the
 * image (a partition of an unknown topic, a topic name or id that already
 * exists, ...), with the reason in err; the image is then unchanged.
 * Records of types the image does not track are ignored (0). */
int meta_image_apply(meta_image_t *img, const meta_rec_t *rec, char *err, size_t errlen);

mi_topic_t *meta_image_topic(const meta_image_t *img, const char *name, size_t len);
mi_topic_t *meta_image_topic_by_id(const meta_image_t *img, const uint8_t id[16]);
/* Iteration over topics: start with *pos = 0; NULL at the end. */
mi_topic_t *meta_image_topic_next(const meta_image_t *img, size_t *pos);
/* The topic whose name equals name with '.' and '_' taken as the same
 * (Kafka refuses a topic that collides so), or NULL. */
mi_topic_t *meta_image_topic_colliding(const meta_image_t *img, const char *name, size_t len);

/* The configs of a resource, or NULL if it has none. */
mi_config_t *meta_image_config(const meta_image_t *img, int8_t type, const char *name,
                               size_t len);
/* One dynamic value, or NULL if the key is not set. */
const char *meta_image_config_get(const meta_image_t *img, int8_t type, const char *name,
                                  size_t len, const char *key);
/* Iteration over resources with configs: start with *pos = 0. */
mi_config_t *meta_image_config_next(const meta_image_t *img, size_t *pos);

/* A finalized feature level, or 0 when the feature is not finalized
 * (never set, or set to 0, which takes it out as in Kafka). */
int meta_image_feature(const meta_image_t *img, const char *name);
/* Iteration over the finalized features (level > 0): start with *pos = 0;
 * returns 0 at the end. name points into the image. */
int meta_image_feature_next(const meta_image_t *img, size_t *pos, meta_str_t *name,
                            int16_t *level);

/* ---- brokers and controllers (meta_image_brokers.c) ---- */

/* The broker's registration, or NULL when it has none. */
const mi_broker_t *meta_image_broker(const meta_image_t *img, int32_t id);
/* Iteration in id order: start with *pos = 0; NULL at the end. */
const mi_broker_t *meta_image_broker_next(const meta_image_t *img, size_t *pos);
/* Registered, unfenced and not in controlled shutdown (Kafka's
 * isActive): a broker that may lead partitions. */
bool meta_image_broker_active(const meta_image_t *img, int32_t id);
/* The broker's supported range of feature name, or NULL. */
const mi_frange_t *meta_image_broker_feature(const mi_broker_t *b, const char *name);
/* The controller's registration, or NULL. */
const mi_controller_t *meta_image_controller(const meta_image_t *img, int32_t id);
/* Iteration in id order: start with *pos = 0; NULL at the end. */
const mi_controller_t *meta_image_controller_next(const meta_image_t *img, size_t *pos);

/* The broker part of meta_image_apply: RegisterBroker, UnregisterBroker,
 * FenceBroker, UnfenceBroker, BrokerRegistrationChange, RegisterController
 * and UnregisterController records, replayed as Kafka's
 * ClusterControlManager replays them (a change names the registration's
 * epoch, or it does not fit). Returns 0, -1 with the reason in err, or 1
 * when rec is not one of these. */
int meta_image_apply_broker(meta_image_t *img, const meta_rec_t *rec, char *err,
                            size_t errlen);
/* Frees the brokers and controllers (meta_image_free calls it). */
void meta_image_brokers_free(meta_image_t *img);

#endif
