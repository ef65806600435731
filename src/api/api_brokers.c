/* The brokers Metadata and DescribeCluster list, from the metadata
 * image's registrations, as a Kafka broker lists them from its metadata
 * cache: the registered brokers that are not fenced, each at its
 * endpoint of the listener the answer is for. That listener is the one
 * this node advertises (the first advertised listener that is not a
 * controller one); this node's own entry is its live advertised endpoint
 * (a dynamic change of the listeners moves it at once), and it lists
 * itself even when fenced or without a registration (one that could not
 * be written): it serves the clients asking, as the only broker of a
 * single node, which a Kafka broker does only once unfenced. A broker of
 * a quorum lists what the image has, itself included, as Kafka's does. */
#include "api/api_brokers.h"

#include <string.h>

#include "cluster/ctl.h"
#include "cluster/meta_image.h"
#include "util/arena.h"

/* The name of the listener this node advertises to clients, or NULL. */
static const char *api_adv_listener(const api_node_t *b)
{
    const broker_config_t *cfg = &b->cfg;
    const bcfg_listener_t *l = cfg->nadvertised ? cfg->advertised : cfg->listeners;
    int n = cfg->nadvertised ? cfg->nadvertised : cfg->nlisteners;
    for (int i = 0; i < n; i++)
        if (!l[i].controller)
            return l[i].name;
    return NULL;
}

static const mi_endpoint_t *api_endpoint(const mi_broker_t *mb, const char *listener)
{
    for (int i = 0; listener && i < mb->nendpoints; i++)
        if (mb->endpoints[i].name && !strcmp(mb->endpoints[i].name, listener))
            return &mb->endpoints[i];
    return mb->nendpoints ? &mb->endpoints[0] : NULL;
}

static void api_self(const api_node_t *b, const mi_broker_t *mb, api_broker_t *out)
{
    out->id = b->cfg.node_id;
    out->host = b->adv_host;
    out->port = b->adv_port;
    out->rack = mb ? mb->rack : NULL;
    out->fenced = mb ? mb->fenced : false;
}

int api_brokers(api_req_t *req, bool with_fenced, api_broker_t **out)
{
    const meta_image_t *img = ctl_image(req->b->ctl);
    const char *listener = api_adv_listener(req->b);
    const mi_broker_t *mb, *self = meta_image_broker(img, req->b->cfg.node_id);
    size_t pos = 0;
    int n = 0;

    if (req->b->raft)
        self = NULL; /* no entry of its own: the image's */
    *out = arena_calloc(req->arena, (size_t)img->nbrokers + 1, sizeof(**out));
    if (!self && !req->b->raft)
        api_self(req->b, NULL, &(*out)[n++]);
    while ((mb = meta_image_broker_next(img, &pos))) {
        const mi_endpoint_t *ep = api_endpoint(mb, listener);
        if ((mb->fenced && !with_fenced && mb != self) || (!ep && mb != self))
            continue;
        if (mb == self) {
            api_self(req->b, mb, &(*out)[n++]);
            continue;
        }
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
        api_self(req->b, mb, out);
        return 0;
    }
    const mi_endpoint_t *ep = api_endpoint(mb, api_adv_listener(req->b));
    if (!ep)
        return -1;
    *out = (api_broker_t){mb->id, ep->host, ep->port, mb->rack, mb->fenced};
    return 0;
}
