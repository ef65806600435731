/* The KRaft quorum's own requests on a controller listener: Vote (52),
 * BeginQuorumEpoch (53), EndQuorumEpoch (54), FetchSnapshot (59), and Fetch of
 * __cluster_metadata-0 (1; any Fetch on a controller listener, whose
 * other topics the Raft node refuses as an invalid request), handed whole to this node's Raft node
 * (cluster/raft_node.h), which decodes, checks and answers them when its
 * core says (a Fetch with nothing new waits at the leader, so the
 * answer may come later; the connection reads nothing else meanwhile,
 * as every parked request holds it). */
#include <string.h>

#include "api/api.h"
#include "cluster/raft_node.h"
#include "cluster/raft_wire.h"
#include "util/kerr.h"

typedef struct api_raft_wait_s {
    api_req_t *req;
    raft_node_t *node;
} api_raft_wait_t;

static void api_raft_reply(void *arg, buf_t *body)
{
    api_raft_wait_t *w = arg;
    api_req_t *req = w->req;
    api_conn_t *ac = req->conn->udata;
    buf_t out;
    if (ac->pending == w)
        ac->pending = NULL;
    api_reply_begin(req, &out);
    buf_put(&out, body->p, body->len);
    buf_free(body);
    api_reply_end(req, &out);
}

static void api_raft_cancel(void *pending)
{
    api_raft_wait_t *w = pending;
    raft_node_cancel(w->node, w);
}

/* Shutting down: the waiting request is answered now, as refused. */
static void api_raft_finish(void *pending)
{
    api_raft_wait_t *w = pending;
    buf_t body;
    raft_node_cancel(w->node, w);
    buf_init(&body);
    raft_wire_encode_error(w->req->hdr.api_key, w->req->hdr.api_version,
                           KERR_NOT_LEADER_OR_FOLLOWER, &body);
    api_raft_reply(w, &body);
}

void api_raft(api_req_t *req)
{
    api_conn_t *ac = req->conn->udata;
    api_raft_wait_t *w = arena_calloc(req->arena, 1, sizeof(*w));
    w->req = req;
    w->node = req->b->raft;
    if (!w->node) {
        api_close(req, "no metadata quorum on this node");
        return;
    }
    ac->pending = w;
    ac->cancel = api_raft_cancel;
    ac->finish = api_raft_finish;
    if (raft_node_request(w->node, req->hdr.api_key, req->hdr.api_version, req->body,
                          req->body_len, api_raft_reply, w) < 0) {
        if (ac->pending == w)
            ac->pending = NULL;
        api_close(req, "malformed KRaft request");
    }
}
