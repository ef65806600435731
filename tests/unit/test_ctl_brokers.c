/* This node's registration with its own controller (cluster/ctl_brokers.c)
 * on a real metadata log: the RegisterBrokerRecord (fenced, its epoch the
 * record's offset, the listeners, features, rack and log dir ids given)
 * and the unfencing, committed before the call returns; a restart
 * registers a new incarnation at a new epoch without being refused as a
 * duplicate of the old one; heartbeats through the queue write nothing
 * while the state holds, and unfence the node again after a fence. */
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

int main(void)
{
    lg_set_level(LG_WARN);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("node registration", setup, teardown);
    CU_add_test(s, "register, heartbeat, restart", test_register);
    CU_pSuite s2 = CU_add_suite("node unfenced again", setup, teardown);
    CU_add_test(s2, "unfence again", test_unfence_again);
    return unit_run();
}
