/* AlterConfigs (33), IncrementalAlterConfigs (44).
 *
 * Each TOPIC or BROKER resource of a request becomes one change handed to
 * the controller (cluster/ctl.h: CTL_ALTER_CONFIGS for a topic's dynamic
 * configs, CTL_ALTER_BROKER_CONFIGS for the cluster-wide default "" or this
 * node's), after the checks Kafka's broker makes before it forwards a
 * change: the resource name, duplicate keys, null values, and the
 * operations of an incremental change, which become key/value changes
 * here (APPEND and SUBTRACT from the resource's current value). The
 * answer waits for every change of the request. BROKER_LOGGER resources
 * change at once (api_admin_logger.c). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/api_admin_cfg.h"
#include "cluster/cfg_broker.h"
#include "cluster/cfg_topic.h"
#include "util/kerr.h"
#include "util/smap.h"

/* One resource of either request, reduced to key/value changes. */
typedef struct api_alter_s {
    int8_t type;
    proto_str_t name;
    ctl_kv_t *kv;
    int nkv;
    int replace; /* AlterConfigs: kv is the whole new set */
} api_alter_t;

/* By hash: a request may hold many keys. */
static int api_alter_dup_keys(const api_alter_t *a)
{
    smap_t seen;
    int dup = 0;

    smap_init(&seen);
    for (int i = 0; i < a->nkv && !dup; i++) {
        size_t len = strlen(a->kv[i].key);
        dup = smap_get(&seen, a->kv[i].key, len) != NULL;
        smap_put(&seen, a->kv[i].key, len, (void *)a);
    }
    smap_free(&seen);
    return dup;
}

/* The resources named more than once in a request (the same type and
 * name): Kafka's broker answers every copy with one error and changes
 * none of them. Returns a flag per resource, in the arena. */
static uint8_t *api_alter_dup_resources(api_req_t *req, const int8_t *types,
                                        const proto_str_t *names, int32_t n)
{
    uint8_t *dup = arena_calloc(req->arena, (size_t)n + 1, 1);
    smap_t seen;

    smap_init(&seen);
    for (int32_t i = 0; i < n; i++) {
        size_t len = names[i].len > 0 ? (size_t)names[i].len : 0;
        uint8_t *key = arena_alloc(req->arena, len + 2);
        key[0] = (uint8_t)types[i];
        key[1] = names[i].len < 0; /* null apart from "" */
        if (len)
            memcpy(key + 2, names[i].p, len);
        uintptr_t first = (uintptr_t)smap_get(&seen, key, len + 2);
        if (first)
            dup[i] = dup[first - 1] = 1;
        else
            smap_put(&seen, key, len + 2, (void *)(uintptr_t)(i + 1));
    }
    smap_free(&seen);
    return dup;
}

/* The checks Kafka's broker makes of every resource before any other, in
 * its order: named twice in the request, a key named twice, null values
 * (where an operation needs one: ops[i] DELETE (1) does not; ops NULL for
 * AlterConfigs, where every value is needed). 0 or an error with err. */
static int16_t api_alter_pre(const api_alter_t *a, const int8_t *ops, int dup, char *err,
                             size_t errlen)
{
    size_t at;

    if (dup) {
        snprintf(err, errlen, "Each resource must appear at most once.");
        return KERR_INVALID_REQUEST;
    }
    if (api_alter_dup_keys(a)) {
        snprintf(err, errlen, "Error due to duplicate config keys");
        return KERR_INVALID_REQUEST;
    }
    at = (size_t)snprintf(err, errlen, "Null value not supported for : ");
    int nnull = 0;
    for (int i = 0; i < a->nkv; i++) {
        if (a->kv[i].value || (ops && ops[i] == 1))
            continue;
        if (at < errlen)
            at += (size_t)snprintf(err + at, errlen - at, "%s%s", nnull ? ", " : "",
                                   a->kv[i].key);
        nnull++;
    }
    if (nnull)
        return KERR_INVALID_REQUEST;
    *err = '\0';
    return KERR_NONE;
}

/* A request whose resources wait for their changes. */
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
    *e->error_message =
        op->err ? api_admin_msg(e->ac->w.req, api_admin_op_text(op)) : PROTO_STR_NULL;
    api_admin_wait_done(&e->ac->w);
}

static void api_ac_answer(api_admin_wait_t *w)
{
    api_ac_t *ac = (api_ac_t *)w;
    ac->reply(w->req, ac->resp);
}

/* The waiter of an AlterConfigs or IncrementalAlterConfigs request, in its
 * arena: once every resource's change is done, reply answers resp. */
static api_ac_t *api_ac_new(api_req_t *req, void *resp, void (*reply)(api_req_t *req, void *resp))
{
    api_ac_t *ac = arena_calloc(req->arena, 1, sizeof(*ac));

    api_admin_wait_init(&ac->w, req, api_ac_answer);
    ac->resp = resp;
    ac->reply = reply;
    return ac;
}

/* Hands a checked change to the controller; it fills *code and *msg. */
static ctl_op_t *api_alter_submit(api_ac_t *ac, const api_alter_t *a, bool validate_only,
                                  int16_t *code, proto_str_t *msg)
{
    api_ac_ent_t *ent = arena_calloc(ac->w.req->arena, 1, sizeof(*ent));
    ent->ac = ac;
    ent->error_code = code;
    ent->error_message = msg;
    ent->op.kv = a->kv;
    ent->op.nkv = a->nkv;
    ent->op.replace = a->replace;
    ent->op.validate_only = validate_only;
    ent->op.nassign = -1;
    ent->op.done = api_ac_done;
    return &ent->op;
}

static int16_t api_alter_topic(api_ac_t *ac, const api_alter_t *a, bool validate_only,
                               char *err, size_t errlen, int16_t *code, proto_str_t *msg)
{
    api_req_t *req = ac->w.req;
    size_t len = a->name.len > 0 ? (size_t)a->name.len : 0;
    int16_t e;

    if (!len) {
        snprintf(err, errlen, "Default topic resources are not allowed.");
        return KERR_INVALID_REQUEST;
    }
    if ((e = ctl_topic_name_check(a->name.p, len, err, errlen)))
        return e;
    topic_t *topic = part_topic_get(req->b->reg, a->name.p, len);
    if (!topic) {
        snprintf(err, errlen, "The topic '%.*s' does not exist.", (int)len, a->name.p);
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    }
    ctl_op_t *op = api_alter_submit(ac, a, validate_only, code, msg);
    op->kind = CTL_ALTER_CONFIGS;
    memcpy(op->topic_id, topic->id, 16);
    api_admin_submit(&ac->w, op);
    return KERR_NONE;
}

static int16_t api_alter_broker(api_ac_t *ac, const api_alter_t *a, bool validate_only,
                                char *err, size_t errlen, int16_t *code, proto_str_t *msg)
{
    const char *name;
    int16_t e;

    if ((e = api_cfg_node(ac->w.req, a->name, API_NODE_ALTER, &name, err, errlen)))
        return e;
    ctl_op_t *op = api_alter_submit(ac, a, validate_only, code, msg);
    op->kind = CTL_ALTER_BROKER_CONFIGS;
    op->name = name;
    api_admin_submit(&ac->w, op);
    return KERR_NONE;
}

/* Checks one resource's changes and hands them to the controller, which
 * fills *code and *msg when done. Returns an error to answer at once. */
static int16_t api_alter_one(api_ac_t *ac, const api_alter_t *a, bool validate_only, char *err,
                             size_t errlen, int16_t *code, proto_str_t *msg)
{
    *err = '\0';
    if (a->type == API_RES_TOPIC)
        return api_alter_topic(ac, a, validate_only, err, errlen, code, msg);
    if (a->type == API_RES_BROKER)
        return api_alter_broker(ac, a, validate_only, err, errlen, code, msg);
    snprintf(err, errlen, "Unknown resource type %d", a->type);
    return KERR_INVALID_REQUEST;
}

/* ---- AlterConfigs ---- */

typedef proto_alter_configs_resp_alter_configs_resource_response_t api_ac_res_t;

static void api_alter_reply(api_req_t *req, void *resp)
{
    API_REPLY(req, alter_configs, (proto_alter_configs_resp_t *)resp);
}

/* A resource of the request as key/values (the whole new set). */
typedef proto_alter_configs_req_alter_configs_resource_t api_ac_req_t;

static void api_ac_resource(api_req_t *req, const api_ac_req_t *rr, api_alter_t *a)
{
    int32_t n = rr->configs.n > 0 ? rr->configs.n : 0;
    a->type = rr->resource_type;
    a->name = rr->resource_name;
    a->replace = 1;
    a->nkv = 0;
    a->kv = arena_calloc(req->arena, (size_t)n + 1, sizeof(*a->kv));
    for (int32_t j = 0; j < n; j++) {
        const char *key = api_cstr(req, rr->configs.v[j].name);
        a->kv[a->nkv].key = key ? key : "";
        a->kv[a->nkv++].value = api_cstr(req, rr->configs.v[j].value);
    }
}

static void api_ac_one(api_ac_t *ac, const api_alter_t *a, int dup, bool validate_only,
                       api_ac_res_t *res)
{
    char err[API_ERRLEN];
    int16_t e;

    proto_alter_configs_resp_alter_configs_resource_response_init(res);
    res->resource_type = a->type;
    res->resource_name = a->name;
    res->error_message = PROTO_STR_NULL;
    e = api_alter_pre(a, NULL, dup, err, sizeof(err));
    if (!e)
        e = api_alter_one(ac, a, validate_only, err, sizeof(err), &res->error_code,
                          &res->error_message);
    if (e) {
        res->error_code = e;
        res->error_message = api_admin_msg(ac->w.req, err);
    }
}

void api_alter_configs(api_req_t *req)
{
    proto_alter_configs_req_t r;
    proto_alter_configs_resp_t *resp = arena_calloc(req->arena, 1, sizeof(*resp));

    proto_alter_configs_req_init(&r);
    if (proto_alter_configs_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                       req->arena) < 0) {
        api_close(req, "malformed AlterConfigs request");
        return;
    }
    api_ac_t *ac = api_ac_new(req, resp, api_alter_reply);
    proto_alter_configs_resp_init(resp);
    resp->responses.n = r.resources.n > 0 ? r.resources.n : 0;
    resp->responses.v =
        arena_calloc(req->arena, (size_t)resp->responses.n + 1, sizeof(*resp->responses.v));
    int8_t *types = arena_calloc(req->arena, (size_t)resp->responses.n + 1, 1);
    proto_str_t *names = arena_calloc(req->arena, (size_t)resp->responses.n + 1, sizeof(*names));
    for (int32_t i = 0; i < resp->responses.n; i++) {
        types[i] = r.resources.v[i].resource_type;
        names[i] = r.resources.v[i].resource_name;
    }
    uint8_t *dup = api_alter_dup_resources(req, types, names, resp->responses.n);
    for (int32_t i = 0; i < resp->responses.n; i++) {
        api_alter_t a;
        api_ac_resource(req, &r.resources.v[i], &a);
        api_ac_one(ac, &a, dup[i], r.validate_only, &resp->responses.v[i]);
    }
    api_admin_wait_end(&ac->w);
}

/* ---- IncrementalAlterConfigs ---- */

typedef proto_incremental_alter_configs_req_alter_configs_resource_t api_iac_req_t;
typedef proto_incremental_alter_configs_req_alterable_config_t api_iac_cfg_t;

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

/* Kafka's split of a broker key's value: on commas, empty parts dropped,
 * nothing trimmed (so "a , b" holds "a " and " b"). */
static int api_list_split_raw(char *s, char **out, int max)
{
    int n = 0;
    for (char *save = NULL, *tok = strtok_r(s, ",", &save); tok && n < max;
         tok = strtok_r(NULL, ",", &save))
        out[n++] = tok;
    return n;
}

/* The most items a comma list can split into. */
static int api_list_max(const char *s)
{
    int n = 1;
    for (; *s; s++)
        n += *s == ',';
    return n;
}

/* APPEND (op 2) adds the items of arg not yet in cur, SUBTRACT (3) removes
 * them; raw: split as a broker key's value. Returns the new value in the
 * arena. */
static char *api_list_op(api_req_t *req, const char *cur, int8_t op, const char *arg, bool raw)
{
    cur = cur ? cur : "";
    arg = arg ? arg : "";
    /* As many slots as the lists can have items (one per partition in a
     * throttled replicas list): none may be dropped. */
    int maxc = api_list_max(cur), maxa = api_list_max(arg);
    char **cur_items = arena_calloc(req->arena, (size_t)maxc, sizeof(char *));
    char **arg_items = arena_calloc(req->arena, (size_t)maxa, sizeof(char *));
    char *c = arena_strndup(req->arena, cur, strlen(cur));
    char *args = arena_strndup(req->arena, arg, strlen(arg));
    int nc = raw ? api_list_split_raw(c, cur_items, maxc) : api_list_split(c, cur_items, maxc);
    int na = raw ? api_list_split_raw(args, arg_items, maxa) : api_list_split(args, arg_items, maxa);
    size_t cap = strlen(cur) + strlen(arg) + 2;
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

/* A topic's operations as key/values: APPEND and SUBTRACT start from the
 * value the topic has now (its default included). 0 or an error. */
static int16_t api_iac_topic_ops(api_req_t *req, const api_iac_req_t *rr, api_alter_t *a,
                                 char *err, size_t errlen)
{
    topic_t *topic = rr->resource_name.len >= 0 ? part_topic_get(req->b->reg, rr->resource_name.p,
                                                                 (size_t)rr->resource_name.len)
                                                : NULL;
    cfg_bview_t bv;

    api_cfg_bview(req, &bv);
    for (int32_t j = 0; j < rr->configs.n; j++) {
        const api_iac_cfg_t *c = &rr->configs.v[j];
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
        if (topic && op >= 2 && k->type != CFG_T_LIST) {
            snprintf(err, errlen, op == 2 ? "Can't APPEND to key %s because its type is not LIST."
                                          : "Can't SUBTRACT from key %s because its type is not "
                                            "LIST.", key);
            return KERR_INVALID_CONFIG;
        }
        a->kv[a->nkv].key = key;
        if (op >= 2 && topic) {
            cfg_resolved_t r;
            cfg_topic_resolve(k, part_topic_dynamic(req->b->reg, topic), &bv, &r);
            val = api_list_op(req, r.value, op, val, false);
        }
        a->kv[a->nkv++].value = op == 1 ? NULL : val;
    }
    return 0;
}

/* A broker resource's operations as key/values, checked as Kafka's broker
 * checks them: APPEND and SUBTRACT only on a LIST key, starting from the
 * resource's dynamic value or else Kafka's default. 0 or an error. */
static int16_t api_iac_broker_ops(api_req_t *req, const api_iac_req_t *rr, api_alter_t *a,
                                  char *err, size_t errlen)
{
    static const char *const opname[] = {"set", "delete", "append", "subtract"};

    for (int32_t j = 0; j < rr->configs.n; j++) {
        const api_iac_cfg_t *c = &rr->configs.v[j];
        const char *key = api_cstr(req, c->name), *val = api_cstr(req, c->value);
        const cfg_broker_key_t *k = key ? cfg_broker_find(key) : NULL;
        int8_t op = c->config_operation;
        key = key ? key : "";
        if (op < 0 || op > 3) {
            snprintf(err, errlen, "Unknown operations type %d", op);
            return KERR_INVALID_REQUEST;
        }
        if (op >= 2 && !k) {
            snprintf(err, errlen, "Unknown config name: %s", key);
            return KERR_INVALID_CONFIG;
        }
        if (op >= 2 && k->type != CFG_T_LIST) {
            snprintf(err, errlen, "Config value %s is not allowed for config key: %s",
                     opname[op], key);
            return KERR_INVALID_CONFIG;
        }
        a->kv[a->nkv].key = key;
        if (op >= 2) {
            const char *name = rr->resource_name.len > 0 ? api_admin_node_name(req) : "";
            const char *now = meta_image_config_get(ctl_image(req->b->ctl), META_RES_BROKER,
                                                    name, strlen(name), key);
            val = api_list_op(req, now ? now : k->dflt, op, val, true);
        }
        a->kv[a->nkv++].value = op == 1 ? NULL : val;
    }
    return 0;
}

/* A broker resource: the name, then the operations. 0 or an error. */
static int16_t api_iac_broker(api_req_t *req, const api_iac_req_t *rr, api_alter_t *a,
                              char *err, size_t errlen)
{
    const char *name;
    int16_t e;

    if ((e = api_cfg_node(req, rr->resource_name, API_NODE_ALTER, &name, err, errlen)))
        return e;
    return api_iac_broker_ops(req, rr, a, err, errlen);
}

/* The resource's keys, values and operations as given, for
 * api_alter_pre. */
static int16_t api_iac_pre(api_req_t *req, const api_iac_req_t *rr, api_alter_t *a, int dup,
                           char *err, size_t errlen)
{
    int8_t *ops = arena_calloc(req->arena, (size_t)(rr->configs.n > 0 ? rr->configs.n : 0) + 1,
                               1);
    for (int32_t j = 0; j < rr->configs.n; j++) {
        const char *key = api_cstr(req, rr->configs.v[j].name);
        a->kv[a->nkv].key = key ? key : "";
        a->kv[a->nkv++].value = api_cstr(req, rr->configs.v[j].value);
        ops[j] = rr->configs.v[j].config_operation;
    }
    int16_t e = api_alter_pre(a, ops, dup, err, errlen);
    a->nkv = 0;
    return e;
}

/* Checks one resource and turns its operations into key/values (a
 * logger's are applied at once: *done; another type is answered by
 * api_alter_one). 0 or an error. */
static int16_t api_iac_prepare(api_req_t *req, const api_iac_req_t *rr, bool validate_only,
                               api_alter_t *a, bool *done, char *err, size_t errlen)
{
    *done = rr->resource_type == API_RES_BROKER_LOGGER;
    if (rr->resource_type == API_RES_TOPIC)
        return api_iac_topic_ops(req, rr, a, err, errlen);
    if (rr->resource_type == API_RES_BROKER_LOGGER)
        return api_iac_logger(req, rr, validate_only, err, errlen);
    if (rr->resource_type == API_RES_BROKER)
        return api_iac_broker(req, rr, a, err, errlen);
    return KERR_NONE;
}

static void api_iac_reply(api_req_t *req, void *resp)
{
    API_REPLY(req, incremental_alter_configs, (proto_incremental_alter_configs_resp_t *)resp);
}

typedef proto_incremental_alter_configs_resp_alter_configs_resource_response_t api_iac_res_t;

static void api_iac_one(api_ac_t *ac, const api_iac_req_t *rr, int dup, bool validate_only,
                        api_iac_res_t *res)
{
    api_req_t *req = ac->w.req;
    api_alter_t a = {rr->resource_type, rr->resource_name, NULL, 0, 0};
    char err[API_ERRLEN];
    bool done;

    a.kv = arena_calloc(req->arena, (size_t)(rr->configs.n > 0 ? rr->configs.n : 0) + 1,
                        sizeof(*a.kv));
    proto_incremental_alter_configs_resp_alter_configs_resource_response_init(res);
    res->resource_type = rr->resource_type;
    res->resource_name = rr->resource_name;
    res->error_message = PROTO_STR_NULL;
    *err = '\0';
    done = false;
    int16_t e = api_iac_pre(req, rr, &a, dup, err, sizeof(err));
    if (!e)
        e = api_iac_prepare(req, rr, validate_only, &a, &done, err, sizeof(err));
    if (!e && !done)
        e = api_alter_one(ac, &a, validate_only, err, sizeof(err), &res->error_code,
                          &res->error_message);
    if (e) {
        res->error_code = e;
        res->error_message = api_admin_msg(req, err);
    }
}

void api_incremental_alter_configs(api_req_t *req)
{
    proto_incremental_alter_configs_req_t r;
    proto_incremental_alter_configs_resp_t *resp = arena_calloc(req->arena, 1, sizeof(*resp));

    proto_incremental_alter_configs_req_init(&r);
    if (proto_incremental_alter_configs_req_decode(&r, req->hdr.api_version, req->body,
                                                   req->body_len, req->arena) < 0) {
        api_close(req, "malformed IncrementalAlterConfigs request");
        return;
    }
    api_ac_t *ac = api_ac_new(req, resp, api_iac_reply);
    proto_incremental_alter_configs_resp_init(resp);
    resp->responses.n = r.resources.n > 0 ? r.resources.n : 0;
    resp->responses.v =
        arena_calloc(req->arena, (size_t)resp->responses.n + 1, sizeof(*resp->responses.v));
    int8_t *types = arena_calloc(req->arena, (size_t)resp->responses.n + 1, 1);
    proto_str_t *names = arena_calloc(req->arena, (size_t)resp->responses.n + 1, sizeof(*names));
    for (int32_t i = 0; i < resp->responses.n; i++) {
        types[i] = r.resources.v[i].resource_type;
        names[i] = r.resources.v[i].resource_name;
    }
    uint8_t *dup = api_alter_dup_resources(req, types, names, resp->responses.n);
    for (int32_t i = 0; i < resp->responses.n; i++)
        api_iac_one(ac, &r.resources.v[i], dup[i], r.validate_only, &resp->responses.v[i]);
    api_admin_wait_end(&ac->w);
}
