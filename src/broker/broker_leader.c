/* Connections to the active controller (broker_leader.h): one per
 * controller dialled, kept while the quorum's leader moves between them,
 * so a failover back to an earlier leader finds its connection up. A
 * controller whose endpoint changed gets a new one; the old one is kept
 * until the end, since the change may be seen inside one of its own
 * callbacks, where freeing it is not allowed. */
#include "broker/broker_leader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker_quorum.h"
#include "util/logging.h"
#include "util/mem.h"

typedef struct bleader_ctl_s {
    int32_t id;
    char host[256]; /* the connection keeps pointing at it */
    int port;
    net_out_t *out;
} bleader_ctl_t;

struct broker_leader_s {
    broker_t *b;
    const char *client_id;
    bleader_ctl_t **ctls;    /* owned, each */
    int nctls;
    bleader_ctl_t **retired; /* controllers that moved, owned */
    int nretired;
};

broker_leader_t *broker_leader_new(broker_t *b, const char *client_id)
{
    broker_leader_t *lc = xcalloc(1, sizeof(*lc));
    lc->b = b;
    lc->client_id = client_id;
    return lc;
}

static bleader_ctl_t *bleader_ctl_new(broker_leader_t *lc, int32_t id, const char *host, int port)
{
    bleader_ctl_t *c = xcalloc(1, sizeof(*c));
    net_out_config_t oc;

    c->id = id;
    snprintf(c->host, sizeof(c->host), "%s", host);
    c->port = port;
    net_out_config_init(&oc);
    oc.host = c->host;
    oc.port = port;
    oc.client_id = lc->client_id;
    oc.request_timeout_ms = lc->b->node.cfg.quorum.request_timeout_ms;
    c->out = net_out_new(lc->b->node.loop, &oc);
    return c;
}

net_out_t *broker_leader_out(broker_leader_t *lc)
{
    int32_t id;
    const char *host;
    int port, i;

    if (broker_quorum_leader_addr(lc->b, &id, &host, &port) < 0)
        return NULL;
    for (i = 0; i < lc->nctls && lc->ctls[i]->id != id; i++)
        ;
    if (i < lc->nctls && lc->ctls[i]->port == port && !strcmp(lc->ctls[i]->host, host))
        return lc->ctls[i]->out;
    if (i < lc->nctls) {
        lg_info("%s: controller %d is at %s:%d now", lc->client_id, id, host, port);
        lc->retired = xrealloc(lc->retired, (size_t)(lc->nretired + 1) * sizeof(*lc->retired));
        lc->retired[lc->nretired++] = lc->ctls[i];
    } else {
        lc->ctls = xrealloc(lc->ctls, (size_t)(lc->nctls + 1) * sizeof(*lc->ctls));
        lc->nctls++;
    }
    lc->ctls[i] = bleader_ctl_new(lc, id, host, port);
    return lc->ctls[i]->out;
}

static void bleader_ctl_free(bleader_ctl_t *c)
{
    net_out_free(c->out); /* calls back what is out */
    free(c);
}

void broker_leader_free(broker_leader_t *lc)
{
    if (!lc)
        return;
    for (int i = 0; i < lc->nctls; i++)
        bleader_ctl_free(lc->ctls[i]);
    for (int i = 0; i < lc->nretired; i++)
        bleader_ctl_free(lc->retired[i]);
    free(lc->ctls);
    free(lc->retired);
    free(lc);
}
