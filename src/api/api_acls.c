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

/* CreateAcls and DeleteAcls are one handler over their own generated
 * types: the request decoded; the connection closed when an element (a
 * creation, a filter) has an UNKNOWN code; else one result per element,
 * SECURITY_DISABLED. The macro defines the handler FN of API (NAME in the
 * log) over the request's list ELEMS of ELEM and the response's list
 * RESULTS of RESULT; RES and PAT name the element's resource and pattern
 * type codes, which the two APIs name apart. */
#define API_ACL_REFUSE_EACH(fn, api, name, elems, elem, res, pat, results, result)                 \
    void fn(api_req_t *req)                                                                        \
    {                                                                                              \
        proto_##api##_req_t r;                                                                     \
        proto_##api##_resp_t resp;                                                                 \
                                                                                                   \
        proto_##api##_req_init(&r);                                                                \
        if (proto_##api##_req_decode(&r, req->hdr.api_version, req->body, req->body_len,           \
                                     req->arena) < 0) {                                            \
            api_close(req, "malformed " name " request");                                          \
            return;                                                                                \
        }                                                                                          \
        int32_t n = r.elems.n < 0 ? 0 : r.elems.n;                                                 \
        for (int32_t i = 0; i < n; i++) {                                                          \
            const proto_##api##_req_##elem##_t *e = &r.elems.v[i];                                 \
            if (api_acl_unknown(e->res, e->pat, e->operation, e->permission_type)) {               \
                api_close(req, name " entry with UNKNOWN elements");                               \
                return;                                                                            \
            }                                                                                      \
        }                                                                                          \
        proto_##api##_resp_init(&resp);                                                            \
        resp.results.n = n;                                                                        \
        resp.results.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp.results.v));         \
        for (int32_t i = 0; i < n; i++) {                                                          \
            proto_##api##_resp_##result##_init(&resp.results.v[i]);                                \
            resp.results.v[i].error_code = KERR_SECURITY_DISABLED;                                 \
            resp.results.v[i].error_message = PROTO_STR(api_acl_no_authorizer);                    \
        }                                                                                          \
        API_REPLY(req, api, &resp);                                                                \
    }

API_ACL_REFUSE_EACH(api_create_acls, create_acls, "CreateAcls", creations, acl_creation,
                    resource_type, resource_pattern_type, results, acl_creation_result)
API_ACL_REFUSE_EACH(api_delete_acls, delete_acls, "DeleteAcls", filters, delete_acls_filter,
                    resource_type_filter, pattern_type_filter, filter_results,
                    delete_acls_filter_result)
