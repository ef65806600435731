/* Feature levels (ctl.h): the features this node knows, the levels of
 * each whose behaviour it implements, and the checks of UpdateFeatures,
 * made as a KRaft controller makes them, with its messages.
 *
 * A level is supported when Strand does what it stands for; a level is
 * raised here when its feature lands. metadata.version levels are the
 * record formats of the metadata log (the README, "Feature levels", says
 * what each means for Strand): from 23, where PartitionRecord v2 (the one
 * Strand writes) begins, to 29, the last before levels that add metadata
 * Strand has no part of (30: cordoned log dirs in broker registrations,
 * 32: CIDR ACL entries, 33: controller unregistration). Every other
 * feature stands for a protocol Strand does not have yet (KRaft's dynamic
 * voters, KIP-848 consumer groups, transactions v2, ELR, share groups,
 * streams groups), so only its level 0 is supported: such a feature is
 * never finalized above 0, and a level-0 record takes it out of the
 * finalized set, as in Kafka.
 *
 * A change is all or nothing: the updates are checked one at a time in
 * the order Kafka's controller meets them (the iteration order of a Java
 * HashMap of their names, so that of several refused updates the same
 * one is named), the first refusal refuses them all, and otherwise one
 * record per update is committed in that order. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/ctl_int.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"
#include "util/smap.h"

static const ctl_feature_t ctl_feature_table[] = {
    {CTL_FEATURE_METADATA_VERSION, 23, 29},
    {CTL_FEATURE_KRAFT_VERSION, 0, 0},
    {"group.version", 0, 0},
    {"transaction.version", 0, 0},
    {CTL_FEATURE_ELR, 0, 1},
    {"share.version", 0, 0},
    {"streams.version", 0, 0},
};
#define CTL_NFEATURES ((int)(sizeof(ctl_feature_table) / sizeof(ctl_feature_table[0])))

/* The metadata.version levels of Kafka's numbering that changed the
 * metadata records (its MetadataVersion marks them): a downgrade across
 * one of them could lose metadata, so Kafka refuses it, safe or unsafe.
 * Of Strand's levels only 23 did (the ELR fields of PartitionRecord v2),
 * and no downgrade goes below it: the rule refuses nothing until a level
 * above 29 is supported, and then 30, 32 and 33 count. */
static const int16_t ctl_mv_changed_levels[] = {7, 8, 11, 13, 14, 15, 17, 23, 30, 32, 33};

int ctl_mv_changed_between(int16_t to, int16_t from)
{
    for (size_t i = 0; i < sizeof(ctl_mv_changed_levels) / sizeof(ctl_mv_changed_levels[0]); i++)
        if (ctl_mv_changed_levels[i] > to && ctl_mv_changed_levels[i] <= from)
            return 1;
    return 0;
}

const ctl_feature_t *ctl_features(int *n)
{
    *n = CTL_NFEATURES;
    return ctl_feature_table;
}

int16_t ctl_feature_registered_max(const ctl_feature_t *f)
{
    return strcmp(f->name, CTL_FEATURE_KRAFT_VERSION) ? f->max_level : 1;
}

const ctl_feature_t *ctl_feature_find(const char *name, size_t len)
{
    for (int i = 0; i < CTL_NFEATURES; i++) {
        const ctl_feature_t *f = &ctl_feature_table[i];
        if (strlen(f->name) == len && !memcmp(f->name, name, len))
            return f;
    }
    return NULL;
}

int64_t ctl_features_epoch(const ctl_t *ctl)
{
    return ctl->meta->last_applied;
}

int ctl_features_check(const meta_image_t *img, char *err, size_t errlen)
{
    size_t pos = 0;
    meta_str_t name;
    int16_t level;

    while (meta_image_feature_next(img, &pos, &name, &level)) {
        const ctl_feature_t *f = ctl_feature_find(name.p, (size_t)name.len);
        if (!f || level < f->min_level || level > f->max_level) {
            snprintf(err, errlen, "the metadata log finalizes %.*s at level %d, which this "
                     "version of Strand does not support (%d-%d)", (int)name.len, name.p, level,
                     f ? f->min_level : 0, f ? f->max_level : 0);
            return -1;
        }
    }
    if (meta_image_feature(img, CTL_FEATURE_METADATA_VERSION) == 0) {
        snprintf(err, errlen, "the metadata log has no metadata.version");
        return -1;
    }
    return 0;
}

/* ---- the order Kafka's controller checks the updates in ---- */

/* One distinct feature of the request: the values of its last mention
 * (a Java map keeps the last put) at the place of its first. */
typedef struct ctl_fu_s {
    const ctl_feature_update_t *u;
    int first;
    uint32_t bucket;
} ctl_fu_t;

/* Java's String.hashCode, spread as HashMap spreads it. Exact for ASCII
 * names (every feature name); for others it only decides which of
 * several refused updates the message names. */
static uint32_t ctl_java_hash(const char *s, size_t n)
{
    uint32_t h = 0;
    for (size_t i = 0; i < n; i++)
        h = 31 * h + (uint8_t)s[i];
    return h ^ (h >> 16);
}

static int ctl_fu_cmp(const void *a, const void *b)
{
    const ctl_fu_t *x = a, *y = b;
    if (x->bucket != y->bucket)
        return x->bucket < y->bucket ? -1 : 1;
    return x->first - y->first;
}

/* The distinct updates of op in HashMap iteration order (16 buckets,
 * doubled past three quarters full; a bucket in insertion order). Returns
 * an array the caller frees; *n gets its length. */
static ctl_fu_t *ctl_fu_order(const ctl_op_t *op, int *n)
{
    ctl_fu_t *v = xmalloc((size_t)(op->nfeatures > 0 ? op->nfeatures : 1) * sizeof(*v));
    smap_t seen;
    uint32_t cap = 16;

    *n = 0;
    smap_init(&seen);
    for (int i = 0; i < op->nfeatures; i++) {
        const ctl_feature_update_t *u = &op->features[i];
        void *at = smap_get(&seen, u->name, u->name_len);
        if (at) {
            v[(intptr_t)at - 1].u = u;
            continue;
        }
        v[*n] = (ctl_fu_t){u, *n, 0};
        smap_put(&seen, u->name, u->name_len, (void *)(intptr_t)++*n);
    }
    smap_free(&seen);
    while ((uint32_t)*n > cap / 4 * 3)
        cap *= 2;
    for (int i = 0; i < *n; i++)
        v[i].bucket = ctl_java_hash(v[i].u->name, v[i].u->name_len) & (cap - 1);
    qsort(v, (size_t)*n, sizeof(*v), ctl_fu_cmp);
    return v;
}

/* ---- the checks of one update ---- */

static int16_t ctl_fu_fail(ctl_op_t *op, const ctl_feature_update_t *u, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* "Invalid update version L for feature F. <why>", Kafka's form. A name
 * too long for op->msg is cut (the message only). */
static int16_t ctl_fu_fail(ctl_op_t *op, const ctl_feature_update_t *u, const char *fmt, ...)
{
    char why[256];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, sizeof(why), fmt, ap);
    va_end(ap);
    snprintf(op->msg, sizeof(op->msg), "Invalid update version %d for feature %.*s. %s",
             u->level, (int)u->name_len, u->name, why);
    return KERR_INVALID_UPDATE_VERSION;
}

static int16_t ctl_mv_downgrade_fail(ctl_op_t *op, int16_t from, int16_t to, const char *why)
{
    snprintf(op->msg, sizeof(op->msg), "Unsupported metadata.version downgrade from %d to %d. %s",
             from, to, why);
    return KERR_INVALID_UPDATE_VERSION;
}

/* metadata.version's own rule: a downgrade may not cross a level that
 * changed the records. */
static int16_t ctl_fu_metadata(ctl_op_t *op, int16_t cur, int16_t to, int unsafe)
{
    if (to >= cur || !ctl_mv_changed_between(to, cur))
        return KERR_NONE;
    return ctl_mv_downgrade_fail(op, cur, to, unsafe
        ? "Unsafe metadata downgrade is not supported in this version."
        : "Refusing to perform the requested downgrade because it might delete metadata "
          "information.");
}

/* The checks Kafka makes, in its order. *rec_type gets the record the
 * update commits: FeatureLevelRecord, or NoOpRecord for kraft.version
 * (the voters' log carries it, not a feature record). */
static int16_t ctl_fu_check(ctl_t *ctl, ctl_op_t *op, const ctl_feature_update_t *u,
                            int16_t *rec_type)
{
    const ctl_feature_t *f = ctl_feature_find(u->name, u->name_len);
    int is_mv = f && !strcmp(f->name, CTL_FEATURE_METADATA_VERSION);
    int is_kraft = f && !strcmp(f->name, CTL_FEATURE_KRAFT_VERSION);
    int16_t lo = f ? f->min_level : 0, hi = f ? f->max_level : 0;
    int16_t cur = 0;

    if (u->upgrade_type < CTL_UPGRADE || u->upgrade_type > CTL_UNSAFE_DOWNGRADE)
        return ctl_fu_fail(op, u, "The controller does not support the given upgrade type.");
    if (f && !is_kraft)
        cur = (int16_t)meta_image_feature(&ctl->meta->img, f->name);
    if (u->level < 0)
        return ctl_fu_fail(op, u, "A feature version cannot be less than 0.");
    if (u->level < lo || u->level > hi) {
        if (hi == 0)
            return ctl_fu_fail(op, u, "Local controller %d does not support this feature.",
                               ctl->node_id);
        return ctl_fu_fail(op, u, "Local controller %d only supports versions %d-%d",
                           ctl->node_id, lo, hi);
    }
    if (u->level < cur && u->upgrade_type == CTL_UPGRADE)
        return ctl_fu_fail(op, u, "Can't downgrade the version of this feature without setting "
                           "the upgrade type to either safe or unsafe downgrade.");
    if (u->level > cur && u->upgrade_type != CTL_UPGRADE)
        return ctl_fu_fail(op, u, "Can't downgrade to a newer version.");
    *rec_type = META_REC_FEATURE_LEVEL;
    if (is_mv)
        return ctl_fu_metadata(op, cur, u->level, u->upgrade_type == CTL_UNSAFE_DOWNGRADE);
    /* kraft.version is supported at 0 only, so level == cur here: an
     * upgrade to it commits a NoOpRecord as Kafka's does, a downgrade to
     * it nothing. */
    if (is_kraft) {
        *rec_type = u->upgrade_type == CTL_UPGRADE ? META_REC_NOOP : -1;
        return KERR_NONE;
    }
    if (!f)
        return ctl_fu_fail(op, u, "Feature %.*s not found.", (int)u->name_len, u->name);
    return KERR_NONE;
}

int16_t ctl_plan_features(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    int n;
    ctl_fu_t *v = ctl_fu_order(op, &n);
    int16_t *types = xmalloc((size_t)(n > 0 ? n : 1) * sizeof(*types));
    int16_t err = KERR_NONE;

    for (int i = 0; i < n && !err; i++)
        err = ctl_fu_check(ctl, op, v[i].u, &types[i]);
    for (int i = 0; i < n && !err && !op->validate_only; i++)
        if (v[i].u->level >= 1 && v[i].u->name_len == strlen(CTL_FEATURE_ELR) &&
            !memcmp(v[i].u->name, CTL_FEATURE_ELR, v[i].u->name_len))
            ctl_elr_safety(ctl, b); /* ahead of the update's records, as Kafka's */
    for (int i = 0; i < n && !err && !op->validate_only; i++) {
        if (types[i] < 0)
            continue;
        meta_rec_t *r = ctl_batch_add(b, types[i]);
        if (types[i] == META_REC_FEATURE_LEVEL) {
            r->u.feature.name.p = v[i].u->name;
            r->u.feature.name.len = (int32_t)v[i].u->name_len;
            r->u.feature.feature_level = v[i].u->level;
        }
    }
    if (!err && !op->validate_only)
        for (int i = 0; i < n; i++)
            lg_info("features: %.*s to level %d", (int)v[i].u->name_len, v[i].u->name,
                    v[i].u->level);
    free(types);
    free(v);
    return err;
}
