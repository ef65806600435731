#include "api/api.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_admin.h"
#include "api/api_group.h"
#include "api/api_tools.h"
#include "api/api_txn.h"
#include "cluster/ctl.h"
#include "net/net_loop.h"
#include "util/cstr.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

/* Ranges: what Kafka 4.4 advertises (tests/integration/0007-api-versions
 * compares them with its answer). Produce advertises from 0 because
 * librdkafka's compression probes look for v0 in the advertised range, as
 * Kafka does; v0-2 are refused. Fetch v18 adds a follower's high
 * watermark, of no use without followers. InitProducerId stops at 5: v6
 * (two-phase commit) is unstable in Kafka 4.4, which neither advertises
 * nor accepts it by default. */
static const api_entry_t api_core_entries[] = {
    {0, 3, 13, 0, api_produce, API_L_BROKER},
    {1, 4, 18, 4, api_fetch, API_L_BROKER | API_L_QUORUM},
    {2, 1, 11, 1, api_list_offsets, API_L_BROKER},
    {3, 0, 13, 0, api_metadata, API_L_BROKER},
    {18, 0, 5, 0, api_versions, API_L_BOTH},
    {22, 0, 5, 0, api_init_producer_id, API_L_BROKER},
    {23, 2, 4, 2, api_offset_for_leader_epoch, API_L_BROKER},
    {52, 0, 2, 0, api_raft, API_L_QUORUM},
    {53, 0, 1, 0, api_raft, API_L_QUORUM},
    {54, 0, 1, 0, api_raft, API_L_QUORUM},
    {59, 0, 1, 0, api_raft, API_L_QUORUM},
    {80, 0, 1, 0, api_raft_voters, API_L_QUORUM},
    {81, 0, 0, 0, api_raft_voters, API_L_QUORUM},
    {82, 0, 0, 0, api_raft_voters, API_L_QUORUM},
    {62, 0, 4, 0, api_broker_registration, API_L_QUORUM},
    {63, 0, 2, 0, api_broker_heartbeat, API_L_QUORUM},
    {58, 0, 0, 0, api_envelope, API_L_QUORUM},
    {67, 0, 0, 0, api_allocate_producer_ids, API_L_QUORUM},
    {56, 2, 3, 2, api_alter_partition, API_L_QUORUM},
    {64, 0, 0, 0, api_unregister_broker, API_L_BOTH},
    {43, 0, 2, 0, api_elect_leaders, API_L_BOTH},
    {45, 0, 1, 0, api_alter_partition_reassignments, API_L_BOTH},
    {46, 0, 0, 0, api_list_partition_reassignments, API_L_BOTH},
    {70, 0, 0, 0, api_controller_registration, API_L_QUORUM},
    {60, 0, 2, 0, api_describe_cluster, API_L_BOTH},
};

/* Each API family contributes its own table (one line each here). */
static const struct {
    const api_entry_t *v;
    size_t n;
} api_families[] = {
    {api_core_entries, sizeof(api_core_entries) / sizeof(api_core_entries[0])},
    {api_admin_entries, API_ADMIN_NENTRIES},
    {api_group_entries, API_GROUP_NENTRIES},
    {api_tools_entries, API_TOOLS_NENTRIES},
    {api_txn_entries, API_TXN_NENTRIES},
};

static api_entry_t api_all[128];
static int api_nall;

/* Merges the family tables by key once; ApiVersions lists them in order. */
static void api_table_build(void)
{
    if (api_nall)
        return;
    for (size_t f = 0; f < sizeof(api_families) / sizeof(api_families[0]); f++)
        for (size_t i = 0; i < api_families[f].n; i++) {
            int j = api_nall++;
            while (j > 0 && api_all[j - 1].key > api_families[f].v[i].key) {
                api_all[j] = api_all[j - 1];
                j--;
            }
            api_all[j] = api_families[f].v[i];
        }
}

const api_entry_t *api_table(int *n)
{
    api_table_build();
    *n = api_nall;
    return api_all;
}

int api_entry_served(const api_entry_t *e, int kind)
{
    return (e->listeners & kind) != 0;
}

static const api_entry_t *api_find(int16_t key)
{
    api_table_build();
    for (int i = 0; i < api_nall; i++)
        if (api_all[i].key == key)
            return &api_all[i];
    return NULL;
}

const api_entry_t *api_entry_find(int16_t key)
{
    return api_find(key);
}

void api_reply_begin(api_req_t *req, buf_t *out)
{
    buf_init(out);
    buf_put_i32(out, 0); /* size, patched in api_reply_end */
    proto_resp_header_encode(out, req->hdr.api_key, req->hdr.api_version,
                             req->hdr.correlation_id);
}

void api_reply_frame(buf_t *out)
{
    buf_set_i32(out, 0, (int32_t)(buf_total(out) - 4));
}

void api_reply_end(api_req_t *req, buf_t *out)
{
    api_reply_frame(out);
    if (req->env_reply)
        req->env_reply(req->env, out);
    else
        net_conn_reply(req->conn, out);
}

void api_close(api_req_t *req, const char *why)
{
    char msg[256];
    snprintf(msg, sizeof(msg), "%s (api %d v%d, correlation id %d)", why, req->hdr.api_key,
             req->hdr.api_version, req->hdr.correlation_id);
    net_conn_close(req->conn, msg);
    net_conn_done(req->conn);
}

char *api_cstr(api_req_t *req, proto_str_t s)
{
    if (s.len < 0)
        return NULL;
    return cstr_arena_dup(req->arena, s.p, (size_t)s.len);
}

void api_on_request(net_conn_t *conn, uint8_t *frame, size_t len)
{
    api_conn_t *ac = conn->udata;
    api_req_t *req = arena_calloc(&conn->arena, 1, sizeof(*req));
    size_t hdr_len = 0;

    if (ac->b->stopping) {
        /* Shutting down: in-flight requests finish, new ones are not taken. */
        net_conn_close(conn, NULL);
        net_conn_done(conn);
        return;
    }
    req->b = ac->b;
    req->conn = conn;
    req->arena = &conn->arena;
    req->now_ms = net_now_wall_ms();
    req->kind = ac->kind ? ac->kind : API_L_BROKER;
    req->listener = ac->listener;
    if ((req->kind & API_L_CONTROLLER) && ac->b->raft)
        req->kind |= API_L_QUORUM;
    if (proto_req_header_decode(&req->hdr, frame, len, &hdr_len) < 0) {
        net_conn_close(conn, "malformed request header");
        net_conn_done(conn);
        return;
    }
    req->body = frame + hdr_len;
    req->body_len = len - hdr_len;

    /* An API of another kind of listener is unknown here, as in Kafka. */
    const api_entry_t *e = api_find(req->hdr.api_key);
    if (!e || !api_entry_served(e, req->kind)) {
        api_close(req, e ? "API not served on this kind of listener" : "unknown API key");
        return;
    }
    /* ApiVersions answers every version (with the v0 fallback when it is
     * too new), so that clients can negotiate. */
    if (e->key != 18 && (req->hdr.api_version < e->min_ver || req->hdr.api_version > e->max_ver)) {
        api_close(req, "unsupported API version");
        return;
    }
    if ((req->kind & API_L_BROKER) && api_forwarded(req)) {
        api_forward(req, frame, len);
        return;
    }
    e->handler(req);
}

void api_on_close(net_conn_t *conn)
{
    api_conn_t *ac = conn->udata;
    if (ac && ac->hb_seen && ac->b && ac->b->ctl)
        ctl_broker_link_lost(ac->b->ctl, ac->hb_broker, ac->hb_epoch, net_now_wall_ms());
    if (ac && ac->pending && ac->cancel) {
        void *p = ac->pending;
        ac->pending = NULL;
        ac->cancel(p);
    }
}

void api_finish_pending(net_conn_t *conn)
{
    api_conn_t *ac = conn->udata;
    if (ac && ac->pending && ac->finish)
        ac->finish(ac->pending);
}
