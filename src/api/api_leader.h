/* The current leader a NOT_LEADER_OR_FOLLOWER or FENCED_LEADER_EPOCH
 * answer names (KIP-951): Produce v10+ and Fetch v12+ carry the
 * partition's leader and leader epoch as the metadata image has them,
 * and the leader's endpoint in NodeEndpoints (Produce v10+, Fetch v16+),
 * so that a client goes to the new leader without a Metadata round. */
#ifndef STRAND_API_LEADER_H
#define STRAND_API_LEADER_H

#include <stdbool.h>
#include <stdint.h>

#include "api/api.h"
#include "api/api_brokers.h"

typedef struct api_leader_s {
    int32_t leader_id;    /* -1: unknown */
    int32_t leader_epoch; /* -1: unknown */
    bool has_endpoint;    /* ep is the alive leader's, at this listener */
    api_broker_t ep;
} api_leader_t;

/* Whether err is one of the errors Kafka gives the current leader with. */
static inline bool api_leader_err(int16_t err)
{
    return err == 6 /* NOT_LEADER_OR_FOLLOWER */ || err == 74 /* FENCED_LEADER_EPOCH */;
}

/* The leader of partition of the topic with id topic_id (or, when NULL,
 * named name/len) in this node's metadata image. 0 when the image has a
 * leader, else -1 (l then holds -1s). */
int api_leader_get(api_req_t *req, const uint8_t *topic_id, const char *name, size_t len,
                   int32_t partition, api_leader_t *l);

#endif
