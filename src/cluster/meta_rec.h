/* KRaft metadata records (the values of __cluster_metadata-0), in Kafka's
 * own framing and schemas, so the log is what a Kafka controller would
 * have written for the same operations. The schemas are
 * protocol/records/metadata/NAME.def (every metadata record Kafka 4.4
 * defines), the framing is in src/proto/proto_rec.c; this module names
 * the records the cluster layer uses and keeps one record of any type in
 * a meta_rec_t.
 *
 * Decoded strings and byte slices point into the decoded buffer; arrays
 * come from the caller's arena. */
#ifndef STRAND_CLUSTER_META_REC_H
#define STRAND_CLUSTER_META_REC_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto_rec.h"
#include "util/arena.h"
#include "util/buf.h"

/* Record types (the apiKey of protocol/records/metadata/NAME.def); every
 * other one is PROTO_REC_<NAME>. */
enum meta_rec_type {
    META_REC_REGISTER_BROKER = PROTO_REC_REGISTER_BROKER_RECORD,
    META_REC_UNREGISTER_BROKER = PROTO_REC_UNREGISTER_BROKER_RECORD,
    META_REC_TOPIC = PROTO_REC_TOPIC_RECORD,
    META_REC_PARTITION = PROTO_REC_PARTITION_RECORD,
    META_REC_CONFIG = PROTO_REC_CONFIG_RECORD,
    META_REC_PARTITION_CHANGE = PROTO_REC_PARTITION_CHANGE_RECORD,
    META_REC_FENCE_BROKER = PROTO_REC_FENCE_BROKER_RECORD,
    META_REC_UNFENCE_BROKER = PROTO_REC_UNFENCE_BROKER_RECORD,
    META_REC_REMOVE_TOPIC = PROTO_REC_REMOVE_TOPIC_RECORD,
    META_REC_FEATURE_LEVEL = PROTO_REC_FEATURE_LEVEL_RECORD,
    META_REC_PRODUCER_IDS = PROTO_REC_PRODUCER_IDS_RECORD,
    META_REC_BROKER_REGISTRATION_CHANGE = PROTO_REC_BROKER_REGISTRATION_CHANGE_RECORD,
    META_REC_NOOP = PROTO_REC_NO_OP_RECORD,
    META_REC_REGISTER_CONTROLLER = PROTO_REC_REGISTER_CONTROLLER_RECORD,
    META_REC_UNREGISTER_CONTROLLER = PROTO_REC_UNREGISTER_CONTROLLER_RECORD,
};

/* Kafka's ConfigResource types, as in ConfigRecord and the config APIs. */
enum meta_resource_type {
    META_RES_TOPIC = 2,
    META_RES_BROKER = 4,
};

/* len -1 = null; p is not NUL-terminated. */
typedef proto_str_t meta_str_t;
/* n -1 = null (only where the schema allows it). */
typedef proto_int32_array_t meta_i32s_t;
typedef proto_uuid_array_t meta_uuids_t;

/* The generated structs, with their Kafka field names (snake_case): a
 * PartitionChangeRecord's tagged fields hold their defaults (null
 * arrays, leader -2, leader_recovery_state -1) when they did not change. */
typedef proto_rec_topic_record_t meta_topic_rec_t;
typedef proto_rec_partition_record_t meta_part_rec_t;
typedef proto_rec_partition_change_record_t meta_part_change_rec_t;
typedef proto_rec_config_record_t meta_config_rec_t;
typedef proto_rec_feature_level_record_t meta_feature_rec_t;

typedef struct meta_rec_s {
    int16_t type;    /* enum meta_rec_type, PROTO_REC_* */
    int16_t version; /* schema version */
    union {
        meta_topic_rec_t topic;
        meta_part_rec_t part;
        meta_part_change_rec_t change;
        meta_config_rec_t config;
        meta_feature_rec_t feature;
        proto_rec_remove_topic_record_t remove_topic;
        proto_rec_register_broker_record_t register_broker;
        proto_rec_unregister_broker_record_t unregister_broker;
        proto_rec_broker_registration_change_record_t broker_change;
        proto_rec_fence_broker_record_t fence_broker;
        proto_rec_unfence_broker_record_t unfence_broker;
        proto_rec_producer_ids_record_t producer_ids;
        proto_rec_register_controller_record_t register_controller;
        proto_rec_unregister_controller_record_t unregister_controller;
        proto_rec_no_op_record_t noop;
        proto_rec_metadata_any_t any; /* room for every metadata record */
    } u;
} meta_rec_t;

/* The versions of the partition records we write (and the highest we
 * read). */
#define META_PART_REC_VERSION 2
#define META_PART_CHANGE_REC_VERSION 2

/* Makes *rec an empty record of `type` with the schema's defaults (-1 ids
 * and epochs, null tagged arrays), at the highest version we define (the
 * version we write). A type we do not define gets zeroes and version 0. */
void meta_rec_init(meta_rec_t *rec, int16_t type);

/* Appends the framed value (frame version, apiKey, version, body) to out.
 * A type we do not define is written with an empty body. */
void meta_rec_encode(const meta_rec_t *rec, buf_t *out);

/* Decodes one framed value. Returns 0; 1 for a well-framed record of a
 * type or version we do not know (rec->type/version are set, the body is
 * not read: a replayer skips it); -1 when the bytes are malformed.
 * Arrays are allocated from arena; strings point into p. */
int meta_rec_decode(meta_rec_t *rec, const uint8_t *p, size_t len, arena_t *arena);

/* Name of a record type for logs ("TopicRecord"), "?" if unknown. */
const char *meta_rec_type_name(int16_t type);

#endif
