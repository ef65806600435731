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
