/* unit_proto: generic helpers for tests of generated codecs. A filler
 * walks a struct's descriptor table and gives every field of a version a
 * pseudo-random value (nulls where the version allows them, short
 * arrays and strings), so one test covers every message and record; a
 * comparer checks a decoded struct against the one encoded; a round trip
 * of one message and version puts the two together (test_proto and
 * test_proto_rec both run it over every message). */
#ifndef STRAND_TESTS_UNIT_PROTO_H
#define STRAND_TESTS_UNIT_PROTO_H

#include <stdint.h>

#include "proto/proto_desc.h"

/* The filler's state: an xorshift generator and the arena that arrays
 * come from. */
typedef struct unit_fill_s {
    uint32_t rng;
    arena_t *arena;
} unit_fill_t;

void unit_fill_init(unit_fill_t *fl, uint32_t seed, arena_t *arena);
uint32_t unit_fill_rnd(unit_fill_t *fl);
/* Initialises m and fills the fields of version v; strings and bytes
 * point into a static text. */
void unit_fill_struct(unit_fill_t *fl, const proto_struct_t *st, void *m, int16_t v);
/* b was decoded from a: fields of version v must match, the others must
 * hold their defaults. Prints the first field that differs. */
int unit_same_struct(const proto_struct_t *st, const void *a, const void *b, int16_t v);
/* Compares bytes and prints both sides on a mismatch. */
int unit_bytes_eq(const uint8_t *got, size_t gotlen, const uint8_t *exp, size_t explen);
/* A CUnit assertion that buffer b (a buf_t *) holds exactly the bytes of
 * the array exp; the caller includes CUnit. */
#define UNIT_CHECK_BUF(b, exp) CU_ASSERT(unit_bytes_eq((b)->p, (b)->len, (exp), sizeof(exp)))
/* Whether s holds exactly the C string c. */
int unit_str_is(proto_str_t s, const char *c);
/* Fills message msg at version v from seed, encodes it, decodes it from
 * an exactly sized heap copy, compares, re-encodes and compares the bytes;
 * then every truncation of the encoding must fail. Arrays come from arena
 * (the caller resets it). 1 when all holds, else 0 with the cause printed. */
int unit_round_trip(const proto_msg_t *msg, int16_t v, int seed, arena_t *arena);

#endif
