/* Where a consumer reads (KIP-392): with replica.selector.class set to
 * Kafka's org.apache.kafka.common.replica.RackAwareReplicaSelector, a
 * leader sends a consumer that names its rack (client.rack) to a replica
 * in that rack, as Kafka's ReplicaManager.findPreferredReadReplica and
 * that selector choose one. Unset (Kafka's default), every consumer reads
 * from the leader. */
#ifndef STRAND_PARTITION_PART_SELECT_H
#define STRAND_PARTITION_PART_SELECT_H

#include <stdint.h>

#include "partition/part.h"

/* Reads replica.selector.class from the registry's server.properties. */
void part_select_init(part_reg_t *reg);
/* The replica a consumer of rack (rack_len bytes; 0: no rack) reading
 * part from fetch_offset should read from instead of this leader, or -1:
 * here. A replica qualifies when its broker is registered and unfenced,
 * in the client's rack, and has the offset (its log start at or below it,
 * its log end at or above it); of those the one furthest along, then the
 * one caught up most recently. The leader itself in the client's rack, or
 * no replica there, is -1. */
int32_t part_select_replica(const part_reg_t *reg, part_t *part, const char *rack,
                            int32_t rack_len, int64_t fetch_offset, int64_t now_ms);

#endif
