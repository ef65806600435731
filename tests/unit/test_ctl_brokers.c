/* This node's registration with its own controller (cluster/ctl_brokers.c)
 * on a real metadata log: the RegisterBrokerRecord (fenced, its epoch the
 * record's offset, the listeners, features, rack and log dir ids given)
 * and the unfencing, committed before the call returns; a restart
 * registers a new incarnation at a new epoch without being refused as a
 * duplicate of the old one; heartbeats through the queue write nothing
 * while the state holds, and unfence the node again after a fence.
 * Topics and partitions placed over the registered brokers (replicas,
 * ISR, leaders, log dirs), Kafka's refusals of a replication factor
 * above the broker count and of explicit assignments naming unknown or
 * fenced brokers. A controller's ControllerRegistration: its
 * RegisterControllerRecord (id, incarnation, endpoints, features as sent)
 * in the image, replaced by the next incarnation's, replayed at a
 * restart. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/bkr.h"
#include "cluster/ctl.h"
#include "cluster/ctl_int.h"
#include "cluster/meta_log.h"
#include "log/log_mgr.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_log.h"
#include "util/kerr.h"
#include "util/logging.h"

#define NOW 1700000000000LL

static char tmpdir[256];
static log_mgr_t *mgr;
static ctl_t *ctl;
static const bkr_listener_t L[] = {{{"PLAINTEXT", 9}, {"127.0.0.1", 9}, 9092, 0},
                                   {{"SSL", 3}, {"h2", 2}, 9093, 1}};

static ctl_t *open_ctl(void)
{
    const char *dirs[1] = {tmpdir};
    log_mgr_config_t mc;
    ctl_config_t cc;
    char err[256];

    memset(&mc, 0, sizeof(mc));
    mc.dirs = dirs;
    mc.ndirs = 1;
    mc.node_id = 1;
    log_config_defaults(&mc.defaults);
    mgr = log_mgr_open(&mc, NOW, err, sizeof(err));
    if (!mgr)
        return NULL;
    memset(&cc, 0, sizeof(cc));
    cc.node_id = 1;
    cc.rack = "rack-1";
    return ctl_open(mgr, &cc, NOW);
}

static int setup(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/strand-ctl-brokers-%d", (int)getpid());
    unit_rm_rf(tmpdir);
    ctl = open_ctl();
    return ctl ? 0 : 1;
}

static int teardown(void)
{
    ctl_free(ctl);
    log_mgr_close(mgr, -1);
    unit_rm_rf(tmpdir);
    return 0;
}

static void test_register(void)
{
    const meta_image_t *img = ctl_image(ctl);
    CU_ASSERT_EQUAL(ctl_node_epoch(ctl), -1);
    int64_t end = meta_log_end_offset(ctl_meta(ctl));
    CU_ASSERT_EQUAL_FATAL(ctl_register_node(ctl, L, 2, NOW), 0);
    CU_ASSERT_EQUAL(ctl_node_epoch(ctl), end);
    CU_ASSERT_EQUAL(meta_log_end_offset(ctl_meta(ctl)), end + 2);
    const mi_broker_t *b = meta_image_broker(img, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b);
    CU_ASSERT_EQUAL(b->epoch, end);
    CU_ASSERT(!b->fenced && !b->in_controlled_shutdown);
    CU_ASSERT_STRING_EQUAL(b->rack, "rack-1");
    CU_ASSERT_EQUAL_FATAL(b->nendpoints, 2);
    CU_ASSERT_STRING_EQUAL(b->endpoints[1].name, "SSL");
    CU_ASSERT_STRING_EQUAL(b->endpoints[1].host, "h2");
    CU_ASSERT_EQUAL(b->endpoints[1].port, 9093);
    CU_ASSERT_EQUAL(b->endpoints[1].security_protocol, 1);
    uint8_t dir[16];
    log_mgr_dir_id(mgr, 0, dir);
    CU_ASSERT_EQUAL_FATAL(b->ndirs, 1);
    CU_ASSERT(!memcmp(b->dirs[0], dir, 16));
    int n;
    ctl_features(&n);
    CU_ASSERT_EQUAL(b->nfeatures, n);
    CU_ASSERT_EQUAL(meta_image_broker_feature(b, "metadata.version")->min, 23);
    uint8_t inc[16];
    memcpy(inc, b->incarnation, 16);

    /* Steady heartbeats write nothing (no pool: done in the call). */
    ctl_node_heartbeat(ctl, NOW + 2000);
    ctl_node_heartbeat(ctl, NOW + 4000);
    CU_ASSERT_EQUAL(meta_log_end_offset(ctl_meta(ctl)), end + 2);

    /* A restart: the image has the old incarnation unfenced; the new one
     * registers at once. */
    ctl_free(ctl);
    log_mgr_close(mgr, -1);
    ctl = open_ctl();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctl);
    img = ctl_image(ctl);
    CU_ASSERT(!meta_image_broker(img, 1)->fenced);
    CU_ASSERT_EQUAL_FATAL(ctl_register_node(ctl, L, 1, NOW + 5000), 0);
    b = meta_image_broker(img, 1);
    CU_ASSERT_EQUAL(b->epoch, end + 2);
    CU_ASSERT(memcmp(b->incarnation, inc, 16) != 0);
    CU_ASSERT_EQUAL(b->nendpoints, 1);
    CU_ASSERT(!b->fenced);
}

/* Fenced by a record (as an expired session would), the next heartbeat
 * unfences it: the node has everything committed. */
static void test_unfence_again(void)
{
    CU_ASSERT_EQUAL_FATAL(ctl_register_node(ctl, L, 1, NOW), 0);
    const meta_image_t *img = ctl_image(ctl);
    meta_rec_t r;
    meta_rec_init(&r, META_REC_BROKER_REGISTRATION_CHANGE);
    r.version = 0;
    r.u.broker_change.broker_id = 1;
    r.u.broker_change.broker_epoch = ctl_node_epoch(ctl);
    r.u.broker_change.fenced = 1;
    CU_ASSERT_EQUAL(meta_log_commit(ctl_meta(ctl), &r, 1, NOW), 0);
    CU_ASSERT(meta_image_broker(img, 1)->fenced);
    int64_t end = meta_log_end_offset(ctl_meta(ctl));
    ctl_node_heartbeat(ctl, NOW + 2000);
    CU_ASSERT_FALSE(meta_image_broker(img, 1)->fenced);
    CU_ASSERT_EQUAL(meta_log_end_offset(ctl_meta(ctl)), end + 1);
}

/* Broker id registered (and unfenced when live) by records, as another
 * broker's registration would come in. */
static void other_broker(int32_t id, bool live)
{
    proto_rec_register_broker_record_broker_endpoint_t ep = {{"PLAINTEXT", 9}, {"h", 1}, 1, 0};
    proto_uuid_t dir = {{(uint8_t)id, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7}};
    meta_rec_t r[2];
    meta_rec_init(&r[0], META_REC_REGISTER_BROKER);
    r[0].version = 3;
    r[0].u.register_broker.broker_id = id;
    r[0].u.register_broker.broker_epoch = meta_log_end_offset(ctl_meta(ctl));
    r[0].u.register_broker.end_points.n = 1;
    r[0].u.register_broker.end_points.v = &ep;
    r[0].u.register_broker.log_dirs.n = 1;
    r[0].u.register_broker.log_dirs.v = &dir;
    meta_rec_init(&r[1], META_REC_BROKER_REGISTRATION_CHANGE);
    r[1].version = 0;
    r[1].u.broker_change.broker_id = id;
    r[1].u.broker_change.broker_epoch = r[0].u.register_broker.broker_epoch;
    r[1].u.broker_change.fenced = -1;
    CU_ASSERT_EQUAL_FATAL(meta_log_commit(ctl_meta(ctl), r, live ? 2 : 1, NOW), 0);
}

static void op_done(ctl_op_t *op)
{
    (void)op;
}

static int16_t create(const char *name, int32_t nparts, int16_t rf, char *msg)
{
    ctl_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = CTL_CREATE_TOPIC;
    op.name = name;
    op.name_len = strlen(name);
    op.nparts = nparts;
    op.rf = rf;
    op.nassign = -1;
    op.now_ms = NOW;
    op.done = op_done;
    ctl_submit(ctl, &op);
    strcpy(msg, op.msg);
    return op.err;
}

static void test_placement(void)
{
    char msg[512];
    CU_ASSERT_EQUAL_FATAL(ctl_register_node(ctl, L, 1, NOW), 0);
    other_broker(2, true);
    other_broker(3, true);
    CU_ASSERT_EQUAL(create("three", 30, 3, msg), 0);
    CU_ASSERT_EQUAL(create("two", 30, 2, msg), 0);
    const mi_topic_t *t2 = meta_image_topic(ctl_image(ctl), "two", 3);
    for (int p = 0; p < 30; p++) /* one replica in each rack */
        CU_ASSERT((t2->parts[p].replicas[0] == 1) != (t2->parts[p].replicas[1] == 1));
    const mi_topic_t *t = meta_image_topic(ctl_image(ctl), "three", 5);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL_FATAL(t->nparts, 30);
    int leads[4] = {0};
    for (int p = 0; p < 30; p++) {
        const mi_part_t *mp = &t->parts[p];
        CU_ASSERT_EQUAL_FATAL(mp->nreplicas, 3);
        CU_ASSERT_EQUAL(mp->nisr, 3);
        CU_ASSERT_EQUAL(mp->leader, mp->replicas[0]);
        CU_ASSERT(mp->replicas[0] != mp->replicas[1] && mp->replicas[1] != mp->replicas[2] &&
                  mp->replicas[0] != mp->replicas[2]);
        leads[mp->leader]++;
    }
    /* Leaders stripe over the racks: this node's rack-1 and the rack of
     * the brokers without one lead every other partition. */
    CU_ASSERT_EQUAL(leads[1], 15);
    CU_ASSERT_EQUAL(leads[2] + leads[3], 15);
    CU_ASSERT_EQUAL(create("five", 1, 5, msg), KERR_INVALID_REPLICATION_FACTOR);
    CU_ASSERT_STRING_EQUAL(msg, "Unable to replicate the partition 5 time(s): The target "
                                "replication factor of 5 cannot be reached because only 3 "
                                "broker(s) are registered or some brokers have all their log "
                                "directories cordoned.");
    /* A registered but fenced broker counts, and holds followers only. */
    other_broker(4, false);
    CU_ASSERT_EQUAL(create("four", 8, 4, msg), 0);
    t = meta_image_topic(ctl_image(ctl), "four", 4);
    for (int p = 0; p < 8; p++) {
        CU_ASSERT(t->parts[p].leader != 4);
        CU_ASSERT_EQUAL(t->parts[p].nisr, 3);
    }

    /* CreatePartitions with assignments. */
    static const int32_t a_unknown[] = {1, 9}, a_fenced[] = {4}, a_ok[] = {3, 1, 2};
    const int32_t *assign[1] = {a_unknown};
    int32_t assign_n[1] = {2};
    ctl_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = CTL_CREATE_PARTITIONS;
    memcpy(op.topic_id, meta_image_topic(ctl_image(ctl), "three", 5)->id, 16);
    op.nparts = 31;
    op.nassign = 1;
    op.assign = assign;
    op.assign_n = assign_n;
    op.now_ms = NOW;
    op.done = op_done;
    ctl_submit(ctl, &op);
    CU_ASSERT_EQUAL(op.err, KERR_INVALID_REPLICA_ASSIGNMENT);
    CU_ASSERT_STRING_EQUAL(op.msg, "The manual partition assignment includes broker 9, but no "
                                   "such broker is registered.");
    assign[0] = a_fenced;
    assign_n[0] = 1;
    ctl_submit(ctl, &op);
    CU_ASSERT_EQUAL(op.err, KERR_INVALID_REPLICA_ASSIGNMENT);
    CU_ASSERT_STRING_EQUAL(op.msg, "The manual partition assignment includes a partition with 1 "
                                   "replica(s), but this is not consistent with previous "
                                   "partitions, which have 3 replica(s).");
    assign[0] = a_ok;
    assign_n[0] = 3;
    ctl_submit(ctl, &op);
    CU_ASSERT_EQUAL(op.err, 0);
    t = meta_image_topic(ctl_image(ctl), "three", 5);
    CU_ASSERT_EQUAL_FATAL(t->nparts, 31);
    CU_ASSERT_EQUAL(t->parts[30].leader, 3);
    CU_ASSERT_EQUAL(t->parts[30].replicas[2], 2);
    /* Partition 30's replica on broker 3 is in broker 3's only dir. */
    CU_ASSERT_EQUAL(mi_part_dir_of(&t->parts[30], 3)[0], 3);
}

/* All the replicas named are fenced. */
static void test_assignment_fenced(void)
{
    CU_ASSERT_EQUAL_FATAL(ctl_register_node(ctl, L, 1, NOW), 0);
    char msg[512];
    CU_ASSERT_EQUAL(create("one", 1, 1, msg), 0);
    other_broker(4, false);
    static const int32_t a_fenced[] = {4};
    const int32_t *assign[1] = {a_fenced};
    int32_t assign_n[1] = {1};
    ctl_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = CTL_CREATE_PARTITIONS;
    memcpy(op.topic_id, meta_image_topic(ctl_image(ctl), "one", 3)->id, 16);
    op.nparts = 2;
    op.nassign = 1;
    op.assign = assign;
    op.assign_n = assign_n;
    op.now_ms = NOW;
    op.done = op_done;
    ctl_submit(ctl, &op);
    CU_ASSERT_EQUAL(op.err, KERR_INVALID_REPLICA_ASSIGNMENT);
    CU_ASSERT_STRING_EQUAL(op.msg, "All brokers specified in the manual partition assignment for "
                                   "partition 1 are fenced or in controlled shutdown.");

    /* CreateTopics with assignments: the same checks; replicas as named. */
    memset(&op, 0, sizeof(op));
    op.kind = CTL_CREATE_TOPIC;
    op.name = "named";
    op.name_len = 5;
    op.nparts = 1;
    op.rf = 1;
    op.nassign = 1;
    op.assign = assign;
    op.assign_n = assign_n;
    op.now_ms = NOW;
    op.done = op_done;
    ctl_submit(ctl, &op);
    CU_ASSERT_EQUAL(op.err, KERR_INVALID_REPLICA_ASSIGNMENT);
    CU_ASSERT_STRING_EQUAL(op.msg, "All brokers specified in the manual partition assignment for "
                                   "partition 0 are fenced or in controlled shutdown.");
    static const int32_t a_both[] = {4, 1};
    assign[0] = a_both;
    assign_n[0] = 2;
    op.rf = 2;
    ctl_submit(ctl, &op);
    CU_ASSERT_EQUAL_FATAL(op.err, 0);
    const mi_part_t *mp = &meta_image_topic(ctl_image(ctl), "named", 5)->parts[0];
    CU_ASSERT(mp->nreplicas == 2 && mp->replicas[0] == 4 && mp->replicas[1] == 1);
    CU_ASSERT(mp->nisr == 1 && mp->isr[0] == 1 && mp->leader == 1);
}

/* CTL_CONTROLLER_REGISTER: one RegisterControllerRecord, as the
 * request names it; a new incarnation replaces it; a restart replays it. */
static void controller_register(const uint8_t inc[16], uint16_t port)
{
    proto_rec_register_controller_record_controller_endpoint_t ep = {
        {"CONTROLLER", 10}, {"127.0.0.1", 9}, port, 0};
    proto_rec_register_controller_record_controller_feature_t f = {{"metadata.version", 16}, 23,
                                                                    29};
    proto_rec_register_controller_record_t rec;
    ctl_op_t op;

    memset(&rec, 0, sizeof(rec));
    rec.controller_id = 2;
    memcpy(rec.incarnation_id.b, inc, 16);
    rec.end_points.n = 1;
    rec.end_points.v = &ep;
    rec.features.n = 1;
    rec.features.v = &f;
    memset(&op, 0, sizeof(op));
    op.kind = CTL_CONTROLLER_REGISTER;
    op.nassign = -1;
    op.broker_req = &rec;
    op.now_ms = NOW;
    op.done = op_done;
    ctl_submit(ctl, &op);
    CU_ASSERT_EQUAL(op.err, 0);
}

static void test_controller_registration(void)
{
    static const uint8_t inc1[16] = {1, 2, 3}, inc2[16] = {9, 8, 7};
    int64_t end = meta_log_end_offset(ctl_meta(ctl));
    controller_register(inc1, 9093);
    CU_ASSERT_EQUAL(meta_log_end_offset(ctl_meta(ctl)), end + 1);
    const mi_controller_t *c = meta_image_controller(ctl_image(ctl), 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(!memcmp(c->incarnation, inc1, 16) && !c->zk_migration_ready);
    CU_ASSERT_EQUAL_FATAL(c->nendpoints, 1);
    CU_ASSERT_STRING_EQUAL(c->endpoints[0].name, "CONTROLLER");
    CU_ASSERT_STRING_EQUAL(c->endpoints[0].host, "127.0.0.1");
    CU_ASSERT_EQUAL(c->endpoints[0].port, 9093);
    CU_ASSERT_EQUAL_FATAL(c->nfeatures, 1);
    CU_ASSERT_STRING_EQUAL(c->features[0].name, "metadata.version");
    CU_ASSERT(c->features[0].min == 23 && c->features[0].max == 29);
    controller_register(inc2, 9095); /* restarted elsewhere */
    CU_ASSERT_EQUAL(ctl_image(ctl)->ncontrollers, 1);
    c = meta_image_controller(ctl_image(ctl), 2);
    CU_ASSERT(!memcmp(c->incarnation, inc2, 16) && c->endpoints[0].port == 9095);
    ctl_free(ctl);
    log_mgr_close(mgr, -1);
    ctl = open_ctl();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctl);
    c = meta_image_controller(ctl_image(ctl), 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    CU_ASSERT(!memcmp(c->incarnation, inc2, 16) && c->endpoints[0].port == 9095);
}

int main(void)
{
    lg_set_level(LG_WARN);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("node registration", setup, teardown);
    CU_add_test(s, "register, heartbeat, restart", test_register);
    CU_pSuite s2 = CU_add_suite("node unfenced again", setup, teardown);
    CU_add_test(s2, "unfence again", test_unfence_again);
    CU_pSuite s3 = CU_add_suite("placement", setup, teardown);
    CU_add_test(s3, "over registered brokers", test_placement);
    CU_pSuite s4 = CU_add_suite("fenced assignment", setup, teardown);
    CU_add_test(s4, "fenced", test_assignment_fenced);
    CU_pSuite s5 = CU_add_suite("controller registration", setup, teardown);
    CU_add_test(s5, "registered, replaced, replayed", test_controller_registration);
    return unit_run();
}
