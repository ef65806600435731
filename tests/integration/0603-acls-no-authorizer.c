/* 0603-acls-no-authorizer: the ACL APIs of a broker without an authorizer,
 * answered as Apache Kafka 4.4 answers them (compared field by field with
 * Kafka's answers to the same requests): DescribeAcls, CreateAcls and
 * DeleteAcls at v1, v2 (flexible) and v3 answer SECURITY_DISABLED, once
 * for the request (DescribeAcls: "No Authorizer is configured on the
 * broker"), for each creation (CreateAcls) and for each filter
 * (DeleteAcls, with no matching ACLs; both "No Authorizer is
 * configured."). ApiVersions advertises the three at 1-3. A filter or
 * creation with an UNKNOWN element (code 0 as its resource type, pattern
 * type, operation or permission type) fails Kafka's request parsing: the
 * connection is closed. Codes past the ones Kafka knows (resource type 9,
 * pattern 5, operation 16, permission 4) are answered like any other.
 * compat/client-bugs-java.sh runs kafka-acls.sh against both. */
#include "testlib/testlib.h"
#include "testlib/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define E_SECURITY_DISABLED 54
/* Kafka's texts differ between the APIs. */
#define NO_AUTHORIZER_DESCRIBE "No Authorizer is configured on the broker"
#define NO_AUTHORIZER "No Authorizer is configured."

static arena_t arena;
static int fd = -1;

#define S tl_wire_str

static void expect_msg(proto_str_t m, const char *want, const char *what)
{
    TL_ASSERT(m.len == (int32_t)strlen(want) && !memcmp(m.p, want, (size_t)m.len),
              "%s: message '%.*s'", what, m.len < 0 ? 4 : (int)m.len, m.len < 0 ? "null" : m.p);
}

static void describe(int16_t v)
{
    proto_describe_acls_req_t r;
    proto_describe_acls_resp_t resp;
    proto_describe_acls_req_init(&r);
    r.resource_type_filter = 1; /* ANY */
    r.resource_name_filter = PROTO_STR_NULL;
    r.pattern_type_filter = 1; /* ANY */
    r.principal_filter = PROTO_STR_NULL;
    r.host_filter = PROTO_STR_NULL;
    r.operation = 1;       /* ANY */
    r.permission_type = 1; /* ANY */
    TL_WIRE_CALL(fd, &arena, describe_acls, 29, v, &r, &resp);
    TL_ASSERT_EQ(resp.error_code, E_SECURITY_DISABLED);
    expect_msg(resp.error_message, NO_AUTHORIZER_DESCRIBE, "DescribeAcls");
    TL_ASSERT_EQ(resp.resources.n, 0);
    TL_ASSERT_EQ(resp.throttle_time_ms, 0);
}

static void create(int16_t v)
{
    proto_create_acls_req_t r;
    proto_create_acls_resp_t resp;
    proto_create_acls_req_acl_creation_t c[2];
    proto_create_acls_req_init(&r);
    for (int i = 0; i < 2; i++) {
        proto_create_acls_req_acl_creation_init(&c[i]);
        c[i].resource_type = 2; /* TOPIC */
        c[i].resource_name = S(i ? "t2" : "t1");
        c[i].resource_pattern_type = 3; /* LITERAL */
        c[i].principal = S("User:alice");
        c[i].host = S("*");
        c[i].operation = 3;       /* READ */
        c[i].permission_type = 3; /* ALLOW */
    }
    r.creations.n = 2;
    r.creations.v = c;
    TL_WIRE_CALL(fd, &arena, create_acls, 30, v, &r, &resp);
    TL_ASSERT_EQ(resp.results.n, 2);
    for (int i = 0; i < 2; i++) {
        TL_ASSERT_EQ(resp.results.v[i].error_code, E_SECURITY_DISABLED);
        expect_msg(resp.results.v[i].error_message, NO_AUTHORIZER, "CreateAcls");
    }
    r.creations.n = 0;
    TL_WIRE_CALL(fd, &arena, create_acls, 30, v, &r, &resp);
    TL_ASSERT_EQ(resp.results.n, 0);
}

static void delete(int16_t v)
{
    proto_delete_acls_req_t r;
    proto_delete_acls_resp_t resp;
    proto_delete_acls_req_delete_acls_filter_t f[3];
    proto_delete_acls_req_init(&r);
    for (int i = 0; i < 3; i++) {
        proto_delete_acls_req_delete_acls_filter_init(&f[i]);
        f[i].resource_type_filter = i ? 2 : 1;
        f[i].resource_name_filter = i ? S("t1") : PROTO_STR_NULL;
        f[i].pattern_type_filter = i ? 3 : 1;
        f[i].principal_filter = PROTO_STR_NULL;
        f[i].host_filter = PROTO_STR_NULL;
        f[i].operation = 1;
        f[i].permission_type = 1;
    }
    r.filters.n = 3;
    r.filters.v = f;
    TL_WIRE_CALL(fd, &arena, delete_acls, 31, v, &r, &resp);
    TL_ASSERT_EQ(resp.filter_results.n, 3);
    for (int i = 0; i < 3; i++) {
        TL_ASSERT_EQ(resp.filter_results.v[i].error_code, E_SECURITY_DISABLED);
        expect_msg(resp.filter_results.v[i].error_message, NO_AUTHORIZER, "DeleteAcls");
        TL_ASSERT_EQ(resp.filter_results.v[i].matching_acls.n, 0);
    }
}

static void advertised(void)
{
    proto_api_versions_req_t r;
    proto_api_versions_resp_t resp;
    int found = 0;
    proto_api_versions_req_init(&r);
    r.client_software_name = S("strand-test");
    r.client_software_version = S("1");
    TL_WIRE_CALL(fd, &arena, api_versions, 18, 3, &r, &resp);
    for (int32_t i = 0; i < resp.api_keys.n; i++) {
        const proto_api_versions_resp_api_version_t *k = &resp.api_keys.v[i];
        if (k->api_key >= 29 && k->api_key <= 31) {
            TL_ASSERT(k->min_version == 1 && k->max_version == 3, "api %d advertised %d-%d",
                      k->api_key, k->min_version, k->max_version);
            found++;
        }
    }
    TL_ASSERT_EQ(found, 3);
}

/* A DescribeAcls (what 0), CreateAcls (1) or DeleteAcls (2) v3 whose
 * resource type, pattern, operation and permission are res, pat, op,
 * perm: 1 if the broker closed the connection, 0 if it answered. */
static int unknown_closes(const char *bs, int what, int8_t res, int8_t pat, int8_t op, int8_t perm)
{
    buf_t b;
    size_t got = 0;
    int c = tl_connect(bs, 20000);
    TL_ASSERT(c >= 0, "connect %s", bs);
    buf_init(&b);
    if (what == 0) {
        proto_describe_acls_req_t r;
        proto_describe_acls_req_init(&r);
        r.resource_type_filter = res;
        r.pattern_type_filter = pat;
        r.operation = op;
        r.permission_type = perm;
        proto_describe_acls_req_encode(&r, 3, &b);
    } else if (what == 1) {
        proto_create_acls_req_t r;
        proto_create_acls_req_acl_creation_t cr;
        proto_create_acls_req_init(&r);
        proto_create_acls_req_acl_creation_init(&cr);
        cr.resource_type = res;
        cr.resource_name = S("t");
        cr.resource_pattern_type = pat;
        cr.principal = S("User:alice");
        cr.host = S("*");
        cr.operation = op;
        cr.permission_type = perm;
        r.creations.n = 1;
        r.creations.v = &cr;
        proto_create_acls_req_encode(&r, 3, &b);
    } else {
        proto_delete_acls_req_t r;
        proto_delete_acls_req_delete_acls_filter_t f;
        proto_delete_acls_req_init(&r);
        proto_delete_acls_req_delete_acls_filter_init(&f);
        f.resource_type_filter = res;
        f.pattern_type_filter = pat;
        f.operation = op;
        f.permission_type = perm;
        r.filters.n = 1;
        r.filters.v = &f;
        proto_delete_acls_req_encode(&r, 3, &b);
    }
    tl_wire_send(c, (int16_t)(29 + what), 3, &b);
    buf_free(&b);
    int closed = tl_wait_closed(c, 1500, &got);
    tl_log("api %d (%d %d %d %d): %s, %zu bytes", 29 + what, res, pat, op, perm,
           closed == 1 ? "closed" : "answered", got);
    TL_ASSERT(closed >= 0, "api %d: neither answer nor close in 10 s", 29 + what);
    close(c);
    return closed == 1;
}

static void unknown_elements(const char *bs)
{
    for (int what = 0; what < 3; what++) {
        TL_ASSERT(unknown_closes(bs, what, 0, 3, 3, 3), "api %d: resource type 0", 29 + what);
        TL_ASSERT(unknown_closes(bs, what, 2, 0, 3, 3), "api %d: pattern type 0", 29 + what);
        TL_ASSERT(unknown_closes(bs, what, 2, 3, 0, 3), "api %d: operation 0", 29 + what);
        TL_ASSERT(unknown_closes(bs, what, 2, 3, 3, 0), "api %d: permission 0", 29 + what);
        TL_ASSERT(!unknown_closes(bs, what, 9, 5, 16, 4), "api %d: codes past the known ones",
                  29 + what);
    }
}

int main(void)
{
    tl_init("0603-acls-no-authorizer");
    const char *bs = tl_bootstrap();
    arena_init(&arena, 1 << 16);
    fd = tl_connect(bs, 20000);
    TL_ASSERT(fd >= 0, "connect %s", bs);
    advertised();
    for (int16_t v = 1; v <= 3; v++) {
        tl_log("v%d", v);
        describe(v);
        create(v);
        delete(v);
    }
    close(fd);
    unknown_elements(bs);
    arena_destroy(&arena);
    return tl_done();
}
