/* Records of the internal topic __consumer_offsets, in Kafka's key/value
 * schemas (protocol/records/group/NAME.def), so that a data directory
 * written by strand is read by Kafka's tools and the other way round.
 * Only the classic-group records are written: OffsetCommit (key v1, value
 * v3 or v1 with an expire timestamp) and GroupMetadata (key v2, value v3);
 * every value version (0-4, flexible 4) is read. What is written where is
 * at the top of grp_rec.c.
 *
 * Decoded strings and bytes are slices into the record; nothing is copied
 * except the member array of a group (from the caller's arena). */
#ifndef STRAND_COORD_GRP_REC_H
#define STRAND_COORD_GRP_REC_H

#include <stddef.h>
#include <stdint.h>

#include "proto/proto_types.h"
#include "util/arena.h"
#include "util/buf.h"

/* Key versions (the int16 the key starts with) tell the record type. */
#define GRP_REC_KEY_OFFSET_V0 0
#define GRP_REC_KEY_OFFSET 1
#define GRP_REC_KEY_GROUP 2

typedef struct grp_rec_key_s {
    int16_t version;   /* 0, 1: offset commit; 2: group metadata; else not ours */
    proto_str_t group;
    proto_str_t topic; /* offset commits only */
    int32_t partition; /* offset commits only */
} grp_rec_key_t;

/* OffsetCommitValue. */
typedef struct grp_rec_offset_s {
    int64_t offset;
    int32_t leader_epoch; /* -1: none (values below v3 have none) */
    proto_str_t metadata;
    int64_t commit_ts;
    int64_t expire_ts;    /* -1: none; only value v1 carries one */
} grp_rec_offset_t;

/* GroupMetadataValue's MemberMetadata. */
typedef struct grp_rec_member_s {
    proto_str_t member_id;
    proto_str_t instance_id; /* len -1: null */
    proto_str_t client_id;
    proto_str_t client_host;
    int32_t rebalance_timeout; /* -1 below v1 */
    int32_t session_timeout;
    proto_bytes_t subscription; /* metadata for the group's protocol */
    proto_bytes_t assignment;
} grp_rec_member_t;

/* GroupMetadataValue. */
typedef struct grp_rec_group_s {
    proto_str_t protocol_type; /* "" when the group has none */
    int32_t generation;
    proto_str_t protocol;      /* len -1: null */
    proto_str_t leader;        /* len -1: null */
    int64_t state_ts;          /* currentStateTimestamp, -1 below v2 */
    int32_t nmembers;
    grp_rec_member_t *members;
} grp_rec_group_t;

/* Encoders append to out. Ids (group, topic, member, instance and client
 * ids, host, protocol type and name, leader) are taken in the C string
 * form of util/cstr.h and written as the bytes they stand for; offset
 * metadata is written as given. Decoders give the bytes as stored. */
void grp_rec_offset_key(buf_t *out, proto_str_t group, proto_str_t topic, int32_t partition);
/* Value v3, or v1 when v->expire_ts >= 0 (as Kafka writes commits that
 * carry a retention time). */
void grp_rec_offset_value(buf_t *out, const grp_rec_offset_t *v);
void grp_rec_group_key(buf_t *out, proto_str_t group);
/* Value v3. */
void grp_rec_group_value(buf_t *out, const grp_rec_group_t *g);

/* Decoders: 0, or -1 for a short or malformed record. A key of a version
 * this module does not know decodes with only k->version set. */
int grp_rec_key_decode(const uint8_t *p, size_t len, grp_rec_key_t *k);
int grp_rec_offset_decode(const uint8_t *p, size_t len, grp_rec_offset_t *v);
/* The member array comes from arena. */
int grp_rec_group_decode(const uint8_t *p, size_t len, grp_rec_group_t *g, arena_t *arena);

/* The __consumer_offsets partition of a group: Kafka's
 * Utils.abs(groupId.hashCode()) % n, with Java's String.hashCode over the
 * UTF-16 form of the (UTF-8) id. */
int32_t grp_rec_partition_for(const char *group, size_t len, int32_t n);

#endif
