/* BrokerRegistration and UnregisterBroker, as Kafka 4.4's controller
 * decides them (ClusterControlManager.registerBroker, and
 * ReplicationControlManager for the partitions an unregistered broker
 * leaves), and the record list every decision fills. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/bkr_int.h"
#include "util/kerr.h"
#include "util/mem.h"
#include "util/uuid.h"

void bkr_out_init(bkr_out_t *out)
{
    memset(out, 0, sizeof(*out));
    arena_init(&out->arena, 4096);
}

void bkr_out_reset(bkr_out_t *out)
{
    out->n = 0;
    arena_reset(&out->arena);
}

void bkr_out_free(bkr_out_t *out)
{
    free(out->v);
    arena_destroy(&out->arena);
    memset(out, 0, sizeof(*out));
}

meta_rec_t *bkr_out_add(bkr_out_t *out, int16_t type, int16_t version)
{
    if (out->n == out->cap) {
        out->cap = out->cap ? 2 * out->cap : 8;
        out->v = xrealloc(out->v, (size_t)out->cap * sizeof(*out->v));
    }
    meta_rec_t *r = &out->v[out->n++];
    meta_rec_init(r, type);
    r->version = version;
    return r;
}

int16_t bkr_fail(bkr_answer_t *ans, int16_t err, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ans->msg, sizeof(ans->msg), fmt, ap);
    va_end(ap);
    return ans->err = err;
}

static bool bkr_str_eq(meta_str_t s, const char *c)
{
    return s.len >= 0 && (size_t)s.len == strlen(c) && !memcmp(s.p, c, (size_t)s.len);
}

/* Kafka's reserved directory ids: the first 100 with zero high bits
 * (unassigned, lost, migrating, ...). */
static bool bkr_dir_reserved(const uint8_t d[16])
{
    for (int i = 0; i < 15; i++)
        if (d[i])
            return false;
    return d[15] < 100;
}

/* The broker other than id that registered dir d, or -1. */
static int32_t bkr_dir_owner(const meta_image_t *img, const uint8_t d[16], int32_t id)
{
    size_t pos = 0;
    const mi_broker_t *b;
    while ((b = meta_image_broker_next(img, &pos)))
        for (int i = 0; b->id != id && i < b->ndirs; i++)
            if (!memcmp(b->dirs[i], d, 16))
                return b->id;
    return -1;
}

/* Every Strand level supports directory assignment (metadata.version 18
 * and up), so a registration names its log dirs. */
static int16_t bkr_check_dirs(const meta_image_t *img, const bkr_register_req_t *req,
                              bkr_answer_t *ans)
{
    if (req->ndirs == 0)
        return bkr_fail(ans, KERR_INVALID_REGISTRATION, "No directories specified in request");
    for (int i = 0; i < req->ndirs; i++)
        if (bkr_dir_reserved(req->dirs[i]))
            return bkr_fail(ans, KERR_INVALID_REGISTRATION, "Reserved directory ID in request");
    for (int i = 0; i < req->ndirs; i++)
        for (int j = 0; j < i; j++)
            if (!memcmp(req->dirs[i], req->dirs[j], 16))
                return bkr_fail(ans, KERR_INVALID_REGISTRATION,
                                "Duplicate directory ID in request");
    for (int i = 0; i < req->ndirs; i++) {
        int32_t owner = bkr_dir_owner(img, req->dirs[i], req->broker_id);
        char s[UUID_STR_LEN + 1];
        if (owner < 0)
            continue;
        uuid_to_base64(req->dirs[i], s);
        return bkr_fail(ans, KERR_INVALID_REGISTRATION,
                        "Broker %d is already registered with directory %s", (int)owner, s);
    }
    return KERR_NONE;
}

static const bkr_feature_t *bkr_req_feature(const bkr_register_req_t *req, const char *name)
{
    for (int i = 0; i < req->nfeatures; i++)
        if (bkr_str_eq(req->features[i].name, name))
            return &req->features[i];
    return NULL;
}

/* Every finalized feature must be within the broker's range; one the
 * broker does not name counts as 0-0, so only level 0 passes. */
static int16_t bkr_check_features(const meta_image_t *img, const bkr_register_req_t *req,
                                  bkr_answer_t *ans)
{
    size_t pos = 0;
    meta_str_t name;
    int16_t level;

    if (!bkr_req_feature(req, "metadata.version"))
        return bkr_fail(ans, KERR_INVALID_REGISTRATION,
                        "Request features do not contain 'metadata.version'");
    while (meta_image_feature_next(img, &pos, &name, &level)) {
        char fname[128];
        snprintf(fname, sizeof(fname), "%.*s", (int)name.len, name.p);
        const bkr_feature_t *f = bkr_req_feature(req, fname);
        int16_t min = f ? f->min : 0, max = f ? f->max : 0;
        if (level >= min && level <= max)
            continue;
        return bkr_fail(ans, KERR_UNSUPPORTED_VERSION,
                        "Unable to register because the broker does not support finalized "
                        "version %d of %s. The broker wants a version between %d and %d, "
                        "inclusive.", level, fname, min, max);
    }
    return KERR_NONE;
}

static int16_t bkr_check_register(const bkr_ctl_t *bc, const meta_image_t *img,
                                  const bkr_register_req_t *req, int64_t now_ms,
                                  bkr_answer_t *ans)
{
    const mi_broker_t *old = meta_image_broker(img, req->broker_id);
    int16_t e;

    if (!bkr_str_eq(req->cluster_id, bc->cluster_id))
        return bkr_fail(ans, KERR_INCONSISTENT_CLUSTER_ID,
                        "Expected cluster ID %s, but got cluster ID %.*s", bc->cluster_id,
                        (int)(req->cluster_id.len < 0 ? 0 : req->cluster_id.len),
                        req->cluster_id.p ? req->cluster_id.p : "");
    if (old && memcmp(old->incarnation, req->incarnation, 16) != 0 &&
        bkr_session_valid(bc, img, req->broker_id, now_ms))
        return bkr_fail(ans, KERR_DUPLICATE_BROKER_REGISTRATION,
                        "Another broker is registered with that broker id. If the broker was "
                        "recently restarted this should self-resolve once the heartbeat manager "
                        "expires the old broker session.");
    if (req->migrating_zk)
        return bkr_fail(ans, KERR_BROKER_ID_NOT_REGISTERED,
                        "Controller does not support registering ZK brokers.");
    if ((e = bkr_check_dirs(img, req, ans)))
        return e;
    return bkr_check_features(img, req, ans);
}

static meta_str_t bkr_copy(bkr_out_t *out, meta_str_t s)
{
    meta_str_t c = {NULL, -1};
    if (s.len >= 0) {
        c.p = arena_strndup(&out->arena, s.p ? s.p : "", (size_t)s.len);
        c.len = s.len;
    }
    return c;
}

/* The record holds copies: it may outlive the request. */
static void bkr_register_record(const bkr_register_req_t *req, int64_t epoch, bkr_out_t *out)
{
    meta_rec_t *rec = bkr_out_add(out, META_REC_REGISTER_BROKER, BKR_REGISTER_REC_VERSION);
    proto_rec_register_broker_record_t *r = &rec->u.register_broker;
    r->broker_id = req->broker_id;
    memcpy(r->incarnation_id.b, req->incarnation, 16);
    r->broker_epoch = epoch;
    r->end_points.n = req->nlisteners;
    r->end_points.v =
        arena_calloc(&out->arena, (size_t)req->nlisteners + 1, sizeof(*r->end_points.v));
    for (int i = 0; i < req->nlisteners; i++) {
        r->end_points.v[i].name = bkr_copy(out, req->listeners[i].name);
        r->end_points.v[i].host = bkr_copy(out, req->listeners[i].host);
        r->end_points.v[i].port = req->listeners[i].port;
        r->end_points.v[i].security_protocol = req->listeners[i].security_protocol;
    }
    r->features.n = req->nfeatures;
    r->features.v = arena_calloc(&out->arena, (size_t)req->nfeatures + 1, sizeof(*r->features.v));
    for (int i = 0; i < req->nfeatures; i++) {
        r->features.v[i].name = bkr_copy(out, req->features[i].name);
        r->features.v[i].min_supported_version = req->features[i].min;
        r->features.v[i].max_supported_version = req->features[i].max;
    }
    r->rack = bkr_copy(out, req->rack);
    r->fenced = true;
    r->log_dirs.n = req->ndirs;
    r->log_dirs.v = arena_calloc(&out->arena, (size_t)req->ndirs + 1, sizeof(*r->log_dirs.v));
    for (int i = 0; i < req->ndirs; i++)
        memcpy(r->log_dirs.v[i].b, req->dirs[i], 16);
}

void bkr_register(bkr_ctl_t *bc, const meta_image_t *img, const bkr_register_req_t *req,
                  int64_t next_offset, int64_t now_ms, bkr_out_t *out, bkr_answer_t *ans)
{
    memset(ans, 0, sizeof(*ans));
    ans->epoch = -1;
    if (bkr_check_register(bc, img, req, now_ms, ans))
        return;
    /* Kafka's brokerUncleanShutdownHandler: a broker back from an unclean
     * shutdown may have lost what it had acknowledged as a follower */
    const mi_broker_t *b = meta_image_broker(img, req->broker_id);
    if (b && req->prev_epoch != b->epoch)
        bkr_isr_unclean_shutdown(bc, img, req->broker_id, out);
    bkr_register_record(req, next_offset, out);
    bkr_session_start(bc, req->broker_id, now_ms);
    ans->epoch = next_offset;
}

void bkr_unregister(bkr_ctl_t *bc, const meta_image_t *img, int32_t broker_id, bkr_out_t *out,
                    bkr_answer_t *ans)
{
    const mi_broker_t *b = meta_image_broker(img, broker_id);
    memset(ans, 0, sizeof(*ans));
    if (!b) {
        bkr_fail(ans, KERR_BROKER_ID_NOT_REGISTERED, "Broker ID %d is not currently registered",
                 (int)broker_id);
        return;
    }
    bkr_isr_remove(bc, img, broker_id, out);
    meta_rec_t *r = bkr_out_add(out, META_REC_UNREGISTER_BROKER, 0);
    r->u.unregister_broker.broker_id = broker_id;
    r->u.unregister_broker.broker_epoch = b->epoch;
    bkr_session_end(bc, broker_id);
}
