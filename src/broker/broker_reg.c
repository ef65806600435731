/* This node's registration as a broker with its own controller
 * (ctl_register_node): what a Kafka broker puts in its
 * BrokerRegistration, from the running config: the advertised listeners
 * that are not controller listeners (advertised.listeners, else
 * listeners), each with its host (this machine's name for one without)
 * and its port (the bound one for port 0), and security protocol; and
 * the heartbeat timer that keeps its session fresh. */
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "cluster/bkr.h"
#include "cluster/ctl.h"
#include "net/net_listener.h"
#include "net/net_loop.h"
#include "util/logging.h"
#include "util/mem.h"

/* Kafka's SecurityProtocol ids. */
static int16_t broker_protocol_id(const char *name)
{
    static const char *const names[] = {"PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"};
    for (int16_t i = 0; i < 4; i++)
        if (name && !strcmp(name, names[i]))
            return i;
    return 0;
}

static meta_str_t broker_mstr(const char *s)
{
    meta_str_t m = {s, (int32_t)strlen(s)};
    return m;
}

int broker_register(broker_t *b)
{
    const broker_config_t *cfg = &b->node.cfg;
    const bcfg_listener_t *l = cfg->nadvertised ? cfg->advertised : cfg->listeners;
    int n = cfg->nadvertised ? cfg->nadvertised : cfg->nlisteners, k = 0;
    bkr_listener_t *v = xcalloc((size_t)n + 1, sizeof(*v));

    for (int i = 0; i < n; i++) {
        if (l[i].controller)
            continue;
        v[k].name = broker_mstr(l[i].name);
        v[k].host = broker_mstr(*l[i].host ? l[i].host : b->hostname);
        v[k].port = (uint16_t)(l[i].port ? l[i].port : broker_listener_port(b, l[i].name));
        v[k].security_protocol = broker_protocol_id(l[i].protocol);
        k++;
    }
    int16_t err = ctl_register_node(b->node.ctl, v, k, net_now_wall_ms());
    free(v);
    return err ? -1 : 0;
}

void broker_job_heartbeat(net_loop_t *loop, void *data)
{
    broker_t *b = data;
    (void)loop;
    ctl_node_heartbeat(b->node.ctl, net_now_wall_ms());
}
