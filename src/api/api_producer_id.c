/* InitProducerId (key 22) for idempotent producers. Transactional ids
 * need the transaction coordinator, which this broker does not run yet:
 * they are refused as FindCoordinator refuses their keys (see
 * api_group.c), so that a transactional producer fails at once. */
#include <errno.h>
#include <string.h>

#include "api/api.h"
#include "util/kerr.h"
#include "util/logging.h"

void api_init_producer_id(api_req_t *req)
{
    proto_init_producer_id_req_t r;
    proto_init_producer_id_resp_t resp;

    proto_init_producer_id_req_init(&r);
    if (proto_init_producer_id_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                          req->arena) < 0) {
        api_close(req, "malformed InitProducerId request");
        return;
    }
    proto_init_producer_id_resp_init(&resp);
    if (r.transactional_id.len >= 0) {
        resp.error_code = KERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED;
        resp.producer_epoch = -1;
        API_REPLY(req, init_producer_id, &resp);
        return;
    }
    /* Without a transactional id Kafka hands out a fresh id at epoch 0,
     * also when the client names its old id (KIP-360 epoch bumps are for
     * transactional producers). */
    int64_t pid = broker_next_producer_id(req->b);
    if (pid < 0) {
        lg_error("cannot allocate a producer id: %s", strerror(errno));
        resp.error_code = KERR_KAFKA_STORAGE_ERROR;
        resp.producer_epoch = -1;
    } else {
        resp.producer_id = pid;
        resp.producer_epoch = 0;
    }
    API_REPLY(req, init_producer_id, &resp);
}
