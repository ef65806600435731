/* wire: raw Kafka requests from the integration tests, encoded and decoded
 * with the broker's own generated codecs (proto/), for the checks of exact
 * answer fields that librdkafka does not show (per-partition error codes,
 * offline replicas, -1 offsets). A test using these links
 * libstrand_proto.a and libstrand_util.a after libstrand_testlib.a, and
 * its object depends on src/proto/proto_gen.h (see mk/coord.am).
 *
 * Like the rest of testlib, every helper fails the test itself when the
 * broker does not answer, answers another request, or answers bytes that
 * do not decode at the version asked. */
#ifndef STRAND_TESTLIB_WIRE_H
#define STRAND_TESTLIB_WIRE_H

#include "proto/proto.h"
#include "testlib/testlib.h"

/* The client id of the requests sent from now on (default "strand-test");
 * the string must outlive them. */
void tl_wire_set_client_id(const char *id);
/* The same for a client id of len bytes, NULs allowed. */
void tl_wire_set_client_id_len(const char *id, size_t len);

/* Sends one request on fd: the request header (v1, or v2 when the version
 * is flexible), then body, which is emptied. Returns the correlation id. */
int32_t tl_wire_send(int fd, int16_t key, int16_t ver, buf_t *body);

/* Receives the answer to correlation id corr within 20 s. Returns its body
 * (after the response header), copied into arena; *len gets its size. */
const uint8_t *tl_wire_recv(int fd, int16_t key, int16_t ver, int32_t corr, arena_t *arena,
                            size_t *len);

/* One round trip: encodes *reqp as proto_<api>_req at version ver, sends
 * it as API key, and decodes the answer into *respp, whose strings and
 * arrays then live in arena. */
#define TL_WIRE_CALL(fd, arena, api, key, ver, reqp, respp)                                      \
    do {                                                                                        \
        buf_t tl_b_;                                                                            \
        size_t tl_l_;                                                                           \
        buf_init(&tl_b_);                                                                       \
        proto_##api##_req_encode((reqp), (ver), &tl_b_);                                       \
        int32_t tl_c_ = tl_wire_send((fd), (key), (ver), &tl_b_);                              \
        buf_free(&tl_b_);                                                                       \
        const uint8_t *tl_r_ = tl_wire_recv((fd), (key), (ver), tl_c_, (arena), &tl_l_);       \
        proto_##api##_resp_init(respp);                                                         \
        TL_ASSERT(proto_##api##_resp_decode((respp), (ver), tl_r_, tl_l_, (arena)) == 0,       \
                  #api " v%d: undecodable answer", (int)(ver));                                 \
    } while (0)

/* A protocol string over s (NULL: the null string); s must outlive it. */
proto_str_t tl_wire_str(const char *s);

/* Metadata v`ver` for the one topic (auto-creation as asked) on fd; the
 * answer's strings and arrays live in arena. */
void tl_wire_metadata(int fd, arena_t *arena, int16_t ver, const char *topic, int auto_create,
                      proto_metadata_resp_t *resp);

#endif
