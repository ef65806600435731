/* api_pview: see api_pview.h. */
#include "api/api_pview.h"

#include "api/api_brokers.h"
#include "cluster/ctl.h"
#include "util/kerr.h"

int api_pview_reachable(api_req_t *req, int32_t id, int alive)
{
    if (!req->b->raft && id == req->b->cfg.node_id)
        return api_node_endpoint(req->b, req->listener) != NULL;
    const mi_broker_t *mb = meta_image_broker(ctl_image(req->b->ctl), id);
    if (!mb || (alive && mb->fenced))
        return 0;
    return api_broker_endpoint(mb, req->listener) != NULL;
}

/* A leader the client cannot be sent to, as Kafka's metadata cache
 * answers it: no leader (-1), LISTENER_NOT_FOUND when it is registered
 * without an endpoint of the request's listener, LEADER_NOT_AVAILABLE
 * without a registration. Fenced or not, as Kafka's. */
static void api_pview_leader(api_req_t *req, api_pview_t *v)
{
    if (v->leader_id < 0 || api_pview_reachable(req, v->leader_id, 0))
        return;
    int local = !req->b->raft && v->leader_id == req->b->cfg.node_id;
    v->error_code = local || meta_image_broker(ctl_image(req->b->ctl), v->leader_id)
                        ? KERR_LISTENER_NOT_FOUND
                        : KERR_LEADER_NOT_AVAILABLE;
    v->leader_id = -1;
}

/* Kafka's offline replicas of a cluster's partition: those without a
 * registration, fenced, or without an endpoint of the request's listener
 * (Strand's image has no offline log dirs of other brokers). */
static void api_pview_offline(api_req_t *req, const mi_part_t *mp, api_pview_t *v)
{
    int32_t *off = arena_alloc(req->arena, ((size_t)mp->nreplicas + 1) * sizeof(*off));
    int32_t n = 0;
    for (int i = 0; i < mp->nreplicas; i++)
        if (!api_pview_reachable(req, mp->replicas[i], 1))
            off[n++] = mp->replicas[i];
    v->offline_replicas.n = n;
    v->offline_replicas.v = n ? off : NULL;
}

/* This node's own partition. One whose log is being made has no leader
 * yet (clients retry). An offline one (part_offline) is shown as Kafka
 * 4.4's controller leaves it once the broker has reported the log dir
 * offline: no leader at the next leader epoch, the replica listed in
 * offline_replicas and, with eligible leader replicas on (the default of
 * a new 4.x cluster), out of the ISR. The epoch is not kept: the restart
 * that brings the log back takes it. */
static void api_pview_local(api_req_t *req, const part_t *part, int creating, api_pview_t *v)
{
    int32_t *self = arena_alloc(req->arena, sizeof(*self));
    *self = req->b->cfg.node_id;
    v->replica_nodes.n = v->isr_nodes.n = 1;
    v->replica_nodes.v = v->isr_nodes.v = self;
    v->offline_replicas.n = 0;
    v->offline_replicas.v = NULL;
    v->elr = v->last_elr = (proto_int32_array_t){0, NULL};
    v->leader_id = -1;
    v->leader_epoch = -1;
    v->error_code = KERR_LEADER_NOT_AVAILABLE;
    if (creating) {
        v->isr_nodes.n = 0;
        return;
    }
    if (!part_offline(part)) {
        v->error_code = KERR_NONE;
        v->leader_id = *self;
        v->leader_epoch = part->leader_epoch;
        return;
    }
    if (part)
        v->leader_epoch = part->leader_epoch + 1;
    v->isr_nodes.n = 0;
    v->offline_replicas.n = 1;
    v->offline_replicas.v = self;
}

/* A partition of a quorum's cluster as its controller decided it: the
 * leader, epoch, replicas and ISR of the image. */
static void api_pview_image(api_req_t *req, const mi_part_t *mp, api_pview_t *v)
{
    v->error_code = mp->leader < 0 ? KERR_LEADER_NOT_AVAILABLE : KERR_NONE;
    v->leader_id = mp->leader;
    v->leader_epoch = mp->leader_epoch;
    v->replica_nodes.n = mp->nreplicas;
    v->replica_nodes.v = mp->replicas;
    v->isr_nodes.n = mp->nisr;
    v->isr_nodes.v = mp->isr;
    v->elr = (proto_int32_array_t){mp->nelr, mp->elr};
    v->last_elr = (proto_int32_array_t){mp->nlast_elr, mp->last_elr};
    api_pview_offline(req, mp, v);
}

int api_pview_get(api_req_t *req, const topic_t *topic, const mi_topic_t *mt, int32_t i,
                  api_pview_t *v)
{
    if (mt && i < mt->nparts && mt->parts[i].present)
        api_pview_image(req, &mt->parts[i], v);
    else if (i < topic->nparts)
        api_pview_local(req, topic->parts[i], part_creating(topic, i), v);
    else
        return 0;
    api_pview_leader(req, v);
    return 1;
}
