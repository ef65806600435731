/* The broker context: the one process-wide object. It wires the layers
 * together (config, event loop, log manager, partition registry,
 * listeners, connections); request handlers reach everything through it. */
#ifndef STRAND_BROKER_H
#define STRAND_BROKER_H

#include <stdint.h>

#include "broker/broker_config.h"
#include "log/log_mgr.h"
#include "net/net_conn.h"
#include "net/net_listener.h"
#include "net/net_loop.h"
#include "partition/part.h"

typedef struct broker_s {
    broker_config_t cfg;
    net_loop_t *loop;
    log_mgr_t *logs;
    struct ctl_s *ctl;           /* the controller: the metadata log's owner */
    part_reg_t *reg;
    struct fsess_cache_s *fsess; /* incremental fetch sessions (api_fsess.h) */
    struct grp_coord_s *grp;     /* the group coordinator (api_group.h) */
    int grp_topic_pending;       /* __consumer_offsets is being created */
    struct net_pool_s *pool;     /* work off the loop, or NULL (one CPU) */
    net_listener_t **listeners;
    int nlisteners;
    net_conn_t conns;     /* list head of live connections */
    int nconns;
    char cluster_id[23];
    char hostname[256];   /* for listeners without a host */
    int64_t start_mono_ms;
    int stopping;
    net_io_t sigio;       /* signalfd of SIGTERM/SIGINT, fd -1 until open */

} broker_t;

/* Starts everything from a loaded config (takes ownership of cfg's
 * contents). Returns 0, or -1 after logging why. */
int broker_start(broker_t *b, broker_config_t *cfg);
/* Runs the loop until SIGTERM/SIGINT, then shuts down cleanly. */
int broker_run(broker_t *b);
/* Host and port advertised for clients (first advertised non-controller
 * listener). */
void broker_advertised(broker_t *b, const char **host, int *port);

#endif
