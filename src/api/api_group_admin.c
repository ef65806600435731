/* DescribeGroups (15), ListGroups (16), DeleteGroups (42): what the admin
 * tools (kafka-consumer-groups.sh) use to show and remove groups. */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "api/api_group.h"
#include "util/kerr.h"

/* With no authorizer, Kafka reports every operation a group supports:
 * READ (3), DELETE (6), DESCRIBE (8), DESCRIBE_CONFIGS (10),
 * ALTER_CONFIGS (11). */
#define API_GROUP_ALL_OPS ((1 << 3) | (1 << 6) | (1 << 8) | (1 << 10) | (1 << 11))

static void api_describe_members(api_req_t *req, grp_t *g,
                                 proto_describe_groups_resp_described_group_t *dg)
{
    bool stable = g->state == GRP_STABLE;
    int i = 0;
    dg->members.n = g->nmembers;
    dg->members.v = arena_calloc(req->arena, (size_t)g->nmembers + 1, sizeof(*dg->members.v));
    for (grp_member_t *m = g->members.next; m != &g->members; m = m->next, i++) {
        proto_describe_groups_resp_described_group_member_t *dm = &dg->members.v[i];
        const grp_protocol_t *p = stable ? grp_member_protocol(m, g->protocol_name) : NULL;
        proto_describe_groups_resp_described_group_member_init(dm);
        dm->member_id = api_group_str(req, m->id);
        dm->group_instance_id = api_group_str(req, m->instance_id);
        dm->client_id = api_group_str(req, m->client_id);
        dm->client_host = api_group_str(req, m->client_host);
        /* Metadata and assignment only describe a stable generation. */
        dm->member_metadata.p = p ? p->meta : (const uint8_t *)"";
        dm->member_metadata.len = p ? p->meta_len : 0;
        dm->member_assignment.p = stable ? m->assignment : (const uint8_t *)"";
        dm->member_assignment.len = stable ? m->assignment_len : 0;
    }
}

/* A group that does not exist is "Dead" with no members, and from v6
 * (which adds the message) GROUP_ID_NOT_FOUND with Kafka's message and no
 * authorized operations, as an error leaves them out. */
static void api_describe_missing(api_req_t *req, bool ops, proto_str_t id,
                                 proto_describe_groups_resp_described_group_t *dg)
{
    dg->group_state = PROTO_STR("Dead");
    if (req->hdr.api_version < 6) {
        if (ops)
            dg->authorized_operations = API_GROUP_ALL_OPS;
        return;
    }
    const char *gid = api_cstr(req, id);
    size_t len = strlen(gid) + 32;
    char *msg = arena_alloc(req->arena, len);
    dg->error_code = KERR_GROUP_ID_NOT_FOUND;
    dg->error_message.p = msg;
    dg->error_message.len = snprintf(msg, len, "Group %s not found.", gid);
}

static void api_describe_one(api_req_t *req, grp_coord_t *c, bool ops, proto_str_t id,
                             proto_describe_groups_resp_described_group_t *dg)
{
    grp_t *g = NULL;
    int16_t err = c ? grp_describe(c, api_cstr(req, id), &g) : KERR_COORDINATOR_NOT_AVAILABLE;

    proto_describe_groups_resp_described_group_init(dg);
    dg->group_id = id;
    dg->error_code = err;
    dg->group_state = PROTO_STR("");
    dg->protocol_type = PROTO_STR("");
    dg->protocol_data = PROTO_STR("");
    if (err)
        return;
    if (!g) {
        api_describe_missing(req, ops, id, dg);
        return;
    }
    if (ops)
        dg->authorized_operations = API_GROUP_ALL_OPS;
    dg->group_state = api_group_str(req, grp_state_name(g->state));
    dg->protocol_type = api_group_str(req, g->protocol_type ? g->protocol_type : "");
    if (g->state == GRP_STABLE && g->protocol_name)
        dg->protocol_data = api_group_str(req, g->protocol_name);
    api_describe_members(req, g, dg);
}

void api_describe_groups(api_req_t *req)
{
    proto_describe_groups_req_t r;
    proto_describe_groups_resp_t resp;

    proto_describe_groups_req_init(&r);
    if (proto_describe_groups_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                         req->arena) < 0) {
        api_close(req, "malformed DescribeGroups request");
        return;
    }
    grp_coord_t *c = api_group_coord(req->b);
    proto_describe_groups_resp_init(&resp);
    resp.groups.n = r.groups.n < 0 ? 0 : r.groups.n;
    resp.groups.v = arena_calloc(req->arena, (size_t)resp.groups.n + 1, sizeof(*resp.groups.v));
    const char **ids = arena_calloc(req->arena, (size_t)resp.groups.n + 1, sizeof(*ids));
    for (int32_t i = 0; i < resp.groups.n; i++) {
        api_describe_one(req, c, r.include_authorized_operations, r.groups.v[i],
                         &resp.groups.v[i]);
        ids[i] = api_cstr(req, r.groups.v[i]);
    }
    /* As OffsetFetch: after the commit of what it describes. */
    buf_t out;
    API_ENCODE(req, describe_groups, &resp, &out);
    api_group_send(req, c, ids, resp.groups.n, &out, NULL, NULL, 0);
}

/* Filters compare without case, as Kafka 4's do. */
static bool api_list_match(const proto_str_t *v, int32_t n, const char *s)
{
    if (n <= 0)
        return true;
    for (int32_t i = 0; i < n; i++)
        if (v[i].len >= 0 && (size_t)v[i].len == strlen(s) &&
            !strncasecmp(v[i].p, s, (size_t)v[i].len))
            return true;
    return false;
}

void api_list_groups(api_req_t *req)
{
    proto_list_groups_req_t r;
    proto_list_groups_resp_t resp;
    size_t pos = 0, n = 0;
    grp_t *g;

    proto_list_groups_req_init(&r);
    if (proto_list_groups_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                     req->arena) < 0) {
        api_close(req, "malformed ListGroups request");
        return;
    }
    grp_coord_t *c = api_group_coord(req->b);
    proto_list_groups_resp_init(&resp);
    if (!c) {
        resp.error_code = KERR_COORDINATOR_NOT_AVAILABLE;
        API_REPLY(req, list_groups, &resp);
        return;
    }
    /* Groups of partitions still loading are not listed yet. */
    resp.error_code = grp_loading(c) ? KERR_COORDINATOR_LOAD_IN_PROGRESS : KERR_NONE;
    while (grp_next(c, &pos))
        n++;
    resp.groups.v = arena_calloc(req->arena, n + 1, sizeof(*resp.groups.v));
    pos = 0;
    /* Every group here is a classic group. */
    if (!api_list_match(r.types_filter.v, r.types_filter.n, "classic"))
        n = 0;
    while (n && (g = grp_next(c, &pos))) {
        const char *state = grp_state_name(g->state);
        if (!api_list_match(r.states_filter.v, r.states_filter.n, state))
            continue;
        proto_list_groups_resp_listed_group_t *lg = &resp.groups.v[resp.groups.n++];
        proto_list_groups_resp_listed_group_init(lg);
        lg->group_id = api_group_str(req, g->id);
        lg->protocol_type = api_group_str(req, g->protocol_type ? g->protocol_type : "");
        lg->group_state = api_group_str(req, state);
        lg->group_type = PROTO_STR("classic");
    }
    API_REPLY(req, list_groups, &resp);
}

/* A tombstone write failed: the groups deleted without error get the
 * write's error. arg is the answer, in the request's arena. */
static void api_delete_groups_fail(api_req_t *req, void *arg, int16_t err)
{
    proto_delete_groups_resp_t *resp = arg;
    for (int32_t i = 0; i < resp->results.n; i++)
        if (!resp->results.v[i].error_code)
            resp->results.v[i].error_code = err;
    API_REPLY(req, delete_groups, resp);
}

void api_delete_groups(api_req_t *req)
{
    proto_delete_groups_req_t r;
    proto_delete_groups_resp_t *resp = arena_calloc(req->arena, 1, sizeof(*resp));

    proto_delete_groups_req_init(&r);
    if (proto_delete_groups_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                       req->arena) < 0) {
        api_close(req, "malformed DeleteGroups request");
        return;
    }
    grp_coord_t *c = api_group_coord(req->b);
    proto_delete_groups_resp_init(resp);
    resp->results.n = r.groups_names.n < 0 ? 0 : r.groups_names.n;
    resp->results.v = arena_calloc(req->arena, (size_t)resp->results.n + 1, sizeof(*resp->results.v));
    const char **ids = arena_calloc(req->arena, (size_t)resp->results.n + 1, sizeof(*ids));
    for (int32_t i = 0; i < resp->results.n; i++) {
        proto_delete_groups_resp_deletable_group_result_t *res = &resp->results.v[i];
        proto_delete_groups_resp_deletable_group_result_init(res);
        res->group_id = r.groups_names.v[i];
        /* v3's ErrorMessage stays null: Kafka 4.4 gives none for the
         * errors a group deletion can have here (GROUP_ID_NOT_FOUND,
         * NON_EMPTY_GROUP, INVALID_GROUP_ID, coordinator errors). */
        ids[i] = api_cstr(req, r.groups_names.v[i]);
        res->error_code = c ? grp_delete(c, ids[i]) : KERR_COORDINATOR_NOT_AVAILABLE;
    }
    buf_t out;
    API_ENCODE(req, delete_groups, resp, &out);
    api_group_send(req, c, ids, resp->results.n, &out, api_delete_groups_fail, resp, 0);
}
