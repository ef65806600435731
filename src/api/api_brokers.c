/* The brokers Metadata, DescribeCluster and FindCoordinator name, from the
 * metadata image's registrations, as a Kafka broker names them from its
 * metadata cache: the registered brokers that are not fenced, each at its
 * endpoint of the listener the request came in on. A broker without an
 * endpoint of that name is left out (Kafka falls back to no other
 * listener: a client must never be sent to an address of a network it
 * may not reach). This node's own entry is its live advertised endpoint
 * of that listener (a dynamic change of the listeners moves it at once),
 * and a single node lists itself even when fenced or without a
 * registration (one that could not be written): it serves the clients
 * asking, as the only broker of a single node, which a Kafka broker does
 * only once unfenced. A broker of a quorum lists what the image has,
 * itself included, as Kafka's does. */
#include "api/api_brokers.h"

#include <string.h>

#include "cluster/ctl.h"
#include "cluster/meta_image.h"
#include "util/arena.h"

const api_endpoint_t *api_node_endpoint(const api_node_t *b, const char *listener)
{
    for (int i = 0; listener && i < b->nadv; i++)
        if (!strcmp(b->adv[i].name, listener))
            return &b->adv[i];
    return NULL;
}

const mi_endpoint_t *api_broker_endpoint(const mi_broker_t *mb, const char *listener)
{
    for (int i = 0; listener && i < mb->nendpoints; i++)
        if (mb->endpoints[i].name && !strcmp(mb->endpoints[i].name, listener))
            return &mb->endpoints[i];
    return NULL;
}

/* This node at its endpoint ep of the request's listener. */
static void api_self(const api_node_t *b, const api_endpoint_t *ep, const mi_broker_t *mb,
                     api_broker_t *out)
{
    out->id = b->cfg.node_id;
    out->host = ep->host;
    out->port = ep->port;
    out->rack = mb ? mb->rack : NULL;
    out->fenced = mb ? mb->fenced : false;
}

int api_brokers(api_req_t *req, bool with_fenced, api_broker_t **out)
{
    const meta_image_t *img = ctl_image(req->b->ctl);
    const api_endpoint_t *own = api_node_endpoint(req->b, req->listener);
    const mi_broker_t *mb, *self = meta_image_broker(img, req->b->cfg.node_id);
    size_t pos = 0;
    int n = 0;

    if (req->b->raft)
        self = NULL; /* no entry of its own: the image's */
    *out = arena_calloc(req->arena, (size_t)img->nbrokers + 1, sizeof(**out));
    if (!self && !req->b->raft && own)
        api_self(req->b, own, NULL, &(*out)[n++]);
    while ((mb = meta_image_broker_next(img, &pos))) {
        if (mb == self) {
            if (own)
                api_self(req->b, own, mb, &(*out)[n++]);
            continue;
        }
        const mi_endpoint_t *ep = api_broker_endpoint(mb, req->listener);
        if ((mb->fenced && !with_fenced) || !ep)
            continue;
        (*out)[n++] = (api_broker_t){mb->id, ep->host, ep->port, mb->rack, mb->fenced};
    }
    return n;
}

int api_broker_alive(api_req_t *req, int32_t id, api_broker_t *out)
{
    const meta_image_t *img = ctl_image(req->b->ctl);
    const mi_broker_t *mb = meta_image_broker(img, id);
    if (!mb || mb->fenced)
        return -1;
    if (id == req->b->cfg.node_id) {
        const api_endpoint_t *own = api_node_endpoint(req->b, req->listener);
        if (!own)
            return -1;
        api_self(req->b, own, mb, out);
        return 0;
    }
    const mi_endpoint_t *ep = api_broker_endpoint(mb, req->listener);
    if (!ep)
        return -1;
    *out = (api_broker_t){mb->id, ep->host, ep->port, mb->rack, mb->fenced};
    return 0;
}
