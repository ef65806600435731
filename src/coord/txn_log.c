/* The transaction coordinator's host on a broker (txn_log.h).
 *
 * Writes: each transition is one magic-2 batch of one record (the key
 * and value of txn_rec.c), uncompressed, without producer id, appended as
 * leader to the id's partition with acks=-1; the coordinator applies it
 * once the append is acknowledged (in every in-sync replica).
 *
 * Markers: one append per partition of the transaction (txn_marker_append)
 * when this node leads it; retried every TXN_LOG_RETRY_MS while the
 * partition answers a retriable error (no leader here yet, not enough
 * replicas, a timeout), as Kafka's marker channel retries; a partition
 * whose topic is gone is dropped from the transaction.
 *
 * Reads: the replay of coord_replay.c, a slice per loop turn. */
#include "coord/txn_log_int.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_image.h"
#include "log/log_batch.h"
#include "util/logging.h"
#include "util/mem.h"

#define TXN_LOG_TOPIC_LEN (sizeof(TXN_TOPIC) - 1)
#define TXN_LOG_SLICE (4 << 20)
#define TXN_LOG_FOLLOW_MS 1000

static txn_log_t *txn_log_of(txn_coord_t *c)
{
    return txn_coord_env(c)->ctx;
}


/* ---- the env ---- */

static int64_t txn_log_now(void *ctx)
{
    (void)ctx;
    return net_now_wall_ms();
}

static part_t *txn_log_part(txn_log_t *h, int32_t p)
{
    topic_t *t = part_topic_get(h->reg, TXN_TOPIC, TXN_LOG_TOPIC_LEN);
    return t ? part_get(t, p) : NULL;
}

bool txn_log_leads(const txn_log_t *h, int32_t p)
{
    if (!h->cfg.img)
        return true;
    const mi_topic_t *mt = meta_image_topic(h->cfg.img, TXN_TOPIC, TXN_LOG_TOPIC_LEN);
    return mt && p >= 0 && p < mt->nparts && mt->parts[p].present &&
           mt->parts[p].leader == h->cfg.node_id;
}

typedef struct txn_log_w_s {
    txn_log_t *h;
    txn_write_done_fn *done;
    void *arg;
} txn_log_w_t;

static void txn_log_written(void *arg, int16_t err)
{
    txn_log_w_t *w = arg;
    txn_log_t *h = w->h;

    h->writes_out--;
    w->done(w->arg, err);
    free(w);
    if (h->closing)
        txn_log_free(h);
}

static void txn_log_write(void *ctx, int32_t p, const buf_t *key, const buf_t *value,
                          txn_write_done_fn *done, void *arg)
{
    txn_log_t *h = ctx;
    log_record_t rec = {0};
    log_batch_build_t opt;
    txn_log_w_t *w;
    buf_t batch;

    if (h->closing || !txn_log_leads(h, p)) {
        done(arg, KERR_NOT_LEADER_OR_FOLLOWER);
        return;
    }
    rec.timestamp = net_now_wall_ms();
    rec.key = key->p;
    rec.key_len = (int32_t)key->len;
    rec.value = value ? value->p : NULL;
    rec.value_len = value ? (int32_t)value->len : -1;
    buf_init(&batch);
    log_batch_build_init(&opt);
    if (log_batch_build(&batch, &opt, &rec, 1) < 0) {
        buf_free(&batch);
        done(arg, KERR_UNKNOWN_SERVER_ERROR);
        return;
    }
    w = xcalloc(1, sizeof(*w));
    w->h = h;
    w->done = done;
    w->arg = arg;
    h->writes_out++;
    txn_coord_append(h->reg, TXN_TOPIC, TXN_LOG_TOPIC_LEN, p, &batch, h->cfg.timeout_ms,
                     txn_log_written, w);
}

typedef struct txn_log_pid_s {
    ctl_pid_wait_t w; /* first */
    txn_pid_done_fn *done;
    void *arg;
} txn_log_pid_t;

static void txn_log_pid_got(ctl_pid_wait_t *w, int64_t pid, int16_t err)
{
    txn_log_pid_t *p = (txn_log_pid_t *)w;
    p->done(p->arg, pid, err);
    free(p);
}

static void txn_log_producer_id(void *ctx, txn_pid_done_fn *done, void *arg)
{
    txn_log_t *h = ctx;
    txn_log_pid_t *p = xcalloc(1, sizeof(*p));
    int64_t pid;

    p->w.cb = txn_log_pid_got;
    p->done = done;
    p->arg = arg;
    pid = ctl_producer_id(h->ctl, &p->w);
    if (pid >= 0)
        txn_log_pid_got(&p->w, pid, KERR_NONE);
}

static int32_t txn_log_coord_epoch(void *ctx, int32_t p)
{
    part_t *part = txn_log_part(ctx, p);
    return part ? part->leader_epoch : 0;
}

/* ---- replay and leadership ---- */

static void txn_log_record(void *ctx, int32_t part, const log_batch_hdr_t *bh,
                           const log_record_t *rec)
{
    (void)bh;
    txn_log_t *h = ctx;
    if (!rec->key || rec->key_len < 0 ||
        txn_load_record(h->coord, part, rec->key, (size_t)rec->key_len, rec->value,
                        rec->value_len) < 0)
        lg_warn("%s-%d: malformed record at offset %lld skipped", TXN_TOPIC, part,
                (long long)rec->offset);
}

static bool txn_log_next_part(txn_log_t *h)
{
    for (int32_t p = 0; p < h->nparts; p++) {
        if (!h->load_want[p])
            continue;
        h->load_want[p] = false;
        part_t *part = txn_log_part(h, p);
        if (!part) {
            txn_load_end(h->coord, p);
            continue;
        }
        h->load_part = h->load.part = p;
        coord_replay_begin(&h->load, part);
        return true;
    }
    h->load_part = -1;
    return false;
}

static void txn_log_load_step(net_loop_t *loop, void *data)
{
    txn_log_t *h = data;
    int64_t budget = TXN_LOG_SLICE;

    h->load_tid = 0;
    if (h->load_part < 0 && !txn_log_next_part(h))
        return;
    while (budget > 0 && h->load_part >= 0) {
        part_t *part = txn_log_part(h, h->load_part);
        int64_t n = part ? coord_replay_some(&h->load, part, budget) : -1;
        if (n >= 0) {
            budget -= n;
            continue;
        }
        txn_load_end(h->coord, h->load_part);
        if (!txn_log_next_part(h))
            return;
    }
    if (h->load_part >= 0)
        h->load_tid = net_timer_add(loop, 0, txn_log_load_step, h);
}

static void txn_log_kick_load(txn_log_t *h)
{
    if (!h->load_tid)
        h->load_tid = net_timer_add(h->loop, 0, txn_log_load_step, h);
}

void txn_log_follow(txn_coord_t *c)
{
    txn_log_t *h = c ? txn_log_of(c) : NULL;

    for (int32_t p = 0; h && h->cfg.img && p < h->nparts; p++) {
        bool led = txn_log_leads(h, p);
        if (led == h->led[p])
            continue;
        h->led[p] = led;
        if (led) {
            txn_load_begin(h->coord, p);
            if (h->load_part == p && txn_log_part(h, p))
                coord_replay_begin(&h->load, txn_log_part(h, p));
            else
                h->load_want[p] = true;
            txn_log_kick_load(h);
        } else {
            h->load_want[p] = false;
            if (h->load_part == p)
                h->load.next = h->load.end;
            txn_unload(h->coord, p);
        }
    }
}

/* ---- timers ---- */

static void txn_log_abort_tick(net_loop_t *loop, void *data)
{
    txn_log_t *h = data;
    txn_abort_timed_out(h->coord);
    h->abort_tid = net_timer_add(loop, h->cfg.abort_interval_ms, txn_log_abort_tick, h);
}

static void txn_log_remove_tick(net_loop_t *loop, void *data)
{
    txn_log_t *h = data;
    txn_expire_ids(h->coord);
    h->remove_tid = net_timer_add(loop, h->cfg.remove_interval_ms, txn_log_remove_tick, h);
}

static void txn_log_follow_tick(net_loop_t *loop, void *data)
{
    txn_log_t *h = data;
    txn_log_follow(h->coord);
    h->follow_tid = net_timer_add(loop, TXN_LOG_FOLLOW_MS, txn_log_follow_tick, h);
}

/* ---- open and close ---- */

void txn_log_topic_config(const topic_cfg_t *base, int64_t segment_bytes, int32_t min_isr,
                          topic_cfg_t *t)
{
    *t = *base;
    t->compacted = true;
    t->cleanup_delete = false;
    t->log.retention_ms = -1;
    t->log.retention_bytes = -1;
    if (segment_bytes > 0)
        t->log.segment_bytes = segment_bytes;
    if (min_isr > 0)
        t->min_insync_replicas = min_isr;
}

txn_coord_t *txn_log_open(net_loop_t *loop, part_reg_t *reg, ctl_t *ctl,
                          const txn_log_config_t *cfg)
{
    topic_t *t = part_topic_get(reg, TXN_TOPIC, TXN_LOG_TOPIC_LEN);
    int32_t nparts = t ? t->nparts : 0;
    txn_log_t *h;

    if (cfg->img) {
        const mi_topic_t *mt = meta_image_topic(cfg->img, TXN_TOPIC, TXN_LOG_TOPIC_LEN);
        nparts = mt ? mt->nparts : 0;
    }
    if (nparts <= 0)
        return NULL;
    h = xcalloc(1, sizeof(*h));
    txn_env_t env = {h, txn_log_now, txn_log_write, txn_log_producer_id, txn_log_markers,
                     txn_log_coord_epoch};
    txn_config_t tc = cfg->txn;
    h->loop = loop;
    h->reg = reg;
    h->ctl = ctl;
    h->cfg = *cfg;
    h->nparts = tc.num_partitions = nparts;
    h->coord = txn_coord_new(&tc, &env);
    h->led = xcalloc((size_t)nparts, sizeof(*h->led));
    h->load_want = xcalloc((size_t)nparts, sizeof(*h->load_want));
    h->load_part = -1;
    h->load.topic = TXN_TOPIC;
    h->load.ctx = h;
    h->load.record = txn_log_record;
    if (cfg->img) {
        snprintf(h->client_id, sizeof(h->client_id), "broker-%d-txn-marker-sender", cfg->node_id);
        h->peers = part_peers_new(reg, h->client_id, cfg->timeout_ms);
    }
    for (int32_t p = 0; p < nparts; p++) {
        h->led[p] = h->load_want[p] = txn_log_leads(h, p);
        if (h->led[p])
            txn_load_begin(h->coord, p);
    }
    txn_log_kick_load(h);
    h->abort_tid = net_timer_add(loop, cfg->abort_interval_ms, txn_log_abort_tick, h);
    h->remove_tid = net_timer_add(loop, cfg->remove_interval_ms, txn_log_remove_tick, h);
    if (cfg->img)
        h->follow_tid = net_timer_add(loop, TXN_LOG_FOLLOW_MS, txn_log_follow_tick, h);
    return h->coord;
}

void txn_log_free(txn_log_t *h)
{
    if (h->in_close || h->writes_out || h->rounds)
        return;
    part_peers_free(h->peers);
    txn_coord_free(h->coord);
    free(h->led);
    free(h->load_want);
    free(h);
}

void txn_log_close(txn_coord_t *c)
{
    txn_log_t *h = c ? txn_log_of(c) : NULL;

    if (!h)
        return;
    net_timer_id_t ids[] = {h->load_tid, h->abort_tid, h->remove_tid, h->follow_tid};
    for (size_t i = 0; i < sizeof(ids) / sizeof(ids[0]); i++)
        if (ids[i])
            net_timer_cancel(h->loop, ids[i]);
    txn_log_mk_close(h);
    h->closing = true;
    /* the answers of markers out to other brokers come back (failed)
     * while their connections go */
    h->in_close = true;
    part_peers_free(h->peers);
    h->peers = NULL;
    h->in_close = false;
    txn_log_free(h);
}
