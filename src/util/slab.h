/* Fixed-size object pool: objects are carved from chunks of many, and
 * freed ones are reused. Long-lived small objects (connections) are kept
 * together instead of being interleaved with the big short-lived buffers
 * malloc hands out between them, so the pages of freed buffers can go
 * back to the kernel (malloc_trim) while the objects stay. */
#ifndef STRAND_UTIL_SLAB_H
#define STRAND_UTIL_SLAB_H

#include <stddef.h>

typedef struct slab_s {
    size_t obj;       /* object size, rounded up to 16 */
    size_t per_chunk;
    void *free_list;
    void **chunks;
    int nchunks;
} slab_t;

void slab_init(slab_t *s, size_t obj, size_t per_chunk);
/* Returns a zeroed object owned by the slab until slab_free(); never NULL. */
void *slab_alloc(slab_t *s);
void slab_free(slab_t *s, void *p);
/* Frees every chunk (objects still in use become invalid). */
void slab_destroy(slab_t *s);

#endif
