/* ApiVersions (key 18): how clients learn what we speak. */
#include <string.h>

#include "api/api.h"
#include "cluster/ctl.h"
#include "cluster/raft_voters.h"
#include "util/kerr.h"

/* KIP-511: client software names and versions must match
 * [a-zA-Z0-9](?:[a-zA-Z0-9\-.]*[a-zA-Z0-9])? */
static int api_versions_name_ok(proto_str_t s)
{
    if (s.len <= 0)
        return 0;
    for (int32_t i = 0; i < s.len; i++) {
        char c = s.p[i];
        int alnum = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
        int inner = i > 0 && i < s.len - 1;
        if (!alnum && !(inner && (c == '-' || c == '.')))
            return 0;
    }
    return 1;
}

static void api_versions_fill(api_req_t *req, proto_api_versions_resp_t *resp)
{
    int n, k = 0;
    const api_entry_t *t = api_table(&n);
    resp->api_keys.v = arena_calloc(req->arena, (size_t)n, sizeof(*resp->api_keys.v));
    for (int i = 0; i < n; i++) {
        if (!api_entry_served(&t[i], req->kind))
            continue; /* another kind of listener's */
        proto_api_versions_resp_api_version_t *av = &resp->api_keys.v[k++];
        proto_api_versions_resp_api_version_init(av);
        av->api_key = t[i].key;
        av->min_version = t[i].adv_min_ver;
        av->max_version = t[i].max_ver;
    }
    resp->api_keys.n = k;
}

/* v3+: the features this node supports (every one it knows, at the
 * levels it implements, those at 0 only too, which Kafka would leave out:
 * tools then show every feature and our level of it) and the ones the metadata image finalizes (those
 * above 0: a feature at 0 is absent, as Kafka shows it), each finalized
 * at one level (min = max, as Kafka answers), with the offset of the last
 * metadata record applied as their epoch. Below v4 a supported range
 * starting at 0 is left out, as Kafka leaves it out: clients older than
 * v4 refuse such a range. */
/* kraft.version on a dynamic quorum: supported 0-1 and finalized at the
 * level its log (or bootstrap checkpoint) holds, as Kafka's raft layer
 * reports it; a static quorum's stays at 0, not finalized. Returns the
 * finalized level (0: none). */
static int16_t api_versions_kraft(const api_req_t *req)
{
    const raft_voters_entry_t *e =
        req->b->voters ? raft_voters_hist_last(req->b->voters) : NULL;
    return e ? e->kraft_version : 0;
}

static void api_versions_features(api_req_t *req, proto_api_versions_resp_t *resp)
{
    const meta_image_t *img = ctl_image(req->b->ctl);
    int16_t kraft = api_versions_kraft(req);
    meta_str_t name;
    int16_t level;
    size_t pos = 0;
    int n, nsup = 0, nfin = 0;
    const ctl_feature_t *f = ctl_features(&n);

    resp->supported_features.v = arena_calloc(req->arena, (size_t)n,
                                              sizeof(*resp->supported_features.v));
    for (int i = 0; i < n; i++) {
        if (req->hdr.api_version < 4 && f[i].min_level == 0)
            continue;
        proto_api_versions_resp_supported_feature_key_t *sf = &resp->supported_features.v[nsup++];
        sf->name = (proto_str_t){f[i].name, (int32_t)strlen(f[i].name)};
        sf->min_version = f[i].min_level;
        sf->max_version = f[i].max_level;
        if (kraft > 0 && !strcmp(f[i].name, CTL_FEATURE_KRAFT_VERSION))
            sf->max_version = kraft;
    }
    resp->supported_features.n = nsup;
    while (meta_image_feature_next(img, &pos, &name, &level))
        nfin++;
    resp->finalized_features.v = arena_calloc(req->arena, (size_t)nfin + 1,
                                              sizeof(*resp->finalized_features.v));
    pos = 0;
    for (int i = 0; i < nfin && meta_image_feature_next(img, &pos, &name, &level); i++) {
        proto_api_versions_resp_finalized_feature_key_t *ff = &resp->finalized_features.v[i];
        ff->name = name; /* into the image: the answer is encoded at once */
        ff->max_version_level = level;
        ff->min_version_level = level;
    }
    if (kraft > 0) {
        proto_api_versions_resp_finalized_feature_key_t *ff = &resp->finalized_features.v[nfin++];
        ff->name = PROTO_STR(CTL_FEATURE_KRAFT_VERSION);
        ff->max_version_level = ff->min_version_level = kraft;
    }
    resp->finalized_features.n = nfin;
    resp->finalized_features_epoch = ctl_features_epoch(req->b->ctl);
}

/* v5: a client that knows which cluster and node it meant to reach sends
 * both, and Kafka checks them: one without the other is INVALID_REQUEST,
 * a cluster id or node id that is not ours is REBOOTSTRAP_REQUIRED (the
 * client's bootstrap address now leads elsewhere, so it starts over).
 * Neither (null and -1) is the ordinary first connection. */
static int16_t api_versions_target_check(api_req_t *req, const proto_api_versions_req_t *r)
{
    const char *cid = req->b->cluster_id;
    int has_cluster = r->cluster_id.len >= 0, has_node = r->node_id != -1;

    if (!has_cluster && !has_node)
        return KERR_NONE;
    if (has_cluster != has_node)
        return KERR_INVALID_REQUEST;
    if ((size_t)r->cluster_id.len != strlen(cid) ||
        memcmp(r->cluster_id.p, cid, (size_t)r->cluster_id.len) != 0 ||
        r->node_id != req->b->cfg.node_id)
        return KERR_REBOOTSTRAP_REQUIRED;
    return KERR_NONE;
}

/* Too new for us (or negative, which Kafka answers the same way): the
 * answer is at v0 with our range for key 18 only, so the client retries
 * with a version from it. */
static void api_versions_unsupported(api_req_t *req, const api_entry_t *self)
{
    proto_api_versions_resp_t resp;

    proto_api_versions_resp_init(&resp);
    req->hdr.api_version = 0;
    resp.error_code = KERR_UNSUPPORTED_VERSION;
    resp.api_keys.n = 1;
    resp.api_keys.v = arena_calloc(req->arena, 1, sizeof(*resp.api_keys.v));
    proto_api_versions_resp_api_version_init(&resp.api_keys.v[0]);
    resp.api_keys.v[0].api_key = self->key;
    resp.api_keys.v[0].min_version = self->adv_min_ver;
    resp.api_keys.v[0].max_version = self->max_ver;
    API_REPLY(req, api_versions, &resp);
}

void api_versions(api_req_t *req)
{
    proto_api_versions_resp_t resp;
    proto_api_versions_req_t r;
    int16_t ver = req->hdr.api_version;
    int n, i = 0;
    const api_entry_t *t = api_table(&n);

    while (t[i].key != PROTO_API_API_VERSIONS) /* in the table: this handler is */
        i++;
    if (ver > t[i].max_ver || ver < 0) {
        api_versions_unsupported(req, &t[i]);
        return;
    }
    proto_api_versions_resp_init(&resp);
    proto_api_versions_req_init(&r);
    if (proto_api_versions_req_decode(&r, ver, req->body, req->body_len, req->arena) < 0) {
        api_close(req, "malformed ApiVersions request");
        return;
    }
    /* As Kafka: an error and no API list; a bad name is checked first, and
     * the client retries at v0 after it. */
    if (ver >= 3 && (!api_versions_name_ok(r.client_software_name) ||
                     !api_versions_name_ok(r.client_software_version)))
        resp.error_code = KERR_INVALID_REQUEST;
    else if (ver >= 5)
        resp.error_code = api_versions_target_check(req, &r);
    if (!resp.error_code) {
        api_versions_fill(req, &resp);
        if (ver >= 3)
            api_versions_features(req, &resp);
    }
    API_REPLY(req, api_versions, &resp);
}
