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
 * Reads: at open every partition is replayed from its log start to the
 * end it had then, at most GRP_LOG_SLICE bytes per loop turn.
 *
 * Timers: the coordinator's own heap behind one loop timer. */
#include "coord/grp_log.h"

#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log_batch.h"
#include "util/logging.h"
#include "util/mem.h"
#include "util/uuid.h"

#define GRP_LOG_SLICE (4 << 20)
#define GRP_LOG_READ (1 << 20)
#define GRP_LOG_TOPIC_LEN (sizeof(GRP_LOG_TOPIC) - 1)

typedef struct grp_log_s {
    net_loop_t *loop;
    part_reg_t *reg;
    grp_coord_t *coord;
    int32_t nparts;
    /* The coordinator's timers: a min-heap on due time, served by one
     * loop timer armed for the earliest (tick_due; INT64_MAX: none). */
    grp_timer_t **heap;
    int32_t nheap, capheap;
    int64_t tick_due;
    uint64_t next_id;
    /* Rewrites (compaction) due, run from their own timer. */
    grp_timer_t compact_timer;
    bool *compact_due;
    int64_t *compact_at; /* log size that triggers the next rewrite */
    int64_t compact_min;
    /* Replay: the partition being read and where, up to which end. */
    grp_timer_t load_timer;
    int32_t load_part;
    int64_t load_next;
    int64_t load_end;
    int64_t load_records;
    int64_t load_start_ms;
} grp_log_t;

/* The host the loop timer serves. Loop timers are never cancelled (a
 * stale one finds nothing due), so they must not point at a host that
 * may be gone: they go through this, which close clears. There is one
 * coordinator per process. */
static grp_log_t *grp_log_active;

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

/* Arms the loop timer when the earliest due is before the armed one. */
static void grp_log_rearm(grp_log_t *h)
{
    if (!h->nheap || h->heap[0]->due >= h->tick_due)
        return;
    h->tick_due = h->heap[0]->due;
    net_timer_add(h->loop, h->tick_due - net_loop_now_mono(h->loop), grp_log_tick, NULL);
}

static void grp_log_tick(net_loop_t *loop, void *data)
{
    grp_log_t *h = grp_log_active;
    (void)data;
    if (!h)
        return;
    int64_t now = net_loop_now_mono(loop);
    /* Timers armed by the callbacks wait for the next turn of the loop
     * (the replay re-arms itself at 0 ms to yield). */
    uint64_t last = h->next_id;
    if (now >= h->tick_due)
        h->tick_due = INT64_MAX; /* the armed one is due: this is it, or it is stale */
    while (h->nheap && h->heap[0]->due <= now && h->heap[0]->id <= last &&
           grp_log_active == h) {
        grp_timer_t *t = h->heap[0];
        grp_log_heap_del(h, t);
        grp_timer_fire(t);
    }
    if (grp_log_active == h)
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
static void grp_log_arm(grp_log_t *h, grp_timer_t *t, int64_t ms)
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

static part_t *grp_log_part(grp_log_t *h, int32_t p)
{
    topic_t *t = part_topic_get(h->reg, GRP_LOG_TOPIC, GRP_LOG_TOPIC_LEN);
    return t ? part_get(t, p) : NULL;
}

/* A partition whose log failed (or whose log dir is gone) stays offline
 * until restart; the coordinator then treats its groups as Kafka's treats
 * the groups of a partition it no longer leads. */
static bool grp_log_offline(void *ctx, int32_t p)
{
    grp_log_t *h = ctx;
    topic_t *t = part_topic_get(h->reg, GRP_LOG_TOPIC, GRP_LOG_TOPIC_LEN);
    return t && p >= 0 && p < t->nparts && part_offline(t->parts[p]);
}

/* ---- compaction ----
 *
 * Kafka compacts __consumer_offsets; the log layer does not compact yet,
 * and without it the topic would grow with every commit (and replay at
 * start would slow down). The coordinator holds the whole live state, so
 * it rewrites a partition instead: roll the log, append the records of
 * the live state (grp_part_snapshot), fsync, and delete everything before
 * them (DeleteRecords). A crash at any point leaves either the old
 * records, or the old records followed by the rewrite, which replay to
 * the same state. A partition is rewritten when its log exceeds
 * GRP_LOG_COMPACT_MIN (or offsets.topic.segment.bytes if smaller) and
 * four times its live state. */
#define GRP_LOG_COMPACT_MIN (16 << 20)

/* Called after each append: only marks the partition (a rewrite must
 * not run inside a coordinator operation, which applies its change
 * after the append). */
static void grp_log_compact_check(grp_log_t *h, part_t *part)
{
    if (log_size_bytes(part->log) < h->compact_at[part->index] || h->compact_due[part->index])
        return;
    h->compact_due[part->index] = true;
    if (!h->compact_timer.id)
        grp_log_arm(h, &h->compact_timer, 0);
}

static int16_t grp_log_store(void *ctx, int32_t p, const grp_recs_t *recs);

static void grp_log_compact(grp_log_t *h, int32_t p)
{
    part_t *part = grp_log_part(h, p);
    int64_t now = net_now_wall_ms();
    grp_recs_t recs;

    if (!part || grp_part_loading(h->coord, p))
        return;
    int64_t before = log_size_bytes(part->log);
    grp_recs_init(&recs);
    int n = grp_part_snapshot(h->coord, p, &recs);
    /* Not again before the log is four times the live state. */
    int64_t live = (int64_t)recs.data.len;
    h->compact_at[p] = live * 4 > h->compact_min ? live * 4 : h->compact_min;
    if (before < h->compact_at[p]) {
        grp_recs_free(&recs);
        return;
    }
    int64_t start = -1;
    int16_t err = log_roll(part->log, now);
    if (!err)
        start = log_end_offset(part->log);
    /* In batches well below the segment size (a batch must fit one). */
    for (int i = 0; !err && i < recs.n;) {
        grp_recs_t view = recs;
        size_t bytes = 0;
        view.v = recs.v + i;
        view.n = 0;
        while (i + view.n < recs.n && (view.n == 0 || bytes < (size_t)h->compact_min / 4)) {
            bytes += (size_t)recs.v[i + view.n].key_len + (size_t)(recs.v[i + view.n].val_len > 0
                                                                        ? recs.v[i + view.n].val_len
                                                                        : 0);
            view.n++;
        }
        err = grp_log_store(h, p, &view);
        i += view.n;
    }
    if (!err && log_flush(part->log, now) < 0)
        err = KERR_KAFKA_STORAGE_ERROR;
    if (!err)
        err = log_delete_records(part->log, start);
    if (err)
        lg_error("%s-%d: rewrite failed: %s", GRP_LOG_TOPIC, p, kerr_name(err));
    else
        lg_info("%s-%d: rewrote %d live record(s) at offset %lld; %lld bytes before, %lld after",
                GRP_LOG_TOPIC, p, n, (long long)start, (long long)before,
                (long long)log_size_bytes(part->log));
    grp_recs_free(&recs);
}

static void grp_log_compact_step(grp_timer_t *t)
{
    grp_log_t *h = (grp_log_t *)(void *)((char *)t - offsetof(grp_log_t, compact_timer));
    for (int32_t p = 0; p < h->nparts; p++)
        if (h->compact_due[p]) {
            grp_log_compact(h, p); /* still due meanwhile: its own appends do not re-arm */
            h->compact_due[p] = false;
        }
}

static int16_t grp_log_store(void *ctx, int32_t p, const grp_recs_t *recs)
{
    grp_log_t *h = ctx;
    part_t *part = grp_log_part(h, p);
    int64_t now = net_now_wall_ms();
    log_batch_build_t opt;
    log_append_result_t res;
    buf_t b;

    if (!part)
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (!recs->n)
        return KERR_NONE;
    log_record_t *r = xcalloc((size_t)recs->n, sizeof(*r));
    for (int i = 0; i < recs->n; i++) {
        const struct grp_recs_ent_s *e = &recs->v[i];
        r[i].timestamp = now;
        r[i].key = recs->data.p + e->key_off;
        r[i].key_len = e->key_len;
        r[i].value = e->val_len >= 0 ? recs->data.p + e->val_off : NULL;
        r[i].value_len = e->val_len;
    }
    buf_init(&b);
    log_batch_build_init(&opt);
    int16_t err = KERR_UNKNOWN_SERVER_ERROR;
    if (log_batch_build(&b, &opt, r, recs->n) == 0)
        err = log_append(part->log, b.p, b.len, part->leader_epoch, now, &res);
    buf_free(&b);
    free(r);
    if (err)
        return err;
    if (log_unflushed_messages(part->log) >= part->topic->cfg.flush_messages &&
        log_flush(part->log, now) < 0) {
        /* As in Kafka, whose append fails when its flush does: nothing is
         * applied, and the records are taken back out of the log (now
         * offline, see grp_log_offline). */
        lg_error("%s-%d: flush failed: %s", GRP_LOG_TOPIC, p, strerror(errno));
        if (log_truncate_to(part->log, res.base_offset) < 0)
            lg_error("%s-%d: cannot remove the unflushed records: %s", GRP_LOG_TOPIC, p,
                     strerror(errno));
        return KERR_KAFKA_STORAGE_ERROR;
    }
    part_update_hwm(part);
    part_notify(part);
    grp_log_compact_check(h, part);
    return KERR_NONE;
}

/* ---- replay ---- */

/* Applies the records of one batch at or after h->load_next. */
static void grp_log_apply_batch(grp_log_t *h, const uint8_t *p, size_t len)
{
    log_batch_hdr_t hdr;
    log_record_t rec;
    if (log_batch_hdr_parse(p, len, &hdr) < 0 || LOG_BATCH_ATTR_IS_CONTROL(hdr.attributes))
        return;
    log_batch_iter_t *it = log_batch_iter_new(p, len);
    if (!it) {
        lg_error("%s-%d: unreadable batch at offset %lld skipped", GRP_LOG_TOPIC, h->load_part,
                 (long long)hdr.base_offset);
        return;
    }
    int r;
    while ((r = log_batch_iter_next(it, &rec)) == 1) {
        if (rec.offset < h->load_next)
            continue;
        h->load_records++;
        if (grp_load_record(h->coord, h->load_part, rec.key, rec.key_len, rec.value,
                            rec.value_len) < 0)
            lg_warn("%s-%d: malformed record at offset %lld skipped", GRP_LOG_TOPIC,
                    h->load_part, (long long)rec.offset);
    }
    if (r < 0)
        lg_error("%s-%d: corrupt batch at offset %lld", GRP_LOG_TOPIC, h->load_part,
                 (long long)hdr.base_offset);
    log_batch_iter_free(it);
}

/* Reads up to about budget bytes of the current partition. Returns the
 * bytes read, or -1 when the partition is done. */
static int64_t grp_log_read_some(grp_log_t *h, part_t *part, int64_t budget)
{
    int64_t done = 0;
    while (done < budget && h->load_next < h->load_end) {
        log_read_result_t rd;
        int16_t err = log_read(part->log, h->load_next, GRP_LOG_READ, 1, h->load_end, &rd);
        if (err == KERR_OFFSET_OUT_OF_RANGE && h->load_next < log_start_offset(part->log)) {
            h->load_next = log_start_offset(part->log); /* retention moved the start */
            continue;
        }
        if (err || rd.len <= 0) {
            if (err)
                lg_error("%s-%d: replay stopped at offset %lld: %s", GRP_LOG_TOPIC,
                         h->load_part, (long long)h->load_next, kerr_name(err));
            if (rd.fd >= 0)
                close(rd.fd);
            return -1;
        }
        uint8_t *buf = xmalloc((size_t)rd.len);
        ssize_t got = pread(rd.fd, buf, (size_t)rd.len, rd.file_pos);
        close(rd.fd);
        size_t pos = 0;
        int64_t before = h->load_next;
        while (got > 0 && pos + LOG_BATCH_LOG_OVERHEAD <= (size_t)got) {
            int64_t sz = log_batch_total_size(buf + pos, (size_t)got - pos);
            log_batch_hdr_t hdr;
            if (sz < LOG_BATCH_HDR_SIZE || (size_t)sz > (size_t)got - pos ||
                log_batch_hdr_parse(buf + pos, (size_t)sz, &hdr) < 0)
                break;
            grp_log_apply_batch(h, buf + pos, (size_t)sz);
            int64_t next = hdr.base_offset + hdr.last_offset_delta + 1;
            if (next > h->load_next)
                h->load_next = next;
            pos += (size_t)sz;
        }
        free(buf);
        done += rd.len;
        if (h->load_next == before)
            return -1; /* no progress: a gap or a bad read; the rest is lost */
    }
    return h->load_next < h->load_end ? done : -1;
}

/* Starts the next partition that has a log; returns 0 when all are done. */
static int grp_log_next_part(grp_log_t *h)
{
    while (++h->load_part < h->nparts) {
        part_t *part = grp_log_part(h, h->load_part);
        if (!part) {
            grp_load_end(h->coord, h->load_part);
            continue;
        }
        h->load_next = log_start_offset(part->log);
        h->load_end = log_end_offset(part->log);
        return 1;
    }
    return 0;
}

static void grp_log_load_step(grp_timer_t *t)
{
    grp_log_t *h = GRP_LOG_OF(t);
    int64_t budget = GRP_LOG_SLICE;

    while (budget > 0 && h->load_part < h->nparts) {
        part_t *part = grp_log_part(h, h->load_part);
        int64_t n = part ? grp_log_read_some(h, part, budget) : -1;
        if (n >= 0) {
            budget -= n;
            continue;
        }
        grp_load_end(h->coord, h->load_part);
        if (!grp_log_next_part(h)) {
            lg_info("loaded %lld record(s) of %s in %lld ms", (long long)h->load_records,
                    GRP_LOG_TOPIC, (long long)(net_now_mono_ms() - h->load_start_ms));
            return;
        }
    }
    if (h->load_part < h->nparts)
        grp_log_arm(h, &h->load_timer, 0);
}

/* ---- open and close ---- */

/* The internal topic's settings: Kafka compacts it. Without compaction
 * here, time or size retention would lose live offsets, so it keeps
 * everything (see the note on growth in grp_log.h). */
static void grp_log_topic_cfg(const topic_cfg_t *base, const grp_log_config_t *cfg,
                              topic_cfg_t *t)
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

    if (!t) {
        grp_log_topic_cfg(&reg->defaults, cfg, &tcfg);
        int16_t err = part_topic_create(reg, GRP_LOG_TOPIC, GRP_LOG_TOPIC_LEN,
                                        cfg->grp.num_partitions, &tcfg, net_now_wall_ms(), &t);
        if (err) {
            lg_error("cannot create %s: %s", GRP_LOG_TOPIC, kerr_name(err));
            return NULL;
        }
        return t;
    }
    /* A registry that did not keep the topic's settings (a data dir from
     * before topic configs were persisted) would apply retention to it. */
    if (!t->cfg.compacted) {
        lg_warn("%s has no compact policy: keeping its records without retention",
                GRP_LOG_TOPIC);
        grp_log_topic_cfg(&t->cfg, cfg, &tcfg);
        t->cfg = tcfg;
        for (int32_t i = 0; i < t->nparts; i++)
            if (t->parts[i])
                log_set_config(t->parts[i]->log, &tcfg.log);
    }
    return t;
}

grp_coord_t *grp_log_open(net_loop_t *loop, part_reg_t *reg, const grp_log_config_t *cfg)
{
    topic_t *t = grp_log_topic(reg, cfg);
    if (!t)
        return NULL;
    grp_log_t *h = xcalloc(1, sizeof(*h));
    grp_config_t gc = cfg->grp;
    grp_env_t env = {h, grp_log_now, grp_log_wall, grp_log_timer_add, grp_log_timer_cancel,
                     grp_log_random, grp_log_store, grp_log_offline};

    h->loop = loop;
    h->reg = reg;
    h->nparts = t->nparts;
    h->tick_due = INT64_MAX;
    h->load_timer.cb = grp_log_load_step;
    h->compact_timer.cb = grp_log_compact_step;
    h->compact_due = xcalloc((size_t)h->nparts + 1, sizeof(*h->compact_due));
    h->compact_min = cfg->segment_bytes > 0 && cfg->segment_bytes < GRP_LOG_COMPACT_MIN
                         ? cfg->segment_bytes
                         : GRP_LOG_COMPACT_MIN;
    h->compact_at = xcalloc((size_t)h->nparts + 1, sizeof(*h->compact_at));
    for (int32_t i = 0; i < h->nparts; i++)
        h->compact_at[i] = h->compact_min;
    grp_log_active = h;
    gc.num_partitions = t->nparts;
    h->coord = grp_coord_new(&gc, &env);
    for (int32_t i = 0; i < h->nparts; i++)
        grp_load_begin(h->coord, i);
    h->load_part = -1;
    h->load_start_ms = net_now_mono_ms();
    if (grp_log_next_part(h))
        grp_log_arm(h, &h->load_timer, 0);
    return h->coord;
}

void grp_log_close(grp_coord_t *c)
{
    if (!c)
        return;
    grp_log_t *h = grp_coord_env(c)->ctx;
    grp_log_heap_del(h, &h->load_timer);
    grp_log_heap_del(h, &h->compact_timer);
    grp_coord_free(c);
    if (grp_log_active == h)
        grp_log_active = NULL;
    free(h->heap);
    free(h->compact_due);
    free(h->compact_at);
    free(h);
}
