/* BrokerRegistration (62), BrokerHeartbeat (63), AllocateProducerIds (67)
 * and ControllerRegistration (70) on a quorum's
 * controller listener: a broker's registration and its heartbeats, a
 * controller's registration (ctl_controllers.c), decided
 * by the controller's broker logic (cluster/bkr.h) as a controller change
 * (ctl_submit), and answered once its records are committed. A node that
 * is not the active controller answers NOT_CONTROLLER, as Kafka's; the
 * broker then asks the leader it learns from the quorum. */
#include <string.h>

#include "api/api_admin.h"
#include "cluster/bkr.h"
#include "cluster/ctl.h"
#include "util/kerr.h"

typedef struct api_breg_s {
    api_admin_wait_t w;
    ctl_op_t op;
    bkr_register_req_t reg;
    bkr_heartbeat_req_t hb;
    bkr_answer_t ans;
} api_breg_t;

static void api_breg_done(ctl_op_t *op)
{
    api_admin_wait_done(&((api_breg_t *)op->udata)->w);
}

static int16_t api_breg_err(const api_breg_t *r)
{
    return r->op.err ? r->op.err : r->ans.err;
}

static void api_breg_answer(api_admin_wait_t *w)
{
    api_breg_t *r = (api_breg_t *)w;
    proto_broker_registration_resp_t resp;
    proto_broker_registration_resp_init(&resp);
    resp.error_code = api_breg_err(r);
    resp.broker_epoch = resp.error_code ? -1 : r->ans.epoch;
    API_REPLY(w->req, broker_registration, &resp);
}

static void api_bhb_answer(api_admin_wait_t *w)
{
    api_breg_t *r = (api_breg_t *)w;
    proto_broker_heartbeat_resp_t resp;
    proto_broker_heartbeat_resp_init(&resp);
    resp.error_code = api_breg_err(r);
    if (!resp.error_code) {
        resp.is_caught_up = r->ans.caught_up;
        resp.is_fenced = r->ans.fenced;
        resp.should_shut_down = r->ans.should_shutdown;
    }
    API_REPLY(w->req, broker_heartbeat, &resp);
}

static void api_breg_submit(api_req_t *req, api_breg_t *r, int kind, const void *breq)
{
    r->op.kind = kind;
    r->op.nassign = -1;
    r->op.broker_req = breq;
    r->op.broker_ans = &r->ans;
    r->op.done = api_breg_done;
    r->op.udata = r;
    api_admin_submit(&r->w, &r->op);
    api_admin_wait_end(&r->w);
    (void)req;
}

/* The request's lists as the decision's (they live in the request's
 * arena until the answer). */
static void api_breg_fill(api_req_t *req, const proto_broker_registration_req_t *m,
                          bkr_register_req_t *reg)
{
    bkr_listener_t *ls = arena_calloc(req->arena, (size_t)m->listeners.n + 1, sizeof(*ls));
    bkr_feature_t *fs = arena_calloc(req->arena, (size_t)m->features.n + 1, sizeof(*fs));
    for (int32_t i = 0; i < m->listeners.n; i++) {
        ls[i].name = m->listeners.v[i].name;
        ls[i].host = m->listeners.v[i].host;
        ls[i].port = m->listeners.v[i].port;
        ls[i].security_protocol = m->listeners.v[i].security_protocol;
    }
    for (int32_t i = 0; i < m->features.n; i++) {
        fs[i].name = m->features.v[i].name;
        fs[i].min = m->features.v[i].min_supported_version;
        fs[i].max = m->features.v[i].max_supported_version;
    }
    reg->broker_id = m->broker_id;
    reg->cluster_id = m->cluster_id;
    memcpy(reg->incarnation, m->incarnation_id.b, 16);
    reg->listeners = ls;
    reg->nlisteners = m->listeners.n > 0 ? m->listeners.n : 0;
    reg->features = fs;
    reg->nfeatures = m->features.n > 0 ? m->features.n : 0;
    reg->rack = m->rack;
    reg->migrating_zk = m->is_migrating_zk_broker;
    reg->prev_epoch = m->previous_broker_epoch;
    reg->dirs = (const uint8_t(*)[16])m->log_dirs.v;
    reg->ndirs = m->log_dirs.n > 0 ? m->log_dirs.n : 0;
}

void api_broker_registration(api_req_t *req)
{
    proto_broker_registration_req_t m;
    api_breg_t *r = arena_calloc(req->arena, 1, sizeof(*r));
    proto_broker_registration_req_init(&m);
    if (proto_broker_registration_req_decode(&m, req->hdr.api_version, req->body, req->body_len,
                                             req->arena) < 0) {
        api_close(req, "malformed BrokerRegistration request");
        return;
    }
    api_admin_wait_init(&r->w, req, api_breg_answer);
    api_breg_fill(req, &m, &r->reg);
    api_breg_submit(req, r, CTL_BROKER_REGISTER, &r->reg);
}

void api_broker_heartbeat(api_req_t *req)
{
    proto_broker_heartbeat_req_t m;
    api_breg_t *r = arena_calloc(req->arena, 1, sizeof(*r));
    proto_broker_heartbeat_req_init(&m);
    if (proto_broker_heartbeat_req_decode(&m, req->hdr.api_version, req->body, req->body_len,
                                          req->arena) < 0) {
        api_close(req, "malformed BrokerHeartbeat request");
        return;
    }
    api_conn_t *ac = req->conn->udata;
    ac->hb_seen = 1;
    ac->hb_broker = m.broker_id;
    ac->hb_epoch = m.broker_epoch;
    api_admin_wait_init(&r->w, req, api_bhb_answer);
    r->hb.broker_id = m.broker_id;
    r->hb.broker_epoch = m.broker_epoch;
    r->hb.current_metadata_offset = m.current_metadata_offset;
    r->hb.want_fence = m.want_fence;
    r->hb.want_shutdown = m.want_shut_down;
    api_breg_submit(req, r, CTL_BROKER_HEARTBEAT, &r->hb);
}

/* A block of producer ids for a broker registered at the epoch it names
 * (STALE_BROKER_EPOCH otherwise): a ProducerIdsRecord naming it,
 * committed, then the block's first id (the image's next, less a block). */
static void api_apid_answer(api_admin_wait_t *w)
{
    api_breg_t *r = (api_breg_t *)w;
    proto_allocate_producer_ids_resp_t resp;
    proto_allocate_producer_ids_resp_init(&resp);
    resp.error_code = r->op.err;
    if (!resp.error_code) {
        resp.producer_id_start =
            ctl_image(w->req->b->ctl)->next_producer_id - CTL_PID_BLOCK_SIZE;
        resp.producer_id_len = CTL_PID_BLOCK_SIZE;
    }
    API_REPLY(w->req, allocate_producer_ids, &resp);
}

void api_allocate_producer_ids(api_req_t *req)
{
    proto_allocate_producer_ids_req_t m;
    api_breg_t *r = arena_calloc(req->arena, 1, sizeof(*r));
    proto_allocate_producer_ids_req_init(&m);
    if (proto_allocate_producer_ids_req_decode(&m, req->hdr.api_version, req->body, req->body_len,
                                               req->arena) < 0) {
        api_close(req, "malformed AllocateProducerIds request");
        return;
    }
    api_admin_wait_init(&r->w, req, api_apid_answer);
    r->hb.broker_id = m.broker_id;
    r->hb.broker_epoch = m.broker_epoch;
    r->op.kind = CTL_ALLOC_PRODUCER_IDS;
    r->op.nassign = -1;
    r->op.broker_req = &r->hb;
    r->op.done = api_breg_done;
    r->op.udata = r;
    api_admin_submit(&r->w, &r->op);
    api_admin_wait_end(&r->w);
}

static void api_creg_answer(api_admin_wait_t *w)
{
    api_breg_t *r = (api_breg_t *)w;
    proto_controller_registration_resp_t resp;
    proto_controller_registration_resp_init(&resp);
    resp.error_code = r->op.err;
    resp.error_message = PROTO_STR_NULL; /* Kafka's: none without an error */
    if (r->op.err && r->op.msg[0])
        resp.error_message = (proto_str_t){arena_strndup(w->req->arena, r->op.msg,
                                                         strlen(r->op.msg)),
                                           (int32_t)strlen(r->op.msg)};
    API_REPLY(w->req, controller_registration, &resp);
}

/* The record the active controller writes, as the request names it (its
 * lists in the request's arena until the answer). */
static proto_rec_register_controller_record_t *
api_creg_record(api_req_t *req, const proto_controller_registration_req_t *m)
{
    proto_rec_register_controller_record_t *rec = arena_calloc(req->arena, 1, sizeof(*rec));
    int32_t nl = m->listeners.n > 0 ? m->listeners.n : 0;
    int32_t nf = m->features.n > 0 ? m->features.n : 0;
    proto_rec_register_controller_record_controller_endpoint_t *eps =
        arena_calloc(req->arena, (size_t)nl + 1, sizeof(*eps));
    proto_rec_register_controller_record_controller_feature_t *fs =
        arena_calloc(req->arena, (size_t)nf + 1, sizeof(*fs));

    for (int32_t i = 0; i < nl; i++) {
        eps[i].name = m->listeners.v[i].name;
        eps[i].host = m->listeners.v[i].host;
        eps[i].port = m->listeners.v[i].port;
        eps[i].security_protocol = m->listeners.v[i].security_protocol;
    }
    for (int32_t i = 0; i < nf; i++) {
        fs[i].name = m->features.v[i].name;
        fs[i].min_supported_version = m->features.v[i].min_supported_version;
        fs[i].max_supported_version = m->features.v[i].max_supported_version;
    }
    rec->controller_id = m->controller_id;
    rec->incarnation_id = m->incarnation_id;
    rec->zk_migration_ready = m->zk_migration_ready;
    rec->end_points.n = nl;
    rec->end_points.v = eps;
    rec->features.n = nf;
    rec->features.v = fs;
    return rec;
}

void api_controller_registration(api_req_t *req)
{
    proto_controller_registration_req_t m;
    api_breg_t *r = arena_calloc(req->arena, 1, sizeof(*r));
    proto_controller_registration_req_init(&m);
    if (proto_controller_registration_req_decode(&m, req->hdr.api_version, req->body,
                                                 req->body_len, req->arena) < 0) {
        api_close(req, "malformed ControllerRegistration request");
        return;
    }
    api_admin_wait_init(&r->w, req, api_creg_answer);
    api_breg_submit(req, r, CTL_CONTROLLER_REGISTER, api_creg_record(req, &m));
}

/* UnregisterBroker: the broker leaves every ISR and leadership, and its
 * registration goes (BROKER_ID_NOT_REGISTERED when it has none), as
 * Kafka's controller does it, alive or not: a live Strand broker of a
 * quorum registers again at its next heartbeat. */
static void api_unreg_answer(api_admin_wait_t *w)
{
    api_breg_t *r = (api_breg_t *)w;
    proto_unregister_broker_resp_t resp;
    proto_unregister_broker_resp_init(&resp);
    resp.error_code = api_breg_err(r);
    if (resp.error_code && r->op.msg[0])
        resp.error_message = (proto_str_t){r->op.msg, (int32_t)strlen(r->op.msg)};
    API_REPLY(w->req, unregister_broker, &resp);
}

void api_unregister_broker(api_req_t *req)
{
    proto_unregister_broker_req_t m;
    api_breg_t *r = arena_calloc(req->arena, 1, sizeof(*r));
    proto_unregister_broker_req_init(&m);
    if (proto_unregister_broker_req_decode(&m, req->hdr.api_version, req->body, req->body_len,
                                           req->arena) < 0) {
        api_close(req, "malformed UnregisterBroker request");
        return;
    }
    api_admin_wait_init(&r->w, req, api_unreg_answer);
    r->op.kind = CTL_UNREGISTER_BROKER;
    r->op.nassign = -1;
    r->op.nparts = m.broker_id;
    r->op.broker_ans = &r->ans;
    r->op.done = api_breg_done;
    r->op.udata = r;
    api_admin_submit(&r->w, &r->op);
    api_admin_wait_end(&r->w);
}
