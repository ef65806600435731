/* The coordinator's model: groups, members, their timers and waiters,
 * the subscriptions and the committed offsets in memory. Records and
 * writes are in grp_store.c, replay in grp_load.c, the rebalance protocol
 * in grp_join.c, the offset APIs, expiry and admin operations in
 * grp_offsets.c. */
#include "coord/grp.h"

#include <stdlib.h>
#include <string.h>

#include "coord/grp_int.h"
#include "coord/grp_rec.h"
#include "util/mem.h"
#include "util/rd.h"

static const char *const grp_state_names[] = {
    "Empty", "PreparingRebalance", "CompletingRebalance", "Stable", "Dead",
};

const char *grp_state_name(grp_state_t s)
{
    return grp_state_names[s];
}

void grp_config_defaults(grp_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->num_partitions = 50;
    cfg->initial_rebalance_delay_ms = 3000;
    cfg->max_size = INT32_MAX;
    cfg->min_session_timeout_ms = 6000;
    cfg->max_session_timeout_ms = 1800000;
    cfg->offsets_retention_ms = 7LL * 24 * 3600 * 1000;
    cfg->offsets_retention_check_ms = 600000;
    cfg->offset_metadata_max_bytes = 4096;
    cfg->new_member_join_timeout_ms = 300000;
}

/* ---- time ---- */

int64_t grp_now(grp_coord_t *c)
{
    return c->env.now_mono(c->env.ctx);
}

int64_t grp_wall(grp_coord_t *c)
{
    return c->env.now_wall(c->env.ctx);
}

void grp_timer_arm(grp_coord_t *c, grp_timer_t *t, int64_t ms)
{
    grp_timer_stop(c, t);
    if (ms < 0)
        ms = 0;
    t->due = grp_now(c) + ms;
    t->id = c->env.timer_add(c->env.ctx, ms, t);
}

void grp_timer_stop(grp_coord_t *c, grp_timer_t *t)
{
    if (t->id)
        c->env.timer_cancel(c->env.ctx, t);
    t->id = 0;
}

void grp_timer_fire(grp_timer_t *t)
{
    t->id = 0;
    t->cb(t);
}

/* ---- lifecycle ---- */

grp_coord_t *grp_coord_new(const grp_config_t *cfg, const grp_env_t *env)
{
    grp_coord_t *c = xcalloc(1, sizeof(*c));
    c->cfg = *cfg;
    if (c->cfg.num_partitions < 1)
        c->cfg.num_partitions = 1;
    c->env = *env;
    smap_init(&c->groups);
    c->loading = xcalloc((size_t)c->cfg.num_partitions, sizeof(*c->loading));
    c->txn_pending = xcalloc((size_t)c->cfg.num_partitions, sizeof(*c->txn_pending));
    c->expire_timer.cb = grp_expire_timer_cb;
    if (c->cfg.offsets_retention_check_ms > 0)
        grp_timer_arm(c, &c->expire_timer, c->cfg.offsets_retention_check_ms);
    return c;
}

void grp_coord_free(grp_coord_t *c)
{
    size_t pos = 0;
    void *v;
    if (!c)
        return;
    grp_timer_stop(c, &c->expire_timer);
    /* Collect first: destroying edits the map. */
    grp_t **all = xcalloc(c->groups.count + 1, sizeof(*all));
    size_t n = 0;
    while (smap_next(&c->groups, &pos, NULL, NULL, &v))
        all[n++] = v;
    for (size_t i = 0; i < n; i++) {
        grp_t *g = all[i];
        for (grp_member_t *m = g->members.next; m != &g->members; m = m->next) {
            if (m->join_w)
                m->join_w->member = NULL;
            if (m->sync_w)
                m->sync_w->member = NULL;
            m->join_w = m->sync_w = NULL;
        }
        grp_destroy(c, g);
    }
    free(all);
    smap_free(&c->groups);
    free(c->loading);
    free(c->txn_pending);
    free(c);
}

const grp_env_t *grp_coord_env(const grp_coord_t *c)
{
    return &c->env;
}

/* ---- groups ---- */

grp_t *grp_get(grp_coord_t *c, const char *id)
{
    return id ? smap_get(&c->groups, id, strlen(id)) : NULL;
}

grp_t *grp_create(grp_coord_t *c, const char *id)
{
    grp_t *g = xcalloc(1, sizeof(*g));
    g->coord = c;
    g->id = xstrdup(id);
    g->id_len = strlen(id);
    g->part = grp_rec_partition_for(id, g->id_len, c->cfg.num_partitions);
    g->state = GRP_EMPTY;
    g->state_ts = grp_wall(c);
    g->members.next = g->members.prev = &g->members;
    smap_init(&g->by_id);
    smap_init(&g->by_instance);
    smap_init(&g->pending);
    smap_init(&g->offsets);
    g->join_timer.cb = grp_join_timer_cb;
    g->sync_timer.cb = grp_sync_timer_cb;
    g->subscribed_known = false;
    smap_put(&c->groups, g->id, g->id_len, g);
    return g;
}

static void grp_subscribed_free(grp_t *g)
{
    for (int i = 0; i < g->nsubscribed; i++)
        free(g->subscribed[i]);
    free(g->subscribed);
    g->subscribed = NULL;
    g->nsubscribed = 0;
}

static void grp_pending_free(grp_coord_t *c, grp_pending_t *p)
{
    grp_timer_stop(c, &p->timer);
    free(p->id);
    free(p);
}

void grp_destroy(grp_coord_t *c, grp_t *g)
{
    size_t pos = 0;
    void *v;

    grp_timer_stop(c, &g->join_timer);
    grp_timer_stop(c, &g->sync_timer);
    while (g->members.next != &g->members)
        grp_member_remove(c, g->members.next);
    while (smap_next(&g->pending, &pos, NULL, NULL, &v))
        grp_pending_free(c, v);
    smap_free(&g->pending);
    smap_free(&g->by_id);
    smap_free(&g->by_instance);
    grp_offsets_free(g);
    grp_txn_offs_free(c, g);
    grp_subscribed_free(g);
    smap_del(&c->groups, g->id, g->id_len);
    free(g->protocol_type);
    free(g->protocol_name);
    free(g->meta_rec);
    free(g->id);
    free(g);
}

void grp_transition(grp_coord_t *c, grp_t *g, grp_state_t to)
{
    g->state = to;
    g->state_ts = grp_wall(c);
}

int16_t grp_validate_id(grp_coord_t *c, const char *id, bool allow_empty)
{
    if (!id || (!allow_empty && !*id))
        return KERR_INVALID_GROUP_ID;
    int32_t part = grp_rec_partition_for(id, strlen(id), c->cfg.num_partitions);
    if (grp_part_offline(c, part))
        return KERR_NOT_COORDINATOR;
    if (c->nloading && c->loading[part])
        return KERR_COORDINATOR_LOAD_IN_PROGRESS;
    return KERR_NONE;
}

bool grp_part_offline(const grp_coord_t *c, int32_t part)
{
    return c->env.offline && c->env.offline(c->env.ctx, part);
}

int16_t grp_find_coordinator(grp_coord_t *c, const char *group_id)
{
    int32_t part = grp_rec_partition_for(group_id, strlen(group_id), c->cfg.num_partitions);
    return grp_part_offline(c, part) ? KERR_COORDINATOR_NOT_AVAILABLE : KERR_NONE;
}

grp_t *grp_next(grp_coord_t *c, size_t *pos)
{
    void *v;
    while (smap_next(&c->groups, pos, NULL, NULL, &v)) {
        grp_t *g = v;
        if (g->state != GRP_DEAD && !c->loading[g->part] && !grp_part_offline(c, g->part))
            return g;
    }
    return NULL;
}

bool grp_loading(const grp_coord_t *c)
{
    return c->nloading > 0;
}

bool grp_part_loading(const grp_coord_t *c, int32_t part)
{
    return part >= 0 && part < c->cfg.num_partitions && c->loading[part];
}

/* ---- members ---- */

grp_member_t *grp_member_get(grp_t *g, const char *id)
{
    return id ? smap_get(&g->by_id, id, strlen(id)) : NULL;
}

static void grp_protocols_free(grp_member_t *m)
{
    for (int i = 0; i < m->nprotocols; i++) {
        free(m->protocols[i].name);
        free(m->protocols[i].meta);
    }
    free(m->protocols);
    m->protocols = NULL;
    m->nprotocols = 0;
}

uint8_t *grp_memdup(const void *p, int32_t len)
{
    uint8_t *q = xmalloc(len > 0 ? (size_t)len : 1);
    if (len > 0)
        memcpy(q, p, (size_t)len);
    return q;
}

void grp_member_set_protocols(grp_member_t *m, const grp_protocol_t *p, int n)
{
    grp_protocols_free(m);
    m->protocols = xcalloc((size_t)n + 1, sizeof(*m->protocols));
    for (int i = 0; i < n; i++) {
        m->protocols[i].name = xstrdup(p[i].name);
        m->protocols[i].meta_len = p[i].meta_len < 0 ? 0 : p[i].meta_len;
        m->protocols[i].meta = grp_memdup(p[i].meta, m->protocols[i].meta_len);
    }
    m->nprotocols = n;
}

const grp_protocol_t *grp_member_protocol(const grp_member_t *m, const char *name)
{
    for (int i = 0; name && i < m->nprotocols; i++)
        if (!strcmp(m->protocols[i].name, name))
            return &m->protocols[i];
    return NULL;
}

/* Adds a member at the end of the group (not awaiting anything yet). */
grp_member_t *grp_member_new(grp_t *g, const grp_join_req_t *req, const char *member_id)
{
    grp_member_t *m = xcalloc(1, sizeof(*m));
    m->grp = g;
    m->id = xstrdup(member_id);
    m->instance_id = req->instance_id ? xstrdup(req->instance_id) : NULL;
    m->client_id = xstrdup(req->client_id ? req->client_id : "");
    m->client_host = xstrdup(req->client_host ? req->client_host : "");
    m->session_timeout = req->session_timeout;
    m->rebalance_timeout = req->rebalance_timeout;
    m->protocol_type = xstrdup(req->protocol_type ? req->protocol_type : "");
    grp_member_set_protocols(m, req->protocols, req->nprotocols);
    m->assignment = grp_memdup(NULL, 0);
    m->hb_timer.cb = grp_hb_timer_cb;
    m->prev = g->members.prev;
    m->next = &g->members;
    g->members.prev->next = m;
    g->members.prev = m;
    g->nmembers++;
    smap_put(&g->by_id, m->id, strlen(m->id), m);
    if (m->instance_id)
        smap_put(&g->by_instance, m->instance_id, strlen(m->instance_id), m);
    if (!g->leader)
        g->leader = m;
    return m;
}

void grp_member_remove(grp_coord_t *c, grp_member_t *m)
{
    grp_t *g = m->grp;
    static const grp_join_result_t jgone = {.error = KERR_UNKNOWN_MEMBER_ID,
                                            .member_id = "", .generation = -1, .leader = ""};
    static const grp_sync_result_t sgone = {.error = KERR_UNKNOWN_MEMBER_ID};

    /* A parked request must never stay parked: answer it. */
    if (m->join_w)
        grp_member_join_done(c, m, &jgone);
    if (m->sync_w)
        grp_member_sync_done(c, m, &sgone);
    grp_timer_stop(c, &m->hb_timer);
    if (m->awaiting_join)
        g->nawaiting_join--;
    if (m->pending_sync)
        g->npending_sync--;
    smap_del(&g->by_id, m->id, strlen(m->id));
    if (m->instance_id && smap_get(&g->by_instance, m->instance_id, strlen(m->instance_id)) == m)
        smap_del(&g->by_instance, m->instance_id, strlen(m->instance_id));
    m->prev->next = m->next;
    m->next->prev = m->prev;
    g->nmembers--;
    if (g->leader == m)
        g->leader = g->members.next != &g->members ? g->members.next : NULL;
    grp_protocols_free(m);
    free(m->assignment);
    free(m->protocol_type);
    free(m->client_host);
    free(m->client_id);
    free(m->instance_id);
    free(m->id);
    free(m);
}

int32_t grp_rebalance_timeout(const grp_t *g)
{
    int32_t t = 0;
    for (const grp_member_t *m = g->members.next; m != &g->members; m = m->next)
        if (m->rebalance_timeout > t)
            t = m->rebalance_timeout;
    return t;
}

/* Kafka schedules a heartbeat expiration after every sign of life. Here
 * a member has one deadline and one timer that fires at or before it: a
 * heartbeat only moves the deadline, and the timer re-arms itself when it
 * finds the deadline moved, so the hot path never touches the timer heap.
 * A member that waits in JoinGroup or SyncGroup (and is not new) has no
 * deadline, as Kafka's delayed heartbeat completes at once for it. */
void grp_hb_schedule(grp_coord_t *c, grp_member_t *m, int64_t timeout)
{
    if (!m->is_new && (m->awaiting_join || m->awaiting_sync)) {
        m->hb_deadline = 0;
        return;
    }
    m->hb_deadline = grp_now(c) + timeout;
    if (!m->hb_timer.id || m->hb_timer.due > m->hb_deadline)
        grp_timer_arm(c, &m->hb_timer, timeout);
}

/* ---- waiters ---- */

static void grp_note_answer(grp_coord_t *c, grp_waiter_t *w)
{
    if (w == c->cur_w)
        c->cur_answered = true;
}

void grp_reply_join(grp_coord_t *c, grp_waiter_t *w, const grp_join_result_t *res)
{
    w->member = NULL;
    grp_note_answer(c, w);
    w->join_done(w, res);
}

void grp_reply_sync(grp_coord_t *c, grp_waiter_t *w, const grp_sync_result_t *res)
{
    w->member = NULL;
    grp_note_answer(c, w);
    w->sync_done(w, res);
}

bool grp_member_join_done(grp_coord_t *c, grp_member_t *m, const grp_join_result_t *res)
{
    grp_waiter_t *w = m->join_w;
    bool was = m->awaiting_join;
    if (was) {
        m->awaiting_join = false;
        m->grp->nawaiting_join--;
    }
    m->join_w = NULL;
    if (w)
        grp_reply_join(c, w, res);
    return was;
}

bool grp_member_sync_done(grp_coord_t *c, grp_member_t *m, const grp_sync_result_t *res)
{
    grp_waiter_t *w = m->sync_w;
    bool was = m->awaiting_sync;
    m->awaiting_sync = false;
    m->sync_w = NULL;
    if (w)
        grp_reply_sync(c, w, res);
    return was;
}

void grp_waiter_cancel(grp_coord_t *c, grp_waiter_t *w)
{
    grp_member_t *m = w->member;
    (void)c;
    if (!m)
        return;
    if (m->join_w == w)
        m->join_w = NULL;
    if (m->sync_w == w)
        m->sync_w = NULL;
    w->member = NULL;
}

/* ---- subscribed topics ---- */

/* Topics of a ConsumerProtocolSubscription (version i16, then an array
 * of strings; later fields do not matter here). Returns the count, or -1
 * when the metadata does not parse. */
static int grp_subscription_topics(const uint8_t *p, int32_t len, char ***out, int *nout)
{
    rd_t rd;
    rd_init(&rd, p, len > 0 ? (size_t)len : 0);
    rd_i16(&rd);
    int32_t n = rd_i32(&rd);
    if (rd.err || n < 0 || (size_t)n > rd_remain(&rd) / 2)
        return -1;
    for (int32_t i = 0; i < n; i++) {
        int16_t l = rd_i16(&rd);
        const uint8_t *s = l >= 0 ? rd_take(&rd, (size_t)l) : NULL;
        if (!s)
            return -1;
        bool dup = false;
        for (int j = 0; j < *nout && !dup; j++)
            dup = strlen((*out)[j]) == (size_t)l && !memcmp((*out)[j], s, (size_t)l);
        if (dup)
            continue;
        *out = xrealloc(*out, (size_t)(*nout + 1) * sizeof(**out));
        (*out)[(*nout)++] = xstrndup((const char *)s, (size_t)l);
    }
    return 0;
}

/* Kafka's computeSubscribedTopics: known only for the "consumer"
 * protocol type when every member's subscription parses. */
void grp_subscribed_update(grp_t *g)
{
    grp_subscribed_free(g);
    g->subscribed_known = false;
    if (!g->protocol_type || strcmp(g->protocol_type, "consumer") != 0)
        return;
    if (g->nmembers == 0) {
        g->subscribed_known = true;
        return;
    }
    if (!g->protocol_name)
        return;
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next) {
        const grp_protocol_t *p = grp_member_protocol(m, g->protocol_name);
        if (!p || grp_subscription_topics(p->meta, p->meta_len, &g->subscribed,
                                          &g->nsubscribed) < 0) {
            grp_subscribed_free(g);
            return;
        }
    }
    g->subscribed_known = true;
}

/* Kafka's isSubscribedToTopic: when the topics are unknown, a consumer
 * group counts as subscribed to everything. */
bool grp_subscribed_to(const grp_t *g, const char *topic, size_t len)
{
    if (!g->subscribed_known)
        return g->protocol_type && !strcmp(g->protocol_type, "consumer");
    for (int i = 0; i < g->nsubscribed; i++)
        if (strlen(g->subscribed[i]) == len && !memcmp(g->subscribed[i], topic, len))
            return true;
    return false;
}

/* ---- offsets ---- */

/* Map key: topic, a NUL, the partition (4 bytes). */
static size_t grp_offset_key(char *buf, size_t cap, const char *topic, size_t len, int32_t p)
{
    if (len + 5 > cap)
        return 0;
    memcpy(buf, topic, len);
    buf[len] = 0;
    memcpy(buf + len + 1, &p, 4);
    return len + 5;
}

const grp_offset_t *grp_offset_get(const grp_t *grp, const char *topic, size_t topic_len,
                                   int32_t partition)
{
    char key[512];
    size_t n = grp_offset_key(key, sizeof(key), topic, topic_len, partition);
    if (!n) {
        char *big = xmalloc(topic_len + 5);
        n = grp_offset_key(big, topic_len + 5, topic, topic_len, partition);
        const grp_offset_t *o = smap_get(&grp->offsets, big, n);
        free(big);
        return o;
    }
    return smap_get(&grp->offsets, key, n);
}

const grp_offset_t *grp_offset_next(const grp_t *grp, size_t *pos)
{
    void *v;
    return smap_next(&grp->offsets, pos, NULL, NULL, &v) ? v : NULL;
}

void grp_offset_put(grp_t *g, const char *topic, size_t topic_len, int32_t partition,
                    int64_t offset, int32_t epoch, const char *md, size_t md_len,
                    int64_t commit_ts, int64_t expire_ts)
{
    grp_offset_t *o = (grp_offset_t *)grp_offset_get(g, topic, topic_len, partition);
    if (!o) {
        size_t n = topic_len + 5;
        char *key = xmalloc(n);
        grp_offset_key(key, n, topic, topic_len, partition);
        o = xcalloc(1, sizeof(*o));
        o->topic = xstrndup(topic, topic_len);
        o->partition = partition;
        smap_put(&g->offsets, key, n, o);
        free(key);
    }
    /* Commits mostly repeat the metadata: keep the string when equal. */
    if (!o->metadata || (size_t)o->metadata_len != md_len ||
        (md_len && memcmp(o->metadata, md, md_len))) {
        free(o->metadata);
        o->metadata = xstrndup(md ? md : "", md_len);
        o->metadata_len = (int32_t)md_len;
    }
    o->offset = offset;
    o->leader_epoch = epoch;
    o->commit_ts = commit_ts;
    o->expire_ts = expire_ts;
    o->seq = ++g->coord->offset_seq;
}

void grp_offset_del(grp_t *g, const grp_offset_t *o)
{
    size_t n = strlen(o->topic) + 5;
    char *key = xmalloc(n);
    grp_offset_key(key, n, o->topic, strlen(o->topic), o->partition);
    grp_offset_t *found = smap_del(&g->offsets, key, n);
    free(key);
    if (found) {
        free(found->topic);
        free(found->metadata);
        free(found);
    }
}

void grp_offsets_free(grp_t *g)
{
    size_t pos = 0;
    void *v;
    while (smap_next(&g->offsets, &pos, NULL, NULL, &v)) {
        grp_offset_t *o = v;
        free(o->topic);
        free(o->metadata);
        free(o);
    }
    smap_free(&g->offsets);
}
