/* Elections: pre-vote, vote, and the leader's BeginQuorumEpoch and
 * EndQuorumEpoch, as KRaft runs them (KIP-996's pre-vote included).
 *
 * A node that lost its leader first asks for pre-votes at its current
 * epoch. Nothing is persisted for them, and a voter that still hears
 * from its leader refuses, so a node cut off for a while cannot force an
 * election (and bump every epoch) when it comes back. With a majority of
 * pre-votes it becomes a candidate at the next epoch and asks for real
 * votes: a voter grants one per epoch, to a candidate whose log is at
 * least as up to date as its own (last epoch, then end offset), and only
 * once that vote is on disk does its answer leave. */
#include <string.h>

#include "cluster/raft_int.h"
#include "util/kerr.h"

/* Is the candidate's log (its last epoch and end offset) at least as up
 * to date as ours? */
static int log_ok(const raft_t *raft, int32_t last_epoch, int64_t last_offset)
{
    int32_t mine = raft_last_epoch(raft);
    if (last_epoch != mine)
        return last_epoch > mine;
    return last_offset >= raft->end;
}

/* A node still hearing from its leader refuses pre-votes at its epoch. */
static int hears_leader(const raft_t *raft, int64_t now_ms)
{
    if (raft->role == RAFT_LEADER)
        return 1;
    if (raft->role != RAFT_FOLLOWER || raft->leader_contact_ms < 0)
        return 0;
    return now_ms - raft->leader_contact_ms < raft->cfg.fetch_timeout_ms;
}

static int grant_prevote(const raft_t *raft, const raft_msg_t *msg, int64_t now_ms)
{
    return !hears_leader(raft, now_ms) && log_ok(raft, msg->last_epoch, msg->last_offset);
}

/* One vote per epoch, and none in an epoch whose leader is known. */
static int grant_vote(const raft_t *raft, const raft_msg_t *msg)
{
    if (raft->leader >= 0 || raft->role == RAFT_LEADER || raft->role == RAFT_RESIGNED)
        return 0;
    if (raft->voted >= 0 && raft->voted != msg->src)
        return 0;
    return log_ok(raft, msg->last_epoch, msg->last_offset);
}

void raft_on_vote_req(raft_t *raft, const raft_msg_t *msg, int64_t now_ms)
{
    raft_msg_t resp;
    int16_t err = raft_check_vote_req(raft, msg);
    if (!err && msg->epoch > raft->epoch)
        raft_observe(raft, msg->epoch, -1, now_ms);
    raft_msg_reply(raft, msg, &resp, RAFT_VOTE_RESP);
    resp.prevote = msg->prevote;
    if (!err && msg->other_voter)
        err = KERR_INVALID_VOTER_KEY;
    if (err) {
        resp.err = err;
        raft_send(raft, &resp, 0);
        return;
    }
    if (!raft->voter || !raft_is_voter(raft, msg->src)) {
        raft_send(raft, &resp, 0);
        return;
    }
    if (msg->prevote) {
        resp.granted = (int8_t)grant_prevote(raft, msg, now_ms);
        raft_send(raft, &resp, 0);
        return;
    }
    resp.granted = (int8_t)grant_vote(raft, msg);
    if (resp.granted && raft->voted != msg->src) {
        raft_set_state(raft, raft->epoch, -1, msg->src);
        if (raft->role != RAFT_UNATTACHED)
            raft_become(raft, RAFT_UNATTACHED, now_ms);
    }
    raft_send(raft, &resp, 1);
}

static int count(uint32_t mask)
{
    return __builtin_popcount(mask);
}

static void tally(raft_t *raft, const raft_msg_t *msg, int64_t now_ms)
{
    int idx = raft_voter_index(raft, msg->src);
    if (idx < 0)
        return;
    if (msg->granted)
        raft->granted |= 1u << idx;
    else
        raft->rejected |= 1u << idx;
    if (count(raft->granted) < raft_majority(raft))
        return;
    if (raft->role == RAFT_PROSPECTIVE)
        raft_start_election(raft, now_ms);
    else
        raft_leader_start(raft, now_ms);
}

void raft_on_vote_resp(raft_t *raft, const raft_msg_t *msg, int64_t now_ms)
{
    raft_observe(raft, msg->epoch, msg->leader_id, now_ms);
    if (msg->err || msg->epoch != raft->epoch)
        return;
    if (raft->role == RAFT_PROSPECTIVE && !msg->granted && msg->leader_id >= 0 &&
        msg->leader_id == raft->leader && msg->leader_id != raft->cfg.node_id) {
        /* a voter still hears from our leader: follow it again */
        raft_become(raft, RAFT_FOLLOWER, now_ms);
        return;
    }
    if (raft->role == RAFT_PROSPECTIVE && msg->prevote)
        tally(raft, msg, now_ms);
    else if (raft->role == RAFT_CANDIDATE && !msg->prevote)
        tally(raft, msg, now_ms);
}

static void ask_votes(raft_t *raft, int prevote)
{
    raft_msg_t req;
    memset(&req, 0, sizeof(req));
    req.type = RAFT_VOTE_REQ;
    req.epoch = raft->epoch;
    req.last_epoch = raft_last_epoch(raft);
    req.last_offset = raft->end;
    req.prevote = (int8_t)prevote;
    for (int i = 0; i < raft->cfg.nvoters; i++) {
        if (raft->cfg.voters[i] == raft->cfg.node_id)
            continue;
        req.dst = raft->cfg.voters[i];
        raft_send(raft, &req, !prevote);
    }
}

void raft_start_prevote(raft_t *raft, int64_t now_ms)
{
    raft->prevote_sent = 1;
    raft->granted = 1u << raft_voter_index(raft, raft->cfg.node_id);
    raft->rejected = 0;
    if (count(raft->granted) >= raft_majority(raft)) {
        raft_start_election(raft, now_ms);
        return;
    }
    ask_votes(raft, 1);
}

void raft_start_election(raft_t *raft, int64_t now_ms)
{
    raft_set_state(raft, raft->epoch + 1, -1, raft->cfg.node_id);
    raft_become(raft, RAFT_CANDIDATE, now_ms);
    raft->granted = 1u << raft_voter_index(raft, raft->cfg.node_id);
    if (count(raft->granted) >= raft_majority(raft)) {
        raft_leader_start(raft, now_ms);
        return;
    }
    ask_votes(raft, 0);
}

void raft_on_begin_req(raft_t *raft, const raft_msg_t *msg, int64_t now_ms)
{
    raft_msg_t resp;
    int16_t err = raft_check_leader_notice(raft, msg);
    if (!err)
        raft_observe(raft, msg->epoch, msg->src, now_ms);
    raft_msg_reply(raft, msg, &resp, RAFT_BEGIN_RESP);
    resp.err = err || !msg->other_voter ? err : KERR_INVALID_VOTER_KEY;
    raft_send(raft, &resp, 1);
}

/* The leader resigns: a follower in its successors' list starts its
 * election after a wait by its place in the list (the best placed
 * first); the others wait a full election timeout. It keeps the epoch's
 * leader, so it votes at the next epoch only. */
void raft_on_end_req(raft_t *raft, const raft_msg_t *msg, int64_t now_ms)
{
    raft_msg_t resp;
    int16_t err = raft_check_leader_notice(raft, msg);
    if (!err)
        raft_observe(raft, msg->epoch, msg->src, now_ms);
    raft_msg_reply(raft, msg, &resp, RAFT_END_RESP);
    if (err) {
        resp.err = err;
    } else if (raft->role == RAFT_FOLLOWER && raft->leader == msg->src) {
        int64_t wait = raft->cfg.election_timeout_ms;
        for (int i = 0; i < msg->nsuccessors; i++)
            if (msg->successors[i] == raft->cfg.node_id)
                wait = raft_rand_ms(raft, raft->cfg.election_backoff_max_ms / 4 + 1) +
                       (int64_t)i * raft->cfg.election_backoff_max_ms / 4;
        raft->leader_contact_ms = -1;
        raft->fetch_deadline = now_ms + wait;
    }
    raft_send(raft, &resp, 1);
}

void raft_resign(raft_t *raft, int64_t now_ms)
{
    if (raft->role != RAFT_LEADER)
        return;
    raft_msg_t req;
    memset(&req, 0, sizeof(req));
    req.type = RAFT_END_REQ;
    req.epoch = raft->epoch;
    /* successors by how much of the log they have, best first */
    for (int i = 0; i < raft->npeers; i++) {
        if (!raft->peers[i].voter || raft->peers[i].id == raft->cfg.node_id)
            continue;
        int j = req.nsuccessors++;
        while (j > 0 && raft->peers[raft_voter_index(raft, req.successors[j - 1])].end <
                            raft->peers[i].end) {
            req.successors[j] = req.successors[j - 1];
            j--;
        }
        req.successors[j] = raft->peers[i].id;
    }
    raft_resigned_enter(raft, req.successors, req.nsuccessors, now_ms);
}
