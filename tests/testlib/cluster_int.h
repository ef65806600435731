/* cluster_int: the cluster harness's own state, shared by cluster.c (the
 * nodes and their lifecycle), cluster_props.c (ports, addresses,
 * properties) and cluster_proc.c (processes). Tests use cluster.h. */
#ifndef STRAND_TESTLIB_CLUSTER_INT_H
#define STRAND_TESTLIB_CLUSTER_INT_H

#include "testlib/cluster.h"

#define TL_CLUSTER_MAX_PROXIES 64

struct tl_cluster {
    char name[64];
    char dir[PATH_MAX / 2]; /* the nodes' dirs are in it */
    tl_quorum quorum;
    int kafka; /* every node runs Apache Kafka (KAFKA_REF) */
    int nnodes;
    tl_node nodes[TL_CLUSTER_MAX];
    char *extra[TL_NODE_MAX_EXTRA]; /* for every node, owned */
    int nextra;
    tl_proxy *proxies[TL_CLUSTER_MAX_PROXIES]; /* owned */
    int nproxies;
    char voters[1024], bootstrap[1024], controllers[1024];
    char cluster_id[23]; /* a shared quorum's, formatted into every node */
};

/* Sets the address node listens on (and is reached by). */
void tl_node_set_host(tl_node *node, const char *host);
/* The KEY=VALUE lines the harness gives node (before the test's extras),
 * into lines[max]; returns the count. Each is a malloc'd string the
 * caller frees. */
int tl_node_props_lines(tl_node *node, char **lines, int max);
/* The node's log file: node.log (strand), server.log (Kafka). */
void tl_node_log_path(const tl_node *node, char *path, size_t size);

/* cluster_proc.c: the process of a node, strand or Kafka. */
void tl_proc_spawn(tl_node *node);
/* Formats a Strand node of a shared quorum before its first start. */
void tl_proc_format(tl_node *node, const char *cluster_id);
void tl_proc_wait_ready(tl_node *node, double timeout_s);
/* SIGTERM and wait: tl_proc_term sends it, tl_proc_reap waits (SIGKILL
 * after 30 s; a Kafka node as long as kafka-ref.sh stop waits) and
 * returns the exit status, -1 when killed; tl_proc_stop does both. */
int tl_proc_stop(tl_node *node);
void tl_proc_term(tl_node *node);
int tl_proc_reap(tl_node *node);
void tl_proc_kill9(tl_node *node);
/* Waits (10 s at most) until pid is stopped (SIGSTOP) or, stopped 0, runs. */
void tl_proc_wait_state(pid_t pid, int stopped);

#endif
