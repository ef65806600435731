/* 0212-features: feature levels on the wire (ApiVersions v3+ and
 * UpdateFeatures v0-2, raw requests through the generated codecs), on a
 * broker of the test's own, which it restarts. Every answer is checked
 * against what Kafka 4.4 answers to the same request (KAFKA_REF=1 runs it
 * against Kafka):
 *
 * - ApiVersions v4 reports the seven features Kafka 4.4 names, each
 *   finalized one at a single level (min = max) inside its supported
 *   range, metadata.version among them and kraft.version (level 0 on a
 *   static quorum) not; v3 the same, but of the supported ranges only
 *   metadata.version's (the others start at 0, which clients before v4
 *   refuse); v2 has none of it. Their epoch is below the metadata log's
 *   high watermark (the offset of a record applied).
 * - UpdateFeatures refusals, each INVALID_UPDATE_VERSION (95) with Kafka's
 *   message behind "The update failed for all features since the
 *   following feature had an error: " and no per-feature results: an
 *   unknown feature (at 1, and at 0), a negative level, an unknown upgrade
 *   type (0 and 4), metadata.version above and below the supported range,
 *   a downgrade with the UPGRADE type, a SAFE_DOWNGRADE to a higher level;
 *   of two refusals the one Kafka's controller meets first; one refusal
 *   refuses the whole request (nothing finalized changes); v0's
 *   AllowDowngrade changes nothing (Kafka 4.4's controller reads only the
 *   upgrade type).
 * - Successes: error 0, a null message, every update of the request in
 *   the results at v0/v1 (error 0, "NONE"), none at v2; validate-only
 *   commits nothing; an empty request.
 * - A change committed (the finalized levels and the epoch move), kept
 *   across a restart, and undone.
 *
 * Where the supported levels differ by design (Strand: metadata.version
 * 23-29 and every other feature 0 only, finalized at 25 on a new node;
 * Kafka 4.4: 7-33 and the others up to 1 or 2, all finalized at the top),
 * the test picks its levels from the broker's own answer, and checks
 * Strand's rules on Strand only: its exact ranges, and that downgrades
 * within 23-29 are allowed safe and unsafe (they cross no level that
 * changed the metadata records; Kafka at 30, 32 or 33 refuses to go below
 * them, checked against Kafka). */
#include "testlib/testlib.h"
#include "testlib/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/kerr.h"

#define S tl_wire_str
#define MV "metadata.version"
#define ELR "eligible.leader.replicas.version"
#define FAILED "The update failed for all features since the following feature had an error: "

static arena_t arena;
static int fd;

typedef struct feats {
    int nsup, nfin;
    struct {
        char name[64];
        int16_t min, max;
    } sup[16], fin[16];
    int64_t epoch;
} feats;

static int eq(proto_str_t a, const char *b)
{
    return a.len >= 0 && (size_t)a.len == strlen(b) && !memcmp(a.p, b, (size_t)a.len);
}

static void copy_name(char *dst, proto_str_t s)
{
    TL_ASSERT(s.len > 0 && s.len < 64, "feature name of %d bytes", s.len);
    memcpy(dst, s.p, (size_t)s.len);
    dst[s.len] = 0;
}

static void get_features(int16_t ver, feats *f)
{
    proto_api_versions_req_t r;
    proto_api_versions_resp_t resp;
    proto_api_versions_req_init(&r);
    r.client_software_name = S("strand-test");
    r.client_software_version = S("1.0");
    TL_WIRE_CALL(fd, &arena, api_versions, 18, ver, &r, &resp);
    TL_ASSERT_EQ(resp.error_code, 0);
    TL_ASSERT(resp.supported_features.n <= 16 && resp.finalized_features.n <= 16, "features");
    memset(f, 0, sizeof(*f));
    f->nsup = resp.supported_features.n;
    for (int i = 0; i < f->nsup; i++) {
        copy_name(f->sup[i].name, resp.supported_features.v[i].name);
        f->sup[i].min = resp.supported_features.v[i].min_version;
        f->sup[i].max = resp.supported_features.v[i].max_version;
    }
    f->nfin = resp.finalized_features.n;
    for (int i = 0; i < f->nfin; i++) {
        copy_name(f->fin[i].name, resp.finalized_features.v[i].name);
        f->fin[i].min = resp.finalized_features.v[i].min_version_level;
        f->fin[i].max = resp.finalized_features.v[i].max_version_level;
    }
    f->epoch = resp.finalized_features_epoch;
    arena_reset(&arena);
}

static int sup_find(const feats *f, const char *name)
{
    for (int i = 0; i < f->nsup; i++)
        if (!strcmp(f->sup[i].name, name))
            return i;
    tl_fail("%s not among the supported features", name);
}

/* The finalized level, 0 when not finalized. */
static int fin_level(const feats *f, const char *name)
{
    for (int i = 0; i < f->nfin; i++)
        if (!strcmp(f->fin[i].name, name))
            return f->fin[i].max;
    return 0;
}

static int same_fin(const feats *a, const feats *b)
{
    if (a->nfin != b->nfin)
        return 0;
    for (int i = 0; i < a->nfin; i++)
        if (fin_level(b, a->fin[i].name) != a->fin[i].max)
            return 0;
    return 1;
}

static void same_finalized(const feats *a, const feats *b)
{
    TL_ASSERT(same_fin(a, b), "finalized features changed (%d, were %d)", b->nfin, a->nfin);
}

/* ApiVersions until it shows name at level. Strand answers a change once
 * it is applied, so at once; Kafka's broker applies it after its
 * controller has answered, so within moments. */
static void wait_level(const char *name, int level, feats *now)
{
    double deadline = tl_now() + 15;
    for (;;) {
        get_features(4, now);
        if (fin_level(now, name) == level)
            return;
        TL_ASSERT(tl_is_kafka() && tl_now() < deadline, "%s at %d, expected %d", name,
                  fin_level(now, name), level);
        usleep(100 * 1000);
    }
}

/* ---- UpdateFeatures ---- */

typedef struct upd {
    const char *name;
    int level, type; /* type: the upgrade type; at v0 AllowDowngrade = (type != 1) */
} upd;

static void update(int16_t ver, int validate, int n, const upd *u,
                   proto_update_features_resp_t *resp)
{
    proto_update_features_req_t r;
    proto_update_features_req_init(&r);
    r.feature_updates.n = n;
    r.feature_updates.v = arena_calloc(&arena, (size_t)n + 1, sizeof(*r.feature_updates.v));
    for (int i = 0; i < n; i++) {
        proto_update_features_req_feature_update_key_t *k = &r.feature_updates.v[i];
        proto_update_features_req_feature_update_key_init(k);
        k->feature = S(u[i].name);
        k->max_version_level = (int16_t)u[i].level;
        k->upgrade_type = (int8_t)u[i].type;
        k->allow_downgrade = u[i].type != 1;
    }
    r.validate_only = validate;
    TL_WIRE_CALL(fd, &arena, update_features, 57, ver, &r, resp);
}

/* Refused as Kafka refuses it: want is the reason after the prefix (a
 * prefix of it when `prefix_only`). */
static void refused_as(int16_t ver, int n, const upd *u, const char *want, int prefix_only)
{
    proto_update_features_resp_t resp;
    char full[1024];
    update(ver, 0, n, u, &resp);
    snprintf(full, sizeof(full), FAILED "%s", want);
    TL_ASSERT(resp.error_code == KERR_INVALID_UPDATE_VERSION, "v%d %s:%d: error %d (%.*s)", ver,
              u[0].name, u[0].level, resp.error_code, resp.error_message.len,
              resp.error_message.p);
    TL_ASSERT(prefix_only ? resp.error_message.len >= (int32_t)strlen(full) &&
                                !memcmp(resp.error_message.p, full, strlen(full))
                          : eq(resp.error_message, full),
              "v%d %s:%d: message \"%.*s\", expected \"%s\"", ver, u[0].name, u[0].level,
              resp.error_message.len, resp.error_message.p, full);
    TL_ASSERT_EQ(resp.results.n, 0);
    arena_reset(&arena);
}

static void refused(int n, const upd *u, const char *want)
{
    refused_as(1, n, u, want, 0);
}

static void accepted(int16_t ver, int validate, int n, const upd *u)
{
    proto_update_features_resp_t resp;
    update(ver, validate, n, u, &resp);
    TL_ASSERT(resp.error_code == 0, "v%d %s:%d: error %d (%.*s)", ver, n ? u[0].name : "-",
              n ? u[0].level : 0, resp.error_code, resp.error_message.len, resp.error_message.p);
    TL_ASSERT(resp.error_message.len < 0, "v%d: a message on success", ver);
    TL_ASSERT_EQ(resp.results.n, ver <= 1 ? n : 0);
    for (int i = 0; ver <= 1 && i < n; i++) {
        TL_ASSERT(eq(resp.results.v[i].feature, u[i].name), "result %d", i);
        TL_ASSERT_EQ(resp.results.v[i].error_code, 0);
        TL_ASSERT(eq(resp.results.v[i].error_message, "NONE"), "result %d message", i);
    }
    arena_reset(&arena);
}

/* The metadata log's high watermark (DescribeQuorum v1). */
static int64_t quorum_hw(void)
{
    proto_describe_quorum_req_t r;
    proto_describe_quorum_resp_t resp;
    proto_describe_quorum_req_topic_data_t t;
    proto_describe_quorum_req_partition_data_t p = {0};

    proto_describe_quorum_req_init(&r);
    proto_describe_quorum_req_topic_data_init(&t);
    t.topic_name = S("__cluster_metadata");
    t.partitions.n = 1;
    t.partitions.v = &p;
    r.topics.n = 1;
    r.topics.v = &t;
    TL_WIRE_CALL(fd, &arena, describe_quorum, 55, 1, &r, &resp);
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == 1, "DescribeQuorum");
    TL_ASSERT_EQ(resp.topics.v[0].partitions.v[0].error_code, 0);
    int64_t hw = resp.topics.v[0].partitions.v[0].high_watermark;
    arena_reset(&arena);
    return hw;
}

/* ---- the scenario ---- */

static void check_reported(const feats *f)
{
    static const char *const names[] = {MV, "kraft.version", "group.version",
                                        "transaction.version", "eligible.leader.replicas.version",
                                        "share.version", "streams.version"};
    feats v3, v2;
    for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
        int s = sup_find(f, names[i]);
        TL_ASSERT(f->sup[s].min >= 0 && f->sup[s].min <= f->sup[s].max, "%s range", names[i]);
    }
    for (int i = 0; i < f->nfin; i++) {
        int s = sup_find(f, f->fin[i].name);
        TL_ASSERT(f->fin[i].min == f->fin[i].max && f->fin[i].max > 0, "%s finalized %d-%d",
                  f->fin[i].name, f->fin[i].min, f->fin[i].max);
        TL_ASSERT(f->fin[i].max >= f->sup[s].min && f->fin[i].max <= f->sup[s].max,
                  "%s finalized at %d outside %d-%d", f->fin[i].name, f->fin[i].max,
                  f->sup[s].min, f->sup[s].max);
    }
    TL_ASSERT(fin_level(f, MV) > 0, "metadata.version not finalized");
    TL_ASSERT_EQ(fin_level(f, "kraft.version"), 0);
    int64_t hw = quorum_hw();
    TL_ASSERT(f->epoch >= 0 && f->epoch < hw, "epoch %lld, high watermark %lld",
              (long long)f->epoch, (long long)hw);
    if (!tl_is_kafka())
        TL_ASSERT_EQ(f->epoch, hw - 1);
    /* v3 leaves out the ranges starting at 0 (older clients refuse them). */
    get_features(3, &v3);
    same_finalized(f, &v3);
    TL_ASSERT(v3.epoch >= f->epoch, "v3 epoch %lld", (long long)v3.epoch);
    TL_ASSERT_EQ(v3.nsup, 1);
    TL_ASSERT(!strcmp(v3.sup[0].name, MV) && v3.sup[0].min == f->sup[sup_find(f, MV)].min &&
              v3.sup[0].max == f->sup[sup_find(f, MV)].max, "v3 supported %s", v3.sup[0].name);
    get_features(2, &v2);
    TL_ASSERT(v2.nsup == 0 && v2.nfin == 0, "features at v2");
}

/* Strand's own levels (README: what each means). */
static void check_strand_levels(const feats *f)
{
    for (int i = 0; i < f->nsup; i++) {
        int mv = !strcmp(f->sup[i].name, MV), elr = !strcmp(f->sup[i].name, ELR);
        TL_ASSERT(f->sup[i].min == (mv ? 23 : 0) && f->sup[i].max == (mv ? 29 : elr ? 1 : 0),
                  "%s supported %d-%d", f->sup[i].name, f->sup[i].min, f->sup[i].max);
    }
    TL_ASSERT_EQ(f->nsup, 7);
    TL_ASSERT_EQ(f->nfin, 2);
    TL_ASSERT_EQ(fin_level(f, MV), 25);
    TL_ASSERT_EQ(fin_level(f, ELR), 1);
    /* The bootstrap records (metadata.version, eligible leader replicas
     * and the cluster's min.insync.replicas), the node's registration and
     * its unfencing. */
    TL_ASSERT_EQ(f->epoch, 4);
}

/* A SAFE_DOWNGRADE to a level above the finalized one, on any feature
 * that has room above it. Returns 0 when none has. */
static int newer_downgrade(const feats *f)
{
    char want[256];
    for (int i = 0; i < f->nsup; i++) {
        int cur = fin_level(f, f->sup[i].name);
        if (cur >= f->sup[i].max)
            continue;
        upd u = {f->sup[i].name, cur + 1, 2};
        snprintf(want, sizeof(want), "Invalid update version %d for feature %s. Can't "
                 "downgrade to a newer version.", cur + 1, f->sup[i].name);
        refused(1, &u, want);
        return 1;
    }
    return 0;
}

static void refusals(const feats *f)
{
    int s = sup_find(f, MV), cur = fin_level(f, MV);
    char want[256];
    feats after;

    refused(1, &(upd){"foo.bar", 1, 1}, "Invalid update version 1 for feature foo.bar. Local "
                                        "controller 1 does not support this feature.");
    refused(1, &(upd){"foo.bar", 0, 2}, "Invalid update version 0 for feature foo.bar. Feature "
                                        "foo.bar not found.");
    refused(1, &(upd){"group.version", -1, 2}, "Invalid update version -1 for feature "
                                               "group.version. A feature version cannot be less "
                                               "than 0.");
    for (int type = 0; type <= 4; type += 4)
        refused(1, &(upd){"group.version", 1, type}, "Invalid update version 1 for feature "
                "group.version. The controller does not support the given upgrade type.");
    snprintf(want, sizeof(want), "Invalid update version %d for feature metadata.version. Local "
             "controller 1 only supports versions %d-%d", f->sup[s].max + 1, f->sup[s].min,
             f->sup[s].max);
    refused(1, &(upd){MV, f->sup[s].max + 1, 1}, want);
    snprintf(want, sizeof(want), "Invalid update version %d for feature metadata.version. Local "
             "controller 1 only supports versions %d-%d", f->sup[s].min - 1, f->sup[s].min,
             f->sup[s].max);
    refused(1, &(upd){MV, f->sup[s].min - 1, 2}, want);
    snprintf(want, sizeof(want), "Invalid update version %d for feature metadata.version. Can't "
             "downgrade the version of this feature without setting the upgrade type to either "
             "safe or unsafe downgrade.", cur - 1);
    refused(1, &(upd){MV, cur - 1, 1}, want);
    /* v0's AllowDowngrade: the same refusal. */
    refused_as(0, 1, &(upd){MV, cur - 1, 2}, want, 0);
    /* Kafka's controller meets group.version before foo.bar. */
    refused_as(1, 2, (upd[]){{"foo.bar", 1, 1}, {"group.version", 9, 1}},
               "Invalid update version 9 for feature group.version. Local controller 1 ", 1);
    /* All or nothing: the valid one is not committed either. */
    refused(2, (upd[]){{MV, f->sup[s].max, 1}, {"foo.bar", 1, 1}},
            "Invalid update version 1 for feature foo.bar. Local controller 1 does not support "
            "this feature.");
    if (cur == 30 || cur == 32 || cur == 33) {
        snprintf(want, sizeof(want), "Unsupported metadata.version downgrade from %d to %d. "
                 "Refusing to perform the requested downgrade because it might delete metadata "
                 "information.", cur, cur - 1);
        refused(1, &(upd){MV, cur - 1, 2}, want);
        snprintf(want, sizeof(want), "Unsupported metadata.version downgrade from %d to %d. "
                 "Unsafe metadata downgrade is not supported in this version.", cur, cur - 1);
        refused(1, &(upd){MV, cur - 1, 3}, want);
    }
    get_features(4, &after);
    same_finalized(f, &after);
    if (!tl_is_kafka())
        TL_ASSERT_EQ(after.epoch, f->epoch);
}

static void successes(const feats *f)
{
    int cur = fin_level(f, MV);
    const upd zero[] = {{"group.version", 0, 2}, {"transaction.version", 0, 2}};
    const upd twice[] = {{MV, cur, 1}, {MV, cur, 1}};
    feats after;

    for (int16_t v = 1; v <= 2; v++)
        accepted(v, 1, 2, zero);
    accepted(1, 1, 2, twice);
    accepted(2, 0, 0, NULL);
    get_features(4, &after);
    same_finalized(f, &after);
    if (!tl_is_kafka())
        TL_ASSERT_EQ(after.epoch, f->epoch);
    /* v0 has no validate-only: the same level again is a change, a record. */
    accepted(0, 0, 1, twice);
    get_features(4, &after);
    same_finalized(f, &after);
    TL_ASSERT(after.epoch > f->epoch, "epoch %lld after a commit, was %lld",
              (long long)after.epoch, (long long)f->epoch);
    if (!tl_is_kafka())
        TL_ASSERT_EQ(after.epoch, f->epoch + 1);
}

static void reconnect(const tl_broker *b)
{
    close(fd);
    fd = tl_connect(b->bootstrap, 20000);
    TL_ASSERT(fd >= 0, "connect to %s", b->bootstrap);
}

/* One change there and back, kept across a restart: metadata.version up
 * to its top where the broker has room (Strand), else group.version down
 * to 0 (Kafka, finalized at its top). */
static int round_trip(tl_broker *b, const char *dir, const feats *f)
{
    int s = sup_find(f, MV), cur = fin_level(f, MV), checked = 0;
    upd there, back;
    feats now, again;

    if (cur < f->sup[s].max) {
        there = (upd){MV, f->sup[s].max, 1};
        back = (upd){MV, cur, 2};
    } else if (fin_level(f, "group.version") > 0) {
        there = (upd){"group.version", 0, 2};
        back = (upd){"group.version", fin_level(f, "group.version"), 1};
    } else {
        tl_fail("no feature to change");
    }
    accepted(2, 0, 1, &there);
    wait_level(there.name, there.level, &now);
    TL_ASSERT(now.epoch > f->epoch, "epoch %lld, was %lld", (long long)now.epoch,
              (long long)f->epoch);
    checked = newer_downgrade(&now);
    TL_ASSERT_EQ(tl_broker_stop(b), 0);
    tl_broker_start(b, dir, NULL);
    reconnect(b);
    wait_level(there.name, there.level, &again);
    same_finalized(&now, &again);
    TL_ASSERT(again.epoch >= now.epoch, "epoch %lld after the restart, was %lld",
              (long long)again.epoch, (long long)now.epoch);
    /* Strand: the restart's records are the new registration and its
     * unfencing. */
    if (!tl_is_kafka())
        TL_ASSERT_EQ(again.epoch, now.epoch + 2);
    accepted(1, 0, 1, &back);
    wait_level(back.name, back.level, &again);
    same_finalized(f, &again);
    return checked;
}

/* Strand's levels 23-29 cross no level that changed the records, so
 * every downgrade inside them is allowed, safe or unsafe, as Kafka's rule
 * allows it. */
static void strand_downgrades(const feats *f)
{
    feats now;
    int cur = fin_level(f, MV);
    accepted(2, 0, 1, &(upd){MV, 23, 3});
    accepted(2, 0, 1, &(upd){MV, 24, 1});
    accepted(2, 0, 1, &(upd){MV, 23, 2});
    wait_level(MV, 23, &now);
    accepted(2, 0, 1, &(upd){MV, cur, 1});
    wait_level(MV, cur, &now);
}

int main(void)
{
    tl_init("0212-features");
    char *dir = tl_scratch_dir("0212");
    tl_broker b = {0};
    feats f;
    int checked;

    arena_init(&arena, 4096);
    tl_broker_start(&b, dir, NULL);
    fd = tl_connect(b.bootstrap, 20000);
    TL_ASSERT(fd >= 0, "connect to %s", b.bootstrap);
    get_features(4, &f);
    check_reported(&f);
    if (!tl_is_kafka())
        check_strand_levels(&f);
    refusals(&f);
    checked = newer_downgrade(&f);
    successes(&f);
    get_features(4, &f);
    checked += round_trip(&b, dir, &f);
    TL_ASSERT(checked > 0, "no SAFE_DOWNGRADE to a newer level was tried");
    if (!tl_is_kafka())
        strand_downgrades(&f);
    close(fd);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    arena_destroy(&arena);
    free(dir);
    return tl_done();
}
