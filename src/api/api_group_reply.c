/* Group answers held until the coordinator's writes are committed
 * (api_group.h, "Answers after the commit"). The connection is held
 * meanwhile; it is muted anyway while its request is outstanding. */
#include <stdlib.h>
#include <string.h>

#include "api/api_group.h"
#include "coord/grp_log.h"

typedef struct api_grp_reply_s {
    api_req_t *req;
    buf_t out;
    api_group_fail_fn *fail;
    void *arg;
    int for_offsets;
    int in_call;
    int *done; /* the caller's, while in the call */
    int held;
} api_grp_reply_t;

static void api_group_committed(void *udata, int16_t err)
{
    api_grp_reply_t *r = udata;
    api_req_t *req = r->req;
    net_conn_t *conn = req->conn;
    int held = r->held;

    if (r->in_call)
        *r->done = 1;
    if (conn->closing) {
        buf_free(&r->out);
    } else if (!err || !r->fail) {
        net_conn_reply(conn, &r->out);
    } else {
        buf_free(&r->out);
        r->fail(req, r->arg, grp_write_error(err, r->for_offsets));
    }
    /* r lived in the request's arena: nothing of it is touched now. */
    if (held)
        net_conn_release(conn);
}

void api_group_send(api_req_t *req, grp_coord_t *c, const char *const *groups, int n,
                    buf_t *out, api_group_fail_fn *fail, void *arg, int for_offsets)
{
    if (!c || n <= 0) {
        net_conn_reply(req->conn, out);
        return;
    }
    api_grp_reply_t *r = arena_calloc(req->arena, 1, sizeof(*r));
    int32_t *parts = arena_calloc(req->arena, (size_t)n + 1, sizeof(*parts));
    int np = 0;
    for (int i = 0; i < n; i++)
        if (groups[i])
            parts[np++] = grp_log_partition(c, groups[i]);
    r->req = req;
    r->out = *out;
    buf_init(out);
    r->fail = fail;
    r->arg = arg;
    r->for_offsets = for_offsets;
    int done = 0;
    r->done = &done;
    r->in_call = 1;
    grp_log_when_committed(c, parts, np, api_group_committed, r);
    if (done)
        return;
    r->in_call = 0;
    r->held = 1;
    net_conn_hold(req->conn);
}

void api_group_send1(api_req_t *req, grp_coord_t *c, const char *group, buf_t *out,
                     api_group_fail_fn *fail, void *arg, int for_offsets)
{
    api_group_send(req, c, &group, 1, out, fail, arg, for_offsets);
}
