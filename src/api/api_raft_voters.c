/* AddRaftVoter (80) and RemoveRaftVoter (81) on a controller listener:
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

void api_raft_voters(api_req_t *req)
{
    if (req->hdr.api_key == 80)
        api_add_raft_voter(req);
    else
        api_remove_raft_voter(req);
}
