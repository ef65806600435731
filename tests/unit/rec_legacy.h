/* The hand-written record codecs as they were before the generated ones
 * replaced them (src/cluster/meta_rec.c and src/coord/grp_rec.c at commit
 * deb9756), frozen here, renamed legacy_*: the reference that
 * test_rec_compat holds the generated codecs to, so that data dirs
 * written by earlier versions replay unchanged. Do not edit: a change
 * here would move the reference. The __consumer_offsets types are those
 * of coord/grp_rec.h, whose API did not change. */
#ifndef STRAND_TESTS_REC_LEGACY_H
#define STRAND_TESTS_REC_LEGACY_H

#include <stddef.h>
#include <stdint.h>

#include "coord/grp_rec.h"
#include "util/arena.h"
#include "util/buf.h"

/* Record apiKeys (the key= of protocol/records/metadata/NAME.def). */
enum legacy_meta_rec_type {
    LEGACY_META_REC_TOPIC = 2,
    LEGACY_META_REC_PARTITION = 3,
    LEGACY_META_REC_CONFIG = 4,
    LEGACY_META_REC_PARTITION_CHANGE = 5,
    LEGACY_META_REC_REMOVE_TOPIC = 9,
    LEGACY_META_REC_FEATURE_LEVEL = 12,
    LEGACY_META_REC_NOOP = 20,
};

/* Kafka's ConfigResource types, as in ConfigRecord and the config APIs. */
enum legacy_meta_resource_type {
    LEGACY_META_RES_TOPIC = 2,
    LEGACY_META_RES_BROKER = 4,
};

/* len -1 = null; p is not NUL-terminated. */
typedef struct legacy_meta_str_s {
    const char *p;
    int32_t len;
} legacy_meta_str_t;

/* n -1 = null (only where the schema allows it). */
typedef struct legacy_meta_i32s_s {
    int32_t n;
    int32_t *v;
} legacy_meta_i32s_t;

typedef struct legacy_meta_uuids_s {
    int32_t n;
    uint8_t (*v)[16];
} legacy_meta_uuids_t;

typedef struct legacy_meta_topic_rec_s {
    legacy_meta_str_t name;
    uint8_t id[16];
} legacy_meta_topic_rec_t;

typedef struct legacy_meta_part_rec_s {
    int32_t partition_id;
    uint8_t topic_id[16];
    legacy_meta_i32s_t replicas, isr, removing, adding;
    int32_t leader;
    int8_t leader_recovery_state; /* tag 0 */
    int32_t leader_epoch;
    int32_t partition_epoch;
    legacy_meta_uuids_t directories;    /* v1+ */
    legacy_meta_i32s_t elr, last_known_elr; /* v2+, tags 1 and 2, null = absent */
} legacy_meta_part_rec_t;

/* Tagged fields all; null / -2 / -1 mean "did not change". */
typedef struct legacy_meta_part_change_rec_s {
    int32_t partition_id;
    uint8_t topic_id[16];
    legacy_meta_i32s_t isr;      /* tag 0 */
    int32_t leader;       /* tag 1, -2 = unchanged, -1 = none */
    legacy_meta_i32s_t replicas; /* tag 2 */
    legacy_meta_i32s_t removing; /* tag 3 */
    legacy_meta_i32s_t adding;   /* tag 4 */
    int8_t leader_recovery_state; /* tag 5, -1 = unchanged */
    legacy_meta_i32s_t elr;      /* tag 6, v2+ */
    legacy_meta_i32s_t last_known_elr; /* tag 7, v2+ */
    legacy_meta_uuids_t directories;   /* tag 8, v1+ */
} legacy_meta_part_change_rec_t;

typedef struct legacy_meta_config_rec_s {
    int8_t resource_type;
    legacy_meta_str_t resource_name;
    legacy_meta_str_t name;
    legacy_meta_str_t value; /* null = delete the key */
} legacy_meta_config_rec_t;

typedef struct legacy_meta_feature_rec_s {
    legacy_meta_str_t name;
    int16_t level;
} legacy_meta_feature_rec_t;

typedef struct legacy_meta_rec_s {
    int16_t type;    /* enum legacy_meta_rec_type */
    int16_t version; /* schema version */
    union {
        legacy_meta_topic_rec_t topic;
        legacy_meta_part_rec_t part;
        legacy_meta_part_change_rec_t change;
        legacy_meta_config_rec_t config;
        legacy_meta_feature_rec_t feature;
        uint8_t remove_topic_id[16];
    } u;
} legacy_meta_rec_t;

/* The highest version of each type we write (and read). */
#define LEGACY_META_PART_REC_VERSION 2
#define LEGACY_META_PART_CHANGE_REC_VERSION 2

/* Makes *rec an empty record of `type` at the version we write, with the
 * schema defaults (-1 ids and epochs, null tagged arrays). */
void legacy_meta_rec_init(legacy_meta_rec_t *rec, int16_t type);

/* Appends the framed value (frame version, apiKey, version, body) to out. */
void legacy_meta_rec_encode(const legacy_meta_rec_t *rec, buf_t *out);

/* Decodes one framed value. Returns 0; 1 for a well-framed record of a
 * type or version we do not know (rec->type/version are set, the body is
 * not read: a replayer skips it); -1 when the bytes are malformed.
 * Arrays are allocated from arena; strings point into p. */
int legacy_meta_rec_decode(legacy_meta_rec_t *rec, const uint8_t *p, size_t len, arena_t *arena);

/* Name of a record type for logs ("TopicRecord"), "?" if unknown. */
const char *legacy_meta_rec_type_name(int16_t type);

/* ---- __consumer_offsets ---- */

/* Encoders append to out. */
void legacy_grp_rec_offset_key(buf_t *out, proto_str_t group, proto_str_t topic, int32_t partition);
void legacy_grp_rec_offset_value(buf_t *out, const grp_rec_offset_t *v);
void legacy_grp_rec_group_key(buf_t *out, proto_str_t group);
void legacy_grp_rec_group_value(buf_t *out, const grp_rec_group_t *g);
int legacy_grp_rec_key_decode(const uint8_t *p, size_t len, grp_rec_key_t *k);
int legacy_grp_rec_offset_decode(const uint8_t *p, size_t len, grp_rec_offset_t *v);
int legacy_grp_rec_group_decode(const uint8_t *p, size_t len, grp_rec_group_t *g, arena_t *arena);

#endif
