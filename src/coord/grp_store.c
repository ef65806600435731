/* The records of the coordinator's state changes (grp_rec.h gives their
 * layouts): building them, writing them through the host, remembering
 * each group's last group record, and the snapshot of a partition's live
 * state for rewrites. */
#include <stdlib.h>
#include <string.h>

#include "coord/grp_int.h"
#include "coord/grp_rec.h"
#include "util/logging.h"
#include "util/mem.h"

/* ---- records ---- */

void grp_recs_init(grp_recs_t *recs)
{
    memset(recs, 0, sizeof(*recs));
    recs->producer_id = -1;
    recs->producer_epoch = -1;
    buf_init(&recs->data);
}

void grp_recs_free(grp_recs_t *recs)
{
    buf_free(&recs->data);
    free(recs->v);
    memset(recs, 0, sizeof(*recs));
}

static struct grp_recs_ent_s *grp_recs_push(grp_recs_t *recs)
{
    if (recs->n == recs->cap) {
        recs->cap = recs->cap ? recs->cap * 2 : 8;
        recs->v = xrealloc(recs->v, (size_t)recs->cap * sizeof(*recs->v));
    }
    return &recs->v[recs->n++];
}

/* Encoders write straight into recs->data; these bracket one record. */
static size_t grp_recs_mark(grp_recs_t *recs)
{
    return recs->data.len;
}

void grp_recs_done(grp_recs_t *recs, size_t key_off, size_t val_off, int tombstone)
{
    struct grp_recs_ent_s *e = grp_recs_push(recs);
    e->key_off = key_off;
    e->key_len = (int32_t)(val_off - key_off);
    e->val_off = val_off;
    e->val_len = tombstone ? -1 : (int32_t)(recs->data.len - val_off);
}

static proto_str_t grp_pstr(const char *s)
{
    proto_str_t p = {s, s ? (int32_t)strlen(s) : -1};
    return p;
}

void grp_recs_group(grp_recs_t *recs, grp_t *g, bool with_assignment, int64_t now_wall)
{
    grp_rec_group_t rg;
    grp_rec_member_t *rm = xcalloc((size_t)g->nmembers + 1, sizeof(*rm));
    int i = 0;

    rg.protocol_type = grp_pstr(g->protocol_type ? g->protocol_type : "");
    rg.generation = g->generation;
    rg.protocol = grp_pstr(g->protocol_name);
    rg.leader = grp_pstr(g->leader ? g->leader->id : NULL);
    rg.state_ts = now_wall;
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next, i++) {
        const grp_protocol_t *p = grp_member_protocol(m, g->protocol_name);
        rm[i].member_id = grp_pstr(m->id);
        rm[i].instance_id = grp_pstr(m->instance_id);
        rm[i].client_id = grp_pstr(m->client_id);
        rm[i].client_host = grp_pstr(m->client_host);
        rm[i].rebalance_timeout = m->rebalance_timeout;
        rm[i].session_timeout = m->session_timeout;
        rm[i].subscription.p = p ? p->meta : NULL;
        rm[i].subscription.len = p ? p->meta_len : 0;
        rm[i].assignment.p = with_assignment ? m->assignment : NULL;
        rm[i].assignment.len = with_assignment ? m->assignment_len : 0;
    }
    rg.nmembers = g->nmembers;
    rg.members = rm;
    size_t k = grp_recs_mark(recs);
    grp_rec_group_key(&recs->data, grp_pstr(g->id));
    size_t v = grp_recs_mark(recs);
    grp_rec_group_value(&recs->data, &rg);
    grp_recs_done(recs, k, v, 0);
    free(rm);
}

void grp_recs_group_tombstone(grp_recs_t *recs, const grp_t *g)
{
    size_t k = grp_recs_mark(recs);
    grp_rec_group_key(&recs->data, grp_pstr(g->id));
    grp_recs_done(recs, k, grp_recs_mark(recs), 1);
}

void grp_recs_offset_tombstone(grp_recs_t *recs, const grp_t *g, const grp_offset_t *o)
{
    size_t k = grp_recs_mark(recs);
    grp_rec_offset_key(&recs->data, grp_pstr(g->id), grp_pstr(o->topic), o->partition);
    grp_recs_done(recs, k, grp_recs_mark(recs), 1);
}

/* Kafka turns log append errors into errors the clients act on. */
int16_t grp_write_error(int16_t err, int for_offsets)
{
    switch (err) {
    case KERR_NONE:
        return err;
    case KERR_UNKNOWN_TOPIC_OR_PARTITION:
    case KERR_NOT_ENOUGH_REPLICAS:
    case KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
        return KERR_COORDINATOR_NOT_AVAILABLE;
    case KERR_NOT_LEADER_OR_FOLLOWER:
    case KERR_KAFKA_STORAGE_ERROR:
        return KERR_NOT_COORDINATOR;
    case KERR_REQUEST_TIMED_OUT:
        return for_offsets ? err : KERR_REBALANCE_IN_PROGRESS;
    case KERR_MESSAGE_TOO_LARGE:
    case KERR_RECORD_LIST_TOO_LARGE:
    case KERR_INVALID_FETCH_SIZE:
        return for_offsets ? KERR_INVALID_COMMIT_OFFSET_SIZE : KERR_UNKNOWN_SERVER_ERROR;
    default:
        return err;
    }
}

void grp_meta_rec_set(grp_t *g, const uint8_t *v, int32_t len)
{
    free(g->meta_rec);
    g->meta_rec = NULL;
    g->meta_rec_len = 0;
    if (v && len >= 0) {
        g->meta_rec = grp_memdup(v, len);
        g->meta_rec_len = len;
    }
}

int16_t grp_store(grp_coord_t *c, grp_t *g, const grp_recs_t *recs, int for_offsets)
{
    int16_t err = c->env.store(c->env.ctx, g->part, recs);
    if (err) {
        lg_warn("group %s: writing %d record(s) to __consumer_offsets-%d failed: %s",
                g->id, recs->n, g->part, kerr_name(err));
        return grp_write_error(err, for_offsets);
    }
    /* Keep the group record as written, for partition rewrites. */
    for (int i = 0; i < recs->n; i++) {
        const struct grp_recs_ent_s *e = &recs->v[i];
        const uint8_t *k = recs->data.p + e->key_off;
        if (e->key_len >= 2 && k[0] == 0 && k[1] == GRP_REC_KEY_GROUP)
            grp_meta_rec_set(g, e->val_len >= 0 ? recs->data.p + e->val_off : NULL, e->val_len);
    }
    return KERR_NONE;
}

static void grp_recs_offset(grp_recs_t *recs, const grp_t *g, const grp_offset_t *o)
{
    proto_str_t md = {o->metadata, o->metadata_len};
    grp_rec_offset_t v = {o->offset, o->leader_epoch, md, o->commit_ts, o->expire_ts};
    size_t k = grp_recs_mark(recs);
    grp_rec_offset_key(&recs->data, grp_pstr(g->id), grp_pstr(o->topic), o->partition);
    size_t vo = grp_recs_mark(recs);
    grp_rec_offset_value(&recs->data, &v);
    grp_recs_done(recs, k, vo, 0);
}

int grp_part_snapshot(grp_coord_t *c, int32_t part, grp_recs_t *recs)
{
    size_t pos = 0;
    void *v;
    int n = recs->n;

    /* A rewrite would drop the records of undecided transactions, whose
     * markers come later: it waits until there are none. */
    if (c->txn_pending[part] > 0)
        return -1;
    while (smap_next(&c->groups, &pos, NULL, NULL, &v)) {
        grp_t *g = v;
        size_t opos = 0;
        const grp_offset_t *o;
        if (g->part != part)
            continue;
        if (g->meta_rec) {
            size_t k = grp_recs_mark(recs);
            grp_rec_group_key(&recs->data, grp_pstr(g->id));
            size_t vo = grp_recs_mark(recs);
            buf_put(&recs->data, g->meta_rec, (size_t)g->meta_rec_len);
            grp_recs_done(recs, k, vo, 0);
        }
        while ((o = grp_offset_next(g, &opos)))
            grp_recs_offset(recs, g, o);
    }
    return recs->n - n;
}
