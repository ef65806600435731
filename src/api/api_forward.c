/* Forwarding, as Kafka 4.4's brokers and controllers do it. On a broker
 * of a quorum, the requests that change the cluster's metadata
 * (CreateTopics, DeleteTopics, CreatePartitions, AlterConfigs,
 * IncrementalAlterConfigs, ElectLeaders, UpdateFeatures, UnregisterBroker) and
 * DescribeQuorum go to the
 * active controller whole, in an Envelope (the client's request bytes,
 * its principal, its address); the controller runs the request as if it
 * came to it and returns the answer in the EnvelopeResponse, which the
 * broker hands to the client as it is (its header carries the client's
 * correlation id). A controller that is not the active one answers
 * NOT_CONTROLLER, or none comes: the broker asks again, of the leader
 * it knows by then, for up to 60 s (Kafka's broker's forwarding
 * timeout); then the request runs here, where this node's controller,
 * not the active one, refuses the change with REQUEST_TIMED_OUT in the
 * API's own answer (DescribeQuorum: at the top level), as Kafka's broker
 * answers a forwarded request that timed out. */
#include <stdlib.h>
#include <string.h>

#include "api/api.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

#define API_FWD_TIMEOUT_MS 60000
#define API_FWD_RETRY_MS 100

/* Kafka's KafkaPrincipal of an unauthenticated client, as its
 * DefaultKafkaPrincipalBuilder serializes it: version 0 of
 * DefaultPrincipalData (flexible): "User", "ANONYMOUS", not token
 * authenticated, no tags. */
static const uint8_t api_fwd_principal[] = {0, 0, 5, 'U', 's', 'e', 'r', 10, 'A', 'N', 'O',
                                            'N', 'Y', 'M', 'O', 'U', 'S', 0, 0};

typedef struct api_fwd_s {
    api_req_t *req;
    const uint8_t *frame;
    size_t len;
    int64_t until_ms; /* monotonic: when it times out */
} api_fwd_t;

int api_forwarded(const api_req_t *req)
{
    if (!req->b->forward)
        return 0;
    switch (req->hdr.api_key) {
    case 19: /* CreateTopics */
    case 20: /* DeleteTopics */
    case 33: /* AlterConfigs */
    case 37: /* CreatePartitions */
    case 43: /* ElectLeaders */
    case 45: /* AlterPartitionReassignments */
    case 46: /* ListPartitionReassignments */
    case 44: /* IncrementalAlterConfigs */
    case 55: /* DescribeQuorum */
    case 57: /* UpdateFeatures */
    case 64: /* UnregisterBroker */
        return 1;
    default:
        return 0;
    }
}

static void api_fwd_send(api_fwd_t *f);

static void api_fwd_end(api_fwd_t *f)
{
    net_conn_t *conn = f->req->conn;
    free(f);
    net_conn_release(conn);
}

static void api_fwd_retry(net_loop_t *loop, void *arg)
{
    (void)loop;
    api_fwd_send(arg);
}

static void api_fwd_again(api_fwd_t *f, const char *why)
{
    if (net_now_mono_ms() + API_FWD_RETRY_MS > f->until_ms) {
        api_req_t *req = f->req;
        const api_entry_t *e = api_entry_find(req->hdr.api_key);
        lg_info("forwarding %s to the active controller: %s; timed out",
                proto_api_info(req->hdr.api_key) ? proto_api_info(req->hdr.api_key)->name : "?", why);
        api_fwd_end(f);
        req->refuse_err = KERR_REQUEST_TIMED_OUT;
        if (e && !req->conn->closing)
            e->handler(req);
        return;
    }
    net_timer_add(f->req->b->loop, API_FWD_RETRY_MS, api_fwd_retry, f);
}

/* The controller's answer, framed for the client as it came. */
static void api_fwd_done(void *arg, const uint8_t *resp, size_t len)
{
    api_fwd_t *f = arg;
    proto_envelope_resp_t r;
    arena_t arena;
    if (f->req->conn->closing) {
        api_fwd_end(f);
        return;
    }
    if (!resp) {
        api_fwd_again(f, "the active controller cannot be reached");
        return;
    }
    arena_init(&arena, 256);
    proto_envelope_resp_init(&r);
    if (proto_envelope_resp_decode(&r, 0, resp, len, &arena) < 0 || r.error_code ||
        r.response_data.len <= 0) {
        arena_destroy(&arena);
        api_fwd_again(f, "the controller did not take the forwarded request");
        return;
    }
    buf_t out;
    buf_init(&out);
    buf_put_i32(&out, r.response_data.len);
    buf_put(&out, r.response_data.p, (size_t)r.response_data.len);
    arena_destroy(&arena);
    net_conn_reply(f->req->conn, &out);
    api_fwd_end(f);
}

static void api_fwd_send(api_fwd_t *f)
{
    proto_envelope_req_t r;
    static const uint8_t host[4] = {127, 0, 0, 1};
    buf_t body;
    if (f->req->conn->closing) {
        api_fwd_end(f);
        return;
    }
    proto_envelope_req_init(&r);
    r.request_data = (proto_bytes_t){f->frame, (int32_t)f->len};
    r.request_principal = (proto_bytes_t){api_fwd_principal, (int32_t)sizeof(api_fwd_principal)};
    r.client_host_address = (proto_bytes_t){host, 4};
    buf_init(&body);
    proto_envelope_req_encode(&r, 0, &body);
    if (f->req->b->forward(f->req->b->forward_ctx, &body, api_fwd_done, f) < 0)
        api_fwd_again(f, "no active controller known");
}

void api_forward(api_req_t *req, const uint8_t *frame, size_t len)
{
    api_fwd_t *f = xcalloc(1, sizeof(*f));
    f->req = req;
    f->frame = frame;
    f->len = len;
    f->until_ms = net_now_mono_ms() + API_FWD_TIMEOUT_MS;
    net_conn_hold(req->conn);
    api_fwd_send(f);
}

/* ---- auto-creation on a quorum's broker ---- */

static void api_fwd_auto_done(void *arg, const uint8_t *resp, size_t len)
{
    (void)resp;
    (void)len;
    free(arg);
}

/* A CreateTopics of topic t (version 7, the broker's own client id),
 * sent to the active controller in an Envelope, as Kafka's broker sends
 * the topics it creates itself; done(arg, resp, len) later with the
 * EnvelopeResponse body (resp NULL when none came). Returns 0, or -1
 * when it could not be sent (done is not called). */
int api_forward_create_topic(api_node_t *b, const proto_create_topics_req_creatable_topic_t *t,
                             void (*done)(void *arg, const uint8_t *resp, size_t len), void *arg)
{
    static const uint8_t host[4] = {127, 0, 0, 1};
    proto_create_topics_req_t ct;
    proto_req_header_t h;
    proto_envelope_req_t env;
    buf_t frame, body;

    proto_create_topics_req_init(&ct);
    ct.topics.n = 1;
    ct.topics.v = (proto_create_topics_req_creatable_topic_t *)t;
    ct.timeout_ms = 30000;
    memset(&h, 0, sizeof(h));
    h.api_key = PROTO_API_CREATE_TOPICS;
    h.api_version = 7;
    h.client_id = PROTO_STR("strand-auto-create");
    buf_init(&frame);
    proto_req_header_encode(&frame, &h);
    proto_create_topics_req_encode(&ct, 7, &frame);
    proto_envelope_req_init(&env);
    env.request_data = (proto_bytes_t){frame.p, (int32_t)frame.len};
    env.request_principal = (proto_bytes_t){api_fwd_principal, (int32_t)sizeof(api_fwd_principal)};
    env.client_host_address = (proto_bytes_t){host, 4};
    buf_init(&body);
    proto_envelope_req_encode(&env, 0, &body);
    buf_free(&frame);
    return b->forward(b->forward_ctx, &body, done, arg);
}

/* A topic a client asked for (auto.create.topics.enable): a CreateTopics
 * of it, with the broker's num.partitions and default.replication.factor;
 * not waited for (the client is told UNKNOWN_TOPIC_OR_PARTITION and
 * asks again, as against Kafka). Returns 0, or -1 when it could not be
 * sent. */
int api_forward_create(api_req_t *req, proto_str_t name)
{
    proto_create_topics_req_creatable_topic_t t;

    proto_create_topics_req_creatable_topic_init(&t);
    t.name = name;
    t.num_partitions = req->b->cfg.num_partitions;
    t.replication_factor = (int16_t)req->b->cfg.default_replication_factor;
    void *token = xcalloc(1, 1);
    if (api_forward_create_topic(req->b, &t, api_fwd_auto_done, token) < 0) {
        free(token);
        return -1;
    }
    return 0;
}
