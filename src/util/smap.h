/* A hash map from byte-string keys to pointers (open addressing, linear
 * probing, tombstones). Keys are copied into the map; values are not
 * owned. Used for topic names and ids, where lookups sit on every request. */
#ifndef STRAND_UTIL_SMAP_H
#define STRAND_UTIL_SMAP_H

#include <stddef.h>
#include <stdint.h>

typedef struct smap_slot_s smap_slot_t;

typedef struct smap_s {
    smap_slot_t *slots;
    size_t cap;   /* power of two, or 0 */
    size_t count; /* live entries */
    size_t used;  /* live + tombstones */
} smap_t;

void smap_init(smap_t *m);
/* Frees the map's memory and key copies (not the values). */
void smap_free(smap_t *m);
/* Returns the value or NULL. */
void *smap_get(const smap_t *m, const void *key, size_t klen);
/* Inserts or replaces. */
void smap_put(smap_t *m, const void *key, size_t klen, void *value);
/* Returns the removed value or NULL. */
void *smap_del(smap_t *m, const void *key, size_t klen);
/* Iteration: start with *pos = 0; returns 0 at the end. */
int smap_next(const smap_t *m, size_t *pos, const void **key, size_t *klen, void **value);

#endif
