/* KRaft's checks of a quorum request before the core acts on it, in
 * KRaft's order, each refusal answered in the partition with the
 * receiver's epoch and leader (the top-level errors, a wrong cluster id
 * or partition, are raft_wire.c's):
 *   - Vote: a negative last offset or last epoch, or a last epoch a
 *     candidate cannot have (not below its epoch; for a pre-vote, above
 *     it), is INVALID_REQUEST, before anything else; then an older epoch
 *     is FENCED_LEADER_EPOCH and a negative candidate id INVALID_REQUEST;
 *   - BeginQuorumEpoch and EndQuorumEpoch: an older epoch is
 *     FENCED_LEADER_EPOCH, a negative leader id INVALID_REQUEST;
 *   - Fetch: a negative wait, fetch offset or last fetched epoch, or a
 *     last fetched epoch above the fetcher's epoch, is INVALID_REQUEST,
 *     before the epoch is looked at.
 * Nothing of such a request is taken: its epoch is not adopted. */
#include "cluster/raft_int.h"
#include "util/kerr.h"

int16_t raft_check_vote_req(const raft_t *raft, const raft_msg_t *msg)
{
    int impossible = msg->prevote ? msg->last_epoch > msg->epoch : msg->last_epoch >= msg->epoch;
    if (msg->last_offset < 0 || msg->last_epoch < 0 || impossible)
        return KERR_INVALID_REQUEST;
    if (msg->epoch < raft->epoch)
        return KERR_FENCED_LEADER_EPOCH;
    return msg->src < 0 ? KERR_INVALID_REQUEST : KERR_NONE;
}

int16_t raft_check_leader_notice(const raft_t *raft, const raft_msg_t *msg)
{
    if (msg->epoch < raft->epoch)
        return KERR_FENCED_LEADER_EPOCH;
    return msg->src < 0 ? KERR_INVALID_REQUEST : KERR_NONE;
}

int16_t raft_check_fetch_req(const raft_msg_t *msg)
{
    if (msg->max_wait_ms < 0 || msg->fetch_offset < 0 || msg->last_fetched_epoch < 0 ||
        msg->last_fetched_epoch > msg->epoch)
        return KERR_INVALID_REQUEST;
    return KERR_NONE;
}
