/* api_pview: a partition as clients are shown it, the one picture behind
 * Metadata's and DescribeTopicPartitions' partition entries (their
 * generated structs differ only in DescribeTopicPartitions' ELR fields,
 * so API_PVIEW_SET copies the view into either, and API_PVIEW_SET_ELR
 * those fields into DescribeTopicPartitions'). */
#ifndef STRAND_API_PVIEW_H
#define STRAND_API_PVIEW_H

#include "api/api.h"
#include "cluster/meta_image.h"

typedef struct api_pview_s {
    /* Metadata's: LEADER_NOT_AVAILABLE without a leader, LISTENER_NOT_FOUND
     * when the leader has no endpoint of the request's listener */
    int16_t error_code;
    int32_t leader_id, leader_epoch;
    proto_int32_array_t replica_nodes, isr_nodes, offline_replicas;
    proto_int32_array_t elr, last_elr; /* DescribeTopicPartitions' only */
} api_pview_t;

/* Partition i of topic, from mt (the image of a quorum's cluster, NULL
 * otherwise) when it has it, else from this node's own partition, as
 * Kafka shows it to a client of req's listener: a leader without an
 * endpoint of it is none (-1); the replicas that are not registered,
 * fenced or without such an endpoint are offline. The arrays point into
 * req's arena or the image. 0 when neither has it (v untouched). */
int api_pview_get(api_req_t *req, const topic_t *topic, const mi_topic_t *mt, int32_t i,
                  api_pview_t *v);

/* Whether broker id can be named to a client of req's listener: it has
 * an endpoint of it (this single node: advertises one), and with alive
 * it is registered and not fenced. */
int api_pview_reachable(api_req_t *req, int32_t id, int alive);

/* The view into a generated partition entry p (its error code apart). */
#define API_PVIEW_SET(p, v)                                                                        \
    do {                                                                                           \
        (p)->leader_id = (v)->leader_id;                                                           \
        (p)->leader_epoch = (v)->leader_epoch;                                                     \
        (p)->replica_nodes = (v)->replica_nodes;                                                   \
        (p)->isr_nodes = (v)->isr_nodes;                                                           \
        (p)->offline_replicas = (v)->offline_replicas;                                             \
    } while (0)
#define API_PVIEW_SET_ELR(p, v)                                                                    \
    do {                                                                                           \
        (p)->eligible_leader_replicas = (v)->elr;                                                  \
        (p)->last_known_elr = (v)->last_elr;                                                       \
    } while (0)

#endif
