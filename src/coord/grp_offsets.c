/* Committed offsets (OffsetCommit, OffsetFetch, OffsetDelete), their
 * expiry (offsets.retention.minutes), and the admin operations on whole
 * groups (DescribeGroups, DeleteGroups). */
#include <stdlib.h>
#include <string.h>

#include "coord/grp_int.h"
#include "coord/grp_rec.h"
#include "util/logging.h"
#include "util/mem.h"

/* ---- OffsetCommit ---- */

/* Kafka's ClassicGroup.validateOffsetCommit (txn: isTransactional). */
static int16_t grp_commit_validate(grp_t *g, const grp_commit_req_t *req, bool txn)
{
    const char *mid = req->member_id ? req->member_id : "";
    if (g->state == GRP_DEAD)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    /* Admin clients and consumers without group management commit with
     * generation -1, into an empty group only. */
    if (req->generation < 0 && g->state == GRP_EMPTY)
        return KERR_NONE;
    if (req->generation >= 0 || *mid || req->instance_id) {
        int16_t err = grp_validate_member(g, mid, req->instance_id);
        if (err)
            return err;
        if (req->generation != g->generation)
            return KERR_ILLEGAL_GENERATION;
    } else if (!txn && g->state != GRP_EMPTY) {
        /* older TxnOffsetCommits name no member: not refused */
        return KERR_UNKNOWN_MEMBER_ID;
    }
    /* The member knows the generation but not the assignment yet. */
    if (!txn && g->state == GRP_COMPLETING_REBALANCE)
        return KERR_REBALANCE_IN_PROGRESS;
    return KERR_NONE;
}

int16_t grp_commit_group(grp_coord_t *c, grp_commit_req_t *req, bool txn, grp_t **out)
{
    int16_t err = grp_validate_id(c, req->group_id, true);
    grp_t *g;
    if (err)
        return err;
    g = grp_get(c, req->group_id);
    if (!g) {
        /* A group that does not exist takes commits only from outside
         * group management; it is created as a "simple" group. */
        if (req->generation >= 0)
            return req->api_version >= 9 && !txn ? KERR_GROUP_ID_NOT_FOUND
                                                  : KERR_ILLEGAL_GENERATION;
        g = grp_create(c, req->group_id);
    }
    *out = g;
    return grp_commit_validate(g, req, txn);
}

static proto_str_t grp_str(const char *s)
{
    proto_str_t p = {s, (int32_t)strlen(s)};
    return p;
}

/* The offsets of a commit that passed the checks, applied once written:
 * committed, or (pid >= 0: TxnOffsetCommit) pending for the transaction. */
static void grp_commit_apply(grp_coord_t *c, grp_t *g, const grp_commit_part_t *p, int64_t pid,
                             int64_t now, int64_t expire)
{
    int32_t ml = p->metadata.len < 0 ? 0 : p->metadata.len;
    if (pid >= 0)
        grp_txn_put(c, g, pid, p->topic.p, (size_t)p->topic.len, p->partition, p->offset,
                    p->leader_epoch, p->metadata.p, (size_t)ml, now);
    else
        grp_offset_put(g, p->topic.p, (size_t)p->topic.len, p->partition, p->offset,
                       p->leader_epoch, p->metadata.p, (size_t)ml, now, expire);
}

void grp_commit_as(grp_coord_t *c, grp_commit_req_t *req, int64_t pid, int16_t epoch)
{
    grp_t *g = NULL;
    int16_t err = grp_commit_group(c, req, pid >= 0, &g);
    int64_t now = grp_wall(c);
    /* retention_time_ms may be INT64_MAX: saturate instead of wrapping. */
    int64_t expire = req->retention_ms < 0                    ? -1
                     : req->retention_ms > INT64_MAX - now ? INT64_MAX
                                                           : now + req->retention_ms;
    grp_recs_t recs;

    for (int i = 0; i < req->nparts; i++) {
        grp_commit_part_t *p = &req->parts[i];
        if (!p->error && err)
            p->error = err;
        else if (!p->error && p->metadata.len > c->cfg.offset_metadata_max_bytes)
            p->error = KERR_OFFSET_METADATA_TOO_LARGE;
    }
    if (err)
        return;
    grp_member_t *m = req->generation >= 0 && pid < 0 ? grp_member_get(g, req->member_id) : NULL;
    if (m)
        grp_hb_schedule(c, m, m->session_timeout);
    grp_recs_init(&recs);
    recs.producer_id = pid;
    recs.producer_epoch = pid >= 0 ? epoch : -1;
    for (int i = 0; i < req->nparts; i++) {
        grp_commit_part_t *p = &req->parts[i];
        if (p->error)
            continue;
        grp_rec_offset_t v = {p->offset, p->leader_epoch, p->metadata, now, expire};
        size_t k = recs.data.len;
        grp_rec_offset_key(&recs.data, grp_str(g->id), p->topic, p->partition);
        size_t vo = recs.data.len;
        grp_rec_offset_value(&recs.data, &v);
        grp_recs_done(&recs, k, vo, 0);
    }
    if (recs.n) {
        err = grp_store(c, g, &recs, 1);
        for (int i = 0; i < req->nparts; i++) {
            grp_commit_part_t *p = &req->parts[i];
            if (p->error)
                continue;
            if (err)
                p->error = err;
            else
                grp_commit_apply(c, g, p, pid, now, expire);
        }
    }
    grp_recs_free(&recs);
}

void grp_commit(grp_coord_t *c, grp_commit_req_t *req)
{
    grp_commit_as(c, req, -1, -1);
}

/* ---- OffsetFetch ---- */

int16_t grp_offsets_group(grp_coord_t *c, const char *group_id, grp_t **grp)
{
    int16_t err = grp_validate_id(c, group_id, true);
    *grp = NULL;
    if (err)
        return err;
    *grp = grp_get(c, group_id);
    return KERR_NONE;
}

/* ---- OffsetDelete ---- */

int16_t grp_offset_delete(grp_coord_t *c, const char *group_id, grp_offset_del_t *parts, int n)
{
    int16_t err = grp_validate_id(c, group_id, false);
    grp_t *g;
    grp_recs_t recs;

    if (err)
        return err;
    g = grp_get(c, group_id);
    if (!g)
        return KERR_GROUP_ID_NOT_FOUND;
    bool consumer = g->protocol_type && !strcmp(g->protocol_type, "consumer");
    if (g->state != GRP_EMPTY && !consumer)
        return KERR_NON_EMPTY_GROUP;
    grp_recs_init(&recs);
    for (int i = 0; i < n; i++) {
        grp_offset_del_t *p = &parts[i];
        if (p->error)
            continue;
        if (g->state != GRP_EMPTY && grp_subscribed_to(g, p->topic.p, (size_t)p->topic.len)) {
            p->error = KERR_GROUP_SUBSCRIBED_TO_TOPIC;
            continue;
        }
        const grp_offset_t *o = grp_offset_get(g, p->topic.p, (size_t)p->topic.len, p->partition);
        if (o)
            grp_recs_offset_tombstone(&recs, g, o);
    }
    err = recs.n ? grp_store(c, g, &recs, 1) : KERR_NONE;
    grp_recs_free(&recs);
    if (err)
        return err;
    for (int i = 0; i < n; i++) {
        grp_offset_del_t *p = &parts[i];
        if (p->error)
            continue;
        const grp_offset_t *o = grp_offset_get(g, p->topic.p, (size_t)p->topic.len, p->partition);
        if (o)
            grp_offset_del(g, o);
    }
    return KERR_NONE;
}

/* ---- DeleteGroups, DescribeGroups ---- */

/* Writes the tombstones of every offset and of the group, then forgets
 * the group. */
static int16_t grp_remove_all(grp_coord_t *c, grp_t *g)
{
    grp_recs_t recs;
    size_t pos = 0;
    const grp_offset_t *o;

    grp_recs_init(&recs);
    while ((o = grp_offset_next(g, &pos)))
        grp_recs_offset_tombstone(&recs, g, o);
    grp_recs_group_tombstone(&recs, g);
    int16_t err = grp_store(c, g, &recs, 0);
    grp_recs_free(&recs);
    if (err)
        return err;
    grp_transition(c, g, GRP_DEAD);
    grp_destroy(c, g);
    return KERR_NONE;
}

int16_t grp_delete(grp_coord_t *c, const char *group_id)
{
    int16_t err = grp_validate_id(c, group_id, true);
    if (err)
        return err;
    grp_t *g = grp_get(c, group_id);
    if (!g)
        return KERR_GROUP_ID_NOT_FOUND;
    if (g->state != GRP_EMPTY)
        return KERR_NON_EMPTY_GROUP;
    err = grp_remove_all(c, g);
    if (!err)
        lg_info("group %s deleted", group_id);
    return err;
}

int16_t grp_describe(grp_coord_t *c, const char *group_id, grp_t **grp)
{
    int16_t err = grp_validate_id(c, group_id, true);
    *grp = NULL;
    if (err)
        return err;
    *grp = grp_get(c, group_id);
    return KERR_NONE;
}

/* ---- deleted topics ---- */

static int grp_drop_topic(grp_coord_t *c, grp_t *g, const char *topic, size_t len)
{
    grp_recs_t recs;
    const grp_offset_t *o;
    const grp_offset_t **gone = xcalloc(g->offsets.count + 1, sizeof(*gone));
    size_t pos = 0, n = 0;

    grp_recs_init(&recs);
    while ((o = grp_offset_next(g, &pos)))
        if (strlen(o->topic) == len && !memcmp(o->topic, topic, len)) {
            gone[n++] = o;
            grp_recs_offset_tombstone(&recs, g, o);
        }
    int16_t err = n ? grp_store(c, g, &recs, 1) : KERR_NONE;
    grp_recs_free(&recs);
    if (err)
        n = 0;
    for (size_t i = 0; i < n; i++)
        grp_offset_del(g, gone[i]);
    free(gone);
    return (int)n;
}

int grp_topic_deleted(grp_coord_t *c, const char *topic, size_t len)
{
    size_t pos = 0, n = 0;
    void *v;
    int total = 0;
    grp_t **all = xcalloc(c->groups.count + 1, sizeof(*all));

    while (smap_next(&c->groups, &pos, NULL, NULL, &v))
        if (!c->loading[((grp_t *)v)->part])
            all[n++] = v;
    for (size_t i = 0; i < n; i++)
        total += grp_drop_topic(c, all[i], topic, len);
    free(all);
    if (total)
        lg_info("topic %.*s deleted: removed %d committed offset(s)", (int)len, topic, total);
    return total;
}

/* ---- expiry ---- */

/* Kafka's offsetExpirationCondition and isOffsetExpired: an empty group's
 * offsets count from when it became empty, a stable consumer group's
 * from their commit but only for topics no member subscribes to, a group
 * without a protocol (offsets only) from their commit; a commit with its
 * own retention time expires then. */
static bool grp_offset_expired(const grp_coord_t *c, const grp_t *g, const grp_offset_t *o,
                               int64_t now)
{
    int64_t base;
    if (!g->protocol_type) {
        base = o->commit_ts;
    } else if (g->state == GRP_EMPTY) {
        base = g->state_ts >= 0 ? g->state_ts : o->commit_ts;
    } else if (!strcmp(g->protocol_type, "consumer") && g->subscribed_known &&
               g->state == GRP_STABLE) {
        if (grp_subscribed_to(g, o->topic, strlen(o->topic)))
            return false;
        base = o->commit_ts;
    } else {
        return false;
    }
    if (o->expire_ts >= 0)
        return now >= o->expire_ts;
    return now - base >= c->cfg.offsets_retention_ms;
}

/* Expires one group's offsets; returns how many went, -1 if the group
 * was deleted too. */
static int grp_expire_group(grp_coord_t *c, grp_t *g, int64_t now)
{
    grp_recs_t recs;
    const grp_offset_t *o;
    const grp_offset_t **gone = xcalloc(g->offsets.count + 1, sizeof(*gone));
    size_t pos = 0, n = 0;

    grp_recs_init(&recs);
    while ((o = grp_offset_next(g, &pos)))
        if (grp_offset_expired(c, g, o, now)) {
            gone[n++] = o;
            grp_recs_offset_tombstone(&recs, g, o);
        }
    bool drop = g->state == GRP_EMPTY && g->offsets.count == n && !g->pending.count;
    if (drop)
        grp_recs_group_tombstone(&recs, g);
    int16_t err = recs.n ? grp_store(c, g, &recs, 0) : KERR_NONE;
    grp_recs_free(&recs);
    if (!err)
        for (size_t i = 0; i < n; i++)
            grp_offset_del(g, gone[i]);
    free(gone);
    if (err)
        return 0;
    if (n)
        lg_info("group %s: removed %zu expired offset(s)", g->id, n);
    if (drop) {
        lg_info("group %s: empty and without offsets, removed", g->id);
        grp_transition(c, g, GRP_DEAD);
        grp_destroy(c, g);
        return -1 - (int)n;
    }
    return (int)n;
}

int grp_expire_offsets(grp_coord_t *c)
{
    int64_t now = grp_wall(c);
    size_t pos = 0, n = 0;
    void *v;
    int total = 0;
    grp_t **all = xcalloc(c->groups.count + 1, sizeof(*all));

    while (smap_next(&c->groups, &pos, NULL, NULL, &v))
        if (!c->loading[((grp_t *)v)->part])
            all[n++] = v;
    for (size_t i = 0; i < n; i++) {
        int r = grp_expire_group(c, all[i], now);
        total += r < 0 ? -1 - r : r;
    }
    free(all);
    return total;
}

void grp_expire_timer_cb(grp_timer_t *t)
{
    grp_coord_t *c = GRP_CONTAINER(t, grp_coord_t, expire_timer);
    grp_expire_offsets(c);
    if (c->cfg.offsets_retention_check_ms > 0)
        grp_timer_arm(c, &c->expire_timer, c->cfg.offsets_retention_check_ms);
}
