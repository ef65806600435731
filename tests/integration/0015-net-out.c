/* 0015-net-out: the broker's own outbound connection (net/net_out.h), as
 * the follower fetchers and the Raft quorum will use it, against a real
 * broker: ApiVersions v3, then 100 Metadata requests pipelined, at v4
 * (request header v1, response header v0) and v12 (flexible: request
 * header v2, response header v1) in turn, each answer decoded with the
 * generated codecs at its version. Checks that every answer comes, in
 * request order, with increasing correlation ids, never more than
 * max.in.flight.requests.per.connection on the wire, and says what the
 * broker is: our port among the brokers, the unknown topic asked for
 * answered UNKNOWN_TOPIC_OR_PARTITION by name (auto-creation off). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "net/net_out.h"
#include "proto/proto.h"
#include "testlib/testlib.h"
#include "util/arena.h"
#include "util/kerr.h"

#define NREQ 100

static net_loop_t *loop;
static const char *topic;
static int port, answered, api_ok, max_fly;
static int32_t last_corr = -1;

typedef struct req_s {
    int idx;
    int16_t ver;
} req_t;

static void check_metadata(const net_out_resp_t *resp, const req_t *r)
{
    proto_metadata_resp_t m;
    arena_t arena;
    int ours = 0;

    arena_init(&arena, 4096);
    proto_metadata_resp_init(&m);
    TL_ASSERT(proto_metadata_resp_decode(&m, r->ver, resp->body, resp->len, &arena) == 0,
              "request %d: Metadata v%d does not decode", r->idx, r->ver);
    for (int i = 0; i < m.brokers.n; i++)
        ours |= m.brokers.v[i].port == port;
    TL_ASSERT(ours, "request %d: no broker on port %d", r->idx, port);
    TL_ASSERT_EQ(m.topics.n, 1);
    TL_ASSERT_EQ(m.topics.v[0].error_code, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    TL_ASSERT(m.topics.v[0].name.len == (int32_t)strlen(topic) &&
                  !memcmp(m.topics.v[0].name.p, topic, strlen(topic)),
              "request %d: another topic answered", r->idx);
    arena_destroy(&arena);
}

static void on_metadata(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    req_t *r = arg;
    TL_ASSERT(resp->err == KERR_NONE, "request %d failed: %s (errno %d)", r->idx,
              kerr_name(resp->err), resp->sys_errno);
    TL_ASSERT_EQ(r->idx, answered);
    TL_ASSERT(resp->correlation_id > last_corr, "correlation id %d after %d",
              resp->correlation_id, last_corr);
    last_corr = resp->correlation_id;
    if (net_out_in_flight(out) + 1 > max_fly)
        max_fly = net_out_in_flight(out) + 1;
    check_metadata(resp, r);
    if (++answered == NREQ)
        net_loop_stop(loop);
}

static void on_api_versions(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    proto_api_versions_resp_t m;
    arena_t arena;
    (void)out;
    (void)arg;
    TL_ASSERT(resp->err == KERR_NONE, "ApiVersions failed: errno %d", resp->sys_errno);
    arena_init(&arena, 4096);
    proto_api_versions_resp_init(&m);
    TL_ASSERT(proto_api_versions_resp_decode(&m, 3, resp->body, resp->len, &arena) == 0,
              "ApiVersions v3 does not decode");
    TL_ASSERT_EQ(m.error_code, KERR_NONE);
    for (int i = 0; i < m.api_keys.n; i++)
        if (m.api_keys.v[i].api_key == PROTO_API_METADATA && m.api_keys.v[i].max_version >= 12)
            api_ok = 1;
    arena_destroy(&arena);
    net_loop_stop(loop);
}

static void on_timeout(net_loop_t *l, void *data)
{
    (void)data;
    (void)l;
    tl_fail("no answers within 30 s (%d of %d)", answered, NREQ);
}

static void send_metadata(net_out_t *out, req_t *r)
{
    proto_metadata_req_t m;
    proto_metadata_req_metadata_request_topic_t t;
    buf_t b;

    proto_metadata_req_init(&m);
    proto_metadata_req_metadata_request_topic_init(&t);
    t.name.p = topic;
    t.name.len = (int32_t)strlen(topic);
    m.topics.n = 1;
    m.topics.v = &t;
    m.allow_auto_topic_creation = 0;
    buf_init(&b);
    proto_metadata_req_encode(&m, r->ver, &b);
    TL_ASSERT(net_out_send(out, PROTO_API_METADATA, r->ver, &b, 0, on_metadata, r) == 0,
              "send %d", r->idx);
}

int main(void)
{
    static req_t reqs[NREQ];
    char host[256];
    net_out_config_t cfg;
    proto_api_versions_req_t av;
    buf_t b;

    tl_init("0015-net-out");
    const char *bs = tl_bootstrap();
    const char *colon = strrchr(bs, ':');
    TL_ASSERT(colon && colon - bs < (long)sizeof(host), "bootstrap %s", bs);
    snprintf(host, sizeof(host), "%.*s", (int)(colon - bs), bs);
    port = atoi(colon + 1);
    topic = tl_topic_name("netout-unknown");
    loop = net_loop_new();
    net_out_config_init(&cfg);
    cfg.host = host;
    cfg.port = port;
    cfg.client_id = "strand-0600";
    net_out_t *out = net_out_new(loop, &cfg);
    net_timer_add(loop, 30000, on_timeout, NULL);

    proto_api_versions_req_init(&av);
    av.client_software_name = PROTO_STR("strand-test");
    av.client_software_version = PROTO_STR("1.0");
    buf_init(&b);
    proto_api_versions_req_encode(&av, 3, &b);
    TL_ASSERT(net_out_send(out, PROTO_API_API_VERSIONS, 3, &b, 0, on_api_versions, NULL) == 0,
              "send ApiVersions");
    net_loop_run(loop);
    TL_ASSERT(api_ok, "ApiVersions does not list Metadata v12");

    for (int i = 0; i < NREQ; i++) {
        reqs[i].idx = i;
        reqs[i].ver = i % 2 ? 12 : 4;
        send_metadata(out, &reqs[i]);
    }
    net_loop_run(loop);
    TL_ASSERT_EQ(answered, NREQ);
    TL_ASSERT(max_fly <= 5 && max_fly >= 1, "%d requests in flight", max_fly);
    tl_log("%d answers in order, at most %d in flight", answered, max_fly);
    net_out_free(out);
    net_loop_free(loop);
    return tl_done();
}
