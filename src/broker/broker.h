/* The broker context: the one process-wide object of the top layer. It
 * wires the layers together (config, event loop, log manager, controller,
 * partition layer, listeners, connections) in start-up and shutdown
 * order; request handlers reach what they need through the api_node_t it
 * embeds, never through this. */
#ifndef STRAND_BROKER_H
#define STRAND_BROKER_H

#include <stdint.h>

#include "api/api.h"
#include "broker/broker_boot.h"
#include "broker/broker_config.h"
#include "cluster/raft_reconf.h"
#include "log/log_mgr.h"
#include "net/net_conn.h"
#include "net/net_listener.h"
#include "net/net_loop.h"
#include "partition/part.h"

typedef struct broker_s {
    api_node_t node;             /* what the handlers reach (api/api.h) */
    log_mgr_t *logs;
    struct net_pool_s *pool;     /* work off the loop, or NULL (one CPU) */
    net_listener_t **listeners;
    char **lkeys;         /* listeners[i] serves endpoint lkeys[i] ("NAME host port") */
    int *lkinds;          /* and is of kind lkinds[i] (enum api_listener) */
    char **lnames;        /* every listener name opened since the start (owned; */
    int nlnames;          /* connections point to them) */
    int nlisteners;
    net_conn_t conns;     /* list head of live connections */
    int nconns;
    char hostname[256];   /* for listeners without a host */
    int64_t start_mono_ms;
    int purging;          /* deleted files being removed on a worker */
    net_io_t sigio;       /* signalfd of SIGTERM/SIGINT, fd -1 until open */
    struct raft_net_s *raft_net; /* the quorum's connections (broker_quorum.c) */
    struct broker_life_s *life;  /* a quorum's broker: registration (broker_life.c) */
    int64_t last_epoch;          /* its broker epoch when it stopped, +1 (0: none),
                                    for .kafka_cleanshutdown */
    struct broker_ctlreg_s *ctlreg; /* a quorum's controller: its registration
                                       (broker_ctlreg.c) */
    broker_boot_state_t boot;    /* format's bootstrap checkpoint, read at start */
    raft_voters_hist_t voters;   /* a dynamic quorum's voter sets (broker_quorum.c) */
    buf_t epoch_ctl;             /* the values of the records a first leader writes */
    int64_t voters_next;         /* the committed log is scanned for them up to here */
    raft_reconf_t reconf;        /* its voter changes, on the leader */
    char quorum_host[256];       /* where the others reach this controller */
    int voters_check;            /* broker_quorum_uncommitted is due */
    int update_inflight;         /* this voter's UpdateRaftVoter */
    int64_t update_at;           /* not again before */
    net_timer_id_t reconf_timer;
} broker_t;

/* Starts everything from a loaded config (takes ownership of cfg's
 * contents). Returns 0, or -1 after logging why. */
int broker_start(broker_t *b, broker_config_t *cfg);
/* Runs the loop until SIGTERM/SIGINT, then shuts down cleanly. */
int broker_run(broker_t *b);
/* Makes the open listeners those of b->node.cfg.listeners: closes the ones
 * it no longer names, opens the new ones (a controller listener serves the
 * controller's APIs, the others the broker's). Returns the number that
 * could not be opened (logged). */
int broker_listeners_sync(broker_t *b);
/* Sets the endpoints advertised to clients (node.adv, nadv) from the
 * config and the open listeners. */
void broker_advertise(broker_t *b);
/* The bound port of the open listener named name, else of the first
 * (9092 when none is open). */
int broker_listener_port(const broker_t *b, const char *name);
/* Registers this node as a broker with its own controller, once the
 * listeners are bound (broker_reg.c). Returns 0, or -1 (logged: the node
 * then serves as the cluster's only broker without a registration). */
int broker_register(broker_t *b);
/* The timer that keeps the registration's session fresh. */
void broker_job_heartbeat(struct net_loop_s *loop, void *data);
/* The worker threads b->node.cfg.num_io_threads asks for on this machine (at
 * most one per CPU; none with one CPU, the loop does it all). */
int broker_pool_size(const broker_t *b);

#endif
