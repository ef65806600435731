/* Internal records: the framing around the record bodies generated from
 * protocol/records/DIR/NAME.def (the byte layouts are at the top of
 * proto_rec.c). For every record R, proto_gen.h has
 *   proto_rec_R_t, _init(), _decode(), _encode()  the body, as for API messages
 *   proto_rec_R_write(m, version, out)             framed body appended to out
 *   proto_rec_R_read(m, &version, buf, len, arena) a framed record of R
 *   PROTO_REC_R                                    its type (keyed kinds)
 *   proto_rec_<kind>_any_t                         a union of a kind's records
 * Decoded strings and bytes point into buf; arrays come from the arena. */
#ifndef STRAND_PROTO_REC_H
#define STRAND_PROTO_REC_H

#include "proto/proto.h"
#include "proto/proto_desc.h"

/* What the framing of a decoded record said. */
typedef struct proto_rec_info_s {
    const proto_msg_t *msg; /* the schema; NULL when we define no such type */
    int16_t type;           /* record type (see proto_gen.h, PROTO_REC_*) */
    int16_t version;        /* version of the body */
} proto_rec_info_t;

/* Generated: the schema of a record of a keyed kind (metadata, control,
 * coordinator keys and values) by its type; NULL when undefined. */
const proto_msg_t *proto_rec_find(int kind, int16_t type);

/* Appends m, a msg record, framed as its kind is. Coordinator keys are
 * always written at version 0 (version is ignored). */
void proto_rec_encode(const proto_msg_t *msg, const void *m, int16_t version, buf_t *out);

/* Decodes a framed record of kind from buf. The framing gives the type
 * (metadata records, coordinator keys); for coordinator values and
 * control records, whose type is in their key, the caller gives it.
 * m must hold any record of the kind (proto_rec_<kind>_any_t), msize is
 * its size. Returns 0; 1 for a well-framed record of a type or version we
 * do not define (info says which; m is untouched, a replayer skips it);
 * -1 when the bytes are malformed. Bytes after the body are ignored, as
 * Kafka's readers do. */
int proto_rec_decode(int kind, int16_t type, const uint8_t *buf, size_t len, void *m,
                     size_t msize, arena_t *arena, proto_rec_info_t *info);

/* proto_rec_decode() for one schema: 1 also when the framing names
 * another type. *version (if not NULL) receives the body's version. */
int proto_rec_read(const proto_msg_t *msg, void *m, int16_t *version, const uint8_t *buf,
                   size_t len, arena_t *arena);

#endif
