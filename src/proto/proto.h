/* The protocol layer: Kafka request/response codecs generated from
 * protocol/NAME.def (see proto_gen.h in the build directory) plus the
 * request and response headers.
 *
 * For every message X in {req, resp} of every API A, proto_gen.h has
 *   proto_A_X_t, proto_A_X_<nested>_t          the structs
 *   proto_A_X_init(), proto_A_X_<nested>_init() zero + defaults, fd -1
 *   proto_A_X_decode(m, version, buf, len, arena)  0 or -1
 *   proto_A_X_encode(m, version, out)
 * Decoded strings/bytes/records point into buf; arrays come from the
 * arena. Arrays are `struct { int32_t n; T *v; } name;`, n -1 = null. */
#ifndef STRAND_PROTO_H
#define STRAND_PROTO_H

#include "proto/proto_types.h"
#include "proto/proto_gen.h"

/* NULL when we have no definition for api_key. */
const proto_api_info_t *proto_api_info(int16_t api_key);
/* 1 when version is at or above the API's first flexible version (no
 * upper bound: newer versions of a flexible API stay flexible). */
int proto_is_flexible(int16_t api_key, int16_t version);

typedef struct {
    int16_t api_key, api_version;
    int32_t correlation_id;
    proto_str_t client_id; /* points into buf */
} proto_req_header_t;

/* Parses request header v1, or v2 when the API version is flexible
 * (client_id keeps its int16 length; tagged fields are skipped). An
 * unknown api_key parses as v1, and so does an ApiVersions request of a
 * version above ours, so the caller can answer with the v0 fallback.
 * Returns 0 and sets *hdr_len to the header size, or -1. */
int proto_req_header_decode(proto_req_header_t *h, const uint8_t *buf,
                            size_t len, size_t *hdr_len);
/* The header a client would send; same version rule as the decoder. */
void proto_req_header_encode(buf_t *out, const proto_req_header_t *h);
/* Response header v0, or v1 (with an empty tagged section) when the API
 * version is flexible; ApiVersions always uses v0. */
void proto_resp_header_encode(buf_t *out, int16_t api_key, int16_t api_version,
                              int32_t correlation_id);

#endif
