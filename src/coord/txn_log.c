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
#include "coord/txn_log.h"

#include <stdlib.h>
#include <string.h>

#include "cluster/ctl.h"
#include "cluster/meta_image.h"
#include "coord/coord_replay.h"
#include "log/log_batch.h"
#include "partition/part_append.h"
#include "util/logging.h"
#include "util/mem.h"

#define TXN_LOG_TOPIC_LEN (sizeof(TXN_TOPIC) - 1)
#define TXN_LOG_SLICE (4 << 20)
#define TXN_LOG_FOLLOW_MS 1000
#define TXN_LOG_RETRY_MS 100

typedef struct txn_log_s {
    net_loop_t *loop;
    part_reg_t *reg;
    ctl_t *ctl;
    txn_log_config_t cfg;
    txn_coord_t *coord;
    int32_t nparts;
    bool *led;
    bool *load_want;
    int32_t load_part; /* -1: none */
    coord_replay_t load;
    net_timer_id_t load_tid, abort_tid, remove_tid, follow_tid;
    /* Closing: writes and markers still out when close came keep the
     * host (and the coordinator they answer) until the last ends. */
    bool closing;
    int writes_out;
    struct txn_log_mk_s *rounds; /* marker rounds under way */
} txn_log_t;

static txn_log_t *txn_log_of(txn_coord_t *c)
{
    return txn_coord_env(c)->ctx;
}

static void txn_log_free(txn_log_t *h);

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

static bool txn_log_leads(const txn_log_t *h, int32_t p)
{
    if (!h->cfg.img)
        return true;
    const mi_topic_t *mt = meta_image_topic(h->cfg.img, TXN_TOPIC, TXN_LOG_TOPIC_LEN);
    return mt && p >= 0 && p < mt->nparts && mt->parts[p].present &&
           mt->parts[p].leader == h->cfg.node_id;
}

typedef struct txn_log_w_s {
    part_append_t op; /* first */
    part_append_ent_t ent;
    buf_t batch;
    txn_write_done_fn *done;
    void *arg;
} txn_log_w_t;

static void txn_log_written(part_append_t *op)
{
    txn_log_w_t *w = (txn_log_w_t *)op;
    txn_log_t *h = w->op.udata;

    h->writes_out--;
    w->done(w->arg, w->ent.err);
    buf_free(&w->batch);
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
    int64_t now = net_now_wall_ms();

    if (h->closing || !txn_log_leads(h, p)) {
        done(arg, KERR_NOT_LEADER_OR_FOLLOWER);
        return;
    }
    w = xcalloc(1, sizeof(*w));
    rec.timestamp = now;
    rec.key = key->p;
    rec.key_len = (int32_t)key->len;
    rec.value = value ? value->p : NULL;
    rec.value_len = value ? (int32_t)value->len : -1;
    buf_init(&w->batch);
    log_batch_build_init(&opt);
    if (log_batch_build(&w->batch, &opt, &rec, 1) < 0) {
        buf_free(&w->batch);
        free(w);
        done(arg, KERR_UNKNOWN_SERVER_ERROR);
        return;
    }
    w->done = done;
    w->arg = arg;
    w->op.reg = h->reg;
    w->op.acks = -1;
    w->op.origin = PART_ORIGIN_COORDINATOR;
    w->op.produce_version = 12;
    w->op.now_ms = now;
    w->op.timeout_ms = h->cfg.timeout_ms;
    w->op.ents = &w->ent;
    w->op.nents = 1;
    w->op.done = txn_log_written;
    w->op.udata = h;
    w->ent.topic = TXN_TOPIC;
    w->ent.topic_len = TXN_LOG_TOPIC_LEN;
    w->ent.partition = p;
    w->ent.records = w->batch.p;
    w->ent.len = (int32_t)w->batch.len;
    h->writes_out++;
    part_append(&w->op);
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

/* ---- markers ---- */

/* The markers of one transaction's end under way: each partition's state
 * (0 to write, 1 out, 2 done). */
typedef struct txn_log_mk_s {
    txn_log_t *h;
    txn_markers_t *m;
    uint8_t *st;
    int out;
    net_timer_id_t retry;
    struct txn_log_mk_s *next;
} txn_log_mk_t;

typedef struct txn_log_mk1_s {
    txn_log_mk_t *k;
    int i;
} txn_log_mk1_t;

static void txn_log_mk_send(txn_log_mk_t *k);

static bool txn_log_retriable(int16_t err)
{
    switch (err) {
    case KERR_UNKNOWN_TOPIC_OR_PARTITION:
    case KERR_NOT_LEADER_OR_FOLLOWER:
    case KERR_NOT_ENOUGH_REPLICAS:
    case KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case KERR_REQUEST_TIMED_OUT:
    case KERR_KAFKA_STORAGE_ERROR:
        return true;
    default:
        return false;
    }
}

static void txn_log_mk_unlink(txn_log_mk_t *k)
{
    for (txn_log_mk_t **pp = &k->h->rounds; *pp; pp = &(*pp)->next)
        if (*pp == k) {
            *pp = k->next;
            return;
        }
}

/* The round is over: answered, or (closing) dropped. */
static void txn_log_mk_end(txn_log_mk_t *k, bool answer)
{
    txn_log_t *h = k->h;
    txn_markers_t *m = k->m;

    txn_log_mk_unlink(k);
    free(k->st);
    free(k);
    if (answer)
        txn_markers_done(m);
    else
        txn_markers_free(m);
    if (h->closing)
        txn_log_free(h);
}

static void txn_log_mk_retry(net_loop_t *loop, void *data)
{
    txn_log_mk_t *k = data;
    (void)loop;
    k->retry = 0;
    txn_log_mk_send(k);
}

/* Every append of the round answered: again for those that may succeed
 * later, or the end. */
static void txn_log_mk_round(txn_log_mk_t *k)
{
    if (k->h->closing) {
        txn_log_mk_end(k, false);
        return;
    }
    for (int i = 0; i < k->m->n; i++)
        if (k->st[i] == 0) {
            k->retry = net_timer_add(k->h->loop, TXN_LOG_RETRY_MS, txn_log_mk_retry, k);
            return;
        }
    txn_log_mk_end(k, true);
}

static void txn_log_mk_done(void *arg, int16_t err)
{
    txn_log_mk1_t *one = arg;
    txn_log_mk_t *k = one->k;
    txn_log_t *h = k->h;
    const txn_tp_t *tp = &k->m->tps[one->i];
    topic_t *t = part_topic_get(h->reg, tp->topic, strlen(tp->topic));

    k->out--;
    if (err && txn_log_retriable(err) && t && tp->partition < t->nparts) {
        k->st[one->i] = 0;
    } else {
        /* a deleted topic's partition leaves the transaction */
        if (err && err != KERR_UNKNOWN_TOPIC_OR_PARTITION)
            lg_warn("transaction marker for producer %lld on %s-%d: %s",
                    (long long)k->m->producer_id, tp->topic, tp->partition, kerr_name(err));
        k->st[one->i] = 2;
        if (!err && h->cfg.on_marker && !h->closing)
            h->cfg.on_marker(h->cfg.marker_ctx, tp->topic, tp->partition, k->m->producer_id,
                             k->m->commit);
    }
    free(one);
    if (k->out == 0)
        txn_log_mk_round(k);
}

static void txn_log_mk_send(txn_log_mk_t *k)
{
    txn_markers_t *m = k->m;

    k->out++; /* held over the loop: answers in the call do not end the round */
    for (int i = 0; i < m->n; i++) {
        if (k->st[i] != 0)
            continue;
        txn_log_mk1_t *one = xcalloc(1, sizeof(*one));
        one->k = k;
        one->i = i;
        k->st[i] = 1;
        k->out++;
        txn_marker_append(k->h->reg, m->tps[i].topic, strlen(m->tps[i].topic),
                          m->tps[i].partition, m->producer_id, m->epoch, m->commit,
                          m->coordinator_epoch, k->h->cfg.timeout_ms, txn_log_mk_done, one);
    }
    if (--k->out == 0)
        txn_log_mk_round(k);
}

static void txn_log_markers(void *ctx, txn_markers_t *m)
{
    txn_log_t *h = ctx;
    txn_log_mk_t *k;

    if (h->closing) {
        txn_markers_free(m);
        return;
    }
    k = xcalloc(1, sizeof(*k));
    k->h = h;
    k->m = m;
    k->st = xcalloc((size_t)m->n + 1, 1);
    k->next = h->rounds;
    h->rounds = k;
    txn_log_mk_send(k);
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

/* Frees the host once nothing is out any more. */
static void txn_log_free(txn_log_t *h)
{
    if (h->writes_out || h->rounds)
        return;
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
    /* rounds waiting to retry end now; those with appends out when they
     * are answered */
    for (txn_log_mk_t *k = h->rounds, *next; k; k = next) {
        next = k->next;
        if (k->retry && !k->out) {
            net_timer_cancel(h->loop, k->retry);
            k->retry = 0;
            txn_log_mk_end(k, false);
        }
    }
    h->closing = true;
    txn_log_free(h);
}
