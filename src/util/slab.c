#include "util/slab.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

/* Under AddressSanitizer a freed object is poisoned until it is handed
 * out again, so pooling does not hide a use after free. The free-list
 * link lives in the first word, which stays readable. */
#if defined(__SANITIZE_ADDRESS__)
#include <sanitizer/asan_interface.h>
#define SLAB_POISON(p, n) ASAN_POISON_MEMORY_REGION((char *)(p) + sizeof(void *), (n) - sizeof(void *))
#define SLAB_UNPOISON(p, n) ASAN_UNPOISON_MEMORY_REGION((p), (n))
#else
#define SLAB_POISON(p, n) ((void)0)
#define SLAB_UNPOISON(p, n) ((void)0)
#endif

void slab_init(slab_t *s, size_t obj, size_t per_chunk)
{
    memset(s, 0, sizeof(*s));
    s->obj = (obj + 15) & ~(size_t)15;
    if (s->obj < sizeof(void *))
        s->obj = sizeof(void *);
    s->per_chunk = per_chunk ? per_chunk : 64;
}

static void slab_grow(slab_t *s)
{
    char *chunk = xmalloc(s->obj * s->per_chunk);
    s->chunks = xrealloc(s->chunks, (size_t)(s->nchunks + 1) * sizeof(void *));
    s->chunks[s->nchunks++] = chunk;
    for (size_t i = s->per_chunk; i-- > 0;) {
        void *p = chunk + i * s->obj;
        *(void **)p = s->free_list;
        s->free_list = p;
        SLAB_POISON(p, s->obj);
    }
}

void *slab_alloc(slab_t *s)
{
    if (!s->free_list)
        slab_grow(s);
    void *p = s->free_list;
    s->free_list = *(void **)p;
    SLAB_UNPOISON(p, s->obj);
    memset(p, 0, s->obj);
    return p;
}

void slab_free(slab_t *s, void *p)
{
    if (!p)
        return;
    *(void **)p = s->free_list;
    s->free_list = p;
    SLAB_POISON(p, s->obj);
}

void slab_destroy(slab_t *s)
{
    for (int i = 0; i < s->nchunks; i++) {
        SLAB_UNPOISON(s->chunks[i], s->obj * s->per_chunk);
        free(s->chunks[i]);
    }
    free(s->chunks);
    memset(s, 0, sizeof(*s));
}
