/* api_pview: a partition as clients are shown it, the one picture behind
 * Metadata's and DescribeTopicPartitions' partition entries (their
 * generated structs differ only in DescribeTopicPartitions' ELR fields,
 * so API_PVIEW_SET copies the view into either). */
#ifndef STRAND_API_PVIEW_H
#define STRAND_API_PVIEW_H

#include "api/api.h"
#include "cluster/meta_image.h"

typedef struct api_pview_s {
    int16_t error_code; /* LEADER_NOT_AVAILABLE without a leader: Metadata's */
    int32_t leader_id, leader_epoch;
    proto_int32_array_t replica_nodes, isr_nodes, offline_replicas;
} api_pview_t;

/* Partition i of topic, from mt (the image of a quorum's cluster, NULL
 * otherwise) when it has it, else from this node's own partition. The
 * arrays point into req's arena or the image. 0 when neither has it (v
 * untouched). */
int api_pview_get(api_req_t *req, const topic_t *topic, const mi_topic_t *mt, int32_t i,
                  api_pview_t *v);

/* The view into a generated partition entry p (its error code apart). */
#define API_PVIEW_SET(p, v)                                                                        \
    do {                                                                                           \
        (p)->leader_id = (v)->leader_id;                                                           \
        (p)->leader_epoch = (v)->leader_epoch;                                                     \
        (p)->replica_nodes = (v)->replica_nodes;                                                   \
        (p)->isr_nodes = (v)->isr_nodes;                                                           \
        (p)->offline_replicas = (v)->offline_replicas;                                             \
    } while (0)

#endif
