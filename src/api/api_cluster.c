/* DescribeCluster (key 60): the admin client's view of the cluster. */
#include <stdio.h>
#include <string.h>

#include "api/api_brokers.h"
#include "api/api_util.h"

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
