/* KRaft metadata records (the values of __cluster_metadata-0): the subset
 * of Kafka's record types a single node needs to persist its topics,
 * partitions and configs, in Kafka's own framing and schemas
 * (FORMATS.md §8.3, records/metadata/NAME.json), so the log is what a Kafka
 * controller would have written for the same operations.
 *
 * Decoded strings and byte slices point into the decoded buffer; arrays
 * come from the caller's arena. */
#ifndef STRAND_CLUSTER_META_REC_H
#define STRAND_CLUSTER_META_REC_H

#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/buf.h"

/* Record apiKeys (the "apiKey" of records/metadata/NAME.json). */
enum meta_rec_type {
    META_REC_TOPIC = 2,
    META_REC_PARTITION = 3,
    META_REC_CONFIG = 4,
    META_REC_PARTITION_CHANGE = 5,
    META_REC_REMOVE_TOPIC = 9,
    META_REC_FEATURE_LEVEL = 12,
    META_REC_NOOP = 20,
};

/* Kafka's ConfigResource types, as in ConfigRecord and the config APIs. */
enum meta_resource_type {
    META_RES_TOPIC = 2,
    META_RES_BROKER = 4,
};

/* len -1 = null; p is not NUL-terminated. */
typedef struct meta_str_s {
    const char *p;
    int32_t len;
} meta_str_t;

/* n -1 = null (only where the schema allows it). */
typedef struct meta_i32s_s {
    int32_t n;
    int32_t *v;
} meta_i32s_t;

typedef struct meta_uuids_s {
    int32_t n;
    uint8_t (*v)[16];
} meta_uuids_t;

typedef struct meta_topic_rec_s {
    meta_str_t name;
    uint8_t id[16];
} meta_topic_rec_t;

typedef struct meta_part_rec_s {
    int32_t partition_id;
    uint8_t topic_id[16];
    meta_i32s_t replicas, isr, removing, adding;
    int32_t leader;
    int8_t leader_recovery_state; /* tag 0 */
    int32_t leader_epoch;
    int32_t partition_epoch;
    meta_uuids_t directories;    /* v1+ */
    meta_i32s_t elr, last_known_elr; /* v2+, tags 1 and 2, null = absent */
} meta_part_rec_t;

/* Tagged fields all; null / -2 / -1 mean "did not change". */
typedef struct meta_part_change_rec_s {
    int32_t partition_id;
    uint8_t topic_id[16];
    meta_i32s_t isr;      /* tag 0 */
    int32_t leader;       /* tag 1, -2 = unchanged, -1 = none */
    meta_i32s_t replicas; /* tag 2 */
    meta_i32s_t removing; /* tag 3 */
    meta_i32s_t adding;   /* tag 4 */
    int8_t leader_recovery_state; /* tag 5, -1 = unchanged */
    meta_i32s_t elr;      /* tag 6, v2+ */
    meta_i32s_t last_known_elr; /* tag 7, v2+ */
    meta_uuids_t directories;   /* tag 8, v1+ */
} meta_part_change_rec_t;

typedef struct meta_config_rec_s {
    int8_t resource_type;
    meta_str_t resource_name;
    meta_str_t name;
    meta_str_t value; /* null = delete the key */
} meta_config_rec_t;

typedef struct meta_feature_rec_s {
    meta_str_t name;
    int16_t level;
} meta_feature_rec_t;

typedef struct meta_rec_s {
    int16_t type;    /* enum meta_rec_type */
    int16_t version; /* schema version */
    union {
        meta_topic_rec_t topic;
        meta_part_rec_t part;
        meta_part_change_rec_t change;
        meta_config_rec_t config;
        meta_feature_rec_t feature;
        uint8_t remove_topic_id[16];
    } u;
} meta_rec_t;

/* The highest version of each type we write (and read). */
#define META_PART_REC_VERSION 2
#define META_PART_CHANGE_REC_VERSION 2

/* Makes *rec an empty record of `type` at the version we write, with the
 * schema defaults (-1 ids and epochs, null tagged arrays). */
void meta_rec_init(meta_rec_t *rec, int16_t type);

/* Appends the framed value (frame version, apiKey, version, body) to out. */
void meta_rec_encode(const meta_rec_t *rec, buf_t *out);

/* Decodes one framed value. Returns 0; 1 for a well-framed record of a
 * type or version we do not know (rec->type/version are set, the body is
 * not read: a replayer skips it); -1 when the bytes are malformed.
 * Arrays are allocated from arena; strings point into p. */
int meta_rec_decode(meta_rec_t *rec, const uint8_t *p, size_t len, arena_t *arena);

/* Name of a record type for logs ("TopicRecord"), "?" if unknown. */
const char *meta_rec_type_name(int16_t type);

#endif
