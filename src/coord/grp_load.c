/* Replay of __consumer_offsets into the coordinator: offset commits and
 * group records (and their tombstones) in log order, then, per loaded
 * partition, the session timers of the members found, as Kafka does after
 * loading a partition. */
#include <stdlib.h>
#include <string.h>

#include "coord/grp_int.h"
#include "coord/grp_rec.h"
#include "util/cstr.h"
#include "util/arena.h"
#include "util/logging.h"
#include "util/mem.h"

/* ---- loading ---- */

void grp_load_begin(grp_coord_t *c, int32_t part)
{
    if (part < 0 || part >= c->cfg.num_partitions || c->loading[part])
        return;
    c->loading[part] = true;
    c->nloading++;
}

static int grp_load_offset(grp_coord_t *c, const grp_rec_key_t *k, const uint8_t *value,
                           int32_t value_len)
{
    char *id = cstr_dup(k->group.p, (size_t)k->group.len);
    grp_t *g = grp_get(c, id);
    grp_rec_offset_t v;
    int rc = 0;

    if (!value || value_len < 0) {
        const grp_offset_t *o =
            g ? grp_offset_get(g, k->topic.p, (size_t)k->topic.len, k->partition) : NULL;
        if (o)
            grp_offset_del(g, o);
    } else if (grp_rec_offset_decode(value, (size_t)value_len, &v) < 0) {
        rc = -1;
    } else {
        if (!g)
            g = grp_create(c, id);
        grp_offset_put(g, k->topic.p, (size_t)k->topic.len, k->partition, v.offset,
                       v.leader_epoch, v.metadata.p, v.metadata.len < 0 ? 0 : (size_t)v.metadata.len,
                       v.commit_ts, v.expire_ts);
    }
    free(id);
    return rc;
}

/* Drops the group's membership, as a group tombstone does; the group
 * stays while it has offsets (Kafka reloads those as a simple group). */
static void grp_load_reset(grp_coord_t *c, grp_t *g)
{
    while (g->members.next != &g->members)
        grp_member_remove(c, g->members.next);
    free(g->protocol_type);
    free(g->protocol_name);
    g->protocol_type = g->protocol_name = NULL;
    g->generation = 0;
    g->state = GRP_EMPTY;
}

static void grp_load_member(grp_t *g, const grp_rec_member_t *rm, const char *protocol)
{
    char *id = cstr_dup(rm->member_id.p, (size_t)rm->member_id.len);
    char *inst = rm->instance_id.len >= 0 ? cstr_dup(rm->instance_id.p, (size_t)rm->instance_id.len)
                                          : NULL;
    char *cid = cstr_dup(rm->client_id.p, (size_t)rm->client_id.len);
    char *host = cstr_dup(rm->client_host.p, (size_t)rm->client_host.len);
    grp_protocol_t proto = {(char *)(protocol ? protocol : ""), (uint8_t *)rm->subscription.p,
                            rm->subscription.len};
    grp_join_req_t req = {
        .instance_id = inst, .client_id = cid, .client_host = host,
        .session_timeout = rm->session_timeout,
        .rebalance_timeout = rm->rebalance_timeout < 0 ? rm->session_timeout : rm->rebalance_timeout,
        .protocol_type = g->protocol_type, .nprotocols = protocol ? 1 : 0, .protocols = &proto,
    };
    grp_member_t *m = grp_member_get(g, id) ? NULL : grp_member_new(g, &req, id);
    if (m && rm->assignment.len > 0) {
        free(m->assignment);
        m->assignment = grp_memdup(rm->assignment.p, rm->assignment.len);
        m->assignment_len = rm->assignment.len;
    }
    free(id);
    free(inst);
    free(cid);
    free(host);
}

static int grp_load_group(grp_coord_t *c, const grp_rec_key_t *k, const uint8_t *value,
                          int32_t value_len)
{
    char *id = cstr_dup(k->group.p, (size_t)k->group.len);
    grp_t *g = grp_get(c, id);
    grp_rec_group_t rg;
    arena_t arena;
    int rc = 0;

    arena_init(&arena, 4096);
    if (!value || value_len < 0) {
        if (g) {
            grp_meta_rec_set(g, NULL, -1);
            grp_load_reset(c, g);
            if (!g->offsets.count)
                grp_destroy(c, g);
        }
    } else if (grp_rec_group_decode(value, (size_t)value_len, &rg, &arena) < 0) {
        rc = -1;
    } else {
        if (!g)
            g = grp_create(c, id);
        grp_load_reset(c, g);
        if (rg.protocol_type.len > 0)
            g->protocol_type = cstr_dup(rg.protocol_type.p, (size_t)rg.protocol_type.len);
        if (rg.protocol.len >= 0)
            g->protocol_name = cstr_dup(rg.protocol.p, (size_t)rg.protocol.len);
        g->generation = rg.generation;
        g->state_ts = rg.state_ts;
        for (int32_t i = 0; i < rg.nmembers; i++)
            grp_load_member(g, &rg.members[i], g->protocol_name);
        if (rg.leader.len >= 0) {
            char *lid = cstr_dup(rg.leader.p, (size_t)rg.leader.len);
            grp_member_t *l = grp_member_get(g, lid);
            if (l)
                g->leader = l;
            free(lid);
        }
        g->state = g->nmembers ? GRP_STABLE : GRP_EMPTY;
        grp_meta_rec_set(g, value, value_len);
    }
    arena_destroy(&arena);
    free(id);
    return rc;
}

int grp_load_record(grp_coord_t *c, int32_t part, const uint8_t *key, int32_t key_len,
                    const uint8_t *value, int32_t value_len)
{
    grp_rec_key_t k;
    (void)part;
    if (!key || key_len < 0 || grp_rec_key_decode(key, (size_t)key_len, &k) < 0)
        return -1;
    switch (k.version) {
    case GRP_REC_KEY_OFFSET_V0:
    case GRP_REC_KEY_OFFSET:
        return grp_load_offset(c, &k, value, value_len);
    case GRP_REC_KEY_GROUP:
        return grp_load_group(c, &k, value, value_len);
    default:
        return 0; /* a record of the KIP-848 or share-group protocols */
    }
}

void grp_load_end(grp_coord_t *c, int32_t part)
{
    size_t pos = 0;
    void *v;
    int ngroups = 0;

    if (part < 0 || part >= c->cfg.num_partitions || !c->loading[part])
        return;
    c->loading[part] = false;
    c->nloading--;
    while (smap_next(&c->groups, &pos, NULL, NULL, &v)) {
        grp_t *g = v;
        if (g->part != part)
            continue;
        ngroups++;
        grp_subscribed_update(g);
        for (grp_member_t *m = g->members.next; m != &g->members; m = m->next)
            grp_hb_schedule(c, m, m->session_timeout);
        if (g->nmembers > c->cfg.max_size)
            grp_prepare_rebalance(c, g, "freshly-loaded group is over capacity");
    }
    if (ngroups)
        lg_info("loaded %d group(s) from __consumer_offsets-%d", ngroups, part);
}

/* Answers the member's parked requests as Kafka's unloading does. */
static void grp_unload_member(grp_coord_t *c, grp_member_t *m)
{
    grp_join_result_t jr = {.error = KERR_NOT_COORDINATOR, .generation = -1, .member_id = m->id,
                            .leader = ""};
    grp_sync_result_t sr = {.error = KERR_NOT_COORDINATOR};
    if (m->join_w)
        grp_member_join_done(c, m, &jr);
    if (m->sync_w)
        grp_member_sync_done(c, m, &sr);
}

void grp_unload(grp_coord_t *c, int32_t part)
{
    size_t pos = 0, n = 0, cap = 0;
    grp_t **gone = NULL;
    void *v;

    if (part < 0 || part >= c->cfg.num_partitions)
        return;
    if (c->loading[part]) {
        c->loading[part] = false;
        c->nloading--;
    }
    while (smap_next(&c->groups, &pos, NULL, NULL, &v)) {
        if (((grp_t *)v)->part != part)
            continue;
        if (n == cap) {
            cap = cap ? cap * 2 : 16;
            gone = xrealloc(gone, cap * sizeof(*gone));
        }
        gone[n++] = v;
    }
    for (size_t i = 0; i < n; i++) {
        for (grp_member_t *m = gone[i]->members.next; m != &gone[i]->members; m = m->next)
            grp_unload_member(c, m);
        grp_destroy(c, gone[i]);
    }
    free(gone);
    if (n)
        lg_info("unloaded %zu group(s) of __consumer_offsets-%d", n, part);
}
