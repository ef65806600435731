/* FindCoordinator (10), every version, both key forms.
 *
 * A single node is the coordinator of every group. A broker of a quorum
 * answers as Kafka's broker does from its metadata cache: the group's
 * partition of __consumer_offsets (Kafka's partitioning of group ids),
 * its leader as the image has it, at that broker's endpoint; no topic
 * yet (its creation is asked for), no leader, or a leader that is not
 * an alive (registered, unfenced) broker: COORDINATOR_NOT_AVAILABLE. */
#include "api/api_group.h"
#include "api/api_brokers.h"
#include "api/api_txn.h"
#include "api/api_util.h"

#include <string.h>

#include "cluster/ctl.h"
#include "cluster/meta_image.h"
#include "coord/grp_log.h"
#include "coord/grp_rec.h"
#include "util/kerr.h"

static const char api_group_invalid_msg[] =
    "This most likely occurs because of a request being malformed by the client library or "
    "the message was sent to an incompatible broker. See the broker logs for more details.";

typedef struct api_fc_s {
    int16_t error;
    int32_t node_id;
    proto_str_t host;
    int32_t port;
    proto_str_t message;
} api_fc_t;

/* The coordinator of group on a quorum's broker, into ab. Returns 0 or
 * COORDINATOR_NOT_AVAILABLE. */
static int16_t api_fc_cluster(api_req_t *req, const char *group, api_broker_t *ab)
{
    const meta_image_t *img = ctl_image(req->b->ctl);
    const mi_topic_t *mt = meta_image_topic(img, GRP_LOG_TOPIC, strlen(GRP_LOG_TOPIC));
    grp_coord_t *c = api_group_coord(req->b); /* asks for the topic when it is missing */
    if (!mt || mt->nparts <= 0)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    int32_t p = grp_rec_partition_for(group, strlen(group), mt->nparts);
    const mi_part_t *mp = &mt->parts[p];
    if (!mp->present || mp->leader < 0 || api_broker_alive(req, mp->leader, ab) < 0)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    if (mp->leader == req->b->cfg.node_id && (!c || grp_find_coordinator(c, group)))
        return KERR_COORDINATOR_NOT_AVAILABLE; /* ours, but its log is offline */
    return KERR_NONE;
}

/* This node at its endpoint of the request's listener; -1 when it
 * advertises no such listener. */
static int api_fc_self(api_req_t *req, api_broker_t *ab)
{
    const api_endpoint_t *ep = api_node_endpoint(req->b, req->listener);
    if (!ep)
        return -1;
    ab->id = req->b->cfg.node_id;
    ab->host = ep->host;
    ab->port = ep->port;
    return 0;
}

/* The coordinator of group on a single node: itself, unless the group's
 * partition is offline (Kafka finds no leader for it). */
static int16_t api_fc_single(api_req_t *req, const char *group, api_broker_t *ab)
{
    grp_coord_t *c = api_group_coord(req->b);
    if (!c || grp_find_coordinator(c, group) || api_fc_self(req, ab) < 0)
        return KERR_COORDINATOR_NOT_AVAILABLE;
    return KERR_NONE;
}

/* One key: a group (0) or a transactional id (1). Error messages as
 * Kafka's: v0-3 give the error's text ("NONE" on success), v4+ an empty
 * one except for a malformed key type. */
static void api_fc_one(api_req_t *req, int8_t key_type, proto_str_t key, api_fc_t *out)
{
    int v4 = req->hdr.api_version >= 4;
    char *group = api_cstr(req, key);
    api_broker_t ab;
    memset(out, 0, sizeof(*out));
    out->node_id = -1;
    out->port = -1;
    out->host = PROTO_STR("");
    if (key_type == 0) {
        out->error = req->b->raft ? api_fc_cluster(req, group ? group : "", &ab)
                                  : api_fc_single(req, group ? group : "", &ab);
    } else if (key_type == 1) {
        out->error = api_txn_find_coordinator(req, key, &ab);
    } else {
        out->error = KERR_INVALID_REQUEST;
        out->message = v4 && key_type == 2 ? PROTO_STR("") : PROTO_STR(api_group_invalid_msg);
        return;
    }
    if (out->error) {
        out->message = v4 ? PROTO_STR("") : PROTO_STR("The coordinator is not available.");
        return;
    }
    out->node_id = ab.id;
    out->host = api_group_str(req, ab.host);
    out->port = ab.port;
    out->message = v4 ? PROTO_STR("") : PROTO_STR("NONE");
}

void api_find_coordinator(api_req_t *req)
{
    proto_find_coordinator_req_t r;
    proto_find_coordinator_resp_t resp;
    api_fc_t fc;

    proto_find_coordinator_req_init(&r);
    if (proto_find_coordinator_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                          req->arena) < 0) {
        api_close(req, "malformed FindCoordinator request");
        return;
    }
    proto_find_coordinator_resp_init(&resp);
    if (req->hdr.api_version < 4) {
        api_fc_one(req, r.key_type, r.key, &fc);
        resp.error_code = fc.error;
        resp.error_message = fc.message;
        resp.node_id = fc.node_id;
        resp.host = fc.host;
        resp.port = fc.port;
        API_REPLY(req, find_coordinator, &resp);
        return;
    }
    int32_t n = r.coordinator_keys.n < 0 ? 0 : r.coordinator_keys.n;
    resp.coordinators.n = n;
    resp.coordinators.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp.coordinators.v));
    for (int32_t i = 0; i < n; i++) {
        proto_find_coordinator_resp_coordinator_t *co = &resp.coordinators.v[i];
        api_fc_one(req, r.key_type, r.coordinator_keys.v[i], &fc);
        proto_find_coordinator_resp_coordinator_init(co);
        co->key = r.coordinator_keys.v[i];
        co->node_id = fc.node_id;
        co->host = fc.host;
        co->port = fc.port;
        co->error_code = fc.error;
        co->error_message = fc.message;
    }
    API_REPLY(req, find_coordinator, &resp);
}

