/* The admin family's dispatch table and the helpers its files share. */
#include "api/api_admin.h"

#include <stdio.h>
#include <string.h>

#include "util/kerr.h"

/* Version ranges: what Kafka 4.x accepts. */
const api_entry_t api_admin_entries[API_ADMIN_NENTRIES] = {
    {19, 2, 7, 2, api_create_topics, API_L_BOTH},
    {20, 1, 6, 1, api_delete_topics, API_L_BOTH},
    {21, 0, 2, 0, api_delete_records, API_L_BROKER},
    {32, 1, 4, 1, api_describe_configs, API_L_BOTH},
    {33, 0, 2, 0, api_alter_configs, API_L_BOTH},
    {35, 1, 5, 1, api_describe_log_dirs, API_L_BROKER},
    {37, 0, 3, 0, api_create_partitions, API_L_BOTH},
    {44, 0, 1, 0, api_incremental_alter_configs, API_L_BOTH},
    {55, 0, 2, 0, api_describe_quorum, API_L_BOTH},
    {57, 0, 2, 0, api_update_features, API_L_BOTH},
};

proto_str_t api_admin_msg(api_req_t *req, const char *msg)
{
    if (!msg)
        return PROTO_STR_NULL;
    size_t n = strlen(msg);
    proto_str_t s = {arena_strndup(req->arena, msg, n), (int32_t)n};
    return s;
}

int api_admin_timed_out(int32_t timeout_ms)
{
    return timeout_ms <= 0;
}

void api_admin_op_timed_out(ctl_op_t *op)
{
    op->err = op->refuse_err = KERR_REQUEST_TIMED_OUT;
    op->msg[0] = '\0';
}

const char *api_admin_op_text(const ctl_op_t *op)
{
    return op->refuse_err && op->err == op->refuse_err ? NULL : op->msg;
}

const char *api_admin_node_name(api_req_t *req)
{
    char *s = arena_alloc(req->arena, 12);
    snprintf(s, 12, "%d", req->b->cfg.node_id);
    return s;
}

cfg_resolved_t *api_admin_keep(api_req_t *req, const cfg_resolved_t *r)
{
    cfg_resolved_t *k = arena_alloc(req->arena, sizeof(*k));
    *k = *r;
    if (r->value == r->scaled)
        k->value = k->scaled;
    return k;
}

/* ---- waiting for the controller ---- */

void api_admin_wait_init(api_admin_wait_t *w, api_req_t *req, void (*answer)(api_admin_wait_t *w))
{
    memset(w, 0, sizeof(*w));
    w->req = req;
    w->answer = answer;
    w->submitting = 1;
}

void api_admin_submit(api_admin_wait_t *w, ctl_op_t *op)
{
    w->pending++;
    op->now_ms = w->req->now_ms;
    op->refuse_err = w->req->refuse_err;
    ctl_submit(w->req->b->ctl, op);
}

/* The answer ends the request: nothing of w is touched after it. */
static void api_admin_answer(api_admin_wait_t *w)
{
    net_conn_t *conn = w->req->conn;
    int held = w->held;
    if (!conn->closing)
        w->answer(w);
    if (held)
        net_conn_release(conn);
}

void api_admin_wait_done(api_admin_wait_t *w)
{
    if (--w->pending == 0 && !w->submitting)
        api_admin_answer(w);
}

void api_admin_wait_end(api_admin_wait_t *w)
{
    w->submitting = 0;
    if (w->pending == 0) {
        api_admin_answer(w);
        return;
    }
    w->held = 1;
    net_conn_hold(w->req->conn);
}
