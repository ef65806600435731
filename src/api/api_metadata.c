/* Metadata (key 3): brokers, cluster id, topics and partition leaders.
 * Unknown topics are created on request when auto.create.topics.enable
 * is set and the client allows it, as Kafka does. */
#include <stdlib.h>
#include <string.h>

#include "api/api_brokers.h"
#include "api/api_pview.h"
#include "api/api_util.h"
#include "cluster/ctl.h"
#include "util/logging.h"
#include "util/mem.h"

/* Metadata v0 names only replicas a client can reach, as Kafka's
 * (its errorUnavailableEndpoints): the others are left out. */
static int api_md_filter(api_req_t *req, proto_int32_array_t *a)
{
    int32_t *v = arena_alloc(req->arena, ((size_t)a->n + 1) * sizeof(*v));
    int32_t n = 0;
    for (int32_t i = 0; i < a->n; i++)
        if (api_pview_reachable(req, a->v[i], 1))
            v[n++] = a->v[i];
    int lost = n < a->n;
    a->n = n;
    a->v = v;
    return lost;
}

/* The version's view of a partition's errors: LISTENER_NOT_FOUND is
 * LEADER_NOT_AVAILABLE before v6; at v0 a led partition that lost
 * replicas to api_md_filter answers REPLICA_NOT_AVAILABLE. */
static void api_md_version_view(api_req_t *req, api_pview_t *v)
{
    int16_t ver = req->hdr.api_version;
    if (v->error_code == KERR_LISTENER_NOT_FOUND && ver < 6)
        v->error_code = KERR_LEADER_NOT_AVAILABLE;
    if (ver > 0)
        return;
    int lost = api_md_filter(req, &v->replica_nodes);
    lost |= api_md_filter(req, &v->isr_nodes);
    if (lost && v->leader_id >= 0 && !v->error_code)
        v->error_code = KERR_REPLICA_NOT_AVAILABLE;
}

static void api_md_fill_topic(api_req_t *req, proto_metadata_resp_metadata_response_topic_t *t,
                              topic_t *topic, int with_ops)
{
    api_pview_t v;
    const mi_topic_t *mt = req->b->raft ? meta_image_topic_by_id(ctl_image(req->b->ctl), topic->id)
                                        : NULL;
    if (with_ops)
        t->topic_authorized_operations = API_TOPIC_AUTHORIZED_OPS;
    t->name.p = topic->name;
    t->name.len = (int32_t)topic->name_len;
    memcpy(t->topic_id.b, topic->id, 16);
    t->is_internal = api_internal_topic(t->name);
    /* a quorum's broker hosts some partitions; the image has them all */
    int32_t nparts = mt ? mt->nparts : topic->nparts;
    t->partitions.n = nparts;
    t->partitions.v = arena_calloc(req->arena, (size_t)nparts + 1, sizeof(*t->partitions.v));
    for (int32_t i = 0; i < nparts; i++) {
        proto_metadata_resp_metadata_response_partition_init(&t->partitions.v[i]);
        t->partitions.v[i].partition_index = i;
        if (api_pview_get(req, topic, mt, i, &v)) {
            api_md_version_view(req, &v);
            API_PVIEW_SET(&t->partitions.v[i], &v);
            t->partitions.v[i].error_code = v.error_code;
        }
    }
}

/* Resolves one requested topic, creating it if allowed. */
/* ---- auto-creation ---- */

/* What a creation that ended within the call said; -1 while it is out. */
typedef struct api_md_create_s {
    int in_call;
    int16_t *result;
} api_md_create_t;

static void api_md_created(ctl_op_t *op)
{
    api_md_create_t *mc = op->udata;
    if (mc->in_call)
        *mc->result = op->err;
    else if (op->err && op->err != KERR_TOPIC_ALREADY_EXISTS)
        lg_info("auto-creating topic %.*s: %s: %s", (int)op->name_len, op->name,
                kerr_name(op->err), op->msg);
    free(mc);
    ctl_op_free(op);
}

/* Auto-creation, as Kafka's brokers ask their controller: the topic when
 * the creation is done already (no worker threads, or it existed), else
 * NULL with *err: UNKNOWN_TOPIC_OR_PARTITION while it is being created
 * (what Kafka 4.4 answers the request that asks for the creation; clients
 * retry it), or why it was refused. */
static topic_t *api_md_auto_create(api_req_t *req, proto_str_t name, int16_t *err)
{
    api_node_t *b = req->b;
    if (b->forward) {
        /* a quorum's broker: the active controller creates it */
        api_forward_create(req, name);
        *err = KERR_UNKNOWN_TOPIC_OR_PARTITION;
        return NULL;
    }
    int16_t result = -1;
    api_md_create_t *mc = xcalloc(1, sizeof(*mc));
    ctl_op_t *op = ctl_op_new_topic(b->ctl, name.p, (size_t)name.len, b->cfg.num_partitions,
                                    NULL, req->now_ms);

    mc->in_call = 1;
    mc->result = &result;
    op->done = api_md_created;
    op->udata = mc;
    ctl_submit(b->ctl, op);
    if (result == -1) {
        mc->in_call = 0;
        *err = KERR_UNKNOWN_TOPIC_OR_PARTITION;
        return NULL;
    }
    topic_t *topic = part_topic_get(b->reg, name.p, (size_t)name.len);
    /* The name was valid, so 17 here is a '.'/'_' collision, which
     * Kafka's auto-creation reports as unknown. */
    *err = result == KERR_INVALID_TOPIC_EXCEPTION ? KERR_UNKNOWN_TOPIC_OR_PARTITION
           : topic                                  ? KERR_NONE
                                                    : result;
    return topic;
}

static void api_md_one(api_req_t *req, proto_metadata_req_metadata_request_topic_t *rt,
                       proto_metadata_resp_metadata_response_topic_t *t, int auto_create,
                       int with_ops)
{
    api_node_t *b = req->b;
    topic_t *topic = NULL;

    proto_metadata_resp_metadata_response_topic_init(t);
    /* Kafka reports the operations for unknown and invalid topics too. */
    if (with_ops)
        t->topic_authorized_operations = API_TOPIC_AUTHORIZED_OPS;
    if (rt->name.len < 0) {
        /* v10+: by topic id; the answer carries no name if unknown. */
        topic = part_topic_by_id(b->reg, rt->topic_id.b);
        t->topic_id = rt->topic_id;
        if (!topic) {
            t->error_code = KERR_UNKNOWN_TOPIC_ID;
            return;
        }
    } else {
        t->name = rt->name;
        t->is_internal = api_internal_topic(rt->name);
        topic = part_topic_get(b->reg, rt->name.p, (size_t)rt->name.len);
        if (!topic) {
            int16_t err = ctl_topic_name_check(rt->name.p, (size_t)rt->name.len, NULL, 0);
            if (err) {
                t->error_code = err;
                return;
            }
            if (!auto_create || !b->cfg.auto_create_topics_enable) {
                t->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
                return;
            }
            if (!(topic = api_md_auto_create(req, rt->name, &err))) {
                t->error_code = err;
                return;
            }
        }
    }
    api_md_fill_topic(req, t, topic, with_ops);
}

static void api_md_all(api_req_t *req, proto_metadata_resp_t *resp, int with_ops)
{
    size_t pos = 0;
    int n = 0;
    topic_t *topic;

    resp->topics.v = arena_calloc(req->arena, req->b->reg->by_name.count + 1,
                                  sizeof(*resp->topics.v));
    while ((topic = part_topic_next(req->b->reg, &pos))) {
        proto_metadata_resp_metadata_response_topic_init(&resp->topics.v[n]);
        api_md_fill_topic(req, &resp->topics.v[n], topic, with_ops);
        n++;
    }
    resp->topics.n = n;
}

/* The registered brokers (api_brokers.h), with their racks (v1+). */
static void api_md_brokers(api_req_t *req, proto_metadata_resp_t *resp)
{
    api_broker_t *v;
    int n = api_brokers(req, false, &v);
    resp->brokers.n = n;
    resp->brokers.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp->brokers.v));
    for (int i = 0; i < n; i++) {
        proto_metadata_resp_metadata_response_broker_t *mb = &resp->brokers.v[i];
        proto_metadata_resp_metadata_response_broker_init(mb);
        mb->node_id = v[i].id;
        mb->host.p = v[i].host;
        mb->host.len = (int32_t)strlen(v[i].host);
        mb->port = v[i].port;
        if (v[i].rack) {
            mb->rack.p = v[i].rack;
            mb->rack.len = (int32_t)strlen(v[i].rack);
        }
    }
}

void api_metadata(api_req_t *req)
{
    proto_metadata_req_t r;
    proto_metadata_resp_t resp;
    int16_t ver = req->hdr.api_version;

    proto_metadata_req_init(&r);
    if (proto_metadata_req_decode(&r, ver, req->body, req->body_len, req->arena) < 0) {
        api_close(req, "malformed Metadata request");
        return;
    }
    proto_metadata_resp_init(&resp);
    api_md_brokers(req, &resp);
    resp.cluster_id.p = req->b->cluster_id;
    resp.cluster_id.len = (int32_t)strlen(req->b->cluster_id);
    resp.controller_id = req->b->cfg.node_id;

    /* v0: an empty list means all topics; v1+: null means all. */
    int with_ops = ver >= 8 && r.include_topic_authorized_operations;
    if (ver >= 8 && ver <= 10 && r.include_cluster_authorized_operations)
        resp.cluster_authorized_operations = API_CLUSTER_AUTHORIZED_OPS;
    if (r.topics.n < 0 || (ver == 0 && r.topics.n == 0)) {
        api_md_all(req, &resp, with_ops);
    } else {
        int auto_create = ver < 4 ? 1 : r.allow_auto_topic_creation;
        resp.topics.n = r.topics.n;
        resp.topics.v = arena_calloc(req->arena, (size_t)r.topics.n + 1, sizeof(*resp.topics.v));
        for (int32_t i = 0; i < r.topics.n; i++)
            api_md_one(req, &r.topics.v[i], &resp.topics.v[i], auto_create, with_ops);
    }
    API_REPLY(req, metadata, &resp);
}
