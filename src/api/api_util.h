/* Small helpers shared by the data-plane handlers. */
#ifndef STRAND_API_UTIL_H
#define STRAND_API_UTIL_H

#include "api/api.h"
#include "util/kerr.h"

#include <string.h>

/* Authorized operations (KIP-430) as Kafka reports them without an
 * authorizer: every operation the resource type supports, as a bit field
 * of AclOperation codes. Topic: READ 3, WRITE 4, CREATE 5, DELETE 6,
 * ALTER 7, DESCRIBE 8, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11. Cluster:
 * CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10,
 * ALTER_CONFIGS 11, IDEMPOTENT_WRITE 12. */
#define API_TOPIC_AUTHORIZED_OPS 0x0df8
#define API_CLUSTER_AUTHORIZED_OPS 0x1fa0

/* Kafka's internal topics (Topic.isInternal). */
static inline int api_internal_topic(proto_str_t n)
{
    return (n.len == 18 && !memcmp(n.p, "__consumer_offsets", 18)) ||
           (n.len == 19 && !memcmp(n.p, "__transaction_state", 19));
}

#endif
