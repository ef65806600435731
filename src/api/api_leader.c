/* api_leader: see api_leader.h. */
#include "api/api_leader.h"

#include "cluster/meta_image.h"
#include "partition/part.h"

int api_leader_get(api_req_t *req, const uint8_t *topic_id, const char *name, size_t len,
                   int32_t partition, api_leader_t *l)
{
    const meta_image_t *img = &req->b->reg->meta->img;
    const mi_topic_t *mt = topic_id ? meta_image_topic_by_id(img, topic_id)
                                    : meta_image_topic(img, name, len);

    l->leader_id = l->leader_epoch = -1;
    l->has_endpoint = false;
    if (!mt || partition < 0 || partition >= mt->nparts || !mt->parts[partition].present ||
        mt->parts[partition].leader < 0)
        return -1;
    l->leader_id = mt->parts[partition].leader;
    l->leader_epoch = mt->parts[partition].leader_epoch;
    l->has_endpoint = api_broker_alive(req, l->leader_id, &l->ep) == 0;
    return 0;
}
