/* DescribeCluster (key 60): the admin client's view of the cluster. */
#include <string.h>

#include "api/api_util.h"

void api_describe_cluster(api_req_t *req)
{
    proto_describe_cluster_req_t r;
    proto_describe_cluster_resp_t resp;
    const char *host;
    int port;

    proto_describe_cluster_req_init(&r);
    if (proto_describe_cluster_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                          req->arena) < 0) {
        api_close(req, "malformed DescribeCluster request");
        return;
    }
    proto_describe_cluster_resp_init(&resp);
    resp.endpoint_type = r.endpoint_type;
    resp.cluster_id.p = req->b->cluster_id;
    resp.cluster_id.len = (int32_t)strlen(req->b->cluster_id);
    if (r.endpoint_type != 1) {
        /* Controller endpoints are asked of controller listeners only. */
        resp.error_code = KERR_UNSUPPORTED_ENDPOINT_TYPE;
        resp.error_message = PROTO_STR("The request was sent to an endpoint of type BROKER, "
                                       "but we wanted an endpoint of type CONTROLLER");
        API_REPLY(req, describe_cluster, &resp);
        return;
    }
    host = req->b->adv_host;
    port = req->b->adv_port;
    resp.controller_id = req->b->cfg.node_id;
    if (r.include_cluster_authorized_operations)
        resp.cluster_authorized_operations = API_CLUSTER_AUTHORIZED_OPS;
    resp.brokers.n = 1;
    resp.brokers.v = arena_calloc(req->arena, 1, sizeof(*resp.brokers.v));
    proto_describe_cluster_resp_describe_cluster_broker_init(&resp.brokers.v[0]);
    resp.brokers.v[0].broker_id = req->b->cfg.node_id;
    resp.brokers.v[0].host.p = host;
    resp.brokers.v[0].host.len = (int32_t)strlen(host);
    resp.brokers.v[0].port = port;
    API_REPLY(req, describe_cluster, &resp);
}
