/* Unit tests of the group coordinator's state machine (coord/grp*.c),
 * driven with a fake clock, fake timers and an in-memory store. Each test
 * plays a scenario of JoinGroup/SyncGroup/Heartbeat/LeaveGroup/commit
 * calls and checks the exact answers and states Kafka's coordinator gives. */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coord/grp.h"
#include "coord/grp_rec.h"
#include "unit.h"
#include "util/mem.h"

/* ---- fake environment ---- */

#define MAXT 256
static int64_t now_ms;
static struct {
    uint64_t id;
    int64_t due;
    grp_timer_t *t;
} timers[MAXT];
static int ntimers;
static uint64_t next_tid = 1;
static uint32_t rnd;
static int16_t store_fail; /* error the next stores return */
static int32_t offline_part = -1; /* the __consumer_offsets partition that is offline */

/* Every record stored, in order, for replay tests. */
typedef struct srec_s {
    int32_t part;
    uint8_t *key;
    int32_t klen;
    uint8_t *val;
    int32_t vlen;
} srec_t;
static srec_t *stored;
static int nstored;

static int64_t f_now(void *ctx)
{
    (void)ctx;
    return now_ms;
}

static int64_t f_wall(void *ctx)
{
    (void)ctx;
    return 1700000000000LL + now_ms;
}

static uint64_t f_timer_add(void *ctx, int64_t ms, grp_timer_t *t)
{
    (void)ctx;
    CU_ASSERT_FATAL(ntimers < MAXT);
    timers[ntimers].id = next_tid++;
    timers[ntimers].due = now_ms + ms;
    timers[ntimers].t = t;
    return timers[ntimers++].id;
}

static void f_timer_cancel(void *ctx, grp_timer_t *t)
{
    (void)ctx;
    for (int i = 0; i < ntimers; i++)
        if (timers[i].t == t) {
            CU_ASSERT_EQUAL(timers[i].id, t->id);
            timers[i] = timers[--ntimers];
            return;
        }
    CU_FAIL("cancel of an unknown timer");
}

static void f_random(void *ctx, uint8_t out[16])
{
    (void)ctx;
    for (int i = 0; i < 16; i++)
        out[i] = (uint8_t)(++rnd * 37);
}

static int16_t f_store(void *ctx, int32_t part, const grp_recs_t *recs)
{
    (void)ctx;
    if (store_fail)
        return store_fail;
    for (int i = 0; i < recs->n; i++) {
        const struct grp_recs_ent_s *e = &recs->v[i];
        stored = xrealloc(stored, (size_t)(nstored + 1) * sizeof(*stored));
        srec_t *s = &stored[nstored++];
        s->part = part;
        s->klen = e->key_len;
        s->key = xmalloc((size_t)e->key_len + 1);
        memcpy(s->key, recs->data.p + e->key_off, (size_t)e->key_len);
        s->vlen = e->val_len;
        s->val = NULL;
        if (e->val_len >= 0) {
            s->val = xmalloc((size_t)e->val_len + 1);
            memcpy(s->val, recs->data.p + e->val_off, (size_t)e->val_len);
        }
    }
    return 0;
}

static bool f_offline(void *ctx, int32_t part)
{
    (void)ctx;
    return part == offline_part;
}

static const grp_env_t env = {NULL,     f_now,   f_wall,   f_timer_add, f_timer_cancel,
                              f_random, f_store, f_offline};

/* Runs due timers in order while moving the clock forward by ms. */
static void advance(int64_t ms)
{
    int64_t until = now_ms + ms;
    for (;;) {
        int best = -1;
        for (int i = 0; i < ntimers; i++)
            if (timers[i].due <= until && (best < 0 || timers[i].due < timers[best].due ||
                                           (timers[i].due == timers[best].due &&
                                            timers[i].id < timers[best].id)))
                best = i;
        if (best < 0)
            break;
        grp_timer_t *t = timers[best].t;
        if (timers[best].due > now_ms)
            now_ms = timers[best].due;
        timers[best] = timers[--ntimers];
        grp_timer_fire(t);
    }
    now_ms = until;
}

static void reset_env(void)
{
    for (int i = 0; i < nstored; i++) {
        free(stored[i].key);
        free(stored[i].val);
    }
    free(stored);
    stored = NULL;
    nstored = ntimers = 0;
    now_ms = 0;
    rnd = 0;
    store_fail = 0;
    offline_part = -1;
}

static void coord_free(grp_coord_t *c)
{
    grp_coord_free(c);
    CU_ASSERT_EQUAL(ntimers, 0);
}

static grp_coord_t *coord_new(int64_t initial_delay)
{
    grp_config_t cfg;
    grp_config_defaults(&cfg);
    cfg.initial_rebalance_delay_ms = initial_delay;
    reset_env();
    return grp_coord_new(&cfg, &env);
}

/* ---- waiters ---- */

typedef struct tw_s {
    grp_waiter_t w;
    int answered;
    int16_t error;
    char member_id[128];
    int32_t generation;
    char leader[128];
    char protocol[32];
    int nmembers;
    int skip;
    uint8_t assignment[64];
    int32_t assignment_len;
} tw_t;

static void tw_join_done(grp_waiter_t *w, const grp_join_result_t *r)
{
    tw_t *t = (tw_t *)w;
    t->answered++;
    t->error = r->error;
    snprintf(t->member_id, sizeof(t->member_id), "%s", r->member_id);
    t->generation = r->generation;
    snprintf(t->leader, sizeof(t->leader), "%s", r->leader ? r->leader : "(null)");
    snprintf(t->protocol, sizeof(t->protocol), "%s", r->protocol_name ? r->protocol_name : "(null)");
    t->nmembers = r->nmembers;
    t->skip = r->skip_assignment;
}

static void tw_sync_done(grp_waiter_t *w, const grp_sync_result_t *r)
{
    tw_t *t = (tw_t *)w;
    t->answered++;
    t->error = r->error;
    t->assignment_len = r->assignment_len;
    if (r->assignment_len > 0 && r->assignment_len <= 64)
        memcpy(t->assignment, r->assignment, (size_t)r->assignment_len);
    snprintf(t->protocol, sizeof(t->protocol), "%s", r->protocol_name ? r->protocol_name : "(null)");
}

static void tw_init(tw_t *t)
{
    memset(t, 0, sizeof(*t));
    t->w.join_done = tw_join_done;
    t->w.sync_done = tw_sync_done;
}

static grp_protocol_t P_RANGE[] = {{"range", (uint8_t *)"R", 1}};
static grp_protocol_t P_RANGE_RR[] = {{"range", (uint8_t *)"R", 1}, {"roundrobin", (uint8_t *)"X", 1}};
static grp_protocol_t P_RR_RANGE[] = {{"roundrobin", (uint8_t *)"X", 1}, {"range", (uint8_t *)"R", 1}};
static grp_protocol_t P_RR[] = {{"roundrobin", (uint8_t *)"X", 1}};

/* A JoinGroup v5 (v4+: member id required for dynamic members). */
static bool join(grp_coord_t *c, tw_t *t, const char *group, const char *member,
                 const char *instance, const grp_protocol_t *p, int np)
{
    grp_join_req_t r = {.group_id = group, .member_id = member, .instance_id = instance,
                        .client_id = "cli", .client_host = "/127.0.0.1",
                        .session_timeout = 10000, .rebalance_timeout = 30000,
                        .protocol_type = "consumer", .nprotocols = np, .protocols = p,
                        .require_known_member_id = instance == NULL};
    tw_init(t);
    return grp_join(c, &r, &t->w);
}

/* A dynamic member's first join: MEMBER_ID_REQUIRED, then again with
 * the id. Returns whether the second join parked. */
static bool join_new_id(grp_coord_t *c, tw_t *t, const char *group, const grp_protocol_t *p,
                        int np, char id[128])
{
    CU_ASSERT_FALSE(join(c, t, group, "", NULL, p, np));
    CU_ASSERT_EQUAL(t->error, KERR_MEMBER_ID_REQUIRED);
    CU_ASSERT(strncmp(t->member_id, "cli-", 4) == 0);
    CU_ASSERT_EQUAL(strlen(t->member_id), 4 + 36);
    snprintf(id, 128, "%s", t->member_id);
    return join(c, t, group, id, NULL, p, np);
}

/* The member id goes into the test's idN variable named after the
 * waiter (j1 -> id1); for arrays and others, use join_new_id. */
#define join_new(c, t, g, p, np) join_new_id(c, t, g, p, np, join_new_scratch)
static char join_new_scratch[128];

static bool sync_(grp_coord_t *c, tw_t *t, const char *group, int32_t gen, const char *member,
                  const grp_assignment_t *a, int na)
{
    grp_sync_req_t r = {.group_id = group, .generation = gen, .member_id = member,
                        .nassignments = na, .assignments = a};
    tw_init(t);
    return grp_sync(c, &r, &t->w);
}

static grp_t *group(grp_coord_t *c, const char *id)
{
    grp_t *g = NULL;
    CU_ASSERT_EQUAL(grp_describe(c, id, &g), 0);
    return g;
}

/* ---- scenarios ---- */

/* One member: MEMBER_ID_REQUIRED, the initial delay, leader, sync. */
static void test_single_member(void)
{
    grp_coord_t *c = coord_new(3000);
    tw_t j, s;
    char id[128];

    CU_ASSERT_TRUE(join_new_id(c, &j, "g", P_RANGE, 1, id));
    CU_ASSERT_EQUAL(j.answered, 0);
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_PREPARING_REBALANCE);
    advance(2999);
    CU_ASSERT_EQUAL(j.answered, 0);
    advance(1);
    CU_ASSERT_EQUAL_FATAL(j.answered, 1);
    CU_ASSERT_EQUAL(j.error, 0);
    CU_ASSERT_EQUAL(j.generation, 1);
    CU_ASSERT_STRING_EQUAL(j.leader, id);
    CU_ASSERT_STRING_EQUAL(j.member_id, id);
    CU_ASSERT_STRING_EQUAL(j.protocol, "range");
    CU_ASSERT_EQUAL(j.nmembers, 1);
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_COMPLETING_REBALANCE);

    /* Heartbeats and commits while completing. */
    CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 1, id, NULL), 0);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 0, id, NULL), KERR_ILLEGAL_GENERATION);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 1, "nobody", NULL), KERR_UNKNOWN_MEMBER_ID);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "nogroup", 1, id, NULL), KERR_UNKNOWN_MEMBER_ID);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "", 1, id, NULL), KERR_INVALID_GROUP_ID);

    grp_assignment_t a = {id, (const uint8_t *)"ASSIGN", 6};
    CU_ASSERT_FALSE(sync_(c, &s, "g", 1, id, &a, 1));
    CU_ASSERT_EQUAL(s.answered, 1);
    CU_ASSERT_EQUAL(s.error, 0);
    CU_ASSERT_EQUAL(s.assignment_len, 6);
    CU_ASSERT(memcmp(s.assignment, "ASSIGN", 6) == 0);
    CU_ASSERT_STRING_EQUAL(s.protocol, "range");
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_STABLE);
    /* The group record holds the assignment. */
    CU_ASSERT_EQUAL_FATAL(nstored, 1);
    CU_ASSERT_EQUAL(stored[0].part, grp_rec_partition_for("g", 1, 50));
    {
        arena_t ar;
        grp_rec_group_t rg;
        arena_init(&ar, 1024);
        CU_ASSERT_EQUAL_FATAL(grp_rec_group_decode(stored[0].val, (size_t)stored[0].vlen, &rg, &ar), 0);
        CU_ASSERT_EQUAL(rg.generation, 1);
        CU_ASSERT_EQUAL_FATAL(rg.nmembers, 1);
        CU_ASSERT_EQUAL(rg.members[0].assignment.len, 6);
        CU_ASSERT_EQUAL(rg.members[0].subscription.len, 1);
        CU_ASSERT_EQUAL(rg.members[0].session_timeout, 10000);
        arena_destroy(&ar);
    }
    /* A second SyncGroup in Stable gives the same assignment. */
    CU_ASSERT_FALSE(sync_(c, &s, "g", 1, id, NULL, 0));
    CU_ASSERT_EQUAL(s.assignment_len, 6);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 1, id, NULL), 0);
    coord_free(c);
}

/* A second member joins a stable group: the first one learns it from its
 * heartbeat, rejoins, and both get generation 2 with one leader. */
static void test_two_members(void)
{
    grp_coord_t *c = coord_new(0);
    tw_t j1, j2, s1, s2;
    char id1[128], id2[128];

    CU_ASSERT_TRUE(join_new_id(c, &j1, "g", P_RANGE, 1, id1));
    advance(0);
    CU_ASSERT_EQUAL_FATAL(j1.answered, 1);
    CU_ASSERT_FALSE(sync_(c, &s1, "g", 1, id1, NULL, 0));
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_STABLE);

    CU_ASSERT_TRUE(join_new_id(c, &j2, "g", P_RANGE, 1, id2));
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_PREPARING_REBALANCE);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 1, id1, NULL), KERR_REBALANCE_IN_PROGRESS);
    /* SyncGroup and commits during the rebalance. */
    CU_ASSERT_FALSE(sync_(c, &s1, "g", 1, id1, NULL, 0));
    CU_ASSERT_EQUAL(s1.error, KERR_REBALANCE_IN_PROGRESS);
    /* The last one to rejoin completes the join phase: answered at once. */
    CU_ASSERT_FALSE(join(c, &j1, "g", id1, NULL, P_RANGE, 1));
    CU_ASSERT_EQUAL(j2.answered, 1);
    CU_ASSERT_EQUAL(j1.answered, 1);
    CU_ASSERT_EQUAL(j1.generation, 2);
    CU_ASSERT_EQUAL(j2.generation, 2);
    CU_ASSERT_STRING_EQUAL(j1.leader, id1);
    CU_ASSERT_STRING_EQUAL(j2.leader, id1);
    CU_ASSERT_EQUAL(j1.nmembers, 2);
    CU_ASSERT_EQUAL(j2.nmembers, 0);

    /* The follower syncs first and waits for the leader. */
    CU_ASSERT_TRUE(sync_(c, &s2, "g", 2, id2, NULL, 0));
    grp_assignment_t a[2] = {{id1, (const uint8_t *)"A1", 2}, {id2, (const uint8_t *)"A22", 3}};
    CU_ASSERT_FALSE(sync_(c, &s1, "g", 2, id1, a, 2));
    CU_ASSERT_EQUAL(s1.answered, 1);
    CU_ASSERT_EQUAL(s1.assignment_len, 2);
    CU_ASSERT_EQUAL(s2.answered, 1);
    CU_ASSERT_EQUAL(s2.error, 0);
    CU_ASSERT_EQUAL(s2.assignment_len, 3);
    CU_ASSERT(memcmp(s2.assignment, "A22", 3) == 0);
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_STABLE);
    CU_ASSERT_EQUAL(group(c, "g")->generation, 2);

    /* A follower rejoining with the same metadata in Stable just gets the
     * current generation; no rebalance. */
    CU_ASSERT_FALSE(join(c, &j2, "g", id2, NULL, P_RANGE, 1));
    CU_ASSERT_EQUAL(j2.error, 0);
    CU_ASSERT_EQUAL(j2.generation, 2);
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_STABLE);
    /* The leader rejoining forces a rebalance. */
    CU_ASSERT_TRUE(join(c, &j1, "g", id1, NULL, P_RANGE, 1));
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_PREPARING_REBALANCE);
    coord_free(c);
}

/* Members that stop heartbeating are removed after the session timeout,
 * and the rest rebalance. */
static void test_session_timeout(void)
{
    grp_coord_t *c = coord_new(0);
    tw_t j1, j2, s1, s2;
    char id1[128], id2[128];

    CU_ASSERT_TRUE(join_new_id(c, &j1, "g", P_RANGE, 1, id1));
    CU_ASSERT_TRUE(join_new_id(c, &j2, "g", P_RANGE, 1, id2));
    advance(0);
    CU_ASSERT_EQUAL_FATAL(j1.answered + j2.answered, 2);
    CU_ASSERT_EQUAL(j1.generation, 1);
    CU_ASSERT_TRUE(sync_(c, &s2, "g", 1, id2, NULL, 0));
    CU_ASSERT_FALSE(sync_(c, &s1, "g", 1, id1, NULL, 0));
    CU_ASSERT_EQUAL(s2.answered, 1);
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_STABLE);
    /* Member 1 heartbeats every 3 s, member 2 is silent. */
    for (int i = 0; i < 3; i++) {
        advance(3000);
        CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 1, id1, NULL), 0);
    }
    advance(1000); /* 10 s since member 2's last sign of life */
    CU_ASSERT_EQUAL(group(c, "g")->nmembers, 1);
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_PREPARING_REBALANCE);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 1, id2, NULL), KERR_UNKNOWN_MEMBER_ID);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 1, id1, NULL), KERR_REBALANCE_IN_PROGRESS);
    CU_ASSERT_FALSE(join(c, &j1, "g", id1, NULL, P_RANGE, 1));
    CU_ASSERT_EQUAL(j1.generation, 2);
    CU_ASSERT_EQUAL(j1.nmembers, 1);
    coord_free(c);
}

/* Protocol selection: each member votes for its preferred protocol among
 * those all support. */
static void test_protocol_vote(void)
{
    grp_coord_t *c = coord_new(0);
    tw_t j[3];
    char id[3][128];

    CU_ASSERT_TRUE(join_new(c, &j[0], "g", P_RANGE_RR, 2));
    CU_ASSERT_TRUE(join_new(c, &j[1], "g", P_RR_RANGE, 2));
    CU_ASSERT_TRUE(join_new(c, &j[2], "g", P_RR_RANGE, 2));
    for (int i = 0; i < 3; i++)
        snprintf(id[i], sizeof(id[i]), "%s", j[i].member_id);
    advance(0);
    CU_ASSERT_STRING_EQUAL(j[0].protocol, "roundrobin");
    CU_ASSERT_STRING_EQUAL(j[2].protocol, "roundrobin");
    /* A member that supports none of the group's protocols is refused. */
    tw_t k;
    CU_ASSERT_FALSE(join(c, &k, "g", "", NULL, NULL, 0));
    CU_ASSERT_EQUAL(k.error, KERR_INCONSISTENT_GROUP_PROTOCOL);
    grp_protocol_t other[] = {{"sticky", (uint8_t *)"", 0}};
    CU_ASSERT_FALSE(join(c, &k, "g", "", NULL, other, 1));
    CU_ASSERT_EQUAL(k.error, KERR_INCONSISTENT_GROUP_PROTOCOL);
    /* One that only has roundrobin is fine. */
    CU_ASSERT_FALSE(join(c, &k, "g", "", NULL, P_RR, 1));
    CU_ASSERT_EQUAL(k.error, KERR_MEMBER_ID_REQUIRED);
    (void)id;
    coord_free(c);
}

/* Static membership: a restarted instance gets its place back in a stable
 * group without a rebalance, and the old member id is fenced. */
static void test_static_member(void)
{
    grp_coord_t *c = coord_new(0);
    tw_t j, s, j2;
    char id[128], id2[128];

    CU_ASSERT_TRUE(join(c, &j, "g", "", "inst-1", P_RANGE, 1));
    advance(0);
    CU_ASSERT_EQUAL_FATAL(j.answered, 1);
    CU_ASSERT_EQUAL(j.error, 0);
    CU_ASSERT(strncmp(j.member_id, "inst-1-", 7) == 0);
    snprintf(id, sizeof(id), "%s", j.member_id);
    grp_assignment_t a = {id, (const uint8_t *)"AS", 2};
    CU_ASSERT_FALSE(sync_(c, &s, "g", 1, id, &a, 1));
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_STABLE);
    int before = nstored;

    /* Restart: unknown member id, same instance, same protocols. */
    CU_ASSERT_FALSE(join(c, &j2, "g", "", "inst-1", P_RANGE, 1));
    CU_ASSERT_EQUAL(j2.error, 0);
    CU_ASSERT_EQUAL(j2.generation, 1);
    snprintf(id2, sizeof(id2), "%s", j2.member_id);
    CU_ASSERT(strcmp(id, id2) != 0);
    /* Before v9 the old leader id is named, so it does not reassign. */
    CU_ASSERT_STRING_EQUAL(j2.leader, id);
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_STABLE);
    CU_ASSERT_EQUAL(group(c, "g")->generation, 1);
    CU_ASSERT_EQUAL(nstored, before + 1); /* the new member id is persisted */
    CU_ASSERT_FALSE(sync_(c, &s, "g", 1, id2, NULL, 0));
    CU_ASSERT_EQUAL(s.error, 0);
    CU_ASSERT_EQUAL(s.assignment_len, 2);

    /* The old incarnation is fenced. */
    grp_heartbeat(c, "g", 1, id, NULL);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 1, id, "inst-1"), KERR_FENCED_INSTANCE_ID);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 1, id2, "inst-1"), 0);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 1, id2, "inst-2"), KERR_UNKNOWN_MEMBER_ID);
    grp_commit_part_t p = {PROTO_STR("t"), 0, 10, -1, PROTO_STR_NULL, 0};
    grp_commit_req_t cr = {"g", 1, id, "inst-1", -1, 7, 1, &p};
    grp_commit(c, &cr);
    CU_ASSERT_EQUAL(p.error, KERR_FENCED_INSTANCE_ID);

    /* A static member that is not back in time is not removed by
     * JoinGroup of others until its session times out. */
    advance(10001);
    CU_ASSERT_EQUAL(group(c, "g")->nmembers, 0);
    coord_free(c);
}

/* A static member's new id that cannot be stored is undone: the old
 * incarnation stays, the new one gets the mapped store error. */
static void test_static_store_failure(void)
{
    grp_coord_t *c = coord_new(0);
    tw_t j, s, j2;
    char id[128];

    CU_ASSERT_TRUE(join(c, &j, "g", "", "inst-1", P_RANGE, 1));
    advance(0);
    snprintf(id, sizeof(id), "%s", j.member_id);
    CU_ASSERT_FALSE(sync_(c, &s, "g", 1, id, NULL, 0));
    store_fail = KERR_KAFKA_STORAGE_ERROR;
    CU_ASSERT_FALSE(join(c, &j2, "g", "", "inst-1", P_RANGE, 1));
    store_fail = 0;
    CU_ASSERT_EQUAL(j2.error, KERR_NOT_COORDINATOR);
    CU_ASSERT_STRING_EQUAL(j2.member_id, "");
    CU_ASSERT_EQUAL(j2.generation, 1);
    CU_ASSERT_STRING_EQUAL(j2.leader, id);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "g", 1, id, "inst-1"), 0);
    CU_ASSERT_EQUAL(group(c, "g")->nawaiting_join, 0);
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_STABLE);
    coord_free(c);
}

/* LeaveGroup: the others rebalance; an unknown member gets its error. */
static void test_leave(void)
{
    grp_coord_t *c = coord_new(0);
    tw_t j1, j2, s1, s2;
    char id1[128], id2[128];

    CU_ASSERT_TRUE(join_new_id(c, &j1, "g", P_RANGE, 1, id1));
    CU_ASSERT_TRUE(join_new_id(c, &j2, "g", P_RANGE, 1, id2));
    advance(0);
    CU_ASSERT_TRUE(sync_(c, &s2, "g", 1, id2, NULL, 0));
    CU_ASSERT_FALSE(sync_(c, &s1, "g", 1, id1, NULL, 0));
    CU_ASSERT_EQUAL(s2.answered, 1);
    grp_leave_member_t lm[2] = {{id2, NULL, "bye", 0}, {"ghost", NULL, NULL, 0}};
    CU_ASSERT_EQUAL(grp_leave(c, "g", lm, 2), 0);
    CU_ASSERT_EQUAL(lm[0].error, 0);
    CU_ASSERT_EQUAL(lm[1].error, KERR_UNKNOWN_MEMBER_ID);
    CU_ASSERT_EQUAL(group(c, "g")->nmembers, 1);
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_PREPARING_REBALANCE);
    CU_ASSERT_FALSE(join(c, &j1, "g", id1, NULL, P_RANGE, 1));
    CU_ASSERT_EQUAL(j1.generation, 2);
    grp_leave_member_t last = {id1, NULL, NULL, 0};
    CU_ASSERT_EQUAL(grp_leave(c, "nogroup", &last, 1), 0);
    CU_ASSERT_EQUAL(last.error, KERR_UNKNOWN_MEMBER_ID);
    CU_ASSERT_EQUAL(grp_leave(c, "g", &last, 1), 0);
    CU_ASSERT_EQUAL(last.error, 0);
    /* The last member left a completing group: a new (empty) generation. */
    advance(30000);
    CU_ASSERT_EQUAL(group(c, "g")->state, GRP_EMPTY);
    CU_ASSERT_EQUAL(group(c, "g")->generation, 3);
    coord_free(c);
}

/* Offsets: simple commits, commits from members, errors. */
static void test_commit_fetch(void)
{
    grp_coord_t *c = coord_new(0);
    grp_t *g;

    grp_commit_part_t p[2] = {{PROTO_STR("t"), 0, 100, 4, PROTO_STR("meta"), 0},
                              {PROTO_STR("t"), 1, 200, -1, PROTO_STR_NULL, 0}};
    grp_commit_req_t cr = {"simple", -1, "", NULL, -1, 8, 2, p};
    grp_commit(c, &cr);
    CU_ASSERT_EQUAL(p[0].error, 0);
    CU_ASSERT_EQUAL(p[1].error, 0);
    CU_ASSERT_EQUAL(nstored, 2);
    CU_ASSERT_EQUAL(grp_offsets_group(c, "simple", &g), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    const grp_offset_t *o = grp_offset_get(g, "t", 1, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(o);
    CU_ASSERT_EQUAL(o->offset, 100);
    CU_ASSERT_EQUAL(o->leader_epoch, 4);
    CU_ASSERT_STRING_EQUAL(o->metadata, "meta");
    o = grp_offset_get(g, "t", 1, 1);
    CU_ASSERT_STRING_EQUAL(o->metadata, "");
    CU_ASSERT_PTR_NULL(grp_offset_get(g, "t", 1, 2));
    CU_ASSERT_PTR_NULL(g->protocol_type);

    /* Unknown group with a generation: v8 ILLEGAL_GENERATION, v9
     * GROUP_ID_NOT_FOUND. */
    grp_commit_part_t q = {PROTO_STR("t"), 0, 1, -1, PROTO_STR_NULL, 0};
    grp_commit_req_t cq = {"nope", 3, "m", NULL, -1, 8, 1, &q};
    grp_commit(c, &cq);
    CU_ASSERT_EQUAL(q.error, KERR_ILLEGAL_GENERATION);
    q.error = 0;
    cq.api_version = 9;
    grp_commit(c, &cq);
    CU_ASSERT_EQUAL(q.error, KERR_GROUP_ID_NOT_FOUND);
    /* Metadata too large: only that partition fails. */
    char big[5000];
    memset(big, 'x', sizeof(big));
    grp_commit_part_t r2[2] = {{PROTO_STR("t"), 0, 5, -1, {big, 4097}, 0},
                               {PROTO_STR("t"), 1, 6, -1, {big, 4096}, 0}};
    grp_commit_req_t cr2 = {"simple", -1, "", NULL, -1, 8, 2, r2};
    grp_commit(c, &cr2);
    CU_ASSERT_EQUAL(r2[0].error, KERR_OFFSET_METADATA_TOO_LARGE);
    CU_ASSERT_EQUAL(r2[1].error, 0);
    CU_ASSERT_EQUAL(grp_offset_get(g, "t", 1, 0)->offset, 100);
    CU_ASSERT_EQUAL(grp_offset_get(g, "t", 1, 1)->offset, 6);
    /* A failing store fails every partition with the mapped error. */
    store_fail = KERR_KAFKA_STORAGE_ERROR;
    r2[1].error = 0;
    r2[0].error = 0;
    r2[0].metadata = PROTO_STR_NULL;
    grp_commit(c, &cr2);
    CU_ASSERT_EQUAL(r2[0].error, KERR_NOT_COORDINATOR);
    CU_ASSERT_EQUAL(r2[1].error, KERR_NOT_COORDINATOR);
    CU_ASSERT_EQUAL(grp_offset_get(g, "t", 1, 0)->offset, 100);
    store_fail = 0;

    /* A consumer group: members only, not while completing. */
    tw_t j, s;
    char id[128];
    CU_ASSERT_TRUE(join_new_id(c, &j, "cg", P_RANGE, 1, id));
    advance(0);
    grp_commit_part_t m1 = {PROTO_STR("t"), 0, 7, -1, PROTO_STR_NULL, 0};
    grp_commit_req_t cm = {"cg", 1, id, NULL, -1, 8, 1, &m1};
    grp_commit(c, &cm);
    CU_ASSERT_EQUAL(m1.error, KERR_REBALANCE_IN_PROGRESS);
    sync_(c, &s, "cg", 1, id, NULL, 0);
    m1.error = 0;
    grp_commit(c, &cm);
    CU_ASSERT_EQUAL(m1.error, 0);
    m1.error = 0;
    cm.generation = 0;
    grp_commit(c, &cm);
    CU_ASSERT_EQUAL(m1.error, KERR_ILLEGAL_GENERATION);
    m1.error = 0;
    grp_commit_req_t anon = {"cg", -1, "", NULL, -1, 8, 1, &m1};
    grp_commit(c, &anon);
    CU_ASSERT_EQUAL(m1.error, KERR_UNKNOWN_MEMBER_ID);
    coord_free(c);
}

/* Everything written replays into the same state: a stable group with
 * its members (heartbeats accepted, same generation), offsets, and
 * deleted offsets and groups stay deleted. */
static void test_replay(void)
{
    grp_coord_t *c = coord_new(0);
    tw_t j, s;
    char id[128];

    CU_ASSERT_TRUE(join_new_id(c, &j, "cg", P_RANGE, 1, id));
    advance(0);
    grp_assignment_t a = {id, (const uint8_t *)"A", 1};
    sync_(c, &s, "cg", 1, id, &a, 1);
    grp_commit_part_t p[2] = {{PROTO_STR("t"), 0, 10, 1, PROTO_STR("m"), 0},
                              {PROTO_STR("t"), 1, 11, 1, PROTO_STR(""), 0}};
    grp_commit_req_t cr = {"cg", 1, id, NULL, -1, 8, 2, p};
    grp_commit(c, &cr);
    p[0].offset = 20;
    grp_commit(c, &cr);
    grp_commit_part_t q = {PROTO_STR("u"), 3, 5, -1, PROTO_STR_NULL, 0};
    grp_commit_req_t cq = {"gone", -1, "", NULL, -1, 8, 1, &q};
    grp_commit(c, &cq);
    CU_ASSERT_EQUAL(grp_delete(c, "gone"), 0);
    CU_ASSERT_EQUAL(grp_delete(c, "gone"), KERR_GROUP_ID_NOT_FOUND);
    CU_ASSERT_EQUAL(grp_delete(c, "cg"), KERR_NON_EMPTY_GROUP);
    grp_offset_del_t od = {PROTO_STR("t"), 1, 0};
    /* The group consumes t (unknown subscription metadata "R"): refused. */
    CU_ASSERT_EQUAL(grp_offset_delete(c, "cg", &od, 1), 0);
    CU_ASSERT_EQUAL(od.error, KERR_GROUP_SUBSCRIBED_TO_TOPIC);
    /* The partition's live state alone rebuilds the same group. */
    int32_t cgpart = grp_rec_partition_for("cg", 2, 50);
    grp_recs_t snap;
    grp_recs_init(&snap);
    CU_ASSERT_EQUAL(grp_part_snapshot(c, cgpart, &snap), 3); /* group + 2 offsets */
    coord_free(c);
    {
        grp_config_t sc;
        grp_config_defaults(&sc);
        grp_coord_t *c2 = grp_coord_new(&sc, &env);
        grp_load_begin(c2, cgpart);
        for (int i = 0; i < snap.n; i++)
            CU_ASSERT_EQUAL(grp_load_record(c2, cgpart, snap.data.p + snap.v[i].key_off,
                                            snap.v[i].key_len, snap.data.p + snap.v[i].val_off,
                                            snap.v[i].val_len), 0);
        grp_load_end(c2, cgpart);
        grp_t *g2 = group(c2, "cg");
        CU_ASSERT_PTR_NOT_NULL_FATAL(g2);
        CU_ASSERT_EQUAL(g2->state, GRP_STABLE);
        CU_ASSERT_EQUAL(g2->generation, 1);
        CU_ASSERT_EQUAL(g2->nmembers, 1);
        CU_ASSERT_EQUAL(grp_offset_get(g2, "t", 1, 0)->offset, 20);
        CU_ASSERT_EQUAL(grp_offset_get(g2, "t", 1, 1)->offset, 11);
        coord_free(c2);
    }
    grp_recs_free(&snap);

    /* Replay into a fresh coordinator. */
    grp_config_t cfg;
    grp_config_defaults(&cfg);
    c = grp_coord_new(&cfg, &env);
    int32_t part = grp_rec_partition_for("cg", 2, 50);
    grp_load_begin(c, part);
    grp_t *g = NULL;
    CU_ASSERT_EQUAL(grp_describe(c, "cg", &g), KERR_COORDINATOR_LOAD_IN_PROGRESS);
    CU_ASSERT_EQUAL(grp_heartbeat(c, "cg", 1, id, NULL), 0); /* blind while loading */
    for (int i = 0; i < nstored; i++) {
        grp_load_begin(c, stored[i].part);
        CU_ASSERT_EQUAL(grp_load_record(c, stored[i].part, stored[i].key, stored[i].klen,
                                        stored[i].val, stored[i].vlen), 0);
    }
    for (int i = 0; i < 50; i++)
        grp_load_end(c, i);
    g = group(c, "cg");
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(g->state, GRP_STABLE);
    CU_ASSERT_EQUAL(g->generation, 1);
    CU_ASSERT_EQUAL(g->nmembers, 1);
    CU_ASSERT_STRING_EQUAL(g->protocol_name, "range");
    CU_ASSERT_EQUAL(grp_offset_get(g, "t", 1, 0)->offset, 20);
    CU_ASSERT_EQUAL(grp_offset_get(g, "t", 1, 0)->leader_epoch, 1);
    CU_ASSERT_STRING_EQUAL(grp_offset_get(g, "t", 1, 0)->metadata, "m");
    CU_ASSERT_EQUAL(grp_offset_get(g, "t", 1, 1)->offset, 11);
    grp_t *gone = NULL;
    CU_ASSERT_EQUAL(grp_describe(c, "gone", &gone), 0);
    CU_ASSERT_PTR_NULL(gone);
    /* The member carries on without rejoining, assignment included. */
    CU_ASSERT_EQUAL(grp_heartbeat(c, "cg", 1, id, NULL), 0);
    CU_ASSERT_FALSE(sync_(c, &s, "cg", 1, id, NULL, 0));
    CU_ASSERT_EQUAL(s.error, 0);
    CU_ASSERT_EQUAL(s.assignment_len, 1);
    /* ... and expires like any member when it does not come back. */
    advance(10001);
    CU_ASSERT_EQUAL(g->nmembers, 0);
    coord_free(c);
}

/* offsets.retention.minutes: an empty group's offsets expire from when
 * it became empty; the group goes with them. A group with members keeps
 * the offsets of topics it consumes. */
static void test_expiry(void)
{
    grp_config_t cfg;
    grp_config_defaults(&cfg);
    cfg.offsets_retention_check_ms = 0; /* driven by hand */
    reset_env();
    grp_coord_t *c = grp_coord_new(&cfg, &env);
    grp_commit_part_t p = {PROTO_STR("t"), 0, 10, -1, PROTO_STR_NULL, 0};
    grp_commit_req_t cr = {"old", -1, "", NULL, -1, 8, 1, &p};
    grp_commit(c, &cr);
    grp_commit_part_t q = {PROTO_STR("t"), 0, 10, -1, PROTO_STR_NULL, 0};
    grp_commit_req_t cq = {"ret", -1, "", NULL, 60000, 2, 1, &q}; /* v2 retention time */
    grp_commit(c, &cq);
    int64_t week = 7LL * 24 * 3600 * 1000;
    CU_ASSERT_EQUAL(grp_expire_offsets(c), 0);
    advance(60000);
    CU_ASSERT_EQUAL(grp_expire_offsets(c), 1); /* "ret" expired by its own retention */
    grp_t *g = NULL;
    grp_describe(c, "ret", &g);
    CU_ASSERT_PTR_NULL(g);
    advance(week - 60000 - 1);
    CU_ASSERT_EQUAL(grp_expire_offsets(c), 0);
    advance(1);
    CU_ASSERT_EQUAL(grp_expire_offsets(c), 1);
    grp_describe(c, "old", &g);
    CU_ASSERT_PTR_NULL(g);
    /* Tombstones: offset and group. */
    CU_ASSERT_EQUAL(stored[nstored - 1].vlen, -1);
    CU_ASSERT_EQUAL(stored[nstored - 2].vlen, -1);
    coord_free(c);
}

/* A deleted topic's offsets go from every group, with tombstones. */
static void test_topic_deleted(void)
{
    grp_coord_t *c = coord_new(0);
    grp_commit_part_t p[3] = {{PROTO_STR("a"), 0, 1, -1, PROTO_STR_NULL, 0},
                              {PROTO_STR("a"), 1, 2, -1, PROTO_STR_NULL, 0},
                              {PROTO_STR("ab"), 0, 3, -1, PROTO_STR_NULL, 0}};
    grp_commit_req_t c1 = {"g1", -1, "", NULL, -1, 8, 3, p};
    grp_commit(c, &c1);
    p[0].error = p[1].error = p[2].error = 0;
    grp_commit_req_t c2 = {"g2", -1, "", NULL, -1, 8, 1, p};
    grp_commit(c, &c2);
    int before = nstored;
    CU_ASSERT_EQUAL(grp_topic_deleted(c, "a", 1), 3);
    CU_ASSERT_EQUAL(nstored, before + 3);
    CU_ASSERT_EQUAL(stored[nstored - 1].vlen, -1);
    CU_ASSERT_PTR_NULL(grp_offset_get(group(c, "g1"), "a", 1, 0));
    CU_ASSERT_PTR_NOT_NULL(grp_offset_get(group(c, "g1"), "ab", 2, 0));
    CU_ASSERT_EQUAL(grp_topic_deleted(c, "a", 1), 0);
    coord_free(c);
}

/* group.max.size and the initial rebalance delay extension. */
static void test_max_size_and_delay(void)
{
    grp_config_t cfg;
    grp_config_defaults(&cfg);
    cfg.max_size = 2;
    cfg.initial_rebalance_delay_ms = 3000;
    reset_env();
    grp_coord_t *c = grp_coord_new(&cfg, &env);
    tw_t j[3];

    CU_ASSERT_TRUE(join_new(c, &j[0], "g", P_RANGE, 1));
    advance(2000);
    CU_ASSERT_TRUE(join_new(c, &j[1], "g", P_RANGE, 1)); /* extends the delay */
    advance(1000);
    CU_ASSERT_EQUAL(j[0].answered, 0);
    CU_ASSERT_FALSE(join(c, &j[2], "g", "", NULL, P_RANGE, 1));
    CU_ASSERT_EQUAL(j[2].error, KERR_GROUP_MAX_SIZE_REACHED);
    advance(3000);
    CU_ASSERT_EQUAL(j[0].answered, 1);
    CU_ASSERT_EQUAL(j[1].answered, 1);
    CU_ASSERT_EQUAL(j[0].generation, 1);
    CU_ASSERT_EQUAL(j[0].nmembers + j[1].nmembers, 2);
    coord_free(c);
}

/* A member that gets its JoinGroup answer but never sends SyncGroup is
 * removed after the rebalance timeout. */
static void test_sync_timeout(void)
{
    grp_coord_t *c = coord_new(0);
    tw_t j1, j2, s1;
    char id1[128], id2[128];

    CU_ASSERT_TRUE(join_new_id(c, &j1, "g", P_RANGE, 1, id1));
    CU_ASSERT_TRUE(join_new_id(c, &j2, "g", P_RANGE, 1, id2));
    advance(0);
    CU_ASSERT_TRUE(sync_(c, &s1, "g", 1, id2, NULL, 0)); /* the follower waits */
    /* The leader (id1) never syncs: it and the follower's wait end when
     * the rebalance timeout passes. */
    for (int i = 0; i < 3; i++) {
        advance(9000);
        grp_heartbeat(c, "g", 1, id1, NULL);
    }
    CU_ASSERT_EQUAL(s1.answered, 0);
    advance(3001);
    CU_ASSERT_EQUAL(s1.answered, 1);
    CU_ASSERT_EQUAL(s1.error, KERR_REBALANCE_IN_PROGRESS);
    CU_ASSERT_EQUAL(group(c, "g")->nmembers, 1);
    coord_free(c);
}

/* A parked JoinGroup whose client went away: the member still counts as
 * joined (as in Kafka) but nothing is answered to the dead waiter. */
/* A group whose __consumer_offsets partition is offline is answered as
 * Kafka's coordinator answers once that partition has no leader:
 * FindCoordinator COORDINATOR_NOT_AVAILABLE, every group API
 * NOT_COORDINATOR, and ListGroups leaves it out. Other partitions' groups
 * go on. */
static void test_offline_partition(void)
{
    grp_coord_t *c = coord_new(0);
    grp_t *g;
    tw_t j;
    const char *a = "offline-a", *b = "offline-b";
    int32_t pa = grp_rec_partition_for(a, strlen(a), 50);

    CU_ASSERT_NOT_EQUAL_FATAL(pa, grp_rec_partition_for(b, strlen(b), 50));
    grp_commit_part_t p = {PROTO_STR("t"), 0, 100, -1, PROTO_STR_NULL, 0};
    grp_commit_req_t ca = {a, -1, "", NULL, -1, 8, 1, &p};
    grp_commit(c, &ca);
    CU_ASSERT_EQUAL(p.error, 0);
    grp_commit_req_t cb = {b, -1, "", NULL, -1, 8, 1, &p};
    grp_commit(c, &cb);
    CU_ASSERT_EQUAL(p.error, 0);

    offline_part = pa;
    CU_ASSERT_TRUE(grp_part_offline(c, pa));
    CU_ASSERT_EQUAL(grp_find_coordinator(c, a), KERR_COORDINATOR_NOT_AVAILABLE);
    CU_ASSERT_EQUAL(grp_find_coordinator(c, b), 0);
    grp_commit(c, &ca);
    CU_ASSERT_EQUAL(p.error, KERR_NOT_COORDINATOR);
    CU_ASSERT_EQUAL(grp_offsets_group(c, a, &g), KERR_NOT_COORDINATOR);
    CU_ASSERT_PTR_NULL(g);
    CU_ASSERT_EQUAL(grp_describe(c, a, &g), KERR_NOT_COORDINATOR);
    CU_ASSERT_EQUAL(grp_delete(c, a), KERR_NOT_COORDINATOR);
    CU_ASSERT_EQUAL(grp_heartbeat(c, a, 1, "m", NULL), KERR_NOT_COORDINATOR);
    CU_ASSERT_FALSE(join(c, &j, a, "", NULL, P_RANGE, 1));
    CU_ASSERT_EQUAL(j.error, KERR_NOT_COORDINATOR);
    size_t pos = 0;
    g = grp_next(c, &pos);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_STRING_EQUAL(g->id, b);
    CU_ASSERT_PTR_NULL(grp_next(c, &pos));
    /* Nothing of it was stored or changed. */
    CU_ASSERT_EQUAL(nstored, 2);
    p.error = 0;
    p.offset = 101;
    grp_commit(c, &cb);
    CU_ASSERT_EQUAL(p.error, 0);
    CU_ASSERT_EQUAL(nstored, 3);

    offline_part = -1; /* the restart that brings it back */
    CU_ASSERT_EQUAL(grp_offsets_group(c, a, &g), 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_EQUAL(grp_offset_get(g, "t", 1, 0)->offset, 100);
    coord_free(c);
}

/* A partition whose leadership moved away: its groups go (a parked
 * JoinGroup answered NOT_COORDINATOR, no timer left to write anything),
 * the others stay; loaded again, it answers LOAD_IN_PROGRESS until the
 * load ends. */
static void test_unload(void)
{
    grp_coord_t *c = coord_new(3000);
    grp_t *g;
    tw_t j;
    const char *a = "unload-a", *b = "unload-b";
    int32_t pa = grp_rec_partition_for(a, strlen(a), 50);
    char id[128];

    CU_ASSERT_NOT_EQUAL_FATAL(pa, grp_rec_partition_for(b, strlen(b), 50));
    grp_commit_part_t p = {PROTO_STR("t"), 0, 100, -1, PROTO_STR_NULL, 0};
    grp_commit_req_t cb = {b, -1, "", NULL, -1, 8, 1, &p};
    grp_commit(c, &cb);
    CU_ASSERT_EQUAL(p.error, 0);
    CU_ASSERT_TRUE(join_new_id(c, &j, a, P_RANGE, 1, id)); /* parked: the initial delay */
    int before = nstored;

    grp_unload(c, pa);
    CU_ASSERT_EQUAL(j.answered, 1);
    CU_ASSERT_EQUAL(j.error, KERR_NOT_COORDINATOR);
    CU_ASSERT_EQUAL(grp_offsets_group(c, a, &g), 0);
    CU_ASSERT_PTR_NULL(g);
    size_t pos = 0;
    g = grp_next(c, &pos);
    CU_ASSERT_PTR_NOT_NULL_FATAL(g);
    CU_ASSERT_STRING_EQUAL(g->id, b);
    CU_ASSERT_PTR_NULL(grp_next(c, &pos));
    advance(60000);
    CU_ASSERT_EQUAL(nstored, before);

    grp_load_begin(c, pa);
    CU_ASSERT_EQUAL(grp_describe(c, a, &g), KERR_COORDINATOR_LOAD_IN_PROGRESS);
    grp_load_end(c, pa);
    CU_ASSERT_EQUAL(grp_heartbeat(c, a, 1, id, NULL), KERR_UNKNOWN_MEMBER_ID);
    coord_free(c);
}

static void test_cancel(void)
{
    grp_coord_t *c = coord_new(0);
    tw_t j1, j2;
    CU_ASSERT_TRUE(join_new(c, &j1, "g", P_RANGE, 1));
    grp_waiter_cancel(c, &j1.w);
    CU_ASSERT_TRUE(join_new(c, &j2, "g", P_RANGE, 1));
    advance(0);
    CU_ASSERT_EQUAL(j1.answered, 0);
    CU_ASSERT_EQUAL(j2.answered, 1);
    CU_ASSERT_EQUAL(j2.generation, 1);
    CU_ASSERT_EQUAL(group(c, "g")->nmembers, 2);
    coord_free(c);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("coord", NULL, NULL);
    CU_add_test(s, "single member", test_single_member);
    CU_add_test(s, "two members", test_two_members);
    CU_add_test(s, "session timeout", test_session_timeout);
    CU_add_test(s, "protocol vote", test_protocol_vote);
    CU_add_test(s, "static member", test_static_member);
    CU_add_test(s, "static member not stored", test_static_store_failure);
    CU_add_test(s, "leave", test_leave);
    CU_add_test(s, "commit and fetch", test_commit_fetch);
    CU_add_test(s, "replay", test_replay);
    CU_add_test(s, "expiry", test_expiry);
    CU_add_test(s, "topic deleted", test_topic_deleted);
    CU_add_test(s, "max size and initial delay", test_max_size_and_delay);
    CU_add_test(s, "sync timeout", test_sync_timeout);
    CU_add_test(s, "cancelled waiter", test_cancel);
    CU_add_test(s, "offline partition", test_offline_partition);
    CU_add_test(s, "unloaded partition", test_unload);
    int rc = unit_run();
    reset_env();
    return rc;
}
