/* Leader elections without disks or clocks (src/cluster/bkr_elect.c and
 * the recovery state in bkr_alter.c): ElectLeaders' preferred and unclean
 * elections with Kafka's per-partition errors and messages, the null
 * topic list (every partition, only those an election was made or failed
 * for), an unknown election type; the RECOVERING state an unclean
 * election leaves and the AlterPartition that ends it; the periodic
 * preferred elections of auto.leader.rebalance.enable.
 *
 * As in test_brokers: an image and a controller; every decision's
 * records are encoded, decoded again and applied, as a commit does. */
#include <stdlib.h>
#include <string.h>

#include "cluster/bkr.h"
#include "cluster/meta_image.h"
#include "cluster/meta_image_recs.h"
#include "cluster/meta_rec.h"
#include "tests/unit/unit.h"
#include "util/buf.h"
#include "util/kerr.h"
#include "util/logging.h"

#define CLUSTER "q1Sh-9_ISia_zwGINzRvyQ"

static meta_image_t img;
static bkr_ctl_t bc;
static bkr_out_t out;
static int64_t next_off;
static arena_t dec, scratch;

static meta_str_t S(const char *s)
{
    meta_str_t m = {s, s ? (int32_t)strlen(s) : -1};
    return m;
}

static void commit(void)
{
    char err[256];
    for (int i = 0; i < out.n; i++) {
        buf_t b;
        meta_rec_t r;
        buf_init(&b);
        meta_rec_encode(&out.v[i], &b);
        CU_ASSERT_EQUAL_FATAL(meta_rec_decode(&r, b.p, b.len, &dec), 0);
        int rc = meta_image_apply(&img, &r, err, sizeof(err));
        if (rc != 0)
            fprintf(stderr, "record %d (%s): %s\n", i, meta_rec_type_name(r.type), err);
        CU_ASSERT_EQUAL(rc, 0);
        buf_free(&b);
        next_off++;
    }
    bkr_out_reset(&out);
}

static int setup(void)
{
    meta_rec_t f;
    char err[64];
    meta_image_init(&img);
    bkr_ctl_init(&bc, CLUSTER, 9000, 2000);
    bkr_out_init(&out);
    arena_init(&dec, 4096);
    arena_init(&scratch, 4096);
    next_off = 10;
    meta_rec_init(&f, META_REC_FEATURE_LEVEL);
    f.u.feature.name = S("metadata.version");
    f.u.feature.feature_level = 25;
    meta_image_apply(&img, &f, err, sizeof(err));
    return 0;
}

static int teardown(void)
{
    meta_image_free(&img);
    bkr_ctl_free(&bc);
    bkr_out_free(&out);
    arena_destroy(&dec);
    arena_destroy(&scratch);
    return 0;
}

/* ---- helpers ---- */

static uint8_t DIRS[8][16];
static const bkr_feature_t FEATS[] = {{{"metadata.version", 16}, 23, 29},
                                      {{"eligible.leader.replicas.version", 32}, 0, 1}};

static void hb(int32_t id, bool fence)
{
    const mi_broker_t *b = meta_image_broker(&img, id);
    bkr_heartbeat_req_t h = {id, b->epoch, next_off, fence, false};
    bkr_answer_t a;
    bkr_heartbeat(&bc, &img, &h, next_off, 1000000, &out, &a);
    CU_ASSERT_EQUAL(a.err, 0);
    commit();
}

/* Registers id (after a shutdown of previous epoch prev: -1 unclean) and
 * unfences it. */
static void rejoin(int32_t id, int64_t prev)
{
    static bkr_listener_t l[8];
    bkr_register_req_t r;
    bkr_answer_t a;
    memset(&r, 0, sizeof(r));
    l[id] = (bkr_listener_t){S("PLAINTEXT"), S("127.0.0.1"), (uint16_t)(9092 + id), 0};
    DIRS[id][0] = (uint8_t)(0x40 + id);
    r.broker_id = id;
    r.cluster_id = S(CLUSTER);
    memset(r.incarnation, 1, 16);
    r.listeners = &l[id];
    r.nlisteners = 1;
    r.features = FEATS;
    r.nfeatures = 2;
    r.rack = S(NULL);
    r.dirs = &DIRS[id];
    r.ndirs = 1;
    r.prev_epoch = prev;
    bkr_register(&bc, &img, &r, next_off, 1000000, &out, &a);
    CU_ASSERT_EQUAL_FATAL(a.err, 0);
    commit();
    hb(id, false);
}

static void join(int32_t id)
{
    const mi_broker_t *b = meta_image_broker(&img, id);
    rejoin(id, b ? b->epoch : -1);
}

/* Topic name (id byte idb) of nparts partitions, each on these replicas,
 * all in the ISR, the first the leader. */
static void topic(const char *name, uint8_t idb, int nparts, const int32_t *replicas, int n)
{
    meta_rec_t t, p;
    char err[256];
    meta_rec_init(&t, META_REC_TOPIC);
    t.u.topic.name = S(name);
    memset(t.u.topic.topic_id.b, idb, 16);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &t, err, sizeof(err)), 0);
    for (int i = 0; i < nparts; i++) {
        meta_rec_init(&p, META_REC_PARTITION);
        memset(p.u.part.topic_id.b, idb, 16);
        p.u.part.replicas.n = p.u.part.isr.n = n;
        p.u.part.replicas.v = p.u.part.isr.v = (int32_t *)replicas;
        p.u.part.removing_replicas.n = p.u.part.adding_replicas.n = 0;
        p.u.part.partition_id = i;
        p.u.part.leader = replicas[0];
        p.u.part.leader_epoch = p.u.part.partition_epoch = 0;
        CU_ASSERT_EQUAL(meta_image_apply(&img, &p, err, sizeof(err)), 0);
    }
}

static const mi_part_t *part(const char *name, int i)
{
    return &meta_image_topic(&img, name, strlen(name))->parts[i];
}

/* ElectLeaders of name's partition i: its error (or the request's), the
 * message in *msg; committed. */
static int16_t elect(int8_t type, const char *name, int32_t i, const char **msg)
{
    bkr_elect_part_t ep = {i, -1, NULL};
    bkr_elect_topic_t et = {S(name), &ep, 1};
    bkr_elect_req_t q;
    memset(&q, 0, sizeof(q));
    q.type = type;
    q.topics = &et;
    q.ntopics = 1;
    q.arena = &scratch;
    bkr_elect_leaders(&bc, &img, &q, &out);
    commit();
    if (msg)
        *msg = q.err ? q.msg : ep.msg;
    return q.err ? q.err : ep.err;
}

/* AlterPartition of name-0 from its leader: the ISR isr[0..n) and a
 * recovery state. */
static int16_t alter(const int32_t *isr, int n, int8_t recovery)
{
    const mi_part_t *p = part("t", 0);
    const mi_broker_t *b = meta_image_broker(&img, p->leader);
    bkr_alter_part_t ap;
    bkr_alter_topic_t t;
    bkr_alter_req_t q = {p->leader, b->epoch, &t, 1};
    bkr_answer_t a;
    memset(&ap, 0, sizeof(ap));
    memset(t.topic_id, 't', 16);
    t.parts = &ap;
    t.nparts = 1;
    ap.leader_epoch = p->leader_epoch;
    ap.partition_epoch = p->partition_epoch;
    ap.isr = isr;
    ap.nisr = n;
    ap.recovery_state = recovery;
    bkr_alter_partition(&bc, &img, &q, &out, &a);
    commit();
    CU_ASSERT(a.err || ap.err || ap.new_recovery_state == part("t", 0)->recovery_state);
    return a.err ? a.err : ap.err;
}

/* ---- tests ---- */

static void test_preferred(void)
{
    const char *msg;
    int32_t reps[] = {1, 2, 3}, all3[] = {2, 3, 1};
    join(1);
    join(2);
    join(3);
    topic("t", 't', 1, reps, 3);
    CU_ASSERT_EQUAL(elect(BKR_ELECT_PREFERRED, "t", 0, &msg), KERR_ELECTION_NOT_NEEDED);
    CU_ASSERT_STRING_EQUAL(msg, "Leader election not needed for topic partition.");

    /* 1 fenced: 2 leads; 1 back but not in the ISR: not available. */
    hb(1, true);
    CU_ASSERT_EQUAL(part("t", 0)->leader, 2);
    hb(1, false);
    CU_ASSERT_EQUAL(part("t", 0)->leader, 2);
    CU_ASSERT_EQUAL(elect(BKR_ELECT_PREFERRED, "t", 0, &msg), KERR_PREFERRED_LEADER_NOT_AVAILABLE);
    CU_ASSERT_STRING_EQUAL(msg, "The preferred leader was not available.");
    /* Unclean is not needed while a leader exists. */
    CU_ASSERT_EQUAL(elect(BKR_ELECT_UNCLEAN, "t", 0, NULL), KERR_ELECTION_NOT_NEEDED);

    /* Back in the ISR: elected, one record, both epochs bumped. */
    CU_ASSERT_EQUAL(alter(all3, 3, 0), 0);
    int32_t le = part("t", 0)->leader_epoch, pe = part("t", 0)->partition_epoch;
    int64_t at = next_off;
    CU_ASSERT_EQUAL(elect(BKR_ELECT_PREFERRED, "t", 0, &msg), 0);
    CU_ASSERT_PTR_NULL(msg);
    CU_ASSERT_EQUAL(next_off, at + 1);
    CU_ASSERT_EQUAL(part("t", 0)->leader, 1);
    CU_ASSERT_EQUAL(part("t", 0)->leader_epoch, le + 1);
    CU_ASSERT_EQUAL(part("t", 0)->partition_epoch, pe + 1);
    CU_ASSERT_EQUAL(part("t", 0)->nisr, 3);
    CU_ASSERT_EQUAL(elect(BKR_ELECT_PREFERRED, "t", 0, NULL), KERR_ELECTION_NOT_NEEDED);

    /* Unknown topics and partitions, with Kafka's messages. */
    CU_ASSERT_EQUAL(elect(BKR_ELECT_PREFERRED, "nope", 0, &msg), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    CU_ASSERT_STRING_EQUAL(msg, "No such topic as nope");
    CU_ASSERT_EQUAL(elect(BKR_ELECT_PREFERRED, "t", 7, &msg), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    CU_ASSERT_STRING_EQUAL(msg, "No such partition as t-7");
    CU_ASSERT_EQUAL(elect(BKR_ELECT_UNCLEAN, "t", -1, &msg), KERR_UNKNOWN_TOPIC_OR_PARTITION);
    CU_ASSERT_EQUAL(elect(5, "t", 0, &msg), KERR_INVALID_REQUEST);
    CU_ASSERT_STRING_EQUAL(msg, "Unknown election type 5");
}

/* A leaderless partition whose only ISR member is fenced: a preferred
 * election finds none; the member unfenced leads again by itself. */
static void test_preferred_leaderless(void)
{
    int32_t reps[] = {1, 2};
    join(1);
    join(2);
    topic("t", 't', 1, reps, 2);
    hb(1, true); /* ISR [2], 2 leads */
    hb(2, true); /* ISR [2] kept, no leader */
    CU_ASSERT_EQUAL(part("t", 0)->leader, -1);
    CU_ASSERT_EQUAL(elect(BKR_ELECT_PREFERRED, "t", 0, NULL), KERR_PREFERRED_LEADER_NOT_AVAILABLE);
    hb(2, false); /* unfenced: leads again */
    CU_ASSERT_EQUAL(part("t", 0)->leader, 2);
}

static void test_unclean(void)
{
    const char *msg;
    int32_t reps[] = {1, 2, 3}, two[] = {2, 3}, one[] = {2};
    join(1);
    join(2);
    join(3);
    topic("t", 't', 1, reps, 3);
    hb(2, true);
    hb(3, true);
    CU_ASSERT_EQUAL(part("t", 0)->nisr, 1);
    hb(1, true); /* the last ISR member: no leader, the ISR kept */
    CU_ASSERT(part("t", 0)->leader == -1 && part("t", 0)->nisr == 1 && part("t", 0)->isr[0] == 1);
    hb(2, false);
    hb(3, false);
    CU_ASSERT_EQUAL(part("t", 0)->leader, -1);
    CU_ASSERT_EQUAL(elect(BKR_ELECT_PREFERRED, "t", 0, NULL), KERR_PREFERRED_LEADER_NOT_AVAILABLE);

    /* Unclean: the first active replica, the ISR itself alone, RECOVERING. */
    int32_t le = part("t", 0)->leader_epoch;
    CU_ASSERT_EQUAL(elect(BKR_ELECT_UNCLEAN, "t", 0, &msg), 0);
    CU_ASSERT_PTR_NULL(msg);
    const mi_part_t *p = part("t", 0);
    CU_ASSERT(p->leader == 2 && p->nisr == 1 && p->isr[0] == 2 && p->recovery_state == 1);
    CU_ASSERT_EQUAL(p->leader_epoch, le + 1);
    CU_ASSERT_EQUAL(elect(BKR_ELECT_UNCLEAN, "t", 0, &msg), KERR_ELECTION_NOT_NEEDED);

    /* The leader stays recovering alone, may not take a follower while
     * recovering, and says it has recovered with its next ISR change. */
    int64_t at = next_off;
    CU_ASSERT_EQUAL(alter(one, 1, 1), 0);
    CU_ASSERT_EQUAL(next_off, at);
    CU_ASSERT_EQUAL(alter(two, 2, 1), KERR_INVALID_REQUEST);
    CU_ASSERT_EQUAL(alter(two, 2, 0), 0);
    CU_ASSERT(part("t", 0)->recovery_state == 0 && part("t", 0)->nisr == 2);
    CU_ASSERT_EQUAL(alter(one, 1, 1), KERR_INVALID_REQUEST);
    CU_ASSERT_EQUAL(alter(two, 2, 2), KERR_INVALID_REQUEST);

    /* Recovered alone, without a new ISR: a record of the state only. */
    hb(3, true);
    hb(1, false);
    hb(2, true); /* [2] kept, no leader; 1 and 3: out of the ISR */
    hb(3, false);
    CU_ASSERT_EQUAL(elect(BKR_ELECT_UNCLEAN, "t", 0, NULL), 0);
    CU_ASSERT(part("t", 0)->leader == 1 && part("t", 0)->recovery_state == 1);
    int32_t self[] = {1};
    at = next_off;
    CU_ASSERT_EQUAL(alter(self, 1, 0), 0);
    CU_ASSERT_EQUAL(next_off, at + 1);
    CU_ASSERT(part("t", 0)->recovery_state == 0 && part("t", 0)->nisr == 1);

    /* Nothing active: not available. */
    hb(3, true);
    hb(1, true);
    CU_ASSERT_EQUAL(part("t", 0)->leader, -1);
    CU_ASSERT_EQUAL(elect(BKR_ELECT_UNCLEAN, "t", 0, &msg), KERR_ELIGIBLE_LEADERS_NOT_AVAILABLE);
    CU_ASSERT_STRING_EQUAL(msg, "Eligible topic partition leaders are not available.");
}

/* The recovery state survives a snapshot of the image: its
 * PartitionRecord carries it into a new image. */
static void copy_rec(void *arg, const meta_rec_t *rec)
{
    char err[256];
    buf_t b;
    meta_rec_t r;
    buf_init(&b);
    meta_rec_encode(rec, &b);
    CU_ASSERT_EQUAL_FATAL(meta_rec_decode(&r, b.p, b.len, &dec), 0);
    CU_ASSERT_EQUAL(meta_image_apply(arg, &r, err, sizeof(err)), 0);
    buf_free(&b);
}

static void test_recovery_in_snapshot(void)
{
    int32_t reps[] = {1, 2};
    meta_image_t copy;
    join(1);
    join(2);
    topic("t", 't', 1, reps, 2);
    hb(2, true);
    hb(1, true);
    hb(2, false);
    CU_ASSERT_EQUAL(elect(BKR_ELECT_UNCLEAN, "t", 0, NULL), 0);
    CU_ASSERT_EQUAL(part("t", 0)->recovery_state, 1);
    meta_image_init(&copy);
    meta_image_topics_records(&img, copy_rec, &copy);
    const mi_part_t *p = &meta_image_topic(&copy, "t", 1)->parts[0];
    CU_ASSERT(p->recovery_state == 1 && p->leader == 2 && p->nisr == 1);
    meta_image_free(&copy);
}

/* A null topic list: every topic listed, with only the partitions whose
 * election was made or failed. */
static void test_all(void)
{
    bkr_elect_req_t q;
    int32_t reps[] = {1, 2}, back[] = {2, 1};
    join(1);
    join(2);
    topic("t", 't', 2, reps, 2);
    topic("u", 'u', 1, reps, 2);
    hb(1, true);
    hb(1, false); /* every partition led by 2, 1 out of the ISRs */
    CU_ASSERT_EQUAL(alter(back, 2, 0), 0); /* t-0's ISR has 1 again */
    memset(&q, 0, sizeof(q));
    q.type = BKR_ELECT_PREFERRED;
    q.all = true;
    q.arena = &scratch;
    bkr_elect_leaders(&bc, &img, &q, &out);
    commit();
    CU_ASSERT_EQUAL_FATAL(q.ntopics, 2);
    for (int i = 0; i < q.ntopics; i++) {
        const bkr_elect_topic_t *et = &q.topics[i];
        bool is_t = et->name.len == 1 && et->name.p[0] == 't';
        CU_ASSERT_EQUAL_FATAL(et->nparts, is_t ? 2 : 1);
        CU_ASSERT_EQUAL(et->parts[0].err, is_t ? 0 : KERR_PREFERRED_LEADER_NOT_AVAILABLE);
        if (is_t)
            CU_ASSERT_EQUAL(et->parts[1].err, KERR_PREFERRED_LEADER_NOT_AVAILABLE);
    }
    CU_ASSERT_EQUAL(part("t", 0)->leader, 1);
    /* Again: t-0 is not needed any more and is left out. */
    memset(&q, 0, sizeof(q));
    q.all = true;
    q.arena = &scratch;
    bkr_elect_leaders(&bc, &img, &q, &out);
    commit();
    for (int i = 0; i < q.ntopics; i++)
        CU_ASSERT_EQUAL(q.topics[i].nparts, 1);
}

/* auto.leader.rebalance.enable: the imbalanced partitions whose first
 * replica may lead get it back, at most max records a round. */
static void test_rebalance(void)
{
    int32_t reps[] = {1, 2}, back[] = {2, 1};
    join(1);
    join(2);
    topic("t", 't', 3, reps, 2);
    CU_ASSERT_FALSE(bkr_elect_imbalanced(&img));
    CU_ASSERT_EQUAL(bkr_elect_rebalance(&bc, &img, 1000, &out), 0);
    CU_ASSERT_EQUAL(out.n, 0);
    hb(1, true);
    hb(1, false);
    CU_ASSERT(bkr_elect_imbalanced(&img));
    /* 1 is in no ISR: nothing to do yet. */
    CU_ASSERT_EQUAL(bkr_elect_rebalance(&bc, &img, 1000, &out), 0);
    CU_ASSERT_EQUAL(out.n, 0);
    for (int i = 0; i < 3; i++) {
        const mi_part_t *p = part("t", i);
        bkr_alter_part_t ap;
        bkr_alter_topic_t t;
        bkr_alter_req_t q = {2, meta_image_broker(&img, 2)->epoch, &t, 1};
        bkr_answer_t a;
        memset(&ap, 0, sizeof(ap));
        memset(t.topic_id, 't', 16);
        t.parts = &ap;
        t.nparts = 1;
        ap.partition = i;
        ap.leader_epoch = p->leader_epoch;
        ap.partition_epoch = p->partition_epoch;
        ap.isr = back;
        ap.nisr = 2;
        bkr_alter_partition(&bc, &img, &q, &out, &a);
        CU_ASSERT_EQUAL(ap.err, 0);
        commit();
    }
    CU_ASSERT_EQUAL(bkr_elect_rebalance(&bc, &img, 2, &out), 1);
    CU_ASSERT_EQUAL(out.n, 2);
    commit();
    CU_ASSERT_EQUAL(bkr_elect_rebalance(&bc, &img, 2, &out), 0);
    CU_ASSERT_EQUAL(out.n, 1);
    commit();
    for (int i = 0; i < 3; i++)
        CU_ASSERT_EQUAL(part("t", i)->leader, 1);
    CU_ASSERT_FALSE(bkr_elect_imbalanced(&img));
}

/* A topic config of the image (a ConfigRecord). */
static void topic_config(const char *name, const char *key, const char *value)
{
    meta_rec_t r;
    char err[128];
    meta_rec_init(&r, META_REC_CONFIG);
    r.u.config.resource_type = META_RES_TOPIC;
    r.u.config.resource_name = S(name);
    r.u.config.name = S(key);
    r.u.config.value = S(value);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), 0);
}

/* unclean.leader.election.enable: a fencing that leaves no ISR member
 * able to lead takes another replica at once; an unfencing too; the
 * topic's own key over the broker default. */
static void test_unclean_policy(void)
{
    int32_t reps[] = {1, 2, 3}, two[] = {1, 2};
    join(1);
    join(2);
    join(3);
    topic("t", 't', 1, reps, 3);
    topic("u", 'u', 1, two, 2);
    topic_config("t", "unclean.leader.election.enable", "true");
    CU_ASSERT(bkr_unclean_enabled(&bc, &img, meta_image_topic(&img, "t", 1)));
    CU_ASSERT_FALSE(bkr_unclean_enabled(&bc, &img, meta_image_topic(&img, "u", 1)));

    /* t: 2 and 3 fenced, then 1: nobody to take it yet. */
    hb(2, true);
    hb(3, true);
    hb(1, true);
    CU_ASSERT(part("t", 0)->leader == -1 && part("t", 0)->isr[0] == 1);
    /* 3 unfenced: not in the ISR, yet it leads, alone, RECOVERING. */
    hb(3, false);
    const mi_part_t *p = part("t", 0);
    CU_ASSERT(p->leader == 3 && p->nisr == 1 && p->isr[0] == 3 && p->recovery_state == 1);

    /* u (unclean off): 1 unfenced leads it again alone (2 was fenced
     * before it); nothing for the periodic round. */
    hb(1, false);
    hb(2, false);
    CU_ASSERT(part("u", 0)->leader == 1 && part("u", 0)->nisr == 1);
    CU_ASSERT_EQUAL(bkr_elect_unclean_all(&bc, &img, 1000, &out), 0);
    CU_ASSERT_EQUAL(out.n, 0);

    /* The broker default on, the topic's own key off: off. */
    bc.unclean_default = true;
    CU_ASSERT(bkr_unclean_enabled(&bc, &img, meta_image_topic(&img, "u", 1)));
    topic_config("u", "unclean.leader.election.enable", "false");
    CU_ASSERT_FALSE(bkr_unclean_enabled(&bc, &img, meta_image_topic(&img, "u", 1)));
    topic_config("u", "unclean.leader.election.enable", "true");

    /* u's ISR [1], 2 active outside it: 1 fenced, 2 takes it at once. */
    hb(1, true);
    const mi_part_t *q = part("u", 0);
    CU_ASSERT(q->leader == 2 && q->nisr == 1 && q->isr[0] == 2 && q->recovery_state == 1);
}

/* The periodic round: a leaderless partition whose topic allows it once
 * its key is turned on. */
static void test_unclean_round(void)
{
    int32_t two[] = {1, 2};
    join(1);
    join(2);
    topic("u", 'u', 1, two, 2);
    hb(2, true);
    hb(1, true);
    hb(2, false);
    CU_ASSERT_EQUAL(part("u", 0)->leader, -1);
    CU_ASSERT_EQUAL(bkr_elect_unclean_all(&bc, &img, 1000, &out), 0);
    CU_ASSERT_EQUAL(out.n, 0);
    topic_config("u", "unclean.leader.election.enable", "true");
    CU_ASSERT_EQUAL(bkr_elect_unclean_all(&bc, &img, 0, &out), 1);
    CU_ASSERT_EQUAL(bkr_elect_unclean_all(&bc, &img, 1000, &out), 0);
    CU_ASSERT_EQUAL(out.n, 1);
    commit();
    CU_ASSERT(part("u", 0)->leader == 2 && part("u", 0)->recovery_state == 1);
}

/* ---- eligible leader replicas ---- */

static int setup_elr(void)
{
    meta_rec_t f;
    char err[64];
    setup();
    meta_rec_init(&f, META_REC_FEATURE_LEVEL);
    f.u.feature.name = S("eligible.leader.replicas.version");
    f.u.feature.feature_level = 1;
    meta_image_apply(&img, &f, err, sizeof(err));
    bc.min_isr_default = 2;
    return 0;
}

static bool ids_are(const int32_t *v, int32_t n, const int32_t *want, int32_t nwant)
{
    return n == nwant && (n == 0 || !memcmp(v, want, (size_t)n * sizeof(int32_t)));
}

/* e-0 is (leader, ISR, ELR, last known ELR); -9 ends each list. */
static bool e_is(int32_t leader, const int32_t *isr, const int32_t *elr, const int32_t *last)
{
    const mi_part_t *p = part("e", 0);
    int32_t ni = 0, ne = 0, nl = 0;
    while (isr[ni] != -9)
        ni++;
    while (elr[ne] != -9)
        ne++;
    while (last[nl] != -9)
        nl++;
    bool ok = p->leader == leader && ids_are(p->isr, p->nisr, isr, ni) &&
              ids_are(p->elr, p->nelr, elr, ne) && ids_are(p->last_elr, p->nlast_elr, last, nl);
    if (!ok)
        fprintf(stderr, "e-0: leader %d, isr %d, elr %d, last %d\n", (int)p->leader,
                (int)p->nisr, (int)p->nelr, (int)p->nlast_elr);
    return ok;
}

/* Kafka's KIP-966 flow on RF 3, min ISR 2: members fenced one by one go
 * to the ELR once the ISR is below 2, the ISR empties with the last one,
 * and any ELR member (not only the last leader) can lead again; a broker
 * back from an unclean shutdown leaves the ELR; an ISR back at 2 clears
 * it. The ELR survives a snapshot. */
static void test_elr(void)
{
    const int32_t reps[] = {1, 2, 3}, N[] = {-9}, i12[] = {1, 2, -9}, i1[] = {1, -9},
                  e2[] = {2, -9}, e12[] = {1, 2, -9}, e1[] = {1, -9}, i2[] = {2, -9},
                  i21[] = {2, 1}, i21e[] = {2, 1, -9};
    meta_image_t copy;
    join(1);
    join(2);
    join(3);
    topic("e", 'e', 1, reps, 3);
    hb(3, true);
    CU_ASSERT(e_is(1, i12, N, N));
    hb(2, true);
    CU_ASSERT(e_is(1, i1, e2, N));
    hb(1, true);
    CU_ASSERT(e_is(-1, N, e12, i1));
    meta_image_init(&copy);
    meta_image_topics_records(&img, copy_rec, &copy);
    const mi_part_t *c = &meta_image_topic(&copy, "e", 1)->parts[0];
    CU_ASSERT(c->nelr == 2 && c->nlast_elr == 1 && c->last_elr[0] == 1 && c->nisr == 0);
    meta_image_free(&copy);
    rejoin(2, meta_image_broker(&img, 2)->epoch); /* clean: it may lead */
    CU_ASSERT(e_is(2, i2, e1, N));
    rejoin(1, -1); /* unclean: out of the ELR */
    CU_ASSERT(e_is(2, i2, N, N));
    CU_ASSERT_EQUAL(part("e", 0)->recovery_state, 0);
    bkr_out_reset(&out);
    const mi_part_t *p = part("e", 0);
    int32_t le = p->leader_epoch;
    bkr_alter_part_t ap = {0};
    bkr_alter_topic_t t;
    bkr_alter_req_t q = {2, meta_image_broker(&img, 2)->epoch, &t, 1};
    bkr_answer_t a;
    memset(t.topic_id, 'e', 16);
    t.parts = &ap;
    t.nparts = 1;
    ap.leader_epoch = le;
    ap.partition_epoch = p->partition_epoch;
    ap.isr = i21;
    ap.nisr = 2;
    bkr_alter_partition(&bc, &img, &q, &out, &a);
    commit();
    CU_ASSERT(a.err == 0 && ap.err == 0);
    CU_ASSERT(e_is(2, i21e, N, N));
    /* with 2 back in the ISR of two, 1 fenced again: 2 leads, 1 in the ELR */
    hb(1, true);
    CU_ASSERT(e_is(2, i2, e1, N));
    /* min.insync.replicas to 1: the ISR of one is enough, the ELR empties */
    bkr_min_isr_changed(&bc, &img, meta_image_topic(&img, "e", 1), 1, &out);
    commit();
    CU_ASSERT(e_is(2, i2, N, N));
    bkr_min_isr_changed(&bc, &img, meta_image_topic(&img, "e", 1), 2, &out);
    CU_ASSERT_EQUAL(out.n, 0); /* nothing to recompute: no one left the ISR since */
}

/* The same fencings without the feature: the last ISR member stays. */
static void test_no_elr(void)
{
    const int32_t reps[] = {1, 2, 3}, N[] = {-9}, i1[] = {1, -9};
    join(1);
    join(2);
    join(3);
    bc.min_isr_default = 2;
    topic("e", 'e', 1, reps, 3);
    hb(3, true);
    hb(2, true);
    hb(1, true);
    CU_ASSERT(e_is(-1, i1, N, N));
    rejoin(2, meta_image_broker(&img, 2)->epoch);
    CU_ASSERT(e_is(-1, i1, N, N));
    rejoin(1, -1);
    CU_ASSERT(e_is(1, i1, N, N));
}

int main(void)
{
    lg_set_level(LG_WARN);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("preferred", setup, teardown);
    CU_add_test(s, "errors and election", test_preferred);
    CU_pSuite s2 = CU_add_suite("preferred leaderless", setup, teardown);
    CU_add_test(s2, "leaderless", test_preferred_leaderless);
    CU_pSuite u = CU_add_suite("unclean", setup, teardown);
    CU_add_test(u, "election and recovery", test_unclean);
    CU_pSuite u2 = CU_add_suite("unclean state", setup, teardown);
    CU_add_test(u2, "recovering", test_recovery_in_snapshot);
    CU_pSuite a = CU_add_suite("all partitions", setup, teardown);
    CU_add_test(a, "null topic list", test_all);
    CU_pSuite up = CU_add_suite("unclean policy", setup, teardown);
    CU_add_test(up, "on fencing and unfencing", test_unclean_policy);
    CU_pSuite ur = CU_add_suite("unclean round", setup, teardown);
    CU_add_test(ur, "periodic", test_unclean_round);
    CU_pSuite r = CU_add_suite("rebalance", setup, teardown);
    CU_add_test(r, "periodic preferred", test_rebalance);
    CU_pSuite e = CU_add_suite("eligible leader replicas", setup_elr, teardown);
    CU_add_test(e, "fencing, election, unclean shutdown", test_elr);
    CU_pSuite ne = CU_add_suite("without eligible leader replicas", setup, teardown);
    CU_add_test(ne, "last member stays", test_no_elr);
    return unit_run();
}
