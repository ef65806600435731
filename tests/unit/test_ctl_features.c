/* Feature levels in the controller (cluster/ctl_features.c) on a real
 * metadata log: the levels a fresh log finalizes and their epoch, the
 * supported table, UpdateFeatures' checks with Kafka 4.4's messages (the
 * same requests were sent to Kafka 4.4, whose answers these are, with its
 * supported ranges where Strand's differ), all or nothing, the order in
 * which Kafka meets several updates, validate-only, the records
 * committed, restarts, and a log finalizing a level this node does not
 * support. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/cfg_topic.h"
#include "cluster/ctl.h"
#include "cluster/ctl_int.h"
#include "cluster/meta_log.h"
#include "log/log_mgr.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_log.h"
#include "util/kerr.h"

#define NOW 1700000000000LL
#define MV CTL_FEATURE_METADATA_VERSION

static char tmpdir[256];
static log_mgr_t *mgr;
static ctl_t *ctl;

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
    cfg_topic_defaults(&cc.defaults);
    return ctl_open(mgr, &cc, NOW);
}

static void reopen(void)
{
    ctl_free(ctl);
    log_mgr_close(mgr, -1);
    ctl = open_ctl();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctl);
}

static int setup(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/strand-ctl-features-%d", (int)getpid());
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

static int64_t leo(void)
{
    return log_end_offset(ctl_meta(ctl)->log);
}

static int level(const char *name)
{
    return meta_image_feature(ctl_image(ctl), name);
}

static void op_done(ctl_op_t *op)
{
    (void)op;
}

/* Submits op (no pool: to the end in the call): its error, the message
 * in msg. */
static int16_t run_op(ctl_op_t *op, char *msg)
{
    op->nassign = -1;
    op->done = op_done;
    op->now_ms = NOW;
    ctl_submit(ctl, op);
    snprintf(msg, 512, "%s", op->msg);
    return op->err;
}

/* Runs one CTL_UPDATE_FEATURES of "name:level:type" updates (no pool: to
 * the end in the call); returns the error, the message in msg. */
static int16_t update(int validate, char *msg, int n, const char *const *spec)
{
    ctl_feature_update_t u[32];
    char names[32][64];
    ctl_op_t op;

    for (int i = 0; i < n; i++) {
        int lvl, type;
        const char *c = strchr(spec[i], ':');
        snprintf(names[i], sizeof(names[i]), "%.*s", (int)(c - spec[i]), spec[i]);
        sscanf(c + 1, "%d:%d", &lvl, &type);
        u[i] = (ctl_feature_update_t){names[i], strlen(names[i]), (int16_t)lvl, (int8_t)type};
    }
    memset(&op, 0, sizeof(op));
    op.kind = CTL_UPDATE_FEATURES;
    op.features = u;
    op.nfeatures = n;
    op.validate_only = validate;
    return run_op(&op, msg);
}

#define UPDATE(validate, msg, ...)                                                                \
    update((validate), (msg), (int)(sizeof((const char *[]){__VA_ARGS__}) / sizeof(char *)),   \
           (const char *[]){__VA_ARGS__})

static void expect_refused(const char *spec, const char *want)
{
    char msg[512];
    int64_t before = leo();
    CU_ASSERT_EQUAL(update(0, msg, 1, &spec), KERR_INVALID_UPDATE_VERSION);
    if (strcmp(msg, want))
        fprintf(stderr, "\n  %s: got \"%s\"\n  want \"%s\"\n", spec, msg, want);
    CU_ASSERT_STRING_EQUAL(msg, want);
    CU_ASSERT_EQUAL(leo(), before);
}

static void test_bootstrap(void)
{
    int n;
    const ctl_feature_t *f = ctl_features(&n);
    size_t pos = 0;
    meta_str_t name;
    int16_t lvl;

    CU_ASSERT_EQUAL(n, 7);
    CU_ASSERT_STRING_EQUAL(f[0].name, MV);
    CU_ASSERT_EQUAL(f[0].min_level, 23);
    CU_ASSERT_EQUAL(f[0].max_level, 29);
    for (int i = 1; i < n; i++)
        CU_ASSERT(f[i].min_level == 0 &&
                  f[i].max_level == (strcmp(f[i].name, CTL_FEATURE_ELR) ? 0 : 1));
    CU_ASSERT_PTR_NOT_NULL(ctl_feature_find("share.version", 13));
    CU_ASSERT_PTR_NULL(ctl_feature_find("share.versio", 12));
    /* The bootstrap batch: one FeatureLevelRecord at offset 0. */
    CU_ASSERT_EQUAL(level(MV), 25);
    CU_ASSERT_EQUAL(ctl_features_epoch(ctl), 0);
    CU_ASSERT(meta_image_feature_next(ctl_image(ctl), &pos, &name, &lvl));
    CU_ASSERT(name.len == 16 && !memcmp(name.p, MV, 16) && lvl == 25);
    CU_ASSERT_FALSE(meta_image_feature_next(ctl_image(ctl), &pos, &name, &lvl));
}

static void test_refusals(void)
{
    expect_refused("foo.bar:1:1", "Invalid update version 1 for feature foo.bar. Local controller "
                                  "1 does not support this feature.");
    expect_refused("foo.bar:0:2", "Invalid update version 0 for feature foo.bar. Feature foo.bar "
                                  "not found.");
    expect_refused("group.version:1:1", "Invalid update version 1 for feature group.version. "
                                        "Local controller 1 does not support this feature.");
    expect_refused("kraft.version:1:1", "Invalid update version 1 for feature kraft.version. "
                                        "Local controller 1 does not support this feature.");
    expect_refused("metadata.version:30:1", "Invalid update version 30 for feature "
                   "metadata.version. Local controller 1 only supports versions 23-29");
    expect_refused("metadata.version:22:2", "Invalid update version 22 for feature "
                   "metadata.version. Local controller 1 only supports versions 23-29");
    expect_refused("metadata.version:0:3", "Invalid update version 0 for feature "
                   "metadata.version. Local controller 1 only supports versions 23-29");
    expect_refused("metadata.version:24:1", "Invalid update version 24 for feature "
                   "metadata.version. Can't downgrade the version of this feature without "
                   "setting the upgrade type to either safe or unsafe downgrade.");
    expect_refused("metadata.version:26:2", "Invalid update version 26 for feature "
                   "metadata.version. Can't downgrade to a newer version.");
    expect_refused("group.version:1:0", "Invalid update version 1 for feature group.version. "
                                        "The controller does not support the given upgrade type.");
    expect_refused("group.version:0:4", "Invalid update version 0 for feature group.version. "
                                        "The controller does not support the given upgrade type.");
    expect_refused("group.version:-1:2", "Invalid update version -1 for feature group.version. "
                                         "A feature version cannot be less than 0.");
    CU_ASSERT_EQUAL(level(MV), 25);
}

/* One refusal refuses every update; of several, the first Kafka's
 * HashMap order meets (as Kafka 4.4 answered these). */
static void test_all_or_nothing(void)
{
    char msg[512];
    int64_t before = leo();

    CU_ASSERT_EQUAL(UPDATE(0, msg, "metadata.version:29:1", "group.version:1:1"),
                    KERR_INVALID_UPDATE_VERSION);
    CU_ASSERT_EQUAL(level(MV), 25);
    CU_ASSERT_EQUAL(leo(), before);
    CU_ASSERT_EQUAL(UPDATE(0, msg, "foo.bar:1:1", "group.version:1:1"),
                    KERR_INVALID_UPDATE_VERSION);
    CU_ASSERT(strstr(msg, "for feature group.version.") != NULL);
    /* 12 names: 16 buckets; 13: 32. */
    UPDATE(0, msg, "t:1:1", "s:1:1", "r:1:1", "q:1:1", "p:1:1", "o:1:1", "n:1:1", "m:1:1",
           "l:1:1", "k:1:1", "j:1:1", "i:1:1");
    CU_ASSERT(strstr(msg, "for feature p.") != NULL);
    UPDATE(0, msg, "t:1:1", "s:1:1", "r:1:1", "q:1:1", "p:1:1", "o:1:1", "n:1:1", "m:1:1",
           "l:1:1", "k:1:1", "j:1:1", "i:1:1", "h:1:1");
    CU_ASSERT(strstr(msg, "for feature h.") != NULL);
    CU_ASSERT_EQUAL(leo(), before);
}

static void test_metadata_version(void)
{
    char msg[512];
    int64_t before = leo();

    CU_ASSERT_EQUAL(UPDATE(1, msg, "metadata.version:29:1"), KERR_NONE);
    CU_ASSERT_EQUAL(level(MV), 25);
    CU_ASSERT_EQUAL(leo(), before);
    CU_ASSERT_EQUAL(UPDATE(0, msg, "metadata.version:29:1"), KERR_NONE);
    CU_ASSERT_EQUAL(level(MV), 29);
    CU_ASSERT_EQUAL(leo(), before + 1);
    CU_ASSERT_EQUAL(ctl_features_epoch(ctl), before);
    /* Safe and unsafe downgrades inside 23-29 cross no level that changed
     * the records. */
    CU_ASSERT_EQUAL(UPDATE(0, msg, "metadata.version:24:2"), KERR_NONE);
    CU_ASSERT_EQUAL(UPDATE(0, msg, "metadata.version:23:3"), KERR_NONE);
    CU_ASSERT_EQUAL(level(MV), 23);
    /* The same level again commits a record too, as Kafka's does; a name
     * given twice takes its last values. */
    CU_ASSERT_EQUAL(UPDATE(0, msg, "metadata.version:29:1", "metadata.version:25:1"), KERR_NONE);
    CU_ASSERT_EQUAL(level(MV), 25);
    CU_ASSERT_EQUAL(UPDATE(0, msg, "metadata.version:25:2"), KERR_NONE);
    CU_ASSERT_EQUAL(leo(), before + 5);
    reopen();
    CU_ASSERT_EQUAL(level(MV), 25);
    CU_ASSERT_EQUAL(ctl_features_epoch(ctl), before + 4);
}

/* Kafka's rule, on its numbering (33 -> 32 and 31 -> 29 refused by Kafka
 * 4.4, 31 -> 30 and 29 -> 24 allowed). */
static void test_downgrade_rule(void)
{
    CU_ASSERT_TRUE(ctl_mv_changed_between(32, 33));
    CU_ASSERT_TRUE(ctl_mv_changed_between(29, 31));
    CU_ASSERT_FALSE(ctl_mv_changed_between(30, 31));
    CU_ASSERT_FALSE(ctl_mv_changed_between(24, 29));
    CU_ASSERT_FALSE(ctl_mv_changed_between(23, 29));
    CU_ASSERT_TRUE(ctl_mv_changed_between(22, 25));
}

/* Level 0 of the other features: a FeatureLevelRecord at 0 (nothing
 * finalized); kraft.version's upgrade a NoOpRecord, its downgrade
 * nothing. */
static void test_level_zero(void)
{
    char msg[512];
    int64_t before = leo();
    size_t pos = 0;
    meta_str_t name;
    int16_t lvl;
    int n = 0;

    CU_ASSERT_EQUAL(UPDATE(0, msg, "group.version:0:1", "streams.version:0:2"), KERR_NONE);
    CU_ASSERT_EQUAL(leo(), before + 2);
    CU_ASSERT_EQUAL(UPDATE(0, msg, "kraft.version:0:1"), KERR_NONE);
    CU_ASSERT_EQUAL(leo(), before + 3);
    CU_ASSERT_EQUAL(UPDATE(0, msg, "kraft.version:0:3"), KERR_NONE);
    CU_ASSERT_EQUAL(leo(), before + 3);
    while (meta_image_feature_next(ctl_image(ctl), &pos, &name, &lvl))
        n++;
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(level("group.version"), 0);
}

/* A cluster-wide config change (value NULL: removed): its error. */
static int16_t cluster_config(const char *key, const char *value, char *msg)
{
    ctl_kv_t kv = {key, value};
    ctl_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = CTL_ALTER_BROKER_CONFIGS;
    op.name = "";
    op.kv = &kv;
    op.nkv = 1;
    return run_op(&op, msg);
}

/* Eligible leader replicas on: the safety record first (the cluster's
 * min.insync.replicas, server.properties' value), only when there is
 * none; while on, that config cannot be removed. */
static void test_elr(void)
{
    char msg[512];
    int64_t before = leo();
    const meta_image_t *img = ctl_image(ctl);

    CU_ASSERT_EQUAL(UPDATE(0, msg, CTL_FEATURE_ELR ":1:1"), KERR_NONE);
    CU_ASSERT_EQUAL(level(CTL_FEATURE_ELR), 1);
    CU_ASSERT_EQUAL(leo(), before + 2);
    const char *v = meta_image_config_get(img, META_RES_BROKER, "", 0, "min.insync.replicas");
    CU_ASSERT(v && !strcmp(v, "1"));
    CU_ASSERT_EQUAL(cluster_config("min.insync.replicas", NULL, msg), KERR_INVALID_CONFIG);
    CU_ASSERT_STRING_EQUAL(msg, "Cluster-level min.insync.replicas cannot be removed while ELR "
                                "is enabled.");
    CU_ASSERT_EQUAL(cluster_config("min.insync.replicas", "2", msg), KERR_NONE);
    CU_ASSERT_EQUAL(UPDATE(0, msg, CTL_FEATURE_ELR ":0:2"), KERR_NONE);
    CU_ASSERT_EQUAL(cluster_config("min.insync.replicas", NULL, msg), KERR_NONE);
    CU_ASSERT_EQUAL(UPDATE(0, msg, CTL_FEATURE_ELR ":1:1"), KERR_NONE);
    v = meta_image_config_get(img, META_RES_BROKER, "", 0, "min.insync.replicas");
    CU_ASSERT(v && !strcmp(v, "1"));
    CU_ASSERT_EQUAL(UPDATE(0, msg, CTL_FEATURE_ELR ":1:1"), KERR_NONE); /* no safety record */
    CU_ASSERT_EQUAL(leo(), before + 8);
    CU_ASSERT_EQUAL(UPDATE(0, msg, CTL_FEATURE_ELR ":0:2"), KERR_NONE);
}

/* A log finalizing a level this node does not support: refused at
 * start-up, as Kafka refuses it. */
static void test_unsupported_log(void)
{
    meta_rec_t r;
    meta_rec_init(&r, META_REC_FEATURE_LEVEL);
    r.u.feature.name = (meta_str_t){"share.version", 13};
    r.u.feature.feature_level = 1;
    CU_ASSERT_EQUAL(meta_log_commit(ctl_meta(ctl), &r, 1, NOW), 0);
    ctl_free(ctl);
    log_mgr_close(mgr, -1);
    ctl = open_ctl();
    CU_ASSERT_PTR_NULL(ctl);
    log_mgr_close(mgr, -1);
    mgr = NULL;
    unit_rm_rf(tmpdir);
    ctl = open_ctl();
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctl);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("ctl_features", setup, teardown);
    CU_add_test(s, "bootstrap and supported levels", test_bootstrap);
    CU_add_test(s, "refusals", test_refusals);
    CU_add_test(s, "all or nothing, Kafka's order", test_all_or_nothing);
    CU_add_test(s, "metadata.version", test_metadata_version);
    CU_add_test(s, "downgrade rule", test_downgrade_rule);
    CU_add_test(s, "level 0", test_level_zero);
    CU_add_test(s, "eligible leader replicas", test_elr);
    CU_add_test(s, "unsupported level in the log", test_unsupported_log);
    return unit_run();
}
