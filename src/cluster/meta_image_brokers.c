/* The image's brokers and controllers: the registrations the metadata log
 * holds, replayed as Kafka's ClusterControlManager replays them. A
 * RegisterBrokerRecord replaces the broker's registration whole (a new
 * incarnation, or the same one registering again); the fence, unfence
 * and registration change records name the epoch of the registration
 * they change, and one naming another epoch does not fit (a record of an
 * older incarnation); UnregisterBrokerRecord names it too.
 *
 * Both lists are arrays sorted by id: a cluster has a handful of nodes,
 * lookups are a binary search, and answers (Metadata, DescribeCluster)
 * list nodes in id order without sorting. */
#include "cluster/meta_image.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"

/* BrokerRegistrationChangeRecord's values, as Kafka numbers them. */
enum {
    MI_FENCE_CHANGE_UNFENCE = -1,
    MI_FENCE_CHANGE_NONE = 0,
    MI_FENCE_CHANGE_FENCE = 1,
    MI_SHUTDOWN_CHANGE_NONE = 0,
    MI_SHUTDOWN_CHANGE_IN = 1,
};

static int mi_bfail(char *err, size_t errlen, const char *what, int32_t id)
{
    if (err && errlen)
        snprintf(err, errlen, "%s (broker %d)", what, (int)id);
    return -1;
}

static void mi_endpoints_free(mi_endpoint_t *v, int n)
{
    for (int i = 0; i < n; i++) {
        free(v[i].name);
        free(v[i].host);
    }
    free(v);
}

static void mi_franges_free(mi_frange_t *v, int n)
{
    for (int i = 0; i < n; i++)
        free(v[i].name);
    free(v);
}

static void mi_broker_free(mi_broker_t *b)
{
    mi_endpoints_free(b->endpoints, b->nendpoints);
    mi_franges_free(b->features, b->nfeatures);
    free(b->rack);
    free(b->dirs);
    free(b);
}

static void mi_controller_free(mi_controller_t *c)
{
    mi_endpoints_free(c->endpoints, c->nendpoints);
    mi_franges_free(c->features, c->nfeatures);
    free(c);
}

void meta_image_brokers_free(meta_image_t *img)
{
    for (int i = 0; i < img->nbrokers; i++)
        mi_broker_free(img->brokers[i]);
    for (int i = 0; i < img->ncontrollers; i++)
        mi_controller_free(img->controllers[i]);
    free(img->brokers);
    free(img->controllers);
    img->brokers = NULL;
    img->controllers = NULL;
    img->nbrokers = img->ncontrollers = 0;
}

/* ---- lookups ---- */

/* Index of id in a sorted array of n nodes (mi_broker_t or
 * mi_controller_t, both of which begin with their int32_t id), or
 * -(insertion point) - 1. */
static int mi_find(void *const *arr, int n, int32_t id)
{
    int lo = 0, hi = n - 1;
    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        int32_t at = *(const int32_t *)arr[mid];
        if (at == id)
            return mid;
        if (at < id)
            lo = mid + 1;
        else
            hi = mid - 1;
    }
    return -lo - 1;
}

static int mi_broker_index(const meta_image_t *img, int32_t id)
{
    return mi_find((void *const *)img->brokers, img->nbrokers, id);
}

static int mi_controller_index(const meta_image_t *img, int32_t id)
{
    return mi_find((void *const *)img->controllers, img->ncontrollers, id);
}

const mi_broker_t *meta_image_broker(const meta_image_t *img, int32_t id)
{
    int i = mi_broker_index(img, id);
    return i >= 0 ? img->brokers[i] : NULL;
}

const mi_broker_t *meta_image_broker_next(const meta_image_t *img, size_t *pos)
{
    return *pos < (size_t)img->nbrokers ? img->brokers[(*pos)++] : NULL;
}

bool meta_image_broker_active(const meta_image_t *img, int32_t id)
{
    const mi_broker_t *b = meta_image_broker(img, id);
    return b && !b->fenced && !b->in_controlled_shutdown;
}

const mi_frange_t *meta_image_broker_feature(const mi_broker_t *b, const char *name)
{
    for (int i = 0; i < b->nfeatures; i++)
        if (!strcmp(b->features[i].name, name))
            return &b->features[i];
    return NULL;
}

const mi_controller_t *meta_image_controller(const meta_image_t *img, int32_t id)
{
    int i = mi_controller_index(img, id);
    return i >= 0 ? img->controllers[i] : NULL;
}

const mi_controller_t *meta_image_controller_next(const meta_image_t *img, size_t *pos)
{
    return *pos < (size_t)img->ncontrollers ? img->controllers[(*pos)++] : NULL;
}

/* ---- copies out of a record ---- */

static char *mi_str(meta_str_t s)
{
    return s.len < 0 ? NULL : xstrndup(s.p, (size_t)s.len);
}

/* The endpoint and feature arrays of both registration records have the
 * same members; these copy either. */
#define MI_COPY_ENDPOINTS(dst, ndst, src)                                                         \
    do {                                                                                          \
        (ndst) = (src).n < 0 ? 0 : (src).n;                                                       \
        (dst) = (ndst) ? xcalloc((size_t)(ndst), sizeof(mi_endpoint_t)) : NULL;                   \
        for (int i_ = 0; i_ < (ndst); i_++) {                                                     \
            (dst)[i_].name = mi_str((src).v[i_].name);                                            \
            (dst)[i_].host = mi_str((src).v[i_].host);                                            \
            (dst)[i_].port = (src).v[i_].port;                                                    \
            (dst)[i_].security_protocol = (src).v[i_].security_protocol;                          \
        }                                                                                         \
    } while (0)

#define MI_COPY_FEATURES(dst, ndst, src)                                                          \
    do {                                                                                          \
        (ndst) = (src).n < 0 ? 0 : (src).n;                                                       \
        (dst) = (ndst) ? xcalloc((size_t)(ndst), sizeof(mi_frange_t)) : NULL;                     \
        for (int i_ = 0; i_ < (ndst); i_++) {                                                     \
            (dst)[i_].name = mi_str((src).v[i_].name);                                            \
            (dst)[i_].min = (src).v[i_].min_supported_version;                                    \
            (dst)[i_].max = (src).v[i_].max_supported_version;                                    \
        }                                                                                         \
    } while (0)

static void mi_copy_dirs(mi_broker_t *b, const meta_uuids_t *dirs)
{
    free(b->dirs);
    b->ndirs = dirs->n < 0 ? 0 : dirs->n;
    b->dirs = b->ndirs ? xmalloc((size_t)b->ndirs * 16) : NULL;
    for (int i = 0; i < b->ndirs; i++)
        memcpy(b->dirs[i], dirs->v[i].b, 16);
}

static mi_broker_t *mi_broker_new(const proto_rec_register_broker_record_t *r)
{
    mi_broker_t *b = xcalloc(1, sizeof(*b));
    b->id = r->broker_id;
    memcpy(b->incarnation, r->incarnation_id.b, 16);
    b->epoch = r->broker_epoch;
    MI_COPY_ENDPOINTS(b->endpoints, b->nendpoints, r->end_points);
    MI_COPY_FEATURES(b->features, b->nfeatures, r->features);
    b->rack = mi_str(r->rack);
    b->fenced = r->fenced;
    b->in_controlled_shutdown = r->in_controlled_shutdown;
    b->zk_migrating = r->is_migrating_zk_broker;
    mi_copy_dirs(b, &r->log_dirs);
    return b;
}

/* ---- apply ---- */

/* Puts node at index i of a sorted array of n (i from a failed find:
 * -(insertion point) - 1, or the index of the one it replaces). */
static void **mi_insert(void **arr, int *n, int i, void *node)
{
    arr = xrealloc(arr, (size_t)(*n + 1) * sizeof(void *));
    int at = -i - 1;
    memmove(&arr[at + 1], &arr[at], (size_t)(*n - at) * sizeof(void *));
    arr[at] = node;
    (*n)++;
    return arr;
}

static void mi_remove(void **arr, int *n, int i)
{
    memmove(&arr[i], &arr[i + 1], (size_t)(*n - i - 1) * sizeof(void *));
    (*n)--;
}

static int mi_apply_register(meta_image_t *img, const proto_rec_register_broker_record_t *r)
{
    mi_broker_t *b = mi_broker_new(r);
    int i = mi_broker_index(img, r->broker_id);
    if (i >= 0) {
        mi_broker_free(img->brokers[i]);
        img->brokers[i] = b;
    } else {
        img->brokers = (mi_broker_t **)mi_insert((void **)img->brokers, &img->nbrokers, i, b);
    }
    return 0;
}

static int mi_apply_unregister(meta_image_t *img, const proto_rec_unregister_broker_record_t *r,
                               char *err, size_t errlen)
{
    int i = mi_broker_index(img, r->broker_id);
    if (i < 0)
        return mi_bfail(err, errlen, "UnregisterBrokerRecord of an unregistered broker",
                        r->broker_id);
    if (img->brokers[i]->epoch != r->broker_epoch)
        return mi_bfail(err, errlen, "UnregisterBrokerRecord of another broker epoch",
                        r->broker_id);
    mi_broker_free(img->brokers[i]);
    mi_remove((void **)img->brokers, &img->nbrokers, i);
    return 0;
}

/* The fence, unfence and registration change records: fence and shutdown
 * are enum values above; dirs NULL or empty leaves the dirs. */
static int mi_apply_change(meta_image_t *img, int32_t id, int64_t epoch, int fence,
                           int shutdown, const meta_uuids_t *dirs, char *err, size_t errlen)
{
    int i = mi_broker_index(img, id);
    if (i < 0)
        return mi_bfail(err, errlen, "registration change of an unregistered broker", id);
    mi_broker_t *b = img->brokers[i];
    if (b->epoch != epoch)
        return mi_bfail(err, errlen, "registration change of another broker epoch", id);
    if (fence < MI_FENCE_CHANGE_UNFENCE || fence > MI_FENCE_CHANGE_FENCE ||
        (shutdown != MI_SHUTDOWN_CHANGE_NONE && shutdown != MI_SHUTDOWN_CHANGE_IN))
        return mi_bfail(err, errlen, "registration change with an unknown value", id);
    if (fence != MI_FENCE_CHANGE_NONE)
        b->fenced = fence == MI_FENCE_CHANGE_FENCE;
    if (shutdown == MI_SHUTDOWN_CHANGE_IN)
        b->in_controlled_shutdown = true;
    if (dirs && dirs->n > 0)
        mi_copy_dirs(b, dirs);
    return 0;
}

static int mi_apply_register_controller(meta_image_t *img,
                                        const proto_rec_register_controller_record_t *r)
{
    mi_controller_t *c = xcalloc(1, sizeof(*c));
    c->id = r->controller_id;
    memcpy(c->incarnation, r->incarnation_id.b, 16);
    c->zk_migration_ready = r->zk_migration_ready;
    MI_COPY_ENDPOINTS(c->endpoints, c->nendpoints, r->end_points);
    MI_COPY_FEATURES(c->features, c->nfeatures, r->features);
    int i = mi_controller_index(img, c->id);
    if (i >= 0) {
        mi_controller_free(img->controllers[i]);
        img->controllers[i] = c;
    } else {
        img->controllers =
            (mi_controller_t **)mi_insert((void **)img->controllers, &img->ncontrollers, i, c);
    }
    return 0;
}

static int mi_apply_unregister_controller(meta_image_t *img, int32_t id, char *err,
                                          size_t errlen)
{
    int i = mi_controller_index(img, id);
    if (i < 0)
        return mi_bfail(err, errlen, "UnregisterControllerRecord of an unregistered controller",
                        id);
    mi_controller_free(img->controllers[i]);
    mi_remove((void **)img->controllers, &img->ncontrollers, i);
    return 0;
}

int meta_image_apply_broker(meta_image_t *img, const meta_rec_t *rec, char *err, size_t errlen)
{
    const proto_rec_broker_registration_change_record_t *c = &rec->u.broker_change;
    switch (rec->type) {
    case META_REC_REGISTER_BROKER:
        return mi_apply_register(img, &rec->u.register_broker);
    case META_REC_UNREGISTER_BROKER:
        return mi_apply_unregister(img, &rec->u.unregister_broker, err, errlen);
    case META_REC_FENCE_BROKER:
        return mi_apply_change(img, rec->u.fence_broker.id, rec->u.fence_broker.epoch,
                               MI_FENCE_CHANGE_FENCE, MI_SHUTDOWN_CHANGE_NONE, NULL, err,
                               errlen);
    case META_REC_UNFENCE_BROKER:
        return mi_apply_change(img, rec->u.unfence_broker.id, rec->u.unfence_broker.epoch,
                               MI_FENCE_CHANGE_UNFENCE, MI_SHUTDOWN_CHANGE_NONE, NULL, err,
                               errlen);
    case META_REC_BROKER_REGISTRATION_CHANGE:
        return mi_apply_change(img, c->broker_id, c->broker_epoch, c->fenced,
                               c->in_controlled_shutdown, &c->log_dirs, err, errlen);
    case META_REC_REGISTER_CONTROLLER:
        return mi_apply_register_controller(img, &rec->u.register_controller);
    case META_REC_UNREGISTER_CONTROLLER:
        return mi_apply_unregister_controller(img, rec->u.unregister_controller.controller_id,
                                              err, errlen);
    default:
        return 1;
    }
}
