/* KIP-392's replica selection (part_select.h). */
#include "partition/part_select.h"

#include <string.h>

#include "cluster/cfg_broker.h"
#include "cluster/meta_image.h"
#include "util/props.h"

void part_select_init(part_reg_t *reg)
{
    const char *v = reg->props ? props_get((props_t *)reg->props, "replica.selector.class") : NULL;
    reg->rack_selector = cfg_broker_selector(v) == 1;
}

/* The rack of broker id as the image has it, if it may serve reads. */
static const char *part_select_rack(const part_reg_t *reg, int32_t id)
{
    const mi_broker_t *b = meta_image_broker(&reg->meta->img, id);
    return b && !b->fenced ? b->rack : NULL;
}

static int part_select_same(const char *have, const char *rack, int32_t rack_len)
{
    return have && strlen(have) == (size_t)rack_len && !memcmp(have, rack, (size_t)rack_len);
}

/* Kafka's order of replicas: the longer log, then the more recently
 * caught up. */
static int part_select_better(const part_replica_t *a, const part_replica_t *b, int64_t now_ms)
{
    if (!b || a->log_end_offset != b->log_end_offset)
        return !b || a->log_end_offset > b->log_end_offset;
    return now_ms - a->last_caught_up_ms < now_ms - b->last_caught_up_ms;
}

int32_t part_select_replica(const part_reg_t *reg, part_t *part, const char *rack,
                            int32_t rack_len, int64_t fetch_offset, int64_t now_ms)
{
    const part_replica_t *best = NULL;
    if (!reg->rack_selector || rack_len <= 0 || !reg->meta ||
        part_select_same(part_select_rack(reg, part->node_id), rack, rack_len))
        return -1;
    for (int32_t i = 0; i < part->nreplicas; i++) {
        const part_replica_t *r = &part->replicas[i];
        if (r->node_id == part->node_id || r->log_end_offset < fetch_offset ||
            r->log_start_offset < 0 || r->log_start_offset > fetch_offset ||
            !part_select_same(part_select_rack(reg, r->node_id), rack, rack_len))
            continue;
        if (part_select_better(r, best, now_ms))
            best = r;
    }
    return best ? best->node_id : -1;
}
