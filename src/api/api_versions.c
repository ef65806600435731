/* ApiVersions (key 18): how clients learn what we speak. */
#include "api/api.h"
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
    int n;
    const api_entry_t *t = api_table(&n);
    resp->api_keys.n = n;
    resp->api_keys.v = arena_calloc(req->arena, (size_t)n, sizeof(*resp->api_keys.v));
    for (int i = 0; i < n; i++) {
        proto_api_versions_resp_api_version_t *av = &resp->api_keys.v[i];
        proto_api_versions_resp_api_version_init(av);
        av->api_key = t[i].key;
        av->min_version = t[i].adv_min_ver;
        av->max_version = t[i].max_ver;
    }
}

void api_versions(api_req_t *req)
{
    proto_api_versions_resp_t resp;
    proto_api_versions_req_t r;
    int16_t ver = req->hdr.api_version;
    int n;
    const api_entry_t *t = api_table(&n);

    proto_api_versions_resp_init(&resp);
    if (ver > 4 || ver < 0) {
        /* Too new for us (or negative, which Kafka answers the same way):
         * answer at v0 with our range for key 18 only. */
        req->hdr.api_version = 0;
        resp.error_code = KERR_UNSUPPORTED_VERSION;
        resp.api_keys.n = 1;
        resp.api_keys.v = arena_calloc(req->arena, 1, sizeof(*resp.api_keys.v));
        proto_api_versions_resp_api_version_init(&resp.api_keys.v[0]);
        resp.api_keys.v[0].api_key = 18;
        for (int i = 0; i < n; i++)
            if (t[i].key == 18) {
                resp.api_keys.v[0].min_version = t[i].adv_min_ver;
                resp.api_keys.v[0].max_version = t[i].max_ver;
            }
        API_REPLY(req, api_versions, &resp);
        return;
    }
    proto_api_versions_req_init(&r);
    if (proto_api_versions_req_decode(&r, ver, req->body, req->body_len, req->arena) < 0) {
        api_close(req, "malformed ApiVersions request");
        return;
    }
    if (ver >= 3 && (!api_versions_name_ok(r.client_software_name) ||
                     !api_versions_name_ok(r.client_software_version))) {
        /* As Kafka: an error and no API list, so the client retries at v0. */
        resp.error_code = KERR_INVALID_REQUEST;
    } else {
        api_versions_fill(req, &resp);
    }
    API_REPLY(req, api_versions, &resp);
}
