/* DescribeCluster (key 60): the admin client's view of the cluster. */
#include <stdio.h>
#include <string.h>

#include "api/api_brokers.h"
#include "api/api_util.h"
#include "cluster/raft_node.h"
#include "cluster/ctl.h"

/* Controller endpoints (2) are asked of controller listeners only, and
 * other types are unknown; Kafka's refusal keeps the answer's defaults
 * (endpoint type 1, an empty cluster id). */
static void api_dc_refuse(api_req_t *req, int8_t type, proto_describe_cluster_resp_t *resp)
{
    char msg[128];
    snprintf(msg, sizeof(msg), "Unsupported endpoint type %d", (int)type);
    if (type == 2)
        snprintf(msg, sizeof(msg), "The request was sent to an endpoint of type BROKER, but "
                                   "we wanted an endpoint of type CONTROLLER");
    resp->error_code = type == 2 ? KERR_MISMATCHED_ENDPOINT_TYPE : KERR_UNSUPPORTED_ENDPOINT_TYPE;
    resp->error_message.len = (int32_t)strlen(msg);
    resp->error_message.p = arena_strndup(req->arena, msg, strlen(msg));
    API_REPLY(req, describe_cluster, resp);
}

/* The endpoint a controller advertises for its controller listener:
 * advertised.listeners' controller entry, or the listener's own. */
static const bcfg_listener_t *api_dc_controller_endpoint(const broker_config_t *cfg)
{
    for (int i = 0; i < cfg->nadvertised; i++)
        if (cfg->advertised[i].controller)
            return &cfg->advertised[i];
    for (int i = 0; i < cfg->nlisteners; i++)
        if (cfg->listeners[i].controller)
            return &cfg->listeners[i];
    return NULL;
}

/* A registered controller's endpoint named as this listener, or NULL. */
static const mi_endpoint_t *api_dc_endpoint(const mi_controller_t *c, const char *name)
{
    for (int i = 0; i < c->nendpoints; i++)
        if (!strcmp(c->endpoints[i].name, name))
            return &c->endpoints[i];
    return NULL;
}

/* A quorum's controllers, as a Kafka controller lists them: those its
 * image has registered (RegisterControllerRecord, src/broker/
 * broker_ctlreg.c) with an endpoint named as the listener asked (this
 * node's controller listener self), by id; the quorum's leader as the
 * active controller once it is among them, else -1. Before any
 * metadata.version is applied, UNSUPPORTED_VERSION with Kafka's words. */
static void api_dc_registered(api_req_t *req, proto_describe_cluster_resp_t *resp,
                              const bcfg_listener_t *self)
{
    static const char old_mv[] = "Direct-to-controller communication is not supported with the "
                                 "current MetadataVersion.";
    const meta_image_t *img = ctl_image(req->b->ctl);
    int32_t leader = raft_leader(raft_node_core(req->b->raft));
    const mi_controller_t *c;
    const mi_endpoint_t *ep;
    size_t pos = 0;
    int n = 0;

    if (meta_image_feature(img, CTL_FEATURE_METADATA_VERSION) <= 0) {
        proto_describe_cluster_resp_init(resp);
        resp->error_code = KERR_UNSUPPORTED_VERSION;
        resp->error_message = (proto_str_t){old_mv, (int32_t)strlen(old_mv)};
        API_REPLY(req, describe_cluster, resp);
        return;
    }
    resp->brokers.v = arena_calloc(req->arena, (size_t)img->ncontrollers + 1,
                                   sizeof(*resp->brokers.v));
    resp->controller_id = -1;
    while ((c = meta_image_controller_next(img, &pos))) {
        if (!(ep = api_dc_endpoint(c, self->name)))
            continue;
        proto_describe_cluster_resp_describe_cluster_broker_t *br = &resp->brokers.v[n++];
        proto_describe_cluster_resp_describe_cluster_broker_init(br);
        br->broker_id = c->id;
        br->host = (proto_str_t){ep->host, (int32_t)strlen(ep->host)};
        br->port = ep->port;
        if (c->id == leader)
            resp->controller_id = leader;
    }
    resp->brokers.n = n;
    API_REPLY(req, describe_cluster, resp);
}

/* On a controller listener, as a Kafka controller answers there: the
 * controllers for endpoint type 2 (a quorum's registered controllers, or
 * the single node itself), a broker
 * endpoint refused as mismatched (at v0, which can ask for nothing else,
 * as an invalid request), other types unknown. */
static void api_dc_controller(api_req_t *req, const proto_describe_cluster_req_t *r,
                              proto_describe_cluster_resp_t *resp)
{
    int8_t type = r->endpoint_type;
    static const char mismatch[] = "The request was sent to an endpoint of type CONTROLLER, but "
                                   "we wanted an endpoint of type BROKER";
    const bcfg_listener_t *l = api_dc_controller_endpoint(&req->b->cfg);

    if (type == 1 || !l) {
        resp->error_code = req->hdr.api_version ? KERR_MISMATCHED_ENDPOINT_TYPE
                                                : KERR_INVALID_REQUEST;
        resp->error_message.p = mismatch;
        resp->error_message.len = (int32_t)strlen(mismatch);
        API_REPLY(req, describe_cluster, resp);
        return;
    }
    if (type != 2) {
        api_dc_refuse(req, type, resp);
        return;
    }
    resp->endpoint_type = type;
    if (r->include_cluster_authorized_operations)
        resp->cluster_authorized_operations = API_CLUSTER_AUTHORIZED_OPS;
    resp->cluster_id.p = req->b->cluster_id;
    resp->cluster_id.len = (int32_t)strlen(req->b->cluster_id);
    if (req->b->raft) {
        api_dc_registered(req, resp, l);
        return;
    }
    resp->controller_id = req->b->cfg.node_id;
    resp->brokers.n = 1;
    resp->brokers.v = arena_calloc(req->arena, 1, sizeof(*resp->brokers.v));
    proto_describe_cluster_resp_describe_cluster_broker_init(&resp->brokers.v[0]);
    resp->brokers.v[0].broker_id = req->b->cfg.node_id;
    resp->brokers.v[0].host.p = *l->host ? l->host : req->b->hostname;
    resp->brokers.v[0].host.len = (int32_t)strlen(resp->brokers.v[0].host.p);
    resp->brokers.v[0].port = l->port;
    API_REPLY(req, describe_cluster, resp);
}

/* The registered brokers (api_brokers.h): the fenced ones too when
 * asked (v2), marked so. */
static void api_dc_brokers(api_req_t *req, bool with_fenced, proto_describe_cluster_resp_t *resp)
{
    api_broker_t *v;
    int n = api_brokers(req, with_fenced, &v);
    resp->brokers.n = n;
    resp->brokers.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp->brokers.v));
    for (int i = 0; i < n; i++) {
        proto_describe_cluster_resp_describe_cluster_broker_t *db = &resp->brokers.v[i];
        proto_describe_cluster_resp_describe_cluster_broker_init(db);
        db->broker_id = v[i].id;
        db->host.p = v[i].host;
        db->host.len = (int32_t)strlen(v[i].host);
        db->port = v[i].port;
        db->is_fenced = v[i].fenced;
        if (v[i].rack) {
            db->rack.p = v[i].rack;
            db->rack.len = (int32_t)strlen(v[i].rack);
        }
    }
}

void api_describe_cluster(api_req_t *req)
{
    proto_describe_cluster_req_t r;
    proto_describe_cluster_resp_t resp;

    proto_describe_cluster_req_init(&r);
    if (proto_describe_cluster_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                          req->arena) < 0) {
        api_close(req, "malformed DescribeCluster request");
        return;
    }
    proto_describe_cluster_resp_init(&resp);
    if (req->kind & API_L_CONTROLLER) {
        api_dc_controller(req, &r, &resp);
        return;
    }
    if (r.endpoint_type != 1) {
        api_dc_refuse(req, r.endpoint_type, &resp);
        return;
    }
    resp.endpoint_type = r.endpoint_type;
    resp.cluster_id.p = req->b->cluster_id;
    resp.cluster_id.len = (int32_t)strlen(req->b->cluster_id);
    resp.controller_id = req->b->cfg.node_id;
    if (r.include_cluster_authorized_operations)
        resp.cluster_authorized_operations = API_CLUSTER_AUTHORIZED_OPS;
    api_dc_brokers(req, r.include_fenced_brokers, &resp);
    API_REPLY(req, describe_cluster, &resp);
}
