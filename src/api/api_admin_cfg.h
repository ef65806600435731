/* Shared by the config files of the admin family only:
 * api_admin_configs.c (DescribeConfigs), api_admin_alter.c (AlterConfigs,
 * IncrementalAlterConfigs) and api_admin_logger.c (the BROKER_LOGGER
 * resource of both). */
#ifndef STRAND_API_ADMIN_CFG_H
#define STRAND_API_ADMIN_CFG_H

#include <stdbool.h>
#include <stddef.h>

#include "api/api_admin.h"

#define API_ERRLEN 512
#define CFG_SRC_DYNAMIC_BROKER_LOGGER 6

/* How a BROKER or BROKER_LOGGER resource name is checked: each request
 * and resource type has Kafka's own words. */
enum api_node_check {
    API_NODE_DESCRIBE,        /* BROKER in DescribeConfigs: "" allowed */
    API_NODE_ALTER,           /* BROKER in the alter requests: "" allowed */
    API_NODE_LOGGER_DESCRIBE, /* BROKER_LOGGER in DescribeConfigs */
    API_NODE_LOGGER_ALTER,    /* BROKER_LOGGER in IncrementalAlterConfigs */
};

/* Checks that name is this node's id (as Java's Integer.parseInt reads
 * it) or, where allowed, "". Returns 0 with *canon "" or the node's name
 * (in the arena), or INVALID_REQUEST with Kafka's message in err. */
int16_t api_cfg_node(api_req_t *req, proto_str_t name, enum api_node_check how,
                     const char **canon, char *err, size_t errlen);

/* The broker's config layers for DescribeConfigs (server.properties under
 * the dynamic configs of the image). */
void api_cfg_bview(api_req_t *req, cfg_bview_t *bv);

typedef proto_describe_configs_req_describe_configs_resource_t api_dc_req_t;
typedef proto_describe_configs_resp_describe_configs_result_t api_dc_res_t;
typedef proto_describe_configs_resp_describe_configs_resource_result_t api_dc_entry_t;

typedef struct api_dc_opts_s {
    bool synonyms;
    bool docs;
} api_dc_opts_t;

/* 1 when the request asks for key (configuration_keys null or empty: all,
 * as Kafka). */
int api_dc_wanted(const api_dc_req_t *rr, const char *key);
/* One entry of the answer from a resolved key. */
void api_dc_fill(api_req_t *req, api_dc_entry_t *e, const cfg_resolved_t *r,
                 const api_dc_opts_t *o);
void api_dc_fail(api_req_t *req, api_dc_res_t *res, int16_t err, const char *msg);

/* BROKER_LOGGER (api_admin_logger.c): the loggers and their levels for
 * DescribeConfigs; the SET and DELETE of IncrementalAlterConfigs, checked
 * and (unless validate_only) applied at once, as Kafka does (log levels
 * are not stored). */
void api_dc_logger(api_req_t *req, const api_dc_req_t *rr, const api_dc_opts_t *o,
                   api_dc_res_t *res);
int16_t api_iac_logger(api_req_t *req,
                       const proto_incremental_alter_configs_req_alter_configs_resource_t *rr,
                       bool validate_only, char *err, size_t errlen);

#endif
