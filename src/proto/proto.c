/* Request and response headers.
 *
 * Request header v1:  api_key int16, api_version int16, correlation_id
 *                     int32, client_id int16-length nullable string
 * Request header v2:  v1 + tagged-field section (client_id keeps its
 *                     int16 length)
 * Response header v0: correlation_id int32
 * Response header v1: v0 + tagged-field section (0x00 when empty)
 * The layouts are the RequestHeader/ResponseHeader of protocol/header.def;
 * this file only picks the version. */
#include "proto/proto.h"

#include "proto/proto_desc.h"

int proto_is_flexible(int16_t api_key, int16_t version)
{
    const proto_api_info_t *api = proto_api_info(api_key);
    return api && api->flex_min >= 0 && version >= api->flex_min;
}

/* The header version a request of (key, version) carries. An ApiVersions
 * request newer than ours is read as v1 (KIP-511): its body is ignored
 * and answered with the v0 fallback. */
static int16_t req_header_version(int16_t api_key, int16_t api_version)
{
    if (api_key == PROTO_API_API_VERSIONS) {
        const proto_api_info_t *api = proto_api_info(api_key);
        if (api_version > api->max_ver)
            return 1;
    }
    return proto_is_flexible(api_key, api_version) ? 2 : 1;
}

int proto_req_header_decode(proto_req_header_t *h, const uint8_t *buf,
                            size_t len, size_t *hdr_len)
{
    proto_request_header_t rh;
    if (len < 4)
        return -1;
    int16_t key = (int16_t)((buf[0] << 8) | buf[1]);
    int16_t ver = (int16_t)((buf[2] << 8) | buf[3]);
    if (proto_msg_decode(&proto_msg_request_header, &rh,
                         req_header_version(key, ver), buf, len, NULL, hdr_len))
        return -1;
    h->api_key = rh.request_api_key;
    h->api_version = rh.request_api_version;
    h->correlation_id = rh.correlation_id;
    h->client_id = rh.client_id;
    return 0;
}

void proto_req_header_encode(buf_t *out, const proto_req_header_t *h)
{
    proto_request_header_t rh = {
        .request_api_key = h->api_key,
        .request_api_version = h->api_version,
        .correlation_id = h->correlation_id,
        .client_id = h->client_id,
    };
    proto_request_header_encode(&rh, req_header_version(h->api_key, h->api_version),
                                out);
}

void proto_resp_header_encode(buf_t *out, int16_t api_key, int16_t api_version,
                              int32_t correlation_id)
{
    buf_put_i32(out, correlation_id);
    if (api_key != PROTO_API_API_VERSIONS && proto_is_flexible(api_key, api_version))
        buf_put_i8(out, 0); /* empty tagged-field section */
}
