#include "util/smap.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

struct smap_slot_s {
    void *key; /* NULL = empty; SMAP_TOMB = deleted */
    size_t klen;
    uint64_t hash;
    void *value;
};

static char smap_tomb_mark;
#define SMAP_TOMB ((void *)&smap_tomb_mark)

/* FNV-1a: short keys, no adversarial input worth a keyed hash here
 * (topic names are validated and created by administrators). */
static uint64_t smap_hash(const void *key, size_t klen)
{
    const uint8_t *p = key;
    uint64_t h = 1469598103934665603ULL;
    for (size_t i = 0; i < klen; i++) {
        h ^= p[i];
        h *= 1099511628211ULL;
    }
    return h;
}

void smap_init(smap_t *m)
{
    memset(m, 0, sizeof(*m));
}

void smap_free(smap_t *m)
{
    for (size_t i = 0; i < m->cap; i++)
        if (m->slots[i].key && m->slots[i].key != SMAP_TOMB)
            free(m->slots[i].key);
    free(m->slots);
    memset(m, 0, sizeof(*m));
}

static smap_slot_t *smap_find(const smap_t *m, const void *key, size_t klen, uint64_t h)
{
    if (!m->cap)
        return NULL;
    for (size_t i = h & (m->cap - 1);; i = (i + 1) & (m->cap - 1)) {
        smap_slot_t *s = &m->slots[i];
        if (!s->key)
            return NULL;
        if (s->key != SMAP_TOMB && s->hash == h && s->klen == klen && !memcmp(s->key, key, klen))
            return s;
    }
}

void *smap_get(const smap_t *m, const void *key, size_t klen)
{
    smap_slot_t *s = smap_find(m, key, klen, smap_hash(key, klen));
    return s ? s->value : NULL;
}

static void smap_grow(smap_t *m)
{
    smap_t n;
    n.cap = m->cap ? m->cap * 2 : 16;
    if (m->count * 4 < m->cap)
        n.cap = m->cap; /* mostly tombstones: rehash in place size */
    n.slots = xcalloc(n.cap, sizeof(*n.slots));
    n.count = n.used = 0;
    for (size_t i = 0; i < m->cap; i++) {
        smap_slot_t *s = &m->slots[i];
        if (!s->key || s->key == SMAP_TOMB)
            continue;
        size_t j = s->hash & (n.cap - 1);
        while (n.slots[j].key)
            j = (j + 1) & (n.cap - 1);
        n.slots[j] = *s;
        n.count++;
        n.used++;
    }
    free(m->slots);
    *m = n;
}

void smap_put(smap_t *m, const void *key, size_t klen, void *value)
{
    uint64_t h = smap_hash(key, klen);
    smap_slot_t *s = smap_find(m, key, klen, h);
    if (s) {
        s->value = value;
        return;
    }
    if ((m->used + 1) * 4 > m->cap * 3)
        smap_grow(m);
    size_t i = h & (m->cap - 1);
    while (m->slots[i].key && m->slots[i].key != SMAP_TOMB)
        i = (i + 1) & (m->cap - 1);
    s = &m->slots[i];
    if (!s->key)
        m->used++;
    s->key = xmalloc(klen ? klen : 1);
    memcpy(s->key, key, klen);
    s->klen = klen;
    s->hash = h;
    s->value = value;
    m->count++;
}

void *smap_del(smap_t *m, const void *key, size_t klen)
{
    smap_slot_t *s = smap_find(m, key, klen, smap_hash(key, klen));
    if (!s)
        return NULL;
    void *v = s->value;
    free(s->key);
    s->key = SMAP_TOMB;
    s->value = NULL;
    m->count--;
    return v;
}

int smap_next(const smap_t *m, size_t *pos, const void **key, size_t *klen, void **value)
{
    while (*pos < m->cap) {
        smap_slot_t *s = &m->slots[(*pos)++];
        if (s->key && s->key != SMAP_TOMB) {
            if (key)
                *key = s->key;
            if (klen)
                *klen = s->klen;
            if (value)
                *value = s->value;
            return 1;
        }
    }
    return 0;
}
