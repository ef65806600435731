/* Snapshots in the Raft core. The driver takes snapshots of what is
 * committed and tells the core when the log before one is deleted; a
 * fetch below the log start is sent the snapshot instead
 * (raft_fetch.c). The node sent there fetches it (FetchSnapshot, the
 * driver's) while its log stays as it is: no fetches meanwhile, so that
 * nothing it counted toward a commit changes under it. The wait ends
 * with the snapshot installed, a failure (it fetches again and is told
 * again), or any change of role or epoch (the leader that named the
 * snapshot may be gone). */
#include <string.h>

#include "cluster/raft_int.h"

int raft_snapshot_wanted(const raft_t *raft, int64_t offset, int32_t epoch)
{
    return raft->snap_want_end >= 0 && raft->snap_want_end == offset &&
           raft->snap_want_epoch == epoch;
}

void raft_snapshot_installed(raft_t *raft, int64_t offset, int32_t epoch, int64_t now_ms)
{
    if (!raft_snapshot_wanted(raft, offset, epoch))
        return;
    raft->snap_want_end = -1;
    raft->log_start = raft->end = raft->durable = raft->latest_end = offset;
    raft->snap_epoch = raft->latest_epoch = epoch;
    raft->nepochs = 0;
    if (raft->hw < offset) {
        raft->hw = offset;
        raft_out_push(raft, RAFT_OUT_HW)->offset = offset;
    }
    raft->fetch_inflight = 0;
    raft_fetch_tick(raft, now_ms);
}

void raft_snapshot_failed(raft_t *raft, int64_t now_ms)
{
    if (raft->snap_want_end < 0)
        return;
    raft->snap_want_end = -1;
    raft->fetch_inflight = 0;
    raft_fetch_failed(raft, now_ms);
}

void raft_snapshot_progress(raft_t *raft, int64_t now_ms)
{
    if (raft->snap_want_end < 0 || raft->role != RAFT_FOLLOWER)
        return;
    raft->leader_contact_ms = now_ms;
    raft->fetch_deadline = now_ms + raft->cfg.fetch_timeout_ms;
}

void raft_snapshot_served(raft_t *raft, int32_t id, int64_t now_ms)
{
    raft_peer_t *p;
    if (raft->role != RAFT_LEADER || !(p = raft_peer(raft, id, 1)))
        return;
    p->last_fetch_ms = now_ms;
}

void raft_snapshot_latest(raft_t *raft, int64_t offset, int32_t epoch)
{
    if (offset <= raft->latest_end || offset > raft->hw)
        return;
    raft->latest_end = offset;
    raft->latest_epoch = epoch;
}

void raft_log_start_moved(raft_t *raft, int64_t offset, int32_t epoch)
{
    if (offset <= raft->log_start || offset > raft->hw)
        return;
    raft_snapshot_latest(raft, offset, epoch);
    raft->log_start = offset;
    raft->snap_epoch = epoch;
    while (raft->nepochs > 1 && raft->epochs[1].base <= offset) {
        memmove(&raft->epochs[0], &raft->epochs[1],
                (size_t)(raft->nepochs - 1) * sizeof(raft->epochs[0]));
        raft->nepochs--;
    }
}
