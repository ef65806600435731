/* ListConfigResources (key 74): the resources that configs can be
 * described for, as Kafka 4.4's KafkaApis lists them. v0 knows only
 * CLIENT_METRICS resources (and its request names no types); v1 asks for
 * any of TOPIC, BROKER, BROKER_LOGGER, CLIENT_METRICS and GROUP (all of
 * them when the list is empty), and a type outside those makes the
 * answer UNSUPPORTED_VERSION with no resources. Listed in Kafka's order:
 * groups with configs, client metrics subscriptions, then this node as a
 * BROKER_LOGGER and as a BROKER (named by its id), then every topic.
 * Strand keeps neither group configs nor client metrics subscriptions,
 * so those two lists are empty. */
#include <stdio.h>
#include <string.h>

#include "api/api_admin.h"
#include "api/api_tools.h"
#include "util/kerr.h"

/* ConfigResource.Type codes beyond api_admin.h's. */
#define API_RES_CLIENT_METRICS 16
#define API_RES_GROUP 32

typedef proto_list_config_resources_resp_config_resource_t api_lcr_res_t;

static int api_lcr_supported(int16_t ver, int8_t type)
{
    if (ver == 0)
        return type == API_RES_CLIENT_METRICS;
    return type == API_RES_TOPIC || type == API_RES_BROKER || type == API_RES_BROKER_LOGGER ||
           type == API_RES_CLIENT_METRICS || type == API_RES_GROUP;
}

/* 1 if type is asked for (an empty list asks for every supported one). */
static int api_lcr_wants(const proto_list_config_resources_req_t *r, int16_t ver, int8_t type)
{
    if (ver == 0 || r->resource_types.n <= 0)
        return api_lcr_supported(ver, type);
    for (int32_t i = 0; i < r->resource_types.n; i++)
        if (r->resource_types.v[i] == type)
            return 1;
    return 0;
}

static void api_lcr_add(api_lcr_res_t *v, int32_t *n, const char *name, size_t len, int8_t type)
{
    proto_list_config_resources_resp_config_resource_init(&v[*n]);
    v[*n].resource_name.p = name;
    v[*n].resource_name.len = (int32_t)len;
    v[*n].resource_type = type;
    (*n)++;
}

static void api_lcr_fill(api_req_t *req, const proto_list_config_resources_req_t *r,
                         proto_list_config_resources_resp_t *resp)
{
    int16_t ver = req->hdr.api_version;
    const char *node = api_admin_node_name(req);
    size_t cap = req->b->reg->by_name.count + 3, pos = 0;
    api_lcr_res_t *v = arena_calloc(req->arena, cap, sizeof(*v));
    int32_t n = 0;
    topic_t *t;

    if (api_lcr_wants(r, ver, API_RES_BROKER_LOGGER))
        api_lcr_add(v, &n, node, strlen(node), API_RES_BROKER_LOGGER);
    if (api_lcr_wants(r, ver, API_RES_BROKER))
        api_lcr_add(v, &n, node, strlen(node), API_RES_BROKER);
    if (api_lcr_wants(r, ver, API_RES_TOPIC))
        while ((t = part_topic_next(req->b->reg, &pos)) && (size_t)n < cap)
            api_lcr_add(v, &n, t->name, t->name_len, API_RES_TOPIC);
    resp->config_resources.n = n;
    resp->config_resources.v = v;
}

void api_list_config_resources(api_req_t *req)
{
    proto_list_config_resources_req_t r;
    proto_list_config_resources_resp_t resp;

    proto_list_config_resources_req_init(&r);
    if (proto_list_config_resources_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                               req->arena) < 0) {
        api_close(req, "malformed ListConfigResources request");
        return;
    }
    proto_list_config_resources_resp_init(&resp);
    for (int32_t i = 0; i < r.resource_types.n; i++)
        if (!api_lcr_supported(req->hdr.api_version, r.resource_types.v[i]))
            resp.error_code = KERR_UNSUPPORTED_VERSION;
    if (!resp.error_code)
        api_lcr_fill(req, &r, &resp);
    API_REPLY(req, list_config_resources, &resp);
}
