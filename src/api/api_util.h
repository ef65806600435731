/* Small helpers shared by the data-plane handlers. */
#ifndef STRAND_API_UTIL_H
#define STRAND_API_UTIL_H

#include "api/api.h"
#include "util/kerr.h"

#include <string.h>

/* Kafka's check of a client's current_leader_epoch against ours: -1 skips
 * it, an older one is fenced, a newer one is not known yet. */
static inline int16_t api_check_epoch(const part_t *part, int32_t current)
{
    if (current < 0 || current == part->leader_epoch)
        return KERR_NONE;
    return current < part->leader_epoch ? KERR_FENCED_LEADER_EPOCH : KERR_UNKNOWN_LEADER_EPOCH;
}

/* Authorized operations (KIP-430) as Kafka reports them without an
 * authorizer: every operation the resource type supports, as a bit field
 * of AclOperation codes. Topic: READ 3, WRITE 4, CREATE 5, DELETE 6,
 * ALTER 7, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11. Cluster:
 * CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10,
 * ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12. */
#define API_TOPIC_AUTHORIZED_OPS 0x0df8
#define API_CLUSTER_AUTHORIZED_OPS 0x1fa0

/* Why transactional ids are refused (FindCoordinator, InitProducerId):
 * there is no transaction coordinator yet. */
#define API_TXN_UNSUPPORTED_MSG                                                                    \
    "Transactions are not supported by this broker: Strand has no transaction coordinator "      \
    "yet (idempotent producers work)"

/* Kafka's internal topics (Topic.isInternal). */
static inline int api_internal_topic(proto_str_t n)
{
    return (n.len == 18 && !memcmp(n.p, "__consumer_offsets", 18)) ||
           (n.len == 19 && !memcmp(n.p, "__transaction_state", 19));
}

/* The partition of a request that touches its log, found as Kafka's
 * ReplicaManager.getPartitionOrError finds it: UNKNOWN_TOPIC_OR_PARTITION
 * when topic (may be NULL) has no such partition, KAFKA_STORAGE_ERROR when
 * its log is offline here (part_offline), else 0 with *part set. Kafka
 * checks this before anything else about the partition (leader epoch,
 * offsets, the records), so callers do too. */
static inline int16_t api_part_online(topic_t *topic, int32_t index, part_t **part)
{
    *part = NULL;
    if (!topic || index < 0 || index >= topic->nparts)
        return KERR_UNKNOWN_TOPIC_OR_PARTITION;
    if (part_offline(topic->parts[index]))
        return KERR_KAFKA_STORAGE_ERROR;
    *part = topic->parts[index];
    return KERR_NONE;
}

/* api_part_online with the topic looked up by name. */
static inline int16_t api_part_online_by_name(api_req_t *req, proto_str_t topic, int32_t index,
                                              part_t **part)
{
    topic_t *t = topic.len < 0 ? NULL : part_topic_get(req->b->reg, topic.p, (size_t)topic.len);
    return api_part_online(t, index, part);
}

#endif
