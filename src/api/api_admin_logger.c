/* The BROKER_LOGGER resource: Strand's loggers (util/logging.h: "root" and
 * one per layer) as a Kafka broker shows its log4j loggers, each with its
 * level (its own, or root's), and IncrementalAlterConfigs SET (a level)
 * and DELETE (back to root's level) on them, checked in Kafka's order with
 * its messages. A change takes effect at once and is not stored: a
 * restart brings back the levels of server.properties, as in Kafka. */
#include <stdio.h>
#include <string.h>

#include "api/api_admin_cfg.h"
#include "util/kerr.h"
#include "util/logging.h"

void api_dc_logger(api_req_t *req, const api_dc_req_t *rr, const api_dc_opts_t *o,
                   api_dc_res_t *res)
{
    char err[API_ERRLEN];
    const char *node, *name;
    int n = 0;

    if (api_cfg_node(req, rr->resource_name, API_NODE_LOGGER_DESCRIBE, &node, err,
                     sizeof(err))) {
        api_dc_fail(req, res, KERR_INVALID_REQUEST, err);
        return;
    }
    while (lg_logger_name(n))
        n++;
    res->configs.v = arena_calloc(req->arena, (size_t)n, sizeof(*res->configs.v));
    for (int i = 0; (name = lg_logger_name(i)); i++) {
        cfg_resolved_t r;
        if (!api_dc_wanted(rr, name))
            continue;
        memset(&r, 0, sizeof(r));
        r.name = name;
        r.value = lg_level_name(lg_logger_level(i));
        r.source = CFG_SRC_DYNAMIC_BROKER_LOGGER;
        r.type = CFG_T_UNKNOWN;
        api_dc_entry_t *e = &res->configs.v[res->configs.n++];
        api_dc_fill(req, e, &r, o);
        e->documentation = api_admin_msg(req, ""); /* Kafka sends "" for loggers */
    }
}

typedef proto_incremental_alter_configs_req_alterable_config_t api_iac_cfg_t;

/* One operation's check, in Kafka's order. */
static int16_t api_logger_check(api_req_t *req, const api_iac_cfg_t *c, char *err, size_t errlen)
{
    static const char *const ops[] = {"SET", "DELETE", "APPEND", "SUBTRACT"};
    char *name = api_cstr(req, c->name), *val = api_cstr(req, c->value);
    int8_t op = c->config_operation;

    name = name ? name : "";
    if (op >= 2 && op <= 3) {
        snprintf(err, errlen, "%s operation is not allowed for the BROKER_LOGGER resource",
                 ops[op]);
        return KERR_INVALID_REQUEST;
    }
    if (op < 0 || op > 3) {
        snprintf(err, errlen, "Unknown operation type %d is not allowed for the BROKER_LOGGER "
                 "resource", op);
        return KERR_INVALID_REQUEST;
    }
    if (lg_logger_find(name) < 0) {
        snprintf(err, errlen, "Logger %s does not exist!", name);
        return KERR_INVALID_CONFIG;
    }
    if (op == 1 && lg_logger_find(name) == 0) {
        snprintf(err, errlen, "Removing the log level of the root logger is not allowed");
        return KERR_INVALID_REQUEST;
    }
    if (op == 0 && lg_level_parse(val) < LG_TRACE) {
        snprintf(err, errlen, "Cannot set the log level of %s to %s as it is not a supported "
                 "log level. Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN", name,
                 val);
        return KERR_INVALID_CONFIG;
    }
    return KERR_NONE;
}

typedef proto_incremental_alter_configs_req_alter_configs_resource_t api_iac_res_t;

int16_t api_iac_logger(api_req_t *req, const api_iac_res_t *rr, bool validate_only, char *err,
                       size_t errlen)
{
    const char *node;
    int16_t e;

    /* A key named twice and null values were refused already
     * (api_alter_pre, for every resource type). */
    if ((e = api_cfg_node(req, rr->resource_name, API_NODE_LOGGER_ALTER, &node, err, errlen)))
        return e;
    for (int32_t i = 0; i < rr->configs.n; i++)
        if ((e = api_logger_check(req, &rr->configs.v[i], err, errlen)))
            return e;
    for (int32_t i = 0; i < rr->configs.n && !validate_only; i++) {
        const api_iac_cfg_t *c = &rr->configs.v[i];
        int lg = lg_logger_find(api_cstr(req, c->name));
        int level = c->config_operation == 0 ? lg_level_parse(api_cstr(req, c->value)) : LG_INFO;
        lg_logger_set(lg, c->config_operation == 0, (enum lg_level)level);
        lg_info("logger %s: %s", lg_logger_name(lg), lg_level_name(lg_logger_level(lg)));
    }
    return KERR_NONE;
}
