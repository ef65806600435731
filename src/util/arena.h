/* Per-request scratch memory (nginx pool style): many small allocations,
 * one release. Request decoding puts its arrays here, handlers their
 * response structs, and the whole arena goes when the response is queued. */
#ifndef STRAND_UTIL_ARENA_H
#define STRAND_UTIL_ARENA_H

#include <stddef.h>

typedef struct arena_block_s arena_block_t;

typedef struct arena_s {
    arena_block_t *head;   /* newest block first */
    size_t block_size;     /* size of ordinary blocks */
} arena_t;

void arena_init(arena_t *arena, size_t block_size);
/* Returns 16-byte aligned memory owned by the arena, valid until
 * arena_reset() or arena_destroy(). Never NULL. */
void *arena_alloc(arena_t *arena, size_t n);
/* Like arena_alloc() but zero-filled. */
void *arena_calloc(arena_t *arena, size_t nmemb, size_t n);
/* Copies n bytes plus a NUL into the arena. */
char *arena_strndup(arena_t *arena, const char *s, size_t n);
/* Frees everything but the first block, which is kept for reuse. */
void arena_reset(arena_t *arena);
void arena_destroy(arena_t *arena);

#endif
