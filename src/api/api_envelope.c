/* Envelope (58) on a quorum's controller listener: a request a broker
 * forwarded (api_forward.c), run here as if its client had sent it to
 * this controller, its answer returned whole in the EnvelopeResponse.
 * A request this listener does not serve, or at a version it does not
 * take, is refused in the envelope (INVALID_REQUEST, UNSUPPORTED_VERSION),
 * as Kafka's controller refuses it. The principal is not used: Strand
 * has no authorizer. */
#include <string.h>

#include "api/api.h"
#include "util/kerr.h"

typedef struct api_env_s {
    api_req_t *outer;
} api_env_t;

static void api_env_answer(api_req_t *outer, int16_t err, const uint8_t *data, size_t len)
{
    proto_envelope_resp_t resp;
    proto_envelope_resp_init(&resp);
    resp.error_code = err;
    if (data)
        resp.response_data = (proto_bytes_t){data, (int32_t)len};
    API_REPLY(outer, envelope, &resp);
}

/* The inner request's answer, size prefix and all: the envelope takes
 * the header and body. */
static void api_env_reply(void *arg, buf_t *out)
{
    api_env_t *env = arg;
    api_env_answer(env->outer, KERR_NONE, out->p + 4, out->len - 4);
    buf_free(out);
}

void api_envelope(api_req_t *req)
{
    proto_envelope_req_t r;
    size_t hdr_len = 0;
    proto_envelope_req_init(&r);
    if (proto_envelope_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                  req->arena) < 0 || r.request_data.len <= 0) {
        api_close(req, "malformed Envelope request");
        return;
    }
    api_req_t *in = arena_calloc(req->arena, 1, sizeof(*in));
    api_env_t *env = arena_calloc(req->arena, 1, sizeof(*env));
    uint8_t *frame = arena_alloc(req->arena, (size_t)r.request_data.len);
    memcpy(frame, r.request_data.p, (size_t)r.request_data.len);
    env->outer = req;
    *in = *req;
    in->env_reply = api_env_reply;
    in->env = env;
    if (proto_req_header_decode(&in->hdr, frame, (size_t)r.request_data.len, &hdr_len) < 0) {
        api_env_answer(req, KERR_INVALID_REQUEST, NULL, 0);
        return;
    }
    in->body = frame + hdr_len;
    in->body_len = (size_t)r.request_data.len - hdr_len;
    const api_entry_t *e = api_entry_find(in->hdr.api_key);
    if (!e || e->key == 58 || !api_entry_served(e, in->kind)) {
        api_env_answer(req, KERR_INVALID_REQUEST, NULL, 0);
        return;
    }
    if (in->hdr.api_version < e->min_ver || in->hdr.api_version > e->max_ver) {
        api_env_answer(req, KERR_UNSUPPORTED_VERSION, NULL, 0);
        return;
    }
    e->handler(in);
}
