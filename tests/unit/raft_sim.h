/* A deterministic world for the Raft core (src/cluster/raft.h): nodes
 * with simulated disks (a log whose tail is lost, torn at any entry, on a
 * crash unless flushed; a quorum-state file written atomically), a
 * network that loses, duplicates, delays and reorders messages and can be
 * cut link by link, and a clock in milliseconds. Everything random comes
 * from one seed, so a failing run replays exactly.
 *
 * After every step the world checks Raft's promises: at most one leader
 * per epoch; a node votes at most once per epoch, across restarts; a
 * committed entry is never lost or changed (every node's entries below
 * its high watermark are the committed ones, and a new leader holds all
 * of them); a truncation never removes what a node applied. The first
 * broken one stops the run with a message. */
#ifndef STRAND_TESTS_RAFT_SIM_H
#define STRAND_TESTS_RAFT_SIM_H

#include <stdint.h>

#include "cluster/raft.h"

#define SIM_MAX_NODES 8

typedef struct sim_opts_s {
    int nvoters, nobservers;
    int loss_pct, dup_pct;     /* per message */
    int delay_max_ms;          /* uniform 1..delay_max_ms: reorders */
    int crash_per_mille;       /* per node per 100 ms of chaos */
    int cut_per_mille;         /* a link cut or healed, per 100 ms */
    int propose_every_ms;
    int snap_pct;              /* per node per 100 ms: a snapshot of what it applied */
    int chaos_ms, calm_ms;     /* faults, then none: progress must come */
    /* A dynamic quorum: every reconf_every_ms the leader adds a node to,
     * or removes another from, the voter set (one change at a time, once
     * the last has committed, as raft_reconf.c does), as an entry of the
     * log; the set takes effect on the leader when appended and on the
     * others when committed (or read from the log at a restart), as
     * broker_quorum.c does. 0: the static set of nvoters. */
    int reconf_every_ms;
    int verbose;
} sim_opts_t;

typedef struct sim_result_s {
    int ok;
    char why[256];
    int64_t committed;         /* entries committed in the run */
    int64_t calm_commits;      /* committed during the calm */
    int elections;             /* leaders elected */
    int64_t crashes, msgs;
    int64_t snapshots, installs; /* taken, and fetched by a node behind */
    int64_t first_leader_ms;   /* when the first leader was elected */
    int reconfs;               /* voter changes committed */
} sim_result_t;

void sim_opts_default(sim_opts_t *o);
/* Runs one seeded world; the result says whether every check held and
 * whether the quorum made progress once the faults stopped. */
void sim_run(uint64_t seed, const sim_opts_t *o, sim_result_t *res);

#endif
