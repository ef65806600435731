/* The Raft core's voter set changing with the log (raft.h,
 * raft_set_voters): a dynamic quorum's VotersRecord, appended by the
 * leader or committed on the others. The leader keeps what it knows of
 * every replica, voters first in the new set's order (the order the high
 * watermark and BeginQuorumEpoch go by), then the observers; a node that
 * stops being a voter while it stands for election gives up, and one that
 * becomes a voter starts counting its fetch timeout as a voter does. */
#include <string.h>

#include "cluster/raft_int.h"

/* The leader's replicas in the order of the new set, voters first. */
static void rc_reorder_peers(raft_t *raft)
{
    raft_peer_t old[RAFT_MAX_VOTERS + RAFT_MAX_OBSERVERS];
    int nold = raft->npeers;

    memcpy(old, raft->peers, (size_t)nold * sizeof(old[0]));
    raft->npeers = 0;
    for (int i = 0; i < raft->cfg.nvoters; i++) {
        raft_peer_t *p = NULL;
        for (int j = 0; j < nold && !p; j++)
            if (old[j].id == raft->cfg.voters[i])
                p = &old[j];
        raft_peer_t *np = raft_peer(raft, raft->cfg.voters[i], 1);
        if (p)
            *np = *p;
        np->voter = 1;
    }
    for (int j = 0; j < nold; j++) {
        if (raft_is_voter(raft, old[j].id))
            continue;
        raft_peer_t *np = raft_peer(raft, old[j].id, 1);
        if (np) {
            *np = old[j];
            np->voter = 0;
        }
    }
}

void raft_set_voters(raft_t *raft, const int32_t *ids, int n, int64_t now_ms)
{
    int was = raft->voter;

    if (n < 0 || n > RAFT_MAX_VOTERS)
        return;
    memcpy(raft->cfg.voters, ids, (size_t)n * sizeof(ids[0]));
    raft->cfg.nvoters = n;
    raft->voter = raft_is_voter(raft, raft->cfg.node_id);
    if (raft->role == RAFT_LEADER) {
        rc_reorder_peers(raft);
        raft_update_hw(raft, now_ms);
        return;
    }
    if (raft->role == RAFT_CANDIDATE || raft->role == RAFT_PROSPECTIVE) {
        /* votes were counted by the old set's indexes */
        raft_become(raft, raft->voter ? RAFT_PROSPECTIVE : RAFT_UNATTACHED, now_ms);
        return;
    }
    if (!was && raft->voter && raft->role == RAFT_FOLLOWER)
        raft->fetch_deadline = now_ms + raft->cfg.fetch_timeout_ms;
}
