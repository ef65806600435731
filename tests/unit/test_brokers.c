/* The controller's broker logic without disks or clocks (src/cluster/bkr*.c
 * and the image's brokers): registrations replayed into the image; the
 * checks of BrokerRegistration with Kafka's errors and messages;
 * heartbeats fencing and unfencing brokers, sessions expiring,
 * controlled shutdown, and the partition changes each makes (ISR,
 * leader, leader epochs); UnregisterBroker; replica placement's
 * distribution (balance, racks, leaders) and explicit assignments.
 *
 * The "cluster" is an image and a controller; every decision's records
 * are encoded, decoded again (what the log would hold) and applied at
 * consecutive offsets, as a commit does. */
#include <stdlib.h>
#include <string.h>

#include "cluster/bkr.h"
#include "cluster/meta_image.h"
#include "cluster/meta_rec.h"
#include "tests/unit/unit.h"
#include "util/buf.h"
#include "util/kerr.h"
#include "util/logging.h"

#define CLUSTER "q1Sh-9_ISia_zwGINzRvyQ"
#define TIMEOUT 9000
#define HB_INTERVAL 2000

static meta_image_t img;
static bkr_ctl_t bc;
static bkr_out_t out;
static int64_t next_off; /* where the next record lands */
static int64_t now;
static arena_t dec;

static meta_str_t S(const char *s)
{
    meta_str_t m = {s, s ? (int32_t)strlen(s) : -1};
    return m;
}

/* Encodes, decodes and applies out's records at next_off on; every one
 * must fit the image. */
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
    meta_image_init(&img);
    bkr_ctl_init(&bc, CLUSTER, TIMEOUT, HB_INTERVAL);
    bkr_out_init(&out);
    arena_init(&dec, 4096);
    next_off = 10;
    now = 1000000;
    /* metadata.version 25 finalized, as a new Strand node's log has it. */
    meta_rec_t f;
    char err[64];
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
    return 0;
}

/* ---- helpers ---- */

static uint8_t DIRS[8][16];
static const bkr_feature_t FEATS[] = {{{"metadata.version", 16}, 23, 29},
                                      {{"group.version", 13}, 0, 0}};

static bkr_register_req_t reg_req(int32_t id, uint8_t inc, const char *rack)
{
    static bkr_listener_t l[8];
    bkr_register_req_t r;
    memset(&r, 0, sizeof(r));
    l[id % 8] = (bkr_listener_t){S("PLAINTEXT"), S("127.0.0.1"), (uint16_t)(9092 + id), 0};
    memset(DIRS[id % 8], 0, 16);
    DIRS[id % 8][0] = (uint8_t)(0x40 + id);
    DIRS[id % 8][15] = inc;
    r.broker_id = id;
    r.cluster_id = S(CLUSTER);
    memset(r.incarnation, inc, 16);
    r.listeners = &l[id % 8];
    r.nlisteners = 1;
    r.features = FEATS;
    r.nfeatures = 2;
    r.rack = S(rack);
    r.dirs = &DIRS[id % 8];
    r.ndirs = 1;
    return r;
}

static bkr_answer_t do_register(const bkr_register_req_t *r)
{
    bkr_answer_t a;
    bkr_register(&bc, &img, r, next_off, now, &out, &a);
    commit();
    return a;
}

static bkr_answer_t do_heartbeat(int32_t id, int64_t offset, bool want_fence, bool want_shutdown)
{
    const mi_broker_t *b = meta_image_broker(&img, id);
    bkr_heartbeat_req_t h = {id, b ? b->epoch : 0, offset, want_fence, want_shutdown};
    bkr_answer_t a;
    bkr_heartbeat(&bc, &img, &h, next_off, now, &out, &a);
    commit();
    return a;
}

/* Registers id and unfences it (caught up). */
static void join(int32_t id, const char *rack)
{
    bkr_register_req_t r = reg_req(id, 1, rack);
    CU_ASSERT_EQUAL_FATAL(do_register(&r).err, 0);
    bkr_answer_t a = do_heartbeat(id, next_off, false, false);
    CU_ASSERT_FALSE(a.fenced);
}

/* A topic "t" whose partition 0 has these replicas, all in the ISR, the
 * first the leader. */
static const uint8_t TID[16] = {9, 8, 7, 6, 5, 4, 3, 2, 1, 0, 1, 2, 3, 4, 5, 6};
static void topic(const int32_t *replicas, int n)
{
    meta_rec_t t, p;
    char err[256];
    meta_rec_init(&t, META_REC_TOPIC);
    t.u.topic.name = S("t");
    memcpy(t.u.topic.topic_id.b, TID, 16);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &t, err, sizeof(err)), 0);
    meta_rec_init(&p, META_REC_PARTITION);
    memcpy(p.u.part.topic_id.b, TID, 16);
    p.u.part.replicas.n = p.u.part.isr.n = n;
    p.u.part.replicas.v = p.u.part.isr.v = (int32_t *)replicas;
    p.u.part.removing_replicas.n = p.u.part.adding_replicas.n = 0;
    p.u.part.partition_id = 0;
    p.u.part.leader = replicas[0];
    p.u.part.leader_epoch = p.u.part.partition_epoch = 0;
    int rc = meta_image_apply(&img, &p, err, sizeof(err));
    if (rc)
        fprintf(stderr, "%s\n", err);
    CU_ASSERT_EQUAL(rc, 0);
}

static const mi_part_t *part0(void)
{
    return &meta_image_topic(&img, "t", 1)->parts[0];
}

/* ---- the image ---- */

static void test_image_replay(void)
{
    char err[256];
    meta_rec_t r;
    bkr_register_req_t q = reg_req(3, 1, "r1");
    CU_ASSERT_EQUAL(do_register(&q).epoch, 10);
    q = reg_req(1, 1, NULL);
    CU_ASSERT_EQUAL(do_register(&q).epoch, 11);

    size_t pos = 0;
    const mi_broker_t *b = meta_image_broker_next(&img, &pos);
    CU_ASSERT_EQUAL_FATAL(b->id, 1); /* id order */
    CU_ASSERT_PTR_NULL(b->rack);
    b = meta_image_broker_next(&img, &pos);
    CU_ASSERT_EQUAL(b->id, 3);
    CU_ASSERT_EQUAL(b->epoch, 10);
    CU_ASSERT_STRING_EQUAL(b->rack, "r1");
    CU_ASSERT(b->fenced);
    CU_ASSERT_FALSE(b->in_controlled_shutdown);
    CU_ASSERT_EQUAL(b->nendpoints, 1);
    CU_ASSERT_STRING_EQUAL(b->endpoints[0].name, "PLAINTEXT");
    CU_ASSERT_STRING_EQUAL(b->endpoints[0].host, "127.0.0.1");
    CU_ASSERT_EQUAL(b->endpoints[0].port, 9095);
    CU_ASSERT_EQUAL(b->ndirs, 1);
    CU_ASSERT_EQUAL(meta_image_broker_feature(b, "metadata.version")->max, 29);
    CU_ASSERT_PTR_NULL(meta_image_broker_next(&img, &pos));

    /* Unfence by BrokerRegistrationChangeRecord, then the older
     * UnfenceBrokerRecord / FenceBrokerRecord forms. */
    meta_rec_init(&r, META_REC_BROKER_REGISTRATION_CHANGE);
    r.u.broker_change.broker_id = 3;
    r.u.broker_change.broker_epoch = 10;
    r.u.broker_change.fenced = -1;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), 0);
    CU_ASSERT(meta_image_broker_active(&img, 3));
    r.u.broker_change.broker_epoch = 9; /* another epoch: does not fit */
    r.u.broker_change.fenced = 1;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), -1);
    CU_ASSERT(meta_image_broker_active(&img, 3));
    r.u.broker_change.broker_epoch = 10;
    r.u.broker_change.fenced = 0;
    r.u.broker_change.in_controlled_shutdown = 1;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), 0);
    CU_ASSERT_FALSE(meta_image_broker_active(&img, 3));
    CU_ASSERT_FALSE(meta_image_broker(&img, 3)->fenced);
    r.u.broker_change.fenced = 7;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), -1);
    meta_rec_init(&r, META_REC_UNFENCE_BROKER);
    r.u.unfence_broker.id = 1;
    r.u.unfence_broker.epoch = 11;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), 0);
    CU_ASSERT(meta_image_broker_active(&img, 1));
    meta_rec_init(&r, META_REC_FENCE_BROKER);
    r.u.fence_broker.id = 1;
    r.u.fence_broker.epoch = 11;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), 0);
    CU_ASSERT(meta_image_broker(&img, 1)->fenced);
    r.u.fence_broker.id = 2; /* not registered */
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), -1);

    /* A new registration replaces the old one whole (once the old
     * incarnation's session has expired). */
    now += TIMEOUT + 1;
    q = reg_req(3, 2, NULL);
    CU_ASSERT_EQUAL(do_register(&q).err, 0);
    b = meta_image_broker(&img, 3);
    CU_ASSERT_EQUAL(b->epoch, 12);
    CU_ASSERT(b->fenced && !b->in_controlled_shutdown && !b->rack);
    CU_ASSERT_EQUAL(b->incarnation[0], 2);

    /* Unregister names the epoch. */
    meta_rec_init(&r, META_REC_UNREGISTER_BROKER);
    r.u.unregister_broker.broker_id = 3;
    r.u.unregister_broker.broker_epoch = 10;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), -1);
    r.u.unregister_broker.broker_epoch = 12;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), 0);
    CU_ASSERT_PTR_NULL(meta_image_broker(&img, 3));
    CU_ASSERT_EQUAL(img.nbrokers, 1);

    /* Controllers. */
    proto_rec_register_controller_record_controller_endpoint_t ep = {S("CONTROLLER"),
                                                                     S("127.0.0.1"), 9093, 0};
    meta_rec_init(&r, META_REC_REGISTER_CONTROLLER);
    r.u.register_controller.controller_id = 5;
    r.u.register_controller.end_points.n = 1;
    r.u.register_controller.end_points.v = &ep;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), 0);
    r.u.register_controller.controller_id = 4;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), 0);
    pos = 0;
    CU_ASSERT_EQUAL(meta_image_controller_next(&img, &pos)->id, 4);
    const mi_controller_t *c = meta_image_controller_next(&img, &pos);
    CU_ASSERT_EQUAL(c->id, 5);
    CU_ASSERT_STRING_EQUAL(c->endpoints[0].name, "CONTROLLER");
    CU_ASSERT_EQUAL(c->endpoints[0].port, 9093);
    meta_rec_init(&r, META_REC_UNREGISTER_CONTROLLER);
    r.u.unregister_controller.controller_id = 4;
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(meta_image_apply(&img, &r, err, sizeof(err)), -1);
    CU_ASSERT_PTR_NULL(meta_image_controller(&img, 4));
    CU_ASSERT_PTR_NOT_NULL(meta_image_controller(&img, 5));
}

/* ---- registration ---- */

static void test_register_record(void)
{
    bkr_register_req_t q = reg_req(2, 1, "rack-a");
    bkr_answer_t a;
    bkr_register(&bc, &img, &q, next_off, now, &out, &a);
    CU_ASSERT_EQUAL(a.err, 0);
    CU_ASSERT_EQUAL(a.epoch, 10);
    CU_ASSERT_EQUAL_FATAL(out.n, 1);
    const meta_rec_t *r = &out.v[0];
    CU_ASSERT_EQUAL(r->type, META_REC_REGISTER_BROKER);
    CU_ASSERT_EQUAL(r->version, 3);
    CU_ASSERT_EQUAL(r->u.register_broker.broker_epoch, 10);
    CU_ASSERT(r->u.register_broker.fenced);
    CU_ASSERT_EQUAL(r->u.register_broker.features.n, 2);
    CU_ASSERT_EQUAL(r->u.register_broker.log_dirs.n, 1);
    commit();
    CU_ASSERT(meta_image_broker(&img, 2)->fenced);
}

static void expect_refused(const bkr_register_req_t *q, int16_t err, const char *msg)
{
    bkr_answer_t a;
    bkr_register(&bc, &img, q, next_off, now, &out, &a);
    CU_ASSERT_EQUAL(a.err, err);
    CU_ASSERT_STRING_EQUAL(a.msg, msg);
    CU_ASSERT_EQUAL(out.n, 0);
    bkr_out_reset(&out);
}

static void test_register_refusals(void)
{
    bkr_register_req_t q = reg_req(1, 1, NULL);
    q.cluster_id = S("other");
    expect_refused(&q, KERR_INCONSISTENT_CLUSTER_ID,
                   "Expected cluster ID " CLUSTER ", but got cluster ID other");

    q = reg_req(1, 1, NULL);
    q.ndirs = 0;
    expect_refused(&q, KERR_INVALID_REGISTRATION, "No directories specified in request");
    uint8_t two[2][16] = {{0}, {0}};
    two[0][15] = 1; /* Kafka's LOST directory id */
    q.dirs = (const uint8_t(*)[16])two;
    q.ndirs = 1;
    expect_refused(&q, KERR_INVALID_REGISTRATION, "Reserved directory ID in request");
    two[0][0] = two[1][0] = 0x33;
    two[1][15] = 1;
    q.ndirs = 2;
    expect_refused(&q, KERR_INVALID_REGISTRATION, "Duplicate directory ID in request");

    q = reg_req(1, 1, NULL);
    q.nfeatures = 1;
    q.features = &FEATS[1];
    expect_refused(&q, KERR_INVALID_REGISTRATION,
                   "Request features do not contain 'metadata.version'");
    bkr_feature_t old[] = {{{"metadata.version", 16}, 7, 21}};
    q.features = old;
    expect_refused(&q, KERR_UNSUPPORTED_VERSION,
                   "Unable to register because the broker does not support finalized version 25 "
                   "of metadata.version. The broker wants a version between 7 and 21, "
                   "inclusive.");
    q = reg_req(1, 1, NULL);
    q.migrating_zk = true;
    expect_refused(&q, KERR_BROKER_ID_NOT_REGISTERED,
                   "Controller does not support registering ZK brokers.");

    /* A live broker: another incarnation is refused, the same one may
     * register again (a new epoch, fenced again). */
    join(1, NULL);
    q = reg_req(1, 2, NULL);
    expect_refused(&q, KERR_DUPLICATE_BROKER_REGISTRATION,
                   "Another broker is registered with that broker id. If the broker was "
                   "recently restarted this should self-resolve once the heartbeat manager "
                   "expires the old broker session.");
    q = reg_req(1, 1, NULL);
    int64_t e = do_register(&q).epoch;
    CU_ASSERT(e > 10);
    CU_ASSERT(meta_image_broker(&img, 1)->fenced);
    /* Fenced, it has no valid session: a new incarnation may take over. */
    q = reg_req(1, 2, NULL);
    CU_ASSERT_EQUAL(do_register(&q).err, 0);
    CU_ASSERT_EQUAL(meta_image_broker(&img, 1)->incarnation[0], 2);

    /* Another broker's directory. */
    q = reg_req(2, 1, NULL);
    q.dirs = &DIRS[1];
    expect_refused(&q, KERR_INVALID_REGISTRATION,
                   "Broker 1 is already registered with directory QQAAAAAAAAAAAAAAAAAAAg");
}

/* A feature finalized above 0 that the broker does not name. */
static void test_register_unnamed_feature(void)
{
    meta_rec_t f;
    char err[64];
    meta_rec_init(&f, META_REC_FEATURE_LEVEL);
    f.u.feature.name = S("transaction.version");
    f.u.feature.feature_level = 2;
    meta_image_apply(&img, &f, err, sizeof(err));
    bkr_register_req_t q = reg_req(1, 1, NULL);
    expect_refused(&q, KERR_UNSUPPORTED_VERSION,
                   "Unable to register because the broker does not support finalized version 2 "
                   "of transaction.version. The broker wants a version between 0 and 0, "
                   "inclusive.");
}

/* ---- heartbeats ---- */

static void test_heartbeat_unfence(void)
{
    bkr_register_req_t q = reg_req(1, 1, NULL);
    int64_t epoch = do_register(&q).epoch;
    bkr_heartbeat_req_t h = {1, epoch + 1, 0, false, false};
    bkr_answer_t a;
    bkr_heartbeat(&bc, &img, &h, next_off, now, &out, &a);
    CU_ASSERT_EQUAL(a.err, KERR_STALE_BROKER_EPOCH);
    CU_ASSERT_STRING_EQUAL(a.msg, "Expected broker epoch 10, but got broker epoch 11");
    h.broker_id = 4;
    bkr_heartbeat(&bc, &img, &h, next_off, now, &out, &a);
    CU_ASSERT_EQUAL(a.err, KERR_STALE_BROKER_EPOCH);
    CU_ASSERT_STRING_EQUAL(a.msg, "Receive a heartbeat from broker 4 before registration");

    /* Behind its registration: stays fenced, nothing written. */
    a = do_heartbeat(1, epoch - 1, false, false);
    CU_ASSERT(a.fenced && !a.caught_up && !a.should_shutdown);
    CU_ASSERT_EQUAL(next_off, epoch + 1);
    /* Caught up but wanting to be fenced: stays fenced. */
    a = do_heartbeat(1, epoch, true, false);
    CU_ASSERT(a.fenced && a.caught_up);
    /* Caught up: unfenced by a BrokerRegistrationChangeRecord v0. */
    bkr_heartbeat_req_t ok = {1, epoch, epoch, false, false};
    bkr_heartbeat(&bc, &img, &ok, next_off, now, &out, &a);
    CU_ASSERT(!a.fenced && a.caught_up);
    CU_ASSERT_EQUAL_FATAL(out.n, 1);
    CU_ASSERT_EQUAL(out.v[0].type, META_REC_BROKER_REGISTRATION_CHANGE);
    CU_ASSERT_EQUAL(out.v[0].version, 0);
    CU_ASSERT_EQUAL(out.v[0].u.broker_change.fenced, -1);
    CU_ASSERT_EQUAL(out.v[0].u.broker_change.broker_epoch, epoch);
    commit();
    CU_ASSERT(meta_image_broker_active(&img, 1));
    /* Unfenced and steady: nothing more. */
    a = do_heartbeat(1, next_off, false, false);
    CU_ASSERT(!a.fenced);
    CU_ASSERT_EQUAL(out.n, 0);
    /* Asking to be fenced. */
    a = do_heartbeat(1, next_off, true, false);
    CU_ASSERT(a.fenced && !a.should_shutdown);
    CU_ASSERT(meta_image_broker(&img, 1)->fenced);
}

/* Session expiry fences, moves leadership (leader epoch +1) and ISR;
 * unfencing gives leaderless partitions a leader again. */
static void test_session_expiry(void)
{
    join(1, NULL);
    join(2, NULL);
    join(3, NULL);
    int32_t reps[] = {1, 2, 3};
    topic(reps, 3);
    CU_ASSERT(bkr_session_valid(&bc, &img, 1, now));
    CU_ASSERT_EQUAL(bkr_fence_stale(&bc, &img, now + TIMEOUT, &out), -1);
    CU_ASSERT_EQUAL(bkr_next_deadline(&bc, &img), now + TIMEOUT + 1);

    /* 2 and 3 keep heartbeating; 1 stops. */
    now += TIMEOUT / 2;
    do_heartbeat(2, next_off, false, false);
    do_heartbeat(3, next_off, false, false);
    now += TIMEOUT / 2 + 1;
    CU_ASSERT_FALSE(bkr_session_valid(&bc, &img, 1, now));
    CU_ASSERT_EQUAL(bkr_fence_stale(&bc, &img, now, &out), 1);
    CU_ASSERT_EQUAL_FATAL(out.n, 2);
    CU_ASSERT_EQUAL(out.v[0].type, META_REC_PARTITION_CHANGE);
    CU_ASSERT_EQUAL(out.v[0].u.change.leader, 2);
    CU_ASSERT_EQUAL(out.v[0].u.change.isr.n, 2);
    CU_ASSERT_EQUAL(out.v[1].type, META_REC_BROKER_REGISTRATION_CHANGE);
    CU_ASSERT_EQUAL(out.v[1].u.broker_change.fenced, 1);
    commit();
    CU_ASSERT_EQUAL(bkr_fence_stale(&bc, &img, now, &out), -1);
    CU_ASSERT_EQUAL(part0()->leader, 2);
    CU_ASSERT_EQUAL(part0()->leader_epoch, 1);
    CU_ASSERT_EQUAL(part0()->partition_epoch, 1);
    CU_ASSERT_EQUAL(part0()->nisr, 2);

    /* 2 goes: 3 leads; 3 goes: the last ISR member stays, no leader. */
    CU_ASSERT_EQUAL(do_heartbeat(2, next_off, true, false).fenced, true);
    CU_ASSERT_EQUAL(part0()->leader, 3);
    CU_ASSERT_EQUAL(part0()->leader_epoch, 2);
    now += TIMEOUT + 1;
    CU_ASSERT_EQUAL(bkr_fence_stale(&bc, &img, now, &out), 3);
    CU_ASSERT_EQUAL_FATAL(out.n, 2);
    CU_ASSERT_EQUAL(out.v[0].u.change.leader, -1);
    CU_ASSERT_EQUAL(out.v[0].u.change.isr.n, -1); /* unchanged */
    commit();
    CU_ASSERT_EQUAL(part0()->leader, -1);
    CU_ASSERT_EQUAL(part0()->nisr, 1);
    CU_ASSERT_EQUAL(part0()->isr[0], 3);
    CU_ASSERT_EQUAL(part0()->leader_epoch, 3);

    /* 1 comes back: not in the ISR, so no leadership; 3 comes back and
     * leads again. */
    CU_ASSERT_FALSE(do_heartbeat(1, next_off, false, false).fenced);
    CU_ASSERT_EQUAL(part0()->leader, -1);
    bkr_answer_t a = do_heartbeat(3, next_off, false, false);
    CU_ASSERT_FALSE(a.fenced);
    CU_ASSERT_EQUAL(part0()->leader, 3);
    CU_ASSERT_EQUAL(part0()->leader_epoch, 4);
    CU_ASSERT_EQUAL(bkr_next_deadline(&bc, &img), now + TIMEOUT + 1);
}

/* A closed heartbeat link shortens the session to the grace (one and a
 * half heartbeat intervals), not for another epoch, and a heartbeat on a new
 * link gives the whole session back. */
static void test_session_link_lost(void)
{
    join(1, NULL);
    join(2, NULL);
    int32_t reps[] = {1, 2};
    topic(reps, 2);
    int64_t epoch1 = meta_image_broker(&img, 1)->epoch;
    bkr_link_lost(&bc, &img, 1, epoch1 + 1, now); /* an older incarnation's */
    CU_ASSERT_EQUAL(bkr_next_deadline(&bc, &img), now + TIMEOUT + 1);
    bkr_link_lost(&bc, &img, 1, epoch1, now);
    CU_ASSERT_EQUAL(bkr_next_deadline(&bc, &img), now + HB_INTERVAL * 3 / 2 + 1);
    CU_ASSERT(bkr_session_valid(&bc, &img, 1, now + HB_INTERVAL * 3 / 2));
    CU_ASSERT_EQUAL(bkr_fence_stale(&bc, &img, now + HB_INTERVAL * 3 / 2, &out), -1);

    /* heard from again in time: the whole session */
    now += HB_INTERVAL;
    do_heartbeat(1, next_off, false, false);
    CU_ASSERT(bkr_session_valid(&bc, &img, 1, now + TIMEOUT));

    /* not heard from: fenced at the grace's end, leadership moved */
    bkr_link_lost(&bc, &img, 1, epoch1, now);
    now += HB_INTERVAL * 3 / 2 + 1;
    do_heartbeat(2, next_off, false, false);
    CU_ASSERT_FALSE(bkr_session_valid(&bc, &img, 1, now));
    CU_ASSERT_EQUAL(bkr_fence_stale(&bc, &img, now, &out), 1);
    commit();
    CU_ASSERT_EQUAL(part0()->leader, 2);
}

static void test_controlled_shutdown(void)
{
    join(1, NULL);
    join(2, NULL);
    int32_t reps[] = {1, 2};
    topic(reps, 2);

    /* A leader asks to shut down: it gives up leadership and the ISR
     * first. */
    bkr_answer_t a = do_heartbeat(1, next_off, false, true);
    CU_ASSERT(!a.fenced && a.in_controlled_shutdown && !a.should_shutdown);
    const mi_broker_t *b = meta_image_broker(&img, 1);
    CU_ASSERT(b->in_controlled_shutdown && !b->fenced);
    CU_ASSERT_EQUAL(part0()->leader, 2);
    CU_ASSERT_EQUAL(part0()->nisr, 1);
    int64_t moved = next_off - 1; /* the last record of that batch */

    /* Not until the other active broker has the records. */
    a = do_heartbeat(1, next_off, false, true);
    CU_ASSERT(a.in_controlled_shutdown && !a.should_shutdown);
    do_heartbeat(2, moved - 1, false, false);
    a = do_heartbeat(1, next_off, false, true);
    CU_ASSERT(!a.should_shutdown);
    do_heartbeat(2, moved, false, false);
    a = do_heartbeat(1, next_off, false, true);
    CU_ASSERT(a.should_shutdown && a.fenced && !a.in_controlled_shutdown);
    CU_ASSERT(meta_image_broker(&img, 1)->fenced);

    /* A broker that leads nothing shuts down at once. */
    a = do_heartbeat(2, next_off, false, false);
    join(3, NULL);
    a = do_heartbeat(3, next_off, false, true);
    CU_ASSERT(a.should_shutdown && a.fenced);
    /* So does a fenced one. */
    bkr_register_req_t q = reg_req(4, 1, NULL);
    do_register(&q);
    a = do_heartbeat(4, 0, false, true);
    CU_ASSERT(a.should_shutdown);
}

/* ---- AlterPartition ---- */

/* AlterPartition of t-0 from broker `from`, the ISR isr[0..n) (epochs
 * NULL: not checked): partition 0's error, or the top-level one. */
static int16_t alter(int32_t from, int32_t leader_epoch, int32_t partition_epoch,
                     const int32_t *isr, int n, const int64_t *epochs, bkr_alter_part_t *ap)
{
    const mi_broker_t *b = meta_image_broker(&img, from);
    bkr_alter_topic_t t;
    bkr_alter_req_t q = {from, b ? b->epoch : 0, &t, 1};
    bkr_answer_t a;
    memset(ap, 0, sizeof(*ap));
    memcpy(t.topic_id, TID, 16);
    t.parts = ap;
    t.nparts = 1;
    ap->leader_epoch = leader_epoch;
    ap->partition_epoch = partition_epoch;
    ap->isr = isr;
    ap->nisr = n;
    ap->isr_epochs = epochs;
    bkr_alter_partition(&bc, &img, &q, &out, &a);
    commit();
    return a.err ? a.err : ap->err;
}

static void test_alter_partition(void)
{
    bkr_alter_part_t ap;
    join(1, NULL);
    join(2, NULL);
    join(3, NULL);
    int32_t reps[] = {1, 2, 3}, shrunk[] = {1, 3}, bad[] = {1, 4}, dup[] = {1, 3, 3};
    int32_t noleader[] = {2, 3};
    topic(reps, 3);

    /* The leader drops 2: a PartitionChangeRecord, a new partition epoch. */
    CU_ASSERT_EQUAL(alter(1, 0, 0, shrunk, 2, NULL, &ap), 0);
    CU_ASSERT(ap.leader == 1 && ap.new_leader_epoch == 0 && ap.new_partition_epoch == 1);
    CU_ASSERT_EQUAL(part0()->nisr, 2);
    CU_ASSERT_EQUAL(part0()->partition_epoch, 1);
    CU_ASSERT_EQUAL(part0()->leader_epoch, 0);
    /* The same ISR again writes nothing and answers the partition. */
    int64_t at = next_off;
    CU_ASSERT_EQUAL(alter(1, 0, 1, shrunk, 2, NULL, &ap), 0);
    CU_ASSERT(next_off == at && ap.new_partition_epoch == 1 && ap.nnew == 2);

    /* Kafka's checks, in its order. */
    CU_ASSERT_EQUAL(alter(1, 1, 1, reps, 3, NULL, &ap), KERR_NOT_CONTROLLER);
    CU_ASSERT_EQUAL(alter(1, 0, 2, reps, 3, NULL, &ap), KERR_NOT_CONTROLLER);
    CU_ASSERT_EQUAL(alter(2, 0, 1, reps, 3, NULL, &ap), KERR_INVALID_REQUEST);
    CU_ASSERT_EQUAL(alter(1, 0, 0, reps, 3, NULL, &ap), KERR_INVALID_UPDATE_VERSION);
    CU_ASSERT_EQUAL(alter(1, 0, 1, bad, 2, NULL, &ap), KERR_INVALID_REQUEST);
    CU_ASSERT_EQUAL(alter(1, 0, 1, dup, 3, NULL, &ap), KERR_INVALID_REQUEST);
    CU_ASSERT_EQUAL(alter(1, 0, 1, noleader, 2, NULL, &ap), KERR_INVALID_REQUEST);
    int64_t wrong[] = {-1, -1, 12345};
    CU_ASSERT_EQUAL(alter(1, 0, 1, reps, 3, wrong, &ap), KERR_INELIGIBLE_REPLICA);
    /* 2 fenced: it may not rejoin. */
    do_heartbeat(2, next_off, true, false);
    CU_ASSERT(meta_image_broker(&img, 2)->fenced);
    CU_ASSERT_EQUAL(alter(1, 0, 1, reps, 3, NULL, &ap), KERR_INELIGIBLE_REPLICA);
    /* Unfenced again, with its epoch: it rejoins. */
    do_heartbeat(2, next_off, false, false);
    int64_t epochs[] = {meta_image_broker(&img, 1)->epoch, meta_image_broker(&img, 2)->epoch,
                        meta_image_broker(&img, 3)->epoch};
    CU_ASSERT_EQUAL(alter(1, 0, 1, reps, 3, epochs, &ap), 0);
    CU_ASSERT(part0()->nisr == 3 && part0()->partition_epoch == 2);
    /* A leader epoch the image has passed. */
    do_heartbeat(1, next_off, false, true); /* controlled shutdown: 2 leads */
    CU_ASSERT_EQUAL(part0()->leader, 2);
    CU_ASSERT_EQUAL(alter(1, 0, 2, reps, 3, NULL, &ap), KERR_FENCED_LEADER_EPOCH);

    /* The requester's own epoch, and an unknown topic. */
    bkr_alter_topic_t t = {{0}, &ap, 1};
    bkr_alter_req_t q = {2, 999, &t, 1};
    bkr_answer_t a;
    memset(&ap, 0, sizeof(ap));
    bkr_alter_partition(&bc, &img, &q, &out, &a);
    CU_ASSERT_EQUAL(a.err, KERR_STALE_BROKER_EPOCH);
    q.broker_epoch = meta_image_broker(&img, 2)->epoch;
    bkr_alter_partition(&bc, &img, &q, &out, &a);
    CU_ASSERT(a.err == 0 && ap.err == KERR_UNKNOWN_TOPIC_ID && out.n == 0);
}

/* One partition of "t" reassigned to n replicas (n < 0: cancelled),
 * committed: its error. */
static int16_t reassign_to(const int32_t *reps, int n, bool allow_rf)
{
    arena_t a;
    bkr_reassign_part_t rp = {0, n < 0 ? NULL : reps, n < 0 ? 0 : n, 0, NULL};
    bkr_reassign_topic_t rt = {S("t"), &rp, 1};
    bkr_reassign_req_t q = {allow_rf, &rt, 1, &a};
    arena_init(&a, 1024);
    bkr_reassign(&bc, &img, &q, &out);
    commit();
    arena_destroy(&a);
    return rp.err;
}

static bool part0_is(const int32_t *reps, int nr, const int32_t *add, int na, const int32_t *rem,
                     int nrm)
{
    const mi_part_t *p = part0();
    return p->nreplicas == nr && !memcmp(p->replicas, reps, (size_t)nr * sizeof(int32_t)) &&
           p->nadding == na && (!na || !memcmp(p->adding, add, (size_t)na * sizeof(int32_t))) &&
           p->nremoving == nrm && (!nrm || !memcmp(p->removing, rem, (size_t)nrm * sizeof(int32_t)));
}

/* A reassignment: started (adding and removing, the merged replica list),
 * finished by the AlterPartition that brings the new replica into the ISR
 * (the removed one out of the replicas and the ISR), cancelled, and one
 * the ISR allows at once that moves the leader. */
static void test_reassign(void)
{
    bkr_alter_part_t ap;
    join(1, NULL);
    join(2, NULL);
    join(3, NULL);
    int32_t r12[] = {1, 2}, r31[] = {3, 1}, r312[] = {3, 1, 2}, r3[] = {3}, r2[] = {2};
    int32_t isr123[] = {1, 2, 3}, r13[] = {1, 3};
    topic(r12, 2);
    CU_ASSERT_EQUAL(reassign_to(NULL, -1, true), KERR_NO_REASSIGNMENT_IN_PROGRESS);
    CU_ASSERT_EQUAL(reassign_to(r312, 3, false), KERR_INVALID_REPLICATION_FACTOR);
    CU_ASSERT_EQUAL(reassign_to(r31, 2, false), 0);
    CU_ASSERT(part0_is(r312, 3, r3, 1, r2, 1));
    CU_ASSERT_EQUAL(part0()->nisr, 2);
    CU_ASSERT_EQUAL(part0()->leader, 1);
    /* cancelled: back to 1, 2; 3 dropped, so a new leader epoch fences it */
    CU_ASSERT_EQUAL(reassign_to(NULL, -1, true), 0);
    CU_ASSERT(part0_is(r12, 2, NULL, 0, NULL, 0));
    CU_ASSERT_EQUAL(part0()->leader_epoch, 1);
    /* again; 3 joins the ISR: done, 2 gone */
    CU_ASSERT_EQUAL(reassign_to(r31, 2, true), 0);
    int32_t pe = part0()->partition_epoch;
    CU_ASSERT_EQUAL(alter(1, 1, pe, isr123, 3, NULL, &ap), 0);
    CU_ASSERT(part0_is(r31, 2, NULL, 0, NULL, 0));
    CU_ASSERT(part0()->nisr == 2 && part0()->leader == 1 && ap.nnew == 2);
    CU_ASSERT_EQUAL(ap.new_partition_epoch, part0()->partition_epoch);
    CU_ASSERT(part0()->leader_epoch == 2 && ap.new_leader_epoch == 2); /* 2 dropped */
    /* to 3 alone: the ISR has it, so at once; the leader moves to 3 */
    CU_ASSERT_EQUAL(reassign_to(r3, 1, true), 0);
    CU_ASSERT(part0_is(r3, 1, NULL, 0, NULL, 0));
    CU_ASSERT(part0()->leader == 3 && part0()->nisr == 1 && part0()->isr[0] == 3);
    CU_ASSERT_EQUAL(part0()->leader_epoch, 3);
    (void)r13;
}

static void test_unregister(void)
{
    bkr_answer_t a;
    bkr_unregister(&bc, &img, 7, &out, &a);
    CU_ASSERT_EQUAL(a.err, KERR_BROKER_ID_NOT_REGISTERED);
    CU_ASSERT_STRING_EQUAL(a.msg, "Broker ID 7 is not currently registered");
    join(1, NULL);
    join(2, NULL);
    int32_t reps[] = {2, 1};
    topic(reps, 2);
    int64_t epoch = meta_image_broker(&img, 2)->epoch;
    bkr_unregister(&bc, &img, 2, &out, &a);
    CU_ASSERT_EQUAL(a.err, 0);
    CU_ASSERT_EQUAL_FATAL(out.n, 2);
    CU_ASSERT_EQUAL(out.v[1].type, META_REC_UNREGISTER_BROKER);
    CU_ASSERT_EQUAL(out.v[1].u.unregister_broker.broker_epoch, epoch);
    commit();
    CU_ASSERT_PTR_NULL(meta_image_broker(&img, 2));
    CU_ASSERT_EQUAL(part0()->leader, 1);
    CU_ASSERT_FALSE(bkr_session_valid(&bc, &img, 2, now));
}

/* ---- placement ---- */

static void test_place_refusals(void)
{
    bkr_usable_t u[] = {{1, NULL, false}, {2, NULL, true}};
    int32_t as[16];
    char msg[256];
    CU_ASSERT_EQUAL(bkr_place(u, 2, 1, 3, 1, as, msg, sizeof(msg)),
                    KERR_INVALID_REPLICATION_FACTOR);
    CU_ASSERT_STRING_EQUAL(msg, "The target replication factor of 3 cannot be reached because "
                                "only 2 broker(s) are registered or some brokers have all their "
                                "log directories cordoned.");
    CU_ASSERT_EQUAL(bkr_place(u, 2, 1, 0, 1, as, msg, sizeof(msg)),
                    KERR_INVALID_REPLICATION_FACTOR);
    CU_ASSERT_STRING_EQUAL(msg, "Invalid replication factor 0: the replication factor must be "
                                "positive.");
    u[0].fenced = true;
    CU_ASSERT_EQUAL(bkr_place(u, 2, 1, 1, 1, as, msg, sizeof(msg)),
                    KERR_INVALID_REPLICATION_FACTOR);
    CU_ASSERT_STRING_EQUAL(msg, "All brokers are currently fenced.");
    /* A fenced broker may hold a follower, never the first replica. */
    u[0].fenced = false;
    CU_ASSERT_EQUAL(bkr_place(u, 2, 8, 2, 7, as, msg, sizeof(msg)), 0);
    for (int p = 0; p < 8; p++) {
        CU_ASSERT_EQUAL(as[2 * p], 1);
        CU_ASSERT_EQUAL(as[2 * p + 1], 2);
    }
}

/* 6 brokers in 3 racks, 60 partitions of 3: each partition in 3 racks
 * on 3 brokers, every broker 30 replicas and 10 leaders, for many seeds. */
static void test_place_balance(void)
{
    static const char *racks[] = {"a", "b", "c"};
    bkr_usable_t u[6];
    int32_t as[60 * 3];
    char msg[256];
    for (int i = 0; i < 6; i++)
        u[i] = (bkr_usable_t){10 + i, racks[i % 3], false};
    for (uint64_t seed = 1; seed < 200; seed++) {
        int reps[6] = {0}, leads[6] = {0};
        CU_ASSERT_EQUAL_FATAL(bkr_place(u, 6, 60, 3, seed, as, msg, sizeof(msg)), 0);
        for (int p = 0; p < 60; p++) {
            int rackseen = 0;
            for (int k = 0; k < 3; k++) {
                int b = as[3 * p + k] - 10;
                CU_ASSERT_FATAL(b >= 0 && b < 6);
                rackseen |= 1 << (b % 3);
                reps[b]++;
                leads[b] += k == 0;
            }
            CU_ASSERT_EQUAL(rackseen, 7);
        }
        for (int b = 0; b < 6; b++) {
            CU_ASSERT_EQUAL(reps[b], 30);
            CU_ASSERT_EQUAL(leads[b], 10);
        }
    }
}

/* Without racks: replicas distinct, leaders spread evenly; uneven racks
 * still give each partition as many racks as it can have. */
static void test_place_spread(void)
{
    bkr_usable_t u[5];
    int32_t as[50 * 3];
    char msg[256];
    for (int i = 0; i < 5; i++)
        u[i] = (bkr_usable_t){i, NULL, false};
    CU_ASSERT_EQUAL(bkr_place(u, 5, 50, 3, 42, as, msg, sizeof(msg)), 0);
    int leads[5] = {0}, reps[5] = {0};
    for (int p = 0; p < 50; p++) {
        CU_ASSERT(as[3 * p] != as[3 * p + 1] && as[3 * p] != as[3 * p + 2] &&
                  as[3 * p + 1] != as[3 * p + 2]);
        leads[as[3 * p]]++;
        for (int k = 0; k < 3; k++)
            reps[as[3 * p + k]]++;
    }
    for (int b = 0; b < 5; b++) {
        CU_ASSERT_EQUAL(leads[b], 10);
        CU_ASSERT_EQUAL(reps[b], 30);
    }
    /* Racks x: 3 brokers, y: 1 broker. rf 2: always one of each. */
    u[0].rack = u[1].rack = u[2].rack = "x";
    u[3].rack = "y";
    CU_ASSERT_EQUAL(bkr_place(u, 4, 40, 2, 3, as, msg, sizeof(msg)), 0);
    for (int p = 0; p < 40; p++)
        CU_ASSERT((as[2 * p] == 3) != (as[2 * p + 1] == 3));
}

static void test_assignments(void)
{
    char msg[256];
    join(1, NULL);
    join(2, NULL);
    int32_t a[] = {2, 1, 2}, b[] = {1, 5}, c[] = {1, 2};
    CU_ASSERT_EQUAL(bkr_check_assignment(&img, a, 0, -1, msg, sizeof(msg)),
                    KERR_INVALID_REPLICA_ASSIGNMENT);
    CU_ASSERT_STRING_EQUAL(msg, "The manual partition assignment includes an empty replica list.");
    CU_ASSERT_EQUAL(bkr_check_assignment(&img, a, 3, -1, msg, sizeof(msg)),
                    KERR_INVALID_REPLICA_ASSIGNMENT);
    CU_ASSERT_STRING_EQUAL(msg, "The manual partition assignment includes the broker 2 more than "
                                "once.");
    CU_ASSERT_EQUAL(bkr_check_assignment(&img, b, 2, -1, msg, sizeof(msg)),
                    KERR_INVALID_REPLICA_ASSIGNMENT);
    CU_ASSERT_STRING_EQUAL(msg, "The manual partition assignment includes broker 5, but no such "
                                "broker is registered.");
    CU_ASSERT_EQUAL(bkr_check_assignment(&img, c, 2, 3, msg, sizeof(msg)),
                    KERR_INVALID_REPLICA_ASSIGNMENT);
    CU_ASSERT_STRING_EQUAL(msg, "The manual partition assignment includes a partition with 2 "
                                "replica(s), but this is not consistent with previous "
                                "partitions, which have 3 replica(s).");
    CU_ASSERT_EQUAL(bkr_check_assignment(&img, c, 2, 2, msg, sizeof(msg)), 0);
    int32_t isr[2];
    CU_ASSERT_EQUAL(bkr_assignment_isr(&img, c, 2, 0, isr, msg, sizeof(msg)), 2);
    do_heartbeat(1, next_off, true, false);
    do_heartbeat(2, next_off, true, false);
    CU_ASSERT_EQUAL(bkr_assignment_isr(&img, c, 2, 4, isr, msg, sizeof(msg)), 0);
    CU_ASSERT_STRING_EQUAL(msg, "All brokers specified in the manual partition assignment for "
                                "partition 4 are fenced or in controlled shutdown.");
    bkr_usable_t *u;
    CU_ASSERT_EQUAL(bkr_usable(&img, &u), 2);
    CU_ASSERT(u[0].fenced && u[1].fenced);
    free(u);
}

int main(void)
{
    lg_set_level(LG_WARN);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("brokers", setup, teardown);
    CU_add_test(s, "image replay", test_image_replay);
    CU_pSuite r = CU_add_suite("registration", setup, teardown);
    CU_add_test(r, "record", test_register_record);
    CU_pSuite r2 = CU_add_suite("registration refusals", setup, teardown);
    CU_add_test(r2, "refusals", test_register_refusals);
    CU_pSuite r3 = CU_add_suite("registration features", setup, teardown);
    CU_add_test(r3, "unnamed feature", test_register_unnamed_feature);
    CU_pSuite h = CU_add_suite("heartbeat", setup, teardown);
    CU_add_test(h, "unfence", test_heartbeat_unfence);
    CU_pSuite h2 = CU_add_suite("sessions", setup, teardown);
    CU_add_test(h2, "expiry", test_session_expiry);
    CU_pSuite h4 = CU_add_suite("sessions' links", setup, teardown);
    CU_add_test(h4, "closed link", test_session_link_lost);
    CU_pSuite h3 = CU_add_suite("controlled shutdown", setup, teardown);
    CU_add_test(h3, "controlled shutdown", test_controlled_shutdown);
    CU_pSuite ap = CU_add_suite("alter partition", setup, teardown);
    CU_add_test(ap, "checks and changes", test_alter_partition);
    CU_pSuite ra = CU_add_suite("reassignment", setup, teardown);
    CU_add_test(ra, "start, finish, cancel, move the leader", test_reassign);
    CU_pSuite u = CU_add_suite("unregister", setup, teardown);
    CU_add_test(u, "unregister", test_unregister);
    CU_pSuite p = CU_add_suite("placement", setup, teardown);
    CU_add_test(p, "refusals", test_place_refusals);
    CU_add_test(p, "balance over racks", test_place_balance);
    CU_add_test(p, "spread", test_place_spread);
    CU_pSuite a = CU_add_suite("assignments", setup, teardown);
    CU_add_test(a, "checks", test_assignments);
    return unit_run();
}
