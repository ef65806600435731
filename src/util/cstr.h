/* Protocol strings as C strings without losing bytes. Kafka treats most
 * protocol strings as opaque (group ids, member ids, client ids, ...),
 * and any of them may hold a NUL byte, which a C string would cut. Where
 * such a string is kept as a C string, a NUL byte is written as the two
 * bytes C0 80, as Java's "modified UTF-8" writes U+0000: C0 80 is not
 * valid UTF-8, so every string Kafka itself round-trips (Java decodes
 * protocol strings as UTF-8) keeps its identity, and the form is undone
 * wherever the string leaves as bytes (an answer, a record). The one
 * string this conflates, raw C0 80 from a client, Kafka mangles too (to
 * two U+FFFD). */
#ifndef STRAND_UTIL_CSTR_H
#define STRAND_UTIL_CSTR_H

#include <stddef.h>

#include "util/arena.h"

/* The C string form of the n bytes at p (NUL as C0 80), NUL-terminated.
 * The heap copy is the caller's (free); the arena copy the arena's. */
char *cstr_dup(const char *p, size_t n);
char *cstr_arena_dup(arena_t *arena, const char *p, size_t n);

/* 1 if s holds an escaped NUL (then its bytes differ from its text). */
int cstr_escaped(const char *s);
/* The bytes of C string s: *len gets their count; the result is s itself
 * when nothing is escaped, else a copy in arena. */
const char *cstr_bytes(arena_t *arena, const char *s, size_t *len);
/* The same into out, which holds at least strlen(s) bytes; returns the
 * count written. */
size_t cstr_unescape(char *out, const char *s);

#endif
