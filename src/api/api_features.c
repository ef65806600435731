/* UpdateFeatures (key 57): finalized feature levels, changed through the
 * controller (cluster/ctl.h, CTL_UPDATE_FEATURES), which checks every
 * update as Kafka's controller does and commits FeatureLevelRecords; the
 * answer comes once the change is committed or refused.
 *
 * The answer is Kafka 4.4's: a refusal is one top-level error naming the
 * first update refused ("The update failed for all features since ..."),
 * with no per-feature results; a success lists every update of the
 * request (v0 and v1) with error 0 and the message "NONE". v0's
 * AllowDowngrade is read by no one, as in Kafka 4.4, whose controller
 * takes the upgrade type, which v0 lacks (so UPGRADE): a v0 downgrade is
 * refused. */
#include <string.h>

#include "api/api_admin.h"
#include "util/kerr.h"

#define API_FEATURES_FAILED \
    "The update failed for all features since the following feature had an error: "

typedef struct api_features_s {
    api_admin_wait_t w; /* first */
    ctl_op_t op;
    proto_update_features_req_t r;
} api_features_t;

static void api_features_done(ctl_op_t *op)
{
    api_admin_wait_done(op->udata);
}

/* A failed commit is the server's failure, which UpdateFeatures calls
 * FEATURE_UPDATE_FAILED. */
static void api_features_error(api_req_t *req, const ctl_op_t *op,
                               proto_update_features_resp_t *resp)
{
    if (op->err == KERR_KAFKA_STORAGE_ERROR) {
        resp->error_code = KERR_FEATURE_UPDATE_FAILED;
        resp->error_message = api_admin_msg(req, api_admin_op_text(op));
        return;
    }
    size_t n = strlen(API_FEATURES_FAILED), m = strlen(op->msg);
    char *s = arena_alloc(req->arena, n + m + 1);
    memcpy(s, API_FEATURES_FAILED, n);
    memcpy(s + n, op->msg, m + 1);
    resp->error_code = op->err;
    resp->error_message = (proto_str_t){s, (int32_t)(n + m)};
}

static void api_features_answer(api_admin_wait_t *w)
{
    api_features_t *fr = (api_features_t *)w;
    api_req_t *req = w->req;
    proto_update_features_resp_t resp;
    int32_t n = fr->r.feature_updates.n > 0 ? fr->r.feature_updates.n : 0;

    proto_update_features_resp_init(&resp);
    if (fr->op.err) {
        api_features_error(req, &fr->op, &resp);
        API_REPLY(req, update_features, &resp);
        return;
    }
    resp.results.n = n;
    resp.results.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp.results.v));
    for (int32_t i = 0; i < n; i++) {
        proto_update_features_resp_updatable_feature_result_init(&resp.results.v[i]);
        resp.results.v[i].feature = fr->r.feature_updates.v[i].feature;
        resp.results.v[i].error_message = PROTO_STR("NONE");
    }
    API_REPLY(req, update_features, &resp);
}

void api_update_features(api_req_t *req)
{
    api_features_t *fr = arena_calloc(req->arena, 1, sizeof(*fr));
    proto_update_features_req_t *r = &fr->r;

    proto_update_features_req_init(r);
    if (proto_update_features_req_decode(r, req->hdr.api_version, req->body, req->body_len,
                                         req->arena) < 0) {
        api_close(req, "malformed UpdateFeatures request");
        return;
    }
    int32_t n = r->feature_updates.n > 0 ? r->feature_updates.n : 0;
    ctl_feature_update_t *u = arena_calloc(req->arena, (size_t)n + 1, sizeof(*u));
    for (int32_t i = 0; i < n; i++) {
        const proto_update_features_req_feature_update_key_t *k = &r->feature_updates.v[i];
        u[i].name = k->feature.p ? k->feature.p : "";
        u[i].name_len = k->feature.len > 0 ? (size_t)k->feature.len : 0;
        u[i].level = k->max_version_level;
        u[i].upgrade_type = k->upgrade_type;
    }
    api_admin_wait_init(&fr->w, req, api_features_answer);
    fr->op.kind = CTL_UPDATE_FEATURES;
    fr->op.features = u;
    fr->op.nfeatures = n;
    fr->op.validate_only = r->validate_only;
    fr->op.nassign = -1;
    fr->op.done = api_features_done;
    fr->op.udata = &fr->w;
    api_admin_submit(&fr->w, &fr->op);
    api_admin_wait_end(&fr->w);
}
