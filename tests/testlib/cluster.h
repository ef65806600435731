/* cluster: the multi-process cluster harness of the integration tests.
 *
 * A test describes its nodes (ids, roles, extra keys), the harness gives
 * each a free loopback port per listener, a directory under the test's
 * scratch dir (server.properties, node.log, data/), and builds the quorum
 * voters string from the controllers' ports; then it starts, stops (SIGTERM),
 * kills (SIGKILL), pauses (SIGSTOP), resumes (SIGCONT) and restarts nodes on
 * the same directory and ports. "3 controllers + 3 brokers":
 *
 *     tl_cluster *c = tl_cluster_new("0800-failover", TL_QUORUM_SHARED);
 *     tl_cluster_add_n(c, 3, TL_ROLE_CONTROLLER, NULL);
 *     tl_cluster_add_n(c, 3, TL_ROLE_BROKER, NULL);
 *     tl_cluster_start(c);
 *     ... tl_cluster_bootstrap(c), tl_node_kill9(tl_cluster_node(c, 1)) ...
 *     tl_cluster_stop(c);   (every node must exit 0 on SIGTERM)
 *     tl_cluster_free(c);
 *
 * TL_QUORUM_SOLO makes every node a combined node that is its own quorum of
 * one: what Strand runs today, and what KAFKA_REF=1 runs (through
 * scripts/kafka-ref.sh). No process is ever left behind: a node dies with
 * the test (PR_SET_PDEATHSIG, so a crash or a timeout of the test kills it
 * too), tl_fail and tl_skip kill every node after printing the tail of each
 * node's log, and run-tests.sh kills the Kafka nodes of a test it timed out.
 * Nodes are started from the test's main thread (the parent-death signal is
 * tied to the thread that forks).
 *
 * Links between nodes or in front of a node go through a fault-injecting
 * proxy (testlib/proxy.h): tl_node_front and tl_cluster_link set the
 * addresses the nodes use so their traffic passes it. tests/README.md tells
 * how to write a cluster test. */
#ifndef STRAND_TESTLIB_CLUSTER_H
#define STRAND_TESTLIB_CLUSTER_H

#include <limits.h>
#include <sys/types.h>

#include "testlib/proxy.h"

#define TL_ROLE_BROKER 1
#define TL_ROLE_CONTROLLER 2
#define TL_ROLE_COMBINED (TL_ROLE_BROKER | TL_ROLE_CONTROLLER)

#define TL_CLUSTER_MAX 16
#define TL_NODE_MAX_EXTRA 32

typedef enum tl_quorum {
    TL_QUORUM_SHARED, /* one quorum: every controller is a voter */
    TL_QUORUM_SOLO,   /* each node a combined node, its own quorum of one */
} tl_quorum;

typedef struct tl_cluster tl_cluster;

typedef struct tl_node {
    tl_cluster *cluster;
    int id;       /* node.id, 1.. in the order added */
    int roles;    /* TL_ROLE_* */
    int port;     /* broker listener (PLAINTEXT); 0 without the broker role */
    int cport;    /* controller listener (CONTROLLER); 0 without the role */
    int adv_port; /* advertised broker port: port, or a proxy's in front */
    pid_t pid;    /* 0 when not running */
    int paused;
    int kafka;  /* run through scripts/kafka-ref.sh */
    int starts; /* how many times started */
    char host[32];  /* the address it listens on: 127.0.0.1, or its netns's */
    char netns[32]; /* its network namespace ("": the test's) */
    char dir[PATH_MAX];
    char bootstrap[64];  /* host:adv_port ("" without the broker role) */
    char controller[64]; /* host:cport ("" without the controller role) */
    /* The port this node dials for voter i + 1 (0: that voter's cport). */
    int link_port[TL_CLUSTER_MAX];
    char *extra[TL_NODE_MAX_EXTRA]; /* KEY=VALUE lines, owned */
    int nextra;
} tl_node;

/* A cluster named name (its directory is a fresh scratch dir). Caller owns
 * it: tl_cluster_free. Registers the end handler that prints the nodes'
 * logs and kills them when the test fails. */
tl_cluster *tl_cluster_new(const char *name, tl_quorum quorum);
/* Kills what still runs (no check of exit status), frees the proxies of
 * tl_node_front and tl_cluster_link and c. */
void tl_cluster_free(tl_cluster *c);

/* Adds a node with the next id, roles (under TL_QUORUM_SOLO always
 * combined), its ports chosen now (so voters strings and proxies can be set
 * up before anything starts), and extra KEY=VALUE lines (NULL-terminated,
 * copied; they come after the harness's own and so override them). */
tl_node *tl_cluster_add(tl_cluster *c, int roles, const char *const *extra);
void tl_cluster_add_n(tl_cluster *c, int n, int roles, const char *const *extra);
/* One more KEY=VALUE line for node (copied); takes effect at its next start. */
void tl_node_set(tl_node *node, const char *kv);
/* A KEY=VALUE line for every node, present and added later. */
void tl_cluster_set(tl_cluster *c, const char *kv);

int tl_cluster_size(const tl_cluster *c);
/* The node of id (1..), failing the test if there is none. */
tl_node *tl_cluster_node(tl_cluster *c, int id);
/* "1@127.0.0.1:P1,2@127.0.0.1:P2,...": every controller, by cport. */
const char *tl_cluster_voters(tl_cluster *c);
/* Every broker's advertised address, comma separated (bootstrap.servers). */
const char *tl_cluster_bootstrap(tl_cluster *c);
/* Every controller's address, comma separated (--bootstrap-controller). */
const char *tl_cluster_controllers(tl_cluster *c);
/* The directory of the cluster (the nodes' dirs are in it: node-ID). */
const char *tl_cluster_dir(const tl_cluster *c);

/* Starts every node that is not running, all first, then waits for each
 * to listen: nodes of a quorum come up together. */
void tl_cluster_start(tl_cluster *c);
/* SIGTERM to every running node, waits; fails the test when one does not
 * exit 0 (a clean shutdown is part of every test). */
void tl_cluster_stop(tl_cluster *c);

/* Writes the properties, starts node (on its dir and ports, data kept) and
 * waits until it listens. */
void tl_node_start(tl_node *node);
/* The start without the wait, and the wait: the broker listener (the
 * controller listener on a controller-only node) accepts a connection
 * within timeout_s, and the node has not exited. */
void tl_node_spawn(tl_node *node);
void tl_node_wait_listening(tl_node *node, double timeout_s);
/* SIGTERM and wait (SIGKILL after 30 s); returns the exit status, -1 when
 * killed by a signal. A paused node is resumed first. */
int tl_node_stop(tl_node *node);
/* SIGKILL and wait until it is gone. */
void tl_node_kill9(tl_node *node);
/* SIGSTOP / SIGCONT, returning once the node is stopped / running. */
void tl_node_pause(tl_node *node);
void tl_node_resume(tl_node *node);
/* tl_node_stop (failing the test unless it exits 0) then tl_node_start. */
void tl_node_restart(tl_node *node);
int tl_node_running(tl_node *node);

/* Puts a proxy (testlib/proxy.h) in front of node's broker listener: the
 * node advertises the proxy's port, so every client connection goes through
 * it. Call before the node starts. The cluster owns the proxy. */
tl_proxy *tl_node_front(tl_node *node);
/* A proxy on the link from node `from` to controller `to`: from's voters
 * string names the proxy for to (the other nodes dial to directly). Call
 * before from starts. The cluster owns the proxy. */
tl_proxy *tl_cluster_link(tl_cluster *c, tl_node *from, tl_node *to);

/* Prints the last `lines` lines of every node's log to stderr. */
void tl_cluster_dump_logs(tl_cluster *c, int lines);

/* For cluster_props.c: the properties file of node, written anew. */
void tl_node_write_props(tl_node *node);
/* A free loopback port below the ephemeral range (a restarted node binds
 * it again; an outgoing connection cannot have taken it meanwhile), not
 * one of the cluster's own. */
int tl_cluster_free_port(tl_cluster *c);

#endif
