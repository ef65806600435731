/* DescribeConfigs (32), AlterConfigs (33), IncrementalAlterConfigs (44).
 *
 * Topic configs are read from the metadata image and changed through the
 * partition registry. Broker configs are described (server.properties and
 * Kafka's defaults) but not changed: Strand reads its configuration once,
 * at start-up, so a BROKER resource in an alter request gets
 * INVALID_REQUEST rather than a change that would not take effect. */
#include <stdio.h>
#include <string.h>

#include "api/api_admin.h"
#include "util/kerr.h"
#include "cluster/cfg_broker.h"
#include "cluster/cfg_topic.h"
#include "util/logging.h"

#define API_ERRLEN 512
#define CFG_SRC_DYNAMIC_BROKER_LOGGER 6

/* ---- DescribeConfigs ---- */

typedef proto_describe_configs_req_describe_configs_resource_t api_dc_req_t;
typedef proto_describe_configs_resp_describe_configs_result_t api_dc_res_t;
typedef proto_describe_configs_resp_describe_configs_resource_result_t api_dc_entry_t;

typedef struct api_dc_opts_s {
    bool synonyms;
    bool docs;
} api_dc_opts_t;

/* 1 when the request asks for key (configuration_keys null = all). */
static int api_dc_wanted(const api_dc_req_t *rr, const char *key)
{
    if (rr->configuration_keys.n < 0)
        return 1;
    size_t len = strlen(key);
    for (int32_t i = 0; i < rr->configuration_keys.n; i++) {
        proto_str_t s = rr->configuration_keys.v[i];
        if (s.len == (int32_t)len && !memcmp(s.p, key, len))
            return 1;
    }
    return 0;
}

static void api_dc_fill(api_req_t *req, api_dc_entry_t *e, const cfg_resolved_t *r,
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

static void api_dc_fail(api_req_t *req, api_dc_res_t *res, int16_t err, const char *msg)
{
    res->error_code = err;
    res->error_message = api_admin_msg(req, msg);
}

static void api_dc_topic(api_req_t *req, const api_dc_req_t *rr, const api_dc_opts_t *o,
                         api_dc_res_t *res)
{
    char err[API_ERRLEN];
    size_t len = rr->resource_name.len > 0 ? (size_t)rr->resource_name.len : 0;
    int n;
    const cfg_topic_key_t *keys = cfg_topic_keys(&n);

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
    res->configs.v = arena_calloc(req->arena, (size_t)n, sizeof(*res->configs.v));
    for (int i = 0; i < n; i++) {
        cfg_resolved_t r;
        if (!api_dc_wanted(rr, keys[i].name))
            continue;
        cfg_topic_resolve(&keys[i], dyn, &req->b->cfg.props, &r);
        api_dc_fill(req, &res->configs.v[res->configs.n++], &r, o);
    }
}

/* BROKER: the node by its id, or "" for the cluster-wide dynamic
 * defaults (there are none: brokers are configured statically here). */
static void api_dc_broker(api_req_t *req, const api_dc_req_t *rr, const api_dc_opts_t *o,
                          api_dc_res_t *res)
{
    const char *node = api_admin_node_name(req);
    char *name = api_cstr(req, rr->resource_name);
    char msg[API_ERRLEN];
    int n;
    const cfg_broker_key_t *keys = cfg_broker_keys(&n);

    if (!name || !*name)
        return;
    if (strcmp(name, node) != 0) {
        snprintf(msg, sizeof(msg),
                 "Unexpected broker id, expected %s or empty string, but received %s", node, name);
        api_dc_fail(req, res, KERR_INVALID_REQUEST, msg);
        return;
    }
    res->configs.v = arena_calloc(req->arena, (size_t)n, sizeof(*res->configs.v));
    for (int i = 0; i < n; i++) {
        cfg_resolved_t r;
        if (!api_dc_wanted(rr, keys[i].name))
            continue;
        cfg_broker_resolve(&keys[i], &req->b->reg->meta->img, node, &req->b->cfg.props, &r);
        api_dc_fill(req, &res->configs.v[res->configs.n++], &r, o);
    }
}

/* BROKER_LOGGER: our one logger and its level. */
static void api_dc_logger(api_req_t *req, const api_dc_req_t *rr, const api_dc_opts_t *o,
                          api_dc_res_t *res)
{
    static const char *const levels[] = {"DEBUG", "INFO", "WARN", "ERROR"};
    cfg_resolved_t r;
    char *name = api_cstr(req, rr->resource_name);
    int lvl = req->b->cfg.log_level;

    if (!name || strcmp(name, api_admin_node_name(req)) != 0) {
        api_dc_fail(req, res, KERR_INVALID_REQUEST, "Unexpected broker id");
        return;
    }
    if (!api_dc_wanted(rr, "root"))
        return;
    memset(&r, 0, sizeof(r));
    r.name = "root";
    r.value = levels[lvl >= 0 && lvl < 4 ? lvl : 1];
    r.source = CFG_SRC_DYNAMIC_BROKER_LOGGER;
    r.type = CFG_T_STRING;
    res->configs.v = arena_calloc(req->arena, 1, sizeof(*res->configs.v));
    api_dc_fill(req, &res->configs.v[res->configs.n++], &r, o);
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
        res->error_message = PROTO_STR_NULL;
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

/* ---- AlterConfigs and IncrementalAlterConfigs ---- */

/* One resource of either request, reduced to key/value changes. */
typedef struct api_alter_s {
    int8_t type;
    proto_str_t name;
    ctl_kv_t *kv;
    int nkv;
    int replace; /* AlterConfigs: kv is the whole new set */
} api_alter_t;

static int api_alter_dup_keys(const api_alter_t *a)
{
    for (int i = 0; i < a->nkv; i++)
        for (int j = 0; j < i; j++)
            if (!strcmp(a->kv[i].key, a->kv[j].key))
                return 1;
    return 0;
}

/* A request whose topic resources wait for their changes. */
typedef struct api_ac_s {
    api_admin_wait_t w; /* first */
    void *resp;
    void (*reply)(api_req_t *req, void *resp);
} api_ac_t;

/* One resource's change, handed to the controller; the answer's fields
 * it fills. */
typedef struct api_ac_ent_s {
    ctl_op_t op; /* first */
    api_ac_t *ac;
    int16_t *error_code;
    proto_str_t *error_message;
} api_ac_ent_t;

static void api_ac_done(ctl_op_t *op)
{
    api_ac_ent_t *e = (api_ac_ent_t *)op;
    *e->error_code = op->err;
    *e->error_message = op->err ? api_admin_msg(e->ac->w.req, op->msg) : PROTO_STR_NULL;
    api_admin_wait_done(&e->ac->w);
}

static void api_ac_answer(api_admin_wait_t *w)
{
    api_ac_t *ac = (api_ac_t *)w;
    ac->reply(w->req, ac->resp);
}

/* Checks one resource's changes; a topic's go to the controller, which
 * fills *code and *msg when done. Returns an error to answer at once. */
static int16_t api_alter_one(api_ac_t *ac, const api_alter_t *a, bool validate_only, char *err,
                             size_t errlen, int16_t *code, proto_str_t *msg)
{
    api_req_t *req = ac->w.req;
    size_t len = a->name.len > 0 ? (size_t)a->name.len : 0;
    int16_t e;

    *err = '\0';
    if (a->type == API_RES_BROKER || a->type == API_RES_BROKER_LOGGER) {
        snprintf(err, errlen, "Strand reads broker configs only from server.properties at "
                              "start-up; they cannot be changed at run time");
        return KERR_INVALID_REQUEST;
    }
    if (a->type != API_RES_TOPIC) {
        snprintf(err, errlen, "Unsupported resource type");
        return KERR_INVALID_REQUEST;
    }
    if ((e = ctl_topic_name_check(a->name.p, len, err, errlen)))
        return e;
    topic_t *topic = part_topic_get(req->b->reg, a->name.p, len);
    if (!topic) {
        snprintf(err, errlen, "The topic '%.*s' does not exist.", (int)len, a->name.p);
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    if (api_alter_dup_keys(a)) {
        snprintf(err, errlen, "Error due to duplicate config keys");
        return KERR_INVALID_REQUEST;
    }
    api_ac_ent_t *ent = arena_calloc(req->arena, 1, sizeof(*ent));
    ent->ac = ac;
    ent->error_code = code;
    ent->error_message = msg;
    ent->op.kind = CTL_ALTER_CONFIGS;
    memcpy(ent->op.topic_id, topic->id, 16);
    ent->op.kv = a->kv;
    ent->op.nkv = a->nkv;
    ent->op.replace = a->replace;
    ent->op.validate_only = validate_only;
    ent->op.nassign = -1;
    ent->op.done = api_ac_done;
    api_admin_submit(&ac->w, &ent->op);
    return KERR_NONE;
}

typedef proto_alter_configs_resp_alter_configs_resource_response_t api_ac_res_t;

static void api_alter_answer(api_ac_t *ac, const api_alter_t *a, bool validate_only,
                             api_ac_res_t *res)
{
    char err[API_ERRLEN];
    proto_alter_configs_resp_alter_configs_resource_response_init(res);
    res->resource_type = a->type;
    res->resource_name = a->name;
    res->error_message = PROTO_STR_NULL;
    int16_t e = api_alter_one(ac, a, validate_only, err, sizeof(err), &res->error_code,
                              &res->error_message);
    if (e) {
        res->error_code = e;
        res->error_message = api_admin_msg(ac->w.req, err);
    }
}

static void api_alter_reply(api_req_t *req, void *resp)
{
    API_REPLY(req, alter_configs, (proto_alter_configs_resp_t *)resp);
}

void api_alter_configs(api_req_t *req)
{
    proto_alter_configs_req_t r;
    proto_alter_configs_resp_t *resp = arena_calloc(req->arena, 1, sizeof(*resp));
    api_ac_t *ac = arena_calloc(req->arena, 1, sizeof(*ac));

    proto_alter_configs_req_init(&r);
    if (proto_alter_configs_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                       req->arena) < 0) {
        api_close(req, "malformed AlterConfigs request");
        return;
    }
    api_admin_wait_init(&ac->w, req, api_ac_answer);
    ac->resp = resp;
    ac->reply = api_alter_reply;
    proto_alter_configs_resp_init(resp);
    resp->responses.n = r.resources.n > 0 ? r.resources.n : 0;
    resp->responses.v =
        arena_calloc(req->arena, (size_t)resp->responses.n + 1, sizeof(*resp->responses.v));
    for (int32_t i = 0; i < resp->responses.n; i++) {
        const proto_alter_configs_req_alter_configs_resource_t *rr = &r.resources.v[i];
        api_alter_t a = {rr->resource_type, rr->resource_name, NULL, 0, 1};
        int32_t n = rr->configs.n > 0 ? rr->configs.n : 0;
        a.kv = arena_calloc(req->arena, (size_t)n + 1, sizeof(*a.kv));
        for (int32_t j = 0; j < n; j++) {
            const char *key = api_cstr(req, rr->configs.v[j].name);
            a.kv[a.nkv].key = key ? key : "";
            a.kv[a.nkv++].value = api_cstr(req, rr->configs.v[j].value);
        }
        api_alter_answer(ac, &a, r.validate_only, &resp->responses.v[i]);
    }
    api_admin_wait_end(&ac->w);
}

/* Java's list form of a value: trimmed elements split on commas. */
static int api_list_split(char *s, char **out, int max)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(s, ",", &save); tok && n < max;
         tok = strtok_r(NULL, ",", &save)) {
        while (*tok == ' ' || *tok == '\t')
            tok++;
        char *e = tok + strlen(tok);
        while (e > tok && (e[-1] == ' ' || e[-1] == '\t'))
            *--e = '\0';
        if (*tok)
            out[n++] = tok;
    }
    return n;
}

/* APPEND adds the items not yet in the current value, SUBTRACT removes
 * them, both starting from the value the topic has now (its default
 * included), as Kafka does. Returns the new value in the arena. */
static char *api_list_op(api_req_t *req, topic_t *topic, const cfg_topic_key_t *k, int8_t op,
                         const char *arg)
{
    cfg_resolved_t r;
    char *cur_items[64], *arg_items[64];
    cfg_topic_resolve(k, part_topic_dynamic(req->b->reg, topic), &req->b->cfg.props, &r);
    char *cur = arena_strndup(req->arena, r.value ? r.value : "", strlen(r.value ? r.value : ""));
    char *args = arena_strndup(req->arena, arg ? arg : "", strlen(arg ? arg : ""));
    int nc = api_list_split(cur, cur_items, 64), na = api_list_split(args, arg_items, 64);
    size_t cap = strlen(r.value ? r.value : "") + strlen(arg ? arg : "") + 2;
    char *out = arena_calloc(req->arena, cap, 1);

    for (int i = 0; i < nc; i++) {
        int drop = 0;
        for (int j = 0; op == 3 && j < na; j++)
            drop |= !strcmp(cur_items[i], arg_items[j]);
        if (!drop)
            snprintf(out + strlen(out), cap - strlen(out), "%s%s", *out ? "," : "", cur_items[i]);
    }
    for (int j = 0; op == 2 && j < na; j++) {
        int have = 0;
        for (int i = 0; i < nc; i++)
            have |= !strcmp(cur_items[i], arg_items[j]);
        if (!have)
            snprintf(out + strlen(out), cap - strlen(out), "%s%s", *out ? "," : "", arg_items[j]);
    }
    return out;
}

/* Turns SET/DELETE/APPEND/SUBTRACT into key/values; 0 or an error. */
static int16_t api_iac_ops(api_req_t *req,
                           const proto_incremental_alter_configs_req_alter_configs_resource_t *rr,
                           api_alter_t *a, char *err, size_t errlen)
{
    topic_t *topic = rr->resource_type == API_RES_TOPIC && rr->resource_name.len >= 0
                         ? part_topic_get(req->b->reg, rr->resource_name.p,
                                          (size_t)rr->resource_name.len)
                         : NULL;
    for (int32_t j = 0; j < rr->configs.n; j++) {
        const proto_incremental_alter_configs_req_alterable_config_t *c = &rr->configs.v[j];
        const char *key = api_cstr(req, c->name), *val = api_cstr(req, c->value);
        const cfg_topic_key_t *k = key ? cfg_topic_find(key, strlen(key)) : NULL;
        int8_t op = c->config_operation;
        key = key ? key : "";
        if (op < 0 || op > 3) {
            snprintf(err, errlen, "Unknown operation type %d", op);
            return KERR_INVALID_REQUEST;
        }
        if (topic && op != 1 && !k) {
            snprintf(err, errlen, "Unknown topic config name: %s", key);
            return KERR_INVALID_CONFIG;
        }
        if (topic && op == 0 && !val) {
            snprintf(err, errlen, "Null value not supported for topic configs: %s", key);
            return KERR_INVALID_CONFIG;
        }
        if (topic && op >= 2 && k->type != CFG_T_LIST) {
            snprintf(err, errlen, op == 2 ? "Can't APPEND to key %s because its type is not LIST."
                                          : "Can't SUBTRACT from key %s because its type is not "
                                            "LIST.", key);
            return KERR_INVALID_CONFIG;
        }
        a->kv[a->nkv].key = key;
        a->kv[a->nkv++].value = op == 1 ? NULL : op == 0 || !topic ? val
                                                                    : api_list_op(req, topic, k,
                                                                                  op, val);
    }
    return 0;
}

static void api_iac_reply(api_req_t *req, void *resp)
{
    API_REPLY(req, incremental_alter_configs, (proto_incremental_alter_configs_resp_t *)resp);
}

void api_incremental_alter_configs(api_req_t *req)
{
    proto_incremental_alter_configs_req_t r;
    proto_incremental_alter_configs_resp_t *resp = arena_calloc(req->arena, 1, sizeof(*resp));
    api_ac_t *ac = arena_calloc(req->arena, 1, sizeof(*ac));
    char err[API_ERRLEN];

    proto_incremental_alter_configs_req_init(&r);
    if (proto_incremental_alter_configs_req_decode(&r, req->hdr.api_version, req->body,
                                                   req->body_len, req->arena) < 0) {
        api_close(req, "malformed IncrementalAlterConfigs request");
        return;
    }
    api_admin_wait_init(&ac->w, req, api_ac_answer);
    ac->resp = resp;
    ac->reply = api_iac_reply;
    proto_incremental_alter_configs_resp_init(resp);
    resp->responses.n = r.resources.n > 0 ? r.resources.n : 0;
    resp->responses.v =
        arena_calloc(req->arena, (size_t)resp->responses.n + 1, sizeof(*resp->responses.v));
    for (int32_t i = 0; i < resp->responses.n; i++) {
        const proto_incremental_alter_configs_req_alter_configs_resource_t *rr = &r.resources.v[i];
        proto_incremental_alter_configs_resp_alter_configs_resource_response_t *res =
            &resp->responses.v[i];
        api_alter_t a = {rr->resource_type, rr->resource_name, NULL, 0, 0};
        a.kv = arena_calloc(req->arena, (size_t)(rr->configs.n > 0 ? rr->configs.n : 0) + 1,
                            sizeof(*a.kv));
        proto_incremental_alter_configs_resp_alter_configs_resource_response_init(res);
        res->resource_type = rr->resource_type;
        res->resource_name = rr->resource_name;
        res->error_message = PROTO_STR_NULL;
        int16_t e = api_iac_ops(req, rr, &a, err, sizeof(err));
        if (!e)
            e = api_alter_one(ac, &a, r.validate_only, err, sizeof(err), &res->error_code,
                              &res->error_message);
        if (e) {
            res->error_code = e;
            res->error_message = api_admin_msg(req, err);
        }
    }
    api_admin_wait_end(&ac->w);
}
