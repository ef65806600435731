/* Incremental fetch sessions (KIP-227). A consumer that fetches many
 * partitions sends the full list once; the broker remembers it under a
 * session id, and later requests carry only what changed (new fetch
 * offsets, forgotten partitions) while answers carry only partitions with
 * news (records, an error, or a moved high watermark / log start). */
#ifndef STRAND_API_FSESS_H
#define STRAND_API_FSESS_H

#include <stdint.h>

#include "util/smap.h"

typedef struct fsess_part_s {
    char *topic;          /* owned; "" when the session is by topic id */
    uint8_t topic_id[16];
    int32_t partition;
    int64_t fetch_offset;
    int32_t max_bytes;
    int32_t current_leader_epoch;
    int32_t last_fetched_epoch;
    /* What the client was last told, to decide what is news. */
    int64_t sent_hwm, sent_lso, sent_lstart;
} fsess_part_t;

typedef struct fsess_s {
    int32_t id;
    int32_t epoch;        /* the epoch the next request must carry */
    int64_t last_used_ms;
    int by_id;            /* v13+: partitions are named by topic id */
    fsess_part_t *parts;
    int nparts, cap;
} fsess_t;

typedef struct fsess_cache_s {
    smap_t by_id;         /* 4-byte session id -> fsess_t */
    int max;              /* max.incremental.fetch.session.cache.slots */
    int32_t next_id;
} fsess_cache_t;

/* Returns a cache owned by the caller (fsess_cache_free). */
fsess_cache_t *fsess_cache_new(int max_slots);
void fsess_cache_free(fsess_cache_t *c);
/* Creates a session, evicting the least recently used one when full.
 * Returns a session owned by the cache, or NULL when max is 0. */
fsess_t *fsess_create(fsess_cache_t *c, int by_id, int64_t now_ms);
fsess_t *fsess_get(fsess_cache_t *c, int32_t id);
void fsess_remove(fsess_cache_t *c, int32_t id);
/* Finds or adds a partition; *added says which. */
fsess_part_t *fsess_part(fsess_t *s, const char *topic, int32_t tlen, const uint8_t id[16],
                         int32_t partition, int *added);
/* Drops a partition if present. */
void fsess_forget(fsess_t *s, const char *topic, int32_t tlen, const uint8_t id[16],
                  int32_t partition);

#endif
