/* kraft: what the quorum tests ask a controller over its controller
 * listener, with the generated codecs: DescribeQuorum (who leads, at which
 * epoch, each voter's log end and last fetch), and a cluster-wide broker
 * config (log.retention.ms of the default broker resource) set with
 * IncrementalAlterConfigs and read back with DescribeConfigs, the
 * smallest change that commits through the quorum; and what the cluster
 * tests ask any node: DescribeCluster (the active controller, each
 * broker fenced or not), CreateTopics, a topic's Metadata. Each call opens
 * its own connection and arena, so a test holds no protocol state. */
#ifndef STRAND_TESTLIB_KRAFT_H
#define STRAND_TESTLIB_KRAFT_H

#include <stddef.h>
#include <stdint.h>

#include "testlib/cluster.h"

typedef struct tl_kraft_view {
    int16_t err; /* the top-level error, else the partition's */
    int32_t leader, epoch;
    int64_t hw;
    int nvoters, nnodes;
    int64_t end[TL_CLUSTER_MAX + 1], fetch[TL_CLUSTER_MAX + 1]; /* by voter id */
} tl_kraft_view;

/* DescribeQuorum v2 of __cluster_metadata-0 at node; 0, or -1 when the
 * node cannot be reached. */
int tl_kraft_describe(tl_node *node, tl_kraft_view *v);
/* Starts every node of c, waits (60 s at most) for a leader, logs the
 * time it took from the start and from when all listen, and waits until
 * every voter has caught up: the leader, v its view then. */
int tl_kraft_start(tl_cluster *c, tl_kraft_view *v);
/* kill -9 of leader, whose view v is: waits (60 s at most) for another
 * leader at a higher epoch and logs the failover time; the new leader, v
 * its view then. */
int tl_kraft_failover(tl_cluster *c, int leader, tl_kraft_view *v);
/* The running, unpaused node that describes itself as the leader at an
 * epoch above min_epoch, within timeout_s; 0 when none. */
int tl_kraft_find_leader(tl_cluster *c, int32_t min_epoch, double timeout_s, tl_kraft_view *out);
/* A new leader shows high watermark -1 until a majority has fetched in
 * its epoch: waits (10 s at most) until leader knows it; v gets its view. */
void tl_kraft_wait_hw(tl_cluster *c, int leader, tl_kraft_view *v);
/* Waits until the leader sees voter id's log end at its high watermark. */
void tl_kraft_wait_caught_up(tl_cluster *c, int id, double timeout_s);

/* Sets log.retention.ms = value on the cluster-wide broker default through
 * node: the resource's error code. */
int16_t tl_kraft_alter_default(tl_node *node, const char *value);
/* The same, retried while the answer is NOT_CONTROLLER (a new leader takes
 * changes once it has applied its predecessors' records), 5 s at most. */
int16_t tl_kraft_alter_default_retry(tl_node *node, const char *value);
/* DescribeConfigs v4 at addr of key of resource (type, name): out gets
 * its value ("" when none); returns the resource's error. */
int16_t tl_kraft_describe_config(const char *addr, int8_t type, const char *name,
                                 const char *key, char *out, size_t cap);
/* The cluster-wide log.retention.ms as node describes it ("" if unset). */
void tl_kraft_describe_default(tl_node *node, char *out, size_t cap);
/* Every running, unpaused controller describes log.retention.ms = want
 * within 10 s, or the test fails. */
void tl_kraft_wait_default(tl_cluster *c, const char *want);

/* A cluster as one node's DescribeCluster describes it. */
typedef struct tl_kraft_nodes {
    int16_t err;
    int32_t controller; /* the active controller's id, -1 when none */
    int n;              /* how many nodes it lists */
    int state[TL_CLUSTER_MAX + 1]; /* by id: 0 unfenced, 1 fenced, -1 not listed */
} tl_kraft_nodes;

/* DescribeCluster at node: v2 with the fenced brokers on its broker
 * listener (controllers 0), or v1 of the controllers (endpoint type 2) on
 * its controller listener (controllers 1). 0, or -1 when the node cannot
 * be reached. */
int tl_kraft_describe_cluster(tl_node *node, int controllers, tl_kraft_nodes *out);
/* The active controller as the first running, unpaused controller that
 * answers names it; 0 when none does. */
int tl_kraft_active_controller(tl_cluster *c);
/* Waits until broker id is (fenced 1) or is not (0) fenced as via
 * describes it: the seconds it took; the test fails after timeout_s. */
double tl_kraft_wait_fenced(tl_node *via, int id, int fenced, double timeout_s);

/* CreateTopics v7 of one topic at addr (a controller listener, or a
 * broker's, which forwards it): the topic's error code. */
int16_t tl_kraft_create_topic(const char *addr, const char *name, int32_t partitions,
                              int16_t replication);
/* DeleteTopics v6 of one topic by name at addr: the topic's error code. */
int16_t tl_kraft_delete_topic(const char *addr, const char *name);

#define TL_KRAFT_MAX_PARTS 16
/* A topic as one broker's Metadata describes it. */
typedef struct tl_kraft_topic {
    int npart; /* 0 when not listed, or listed with an error */
    int32_t leader[TL_KRAFT_MAX_PARTS];
    int nrep[TL_KRAFT_MAX_PARTS];
    int32_t rep[TL_KRAFT_MAX_PARTS][TL_CLUSTER_MAX];
    int nisr[TL_KRAFT_MAX_PARTS];
    int32_t isr[TL_KRAFT_MAX_PARTS][TL_CLUSTER_MAX];
} tl_kraft_topic;

/* Metadata v12 of topic (no auto-creation) at node's broker listener; 0,
 * or -1 when the node cannot be reached. */
int tl_kraft_metadata(tl_node *node, const char *topic, tl_kraft_topic *out);

/* Kafka's __consumer_offsets partition of a group among n:
 * Utils.abs(String.hashCode()) % n (a negative hash's magnitude), for an
 * ASCII group id. */
int32_t tl_kraft_group_partition(const char *group, int32_t n);
/* A failure test's start: tl_kraft_start, every broker unfenced, then
 * topic (nparts partitions, rf replicas) created through the first
 * broker, the test failing on any error. Returns the first broker's id. */
int tl_kraft_start_topic(tl_cluster *c, const char *topic, int32_t nparts, int16_t rf);
/* For the failure tests, over whichever brokers run. A running, unpaused
 * node with the broker role other than skip (-1: any); the test fails
 * when there is none. */
tl_node *tl_kraft_other(tl_cluster *c, int skip);
/* Whether every one of topic's nparts partitions has a leader and an ISR
 * of n, as a running broker's Metadata describes them. */
int tl_kraft_isr_whole(tl_cluster *c, const char *topic, int nparts, int n);
/* The leader of topic-p as a running broker describes it, -1 if none. */
int32_t tl_kraft_leader_of(tl_cluster *c, const char *topic, int32_t p);
/* Whether broker id is fenced, as another running broker describes it. */
int tl_kraft_is_fenced(tl_cluster *c, int id);
#endif
