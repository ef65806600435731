/* Connections to the other brokers (part_peer.h). */
#include "partition/part_peer.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_image.h"
#include "util/mem.h"

typedef struct part_peer_s {
    int32_t id;
    char host[256]; /* the connection keeps pointing at it */
    int port;
    net_out_t *out;
    struct part_peer_s *next;
} part_peer_t;

struct part_peers_s {
    part_reg_t *reg;
    const char *client_id;
    int64_t timeout_ms;
    part_peer_t *live;    /* one per broker */
    part_peer_t *retired; /* endpoints that changed */
};

part_peers_t *part_peers_new(part_reg_t *reg, const char *client_id, int64_t timeout_ms)
{
    part_peers_t *ps = xcalloc(1, sizeof(*ps));
    ps->reg = reg;
    ps->client_id = client_id;
    ps->timeout_ms = timeout_ms;
    return ps;
}

/* Broker id's inter-broker endpoint in the image; 0 when it has one. */
static int part_peer_endpoint(const part_peers_t *ps, int32_t id, const char **host, int *port)
{
    const mi_broker_t *b = ps->reg->meta ? meta_image_broker(&ps->reg->meta->img, id) : NULL;
    const char *name = ps->reg->inter_broker ? ps->reg->inter_broker : "PLAINTEXT";

    for (int i = 0; b && i < b->nendpoints; i++)
        if (!strcmp(b->endpoints[i].name, name)) {
            *host = b->endpoints[i].host;
            *port = b->endpoints[i].port;
            return 0;
        }
    return -1;
}

static part_peer_t *part_peer_new(part_peers_t *ps, int32_t id, const char *host, int port)
{
    part_peer_t *p = xcalloc(1, sizeof(*p));
    net_out_config_t cfg;

    p->id = id;
    snprintf(p->host, sizeof(p->host), "%s", host);
    p->port = port;
    net_out_config_init(&cfg);
    cfg.host = p->host;
    cfg.port = port;
    cfg.client_id = ps->client_id;
    cfg.request_timeout_ms = ps->timeout_ms;
    p->out = net_out_new(ps->reg->loop, &cfg);
    p->next = ps->live;
    ps->live = p;
    return p;
}

net_out_t *part_peer_out(part_peers_t *ps, int32_t id)
{
    const char *host;
    int port;

    if (part_peer_endpoint(ps, id, &host, &port) < 0)
        return NULL;
    for (part_peer_t **pp = &ps->live; *pp; pp = &(*pp)->next) {
        part_peer_t *p = *pp;
        if (p->id != id)
            continue;
        if (p->port == port && !strcmp(p->host, host))
            return p->out;
        *pp = p->next; /* moved: retired, a new one below */
        p->next = ps->retired;
        ps->retired = p;
        break;
    }
    return part_peer_new(ps, id, host, port)->out;
}

int64_t part_peer_timeout(net_out_t *out, int64_t normal_ms)
{
    if (net_out_state(out) != NET_OUT_READY && net_out_failures(out) > 0 &&
        normal_ms > PART_PEER_DOWN_MS)
        return PART_PEER_DOWN_MS;
    return normal_ms;
}

static void part_peer_list_free(part_peer_t *p)
{
    while (p) {
        part_peer_t *next = p->next;
        net_out_free(p->out);
        free(p);
        p = next;
    }
}

void part_peers_free(part_peers_t *ps)
{
    if (!ps)
        return;
    part_peer_list_free(ps->live);
    part_peer_list_free(ps->retired);
    free(ps);
}
