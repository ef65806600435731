/* The Raft node's transport over outbound connections (raft_net.h). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/raft_net.h"
#include "net/net_out.h"
#include "util/logging.h"
#include "util/mem.h"

typedef struct rnet_peer_s {
    int32_t id;
    char *host; /* owned: the connection keeps pointing at it */
    int port;
    net_out_t *out;
} rnet_peer_t;

struct raft_net_s {
    net_loop_t *loop;
    rnet_peer_t *peers;
    int npeers;
    int64_t request_timeout_ms;
    int64_t backoff_max_ms;
    const char *client_id;      /* borrowed: the caller's, outliving the transport */
    net_out_t **retired;        /* connections of peers that moved */
    int nretired;
    struct rnet_call_s *failed; /* to be called back with no answer */
    struct rnet_tok_s *tok;     /* the deferred call back, or NULL */
};

/* What a deferred call back finds: the transport, or NULL once freed. */
typedef struct rnet_tok_s {
    raft_net_t *net;
} rnet_tok_t;

typedef struct rnet_call_s {
    raft_resp_fn *cb;
    void *arg;
    struct rnet_call_s *next;
} rnet_call_t;

static void rnet_on_resp(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    rnet_call_t *call = arg;
    (void)out;
    if (resp->err)
        call->cb(call->arg, NULL, 0);
    else
        call->cb(call->arg, resp->body, resp->len);
    free(call);
}

/* A request that could not be queued is answered with nothing after the
 * current events (never inside send). */
static void rnet_fail_all(raft_net_t *net)
{
    while (net->failed) {
        rnet_call_t *call = net->failed;
        net->failed = call->next;
        call->cb(call->arg, NULL, 0);
        free(call);
    }
}

static void rnet_fail_later(net_loop_t *loop, void *data)
{
    rnet_tok_t *tok = data;
    (void)loop;
    if (tok->net) {
        tok->net->tok = NULL;
        rnet_fail_all(tok->net);
    }
    free(tok);
}

static void rnet_fail(raft_net_t *net, rnet_call_t *call)
{
    call->next = net->failed;
    net->failed = call;
    if (!net->tok) {
        net->tok = xcalloc(1, sizeof(*net->tok));
        net->tok->net = net;
        net_loop_defer(net->loop, rnet_fail_later, net->tok);
    }
}

static void rnet_send(void *ctx, int32_t node_id, int16_t api_key, int16_t version, buf_t *body,
                      raft_resp_fn *cb, void *arg)
{
    raft_net_t *net = ctx;
    rnet_call_t *call = xcalloc(1, sizeof(*call));
    call->cb = cb;
    call->arg = arg;
    for (int i = 0; i < net->npeers; i++) {
        if (net->peers[i].id != node_id)
            continue;
        if (net_out_send(net->peers[i].out, api_key, version, body, net->request_timeout_ms,
                         rnet_on_resp, call) == 0)
            return;
        break;
    }
    buf_free(body);
    rnet_fail(net, call);
}

static net_out_t *rnet_out(raft_net_t *net, const char *host, int port)
{
    net_out_config_t oc;
    net_out_config_init(&oc);
    oc.host = host;
    oc.port = port;
    oc.client_id = net->client_id;
    oc.request_timeout_ms = net->request_timeout_ms;
    if (net->backoff_max_ms > 0)
        oc.reconnect_backoff_max_ms = net->backoff_max_ms;
    return net_out_new(net->loop, &oc);
}

raft_net_t *raft_net_new(net_loop_t *loop, const raft_net_peer_t *peers, int n,
                         const char *client_id, int64_t request_timeout_ms, int64_t backoff_max_ms)
{
    raft_net_t *net = xcalloc(1, sizeof(*net));
    net->loop = loop;
    net->request_timeout_ms = request_timeout_ms;
    net->backoff_max_ms = backoff_max_ms;
    net->client_id = client_id;
    for (int i = 0; i < n; i++)
        raft_net_set_peer(net, peers[i].id, peers[i].host, peers[i].port);
    return net;
}

void raft_net_set_peer(raft_net_t *net, int32_t id, const char *host, int port)
{
    for (int i = 0; i < net->npeers; i++) {
        if (net->peers[i].id != id)
            continue;
        rnet_peer_t *p = &net->peers[i];
        if (p->port == port && !strcmp(p->host, host))
            return;
        /* moved: the old connection is retired, not freed, as this may run
         * inside one of its own callbacks; it goes with the transport */
        lg_info("metadata quorum: node %d is at %s:%d now (was %s:%d)", id, host, port, p->host,
                p->port);
        net->retired = xrealloc(net->retired, (size_t)(net->nretired + 1) * sizeof(*net->retired));
        net->retired[net->nretired++] = p->out;
        free(p->host);
        p->host = xstrdup(host);
        p->port = port;
        p->out = rnet_out(net, p->host, port);
        return;
    }
    net->peers = xrealloc(net->peers, (size_t)(net->npeers + 1) * sizeof(*net->peers));
    rnet_peer_t *p = &net->peers[net->npeers++];
    p->id = id;
    p->port = port;
    p->host = xstrdup(host);
    p->out = rnet_out(net, p->host, port);
}

int raft_net_peer_addr(const raft_net_t *net, int32_t id, const char **host, int *port)
{
    for (int i = 0; net && i < net->npeers; i++) {
        if (net->peers[i].id == id) {
            *host = net->peers[i].host;
            *port = net->peers[i].port;
            return 0;
        }
    }
    return -1;
}

static void rnet_learn(void *ctx, int32_t id, const char *host, int32_t host_len, int32_t port)
{
    char h[256];

    if (id < 0 || host_len <= 0 || (size_t)host_len >= sizeof(h) || port <= 0 || port > 65535)
        return;
    memcpy(h, host, (size_t)host_len);
    h[host_len] = '\0';
    raft_net_set_peer(ctx, id, h, port);
}

static int rnet_addr(void *ctx, int32_t id, const char **host, int *port)
{
    raft_net_t *net = ctx;
    for (int i = 0; i < net->npeers; i++) {
        if (net->peers[i].id != id)
            continue;
        *host = net->peers[i].host;
        *port = net->peers[i].port;
        return 0;
    }
    return -1;
}

void raft_net_free(raft_net_t *net)
{
    if (!net)
        return;
    for (int i = 0; i < net->npeers; i++) {
        net_out_free(net->peers[i].out);
        free(net->peers[i].host);
    }
    for (int i = 0; i < net->nretired; i++)
        net_out_free(net->retired[i]);
    free(net->retired);
    if (net->tok)
        net->tok->net = NULL;
    rnet_fail_all(net);
    free(net->peers);
    free(net);
}

raft_transport_t raft_net_transport(raft_net_t *net)
{
    raft_transport_t tr = {net, rnet_send, rnet_learn, rnet_addr};
    return tr;
}
