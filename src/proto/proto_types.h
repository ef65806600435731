/* Value types of decoded Kafka messages. Kept apart from proto.h so the
 * generated proto_gen.h can include it without the runtime's prototypes.
 * Strings, bytes and records are slices: after a decode they point into
 * the request buffer, so that buffer must outlive the message. */
#ifndef STRAND_PROTO_TYPES_H
#define STRAND_PROTO_TYPES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "util/arena.h"
#include "util/buf.h"

/* len -1 = null; p is not NUL-terminated. */
typedef struct { const char *p; int32_t len; } proto_str_t;
/* len -1 = null. */
typedef struct { const uint8_t *p; int32_t len; } proto_bytes_t;
/* Big-endian as on the wire; all zero means "no id". */
typedef struct { uint8_t b[16]; } proto_uuid_t;
/* Records are bytes, but a response may instead name a file region that
 * the encoder splices into the output with buf_put_file() (zero-copy
 * fetch). When fd >= 0 the encoder writes the length prefix for len bytes
 * and splices (fd, file_pos, len); the buf takes ownership of fd, so the
 * message must not be encoded twice. Decoded records always have fd -1. */
typedef struct {
    const uint8_t *p;
    int32_t len;
    int fd;
    int64_t file_pos;
} proto_records_t;

/* Arrays of primitives have named types, so that code outside the
 * generated structs can build, pass and assign them; n -1 = null. (An
 * array of a struct is an anonymous struct of the same layout.) */
typedef struct { int32_t n; bool *v; } proto_bool_array_t;
typedef struct { int32_t n; int8_t *v; } proto_int8_array_t;
typedef struct { int32_t n; int16_t *v; } proto_int16_array_t;
typedef struct { int32_t n; uint16_t *v; } proto_uint16_array_t;
typedef struct { int32_t n; int32_t *v; } proto_int32_array_t;
typedef struct { int32_t n; uint32_t *v; } proto_uint32_array_t;
typedef struct { int32_t n; int64_t *v; } proto_int64_array_t;
typedef struct { int32_t n; double *v; } proto_float64_array_t;
typedef struct { int32_t n; proto_uuid_t *v; } proto_uuid_array_t;
typedef struct { int32_t n; proto_str_t *v; } proto_str_array_t;
typedef struct { int32_t n; proto_bytes_t *v; } proto_bytes_array_t;
typedef struct { int32_t n; proto_records_t *v; } proto_records_array_t;

/* Kinds of internal records: which log a record schema belongs to, and
 * so its framing (src/proto/proto_rec.h). API messages and headers are
 * PROTO_REC_KIND_NONE. */
enum proto_rec_kind {
    PROTO_REC_KIND_NONE = 0,
    PROTO_REC_KIND_METADATA,    /* __cluster_metadata record values */
    PROTO_REC_KIND_CONTROL,     /* KRaft control record values */
    PROTO_REC_KIND_DATA,        /* a schema used on its own */
    PROTO_REC_KIND_GROUP_KEY,   /* __consumer_offsets keys */
    PROTO_REC_KIND_GROUP_VALUE, /* __consumer_offsets values */
    PROTO_REC_KIND_TXN_KEY,     /* __transaction_state keys */
    PROTO_REC_KIND_TXN_VALUE    /* __transaction_state values */
};

/* The version ranges we have definitions for (not what we advertise).
 * flex_min is the first flexible version, -1 when none is. */
typedef struct {
    int16_t key;
    const char *name;
    int16_t min_ver, max_ver, flex_min;
} proto_api_info_t;

/* Handy for literals: PROTO_STR("abc"). */
#define PROTO_STR(s) ((proto_str_t){ (s), (int32_t)(sizeof(s) - 1) })
#define PROTO_STR_NULL ((proto_str_t){ NULL, -1 })

#endif
