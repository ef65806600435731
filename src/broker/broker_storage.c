/* The start-up rule of a node's storage. A Kafka 4.4 node refuses to
 * start until `kafka-storage format` has written meta.properties: its
 * cluster id and, for a dynamic quorum, its initial voters come from
 * there, and two nodes started unformatted would make two clusters.
 * A single node that is its own quorum cannot meet another cluster, so
 * Strand keeps starting it with no format step (etc/server.properties,
 * scripts/run.sh): it formats its dirs itself on the first start. */
#include "broker/broker_storage.h"

#include <string.h>
#include <strings.h>

#include "log/log_meta.h"
#include "util/logging.h"

static bool storage_loopback(const char *h)
{
    return !strcasecmp(h, "localhost") || !strncmp(h, "127.", 4) || !strcmp(h, "::1");
}

static bool storage_any(const char *h)
{
    return !*h || !strcmp(h, "0.0.0.0") || !strcmp(h, "::");
}

/* Whether host:port is one of this node's controller listeners. */
static bool storage_is_self(const broker_config_t *cfg, const bcfg_addr_t *a)
{
    for (int i = 0; i < cfg->nlisteners; i++) {
        const bcfg_listener_t *l = &cfg->listeners[i];
        if (!l->controller || l->port != a->port)
            continue;
        if (storage_any(l->host) || !strcasecmp(l->host, a->host) ||
            (storage_loopback(l->host) && storage_loopback(a->host)))
            return true;
    }
    return false;
}

bool broker_storage_single_node(const broker_config_t *cfg)
{
    const bcfg_quorum_t *q = &cfg->quorum;

    if (!cfg->role_broker || !cfg->role_controller)
        return false;
    if (q->nvoters)
        return q->nvoters == 1 && q->voters[0].id == cfg->node_id;
    return q->nbootstrap == 1 && storage_is_self(cfg, &q->bootstrap[0]);
}

int broker_storage_check(const broker_config_t *cfg)
{
    int formatted = 0;
    char err[512];
    log_meta_t m;

    if (broker_storage_single_node(cfg))
        return 0;
    for (int i = 0; i < cfg->nlog_dirs; i++) {
        if (log_meta_read(cfg->log_dirs[i], &m, err, sizeof(err)) < 0) {
            lg_error("%s", err);
            return -1;
        }
        formatted += m.present;
    }
    if (formatted)
        return 0;
    /* Kafka 4.4's words */
    lg_error("No readable meta.properties files found.");
    return -1;
}
