#include "util/arena.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

struct arena_block_s {
    arena_block_t *next;
    size_t size;
    size_t used;
    _Alignas(16) unsigned char data[];
};

static arena_block_t *arena_block_new(size_t size)
{
    arena_block_t *blk = xmalloc(sizeof(*blk) + size);
    blk->next = NULL;
    blk->size = size;
    blk->used = 0;
    return blk;
}

void arena_init(arena_t *arena, size_t block_size)
{
    arena->head = NULL;
    arena->block_size = block_size ? block_size : 4096;
}

void *arena_alloc(arena_t *arena, size_t n)
{
    arena_block_t *blk = arena->head;
    size_t need = (n + 15) & ~(size_t)15;

    if (need < n)
        abort(); /* overflow: a caller passed a corrupt size */
    if (!blk || blk->size - blk->used < need) {
        /* Oversized requests get a block of their own so that the
         * ordinary block keeps serving small ones. */
        size_t sz = need > arena->block_size ? need : arena->block_size;
        blk = arena_block_new(sz);
        if (arena->head && need > arena->block_size) {
            blk->next = arena->head->next;
            arena->head->next = blk;
        } else {
            blk->next = arena->head;
            arena->head = blk;
        }
    }
    void *p = blk->data + blk->used;
    blk->used += need;
    return p;
}

void *arena_calloc(arena_t *arena, size_t nmemb, size_t n)
{
    if (n && nmemb > SIZE_MAX / n)
        abort();
    void *p = arena_alloc(arena, nmemb * n);
    memset(p, 0, nmemb * n);
    return p;
}

char *arena_strndup(arena_t *arena, const char *s, size_t n)
{
    char *p = arena_alloc(arena, n + 1);
    memcpy(p, s, n);
    p[n] = '\0';
    return p;
}

void arena_reset(arena_t *arena)
{
    arena_block_t *blk = arena->head;
    if (!blk)
        return;
    arena_block_t *keep = NULL;
    while (blk) {
        arena_block_t *next = blk->next;
        if (!keep && blk->size == arena->block_size)
            keep = blk;
        else
            free(blk);
        blk = next;
    }
    if (keep) {
        keep->used = 0;
        keep->next = NULL;
    }
    arena->head = keep;
}

void arena_destroy(arena_t *arena)
{
    arena_block_t *blk = arena->head;
    while (blk) {
        arena_block_t *next = blk->next;
        free(blk);
        blk = next;
    }
    arena->head = NULL;
}
