/* The classic rebalance protocol, as Kafka's GroupCoordinator runs it:
 * JoinGroup collects the members (PreparingRebalance) until all known
 * members have rejoined or the rebalance timeout passes, then answers
 * them all with the new generation, the leader getting everyone's
 * metadata (CompletingRebalance); the leader's SyncGroup brings the
 * assignment, which is persisted and handed to every member (Stable).
 * Heartbeats keep members alive; LeaveGroup, expired sessions and missing
 * SyncGroups start the next rebalance. Static members (group.instance.id)
 * keep their place across restarts. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/grp_int.h"
#include "util/logging.h"
#include "util/mem.h"

static const grp_join_result_t *grp_join_err(grp_join_result_t *r, const char *member_id,
                                             int16_t err)
{
    memset(r, 0, sizeof(*r));
    r->error = err;
    r->member_id = member_id ? member_id : "";
    r->generation = -1;
    r->leader = "";
    return r;
}

static void grp_join_fail(grp_coord_t *c, grp_waiter_t *w, const char *member_id, int16_t err)
{
    grp_join_result_t r;
    grp_reply_join(c, w, grp_join_err(&r, member_id, err));
}

static const grp_sync_result_t *grp_sync_err(grp_sync_result_t *r, int16_t err)
{
    memset(r, 0, sizeof(*r));
    r->error = err;
    r->assignment = (const uint8_t *)"";
    return r;
}

/* Kafka's currentMemberMetadata: everyone's metadata for the chosen
 * protocol, for the leader. The caller frees the array. */
static grp_join_member_t *grp_member_list(grp_t *g)
{
    grp_join_member_t *v = xcalloc((size_t)g->nmembers + 1, sizeof(*v));
    int i = 0;
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next, i++) {
        const grp_protocol_t *p = grp_member_protocol(m, g->protocol_name);
        v[i].member_id = m->id;
        v[i].instance_id = m->instance_id;
        v[i].meta = p ? p->meta : (const uint8_t *)"";
        v[i].meta_len = p ? p->meta_len : 0;
    }
    return v;
}

/* The answer for m in the current generation; with_members gives the
 * member list (the leader's). */
static void grp_join_ok(grp_t *g, grp_member_t *m, const grp_join_member_t *list,
                        grp_join_result_t *r)
{
    memset(r, 0, sizeof(*r));
    r->member_id = m->id;
    r->generation = g->generation;
    r->protocol_type = g->protocol_type;
    r->protocol_name = g->protocol_name;
    r->leader = g->leader ? g->leader->id : "";
    if (list) {
        r->members = list;
        r->nmembers = g->nmembers;
    }
}

/* ---- protocols ---- */

static int grp_protocol_votes(const grp_t *g, const char *name)
{
    int n = 0;
    for (const grp_member_t *m = g->members.next; m != &g->members; m = m->next)
        n += grp_member_protocol(m, name) != NULL;
    return n;
}

/* Kafka's supportsProtocols: an empty group takes any protocol type; a
 * live one needs the same type and a protocol every member has. */
static bool grp_supports(const grp_t *g, const grp_join_req_t *req)
{
    if (g->state == GRP_EMPTY)
        return req->protocol_type && *req->protocol_type && req->nprotocols > 0;
    if (!g->protocol_type || !req->protocol_type || strcmp(g->protocol_type, req->protocol_type))
        return false;
    for (int i = 0; i < req->nprotocols; i++)
        if (grp_protocol_votes(g, req->protocols[i].name) == g->nmembers)
            return true;
    return false;
}

/* Kafka's selectProtocol: among the protocols every member supports,
 * each member votes for its most preferred; most votes wins (ties go to
 * the one voted first, so the choice is deterministic). */
static const char *grp_select_protocol(const grp_t *g)
{
    const char **cand = xcalloc((size_t)g->nmembers + 1, sizeof(*cand));
    int *votes = xcalloc((size_t)g->nmembers + 1, sizeof(*votes));
    int ncand = 0, best = -1;
    const char *winner = NULL;

    for (const grp_member_t *m = g->members.next; m != &g->members; m = m->next) {
        const char *vote = NULL;
        for (int i = 0; i < m->nprotocols && !vote; i++)
            if (grp_protocol_votes(g, m->protocols[i].name) == g->nmembers)
                vote = m->protocols[i].name;
        if (!vote)
            continue;
        int j = 0;
        while (j < ncand && strcmp(cand[j], vote))
            j++;
        if (j == ncand)
            cand[ncand++] = vote;
        votes[j]++;
    }
    for (int j = 0; j < ncand; j++)
        if (votes[j] > best) {
            best = votes[j];
            winner = cand[j];
        }
    free(cand);
    free(votes);
    return winner;
}

static bool grp_protocols_match(const grp_member_t *m, const grp_join_req_t *req)
{
    if (m->nprotocols != req->nprotocols)
        return false;
    for (int i = 0; i < req->nprotocols; i++) {
        const grp_protocol_t *a = &m->protocols[i], *b = &req->protocols[i];
        int32_t blen = b->meta_len < 0 ? 0 : b->meta_len;
        if (strcmp(a->name, b->name) || a->meta_len != blen ||
            (blen && memcmp(a->meta, b->meta, (size_t)blen)))
            return false;
    }
    return true;
}

/* ---- members ---- */

int16_t grp_validate_member(grp_t *g, const char *member_id, const char *instance_id)
{
    if (instance_id) {
        grp_member_t *m = smap_get(&g->by_instance, instance_id, strlen(instance_id));
        if (!m)
            return KERR_UNKNOWN_MEMBER_ID;
        if (!member_id || strcmp(m->id, member_id)) {
            lg_info("group %s: member %s of static instance %s is fenced by member %s", g->id,
                    member_id ? member_id : "", instance_id, m->id);
            return KERR_FENCED_INSTANCE_ID;
        }
        return KERR_NONE;
    }
    return grp_member_get(g, member_id) ? KERR_NONE : KERR_UNKNOWN_MEMBER_ID;
}

/* Kafka's member ids: the client id (or instance id) and a random UUID
 * in java.util.UUID's text form. */
static char *grp_new_member_id(grp_coord_t *c, const grp_join_req_t *req)
{
    uint8_t u[16];
    const char *prefix = req->instance_id ? req->instance_id : req->client_id ? req->client_id : "";
    size_t n = strlen(prefix) + 38;
    char *id = xmalloc(n);

    c->env.random(c->env.ctx, u);
    u[6] = (uint8_t)((u[6] & 0x0f) | 0x40);
    u[8] = (uint8_t)((u[8] & 0x3f) | 0x80);
    snprintf(id, n,
             "%s-%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", prefix,
             u[0], u[1], u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12],
             u[13], u[14], u[15]);
    return id;
}

/* Parks w on m (Kafka's awaitingJoinCallback). A waiter m still holds
 * from an earlier request (on another connection, given up by the
 * client) is answered rather than left parked for ever. */
static void grp_member_await_join(grp_coord_t *c, grp_member_t *m, grp_waiter_t *w)
{
    if (m->join_w) {
        grp_join_result_t r;
        grp_waiter_t *old = m->join_w;
        m->join_w = NULL;
        grp_reply_join(c, old, grp_join_err(&r, m->id, KERR_REBALANCE_IN_PROGRESS));
    }
    if (!m->awaiting_join) {
        m->awaiting_join = true;
        m->grp->nawaiting_join++;
    }
    m->join_w = w;
    w->member = m;
}

/* Kafka's updateMember: new protocols and timeouts, and waiting. */
static void grp_member_update(grp_coord_t *c, grp_member_t *m, const grp_join_req_t *req,
                              grp_waiter_t *w)
{
    grp_member_set_protocols(m, req->protocols, req->nprotocols);
    m->rebalance_timeout = req->rebalance_timeout;
    m->session_timeout = req->session_timeout;
    grp_member_await_join(c, m, w);
}

static void grp_pending_remove(grp_coord_t *c, grp_t *g, const char *id)
{
    grp_pending_t *p = smap_del(&g->pending, id, strlen(id));
    if (p) {
        grp_timer_stop(c, &p->timer);
        free(p->id);
        free(p);
    }
}

static void grp_pending_add(grp_coord_t *c, grp_t *g, const char *id, int64_t timeout)
{
    grp_pending_t *p = xcalloc(1, sizeof(*p));
    p->grp = g;
    p->id = xstrdup(id);
    p->timer.cb = grp_pending_timer_cb;
    smap_put(&g->pending, id, strlen(id), p);
    grp_timer_arm(c, &p->timer, timeout);
}

/* Kafka's addMemberAndRebalance. */
static void grp_add_member(grp_coord_t *c, grp_t *g, const grp_join_req_t *req, const char *id,
                           grp_waiter_t *w)
{
    if (g->nmembers == 0) {
        free(g->protocol_type);
        g->protocol_type = xstrdup(req->protocol_type);
    }
    if (g->state == GRP_PREPARING_REBALANCE && g->generation == 0)
        g->new_member_added = true;
    grp_member_t *m = grp_member_new(g, req, id);
    m->is_new = true;
    grp_member_await_join(c, m, w);
    grp_pending_remove(c, g, id);
    /* A new member cannot heartbeat and a parked JoinGroup does not show
     * a dead client: give up on it after a while (it retries if alive). */
    grp_hb_schedule(c, m, c->cfg.new_member_join_timeout_ms);
    char reason[256];
    snprintf(reason, sizeof(reason), "adding new member %s", id);
    grp_maybe_prepare_rebalance(c, g, reason);
}

/* ---- rebalance ---- */

void grp_maybe_prepare_rebalance(grp_coord_t *c, grp_t *g, const char *reason)
{
    if (g->state == GRP_STABLE || g->state == GRP_COMPLETING_REBALANCE || g->state == GRP_EMPTY)
        grp_prepare_rebalance(c, g, reason);
}

/* Hands every member its assignment, or err with an empty one; members
 * that got an answer start a new session timeout. */
static void grp_propagate_assignment(grp_coord_t *c, grp_t *g, int16_t err)
{
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next) {
        grp_sync_result_t r = {err, NULL, NULL, m->assignment, m->assignment_len};
        if (!err) {
            r.protocol_type = g->protocol_type;
            r.protocol_name = g->protocol_name;
        }
        if (grp_member_sync_done(c, m, &r))
            grp_hb_schedule(c, m, m->session_timeout);
    }
}

static void grp_reset_assignment_error(grp_coord_t *c, grp_t *g, int16_t err)
{
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next)
        m->assignment_len = 0;
    grp_propagate_assignment(c, g, err);
}

void grp_prepare_rebalance(grp_coord_t *c, grp_t *g, const char *reason)
{
    if (g->state == GRP_COMPLETING_REBALANCE)
        grp_reset_assignment_error(c, g, KERR_REBALANCE_IN_PROGRESS);
    grp_timer_stop(c, &g->sync_timer);
    if (g->state == GRP_EMPTY) {
        /* group.initial.rebalance.delay.ms: wait for more members of a
         * group that is starting up, within the rebalance timeout. */
        int64_t delay = c->cfg.initial_rebalance_delay_ms;
        int64_t rest = grp_rebalance_timeout(g) - delay;
        g->join_initial = true;
        g->join_delay = delay;
        g->join_remaining = rest > 0 ? rest : 0;
        grp_timer_arm(c, &g->join_timer, delay);
    } else {
        g->join_initial = false;
        grp_timer_arm(c, &g->join_timer, grp_rebalance_timeout(g));
    }
    lg_info("group %s: preparing to rebalance in state %s with old generation %d "
            "(__consumer_offsets-%d) (reason: %s)",
            g->id, grp_state_name(g->state), g->generation, g->part, reason);
    grp_transition(c, g, GRP_PREPARING_REBALANCE);
    grp_join_check(c, g);
}

/* Kafka's maybeElectNewJoinedLeader: keep the leader if it rejoined,
 * else take the first member that did. */
static bool grp_elect_joined_leader(grp_t *g)
{
    if (!g->leader)
        return false;
    if (g->leader->awaiting_join)
        return true;
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next)
        if (m->awaiting_join) {
            g->leader = m;
            return true;
        }
    return false;
}

static void grp_init_next_generation(grp_coord_t *c, grp_t *g)
{
    const char *proto = g->nmembers ? grp_select_protocol(g) : NULL;
    char *name = proto ? xstrdup(proto) : NULL;
    free(g->protocol_name);
    g->protocol_name = name;
    g->generation++;
    grp_subscribed_update(g);
    grp_transition(c, g, g->nmembers ? GRP_COMPLETING_REBALANCE : GRP_EMPTY);
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next)
        m->pending_sync = false;
    g->npending_sync = 0;
}

/* Kafka's onCompleteJoin. */
static void grp_join_complete(grp_coord_t *c, grp_t *g)
{
    grp_timer_stop(c, &g->join_timer);
    for (grp_member_t *m = g->members.next, *next; m != &g->members; m = next) {
        next = m->next;
        if (!m->awaiting_join && !m->instance_id) {
            lg_info("group %s: removing member %s, which did not rejoin", g->id, m->id);
            grp_member_remove(c, m);
        }
    }
    if (!grp_elect_joined_leader(g) && g->nmembers) {
        lg_error("group %s: could not complete rebalance because no members rejoined", g->id);
        g->join_initial = false;
        grp_timer_arm(c, &g->join_timer, grp_rebalance_timeout(g));
        return;
    }
    grp_init_next_generation(c, g);
    if (g->state == GRP_EMPTY) {
        grp_recs_t recs;
        grp_recs_init(&recs);
        grp_recs_group(&recs, g, false, g->state_ts);
        grp_store(c, g, &recs, 0); /* a failure only loses an empty generation */
        grp_recs_free(&recs);
        lg_info("group %s with generation %d is now empty", g->id, g->generation);
        return;
    }
    lg_info("group %s: stabilized generation %d with %d members, protocol %s", g->id,
            g->generation, g->nmembers, g->protocol_name ? g->protocol_name : "(none)");
    grp_join_member_t *list = grp_member_list(g);
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next) {
        grp_join_result_t r;
        grp_join_ok(g, m, m == g->leader ? list : NULL, &r);
        grp_member_join_done(c, m, &r);
        grp_hb_schedule(c, m, m->session_timeout);
        m->is_new = false;
        m->pending_sync = true;
        g->npending_sync++;
    }
    free(list);
    g->sync_generation = g->generation;
    grp_timer_arm(c, &g->sync_timer, grp_rebalance_timeout(g));
}

void grp_join_check(grp_coord_t *c, grp_t *g)
{
    if (g->state == GRP_PREPARING_REBALANCE && !g->join_initial &&
        g->nmembers == g->nawaiting_join && g->pending.count == 0)
        grp_join_complete(c, g);
}

void grp_join_timer_cb(grp_timer_t *t)
{
    grp_t *g = GRP_CONTAINER(t, grp_t, join_timer);
    grp_coord_t *c = g->coord;
    if (g->state != GRP_PREPARING_REBALANCE)
        return;
    if (g->join_initial && g->new_member_added && g->join_remaining != 0) {
        /* Kafka's InitialDelayedJoin: a member came during the delay, so
         * wait once more, never beyond the rebalance timeout. */
        int64_t delay = c->cfg.initial_rebalance_delay_ms < g->join_remaining
                            ? c->cfg.initial_rebalance_delay_ms
                            : g->join_remaining;
        int64_t rest = g->join_remaining - g->join_delay;
        g->new_member_added = false;
        g->join_delay = delay;
        g->join_remaining = rest > 0 ? rest : 0;
        grp_timer_arm(c, &g->join_timer, delay);
        return;
    }
    grp_join_complete(c, g);
}

/* Kafka's onExpirePendingSync: members that did not send SyncGroup
 * within the rebalance timeout are removed. */
void grp_sync_timer_cb(grp_timer_t *t)
{
    grp_t *g = GRP_CONTAINER(t, grp_t, sync_timer);
    grp_coord_t *c = g->coord;
    if (g->sync_generation != g->generation || !g->npending_sync ||
        (g->state != GRP_COMPLETING_REBALANCE && g->state != GRP_STABLE))
        return;
    for (grp_member_t *m = g->members.next, *next; m != &g->members; m = next) {
        next = m->next;
        if (m->pending_sync) {
            lg_info("group %s: removing member %s, which sent no SyncGroup", g->id, m->id);
            grp_member_remove(c, m);
        }
    }
    grp_prepare_rebalance(c, g, "removing members on pending sync request expiration");
}

void grp_pending_timer_cb(grp_timer_t *t)
{
    grp_pending_t *p = GRP_CONTAINER(t, grp_pending_t, timer);
    grp_t *g = p->grp;
    grp_coord_t *c = g->coord;
    lg_info("group %s: pending member %s removed after session timeout", g->id, p->id);
    grp_pending_remove(c, g, p->id);
    grp_join_check(c, g);
}

void grp_hb_timer_cb(grp_timer_t *t)
{
    grp_member_t *m = GRP_CONTAINER(t, grp_member_t, hb_timer);
    grp_coord_t *c = m->grp->coord;
    int64_t now = grp_now(c);

    if (!m->hb_deadline)
        return;
    if (now < m->hb_deadline) {
        grp_timer_arm(c, &m->hb_timer, m->hb_deadline - now);
        return;
    }
    m->hb_deadline = 0;
    /* Kafka's hasSatisfiedHeartbeat at expiry: a parked member that is
     * not new is alive; a new one has had its 5 minutes. */
    if (!m->is_new && (m->awaiting_join || m->awaiting_sync))
        return;
    char reason[300];
    snprintf(reason, sizeof(reason), "removing member %s on heartbeat expiration", m->id);
    lg_info("group %s: member %s has failed (session timeout)", m->grp->id, m->id);
    grp_member_leave(c, m, reason);
}

void grp_member_leave(grp_coord_t *c, grp_member_t *m, const char *reason)
{
    grp_t *g = m->grp;
    grp_join_result_t r;
    grp_member_join_done(c, m, grp_join_err(&r, "", KERR_UNKNOWN_MEMBER_ID));
    grp_member_remove(c, m);
    switch (g->state) {
    case GRP_STABLE:
    case GRP_COMPLETING_REBALANCE:
        grp_maybe_prepare_rebalance(c, g, reason);
        break;
    case GRP_PREPARING_REBALANCE:
        grp_join_check(c, g);
        break;
    default:
        break;
    }
}

/* ---- JoinGroup ---- */

/* What a static member was before a new incarnation took its place. */
typedef struct grp_static_old_s {
    char *id;
    char *leader;
    grp_protocol_t *protocols;
    int nprotocols;
    int32_t rebalance_timeout, session_timeout;
} grp_static_old_t;

/* The replacement could not be persisted: the old member comes back as
 * it was, and the new incarnation is told so. */
static void grp_static_revert(grp_coord_t *c, grp_t *g, grp_member_t *m,
                              const grp_static_old_t *old, grp_waiter_t *w, int16_t err)
{
    grp_join_result_t r;
    grp_member_set_protocols(m, old->protocols, old->nprotocols);
    m->rebalance_timeout = old->rebalance_timeout;
    m->session_timeout = old->session_timeout;
    m->awaiting_join = false;
    g->nawaiting_join--;
    m->join_w = NULL;
    smap_del(&g->by_id, m->id, strlen(m->id));
    free(m->id);
    m->id = xstrdup(old->id);
    smap_put(&g->by_id, m->id, strlen(m->id), m);
    grp_hb_schedule(c, m, m->session_timeout);
    grp_join_err(&r, "", err);
    r.generation = g->generation;
    r.protocol_type = g->protocol_type;
    r.protocol_name = g->protocol_name;
    r.leader = old->leader ? old->leader : "";
    grp_reply_join(c, w, &r);
}

/* A returning static member of a stable group whose protocol would not
 * change: persist its new id and hand it the current generation. */
static void grp_join_static_stable(grp_coord_t *c, grp_t *g, grp_member_t *m,
                                   const grp_join_req_t *req, const grp_static_old_t *old,
                                   grp_waiter_t *w)
{
    grp_join_result_t r;
    grp_recs_t recs;

    grp_recs_init(&recs);
    grp_recs_group(&recs, g, true, grp_wall(c));
    int16_t err = grp_store(c, g, &recs, 0);
    grp_recs_free(&recs);
    if (err) {
        grp_static_revert(c, g, m, old, w, err);
        return;
    }
    bool leader = g->leader == m;
    grp_join_member_t *list = leader && req->support_skip_assignment ? grp_member_list(g) : NULL;
    grp_join_ok(g, m, list, &r);
    if (req->support_skip_assignment) {
        /* v9+: the leader learns it leads but keeps the assignment. */
        r.skip_assignment = leader;
    } else {
        /* Older clients: name the old leader id, so that a returning
         * leader does not run a trivial assignment a stable group would
         * never broadcast. */
        r.leader = old->leader ? old->leader : "";
    }
    grp_member_join_done(c, m, &r);
    free(list);
}

/* Kafka's updateStaticMemberAndRebalance: a known instance joins with a
 * new member id; the old id is fenced. In a stable group whose protocol
 * would not change, the member gets its place back without a rebalance. */
static void grp_join_static_known(grp_coord_t *c, grp_t *g, grp_member_t *m,
                                  const grp_join_req_t *req, const char *new_id, grp_waiter_t *w)
{
    grp_static_old_t old = {m->id, g->leader ? xstrdup(g->leader->id) : NULL, m->protocols,
                            m->nprotocols, m->rebalance_timeout, m->session_timeout};
    grp_join_result_t r;
    grp_sync_result_t s;

    grp_member_join_done(c, m, grp_join_err(&r, old.id, KERR_FENCED_INSTANCE_ID));
    grp_member_sync_done(c, m, grp_sync_err(&s, KERR_FENCED_INSTANCE_ID));
    smap_del(&g->by_id, old.id, strlen(old.id));
    m->id = xstrdup(new_id);
    smap_put(&g->by_id, m->id, strlen(m->id), m);
    grp_hb_schedule(c, m, m->session_timeout);
    m->protocols = NULL; /* kept in old */
    m->nprotocols = 0;
    grp_member_update(c, m, req, w);

    if (g->state == GRP_STABLE) {
        const char *next = grp_select_protocol(g);
        if (g->protocol_name && next && !strcmp(next, g->protocol_name))
            grp_join_static_stable(c, g, m, req, &old, w);
        else
            grp_maybe_prepare_rebalance(c, g, "static member joined with a change of protocol");
    } else if (g->state == GRP_COMPLETING_REBALANCE) {
        grp_prepare_rebalance(c, g, "static member rejoined during CompletingRebalance");
    }
    for (int i = 0; i < old.nprotocols; i++) {
        free(old.protocols[i].name);
        free(old.protocols[i].meta);
    }
    free(old.protocols);
    free(old.id);
    free(old.leader);
}

static void grp_join_new(grp_coord_t *c, grp_t *g, const grp_join_req_t *req, grp_waiter_t *w)
{
    if (!grp_supports(g, req)) {
        grp_join_fail(c, w, "", KERR_INCONSISTENT_GROUP_PROTOCOL);
        return;
    }
    char *id = grp_new_member_id(c, req);
    grp_member_t *old =
        req->instance_id ? smap_get(&g->by_instance, req->instance_id, strlen(req->instance_id))
                         : NULL;
    if (old) {
        lg_info("group %s: static member %s rejoins in state %s, replacing member %s", g->id,
                req->instance_id, grp_state_name(g->state), old->id);
        grp_join_static_known(c, g, old, req, id, w);
    } else if (!req->instance_id && req->require_known_member_id) {
        grp_pending_add(c, g, id, req->session_timeout);
        grp_join_fail(c, w, id, KERR_MEMBER_ID_REQUIRED);
    } else {
        grp_add_member(c, g, req, id, w);
    }
    free(id);
}

static void grp_join_current(grp_coord_t *c, grp_t *g, const grp_join_req_t *req, grp_waiter_t *w)
{
    const char *id = req->member_id;
    grp_join_result_t r;
    char reason[300];

    if (!grp_supports(g, req)) {
        grp_join_fail(c, w, id, KERR_INCONSISTENT_GROUP_PROTOCOL);
        return;
    }
    if (smap_get(&g->pending, id, strlen(id))) {
        if (req->instance_id)
            grp_join_fail(c, w, id, KERR_UNKNOWN_SERVER_ERROR);
        else
            grp_add_member(c, g, req, id, w);
        return;
    }
    int16_t err = grp_validate_member(g, id, req->instance_id);
    if (err) {
        grp_join_fail(c, w, id, err);
        return;
    }
    grp_member_t *m = grp_member_get(g, id);
    snprintf(reason, sizeof(reason), "member %s rejoins (%s)", id,
             req->reason ? req->reason : "no reason given");
    switch (g->state) {
    case GRP_PREPARING_REBALANCE:
        grp_member_update(c, m, req, w);
        break;
    case GRP_COMPLETING_REBALANCE:
        if (grp_protocols_match(m, req)) {
            /* The member missed our answer: give it again. */
            grp_join_member_t *list = m == g->leader ? grp_member_list(g) : NULL;
            grp_join_ok(g, m, list, &r);
            grp_reply_join(c, w, &r);
            free(list);
        } else {
            grp_member_update(c, m, req, w);
            grp_maybe_prepare_rebalance(c, g, reason);
        }
        break;
    case GRP_STABLE:
        if (m == g->leader || !grp_protocols_match(m, req)) {
            /* The leader rejoining asks for a new assignment (topic
             * metadata changed, say). */
            grp_member_update(c, m, req, w);
            grp_maybe_prepare_rebalance(c, g, reason);
        } else {
            grp_join_ok(g, m, NULL, &r);
            grp_reply_join(c, w, &r);
        }
        break;
    default:
        grp_join_fail(c, w, id, KERR_UNKNOWN_MEMBER_ID);
        break;
    }
}

/* Kafka's acceptJoiningMember (group.max.size). */
static bool grp_accept_joining(grp_coord_t *c, grp_t *g, const char *id)
{
    grp_member_t *m = *id ? grp_member_get(g, id) : NULL;
    switch (g->state) {
    case GRP_PREPARING_REBALANCE:
        return (m && m->awaiting_join) || g->nawaiting_join < c->cfg.max_size;
    case GRP_COMPLETING_REBALANCE:
    case GRP_STABLE:
        return m || g->nmembers < c->cfg.max_size;
    default:
        return true;
    }
}

static void grp_join_do(grp_coord_t *c, const grp_join_req_t *req, grp_waiter_t *w)
{
    const char *mid = req->member_id ? req->member_id : "";
    int16_t err = grp_validate_id(c, req->group_id, false);
    if (err) {
        grp_join_fail(c, w, mid, err);
        return;
    }
    if (req->session_timeout < c->cfg.min_session_timeout_ms ||
        req->session_timeout > c->cfg.max_session_timeout_ms) {
        grp_join_fail(c, w, mid, KERR_INVALID_SESSION_TIMEOUT);
        return;
    }
    grp_t *g = grp_get(c, req->group_id);
    if (!g && *mid) {
        grp_join_fail(c, w, mid, KERR_UNKNOWN_MEMBER_ID);
        return;
    }
    if (!g)
        g = grp_create(c, req->group_id);
    if (!grp_accept_joining(c, g, mid)) {
        grp_member_t *m = *mid ? grp_member_get(g, mid) : NULL;
        if (m)
            grp_member_remove(c, m);
        grp_pending_remove(c, g, mid);
        grp_join_fail(c, w, "", KERR_GROUP_MAX_SIZE_REACHED);
    } else if (!*mid) {
        grp_join_new(c, g, req, w);
    } else {
        grp_join_current(c, g, req, w);
    }
    grp_join_check(c, g);
}

bool grp_join(grp_coord_t *c, const grp_join_req_t *req, grp_waiter_t *w)
{
    w->member = NULL;
    c->cur_w = w;
    c->cur_answered = false;
    grp_join_do(c, req, w);
    bool parked = !c->cur_answered;
    c->cur_w = NULL;
    return parked;
}

/* ---- SyncGroup ---- */

static int16_t grp_sync_validate(grp_t *g, const grp_sync_req_t *req)
{
    int16_t err = grp_validate_member(g, req->member_id, req->instance_id);
    if (err)
        return err;
    if (req->generation != g->generation)
        return KERR_ILLEGAL_GENERATION;
    if (req->protocol_type &&
        (!g->protocol_type || strcmp(req->protocol_type, g->protocol_type)))
        return KERR_INCONSISTENT_GROUP_PROTOCOL;
    if (req->protocol_name &&
        (!g->protocol_name || strcmp(req->protocol_name, g->protocol_name)))
        return KERR_INCONSISTENT_GROUP_PROTOCOL;
    return KERR_NONE;
}

static void grp_pending_sync_done(grp_coord_t *c, grp_t *g, grp_member_t *m)
{
    if (m->pending_sync) {
        m->pending_sync = false;
        if (--g->npending_sync == 0)
            grp_timer_stop(c, &g->sync_timer);
    }
}

/* The leader's assignment: persist it with the group, then hand it out.
 * Members the leader left out get an empty assignment. */
static void grp_sync_leader(grp_coord_t *c, grp_t *g, const grp_sync_req_t *req)
{
    struct { const uint8_t *p; int32_t len; } *as = xcalloc((size_t)g->nmembers + 1, sizeof(*as));
    int i = 0;
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next, i++) {
        for (int j = 0; j < req->nassignments; j++)
            if (req->assignments[j].member_id && !strcmp(req->assignments[j].member_id, m->id)) {
                as[i].p = req->assignments[j].data;
                as[i].len = req->assignments[j].len < 0 ? 0 : req->assignments[j].len;
            }
        if (!as[i].p)
            lg_warn("group %s: empty assignment for member %s in generation %d", g->id, m->id,
                    g->generation);
    }
    /* The record needs the new assignment, the members get it only once
     * it is stored: swap it in for the encoding. */
    uint8_t **saved = xcalloc((size_t)g->nmembers + 1, sizeof(*saved));
    int32_t *saved_len = xcalloc((size_t)g->nmembers + 1, sizeof(*saved_len));
    i = 0;
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next, i++) {
        saved[i] = m->assignment;
        saved_len[i] = m->assignment_len;
        m->assignment = (uint8_t *)(as[i].p ? as[i].p : (const uint8_t *)"");
        m->assignment_len = as[i].len;
    }
    grp_recs_t recs;
    grp_recs_init(&recs);
    grp_recs_group(&recs, g, true, grp_wall(c));
    int16_t err = grp_store(c, g, &recs, 0);
    grp_recs_free(&recs);
    i = 0;
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next, i++) {
        m->assignment = saved[i];
        m->assignment_len = saved_len[i];
        if (!err) {
            free(m->assignment);
            m->assignment = xmalloc(as[i].len > 0 ? (size_t)as[i].len : 1);
            if (as[i].len > 0)
                memcpy(m->assignment, as[i].p, (size_t)as[i].len);
            m->assignment_len = as[i].len;
        }
    }
    free(saved);
    free(saved_len);
    free(as);
    if (err) {
        grp_reset_assignment_error(c, g, err);
        grp_maybe_prepare_rebalance(c, g, "error storing the group assignment");
        return;
    }
    grp_transition(c, g, GRP_STABLE);
    grp_propagate_assignment(c, g, KERR_NONE);
    lg_info("group %s: generation %d is stable", g->id, g->generation);
}

static void grp_sync_do(grp_coord_t *c, const grp_sync_req_t *req, grp_waiter_t *w)
{
    grp_sync_result_t r;
    int16_t err = grp_validate_id(c, req->group_id, false);
    grp_t *g = err ? NULL : grp_get(c, req->group_id);

    /* While loading, the rebalance in progress is lost: have the member
     * rejoin (older clients do not know COORDINATOR_LOAD_IN_PROGRESS). */
    if (err == KERR_COORDINATOR_LOAD_IN_PROGRESS)
        err = KERR_REBALANCE_IN_PROGRESS;
    else if (!err && !g)
        err = KERR_UNKNOWN_MEMBER_ID;
    else if (!err)
        err = grp_sync_validate(g, req);
    if (!err && g->state == GRP_EMPTY)
        err = KERR_UNKNOWN_MEMBER_ID;
    if (!err && g->state == GRP_PREPARING_REBALANCE)
        err = KERR_REBALANCE_IN_PROGRESS;
    if (err) {
        grp_reply_sync(c, w, grp_sync_err(&r, err));
        return;
    }
    grp_member_t *m = grp_member_get(g, req->member_id);
    if (g->state == GRP_STABLE) {
        grp_pending_sync_done(c, g, m);
        r = (grp_sync_result_t){0, g->protocol_type, g->protocol_name, m->assignment,
                                m->assignment_len};
        grp_reply_sync(c, w, &r);
        grp_hb_schedule(c, m, m->session_timeout);
        return;
    }
    /* CompletingRebalance: wait for the leader's assignment. */
    if (m->sync_w) {
        grp_waiter_t *old = m->sync_w;
        m->sync_w = NULL;
        grp_reply_sync(c, old, grp_sync_err(&r, KERR_REBALANCE_IN_PROGRESS));
    }
    m->awaiting_sync = true;
    m->sync_w = w;
    w->member = m;
    grp_pending_sync_done(c, g, m);
    if (m == g->leader) {
        lg_info("group %s: assignment received from leader %s for generation %d (%d members)",
                g->id, m->id, g->generation, g->nmembers);
        grp_sync_leader(c, g, req);
    }
}

bool grp_sync(grp_coord_t *c, const grp_sync_req_t *req, grp_waiter_t *w)
{
    w->member = NULL;
    c->cur_w = w;
    c->cur_answered = false;
    grp_sync_do(c, req, w);
    bool parked = !c->cur_answered;
    c->cur_w = NULL;
    return parked;
}

/* ---- Heartbeat, LeaveGroup ---- */

int16_t grp_heartbeat(grp_coord_t *c, const char *group_id, int32_t generation,
                      const char *member_id, const char *instance_id)
{
    int16_t err = grp_validate_id(c, group_id, false);
    if (err == KERR_COORDINATOR_LOAD_IN_PROGRESS)
        return KERR_NONE; /* Kafka answers blindly while loading */
    if (err)
        return err;
    grp_t *g = grp_get(c, group_id);
    if (!g)
        return KERR_UNKNOWN_MEMBER_ID;
    err = grp_validate_member(g, member_id, instance_id);
    if (err)
        return err;
    if (generation != g->generation)
        return KERR_ILLEGAL_GENERATION;
    grp_member_t *m = grp_member_get(g, member_id);
    switch (g->state) {
    case GRP_PREPARING_REBALANCE:
        grp_hb_schedule(c, m, m->session_timeout);
        return KERR_REBALANCE_IN_PROGRESS;
    case GRP_COMPLETING_REBALANCE:
    case GRP_STABLE:
        grp_hb_schedule(c, m, m->session_timeout);
        return KERR_NONE;
    default:
        return KERR_UNKNOWN_MEMBER_ID;
    }
}

static int16_t grp_leave_one(grp_coord_t *c, grp_t *g, const grp_leave_member_t *lm)
{
    const char *id = lm->member_id ? lm->member_id : "";
    char reason[300];

    snprintf(reason, sizeof(reason), "member %s%s%s left (%s)", id,
             lm->instance_id ? " of instance " : "", lm->instance_id ? lm->instance_id : "",
             lm->reason ? lm->reason : "no reason given");
    if (!*id) {
        /* Removal of a static member by instance id (admin tools). */
        grp_member_t *m =
            lm->instance_id ? smap_get(&g->by_instance, lm->instance_id, strlen(lm->instance_id))
                            : NULL;
        if (!m)
            return KERR_UNKNOWN_MEMBER_ID;
        lg_info("group %s: %s", g->id, reason);
        grp_member_leave(c, m, reason);
        return KERR_NONE;
    }
    if (smap_get(&g->pending, id, strlen(id))) {
        grp_pending_remove(c, g, id);
        grp_join_check(c, g);
        return KERR_NONE;
    }
    int16_t err = grp_validate_member(g, id, lm->instance_id);
    if (err)
        return err;
    lg_info("group %s: %s", g->id, reason);
    grp_member_leave(c, grp_member_get(g, id), reason);
    return KERR_NONE;
}

int16_t grp_leave(grp_coord_t *c, const char *group_id, grp_leave_member_t *members, int n)
{
    int16_t err = grp_validate_id(c, group_id, false);
    if (err)
        return err;
    grp_t *g = grp_get(c, group_id);
    for (int i = 0; i < n; i++)
        members[i].error = g ? grp_leave_one(c, g, &members[i]) : KERR_UNKNOWN_MEMBER_ID;
    return KERR_NONE;
}
