/* DescribeAcls (29), CreateAcls (30), DeleteAcls (31) on a broker without
 * an authorizer: Kafka 4.4 answers each with SECURITY_DISABLED (per
 * request, per creation, per filter), and the texts below are its own.
 * Before that its request parsing refuses ACL filters and bindings with
 * an UNKNOWN element (code 0 as the resource type, pattern type,
 * operation or permission type) by closing the connection; so do we.
 * Codes past the ones it knows are answered like the others (measured on
 * Kafka 4.4: tests/integration/0603-acls-no-authorizer.c).
 * When the security work brings an authorizer, these handlers become its
 * front end. */
#include "api/api_tools.h"
#include "util/kerr.h"

/* Kafka's texts, which differ between the APIs. */
static const char api_acl_no_authorizer[] = "No Authorizer is configured.";
static const char api_acl_no_authorizer_describe[] = "No Authorizer is configured on the broker";

/* AclBindingFilter.isUnknown / AclBinding.isUnknown: 0 is UNKNOWN in
 * each of ResourceType, PatternType, AclOperation, AclPermissionType. */
static int api_acl_unknown(int8_t res, int8_t pattern, int8_t op, int8_t perm)
{
    return res == 0 || pattern == 0 || op == 0 || perm == 0;
}

void api_describe_acls(api_req_t *req)
{
    proto_describe_acls_req_t r;
    proto_describe_acls_resp_t resp;

    proto_describe_acls_req_init(&r);
    if (proto_describe_acls_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                       req->arena) < 0) {
        api_close(req, "malformed DescribeAcls request");
        return;
    }
    if (api_acl_unknown(r.resource_type_filter, r.pattern_type_filter, r.operation,
                        r.permission_type)) {
        api_close(req, "DescribeAcls filter with UNKNOWN elements");
        return;
    }
    proto_describe_acls_resp_init(&resp);
    resp.error_code = KERR_SECURITY_DISABLED;
    resp.error_message = PROTO_STR(api_acl_no_authorizer_describe);
    API_REPLY(req, describe_acls, &resp);
}

void api_create_acls(api_req_t *req)
{
    proto_create_acls_req_t r;
    proto_create_acls_resp_t resp;

    proto_create_acls_req_init(&r);
    if (proto_create_acls_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                     req->arena) < 0) {
        api_close(req, "malformed CreateAcls request");
        return;
    }
    int32_t n = r.creations.n < 0 ? 0 : r.creations.n;
    for (int32_t i = 0; i < n; i++) {
        const proto_create_acls_req_acl_creation_t *c = &r.creations.v[i];
        if (api_acl_unknown(c->resource_type, c->resource_pattern_type, c->operation,
                            c->permission_type)) {
            api_close(req, "CreateAcls creation with UNKNOWN elements");
            return;
        }
    }
    proto_create_acls_resp_init(&resp);
    resp.results.n = n;
    resp.results.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp.results.v));
    for (int32_t i = 0; i < n; i++) {
        proto_create_acls_resp_acl_creation_result_init(&resp.results.v[i]);
        resp.results.v[i].error_code = KERR_SECURITY_DISABLED;
        resp.results.v[i].error_message = PROTO_STR(api_acl_no_authorizer);
    }
    API_REPLY(req, create_acls, &resp);
}

void api_delete_acls(api_req_t *req)
{
    proto_delete_acls_req_t r;
    proto_delete_acls_resp_t resp;

    proto_delete_acls_req_init(&r);
    if (proto_delete_acls_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                     req->arena) < 0) {
        api_close(req, "malformed DeleteAcls request");
        return;
    }
    int32_t n = r.filters.n < 0 ? 0 : r.filters.n;
    for (int32_t i = 0; i < n; i++) {
        const proto_delete_acls_req_delete_acls_filter_t *f = &r.filters.v[i];
        if (api_acl_unknown(f->resource_type_filter, f->pattern_type_filter, f->operation,
                            f->permission_type)) {
            api_close(req, "DeleteAcls filter with UNKNOWN elements");
            return;
        }
    }
    proto_delete_acls_resp_init(&resp);
    resp.filter_results.n = n;
    resp.filter_results.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp.filter_results.v));
    for (int32_t i = 0; i < n; i++) {
        proto_delete_acls_resp_delete_acls_filter_result_init(&resp.filter_results.v[i]);
        resp.filter_results.v[i].error_code = KERR_SECURITY_DISABLED;
        resp.filter_results.v[i].error_message = PROTO_STR(api_acl_no_authorizer);
    }
    API_REPLY(req, delete_acls, &resp);
}
