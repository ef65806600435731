/* Mutations of encoded requests, for the fuzzers (tests/fuzz/README.md).
 *
 * Two kinds. Structure-aware ones use the "sites" of a valid encoding
 * (where each length, array count, tagged-field section and integer
 * field sits, found by walking the bytes with the message's descriptor):
 * a length set to -1, 0 or huge, an array count that lies, an integer
 * set to a limit, tagged fields added. Blind ones flip bits, insert,
 * delete, duplicate or truncate bytes, or splice in another request. */
#ifndef STRAND_FUZZ_MUT_H
#define STRAND_FUZZ_MUT_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/fuzz_gen.h"

enum fuzz_site_kind {
    FUZZ_SITE_LEN,   /* string/bytes/records length: i16, i32 or uvarint(n+1) */
    FUZZ_SITE_COUNT, /* array count: i32 or uvarint(n+1) */
    FUZZ_SITE_TAGS,  /* the count of a tagged-field section (uvarint) */
    FUZZ_SITE_INT,   /* a fixed-width integer field */
};

typedef struct fuzz_site_s {
    uint32_t off;  /* in the body */
    uint8_t kind;  /* enum fuzz_site_kind */
    uint8_t width; /* bytes on the wire: 1/2/4/8 fixed; a uvarint's length */
    uint8_t varint;
} fuzz_site_t;

typedef struct fuzz_sites_s {
    fuzz_site_t v[512];
    int n;
} fuzz_sites_t;

/* Finds the sites of a valid body of msg at version (the first 512).
 * Returns 0, or -1 if the body does not decode (sites found so far stay). */
int fuzz_sites_find(const proto_msg_t *msg, int16_t version, const uint8_t *body, size_t len,
                    fuzz_sites_t *sites);

/* A growable byte string being mutated (memory owned by it). */
typedef struct fuzz_bytes_s {
    uint8_t *p;
    size_t len, cap;
} fuzz_bytes_t;

void fuzz_bytes_set(fuzz_bytes_t *b, const void *p, size_t len);
void fuzz_bytes_free(fuzz_bytes_t *b);

/* Applies 1-3 random mutations to body, using sites (may be NULL) and
 * other (another request body, may be NULL) for splices. Appends a short
 * description of what was done to desc (NUL-terminated, at most desclen). */
void fuzz_mutate(fuzz_gen_t *g, fuzz_bytes_t *body, const fuzz_sites_t *sites,
                 const uint8_t *other, size_t other_len, char *desc, size_t desclen);

/* Writes v as a uvarint into out (at most 5 bytes); returns its length. */
int fuzz_put_uvarint(uint8_t *out, uint32_t v);

#endif
