/* CreateTopics (19), DeleteTopics (20), CreatePartitions (37). The
 * controller places replicas over the registered brokers, and checks an
 * explicit assignment's brokers against them; a replication factor above
 * their count, or an assignment naming an unregistered broker, is refused
 * as Kafka refuses it (a single node: anything but itself alone). */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "api/api_admin.h"
#include "api/api_group.h"
#include "util/kerr.h"
#include "cluster/cfg_topic.h"
#include "cluster/ctl_limits.h"
#include "util/fdb.h"
#include "util/smap.h"
#include "util/uuid.h"

#define API_ERRLEN 512

/* Of each name in a request (names[0..n)), by hash: REPEATED when it occurs
 * more than once, EARLIER when a copy comes before it. A null name is
 * neither. The flags are in the request's arena. */
enum { API_NAME_REPEATED = 1, API_NAME_EARLIER = 2 };

static uint8_t *api_admin_name_flags(api_req_t *req, const proto_str_t *names, int32_t n)
{
    uint8_t *fl = arena_calloc(req->arena, (size_t)n + 1, 1);
    smap_t seen;

    smap_init(&seen);
    for (int32_t i = 0; i < n; i++) {
        if (names[i].len < 0)
            continue;
        uintptr_t first = (uintptr_t)smap_get(&seen, names[i].p, (size_t)names[i].len);
        if (!first) {
            smap_put(&seen, names[i].p, (size_t)names[i].len, (void *)(uintptr_t)(i + 1));
            continue;
        }
        fl[first - 1] |= API_NAME_REPEATED;
        fl[i] |= API_NAME_REPEATED | API_NAME_EARLIER;
    }
    smap_free(&seen);
    return fl;
}

/* The descriptor check CreateTopics and CreatePartitions make after the
 * controller's cap: NULL when the nparts new partitions' files fit the
 * descriptor limit, else POLICY_VIOLATION in *err and its message ("verb
 * N partitions" in it), which the request's arena owns. */
static const char *api_admin_fd_limit(api_req_t *req, int64_t nparts, const char *verb,
                                      int16_t *err)
{
    char what[64], *buf = arena_alloc(req->arena, API_ERRLEN);

    snprintf(what, sizeof(what), "%s %lld partitions", verb, (long long)nparts);
    *err = fdb_check(nparts, what, buf, API_ERRLEN) ? KERR_POLICY_VIOLATION : 0;
    return *err ? buf : NULL;
}

/* ---- CreateTopics ---- */

typedef proto_create_topics_req_creatable_topic_t api_ct_req_t;
typedef proto_create_topics_resp_creatable_topic_result_t api_ct_res_t;

/* The resulting configs (v5+), as DescribeConfigs would show them. */
static void api_ct_configs(api_req_t *req, api_ct_res_t *res, const mi_config_t *dyn)
{
    int n;
    const cfg_topic_key_t *keys = cfg_topic_keys(&n);
    cfg_bview_t bv;

    cfg_bview_init(&bv, ctl_image(req->b->ctl), api_admin_node_name(req), &req->b->cfg.props);
    res->configs.n = n;
    res->configs.v = arena_calloc(req->arena, (size_t)n, sizeof(*res->configs.v));
    for (int i = 0; i < n; i++) {
        proto_create_topics_resp_creatable_topic_configs_t *c = &res->configs.v[i];
        cfg_resolved_t r;
        cfg_topic_resolve(&keys[i], dyn, &bv, &r);
        proto_create_topics_resp_creatable_topic_configs_init(c);
        c->name = api_admin_msg(req, r.name);
        c->value = api_admin_msg(req, r.value);
        c->read_only = false;
        c->config_source = r.source;
        c->is_sensitive = false;
    }
}

/* Checks an explicit assignment's shape (the controller checks its
 * brokers); returns the partition count (and the replication factor in
 * *rf) or -1 with the error in *res. */
static int32_t api_ct_assignment(api_req_t *req, const api_ct_req_t *t, int16_t *rf,
                                 api_ct_res_t *res)
{
    int32_t n = t->assignments.n;
    char msg[API_ERRLEN] = "";

    for (int32_t i = 0; i < n && !*msg; i++) {
        const proto_create_topics_req_creatable_replica_assignment_t *a = &t->assignments.v[i];
        int found = 0;
        for (int32_t j = 0; j < n; j++)
            found |= t->assignments.v[j].partition_index == i;
        if (!found)
            snprintf(msg, sizeof(msg), "Partitions should be a consecutive 0-based integer "
                                       "sequence");
        else if (a->broker_ids.n <= 0)
            snprintf(msg, sizeof(msg), "The manual partition assignment includes an empty "
                                       "replica list.");
        else if (i > 0 && a->broker_ids.n != t->assignments.v[0].broker_ids.n)
            snprintf(msg, sizeof(msg),
                     "The manual partition assignment includes a partition with %d replica(s), "
                     "but this is not consistent with previous partitions, which have %d "
                     "replica(s).", a->broker_ids.n, t->assignments.v[0].broker_ids.n);
    }
    if (*msg) {
        res->error_code = KERR_INVALID_REPLICA_ASSIGNMENT;
        res->error_message = api_admin_msg(req, msg);
        return -1;
    }
    *rf = (int16_t)t->assignments.v[0].broker_ids.n;
    return n;
}

static void api_ct_fail(api_req_t *req, api_ct_res_t *res, int16_t err, const char *msg)
{
    res->error_code = err;
    res->error_message = api_admin_msg(req, msg);
}

/* Partition count and replication factor, defaults applied; 0 = error. */
static int api_ct_sizes(api_req_t *req, const api_ct_req_t *t, int32_t *nparts, int16_t *rf,
                        api_ct_res_t *res)
{
    *nparts = t->num_partitions;
    *rf = t->replication_factor;
    if (t->assignments.n > 0) {
        if (*nparts != -1 || *rf != -1) {
            api_ct_fail(req, res, KERR_INVALID_REQUEST,
                        "Both numPartitions or replicationFactor and replicasAssignments were "
                        "set. Both cannot be used at the same time.");
            return 0;
        }
        return (*nparts = api_ct_assignment(req, t, rf, res)) >= 0;
    }
    if (*nparts == -1)
        *nparts = req->b->cfg.num_partitions;
    if (*rf == -1)
        *rf = (int16_t)req->b->cfg.default_replication_factor;
    return 1;
}

/* The request's configs as key/values, and as the dynamic set they make
 * (for the answer of a validate-only request). */
static ctl_kv_t *api_ct_kv(api_req_t *req, const api_ct_req_t *t, mi_config_t *dyn)
{
    int32_t n = t->configs.n > 0 ? t->configs.n : 0;
    ctl_kv_t *kv = arena_calloc(req->arena, (size_t)n + 1, sizeof(*kv));
    memset(dyn, 0, sizeof(*dyn));
    dyn->v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*dyn->v));
    for (int32_t i = 0; i < n; i++) {
        kv[i].key = api_cstr(req, t->configs.v[i].name);
        kv[i].value = api_cstr(req, t->configs.v[i].value);
        if (!kv[i].key)
            kv[i].key = "";
        if (kv[i].value) {
            dyn->v[dyn->n].key = (char *)kv[i].key;
            dyn->v[dyn->n++].value = (char *)kv[i].value;
        }
    }
    return kv;
}

typedef struct api_ct_s {
    api_admin_wait_t w; /* first */
    proto_create_topics_resp_t resp;
} api_ct_t;

/* One topic's creation, handed to the controller. */
typedef struct api_ct_ent_s {
    ctl_op_t op; /* first */
    api_ct_t *ct;
    api_ct_res_t *res;
    mi_config_t dyn;
} api_ct_ent_t;

static void api_ct_done(ctl_op_t *op)
{
    api_ct_ent_t *e = (api_ct_ent_t *)op;
    api_req_t *req = e->ct->w.req;

    if (op->err) {
        api_ct_fail(req, e->res, op->err, api_admin_op_text(op));
    } else {
        memcpy(e->res->topic_id.b, op->created_id, 16);
        e->res->num_partitions = op->nparts;
        e->res->replication_factor = op->rf;
        if (req->hdr.api_version >= 5)
            api_ct_configs(req, e->res, &e->dyn);
    }
    api_admin_wait_done(&e->ct->w);
}

/* The explicit assignment in partition order, as the controller takes
 * it (its shape checked by api_ct_assignment); nassign -1 without one. */
static void api_ct_assign(api_req_t *req, const api_ct_req_t *t, ctl_op_t *op)
{
    int32_t n = t->assignments.n > 0 ? t->assignments.n : 0;
    const int32_t **v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*v));
    int32_t *nv = arena_calloc(req->arena, (size_t)n + 1, sizeof(*nv));
    op->nassign = n > 0 ? n : -1;
    for (int32_t i = 0; i < n; i++) {
        int32_t p = t->assignments.v[i].partition_index;
        v[p] = t->assignments.v[i].broker_ids.v;
        nv[p] = t->assignments.v[i].broker_ids.n;
    }
    op->assign = (const int32_t *const *)v;
    op->assign_n = nv;
}

static void api_ct_one(api_ct_t *ct, const api_ct_req_t *t, bool validate_only, api_ct_res_t *res)
{
    api_req_t *req = ct->w.req;
    api_ct_ent_t *e = arena_calloc(req->arena, 1, sizeof(*e));
    int16_t rf;
    int32_t nparts;

    if (!api_ct_sizes(req, t, &nparts, &rf, res))
        return;
    e->ct = ct;
    e->res = res;
    e->op.kind = CTL_CREATE_TOPIC;
    e->op.name = t->name.p;
    e->op.name_len = t->name.len > 0 ? (size_t)t->name.len : 0;
    e->op.nparts = nparts;
    e->op.rf = rf;
    api_ct_assign(req, t, &e->op);
    e->op.kv = api_ct_kv(req, t, &e->dyn);
    e->op.nkv = t->configs.n > 0 ? t->configs.n : 0;
    e->op.validate_only = validate_only;
    e->op.done = api_ct_done;
    api_admin_submit(&ct->w, &e->op);
}

static void api_ct_answer(api_admin_wait_t *w)
{
    API_REPLY(w->req, create_topics, &((api_ct_t *)w)->resp);
}

/* The whole request against the controller's cap on one operation and
 * the descriptors its partitions would hold; NULL, or the message every
 * topic is answered with (*err its code). */
static const char *api_ct_limits(api_req_t *req, const proto_create_topics_req_t *r, int16_t *err)
{
    int64_t parts = 0, records = 0;
    const char *msg = NULL;

    for (int32_t i = 0; i < r->topics.n; i++) {
        const api_ct_req_t *t = &r->topics.v[i];
        int64_t n = t->num_partitions > 0 ? t->num_partitions
                    : t->assignments.n > 0 ? t->assignments.n
                                           : req->b->cfg.num_partitions;
        parts += n;
        records += 1 + n + (t->configs.n > 0 ? t->configs.n : 0);
    }
    *err = ctl_check_create_topics(parts, records, &msg);
    return *err ? msg : api_admin_fd_limit(req, parts, "creating", err);
}

static api_ct_res_t *api_ct_entry(api_req_t *req, proto_create_topics_resp_t *resp,
                                  proto_str_t name)
{
    api_ct_res_t *res = &resp->topics.v[resp->topics.n++];
    proto_create_topics_resp_creatable_topic_result_init(res);
    res->name = name;
    res->error_message = PROTO_STR_NULL;
    return res;
}

/* As Kafka's controller: a name given twice gets one entry, after the
 * others, INVALID_REQUEST, and is not created. */
void api_create_topics(api_req_t *req)
{
    proto_create_topics_req_t r;
    api_ct_t *ct = arena_calloc(req->arena, 1, sizeof(*ct));

    proto_create_topics_req_init(&r);
    if (proto_create_topics_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                       req->arena) < 0) {
        api_close(req, "malformed CreateTopics request");
        return;
    }
    api_admin_wait_init(&ct->w, req, api_ct_answer);
    int32_t n = r.topics.n > 0 ? r.topics.n : 0;
    proto_str_t *names = arena_calloc(req->arena, (size_t)n + 1, sizeof(*names));
    proto_create_topics_resp_init(&ct->resp);
    ct->resp.topics.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*ct->resp.topics.v));
    int16_t lim_err;
    const char *lim = api_ct_limits(req, &r, &lim_err);
    for (int32_t i = 0; i < n; i++)
        names[i] = r.topics.v[i].name;
    uint8_t *fl = api_admin_name_flags(req, names, n);
    for (int32_t i = 0; i < n; i++) {
        if (fl[i] & API_NAME_REPEATED)
            continue;
        api_ct_res_t *res = api_ct_entry(req, &ct->resp, names[i]);
        if (api_admin_timed_out(r.timeout_ms))
            res->error_code = KERR_REQUEST_TIMED_OUT;
        else if (lim)
            api_ct_fail(req, res, lim_err, lim);
        else
            api_ct_one(ct, &r.topics.v[i], r.validate_only, res);
    }
    for (int32_t i = 0; i < n; i++)
        if (fl[i] == API_NAME_REPEATED)
            api_ct_fail(req, api_ct_entry(req, &ct->resp, names[i]), KERR_INVALID_REQUEST,
                        "Duplicate topic name.");
    api_admin_wait_end(&ct->w);
}

/* ---- DeleteTopics ---- */

typedef proto_delete_topics_resp_deletable_topic_result_t api_dt_res_t;

static void api_dt_fail(api_req_t *req, api_dt_res_t *res, int16_t err, const char *msg)
{
    res->error_code = err;
    if (req->hdr.api_version >= 5)
        res->error_message = api_admin_msg(req, msg);
}

typedef struct api_dt_s {
    api_admin_wait_t w; /* first */
    proto_delete_topics_resp_t resp;
} api_dt_t;

typedef struct api_dt_ent_s {
    ctl_op_t op; /* first */
    api_dt_t *dt;
    api_dt_res_t *res;
} api_dt_ent_t;

static void api_dt_done(ctl_op_t *op)
{
    api_dt_ent_t *e = (api_dt_ent_t *)op;
    api_req_t *req = e->dt->w.req;
    if (op->err)
        api_dt_fail(req, e->res, op->err, api_admin_op_text(op));
    else /* Kafka drops a deleted topic's committed offsets (res->name is a copy). */
        api_group_topic_deleted(req->b, e->res->name.p, (size_t)e->res->name.len);
    api_admin_wait_done(&e->dt->w);
}

static void api_dt_one(api_dt_t *dt, proto_str_t name, const uint8_t id[16], api_dt_res_t *res)
{
    api_req_t *req = dt->w.req;
    part_reg_t *reg = req->b->reg;
    topic_t *topic;

    if (name.len >= 0) {
        topic = part_topic_get(reg, name.p, (size_t)name.len);
        if (!topic) {
            api_dt_fail(req, res, KERR_UNKNOWN_TOPIC_OR_PARTITION,
                        "This server does not host this topic-partition.");
            return;
        }
    } else {
        topic = uuid_is_zero(id) ? NULL : part_topic_by_id(reg, id);
        if (!topic) {
            api_dt_fail(req, res, KERR_UNKNOWN_TOPIC_ID,
                        "This server does not host this topic ID.");
            return;
        }
    }
    if (!req->b->cfg.delete_topic_enable) {
        api_dt_fail(req, res, KERR_TOPIC_DELETION_DISABLED, "Topic deletion is disabled.");
        return;
    }
    res->name = api_admin_msg(req, topic->name);
    memcpy(res->topic_id.b, topic->id, 16);
    api_dt_ent_t *e = arena_calloc(req->arena, 1, sizeof(*e));
    e->dt = dt;
    e->res = res;
    e->op.kind = CTL_DELETE_TOPIC;
    memcpy(e->op.topic_id, topic->id, 16);
    e->op.nassign = -1;
    e->op.done = api_dt_done;
    api_admin_submit(&dt->w, &e->op);
}

static void api_dt_answer(api_admin_wait_t *w)
{
    API_REPLY(w->req, delete_topics, &((api_dt_t *)w)->resp);
}

static api_dt_res_t *api_dt_entry(proto_delete_topics_resp_t *resp, proto_str_t name,
                                  const uint8_t id[16])
{
    api_dt_res_t *res = &resp->responses.v[resp->responses.n++];
    proto_delete_topics_resp_deletable_topic_result_init(res);
    res->name = name;
    res->error_message = PROTO_STR_NULL;
    memcpy(res->topic_id.b, id, 16);
    return res;
}

/* A topic is named by its name or (v6+) by its id: the key duplicates
 * are found by (the id's bytes stand in for a null name). */
static proto_str_t api_dt_key(const proto_delete_topics_req_t *r, int16_t ver, int32_t i)
{
    if (ver < 6)
        return r->topic_names.v[i];
    const proto_delete_topics_req_delete_topic_state_t *t = &r->topics.v[i];
    return t->name.len >= 0 ? t->name : (proto_str_t){(const char *)t->topic_id.b, 16};
}

/* Kafka's order: entries that name a topic wrongly (neither or both of
 * name and id), then one entry per name or id given twice (neither is
 * deleted), then the topics themselves. */
static void api_dt_invalid(api_req_t *req, api_dt_t *dt, const proto_delete_topics_req_t *r,
                           const proto_str_t *keys, const uint8_t *fl, int32_t n)
{
    static const uint8_t zero[16];
    for (int32_t i = 0; req->hdr.api_version >= 6 && i < n; i++) {
        const proto_delete_topics_req_delete_topic_state_t *t = &r->topics.v[i];
        int zid = uuid_is_zero(t->topic_id.b);
        if (t->name.len < 0 && zid)
            api_dt_fail(req, api_dt_entry(&dt->resp, t->name, zero), KERR_INVALID_REQUEST,
                        "Neither topic name nor id were specified.");
        else if (t->name.len >= 0 && !zid)
            api_dt_fail(req, api_dt_entry(&dt->resp, t->name, t->topic_id.b), KERR_INVALID_REQUEST,
                        "You may not specify both topic name and topic id.");
    }
    for (int32_t i = 0; i < n; i++) {
        if (fl[i] != API_NAME_REPEATED)
            continue;
        int by_name = req->hdr.api_version < 6 || r->topics.v[i].name.len >= 0;
        proto_str_t name = by_name ? keys[i] : PROTO_STR_NULL;
        api_dt_fail(req, api_dt_entry(&dt->resp, name, by_name ? zero : r->topics.v[i].topic_id.b),
                    KERR_INVALID_REQUEST, by_name ? "Duplicate topic name." : "Duplicate topic id.");
    }
}

void api_delete_topics(api_req_t *req)
{
    proto_delete_topics_req_t r;
    api_dt_t *dt = arena_calloc(req->arena, 1, sizeof(*dt));
    int16_t ver = req->hdr.api_version;
    static const uint8_t zero[16];

    proto_delete_topics_req_init(&r);
    if (proto_delete_topics_req_decode(&r, ver, req->body, req->body_len, req->arena) < 0) {
        api_close(req, "malformed DeleteTopics request");
        return;
    }
    api_admin_wait_init(&dt->w, req, api_dt_answer);
    int32_t n = ver >= 6 ? r.topics.n : r.topic_names.n;
    n = n > 0 ? n : 0;
    proto_str_t *keys = arena_calloc(req->arena, (size_t)n + 1, sizeof(*keys));
    for (int32_t i = 0; i < n; i++)
        keys[i] = api_dt_key(&r, ver, i);
    proto_delete_topics_resp_init(&dt->resp);
    dt->resp.responses.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*dt->resp.responses.v));
    uint8_t *fl = api_admin_name_flags(req, keys, n);
    api_dt_invalid(req, dt, &r, keys, fl, n);
    for (int32_t i = 0; i < n; i++) {
        proto_str_t name = ver >= 6 ? r.topics.v[i].name : r.topic_names.v[i];
        const uint8_t *id = ver >= 6 ? r.topics.v[i].topic_id.b : zero;
        if (ver >= 6 && (name.len < 0) == uuid_is_zero(id))
            continue; /* answered by api_dt_invalid */
        if (fl[i] & API_NAME_REPEATED)
            continue;
        api_dt_res_t *res = api_dt_entry(&dt->resp, name, id);
        if (api_admin_timed_out(r.timeout_ms))
            api_dt_fail(req, res, KERR_REQUEST_TIMED_OUT, NULL);
        else
            api_dt_one(dt, name, id, res);
    }
    api_admin_wait_end(&dt->w);
}

/* ---- CreatePartitions ---- */

typedef proto_create_partitions_req_create_partitions_topic_t api_cp_req_t;

typedef struct api_cp_s {
    api_admin_wait_t w; /* first */
    proto_create_partitions_resp_t resp;
} api_cp_t;

typedef struct api_cp_ent_s {
    ctl_op_t op; /* first */
    api_cp_t *cp;
    proto_create_partitions_resp_create_partitions_topic_result_t *res;
} api_cp_ent_t;

static void api_cp_done(ctl_op_t *op)
{
    api_cp_ent_t *e = (api_cp_ent_t *)op;
    if (op->err) {
        e->res->error_code = op->err;
        e->res->error_message = api_admin_msg(e->cp->w.req, api_admin_op_text(op));
    }
    api_admin_wait_done(&e->cp->w);
}

/* The assignment's replica lists as the controller takes them. */
static void api_cp_assign(api_req_t *req, const api_cp_req_t *t, ctl_op_t *op)
{
    int32_t n = t->assignments.n;
    op->nassign = n < 0 ? -1 : n;
    if (n <= 0)
        return;
    const int32_t **v = arena_calloc(req->arena, (size_t)n, sizeof(*v));
    int32_t *nv = arena_calloc(req->arena, (size_t)n, sizeof(*nv));
    for (int32_t i = 0; i < n; i++) {
        v[i] = t->assignments.v[i].broker_ids.v;
        nv[i] = t->assignments.v[i].broker_ids.n;
    }
    op->assign = v;
    op->assign_n = nv;
}

static void api_cp_one(api_cp_t *cp, const api_cp_req_t *t, bool validate_only,
                       proto_create_partitions_resp_create_partitions_topic_result_t *res)
{
    api_req_t *req = cp->w.req;
    topic_t *topic = t->name.len >= 0
                         ? part_topic_get(req->b->reg, t->name.p, (size_t)t->name.len)
                         : NULL;
    if (!topic) {
        res->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION; /* no message, as Kafka */
        return;
    }
    api_cp_ent_t *e = arena_calloc(req->arena, 1, sizeof(*e));
    e->cp = cp;
    e->res = res;
    e->op.kind = CTL_CREATE_PARTITIONS;
    memcpy(e->op.topic_id, topic->id, 16);
    e->op.nparts = t->count;
    e->op.validate_only = validate_only;
    e->op.done = api_cp_done;
    api_cp_assign(req, t, &e->op);
    api_admin_submit(&cp->w, &e->op);
}

static void api_cp_answer(api_admin_wait_t *w)
{
    API_REPLY(w->req, create_partitions, &((api_cp_t *)w)->resp);
}

/* As api_ct_limits, for the partitions the request adds. */
static const char *api_cp_limits(api_req_t *req, const proto_create_partitions_req_t *r,
                                 int16_t *err)
{
    int64_t added = 0;
    const char *msg = NULL;

    for (int32_t i = 0; i < r->topics.n; i++) {
        const api_cp_req_t *t = &r->topics.v[i];
        topic_t *topic = t->name.len >= 0
                             ? part_topic_get(req->b->reg, t->name.p, (size_t)t->name.len)
                             : NULL;
        if (topic && t->count > topic->nparts)
            added += t->count - topic->nparts;
    }
    *err = ctl_check_add_partitions(added, &msg);
    return *err ? msg : api_admin_fd_limit(req, added, "adding", err);
}

static proto_create_partitions_resp_create_partitions_topic_result_t *
api_cp_entry(proto_create_partitions_resp_t *resp, proto_str_t name)
{
    proto_create_partitions_resp_create_partitions_topic_result_t *res =
        &resp->results.v[resp->results.n++];
    proto_create_partitions_resp_create_partitions_topic_result_init(res);
    res->name = name;
    res->error_message = PROTO_STR_NULL;
    return res;
}

/* As Kafka's controller: one entry per name given twice, first, and
 * INVALID_REQUEST; then the others. */
void api_create_partitions(api_req_t *req)
{
    proto_create_partitions_req_t r;
    api_cp_t *cp = arena_calloc(req->arena, 1, sizeof(*cp));

    proto_create_partitions_req_init(&r);
    if (proto_create_partitions_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                           req->arena) < 0) {
        api_close(req, "malformed CreatePartitions request");
        return;
    }
    api_admin_wait_init(&cp->w, req, api_cp_answer);
    int32_t n = r.topics.n > 0 ? r.topics.n : 0;
    proto_str_t *names = arena_calloc(req->arena, (size_t)n + 1, sizeof(*names));
    proto_create_partitions_resp_init(&cp->resp);
    cp->resp.results.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*cp->resp.results.v));
    int16_t lim_err;
    const char *lim = api_cp_limits(req, &r, &lim_err);
    for (int32_t i = 0; i < n; i++)
        names[i] = r.topics.v[i].name;
    uint8_t *fl = api_admin_name_flags(req, names, n);
    for (int32_t i = 0; i < n; i++)
        if (fl[i] == API_NAME_REPEATED) {
            proto_create_partitions_resp_create_partitions_topic_result_t *res =
                api_cp_entry(&cp->resp, names[i]);
            res->error_code = KERR_INVALID_REQUEST;
            res->error_message = PROTO_STR("Duplicate topic name.");
        }
    for (int32_t i = 0; i < n; i++) {
        if (fl[i] & API_NAME_REPEATED)
            continue;
        proto_create_partitions_resp_create_partitions_topic_result_t *res =
            api_cp_entry(&cp->resp, names[i]);
        if (api_admin_timed_out(r.timeout_ms)) {
            res->error_code = KERR_REQUEST_TIMED_OUT;
        } else if (lim) {
            res->error_code = lim_err;
            res->error_message = api_admin_msg(req, lim);
        } else {
            api_cp_one(cp, &r.topics.v[i], r.validate_only, res);
        }
    }
    api_admin_wait_end(&cp->w);
}
