/* AddRaftVoter (80), RemoveRaftVoter (81) and UpdateRaftVoter (82, a
 * voter whose endpoints changed, answered once the new set is appended,
 * with the leader's endpoint in CurrentLeader) on a controller listener:
 * a dynamic quorum's voter changes, as `kafka-metadata-quorum
 * add-controller` / `remove-controller` send them to the active
 * controller, made by cluster/raft_reconf.h on the leader and answered
 * once the new VotersRecord commits (AddRaftVoter v1 with
 * AckWhenCommitted false: once it is appended). A cluster id other than
 * ours is INCONSISTENT_CLUSTER_ID; a static quorum (kraft.version 0)
 * answers UNSUPPORTED_VERSION with Kafka's words; the other errors are
 * the reconfiguration's. The new voter's kraft.version range is taken as
 * 0-1 (Strand's own; Kafka asks the voter with ApiVersions). */
#include <stdio.h>
#include <string.h>

#include "api/api.h"
#include "cluster/raft_reconf.h"
#include "cluster/raft_voters.h"
#include "util/kerr.h"

typedef struct api_rv_wait_s {
    api_req_t *req;
    raft_reconf_t *rc;
} api_rv_wait_t;

/* The answer: both APIs' responses are (throttle, error, message). */
static void api_rv_answer(api_req_t *req, int16_t err, const char *msg)
{
    proto_str_t m = msg ? (proto_str_t){msg, (int32_t)strlen(msg)} : PROTO_STR_NULL;

    if (req->hdr.api_key == 80) {
        proto_add_raft_voter_resp_t resp;
        proto_add_raft_voter_resp_init(&resp);
        resp.error_code = err;
        resp.error_message = m;
        API_REPLY(req, add_raft_voter, &resp);
        return;
    }
    proto_remove_raft_voter_resp_t resp;
    proto_remove_raft_voter_resp_init(&resp);
    resp.error_code = err;
    resp.error_message = m;
    API_REPLY(req, remove_raft_voter, &resp);
}

static void api_rv_done(void *arg, int16_t err, const char *msg)
{
    api_rv_wait_t *w = arg;
    api_conn_t *ac = w->req->conn->udata;

    if (ac->pending == w)
        ac->pending = NULL;
    api_rv_answer(w->req, err, msg);
}

static void api_rv_cancel(void *pending)
{
    api_rv_wait_t *w = pending;
    raft_reconf_cancel(w->rc, w);
}

static void api_rv_finish(void *pending)
{
    api_rv_wait_t *w = pending;
    raft_reconf_cancel(w->rc, w);
    api_rv_done(w, KERR_NOT_LEADER_OR_FOLLOWER, NULL);
}

/* Parks req until the change commits; its connection reads nothing else
 * meanwhile, as with a parked Fetch. */
static api_rv_wait_t *api_rv_park(api_req_t *req)
{
    api_conn_t *ac = req->conn->udata;
    api_rv_wait_t *w = arena_calloc(req->arena, 1, sizeof(*w));

    w->req = req;
    w->rc = req->b->reconf;
    ac->pending = w;
    ac->cancel = api_rv_cancel;
    ac->finish = api_rv_finish;
    return w;
}

/* The checks before the reconfiguration's: 0 to go on. */
static int api_rv_refused(api_req_t *req, proto_str_t cluster_id, const char *what)
{
    char msg[160];
    size_t n = strlen(req->b->cluster_id);

    if (cluster_id.len >= 0 &&
        ((size_t)cluster_id.len != n || memcmp(cluster_id.p, req->b->cluster_id, n))) {
        api_rv_answer(req, KERR_INCONSISTENT_CLUSTER_ID, NULL);
        return 1;
    }
    if (!req->b->reconf) {
        snprintf(msg, sizeof(msg), "Cluster doesn't support %s voter because the kraft.version "
                 "feature is 0", what);
        api_rv_answer(req, KERR_UNSUPPORTED_VERSION, msg);
        return 1;
    }
    return 0;
}

static int api_rv_voter(const proto_add_raft_voter_req_t *r, raft_voter_t *v)
{
    memset(v, 0, sizeof(*v));
    v->id = r->voter_id;
    memcpy(v->dir_id, r->voter_directory_id.b, 16);
    v->kv_max = 1;
    if (r->listeners.n <= 0 || r->listeners.n > RAFT_VOTER_MAX_ENDPOINTS)
        return -1;
    for (int i = 0; i < r->listeners.n; i++) {
        const proto_add_raft_voter_req_listener_t *l = &r->listeners.v[i];
        if (l->name.len <= 0 || (size_t)l->name.len >= sizeof(v->eps[i].name) ||
            l->host.len <= 0 || (size_t)l->host.len >= sizeof(v->eps[i].host))
            return -1;
        memcpy(v->eps[i].name, l->name.p, (size_t)l->name.len);
        memcpy(v->eps[i].host, l->host.p, (size_t)l->host.len);
        v->eps[i].port = l->port;
    }
    v->neps = r->listeners.n;
    return 0;
}

static void api_add_raft_voter(api_req_t *req)
{
    proto_add_raft_voter_req_t r;
    const char *msg = NULL;
    char buf[1024];
    raft_voter_t v;

    proto_add_raft_voter_req_init(&r);
    if (proto_add_raft_voter_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                        req->arena) < 0) {
        api_close(req, "malformed AddRaftVoter request");
        return;
    }
    if (api_rv_refused(req, r.cluster_id, "adding"))
        return;
    if (api_rv_voter(&r, &v) < 0) {
        api_rv_answer(req, KERR_INVALID_REQUEST, "The voter's listeners are invalid");
        return;
    }
    api_rv_wait_t *w = api_rv_park(req);
    int16_t err = raft_reconf_add(req->b->reconf, &v, req->now_ms, r.timeout_ms,
                                  r.ack_when_committed ? api_rv_done : NULL, w, buf, sizeof(buf),
                                  &msg);
    if (err || !r.ack_when_committed)
        api_rv_done(w, err, msg);
}

static void api_remove_raft_voter(api_req_t *req)
{
    proto_remove_raft_voter_req_t r;
    const char *msg = NULL;
    char buf[1024];

    proto_remove_raft_voter_req_init(&r);
    if (proto_remove_raft_voter_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                           req->arena) < 0) {
        api_close(req, "malformed RemoveRaftVoter request");
        return;
    }
    if (api_rv_refused(req, r.cluster_id, "removing"))
        return;
    api_rv_wait_t *w = api_rv_park(req);
    /* Kafka's tool gives no timeout: the quorum's request timeout */
    int16_t err = raft_reconf_remove(req->b->reconf, r.voter_id, r.voter_directory_id.b,
                                     req->now_ms, req->b->cfg.quorum.request_timeout_ms,
                                     api_rv_done, w, buf, sizeof(buf), &msg);
    if (err)
        api_rv_done(w, err, msg);
}

/* UpdateRaftVoter's answer: the error, and the leader as this node knows it. */
static void api_update_answer(api_req_t *req, int16_t err)
{
    proto_update_raft_voter_resp_t resp;
    raft_t *raft = req->b->raft ? raft_node_core(req->b->raft) : NULL;
    const raft_voters_entry_t *e = req->b->voters ? raft_voters_hist_last(req->b->voters) : NULL;
    const raft_voter_t *l = e && raft ? raft_voters_find(&e->set, raft_leader(raft)) : NULL;

    proto_update_raft_voter_resp_init(&resp);
    resp.error_code = err;
    resp.current_leader.leader_id = raft ? raft_leader(raft) : -1;
    resp.current_leader.leader_epoch = raft ? raft_epoch(raft) : -1;
    if (l && l->neps > 0) {
        resp.current_leader.host = (proto_str_t){l->eps[0].host, (int32_t)strlen(l->eps[0].host)};
        resp.current_leader.port = l->eps[0].port;
    }
    API_REPLY(req, update_raft_voter, &resp);
}

static void api_update_raft_voter(api_req_t *req)
{
    proto_update_raft_voter_req_t r;
    proto_add_raft_voter_req_t a;
    const char *msg = NULL;
    char buf[1024];
    raft_voter_t v;
    int16_t err;

    proto_update_raft_voter_req_init(&r);
    if (proto_update_raft_voter_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                           req->arena) < 0) {
        api_close(req, "malformed UpdateRaftVoter request");
        return;
    }
    size_t n = strlen(req->b->cluster_id);
    if (r.cluster_id.len >= 0 &&
        ((size_t)r.cluster_id.len != n || memcmp(r.cluster_id.p, req->b->cluster_id, n))) {
        api_update_answer(req, KERR_INCONSISTENT_CLUSTER_ID);
        return;
    }
    /* the same voter fields as AddRaftVoter's */
    proto_add_raft_voter_req_init(&a);
    a.voter_id = r.voter_id;
    a.voter_directory_id = r.voter_directory_id;
    a.listeners.n = r.listeners.n > 0 ? r.listeners.n : 0;
    a.listeners.v = arena_calloc(req->arena, (size_t)a.listeners.n + 1, sizeof(*a.listeners.v));
    for (int i = 0; i < a.listeners.n; i++) {
        a.listeners.v[i].name = r.listeners.v[i].name;
        a.listeners.v[i].host = r.listeners.v[i].host;
        a.listeners.v[i].port = r.listeners.v[i].port;
    }
    if (!req->b->reconf)
        err = KERR_UNSUPPORTED_VERSION;
    else if (api_rv_voter(&a, &v) < 0)
        err = KERR_INVALID_REQUEST;
    else {
        v.kv_min = r.k_raft_version_feature.min_supported_version;
        v.kv_max = r.k_raft_version_feature.max_supported_version;
        err = raft_reconf_update(req->b->reconf, &v, r.current_leader_epoch, req->now_ms,
                                 req->b->cfg.quorum.request_timeout_ms, buf, sizeof(buf), &msg);
    }
    api_update_answer(req, err);
}

void api_raft_voters(api_req_t *req)
{
    if (req->hdr.api_key == 80)
        api_add_raft_voter(req);
    else if (req->hdr.api_key == 81)
        api_remove_raft_voter(req);
    else
        api_update_raft_voter(req);
}
