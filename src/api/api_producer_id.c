/* InitProducerId (key 22) for idempotent producers; a transactional id
 * goes to the transaction coordinator (api_txn.c). */
#include <errno.h>
#include <string.h>

#include "api/api.h"
#include "api/api_txn.h"
#include "cluster/ctl.h"
#include "util/kerr.h"
#include "util/logging.h"

/* A request waiting for the controller's next block of ids. */
typedef struct api_pid_s {
    ctl_pid_wait_t w; /* first */
    api_req_t *req;
    int *answered; /* the caller's, while in the call; NULL after */
} api_pid_t;

static void api_pid_answer(api_req_t *req, int64_t pid, int16_t err)
{
    proto_init_producer_id_resp_t resp;
    proto_init_producer_id_resp_init(&resp);
    resp.error_code = err;
    resp.producer_id = err ? -1 : pid;
    resp.producer_epoch = err ? -1 : 0;
    API_REPLY(req, init_producer_id, &resp);
}

static void api_pid_got(ctl_pid_wait_t *w, int64_t pid, int16_t err)
{
    api_pid_t *p = (api_pid_t *)w;
    net_conn_t *conn = p->req->conn;
    int held = !p->answered;
    if (p->answered)
        *p->answered = 1;
    if (!conn->closing)
        api_pid_answer(p->req, pid, err);
    if (held)
        net_conn_release(conn);
}

void api_init_producer_id(api_req_t *req)
{
    proto_init_producer_id_req_t r;
    api_pid_t *p = arena_calloc(req->arena, 1, sizeof(*p));

    proto_init_producer_id_req_init(&r);
    if (proto_init_producer_id_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                          req->arena) < 0) {
        api_close(req, "malformed InitProducerId request");
        return;
    }
    /* v3+ may name the producer's id and epoch: both or neither, or
     * Kafka refuses the request before anything else. */
    if ((r.producer_id == -1) != (r.producer_epoch == -1)) {
        api_pid_answer(req, -1, KERR_INVALID_REQUEST);
        return;
    }
    if (r.transactional_id.len >= 0) {
        api_txn_init_producer_id(req, r.transactional_id, r.transaction_timeout_ms,
                                 r.producer_id, r.producer_epoch);
        return;
    }
    /* Without a transactional id Kafka hands out a fresh id at epoch 0,
     * also when the client names its old id (KIP-360 epoch bumps are for
     * transactional producers). */
    int answered = 0;
    p->req = req;
    p->w.cb = api_pid_got;
    p->answered = &answered;
    int64_t pid = ctl_producer_id(req->b->ctl, &p->w);
    if (pid >= 0) {
        api_pid_answer(req, pid, KERR_NONE);
        return;
    }
    /* Answered already, or when the next block is committed. */
    if (answered)
        return;
    p->answered = NULL;
    net_conn_hold(req->conn);
}
