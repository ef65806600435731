/* The transaction coordinator's host (txn_log.c: env, writes, replay,
 * leadership, timers; txn_log_mk.c: the markers), shared by those two
 * files only. */
#ifndef STRAND_COORD_TXN_LOG_INT_H
#define STRAND_COORD_TXN_LOG_INT_H

#include "cluster/ctl.h"
#include "coord/coord_replay.h"
#include "coord/txn_log.h"
#include "partition/part_peer.h"

#define TXN_LOG_TOPIC_LEN (sizeof(TXN_TOPIC) - 1)

typedef struct txn_log_s {
    net_loop_t *loop;
    part_reg_t *reg;
    ctl_t *ctl;
    txn_log_config_t cfg;
    txn_coord_t *coord;
    int32_t nparts;
    bool *led;
    bool *load_want;
    int32_t load_part; /* -1: none */
    coord_replay_t load;
    net_timer_id_t load_tid, abort_tid, remove_tid, follow_tid;
    part_peers_t *peers; /* a quorum's: the other brokers, for markers */
    char client_id[64];  /* theirs */
    /* Closing: writes and markers still out when close came keep the
     * host (and the coordinator they answer) until the last ends. */
    bool closing;
    bool in_close;       /* txn_log_close is freeing the connections */
    int writes_out;
    struct txn_log_mk_s *rounds; /* marker rounds under way */
} txn_log_t;

/* Whether this node leads partition p of __transaction_state. */
bool txn_log_leads(const txn_log_t *h, int32_t p);
/* Frees h once nothing is out any more (closing). */
void txn_log_free(txn_log_t *h);

/* txn_log_mk.c: txn_env_t.markers, and the rounds' end at close. */
void txn_log_markers(void *ctx, txn_markers_t *m);
void txn_log_mk_close(txn_log_t *h);

#endif
