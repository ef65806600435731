/* JoinGroup (11), SyncGroup (14), Heartbeat (12) and LeaveGroup (13),
 * the group APIs' table, and the coordinator's lifetime on the broker
 * (FindCoordinator is api_group_find.c's).
 *
 * JoinGroup and SyncGroup often wait for other members. The request then
 * parks on its connection (api_conn_t.pending) with a grp_waiter_t in its
 * arena; the coordinator answers through the waiter's callback, from this
 * handler, another member's request or a timer, and the callback encodes
 * the answer straight from coordinator memory. Answering from outside the
 * connection's own dispatch is safe: net_conn_reply() defers reading the
 * next request. If the client goes away first, the connection's cancel
 * hook unlinks the waiter from the coordinator. */
#include "api/api_group.h"
#include "api/api_util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/cstr.h"
#include "util/kerr.h"
#include "coord/grp_log.h"
#include "util/logging.h"

/* The ranges Kafka 4.4 advertises (0007-api-versions compares them). */
const api_entry_t api_group_entries[API_GROUP_NENTRIES] = {
    {8, 2, 10, 2, api_offset_commit, API_L_BROKER},
    {9, 1, 10, 1, api_offset_fetch, API_L_BROKER},
    {10, 0, 6, 0, api_find_coordinator, API_L_BROKER},
    {11, 0, 9, 0, api_join_group, API_L_BROKER},
    {12, 0, 4, 0, api_heartbeat, API_L_BROKER},
    {13, 0, 5, 0, api_leave_group, API_L_BROKER},
    {14, 0, 5, 0, api_sync_group, API_L_BROKER},
    {15, 0, 6, 0, api_describe_groups, API_L_BROKER},
    {16, 0, 5, 0, api_list_groups, API_L_BROKER},
    {42, 0, 3, 0, api_delete_groups, API_L_BROKER},
    {47, 0, 0, 0, api_offset_delete, API_L_BROKER},
};

/* ---- the coordinator ---- */

grp_coord_t *api_group_coord(api_node_t *b)
{
    grp_log_config_t cfg;
    if (b->grp) {
        grp_log_follow(b->grp);
        return b->grp;
    }
    grp_config_defaults(&cfg.grp);
    cfg.img = b->raft ? ctl_image(b->ctl) : NULL;
    cfg.node_id = b->cfg.node_id;
    cfg.grp.num_partitions = b->cfg.offsets_topic_num_partitions;
    cfg.grp.initial_rebalance_delay_ms = b->cfg.group_initial_rebalance_delay_ms;
    cfg.grp.max_size = (int32_t)api_node_prop(b, "group.max.size", INT32_MAX);
    cfg.grp.min_session_timeout_ms =
        (int32_t)api_node_prop(b, "group.min.session.timeout.ms", 6000);
    cfg.grp.max_session_timeout_ms =
        (int32_t)api_node_prop(b, "group.max.session.timeout.ms", 1800000);
    cfg.grp.offsets_retention_ms = api_node_prop(b, "offsets.retention.minutes", 10080) * 60000;
    cfg.grp.offsets_retention_check_ms =
        api_node_prop(b, "offsets.retention.check.interval.ms", 600000);
    cfg.grp.offset_metadata_max_bytes =
        (int32_t)api_node_prop(b, "offset.metadata.max.bytes", 4096);
    cfg.segment_bytes = api_node_prop(b, "offsets.topic.segment.bytes", 104857600);
    cfg.commit_timeout_ms = (int32_t)api_node_prop(b, "offsets.commit.timeout.ms", 5000);
    if (!part_topic_get(b->reg, GRP_LOG_TOPIC, strlen(GRP_LOG_TOPIC))) {
        topic_cfg_t tcfg;
        grp_log_topic_config(&b->reg->defaults, &cfg, &tcfg);
        b->grp_topic.name = GRP_LOG_TOPIC;
        api_itopic_create(b, &b->grp_topic, cfg.grp.num_partitions,
                          (int16_t)api_node_prop(b, "offsets.topic.replication.factor", 3), &tcfg);
    }
    b->grp = grp_log_open(b->loop, b->reg, &cfg);
    return b->grp;
}

void api_group_topic_deleted(api_node_t *b, const char *topic, size_t len)
{
    if (b->grp)
        grp_topic_deleted(b->grp, topic, len);
}

void api_group_shutdown(api_node_t *b)
{
    grp_log_close(b->grp);
    b->grp = NULL;
}

proto_str_t api_group_str(api_req_t *req, const char *s)
{
    size_t n = 0;
    proto_str_t p = {s ? cstr_bytes(req->arena, s, &n) : NULL, s ? (int32_t)n : -1};
    return p;
}

/* Kafka's clientHost: "/" and the peer's address. */
static char *api_group_client_host(api_req_t *req)
{
    const char *peer = req->conn->peer;
    const char *colon = strrchr(peer, ':');
    size_t n = colon ? (size_t)(colon - peer) : strlen(peer);
    char *h = arena_alloc(req->arena, n + 2);
    h[0] = '/';
    memcpy(h + 1, peer, n);
    h[n + 1] = 0;
    return h;
}

static char *api_group_client_id(api_req_t *req)
{
    char *s = api_cstr(req, req->hdr.client_id);
    return s ? s : "";
}

/* ---- parked JoinGroup / SyncGroup ---- */

typedef struct api_grp_wait_s {
    grp_waiter_t w; /* first: the callbacks get this back */
    api_req_t *req;
    grp_coord_t *coord;
    const char *group_id;
    const char *member_id; /* as the request gave it (JoinGroup) */
} api_grp_wait_t;

static void api_group_cancel(void *pending)
{
    api_grp_wait_t *pw = pending;
    grp_waiter_cancel(pw->coord, &pw->w);
}

static void api_join_done(grp_waiter_t *w, const grp_join_result_t *res);
static void api_sync_done(grp_waiter_t *w, const grp_sync_result_t *res);

/* Shutdown: Kafka's coordinator, unloading its groups, answers the
 * waiting JoinGroup and SyncGroup requests with NOT_COORDINATOR. */
static void api_group_finish(void *pending)
{
    api_grp_wait_t *pw = pending;
    grp_waiter_cancel(pw->coord, &pw->w);
    if (pw->w.join_done) {
        grp_join_result_t jr = {.error = KERR_NOT_COORDINATOR, .generation = -1,
                                .member_id = "", .leader = ""};
        api_join_done(&pw->w, &jr);
    } else {
        grp_sync_result_t sr = {.error = KERR_NOT_COORDINATOR};
        api_sync_done(&pw->w, &sr);
    }
}

static void api_group_park(api_grp_wait_t *pw)
{
    api_conn_t *ac = pw->req->conn->udata;
    ac->pending = pw;
    ac->cancel = api_group_cancel;
    ac->finish = api_group_finish;
}

/* Before answering: the request is no longer parked. */
static void api_group_unpark(api_grp_wait_t *pw)
{
    api_conn_t *ac = pw->req->conn->udata;
    if (ac && ac->pending == pw) {
        ac->pending = NULL;
        ac->cancel = NULL;
        ac->finish = NULL;
    }
}

static api_grp_wait_t *api_group_waiter(api_req_t *req, grp_coord_t *c)
{
    api_grp_wait_t *pw = arena_calloc(req->arena, 1, sizeof(*pw));
    pw->req = req;
    pw->coord = c;
    return pw;
}

/* ---- JoinGroup ---- */

/* The group's write failed: a JoinGroup error answer. */
static void api_join_fail(api_req_t *req, void *arg, int16_t err)
{
    api_grp_wait_t *pw = arg;
    proto_join_group_resp_t resp;
    proto_join_group_resp_init(&resp);
    resp.error_code = err;
    resp.generation_id = -1;
    resp.protocol_name = api_group_str(req, req->hdr.api_version >= 7 ? NULL : "");
    resp.leader = api_group_str(req, "");
    resp.member_id = api_group_str(req, pw->member_id ? pw->member_id : "");
    API_REPLY(req, join_group, &resp);
}

static void api_join_done(grp_waiter_t *w, const grp_join_result_t *res)
{
    api_grp_wait_t *pw = (api_grp_wait_t *)w;
    api_req_t *req = pw->req;
    int16_t ver = req->hdr.api_version;
    proto_join_group_resp_t resp;

    api_group_unpark(pw);
    proto_join_group_resp_init(&resp);
    resp.error_code = res->error;
    resp.generation_id = res->generation;
    resp.protocol_type = api_group_str(req, res->protocol_type);
    /* Null protocol names exist from v7 on; older versions get "". */
    resp.protocol_name = api_group_str(req, res->protocol_name ? res->protocol_name
                                                          : ver >= 7 ? NULL : "");
    resp.leader = api_group_str(req, res->leader ? res->leader : "");
    resp.skip_assignment = res->skip_assignment;
    resp.member_id = api_group_str(req, res->member_id ? res->member_id : "");
    resp.members.n = res->nmembers;
    resp.members.v = arena_calloc(req->arena, (size_t)res->nmembers + 1, sizeof(*resp.members.v));
    for (int i = 0; i < res->nmembers; i++) {
        proto_join_group_resp_join_group_response_member_t *m = &resp.members.v[i];
        proto_join_group_resp_join_group_response_member_init(m);
        m->member_id = api_group_str(req, res->members[i].member_id);
        m->group_instance_id = api_group_str(req, res->members[i].instance_id);
        m->metadata.p = res->members[i].meta;
        m->metadata.len = res->members[i].meta_len;
    }
    buf_t out;
    API_ENCODE(req, join_group, &resp, &out);
    api_group_send1(req, pw->coord, pw->group_id, &out, api_join_fail, pw, 0);
}

void api_join_group(api_req_t *req)
{
    proto_join_group_req_t r;
    grp_join_req_t jr;

    proto_join_group_req_init(&r);
    if (proto_join_group_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                    req->arena) < 0) {
        api_close(req, "malformed JoinGroup request");
        return;
    }
    grp_coord_t *c = api_group_coord(req->b);
    api_grp_wait_t *pw = api_group_waiter(req, c);
    pw->w.join_done = api_join_done;
    if (!c) {
        grp_join_result_t res = {.error = KERR_COORDINATOR_NOT_AVAILABLE, .generation = -1,
                                 .member_id = api_cstr(req, r.member_id), .leader = ""};
        api_join_done(&pw->w, &res);
        return;
    }
    memset(&jr, 0, sizeof(jr));
    jr.group_id = api_cstr(req, r.group_id);
    jr.member_id = api_cstr(req, r.member_id);
    pw->group_id = jr.group_id;
    pw->member_id = jr.member_id;
    if (!jr.member_id)
        jr.member_id = "";
    jr.instance_id = api_cstr(req, r.group_instance_id);
    jr.client_id = api_group_client_id(req);
    jr.client_host = api_group_client_host(req);
    jr.session_timeout = r.session_timeout_ms;
    /* v0 has no rebalance timeout: the session timeout serves for both. */
    jr.rebalance_timeout = req->hdr.api_version == 0 ? r.session_timeout_ms : r.rebalance_timeout_ms;
    jr.protocol_type = api_cstr(req, r.protocol_type);
    jr.require_known_member_id = req->hdr.api_version >= 4 && !jr.instance_id;
    jr.support_skip_assignment = req->hdr.api_version >= 9;
    jr.reason = api_cstr(req, r.reason);
    int32_t n = r.protocols.n < 0 ? 0 : r.protocols.n;
    grp_protocol_t *p = arena_calloc(req->arena, (size_t)n + 1, sizeof(*p));
    for (int32_t i = 0; i < n; i++) {
        char *name = api_cstr(req, r.protocols.v[i].name);
        p[i].name = name ? name : "";
        p[i].meta = (uint8_t *)r.protocols.v[i].metadata.p;
        p[i].meta_len = r.protocols.v[i].metadata.len < 0 ? 0 : r.protocols.v[i].metadata.len;
    }
    jr.nprotocols = n;
    jr.protocols = p;
    /* Parked first: the answer, if it comes at once, unparks it. */
    api_group_park(pw);
    grp_join(c, &jr, &pw->w);
}

/* ---- SyncGroup ---- */

static void api_sync_fail(api_req_t *req, void *arg, int16_t err)
{
    proto_sync_group_resp_t resp;
    (void)arg;
    proto_sync_group_resp_init(&resp);
    resp.error_code = err;
    resp.assignment.p = (const uint8_t *)"";
    resp.assignment.len = 0;
    API_REPLY(req, sync_group, &resp);
}

static void api_sync_done(grp_waiter_t *w, const grp_sync_result_t *res)
{
    api_grp_wait_t *pw = (api_grp_wait_t *)w;
    api_req_t *req = pw->req;
    proto_sync_group_resp_t resp;

    api_group_unpark(pw);
    proto_sync_group_resp_init(&resp);
    resp.error_code = res->error;
    resp.protocol_type = api_group_str(req, res->protocol_type);
    resp.protocol_name = api_group_str(req, res->protocol_name);
    resp.assignment.p = res->assignment ? res->assignment : (const uint8_t *)"";
    resp.assignment.len = res->assignment_len < 0 ? 0 : res->assignment_len;
    buf_t out;
    API_ENCODE(req, sync_group, &resp, &out);
    api_group_send1(req, pw->coord, pw->group_id, &out, api_sync_fail, pw, 0);
}

void api_sync_group(api_req_t *req)
{
    proto_sync_group_req_t r;
    grp_sync_req_t sr;

    proto_sync_group_req_init(&r);
    if (proto_sync_group_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                    req->arena) < 0) {
        api_close(req, "malformed SyncGroup request");
        return;
    }
    grp_coord_t *c = api_group_coord(req->b);
    api_grp_wait_t *pw = api_group_waiter(req, c);
    pw->w.sync_done = api_sync_done;
    if (!c) {
        grp_sync_result_t res = {.error = KERR_COORDINATOR_NOT_AVAILABLE};
        api_sync_done(&pw->w, &res);
        return;
    }
    memset(&sr, 0, sizeof(sr));
    sr.group_id = api_cstr(req, r.group_id);
    pw->group_id = sr.group_id;
    sr.generation = r.generation_id;
    sr.member_id = api_cstr(req, r.member_id);
    sr.instance_id = api_cstr(req, r.group_instance_id);
    sr.protocol_type = api_cstr(req, r.protocol_type);
    sr.protocol_name = api_cstr(req, r.protocol_name);
    int32_t n = r.assignments.n < 0 ? 0 : r.assignments.n;
    grp_assignment_t *a = arena_calloc(req->arena, (size_t)n + 1, sizeof(*a));
    for (int32_t i = 0; i < n; i++) {
        a[i].member_id = api_cstr(req, r.assignments.v[i].member_id);
        a[i].data = r.assignments.v[i].assignment.p;
        a[i].len = r.assignments.v[i].assignment.len;
    }
    sr.nassignments = n;
    sr.assignments = a;
    api_group_park(pw);
    grp_sync(c, &sr, &pw->w);
}

/* ---- Heartbeat, LeaveGroup ---- */

static void api_heartbeat_fail(api_req_t *req, void *arg, int16_t err)
{
    proto_heartbeat_resp_t resp;
    (void)arg;
    proto_heartbeat_resp_init(&resp);
    resp.error_code = err;
    API_REPLY(req, heartbeat, &resp);
}

static void api_leave_fail(api_req_t *req, void *arg, int16_t err)
{
    proto_leave_group_resp_t resp;
    (void)arg;
    proto_leave_group_resp_init(&resp);
    resp.error_code = err;
    API_REPLY(req, leave_group, &resp);
}

void api_heartbeat(api_req_t *req)
{
    proto_heartbeat_req_t r;
    proto_heartbeat_resp_t resp;

    proto_heartbeat_req_init(&r);
    if (proto_heartbeat_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                   req->arena) < 0) {
        api_close(req, "malformed Heartbeat request");
        return;
    }
    grp_coord_t *c = api_group_coord(req->b);
    const char *group = api_cstr(req, r.group_id);
    proto_heartbeat_resp_init(&resp);
    resp.error_code = c ? grp_heartbeat(c, group, r.generation_id, api_cstr(req, r.member_id),
                                        api_cstr(req, r.group_instance_id))
                        : KERR_COORDINATOR_NOT_AVAILABLE;
    buf_t out;
    API_ENCODE(req, heartbeat, &resp, &out);
    api_group_send1(req, c, group, &out, api_heartbeat_fail, NULL, 0);
}

void api_leave_group(api_req_t *req)
{
    proto_leave_group_req_t r;
    proto_leave_group_resp_t resp;
    int16_t ver = req->hdr.api_version;

    proto_leave_group_req_init(&r);
    if (proto_leave_group_req_decode(&r, ver, req->body, req->body_len, req->arena) < 0) {
        api_close(req, "malformed LeaveGroup request");
        return;
    }
    grp_coord_t *c = api_group_coord(req->b);
    int32_t n = ver < 3 ? 1 : r.members.n < 0 ? 0 : r.members.n;
    grp_leave_member_t *lm = arena_calloc(req->arena, (size_t)n + 1, sizeof(*lm));
    if (ver < 3) {
        lm[0].member_id = api_cstr(req, r.member_id);
    } else {
        for (int32_t i = 0; i < n; i++) {
            lm[i].member_id = api_cstr(req, r.members.v[i].member_id);
            lm[i].instance_id = api_cstr(req, r.members.v[i].group_instance_id);
            lm[i].reason = api_cstr(req, r.members.v[i].reason);
        }
    }
    const char *group = api_cstr(req, r.group_id);
    int16_t err = c ? grp_leave(c, group, lm, n) : KERR_COORDINATOR_NOT_AVAILABLE;
    proto_leave_group_resp_init(&resp);
    resp.error_code = err;
    if (ver < 3) {
        /* One member: its error is the answer's. */
        if (!err)
            resp.error_code = lm[0].error;
    } else if (!err) {
        resp.members.n = n;
        resp.members.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp.members.v));
        for (int32_t i = 0; i < n; i++) {
            proto_leave_group_resp_member_response_init(&resp.members.v[i]);
            resp.members.v[i].member_id = r.members.v[i].member_id;
            resp.members.v[i].group_instance_id = r.members.v[i].group_instance_id;
            resp.members.v[i].error_code = lm[i].error;
        }
    }
    buf_t out;
    API_ENCODE(req, leave_group, &resp, &out);
    api_group_send1(req, c, group, &out, api_leave_fail, NULL, 0);
}
