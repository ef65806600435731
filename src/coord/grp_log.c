/* The coordinator's host on a broker: grp_env_t over the event loop and
 * the partition logs of __consumer_offsets.
 *
 * Writes: each coordinator write (one OffsetCommit request, one group
 * state change) becomes one magic-2 record batch, uncompressed, without
 * producer id, appended as leader to the group's partition (the layout is
 * log_batch_build's; the record keys and values are grp_rec.c's), then
 * partition watchers are woken as after a produce. A partition grown
 * well past its live state is rewritten (see "compaction" below).
 *
 * Reads: at open every partition led here is replayed from its log start
 * to the end it had then, at most GRP_LOG_SLICE bytes per loop turn; on a
 * quorum's broker a partition is replayed again when this node becomes
 * its leader (grp_log_lead.c).
 *
 * Timers: the coordinator's own heap behind one loop timer. */
#include "coord/grp_log_int.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/meta_image.h"
#include "log/log_batch.h"
#include "partition/part_read.h"
#include "util/logging.h"
#include "util/mem.h"
#include "util/uuid.h"

#define GRP_LOG_SLICE (4 << 20)
#define GRP_LOG_TOPIC_LEN (sizeof(GRP_LOG_TOPIC) - 1)


static int64_t grp_log_now(void *ctx)
{
    return net_loop_now_mono(((grp_log_t *)ctx)->loop);
}

static int64_t grp_log_wall(void *ctx)
{
    (void)ctx;
    return net_now_wall_ms();
}

/* ---- timers ---- */

/* The loop's timer cancel is a linear search over every timer of the
 * broker, and members have a timer each: the coordinator keeps its own
 * heap (cancel by position) and one loop timer for its earliest. */
static bool grp_log_less(const grp_timer_t *a, const grp_timer_t *b)
{
    return a->due < b->due || (a->due == b->due && a->id < b->id);
}

static void grp_log_heap_set(grp_log_t *h, int32_t i, grp_timer_t *t)
{
    h->heap[i] = t;
    t->slot = i;
}

static void grp_log_heap_up(grp_log_t *h, int32_t i)
{
    grp_timer_t *t = h->heap[i];
    while (i > 0 && grp_log_less(t, h->heap[(i - 1) / 2])) {
        grp_log_heap_set(h, i, h->heap[(i - 1) / 2]);
        i = (i - 1) / 2;
    }
    grp_log_heap_set(h, i, t);
}

static void grp_log_heap_down(grp_log_t *h, int32_t i)
{
    grp_timer_t *t = h->heap[i];
    for (;;) {
        int32_t l = 2 * i + 1, r = l + 1, m = l;
        if (l >= h->nheap)
            break;
        if (r < h->nheap && grp_log_less(h->heap[r], h->heap[l]))
            m = r;
        if (!grp_log_less(h->heap[m], t))
            break;
        grp_log_heap_set(h, i, h->heap[m]);
        i = m;
    }
    grp_log_heap_set(h, i, t);
}

static void grp_log_heap_del(grp_log_t *h, grp_timer_t *t)
{
    int32_t i = t->slot;
    if (i < 0 || i >= h->nheap || h->heap[i] != t)
        return;
    grp_timer_t *last = h->heap[--h->nheap];
    t->slot = -1;
    if (i == h->nheap)
        return;
    grp_log_heap_set(h, i, last);
    grp_log_heap_up(h, i);
    grp_log_heap_down(h, last->slot);
}

static void grp_log_tick(net_loop_t *loop, void *data);

/* Arms the loop timer when the earliest due is before the armed one;
 * the one armed before is cancelled, so there is never more than one
 * and close can cancel it. */
static void grp_log_rearm(grp_log_t *h)
{
    if (!h->nheap || h->heap[0]->due >= h->tick_due)
        return;
    if (h->tick_id)
        net_timer_cancel(h->loop, h->tick_id);
    h->tick_due = h->heap[0]->due;
    h->tick_id =
        net_timer_add(h->loop, h->tick_due - net_loop_now_mono(h->loop), grp_log_tick, h);
}

static void grp_log_tick(net_loop_t *loop, void *data)
{
    grp_log_t *h = data;
    int64_t now = net_loop_now_mono(loop);
    /* Timers armed by the callbacks wait for the next turn of the loop
     * (the replay re-arms itself at 0 ms to yield). */
    uint64_t last = h->next_id;
    h->tick_id = 0;
    h->tick_due = INT64_MAX;
    while (h->nheap && h->heap[0]->due <= now && h->heap[0]->id <= last) {
        grp_timer_t *t = h->heap[0];
        grp_log_heap_del(h, t);
        grp_timer_fire(t);
    }
    grp_log_rearm(h);
}

static uint64_t grp_log_timer_add(void *ctx, int64_t ms, grp_timer_t *t)
{
    grp_log_t *h = ctx;
    (void)ms;
    if (h->nheap == h->capheap) {
        h->capheap = h->capheap ? h->capheap * 2 : 64;
        h->heap = xrealloc(h->heap, (size_t)h->capheap * sizeof(*h->heap));
    }
    t->id = ++h->next_id;
    grp_log_heap_set(h, h->nheap++, t);
    grp_log_heap_up(h, t->slot);
    grp_log_rearm(h);
    return t->id;
}

static void grp_log_timer_cancel(void *ctx, grp_timer_t *t)
{
    grp_log_heap_del(ctx, t);
}

/* The host's own timer (the replay), outside the coordinator. */
void grp_log_arm(grp_log_t *h, grp_timer_t *t, int64_t ms)
{
    grp_log_heap_del(h, t);
    t->due = net_loop_now_mono(h->loop) + ms;
    grp_log_timer_add(h, ms, t);
}

#define GRP_LOG_OF(t) ((grp_log_t *)(void *)((char *)(t) - offsetof(grp_log_t, load_timer)))

static void grp_log_random(void *ctx, uint8_t out[16])
{
    (void)ctx;
    if (uuid_generate(out) < 0) {
        /* No kernel randomness: ids only need to be unique here. */
        static uint64_t n;
        int64_t t = net_now_wall_ms();
        memcpy(out, &t, 8);
        n++;
        memcpy(out + 8, &n, 8);
    }
}

part_t *grp_log_part(grp_log_t *h, int32_t p)
{
    topic_t *t = part_topic_get(h->reg, GRP_LOG_TOPIC, GRP_LOG_TOPIC_LEN);
    return t ? part_get(t, p) : NULL;
}

/* A partition whose log failed (or whose log dir is gone) stays offline
 * until restart; the coordinator then treats its groups as Kafka's treats
 * the groups of a partition it no longer leads. On a quorum's broker, so
 * does a partition another broker leads, or none, or one not hosted
 * here. */
static bool grp_log_offline(void *ctx, int32_t p)
{
    grp_log_t *h = ctx;
    topic_t *t = part_topic_get(h->reg, GRP_LOG_TOPIC, GRP_LOG_TOPIC_LEN);
    if (h->img)
        return !grp_log_leads(h, p) || !t || part_offline(part_get(t, p));
    return t && p >= 0 && p < t->nparts && part_offline(t->parts[p]);
}

/* ---- replay ---- */

/* A transaction's offsets (a transactional batch) wait for its marker. */
static void grp_log_record(void *ctx, int32_t part, const log_batch_hdr_t *bh,
                           const log_record_t *rec)
{
    grp_log_t *h = ctx;
    int rc = LOG_BATCH_ATTR_IS_TRANSACTIONAL(bh->attributes) && bh->producer_id >= 0
                 ? grp_load_txn_record(h->coord, part, bh->producer_id, rec->key, rec->key_len,
                                       rec->value, rec->value_len)
                 : grp_load_record(h->coord, part, rec->key, rec->key_len, rec->value,
                                   rec->value_len);
    if (rc < 0)
        lg_warn("%s-%d: malformed record at offset %lld skipped", GRP_LOG_TOPIC, part,
                (long long)rec->offset);
}

/* A transaction marker decides that producer's offsets. */
static void grp_log_control(void *ctx, int32_t part, const log_batch_hdr_t *bh,
                            const uint8_t *batch, size_t len)
{
    grp_log_t *h = ctx;
    int type = log_batch_control_type(batch, len);
    if (bh->producer_id >= 0 && (type == 0 || type == 1))
        grp_txn_complete(h->coord, part, bh->producer_id, type == 1);
}

void grp_log_load_from_start(grp_log_t *h, part_t *part)
{
    h->load.part = h->load_part;
    coord_replay_begin(&h->load, part);
}

/* Starts the next partition to load that has a log (one without has
 * nothing to load); returns 0, idle (load_part -1), when none is left. */
static int grp_log_next_part(grp_log_t *h)
{
    for (int32_t p = 0; p < h->nparts; p++) {
        if (!h->load_want[p])
            continue;
        h->load_want[p] = false;
        part_t *part = grp_log_part(h, p);
        if (!part) {
            grp_load_end(h->coord, p);
            continue;
        }
        h->load_part = p;
        grp_log_load_from_start(h, part);
        return 1;
    }
    h->load_part = -1;
    return 0;
}

static void grp_log_load_step(grp_timer_t *t)
{
    grp_log_t *h = GRP_LOG_OF(t);
    int64_t budget = GRP_LOG_SLICE;

    if (h->load_part < 0 && !grp_log_next_part(h))
        return;
    while (budget > 0 && h->load_part >= 0) {
        part_t *part = grp_log_part(h, h->load_part);
        int64_t n = part ? coord_replay_some(&h->load, part, budget) : -1;
        if (n >= 0) {
            budget -= n;
            continue;
        }
        grp_load_end(h->coord, h->load_part);
        if (!grp_log_next_part(h)) {
            lg_info("loaded %lld record(s) of %s in %lld ms", (long long)h->load.records,
                    GRP_LOG_TOPIC, (long long)(net_now_mono_ms() - h->load_start_ms));
            return;
        }
    }
    if (h->load_part >= 0)
        grp_log_arm(h, &h->load_timer, 0);
}

/* ---- open and close ---- */

void grp_log_topic_config(const topic_cfg_t *base, const grp_log_config_t *cfg, topic_cfg_t *t)
{
    *t = *base;
    t->compacted = true;
    t->log.retention_ms = -1;
    t->log.retention_bytes = -1;
    /* Like Kafka, a value below segment.bytes' floor (1 MiB) makes the
     * creation fail with INVALID_CONFIG. */
    if (cfg->segment_bytes > 0)
        t->log.segment_bytes = cfg->segment_bytes;
}

static topic_t *grp_log_topic(part_reg_t *reg, const grp_log_config_t *cfg)
{
    topic_cfg_t tcfg;
    topic_t *t = part_topic_get(reg, GRP_LOG_TOPIC, GRP_LOG_TOPIC_LEN);

    if (!t)
        return NULL;
    /* A registry that did not keep the topic's settings (a data dir from
     * before topic configs were persisted) would apply retention to it. */
    if (!t->cfg.compacted) {
        lg_warn("%s has no compact policy: keeping its records without retention",
                GRP_LOG_TOPIC);
        grp_log_topic_config(&t->cfg, cfg, &tcfg);
        part_topic_apply_cfg(t, &tcfg);
    }
    return t;
}

/* How many partitions the coordinator spreads groups over: the topic's
 * here, or on a quorum the image's (this node has only some of them);
 * 0 when it has none yet. */
static int32_t grp_log_nparts(const topic_t *t, const grp_log_config_t *cfg)
{
    if (!cfg->img)
        return t->nparts;
    const mi_topic_t *mt = meta_image_topic(cfg->img, GRP_LOG_TOPIC, GRP_LOG_TOPIC_LEN);
    return mt ? mt->nparts : 0;
}

grp_coord_t *grp_log_open(net_loop_t *loop, part_reg_t *reg, const grp_log_config_t *cfg)
{
    topic_t *t = grp_log_topic(reg, cfg);
    int32_t nparts = t ? grp_log_nparts(t, cfg) : 0;
    if (nparts <= 0)
        return NULL;
    grp_log_t *h = xcalloc(1, sizeof(*h));
    grp_config_t gc = cfg->grp;
    grp_env_t env = {h, grp_log_now, grp_log_wall, grp_log_timer_add, grp_log_timer_cancel,
                     grp_log_random, grp_log_store, grp_log_offline};

    h->loop = loop;
    h->reg = reg;
    h->img = cfg->img;
    h->node_id = cfg->node_id;
    h->nparts = nparts;
    h->tick_due = INT64_MAX;
    h->load_timer.cb = grp_log_load_step;
    h->compact_timer.cb = grp_log_compact_step;
    h->compact_due = xcalloc((size_t)h->nparts + 1, sizeof(*h->compact_due));
    h->compacting = xcalloc((size_t)h->nparts + 1, sizeof(*h->compacting));
    h->written_end = xcalloc((size_t)h->nparts + 1, sizeof(*h->written_end));
    h->commit_timeout_ms = cfg->commit_timeout_ms > 0 ? cfg->commit_timeout_ms : 5000;
    h->compact_min = cfg->segment_bytes > 0 && cfg->segment_bytes < GRP_LOG_COMPACT_MIN
                         ? cfg->segment_bytes
                         : GRP_LOG_COMPACT_MIN;
    h->compact_at = xcalloc((size_t)h->nparts + 1, sizeof(*h->compact_at));
    h->led = xcalloc((size_t)h->nparts + 1, sizeof(*h->led));
    h->load_want = xcalloc((size_t)h->nparts + 1, sizeof(*h->load_want));
    for (int32_t i = 0; i < h->nparts; i++)
        h->compact_at[i] = h->compact_min;
    gc.num_partitions = nparts;
    h->coord = grp_coord_new(&gc, &env);
    h->load_part = -1;
    h->load.topic = GRP_LOG_TOPIC;
    h->load.ctx = h;
    h->load.record = grp_log_record;
    h->load.control = grp_log_control;
    h->load_start_ms = net_now_mono_ms();
    /* The partitions led here load now, the others once they are. */
    for (int32_t i = 0; i < h->nparts; i++) {
        h->led[i] = h->load_want[i] = grp_log_leads(h, i);
        if (h->led[i])
            grp_load_begin(h->coord, i);
    }
    grp_log_arm(h, &h->load_timer, 0);
    grp_log_follow_start(h);
    return h->coord;
}

void grp_log_close(grp_coord_t *c)
{
    if (!c)
        return;
    grp_log_t *h = grp_coord_env(c)->ctx;
    grp_log_heap_del(h, &h->load_timer);
    grp_log_heap_del(h, &h->compact_timer);
    grp_log_heap_del(h, &h->follow_timer);
    grp_coord_free(c);
    if (h->tick_id)
        net_timer_cancel(h->loop, h->tick_id);
    free(h->written_end);
    free(h->compacting);
    free(h->heap);
    free(h->compact_due);
    free(h->compact_at);
    free(h->led);
    free(h->load_want);
    free(h);
}
