/* wire: see wire.h. */
#include "testlib/wire.h"

#include <stdlib.h>
#include <string.h>

static const char *tl_wire_client = "strand-test";
static size_t tl_wire_client_len = 11;
static int32_t tl_wire_corr = 100;

void tl_wire_set_client_id(const char *id)
{
    tl_wire_set_client_id_len(id, strlen(id));
}

void tl_wire_set_client_id_len(const char *id, size_t len)
{
    tl_wire_client = id;
    tl_wire_client_len = len;
}

int32_t tl_wire_send(int fd, int16_t key, int16_t ver, buf_t *body)
{
    proto_req_header_t h = {key, ver, tl_wire_corr++, PROTO_STR("")};
    buf_t out;

    h.client_id.p = tl_wire_client;
    h.client_id.len = (int32_t)tl_wire_client_len;
    buf_init(&out);
    buf_put_i32(&out, 0);
    proto_req_header_encode(&out, &h);
    buf_put(&out, body->p, body->len);
    buf_set_i32(&out, 0, (int32_t)(out.len - 4));
    TL_ASSERT(tl_send_all(fd, out.p, out.len) == 0, "api %d v%d: send failed", key, ver);
    buf_free(&out);
    buf_free(body);
    buf_init(body);
    return h.correlation_id;
}

const uint8_t *tl_wire_recv(int fd, int16_t key, int16_t ver, int32_t corr, arena_t *arena,
                            size_t *len)
{
    uint8_t *frame;
    int n = tl_recv_frame(fd, &frame, 20000);
    /* Response header v1 (a tagged section) when flexible, but ApiVersions
     * always answers with v0. */
    size_t hl = 4 + (key != 18 && proto_is_flexible(key, ver) ? 1 : 0);

    TL_ASSERT(n >= (int)hl, "api %d v%d: no answer", key, ver);
    TL_ASSERT(tl_get_i32(frame) == corr, "api %d v%d: answer to request %d, not %d", key, ver,
              tl_get_i32(frame), corr);
    uint8_t *body = arena_alloc(arena, (size_t)n - hl + 1);
    memcpy(body, frame + hl, (size_t)n - hl);
    free(frame);
    *len = (size_t)n - hl;
    return body;
}

proto_str_t tl_wire_str(const char *s)
{
    proto_str_t p = {s, s ? (int32_t)strlen(s) : -1};
    return p;
}

void tl_wire_metadata(int fd, arena_t *arena, int16_t ver, const char *topic, int auto_create,
                      proto_metadata_resp_t *resp)
{
    proto_metadata_req_t r;
    proto_metadata_req_metadata_request_topic_t t;
    proto_metadata_req_init(&r);
    proto_metadata_req_metadata_request_topic_init(&t);
    t.name = tl_wire_str(topic);
    r.topics.n = 1;
    r.topics.v = &t;
    r.allow_auto_topic_creation = auto_create != 0;
    TL_WIRE_CALL(fd, arena, metadata, 3, ver, &r, resp);
}
