/* DescribeConfigs (32), and the helpers the config files share.
 *
 * Topic configs are read from the metadata image over the broker's topic
 * defaults; a BROKER resource is described as Kafka's broker describes
 * it: "" is the cluster-wide default (only the dynamic keys set there),
 * the node's id every broker key with its value and synonyms through the
 * layers (this node's dynamic configs, the dynamic defaults,
 * server.properties, Kafka's defaults); BROKER_LOGGER is in
 * api_admin_logger.c. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/api_admin_cfg.h"
#include "cluster/cfg_broker.h"
#include "cluster/cfg_topic.h"
#include "util/kerr.h"

/* ---- shared ---- */

/* Java's Integer.parseInt: an optional sign and decimal digits. */
static int api_cfg_parse_int(const char *s, int64_t *v)
{
    char *end;
    const char *p = s + (*s == '+' || *s == '-');
    if (*p < '0' || *p > '9')
        return -1;
    *v = strtoll(s, &end, 10);
    return *end || *v < INT32_MIN || *v > INT32_MAX ? -1 : 0;
}

int16_t api_cfg_node(api_req_t *req, proto_str_t name, enum api_node_check how,
                     const char **canon, char *err, size_t errlen)
{
    const char *node = api_admin_node_name(req);
    char *s = api_cstr(req, name);
    int64_t id;

    *canon = "";
    if ((!s || !*s) && (how == API_NODE_DESCRIBE || how == API_NODE_ALTER))
        return KERR_NONE;
    if (!s)
        s = "";
    if (how == API_NODE_LOGGER_DESCRIBE && !*s)
        snprintf(err, errlen, "Broker id must not be empty");
    else if (api_cfg_parse_int(s, &id) < 0)
        snprintf(err, errlen, "%s id must be an integer, but it is: %s",
                 how == API_NODE_DESCRIBE || how == API_NODE_LOGGER_DESCRIBE ? "Broker" : "Node",
                 s);
    else if (id != req->b->cfg.node_id && how == API_NODE_DESCRIBE)
        snprintf(err, errlen, "Unexpected broker id, expected %s or empty string, but received %s",
                 node, s);
    else if (req->env && how == API_NODE_ALTER) {
        /* forwarded by the broker it names (the Admin client sends a
         * broker's configs to that broker): the active controller stores
         * any broker's, as Kafka's does */
        *canon = s;
        return KERR_NONE;
    } else if (id != req->b->cfg.node_id && how == API_NODE_ALTER)
        snprintf(err, errlen, "Unexpected broker id, expected %s, but received %s", node, s);
    else if (id != req->b->cfg.node_id && how == API_NODE_LOGGER_DESCRIBE)
        snprintf(err, errlen, "Unexpected broker id, expected %s but received %s", node, s);
    else if (id != req->b->cfg.node_id)
        snprintf(err, errlen, "Unexpected node id. Expected %s, but received %s", node, s);
    else {
        *canon = node;
        return KERR_NONE;
    }
    return KERR_INVALID_REQUEST;
}

void api_cfg_bview(api_req_t *req, cfg_bview_t *bv)
{
    cfg_bview_init(bv, ctl_image(req->b->ctl), api_admin_node_name(req), &req->b->cfg.props);
}

int api_dc_wanted(const api_dc_req_t *rr, const char *key)
{
    if (rr->configuration_keys.n <= 0)
        return 1;
    size_t len = strlen(key);
    for (int32_t i = 0; i < rr->configuration_keys.n; i++) {
        proto_str_t s = rr->configuration_keys.v[i];
        if (s.len == (int32_t)len && !memcmp(s.p, key, len))
            return 1;
    }
    return 0;
}

void api_dc_fill(api_req_t *req, api_dc_entry_t *e, const cfg_resolved_t *r,
                 const api_dc_opts_t *o)
{
    proto_describe_configs_resp_describe_configs_resource_result_init(e);
    e->name = api_admin_msg(req, r->name);
    e->value = api_admin_msg(req, r->value);
    e->read_only = (r->flags & CFG_RO) != 0;
    e->is_sensitive = (r->flags & CFG_SENS) != 0;
    e->config_source = r->source;
    e->config_type = r->type;
    e->documentation = o->docs ? api_admin_msg(req, r->doc) : PROTO_STR_NULL;
    e->synonyms.n = o->synonyms ? r->nsyn : 0;
    e->synonyms.v = arena_calloc(req->arena, (size_t)r->nsyn + 1, sizeof(*e->synonyms.v));
    for (int i = 0; i < e->synonyms.n; i++) {
        proto_describe_configs_resp_describe_configs_synonym_init(&e->synonyms.v[i]);
        e->synonyms.v[i].name = api_admin_msg(req, r->syn[i].name);
        e->synonyms.v[i].value = api_admin_msg(req, r->syn[i].value);
        e->synonyms.v[i].source = r->syn[i].source;
    }
}

void api_dc_fail(api_req_t *req, api_dc_res_t *res, int16_t err, const char *msg)
{
    res->error_code = err;
    res->error_message = api_admin_msg(req, msg);
}

/* ---- topics ---- */

static void api_dc_topic(api_req_t *req, const api_dc_req_t *rr, const api_dc_opts_t *o,
                         api_dc_res_t *res)
{
    char err[API_ERRLEN];
    size_t len = rr->resource_name.len > 0 ? (size_t)rr->resource_name.len : 0;
    int n;
    const cfg_topic_key_t *keys = cfg_topic_keys(&n);
    cfg_bview_t bv;

    if (ctl_topic_name_check(rr->resource_name.p, len, err, sizeof(err))) {
        api_dc_fail(req, res, KERR_INVALID_TOPIC_EXCEPTION, err);
        return;
    }
    topic_t *topic = part_topic_get(req->b->reg, rr->resource_name.p, len);
    if (!topic) {
        api_dc_fail(req, res, KERR_UNKNOWN_TOPIC_OR_PARTITION, "");
        return;
    }
    const mi_config_t *dyn = part_topic_dynamic(req->b->reg, topic);
    api_cfg_bview(req, &bv);
    res->configs.v = arena_calloc(req->arena, (size_t)n, sizeof(*res->configs.v));
    for (int i = 0; i < n; i++) {
        cfg_resolved_t r;
        if (!api_dc_wanted(rr, keys[i].name))
            continue;
        cfg_topic_resolve(&keys[i], dyn, &bv, &r);
        api_dc_fill(req, &res->configs.v[res->configs.n++], &r, o);
    }
}

/* ---- brokers ---- */

static void api_dc_add(api_req_t *req, const api_dc_req_t *rr, const api_dc_opts_t *o,
                       const cfg_bview_t *bv, bool per_broker, const char *key, api_dc_res_t *res)
{
    cfg_resolved_t r;
    if (!api_dc_wanted(rr, key))
        return;
    cfg_broker_resolve(key, bv, per_broker, &r);
    api_dc_fill(req, &res->configs.v[res->configs.n++], &r, o);
}

static int api_dc_in(const mi_config_t *c, const char *key)
{
    for (int i = 0; c && i < c->n; i++)
        if (!strcmp(c->v[i].key, key))
            return 1;
    return 0;
}

/* The node: every key of the table (those Kafka lists only once set, when
 * set), then the dynamic keys outside it (listener overrides, keys Kafka
 * does not define), from this node's set and then the default's. */
static void api_dc_node(api_req_t *req, const api_dc_req_t *rr, const api_dc_opts_t *o,
                        const cfg_bview_t *bv, api_dc_res_t *res)
{
    int n, nd = (bv->node ? bv->node->n : 0) + (bv->dflt ? bv->dflt->n : 0);
    const cfg_broker_key_t *keys = cfg_broker_keys(&n);

    res->configs.v = arena_calloc(req->arena, (size_t)(n + nd), sizeof(*res->configs.v));
    for (int i = 0; i < n; i++)
        if (!(keys[i].flags & CFG_UNLISTED) || cfg_bview_set(bv, keys[i].name, NULL))
            api_dc_add(req, rr, o, bv, true, keys[i].name, res);
    for (int i = 0; bv->node && i < bv->node->n; i++)
        if (!cfg_broker_find(bv->node->v[i].key))
            api_dc_add(req, rr, o, bv, true, bv->node->v[i].key, res);
    for (int i = 0; bv->dflt && i < bv->dflt->n; i++)
        if (!cfg_broker_find(bv->dflt->v[i].key) && !api_dc_in(bv->node, bv->dflt->v[i].key))
            api_dc_add(req, rr, o, bv, true, bv->dflt->v[i].key, res);
}

static void api_dc_broker(api_req_t *req, const api_dc_req_t *rr, const api_dc_opts_t *o,
                          api_dc_res_t *res)
{
    char err[API_ERRLEN];
    const char *name;
    cfg_bview_t bv;

    if (api_cfg_node(req, rr->resource_name, API_NODE_DESCRIBE, &name, err, sizeof(err))) {
        api_dc_fail(req, res, KERR_INVALID_REQUEST, err);
        return;
    }
    api_cfg_bview(req, &bv);
    if (*name) {
        api_dc_node(req, rr, o, &bv, res);
        return;
    }
    res->configs.v = arena_calloc(req->arena, (size_t)(bv.dflt ? bv.dflt->n : 0) + 1,
                                  sizeof(*res->configs.v));
    for (int i = 0; bv.dflt && i < bv.dflt->n; i++)
        api_dc_add(req, rr, o, &bv, false, bv.dflt->v[i].key, res);
}

void api_describe_configs(api_req_t *req)
{
    proto_describe_configs_req_t r;
    proto_describe_configs_resp_t resp;
    api_dc_opts_t o;

    proto_describe_configs_req_init(&r);
    if (proto_describe_configs_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                          req->arena) < 0) {
        api_close(req, "malformed DescribeConfigs request");
        return;
    }
    o.synonyms = r.include_synonyms;
    o.docs = r.include_documentation;
    proto_describe_configs_resp_init(&resp);
    resp.results.n = r.resources.n > 0 ? r.resources.n : 0;
    resp.results.v = arena_calloc(req->arena, (size_t)resp.results.n + 1, sizeof(*resp.results.v));
    for (int32_t i = 0; i < resp.results.n; i++) {
        const api_dc_req_t *rr = &r.resources.v[i];
        api_dc_res_t *res = &resp.results.v[i];
        proto_describe_configs_resp_describe_configs_result_init(res);
        res->error_message = api_admin_msg(req, ""); /* as Kafka: "" when all is well */
        res->resource_type = rr->resource_type;
        res->resource_name = rr->resource_name;
        res->configs.n = 0;
        if (rr->resource_type == API_RES_TOPIC)
            api_dc_topic(req, rr, &o, res);
        else if (rr->resource_type == API_RES_BROKER)
            api_dc_broker(req, rr, &o, res);
        else if (rr->resource_type == API_RES_BROKER_LOGGER)
            api_dc_logger(req, rr, &o, res);
        else
            api_dc_fail(req, res, KERR_INVALID_REQUEST, "Unsupported resource type");
    }
    API_REPLY(req, describe_configs, &resp);
}
