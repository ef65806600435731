/* The Raft core: its life, roles, timers and the output queue. Elections
 * are in raft_vote.c, replication in raft_fetch.c (see raft.h).
 *
 * The rules that keep one leader per epoch, whatever the network does:
 * an epoch's leader, once known, is never forgotten within that epoch
 * (a node that lost its leader asks for votes at the next epoch, never
 * at this one), a node votes at most once per epoch, and both facts are
 * on disk before any message that depends on them leaves (outputs gated
 * on a quorum-state write wait in the queue until raft_persisted). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/raft_int.h"
#include "util/kerr.h"

static const char *const role_names[] = {
    "Unattached", "Prospective", "Candidate", "Leader", "Follower", "Resigned",
};

const char *raft_role_name(int role)
{
    if (role < 0 || role > RAFT_RESIGNED)
        return "?";
    return role_names[role];
}

int raft_voter_index(const raft_t *raft, int32_t id)
{
    for (int i = 0; i < raft->cfg.nvoters; i++)
        if (raft->cfg.voters[i] == id)
            return i;
    return -1;
}

int raft_is_voter(const raft_t *raft, int32_t id)
{
    return raft_voter_index(raft, id) >= 0;
}

int raft_majority(const raft_t *raft)
{
    return raft->cfg.nvoters / 2 + 1;
}

/* A uniform wait in [0, range_ms). */
int64_t raft_rand_ms(raft_t *raft, int32_t range_ms)
{
    if (range_ms <= 0)
        return 0;
    return (int64_t)(raft->rand64(raft->rand_arg) % (uint64_t)range_ms);
}

/* The next output slot. A full queue drops the oldest unsent message
 * (the network may lose any of them; timers send again), never a disk
 * action. */
raft_out_t *raft_out_push(raft_t *raft, int kind)
{
    if (raft->nout == RAFT_MAX_OUT) {
        for (int i = 0; i < raft->nout; i++) {
            if (raft->out[i].kind != RAFT_OUT_SEND)
                continue;
            memmove(&raft->out[i], &raft->out[i + 1],
                    (size_t)(raft->nout - i - 1) * sizeof(raft->out[0]));
            raft->nout--;
            break;
        }
    }
    if (raft->nout == RAFT_MAX_OUT)
        abort(); /* only disk actions queued and never polled: a driver bug */
    raft_out_t *out = &raft->out[raft->nout++];
    memset(out, 0, sizeof(*out));
    out->kind = kind;
    return out;
}

/* gated: the message depends on the election state just changed (a vote,
 * a candidacy, a leadership) and leaves only once it is durable. */
void raft_send(raft_t *raft, const raft_msg_t *msg, int gated)
{
    raft_out_t *out = raft_out_push(raft, RAFT_OUT_SEND);
    out->msg = *msg;
    out->msg.src = raft->cfg.node_id;
    out->need_seq = gated ? raft->state_seq : 0;
}

void raft_msg_reply(const raft_t *raft, const raft_msg_t *req, raft_msg_t *resp, int type)
{
    memset(resp, 0, sizeof(*resp));
    resp->type = type;
    resp->dst = req->src;
    resp->epoch = raft->epoch;
    /* a leader that has stepped down no longer names itself */
    resp->leader_id = raft->role == RAFT_LEADER || raft->leader != raft->cfg.node_id ? raft->leader
                                                                                  : -1;
    resp->div_end = -1;
    resp->snap_end = -1;
    resp->snap_epoch = -1;
}

/* The persisted election state changes: queue its write. */
void raft_set_state(raft_t *raft, int32_t epoch, int32_t leader, int32_t voted)
{
    if (epoch == raft->epoch && leader == raft->leader && voted == raft->voted)
        return;
    if (epoch != raft->epoch)
        raft->leader_contact_ms = -1; /* that leader was another epoch's */
    raft->epoch = epoch;
    raft->leader = leader;
    raft->voted = voted;
    raft_out_t *out = raft_out_push(raft, RAFT_OUT_PERSIST);
    out->seq = ++raft->state_seq;
    out->epoch = epoch;
    out->leader_id = leader;
    out->voted_id = voted;
}

static void arm_election(raft_t *raft, int64_t now_ms)
{
    int32_t t = raft->cfg.election_timeout_ms;
    raft->election_at = now_ms + t + raft_rand_ms(raft, t);
}

/* Enters role at the current epoch. The timers of the role start. */
void raft_become(raft_t *raft, int role, int64_t now_ms)
{
    int was_leader = raft->role == RAFT_LEADER;
    raft->role = role;
    if (was_leader && role != RAFT_LEADER)
        raft_fail_parked(raft);
    raft->granted = raft->rejected = 0;
    raft->prevote_sent = 0;
    raft->snap_want_end = -1; /* a snapshot being fetched is given up */
    switch (role) {
    case RAFT_FOLLOWER:
        raft->fetch_deadline = now_ms + raft->cfg.fetch_timeout_ms;
        raft->fetch_inflight = 0;
        raft->fetch_retry_at = 0;
        break;
    case RAFT_PROSPECTIVE:
        raft->prevote_at = now_ms;
        arm_election(raft, now_ms);
        break;
    case RAFT_LEADER:
        break;
    default:
        arm_election(raft, now_ms);
        break;
    }
    raft_out_push(raft, RAFT_OUT_ROLE);
}

/* A message shows an epoch (and perhaps its leader). A newer epoch is
 * adopted at once: as a follower when its leader is known, unattached
 * otherwise. The current epoch's leader, newly learned, is followed. */
void raft_observe(raft_t *raft, int32_t epoch, int32_t leader, int64_t now_ms)
{
    if (leader == raft->cfg.node_id)
        leader = -1; /* only this node says it leads; stale news otherwise */
    if (epoch > raft->epoch) {
        raft_set_state(raft, epoch, leader, -1);
        raft_become(raft, leader >= 0 ? RAFT_FOLLOWER : RAFT_UNATTACHED, now_ms);
        return;
    }
    if (epoch < raft->epoch || leader < 0 || raft->leader >= 0)
        return;
    if (raft->role == RAFT_LEADER || raft->role == RAFT_RESIGNED)
        return;
    raft_set_state(raft, epoch, leader, raft->voted);
    raft_become(raft, RAFT_FOLLOWER, now_ms);
}

static int check_config(const raft_config_t *cfg)
{
    /* no voters known: an observer of a dynamic quorum before it has
     * fetched the voter set (it never stands) */
    if (cfg->nvoters < 0 || cfg->nvoters > RAFT_MAX_VOTERS || cfg->election_timeout_ms <= 0 ||
        cfg->fetch_timeout_ms <= 0 || cfg->request_timeout_ms <= 0)
        return -1;
    return 0;
}

static void load_disk(raft_t *raft, const raft_disk_t *disk)
{
    raft->log_start = disk->log_start;
    raft->snap_epoch = disk->snap_epoch;
    raft->latest_end = disk->log_start;
    raft->latest_epoch = disk->snap_epoch;
    if (disk->latest_end > disk->log_start && disk->latest_end <= disk->log_end) {
        raft->latest_end = disk->latest_end;
        raft->latest_epoch = disk->latest_epoch;
    }
    raft->end = raft->durable = disk->log_end;
    raft->hw = disk->log_start;
    for (int i = 0; i < disk->nepochs; i++)
        raft_epoch_append(raft, disk->epochs[i].epoch, disk->epochs[i].base);
    raft->epoch = disk->epoch;
    raft->leader = disk->leader_id;
    raft->voted = disk->voted_id;
}

/* The role a restarted node takes, as KRaft's: the leader of its last
 * epoch cannot lead it again (it resigns); a known leader is followed;
 * a log newer than the quorum-state (its write was lost) moves the
 * epoch up, with no vote. */
static void initial_role(raft_t *raft, int64_t now_ms)
{
    int32_t log_epoch = raft_last_epoch(raft);
    if (log_epoch > raft->epoch) {
        raft_set_state(raft, log_epoch, -1, -1);
        raft_become(raft, RAFT_UNATTACHED, now_ms);
    } else if (raft->leader == raft->cfg.node_id) {
        raft_resigned_enter(raft, NULL, 0, now_ms);
    } else if (raft->leader >= 0) {
        raft_become(raft, RAFT_FOLLOWER, now_ms);
    } else {
        raft_become(raft, RAFT_UNATTACHED, now_ms);
    }
    if (raft->voter && raft->cfg.nvoters == 1 && raft->role != RAFT_FOLLOWER)
        raft_start_election(raft, now_ms);
}

raft_t *raft_new(const raft_config_t *cfg, const raft_disk_t *disk,
                 uint64_t (*rand64)(void *arg), void *rand_arg, int64_t now_ms)
{
    if (check_config(cfg) < 0 || !rand64) {
        errno = EINVAL;
        return NULL;
    }
    raft_t *raft = calloc(1, sizeof(*raft));
    if (!raft)
        return NULL;
    raft->cfg = *cfg;
    if (raft->cfg.fetch_max_wait_ms <= 0)
        raft->cfg.fetch_max_wait_ms = 500;
    raft->rand64 = rand64;
    raft->rand_arg = rand_arg;
    raft->voter = raft_is_voter(raft, cfg->node_id);
    raft->leader_contact_ms = -1;
    raft->snap_want_end = -1;
    raft->role = -1;
    load_disk(raft, disk);
    raft->state_durable = raft->state_seq = 0;
    initial_role(raft, now_ms);
    return raft;
}

void raft_set_epoch_extra(raft_t *raft, int32_t n)
{
    raft->cfg.epoch_extra = n > 0 ? n : 0;
}

void raft_free(raft_t *raft)
{
    if (!raft)
        return;
    free(raft->epochs);
    free(raft);
}

static void election_tick(raft_t *raft, int64_t now_ms)
{
    if (!raft->voter)
        return;
    if (raft->role == RAFT_PROSPECTIVE && !raft->prevote_sent && now_ms >= raft->prevote_at)
        raft_start_prevote(raft, now_ms);
    if (now_ms < raft->election_at)
        return;
    if (raft->role == RAFT_CANDIDATE) {
        /* lost or split: back off, then ask for pre-votes again */
        raft_become(raft, RAFT_PROSPECTIVE, now_ms);
        raft->prevote_at = now_ms + raft_rand_ms(raft, raft->cfg.election_backoff_max_ms);
    } else {
        /* unattached, resigned, or a pre-vote round without a majority */
        raft_become(raft, RAFT_PROSPECTIVE, now_ms);
    }
}

void raft_tick(raft_t *raft, int64_t now_ms)
{
    switch (raft->role) {
    case RAFT_LEADER:
        raft_leader_tick(raft, now_ms);
        break;
    case RAFT_FOLLOWER:
        if (raft->voter && now_ms >= raft->fetch_deadline) {
            raft_become(raft, RAFT_PROSPECTIVE, now_ms);
            break;
        }
        if (!raft->voter && now_ms >= raft->fetch_deadline) {
            /* an observer's leader is silent: ask the bootstrap servers */
            raft_set_state(raft, raft->epoch, -1, raft->voted);
            raft_become(raft, RAFT_UNATTACHED, now_ms);
            raft->leader_contact_ms = -1;
        }
        raft_fetch_tick(raft, now_ms);
        break;
    default:
        raft_resigned_tick(raft, now_ms);
        election_tick(raft, now_ms);
        if (!raft->voter || raft_fetches_leader(raft))
            raft_fetch_tick(raft, now_ms);
        break;
    }
}

void raft_recv(raft_t *raft, const raft_msg_t *msg, int64_t now_ms)
{
    switch (msg->type) {
    case RAFT_VOTE_REQ:
        raft_on_vote_req(raft, msg, now_ms);
        break;
    case RAFT_VOTE_RESP:
        raft_on_vote_resp(raft, msg, now_ms);
        break;
    case RAFT_BEGIN_REQ:
        raft_on_begin_req(raft, msg, now_ms);
        break;
    case RAFT_END_REQ:
        raft_on_end_req(raft, msg, now_ms);
        break;
    case RAFT_FETCH_REQ:
        raft_on_fetch_req(raft, msg, now_ms);
        break;
    case RAFT_FETCH_RESP:
        raft_on_fetch_resp(raft, msg, now_ms);
        break;
    case RAFT_END_RESP:
        raft_on_end_resp(raft, msg, now_ms);
        break;
    case RAFT_BEGIN_RESP:
        raft_observe(raft, msg->epoch, msg->leader_id, now_ms);
        break;
    default:
        break;
    }
}

void raft_persisted(raft_t *raft, uint64_t seq, int64_t now_ms)
{
    (void)now_ms;
    if (seq > raft->state_durable && seq <= raft->state_seq)
        raft->state_durable = seq;
}

void raft_flushed(raft_t *raft, int64_t offset, int64_t now_ms)
{
    if (offset > raft->end)
        offset = raft->end;
    if (offset <= raft->durable)
        return;
    raft->durable = offset;
    if (raft->role == RAFT_LEADER)
        raft_update_hw(raft, now_ms);
    else
        raft_fetch_tick(raft, now_ms);
}

int64_t raft_propose(raft_t *raft, int32_t n, int64_t now_ms)
{
    (void)now_ms;
    if (raft->role != RAFT_LEADER || n <= 0)
        return -1;
    raft_out_t *out = raft_out_push(raft, RAFT_OUT_APPEND);
    out->append_base = raft->end;
    out->append_epoch = raft->epoch;
    out->append_n = n;
    raft->end += n;
    raft_wake_parked(raft, now_ms, 1);
    return out->append_base;
}


int raft_poll(raft_t *raft, raft_out_t *out)
{
    for (int i = 0; i < raft->nout; i++) {
        raft_out_t *o = &raft->out[i];
        if (o->kind == RAFT_OUT_SEND && o->need_seq > raft->state_durable)
            continue;
        *out = *o;
        memmove(o, o + 1, (size_t)(raft->nout - i - 1) * sizeof(*o));
        raft->nout--;
        return 1;
    }
    return 0;
}

static int64_t min64(int64_t a, int64_t b)
{
    return a < b ? a : b;
}

int64_t raft_next_deadline(const raft_t *raft)
{
    int64_t t = INT64_MAX;
    switch (raft->role) {
    case RAFT_LEADER:
        t = min64(raft->check_quorum_at, raft->begin_resend_at);
        for (int i = 0; i < raft->npeers; i++)
            if (raft->peers[i].parked)
                t = min64(t, raft->peers[i].park_deadline);
        return t;
    case RAFT_FOLLOWER:
        t = raft->fetch_deadline;
        break;
    case RAFT_PROSPECTIVE:
        t = raft->prevote_sent ? raft->election_at : min64(raft->prevote_at, raft->election_at);
        break;
    default:
        t = raft->voter ? raft->election_at : INT64_MAX;
        if (raft->role == RAFT_RESIGNED && raft->end_unacked)
            t = min64(t, raft->end_resend_at);
        break;
    }
    if (raft->fetch_inflight)
        t = min64(t, raft->fetch_sent_ms + raft->cfg.request_timeout_ms + raft->cfg.fetch_max_wait_ms);
    else if (raft->fetch_retry_at)
        t = min64(t, raft->fetch_retry_at);
    return t;
}

int raft_role(const raft_t *raft)
{
    return raft->role;
}

int32_t raft_epoch(const raft_t *raft)
{
    return raft->epoch;
}

int32_t raft_leader(const raft_t *raft)
{
    return raft->role == RAFT_LEADER ? raft->cfg.node_id : raft->leader;
}

int32_t raft_voted(const raft_t *raft)
{
    return raft->voted;
}

int64_t raft_hw(const raft_t *raft)
{
    return raft->hw;
}

int64_t raft_log_end(const raft_t *raft)
{
    return raft->end;
}

int64_t raft_epoch_start(const raft_t *raft)
{
    return raft->role == RAFT_LEADER ? raft->epoch_start : -1;
}

int raft_voters(const raft_t *raft, const int32_t **ids)
{
    *ids = raft->cfg.voters;
    return raft->cfg.nvoters;
}
