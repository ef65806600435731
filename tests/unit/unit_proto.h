/* unit_proto: generic helpers for tests of generated codecs. A filler
 * walks a struct's descriptor table and gives every field of a version a
 * pseudo-random value (nulls where the version allows them, short
 * arrays and strings), so one test covers every message and record; a
 * comparer checks a decoded struct against the one encoded. */
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

#endif
