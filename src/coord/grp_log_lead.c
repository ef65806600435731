/* The coordinator's host following leadership on a quorum's broker: it
 * serves the groups of the __consumer_offsets partitions whose leader in
 * the metadata image is this node, as a Kafka broker's coordinator serves
 * those its replica manager leads. When the image moves a partition's
 * leadership away, its groups are unloaded; when it gives one to this
 * node, the groups are loaded from the partition's log here (while
 * loading they answer COORDINATOR_LOAD_IN_PROGRESS). The partition is
 * replicated (partition/part_fetcher.c), so a new leader loads what it
 * replicated from the former one. */
#include "coord/grp_log_int.h"

#include "cluster/meta_image.h"

#define GRP_LOG_FOLLOW_MS 1000
#define GRP_LOG_TOPIC_LEN (sizeof(GRP_LOG_TOPIC) - 1)
#define GRP_LOG_OF_FOLLOW(t)                                                                       \
    ((grp_log_t *)(void *)((char *)(t) - offsetof(grp_log_t, follow_timer)))

bool grp_log_leads(const grp_log_t *h, int32_t p)
{
    if (!h->img)
        return true;
    const mi_topic_t *mt = meta_image_topic(h->img, GRP_LOG_TOPIC, GRP_LOG_TOPIC_LEN);
    return mt && p >= 0 && p < mt->nparts && mt->parts[p].present &&
           mt->parts[p].leader == h->node_id;
}

/* Partition p is led here from now on: loaded next, or again from its
 * start if a load of it was under way when it was lost. */
static void grp_log_gained(grp_log_t *h, int32_t p)
{
    part_t *part = grp_log_part(h, p);
    grp_load_begin(h->coord, p);
    if (h->load_part == p && part)
        grp_log_load_from_start(h, part);
    else
        h->load_want[p] = true;
    if (h->load_part < 0) {
        h->load.records = 0;
        h->load_start_ms = net_now_mono_ms();
    }
    grp_log_arm(h, &h->load_timer, 0);
}

/* Partition p is no longer led here: a load of it under way ends. */
static void grp_log_lost(grp_log_t *h, int32_t p)
{
    h->load_want[p] = false;
    if (h->load_part == p)
        h->load.next = h->load.end;
    grp_unload(h->coord, p);
}

void grp_log_follow(grp_coord_t *c)
{
    if (!c)
        return;
    grp_log_t *h = grp_coord_env(c)->ctx;
    for (int32_t p = 0; h->img && p < h->nparts; p++) {
        bool led = grp_log_leads(h, p);
        if (led == h->led[p])
            continue;
        h->led[p] = led;
        if (led)
            grp_log_gained(h, p);
        else
            grp_log_lost(h, p);
    }
}

static void grp_log_follow_step(grp_timer_t *t)
{
    grp_log_t *h = GRP_LOG_OF_FOLLOW(t);
    grp_log_follow(h->coord);
    grp_log_arm(h, &h->follow_timer, GRP_LOG_FOLLOW_MS);
}

void grp_log_follow_start(grp_log_t *h)
{
    h->follow_timer.cb = grp_log_follow_step;
    if (h->img)
        grp_log_arm(h, &h->follow_timer, GRP_LOG_FOLLOW_MS);
}
