/* The metadata quorum's addresses: controller.quorum.voters
 * (id@host:port,...) and controller.quorum.bootstrap.servers
 * (host:port,...). Their values were checked against the key table before
 * (digits before '@', a host, a port of digits after the last ':'), so
 * parsing cannot fail here; a host in brackets is an IPv6 address and is
 * kept without them. */
#include "broker/broker_config_int.h"

#include <stdlib.h>
#include <string.h>

#include "cluster/cfg_val.h"
#include "util/mem.h"

/* host:port into *host (owned by the caller) and *port. */
static void bcfg_split_hostport(const char *s, size_t n, char **host, int *port)
{
    size_t colon = n;

    while (colon > 0 && s[colon - 1] != ':')
        colon--;
    *port = (int)strtol(s + colon, NULL, 10);
    n = colon ? colon - 1 : 0;
    if (n >= 2 && s[0] == '[' && s[n - 1] == ']')
        s++, n -= 2;
    *host = xstrndup(s, n);
}

static int bcfg_voter_parse(const char *item, size_t len, void *arg)
{
    bcfg_quorum_t *q = arg;
    const char *at = memchr(item, '@', len);
    bcfg_voter_t *v;

    if (!at)
        return 0; /* an empty entry: checked */
    q->voters = xrealloc(q->voters, (size_t)(q->nvoters + 1) * sizeof(*q->voters));
    v = &q->voters[q->nvoters++];
    v->id = (int32_t)strtol(item, NULL, 10);
    bcfg_split_hostport(at + 1, len - (size_t)(at + 1 - item), &v->host, &v->port);
    return 0;
}

static int bcfg_boot_parse(const char *item, size_t len, void *arg)
{
    bcfg_quorum_t *q = arg;
    bcfg_addr_t *a;

    if (!len)
        return 0;
    q->bootstrap = xrealloc(q->bootstrap, (size_t)(q->nbootstrap + 1) * sizeof(*q->bootstrap));
    a = &q->bootstrap[q->nbootstrap++];
    bcfg_split_hostport(item, len, &a->host, &a->port);
    return 0;
}

void bcfg_load_quorum(broker_config_t *cfg)
{
    const char *voters = props_get(&cfg->props, "controller.quorum.voters");
    const char *boot = props_get(&cfg->props, "controller.quorum.bootstrap.servers");

    if (voters)
        cfg_val_items(voters, bcfg_voter_parse, &cfg->quorum);
    if (boot)
        cfg_val_items(boot, bcfg_boot_parse, &cfg->quorum);
}

void bcfg_free_quorum(bcfg_quorum_t *q)
{
    for (int i = 0; i < q->nvoters; i++)
        free(q->voters[i].host);
    for (int i = 0; i < q->nbootstrap; i++)
        free(q->bootstrap[i].host);
    free(q->voters);
    free(q->bootstrap);
    q->voters = NULL;
    q->bootstrap = NULL;
    q->nvoters = q->nbootstrap = 0;
}
