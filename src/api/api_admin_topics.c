/* CreateTopics (19), DeleteTopics (20), CreatePartitions (37). One node is
 * the whole cluster, so every partition has this node as its only replica:
 * a replication factor above 1, or an assignment naming another broker,
 * is refused as Kafka refuses one that exceeds its registered brokers. */
#include <stdio.h>
#include <string.h>

#include "api/api_admin.h"
#include "api/api_group.h"
#include "util/kerr.h"
#include "cluster/cfg_topic.h"
#include "cluster/ctl_limits.h"
#include "util/fdb.h"
#include "util/uuid.h"

#define API_ERRLEN 512

/* 1 if name occurs in names[0..i) (duplicates in one request). */
static int api_admin_dup(const proto_str_t *names, int32_t i)
{
    for (int32_t j = 0; j < i; j++)
        if (names[j].len == names[i].len && names[j].len >= 0 &&
            !memcmp(names[j].p, names[i].p, (size_t)names[i].len))
            return 1;
    return 0;
}

/* ---- CreateTopics ---- */

typedef proto_create_topics_req_creatable_topic_t api_ct_req_t;
typedef proto_create_topics_resp_creatable_topic_result_t api_ct_res_t;

/* The resulting configs (v5+), as DescribeConfigs would show them. */
static void api_ct_configs(api_req_t *req, api_ct_res_t *res, const mi_config_t *dyn)
{
    int n;
    const cfg_topic_key_t *keys = cfg_topic_keys(&n);

    res->configs.n = n;
    res->configs.v = arena_calloc(req->arena, (size_t)n, sizeof(*res->configs.v));
    for (int i = 0; i < n; i++) {
        proto_create_topics_resp_creatable_topic_configs_t *c = &res->configs.v[i];
        cfg_resolved_t r;
        cfg_topic_resolve(&keys[i], dyn, &req->b->cfg.props, &r);
        proto_create_topics_resp_creatable_topic_configs_init(c);
        c->name = api_admin_msg(req, r.name);
        c->value = api_admin_msg(req, r.value);
        c->read_only = false;
        c->config_source = r.source;
        c->is_sensitive = false;
    }
}

/* Checks an explicit assignment; returns the partition count (and the
 * replication factor in *rf) or -1 with the error in *res. */
static int32_t api_ct_assignment(api_req_t *req, const api_ct_req_t *t, int16_t *rf,
                                 api_ct_res_t *res)
{
    int32_t n = t->assignments.n, node = req->b->cfg.node_id;
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
        for (int32_t j = 0; j < a->broker_ids.n && !*msg; j++)
            if (a->broker_ids.v[j] != node)
                snprintf(msg, sizeof(msg),
                         "The manual partition assignment includes broker %d, but no such "
                         "broker is registered.", a->broker_ids.v[j]);
            else if (j > 0)
                snprintf(msg, sizeof(msg),
                         "The manual partition assignment includes the broker %d more than "
                         "once.", node);
    }
    if (*msg) {
        res->error_code = API_ADMIN_ERR_INVALID_REPLICA_ASSIGNMENT;
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

/* Kafka's checks after the name and config ones: replication factor,
 * then partition count. */
static int api_ct_counts(api_req_t *req, int32_t nparts, int16_t rf, api_ct_res_t *res)
{
    char msg[API_ERRLEN];
    if (rf == 0 || rf < -1) {
        api_ct_fail(req, res, KERR_INVALID_REPLICATION_FACTOR,
                    "Replication factor must be larger than 0, or -1 to use the default value.");
        return 0;
    }
    if (rf > 1) {
        snprintf(msg, sizeof(msg),
                 "Unable to replicate the partition %d time(s): The target replication factor "
                 "of %d cannot be reached because only 1 broker(s) are registered or some "
                 "brokers have all their log directories cordoned.", rf, rf);
        api_ct_fail(req, res, KERR_INVALID_REPLICATION_FACTOR, msg);
        return 0;
    }
    if (nparts < 1) {
        api_ct_fail(req, res, KERR_INVALID_PARTITIONS,
                    "Number of partitions was set to an invalid non-positive value.");
        return 0;
    }
    return 1;
}

/* The request's configs as key/values, and as the dynamic set they make
 * (for the answer of a validate-only request). */
static part_kv_t *api_ct_kv(api_req_t *req, const api_ct_req_t *t, mi_config_t *dyn)
{
    int32_t n = t->configs.n > 0 ? t->configs.n : 0;
    part_kv_t *kv = arena_calloc(req->arena, (size_t)n + 1, sizeof(*kv));
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

static void api_ct_one(api_req_t *req, const api_ct_req_t *t, bool validate_only, api_ct_res_t *res)
{
    part_reg_t *reg = req->b->reg;
    int16_t ver = req->hdr.api_version, rf, e;
    int32_t nparts;
    char err[API_ERRLEN];
    mi_config_t dyn;
    part_kv_t *kv = api_ct_kv(req, t, &dyn);
    int nkv = t->configs.n > 0 ? t->configs.n : 0;
    size_t len = t->name.len > 0 ? (size_t)t->name.len : 0;
    topic_t *topic;

    if (!api_ct_sizes(req, t, &nparts, &rf, res))
        return;
    e = part_topic_check_new(reg, t->name.p, len, nparts < 1 ? 1 : nparts, kv, nkv, err,
                             sizeof(err));
    if (e) {
        api_ct_fail(req, res, e, err);
        return;
    }
    if (!api_ct_counts(req, nparts, rf, res))
        return;
    if (validate_only) {
        uuid_generate(res->topic_id.b);
    } else {
        e = part_topic_create_kv(reg, t->name.p, len, nparts, kv, nkv, req->now_ms, &topic, err,
                                 sizeof(err));
        if (e) {
            api_ct_fail(req, res, e, err);
            return;
        }
        memcpy(res->topic_id.b, topic->id, 16);
    }
    res->num_partitions = nparts;
    res->replication_factor = rf;
    if (ver >= 5)
        api_ct_configs(req, res, &dyn);
}

/* The whole request against the controller's cap on one operation and
 * the descriptors its partitions would hold; NULL, or the message every
 * topic is answered with (*err its code). */
static const char *api_ct_limits(api_req_t *req, const proto_create_topics_req_t *r, int16_t *err)
{
    int64_t parts = 0, records = 0;
    const char *msg = NULL;
    char what[64], *buf;

    for (int32_t i = 0; i < r->topics.n; i++) {
        const api_ct_req_t *t = &r->topics.v[i];
        int64_t n = t->num_partitions > 0 ? t->num_partitions
                    : t->assignments.n > 0 ? t->assignments.n
                                           : req->b->cfg.num_partitions;
        parts += n;
        records += 1 + n + (t->configs.n > 0 ? t->configs.n : 0);
    }
    *err = ctl_check_create_topics(parts, records, &msg);
    if (*err)
        return msg;
    buf = arena_alloc(req->arena, API_ERRLEN);
    snprintf(what, sizeof(what), "creating %lld partitions", (long long)parts);
    *err = fdb_check(parts, what, buf, API_ERRLEN) ? KERR_POLICY_VIOLATION : 0;
    return *err ? buf : NULL;
}

void api_create_topics(api_req_t *req)
{
    proto_create_topics_req_t r;
    proto_create_topics_resp_t resp;

    proto_create_topics_req_init(&r);
    if (proto_create_topics_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                       req->arena) < 0) {
        api_close(req, "malformed CreateTopics request");
        return;
    }
    int32_t n = r.topics.n > 0 ? r.topics.n : 0;
    proto_str_t *names = arena_calloc(req->arena, (size_t)n + 1, sizeof(*names));
    proto_create_topics_resp_init(&resp);
    resp.topics.n = n;
    resp.topics.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp.topics.v));
    int16_t lim_err;
    const char *lim = api_ct_limits(req, &r, &lim_err);
    for (int32_t i = 0; i < n; i++) {
        api_ct_res_t *res = &resp.topics.v[i];
        names[i] = r.topics.v[i].name;
        proto_create_topics_resp_creatable_topic_result_init(res);
        res->name = r.topics.v[i].name;
        res->error_message = PROTO_STR_NULL;
        res->configs.n = -1;
        if (api_admin_dup(names, i)) /* Kafka answers every copy so */
            api_ct_fail(req, res, KERR_INVALID_REQUEST, "Duplicate topic name.");
        else if (lim)
            api_ct_fail(req, res, lim_err, lim);
        else
            api_ct_one(req, &r.topics.v[i], r.validate_only, res);
    }
    API_REPLY(req, create_topics, &resp);
}

/* ---- DeleteTopics ---- */

typedef proto_delete_topics_resp_deletable_topic_result_t api_dt_res_t;

static void api_dt_fail(api_req_t *req, api_dt_res_t *res, int16_t err, const char *msg)
{
    res->error_code = err;
    if (req->hdr.api_version >= 5)
        res->error_message = api_admin_msg(req, msg);
}

static void api_dt_one(api_req_t *req, proto_str_t name, const uint8_t id[16], api_dt_res_t *res)
{
    part_reg_t *reg = req->b->reg;
    topic_t *topic;
    int16_t e;

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
        api_dt_fail(req, res, API_ADMIN_ERR_TOPIC_DELETION_DISABLED,
                    "Topic deletion is disabled.");
        return;
    }
    res->name = api_admin_msg(req, topic->name);
    memcpy(res->topic_id.b, topic->id, 16);
    if ((e = part_topic_delete(reg, topic, req->now_ms)))
        api_dt_fail(req, res, e,
                    part_meta_offline(reg) ? PART_META_OFFLINE_MSG : "Cannot write the metadata log");
    else /* Kafka drops a deleted topic's committed offsets (res->name is a copy). */
        api_group_topic_deleted(req->b, res->name.p, (size_t)res->name.len);
}

void api_delete_topics(api_req_t *req)
{
    proto_delete_topics_req_t r;
    proto_delete_topics_resp_t resp;
    int16_t ver = req->hdr.api_version;

    proto_delete_topics_req_init(&r);
    if (proto_delete_topics_req_decode(&r, ver, req->body, req->body_len, req->arena) < 0) {
        api_close(req, "malformed DeleteTopics request");
        return;
    }
    int32_t n = ver >= 6 ? r.topics.n : r.topic_names.n;
    n = n > 0 ? n : 0;
    proto_str_t *keys = arena_calloc(req->arena, (size_t)n + 1, sizeof(*keys));
    proto_delete_topics_resp_init(&resp);
    resp.responses.n = n;
    resp.responses.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp.responses.v));
    for (int32_t i = 0; i < n; i++) {
        api_dt_res_t *res = &resp.responses.v[i];
        proto_str_t name = ver >= 6 ? r.topics.v[i].name : r.topic_names.v[i];
        static const uint8_t zero[16];
        const uint8_t *id = ver >= 6 ? r.topics.v[i].topic_id.b : zero;
        proto_delete_topics_resp_deletable_topic_result_init(res);
        res->name = name;
        res->error_message = PROTO_STR_NULL;
        memcpy(res->topic_id.b, id, 16);
        /* Duplicates are found by name, or by the id's bytes. */
        keys[i] = name.len >= 0 ? name : (proto_str_t){(const char *)id, 16};
        if (name.len >= 0 && ver >= 6 && !uuid_is_zero(id))
            api_dt_fail(req, res, KERR_INVALID_REQUEST,
                        "Topic name and topic id cannot both be given.");
        else if (api_admin_dup(keys, i))
            api_dt_fail(req, res, KERR_INVALID_REQUEST,
                        name.len >= 0 ? "Duplicate topic name." : "Duplicate topic id.");
        else
            api_dt_one(req, name, id, res);
    }
    API_REPLY(req, delete_topics, &resp);
}

/* ---- CreatePartitions ---- */

typedef proto_create_partitions_req_create_partitions_topic_t api_cp_req_t;

/* New partitions may only name this node, once each. */
static int api_cp_assignment_ok(api_req_t *req, const api_cp_req_t *t, int32_t adding, char *msg,
                                size_t cap)
{
    if (t->assignments.n < 0)
        return 1;
    if (t->assignments.n != adding) {
        snprintf(msg, cap,
                 "Attempted to add %d additional partition(s), but only %d assignment(s) were "
                 "specified.", adding, t->assignments.n);
        return 0;
    }
    for (int32_t i = 0; i < t->assignments.n; i++) {
        const proto_create_partitions_req_create_partitions_assignment_t *a = &t->assignments.v[i];
        if (a->broker_ids.n != 1 || a->broker_ids.v[0] != req->b->cfg.node_id) {
            snprintf(msg, cap, "The manual partition assignment includes a broker that is not "
                               "registered, or a replication factor other than 1.");
            return 0;
        }
    }
    return 1;
}

static void api_cp_one(api_req_t *req, const api_cp_req_t *t, bool validate_only,
                       proto_create_partitions_resp_create_partitions_topic_result_t *res)
{
    part_reg_t *reg = req->b->reg;
    char msg[API_ERRLEN];
    topic_t *topic = t->name.len >= 0 ? part_topic_get(reg, t->name.p, (size_t)t->name.len)
                                      : NULL;
    int16_t e;

    if (!topic) {
        res->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
        res->error_message = api_admin_msg(req, "This server does not host this topic-partition.");
        return;
    }
    /* Counts first (Kafka's order), so only check, then the assignment. */
    e = part_topic_add_partitions(reg, topic, t->count, 1, req->now_ms, msg, sizeof(msg));
    if (!e && !api_cp_assignment_ok(req, t, t->count - topic->nparts, msg, sizeof(msg)))
        e = API_ADMIN_ERR_INVALID_REPLICA_ASSIGNMENT;
    if (!e && !validate_only)
        e = part_topic_add_partitions(reg, topic, t->count, 0, req->now_ms, msg, sizeof(msg));
    if (e) {
        res->error_code = e;
        res->error_message = api_admin_msg(req, msg);
    }
}

/* As api_ct_limits, for the partitions the request adds. */
static const char *api_cp_limits(api_req_t *req, const proto_create_partitions_req_t *r,
                                 int16_t *err)
{
    int64_t added = 0;
    const char *msg = NULL;
    char what[64], *buf;

    for (int32_t i = 0; i < r->topics.n; i++) {
        const api_cp_req_t *t = &r->topics.v[i];
        topic_t *topic = t->name.len >= 0
                             ? part_topic_get(req->b->reg, t->name.p, (size_t)t->name.len)
                             : NULL;
        if (topic && t->count > topic->nparts)
            added += t->count - topic->nparts;
    }
    *err = ctl_check_add_partitions(added, &msg);
    if (*err)
        return msg;
    buf = arena_alloc(req->arena, API_ERRLEN);
    snprintf(what, sizeof(what), "adding %lld partitions", (long long)added);
    *err = fdb_check(added, what, buf, API_ERRLEN) ? KERR_POLICY_VIOLATION : 0;
    return *err ? buf : NULL;
}

void api_create_partitions(api_req_t *req)
{
    proto_create_partitions_req_t r;
    proto_create_partitions_resp_t resp;

    proto_create_partitions_req_init(&r);
    if (proto_create_partitions_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                           req->arena) < 0) {
        api_close(req, "malformed CreatePartitions request");
        return;
    }
    int32_t n = r.topics.n > 0 ? r.topics.n : 0;
    proto_str_t *names = arena_calloc(req->arena, (size_t)n + 1, sizeof(*names));
    proto_create_partitions_resp_init(&resp);
    resp.results.n = n;
    resp.results.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp.results.v));
    int16_t lim_err;
    const char *lim = api_cp_limits(req, &r, &lim_err);
    for (int32_t i = 0; i < n; i++) {
        proto_create_partitions_resp_create_partitions_topic_result_t *res = &resp.results.v[i];
        names[i] = r.topics.v[i].name;
        proto_create_partitions_resp_create_partitions_topic_result_init(res);
        res->name = r.topics.v[i].name;
        res->error_message = PROTO_STR_NULL;
        if (api_admin_dup(names, i)) {
            res->error_code = KERR_INVALID_REQUEST;
            res->error_message = PROTO_STR("Duplicate topic name.");
        } else if (lim) {
            res->error_code = lim_err;
            res->error_message = api_admin_msg(req, lim);
        } else {
            api_cp_one(req, &r.topics.v[i], r.validate_only, res);
        }
    }
    API_REPLY(req, create_partitions, &resp);
}
