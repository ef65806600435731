/* The transaction coordinator's entries and partitions (txn.h): the map
 * of transactional ids, which partitions are served, and the replay of
 * __transaction_state that fills them. */
#include "coord/txn_int.h"

#include <stdlib.h>
#include <string.h>

#include "coord/grp_rec.h"
#include "coord/txn_rec.h"
#include "util/mem.h"

static const char *const txn_names[] = {
    "Empty",          "Ongoing",       "PrepareCommit", "PrepareAbort",
    "CompleteCommit", "CompleteAbort", "Dead",          "PrepareEpochFence",
};

const char *txn_state_name(txn_state_t s)
{
    return s >= TXN_EMPTY && s <= TXN_PREPARE_EPOCH_FENCE ? txn_names[s] : NULL;
}

txn_state_t txn_state_by_name(const char *name, size_t len)
{
    for (int i = 0; i <= TXN_PREPARE_EPOCH_FENCE; i++)
        if (strlen(txn_names[i]) == len && !memcmp(txn_names[i], name, len))
            return (txn_state_t)i;
    return TXN_NONE;
}

void txn_config_defaults(txn_config_t *cfg)
{
    cfg->num_partitions = 50;
    cfg->max_timeout_ms = 900000;
    cfg->id_expiration_ms = 604800000LL;
}

char *txn_strdup(const char *p, size_t len)
{
    char *s = xmalloc(len + 1);
    memcpy(s, p, len);
    s[len] = 0;
    return s;
}

txn_coord_t *txn_coord_new(const txn_config_t *cfg, const txn_env_t *env)
{
    txn_coord_t *c = xcalloc(1, sizeof(*c));

    c->cfg = *cfg;
    c->env = *env;
    smap_init(&c->txns);
    c->pstate = xcalloc((size_t)cfg->num_partitions, 1);
    c->pgen = xcalloc((size_t)cfg->num_partitions, sizeof(*c->pgen));
    return c;
}

void txn_tps_free(txn_tp_t *tps, int n)
{
    for (int i = 0; i < n; i++)
        free(tps[i].topic);
    free(tps);
}

txn_tp_t *txn_tps_copy(const txn_tp_t *tps, int n)
{
    txn_tp_t *v = n ? xcalloc((size_t)n, sizeof(*v)) : NULL;
    for (int i = 0; i < n; i++) {
        v[i].topic = xstrdup(tps[i].topic);
        v[i].partition = tps[i].partition;
    }
    return v;
}

static void txn_free(txn_t *t)
{
    txn_tps_free(t->tps, t->ntps);
    free(t->id);
    free(t);
}

void txn_coord_free(txn_coord_t *c)
{
    size_t pos = 0, klen;
    const void *key;
    void *val;

    if (!c)
        return;
    while (smap_next(&c->txns, &pos, &key, &klen, &val))
        txn_free(val);
    smap_free(&c->txns);
    free(c->pstate);
    free(c->pgen);
    free(c);
}

const txn_env_t *txn_coord_env(const txn_coord_t *c)
{
    return &c->env;
}

int32_t txn_partition_for(const txn_coord_t *c, const char *id, size_t len)
{
    /* Kafka's partitionFor: the same hash as a group id's */
    return grp_rec_partition_for(id, len, c->cfg.num_partitions);
}

txn_t *txn_get(const txn_coord_t *c, const char *id, size_t id_len)
{
    return smap_get(&c->txns, id, id_len);
}

txn_t *txn_add(txn_coord_t *c, const char *id, size_t id_len, int32_t timeout_ms)
{
    txn_t *t = xcalloc(1, sizeof(*t));

    t->id = txn_strdup(id, id_len);
    t->id_len = id_len;
    t->part = txn_partition_for(c, id, id_len);
    t->producer_id = t->prev_producer_id = t->next_producer_id = -1;
    t->epoch = t->last_epoch = -1;
    t->timeout_ms = timeout_ms;
    t->state = TXN_EMPTY;
    t->start_ms = -1;
    t->update_ms = c->env.now_ms(c->env.ctx);
    t->pending = TXN_NONE;
    smap_put(&c->txns, t->id, id_len, t);
    return t;
}

void txn_remove(txn_coord_t *c, txn_t *t)
{
    smap_del(&c->txns, t->id, t->id_len);
    txn_free(t);
}

int16_t txn_part_state(const txn_coord_t *c, int32_t part)
{
    if (part < 0 || part >= c->cfg.num_partitions)
        return KERR_NOT_COORDINATOR;
    switch (c->pstate[part]) {
    case TXN_PART_LOADED:
        return KERR_NONE;
    case TXN_PART_LOADING:
        return KERR_COORDINATOR_LOAD_IN_PROGRESS;
    default:
        return KERR_NOT_COORDINATOR;
    }
}

int16_t txn_loading(const txn_coord_t *c)
{
    for (int32_t p = 0; p < c->cfg.num_partitions; p++)
        if (c->pstate[p] == TXN_PART_LOADING)
            return KERR_COORDINATOR_LOAD_IN_PROGRESS;
    return KERR_NONE;
}

int16_t txn_find(const txn_coord_t *c, const char *id, size_t id_len, txn_t **t)
{
    if (!id_len) { /* Kafka's answer to an empty transactional id */
        *t = NULL;
        return KERR_INVALID_REQUEST;
    }
    int16_t err = txn_part_state(c, txn_partition_for(c, id, id_len));

    *t = err ? NULL : txn_get(c, id, id_len);
    return err;
}

const txn_t *txn_lookup(const txn_coord_t *c, const char *id, size_t id_len, int16_t *err)
{
    txn_t *t;
    *err = txn_find(c, id, id_len, &t);
    return t && t->state != TXN_DEAD ? t : NULL;
}

bool txn_has_tp(const txn_t *t, const char *topic, int32_t partition)
{
    for (int i = 0; i < t->ntps; i++)
        if (t->tps[i].partition == partition && !strcmp(t->tps[i].topic, topic))
            return true;
    return false;
}

void txn_each(const txn_coord_t *c, txn_each_fn *fn, void *arg)
{
    size_t pos = 0, klen;
    const void *key;
    void *val;

    while (smap_next(&c->txns, &pos, &key, &klen, &val)) {
        const txn_t *t = val;
        if (t->state != TXN_DEAD && c->pstate[t->part] == TXN_PART_LOADED)
            fn(arg, t);
    }
}

/* ---- loading ---- */

int txn_select(const txn_coord_t *c, txn_want_fn *want, const void *arg, txn_t ***out)
{
    size_t pos = 0, klen;
    const void *key;
    void *val;
    txn_t **v = NULL;
    int n = 0;

    while (smap_next(&c->txns, &pos, &key, &klen, &val))
        if (want(c, val, arg)) {
            v = xrealloc(v, sizeof(*v) * (size_t)(n + 1));
            v[n++] = val;
        }
    *out = v;
    return n;
}

static bool txn_in_part(const txn_coord_t *c, const txn_t *t, const void *arg)
{
    (void)c;
    return t->part == *(const int32_t *)arg;
}

/* Kafka resends the markers of transactions a coordinator left half way;
 * an Ongoing one waits for its timeout. */
static bool txn_half_ended(const txn_coord_t *c, const txn_t *t, const void *arg)
{
    return txn_in_part(c, t, arg) &&
           (t->state == TXN_PREPARE_COMMIT || t->state == TXN_PREPARE_ABORT);
}

/* Drops every entry of part (its pending writes' answers find them gone). */
static void txn_drop_part(txn_coord_t *c, int32_t part)
{
    txn_t **dead;
    int n = txn_select(c, txn_in_part, &part, &dead);

    for (int i = 0; i < n; i++)
        txn_remove(c, dead[i]);
    free(dead);
}

void txn_load_begin(txn_coord_t *c, int32_t part)
{
    txn_drop_part(c, part);
    c->pstate[part] = TXN_PART_LOADING;
    c->pgen[part]++;
}

int txn_load_record(txn_coord_t *c, int32_t part, const uint8_t *key, size_t key_len,
                    const uint8_t *value, int32_t value_len)
{
    txn_transit_t to;
    size_t id_len;
    char *id;
    txn_t *t;

    if (txn_rec_key_decode(key, key_len, &id, &id_len) < 0)
        return -1;
    t = txn_get(c, id, id_len);
    if (!value || value_len < 0) {
        if (t)
            txn_remove(c, t);
        free(id);
        return 0;
    }
    if (txn_rec_value_decode(value, (size_t)value_len, &to) < 0) {
        free(id);
        return -1;
    }
    if (!t)
        t = txn_add(c, id, id_len, to.timeout_ms);
    t->part = part;
    txn_apply(t, &to);
    free(id);
    return 0;
}

void txn_load_end(txn_coord_t *c, int32_t part)
{
    txn_t **todo;
    int n;

    c->pstate[part] = TXN_PART_LOADED;
    n = txn_select(c, txn_half_ended, &part, &todo);
    for (int i = 0; i < n; i++)
        txn_send_markers(c, todo[i]);
    free(todo);
}

void txn_unload(txn_coord_t *c, int32_t part)
{
    txn_drop_part(c, part);
    c->pstate[part] = TXN_PART_UNLOADED;
    c->pgen[part]++;
}
