#include "api/api_fsess.h"

#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

fsess_cache_t *fsess_cache_new(int max_slots)
{
    fsess_cache_t *c = xcalloc(1, sizeof(*c));
    smap_init(&c->by_id);
    c->max = max_slots;
    c->next_id = 1;
    return c;
}

static void fsess_free(fsess_t *s)
{
    for (int i = 0; i < s->nparts; i++)
        free(s->parts[i].topic);
    free(s->parts);
    free(s);
}

void fsess_cache_free(fsess_cache_t *c)
{
    size_t pos = 0;
    void *v;
    if (!c)
        return;
    while (smap_next(&c->by_id, &pos, NULL, NULL, &v))
        fsess_free(v);
    smap_free(&c->by_id);
    free(c);
}

fsess_t *fsess_get(fsess_cache_t *c, int32_t id)
{
    return smap_get(&c->by_id, &id, sizeof(id));
}

void fsess_remove(fsess_cache_t *c, int32_t id)
{
    fsess_t *s = smap_del(&c->by_id, &id, sizeof(id));
    if (s)
        fsess_free(s);
}

/* Eviction scans the cache: it only happens when a new session arrives
 * and the cache is full, which is rare next to fetches. */
static void fsess_evict_lru(fsess_cache_t *c)
{
    size_t pos = 0;
    void *v;
    fsess_t *old = NULL;
    while (smap_next(&c->by_id, &pos, NULL, NULL, &v)) {
        fsess_t *s = v;
        if (!old || s->last_used_ms < old->last_used_ms)
            old = s;
    }
    if (old)
        fsess_remove(c, old->id);
}

fsess_t *fsess_create(fsess_cache_t *c, int by_id, int64_t now_ms)
{
    if (c->max <= 0)
        return NULL;
    if ((int)c->by_id.count >= c->max)
        fsess_evict_lru(c);
    fsess_t *s = xcalloc(1, sizeof(*s));
    do {
        s->id = c->next_id++;
        if (c->next_id <= 0)
            c->next_id = 1;
    } while (fsess_get(c, s->id));
    s->epoch = 1;
    s->by_id = by_id;
    s->last_used_ms = now_ms;
    smap_put(&c->by_id, &s->id, sizeof(s->id), s);
    return s;
}

static int fsess_match(const fsess_t *s, const fsess_part_t *p, const char *topic, int32_t tlen,
                       const uint8_t id[16], int32_t partition)
{
    if (p->partition != partition)
        return 0;
    if (s->by_id)
        return !memcmp(p->topic_id, id, 16);
    return (int32_t)strlen(p->topic) == tlen && !memcmp(p->topic, topic, (size_t)tlen);
}

fsess_part_t *fsess_part(fsess_t *s, const char *topic, int32_t tlen, const uint8_t id[16],
                         int32_t partition, int *added)
{
    for (int i = 0; i < s->nparts; i++)
        if (fsess_match(s, &s->parts[i], topic, tlen, id, partition)) {
            *added = 0;
            return &s->parts[i];
        }
    if (s->nparts == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 8;
        s->parts = xrealloc(s->parts, (size_t)s->cap * sizeof(*s->parts));
    }
    fsess_part_t *p = &s->parts[s->nparts++];
    memset(p, 0, sizeof(*p));
    p->topic = s->by_id || tlen < 0 ? xstrdup("") : xstrndup(topic, (size_t)tlen);
    if (id)
        memcpy(p->topic_id, id, 16);
    p->partition = partition;
    p->sent_hwm = p->sent_lso = p->sent_lstart = -2;
    *added = 1;
    return p;
}

void fsess_forget(fsess_t *s, const char *topic, int32_t tlen, const uint8_t id[16],
                  int32_t partition)
{
    for (int i = 0; i < s->nparts; i++)
        if (fsess_match(s, &s->parts[i], topic, tlen, id, partition)) {
            free(s->parts[i].topic);
            /* Keep the order: answers list partitions as the client sent them. */
            memmove(&s->parts[i], &s->parts[i + 1],
                    (size_t)(s->nparts - i - 1) * sizeof(*s->parts));
            s->nparts--;
            return;
        }
}
