/* The resigned leader's EndQuorumEpoch, as KRaft sends it: to every other
 * voter, again each request timeout to those that have not acknowledged
 * it (an answer without error at this epoch), until they all have or the
 * epoch ends (a newer epoch seen, or the election timeout that makes this
 * node a candidate). A single copy lost on the way would otherwise leave
 * that voter waiting a whole fetch timeout for a leader that has left.
 * Every way into the role sends it: a graceful resignation (successors
 * by fetch offset), a failed check-quorum (the same), and a restart of
 * the epoch's leader (no successors). */
#include <string.h>

#include "cluster/raft_int.h"

static void send_end(raft_t *raft, int64_t now_ms)
{
    raft_msg_t req;
    memset(&req, 0, sizeof(req));
    req.type = RAFT_END_REQ;
    req.epoch = raft->epoch;
    memcpy(req.successors, raft->successors, sizeof(req.successors));
    req.nsuccessors = raft->nsuccessors;
    for (int i = 0; i < raft->cfg.nvoters; i++) {
        if (!(raft->end_unacked & (1u << i)))
            continue;
        req.dst = raft->cfg.voters[i];
        raft_send(raft, &req, 0);
    }
    raft->end_resend_at = now_ms + raft->cfg.request_timeout_ms;
}

void raft_resigned_enter(raft_t *raft, const int32_t *successors, int n, int64_t now_ms)
{
    raft_become(raft, RAFT_RESIGNED, now_ms);
    raft->nsuccessors = n < RAFT_MAX_VOTERS ? n : RAFT_MAX_VOTERS;
    if (raft->nsuccessors > 0)
        memcpy(raft->successors, successors, (size_t)raft->nsuccessors * sizeof(successors[0]));
    raft->end_unacked = 0;
    for (int i = 0; i < raft->cfg.nvoters; i++)
        if (raft->cfg.voters[i] != raft->cfg.node_id)
            raft->end_unacked |= 1u << i;
    send_end(raft, now_ms);
}

void raft_resigned_tick(raft_t *raft, int64_t now_ms)
{
    if (raft->role == RAFT_RESIGNED && raft->end_unacked && now_ms >= raft->end_resend_at)
        send_end(raft, now_ms);
}

/* An error answer (the voter is shutting down, say) is tried again after
 * the short backoff of a failed fetch, not a whole request timeout. */
void raft_on_end_resp(raft_t *raft, const raft_msg_t *msg, int64_t now_ms)
{
    raft_observe(raft, msg->epoch, msg->leader_id, now_ms);
    if (raft->role != RAFT_RESIGNED || msg->epoch != raft->epoch)
        return;
    int idx = raft_voter_index(raft, msg->src);
    if (idx < 0 || !(raft->end_unacked & (1u << idx)))
        return;
    if (!msg->err) {
        raft->end_unacked &= ~(1u << idx);
        return;
    }
    int64_t retry = now_ms + raft->cfg.election_backoff_max_ms / 10 + 1;
    if (retry < raft->end_resend_at)
        raft->end_resend_at = retry;
}
