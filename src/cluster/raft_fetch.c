/* Replication, KRaft's pull: followers and observers fetch from the
 * leader; the leader checks each fetch against its log (a diverging last
 * epoch is sent back with where it ends, an offset below the log start
 * gets the snapshot to fetch instead), learns the voters' positions from
 * their fetch offsets, and moves the high watermark to the largest
 * offset a majority of voters has on disk, once that passes the start of
 * its own epoch (so entries of older epochs commit only under one of its
 * own, as Raft requires). A fetch with nothing to return waits at the
 * leader until records arrive, the high watermark moves, or its wait
 * ends. A follower fetches again once what it received is on disk, so
 * its fetch offset is always durable. */
#include <stdlib.h>
#include <string.h>

#include "cluster/raft_int.h"
#include "util/kerr.h"

raft_peer_t *raft_peer(raft_t *raft, int32_t id, int create)
{
    for (int i = 0; i < raft->npeers; i++)
        if (raft->peers[i].id == id)
            return &raft->peers[i];
    if (!create || raft->npeers == RAFT_MAX_VOTERS + RAFT_MAX_OBSERVERS)
        return NULL;
    raft_peer_t *p = &raft->peers[raft->npeers++];
    memset(p, 0, sizeof(*p));
    p->id = id;
    p->end = p->last_fetch_ms = p->caught_up_ms = -1;
    return p;
}

/* The voters come first, in the config's order (raft_voter_index). */
void raft_leader_start(raft_t *raft, int64_t now_ms)
{
    uint32_t granted = raft->granted;
    raft_set_state(raft, raft->epoch, raft->cfg.node_id, raft->voted);
    raft_become(raft, RAFT_LEADER, now_ms);
    raft->granted = granted; /* the LeaderChangeMessage names them */
    raft->npeers = 0;
    for (int i = 0; i < raft->cfg.nvoters; i++)
        raft_peer(raft, raft->cfg.voters[i], 1)->voter = 1;
    raft->epoch_start = raft->end;
    raft_out_t *out = raft_out_push(raft, RAFT_OUT_APPEND);
    out->append_base = raft->end;
    out->append_epoch = raft->epoch;
    out->append_n = 1 + raft->cfg.epoch_extra;
    out->control = 1;
    raft_epoch_append(raft, raft->epoch, raft->end);
    raft->end += out->append_n;
    raft->begin_resend_at = now_ms;
    raft->check_quorum_at = now_ms + raft->cfg.fetch_timeout_ms * 3 / 2;
    raft_leader_tick(raft, now_ms);
}

static void send_begin(raft_t *raft, int64_t now_ms)
{
    raft_msg_t req;
    memset(&req, 0, sizeof(req));
    req.type = RAFT_BEGIN_REQ;
    req.epoch = raft->epoch;
    for (int i = 0; i < raft->cfg.nvoters; i++) {
        raft_peer_t *p = &raft->peers[i];
        if (p->id == raft->cfg.node_id || p->last_fetch_ms >= 0)
            continue;
        req.dst = p->id;
        raft_send(raft, &req, 1);
    }
    raft->begin_resend_at = now_ms + raft->cfg.request_timeout_ms;
}

/* A leader that has not heard from a majority of voters within 1.5
 * fetch timeouts resigns, with EndQuorumEpoch as a graceful one: it may
 * be the one cut off, and its followers may have elected another. */
static void check_quorum(raft_t *raft, int64_t now_ms)
{
    int64_t window = raft->cfg.fetch_timeout_ms * 3 / 2;
    int heard = 1;
    for (int i = 0; i < raft->cfg.nvoters; i++) {
        raft_peer_t *p = &raft->peers[i];
        if (p->id != raft->cfg.node_id && p->last_fetch_ms >= 0 && now_ms - p->last_fetch_ms < window)
            heard++;
    }
    if (heard >= raft_majority(raft)) {
        raft->check_quorum_at = now_ms + window;
        return;
    }
    raft_resign(raft, now_ms);
}

void raft_leader_tick(raft_t *raft, int64_t now_ms)
{
    if (now_ms >= raft->begin_resend_at)
        send_begin(raft, now_ms);
    raft_wake_parked(raft, now_ms, 0);
    if (raft->cfg.nvoters > 1 && now_ms >= raft->check_quorum_at)
        check_quorum(raft, now_ms);
}

/* The fetch checks of KRaft's log: below the start, or at it with
 * another epoch, or with a last fetched epoch older than the snapshot's
 * (where it ends is gone with the log before the snapshot), the latest
 * snapshot; a last fetched epoch that ends before the fetch offset in our
 * log (or that we do not have), the diverging epoch and its end. Returns
 * 1 when valid. */
static int check_fetch(const raft_t *raft, const raft_msg_t *req, raft_msg_t *resp)
{
    if (req->fetch_offset < raft->log_start ||
        (raft->log_start > 0 && (req->fetch_offset == raft->log_start
                                     ? req->last_fetched_epoch != raft->snap_epoch
                                     : req->last_fetched_epoch < raft->snap_epoch))) {
        resp->snap_end = raft->latest_end;
        resp->snap_epoch = raft->latest_epoch;
        return 0;
    }
    if (req->fetch_offset == 0 && req->last_fetched_epoch <= 0)
        return 1;
    int32_t found;
    int64_t end = raft_epoch_end(raft, req->last_fetched_epoch, &found);
    if (found == req->last_fetched_epoch && end >= req->fetch_offset && req->fetch_offset <= raft->end)
        return 1;
    resp->div_epoch = found;
    resp->div_end = end < req->fetch_offset ? end : req->fetch_offset;
    return 0;
}

static void answer_fetch(raft_t *raft, const raft_msg_t *req)
{
    raft_msg_t resp;
    raft_msg_reply(raft, req, &resp, RAFT_FETCH_RESP);
    resp.fetch_offset = req->fetch_offset;
    resp.last_fetched_epoch = req->last_fetched_epoch;
    resp.hw = raft->hw;
    resp.log_start = raft->log_start;
    resp.rec_from = resp.rec_to = req->fetch_offset;
    if (check_fetch(raft, req, &resp))
        resp.rec_to = raft->end;
    raft_send(raft, &resp, 0);
}

/* A refused fetch, as KRaft answers one: no records, no high watermark
 * (-1), the log start. */
static void answer_fetch_error(raft_t *raft, const raft_msg_t *req, int16_t err)
{
    raft_msg_t resp;
    raft_msg_reply(raft, req, &resp, RAFT_FETCH_RESP);
    resp.err = err;
    if (raft->role == RAFT_RESIGNED)
        resp.leader_id = -1;
    resp.fetch_offset = req->fetch_offset;
    resp.last_fetched_epoch = req->last_fetched_epoch;
    resp.hw = -1;
    resp.log_start = raft->log_start;
    raft_send(raft, &resp, 0);
}

static void track(raft_t *raft, raft_peer_t *p, const raft_msg_t *req, int64_t now_ms)
{
    p->end = req->fetch_offset;
    p->last_fetch_ms = now_ms;
    memcpy(p->dir_id, req->dir_id, sizeof(p->dir_id));
    if (req->fetch_offset >= raft->end)
        p->caught_up_ms = now_ms;
}

void raft_on_fetch_req(raft_t *raft, const raft_msg_t *req, int64_t now_ms)
{
    raft_msg_t resp;
    int16_t err = raft_check_fetch_req(req);
    if (!err && req->epoch > raft->epoch)
        raft_observe(raft, req->epoch, -1, now_ms);
    if (!err && (raft->role != RAFT_LEADER || req->epoch != raft->epoch))
        err = req->epoch < raft->epoch ? KERR_FENCED_LEADER_EPOCH : KERR_NOT_LEADER_OR_FOLLOWER;
    if (err) {
        answer_fetch_error(raft, req, err);
        return;
    }
    raft_msg_reply(raft, req, &resp, RAFT_FETCH_RESP);
    int valid = check_fetch(raft, req, &resp);
    raft_peer_t *p = raft_peer(raft, req->src, 1);
    if (!valid || !p) {
        answer_fetch(raft, req);
        return;
    }
    track(raft, p, req, now_ms);
    raft_update_hw(raft, now_ms);
    /* nothing new to send, but a high watermark the fetcher lacks (this
     * fetch may just have moved it): answered now, not after the wait */
    if (req->fetch_offset < raft->end || req->max_wait_ms <= 0 || raft->hw > req->hw) {
        p->parked = 0;
        answer_fetch(raft, req);
        return;
    }
    p->parked = 1;
    p->park = *req;
    p->park_deadline = now_ms + req->max_wait_ms;
}

/* Parked fetches answered: all of them (new records, a new high
 * watermark) or those whose wait is over. */
void raft_wake_parked(raft_t *raft, int64_t now_ms, int all)
{
    if (raft->role != RAFT_LEADER)
        return;
    for (int i = 0; i < raft->npeers; i++) {
        raft_peer_t *p = &raft->peers[i];
        if (!p->parked || (!all && now_ms < p->park_deadline))
            continue;
        p->parked = 0;
        answer_fetch(raft, &p->park);
    }
}

/* A leader stepping down answers the fetches waiting at it, as Kafka
 * fails its fetch purgatory: they learn the new epoch and leader now, not
 * after their request timeout (and a connection waiting for the answer
 * carries nothing else meanwhile). */
void raft_fail_parked(raft_t *raft)
{
    for (int i = 0; i < raft->npeers; i++) {
        raft_peer_t *p = &raft->peers[i];
        if (!p->parked)
            continue;
        p->parked = 0;
        answer_fetch_error(raft, &p->park, p->park.epoch < raft->epoch
                                               ? KERR_FENCED_LEADER_EPOCH
                                               : KERR_NOT_LEADER_OR_FOLLOWER);
    }
}

static int cmp_desc(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? 1 : x > y ? -1 : 0;
}

void raft_update_hw(raft_t *raft, int64_t now_ms)
{
    int64_t ends[RAFT_MAX_VOTERS];
    (void)now_ms;
    for (int i = 0; i < raft->cfg.nvoters; i++) {
        raft_peer_t *p = &raft->peers[i];
        ends[i] = p->id == raft->cfg.node_id ? raft->durable : p->end;
    }
    qsort(ends, (size_t)raft->cfg.nvoters, sizeof(ends[0]), cmp_desc);
    int64_t hw = ends[raft_majority(raft) - 1];
    if (hw <= raft->epoch_start || hw <= raft->hw)
        return;
    raft->hw = hw;
    raft_out_push(raft, RAFT_OUT_HW)->offset = hw;
    raft_wake_parked(raft, now_ms, 1);
}

/* The follower's side. */

/* A follower fetches from its leader, and so does a prospective voter
 * that knows one (it may hear from it again); an observer that knows
 * none asks any bootstrap server. */
int raft_fetches_leader(const raft_t *raft)
{
    if (raft->leader < 0 || raft->leader == raft->cfg.node_id)
        return 0;
    return raft->role == RAFT_FOLLOWER || raft->role == RAFT_PROSPECTIVE;
}

static void send_fetch(raft_t *raft, int64_t now_ms)
{
    raft_msg_t req;
    memset(&req, 0, sizeof(req));
    req.type = RAFT_FETCH_REQ;
    req.dst = raft_fetches_leader(raft) ? raft->leader : -1;
    req.epoch = raft->epoch;
    req.fetch_offset = raft->end;
    req.last_fetched_epoch = raft_last_epoch(raft);
    req.hw = raft->hw;
    req.max_wait_ms = raft->cfg.fetch_max_wait_ms;
    raft_send(raft, &req, 0);
    raft->fetch_inflight = 1;
    raft->fetch_sent_ms = now_ms;
}

/* Fetches again when nothing is in flight and what came is on disk; a
 * fetch unanswered for a request timeout (past its wait) is lost. */
void raft_fetch_tick(raft_t *raft, int64_t now_ms)
{
    if (raft->snap_want_end >= 0)
        return;
    if (raft->fetch_inflight &&
        now_ms - raft->fetch_sent_ms >= raft->cfg.request_timeout_ms + raft->cfg.fetch_max_wait_ms)
        raft->fetch_inflight = 0;
    if (raft->fetch_inflight || raft->durable < raft->end || now_ms < raft->fetch_retry_at)
        return;
    if (raft->voter && !raft_fetches_leader(raft))
        return;
    send_fetch(raft, now_ms);
}

static void truncate_to(raft_t *raft, int32_t epoch, int64_t leader_end)
{
    int32_t found;
    int64_t mine = raft_epoch_end(raft, epoch, &found);
    int64_t at = mine < leader_end ? mine : leader_end;
    if (at < raft->log_start)
        at = raft->log_start;
    if (at >= raft->end)
        return;
    raft_out_push(raft, RAFT_OUT_TRUNCATE)->offset = at;
    raft->end = at;
    if (raft->durable > at)
        raft->durable = at;
    raft_epoch_truncate(raft, at);
}

/* Received batches that continue the log are appended; the rest (already
 * present, or past a gap) are dropped. */
static void append_batches(raft_t *raft, const raft_msg_t *msg)
{
    int first = -1, n = 0;
    for (int i = 0; i < msg->nbatches; i++) {
        const raft_batch_t *b = &msg->batches[i];
        if (b->last < raft->end && first < 0)
            continue;
        if (b->base != raft->end)
            break;
        if (first < 0)
            first = i;
        raft_epoch_append(raft, b->epoch, b->base);
        raft->end = b->last + 1;
        n++;
    }
    if (n == 0)
        return;
    raft_out_t *out = raft_out_push(raft, RAFT_OUT_APPEND);
    out->msg = *msg;
    out->msg.batches = msg->batches + first;
    out->msg.nbatches = n;
}

static void follow_hw(raft_t *raft, int64_t leader_hw)
{
    int64_t hw = leader_hw < raft->end ? leader_hw : raft->end;
    if (hw <= raft->hw)
        return;
    raft->hw = hw;
    raft_out_push(raft, RAFT_OUT_HW)->offset = hw;
}

/* Tried again after a short wait; a leader that stays silent is lost
 * when the fetch timeout passes (raft_tick). */
void raft_fetch_failed(raft_t *raft, int64_t now_ms)
{
    raft->fetch_retry_at = now_ms + raft->cfg.election_backoff_max_ms / 10 + 1;
}

/* A response from the epoch's leader, to a node that fetches from it (a
 * prospective voter that hears from it again follows it again). */
static int from_leader(raft_t *raft, const raft_msg_t *msg, int64_t now_ms)
{
    if (msg->err || msg->epoch != raft->epoch || msg->src != raft->leader || raft->leader < 0)
        return 0;
    if (raft->role == RAFT_PROSPECTIVE)
        raft_become(raft, RAFT_FOLLOWER, now_ms);
    return raft->role == RAFT_FOLLOWER;
}

void raft_on_fetch_resp(raft_t *raft, const raft_msg_t *msg, int64_t now_ms)
{
    raft_observe(raft, msg->epoch, msg->leader_id, now_ms);
    if (raft->role == RAFT_LEADER || raft->role == RAFT_CANDIDATE || raft->snap_want_end >= 0)
        return;
    if (!msg->err &&
        (msg->fetch_offset != raft->end || msg->last_fetched_epoch != raft_last_epoch(raft)))
        return; /* the answer to an older fetch: the log has moved since */
    raft->fetch_inflight = 0;
    if (!from_leader(raft, msg, now_ms)) {
        raft_fetch_failed(raft, now_ms);
        return;
    }
    raft->leader_contact_ms = now_ms;
    raft->fetch_deadline = now_ms + raft->cfg.fetch_timeout_ms;
    raft->fetch_retry_at = 0;
    if (msg->div_end >= 0) {
        truncate_to(raft, msg->div_epoch, msg->div_end);
    } else if (msg->snap_end >= 0) {
        raft_out_t *out = raft_out_push(raft, RAFT_OUT_SNAPSHOT);
        out->offset = msg->snap_end;
        out->append_epoch = msg->snap_epoch;
        out->msg = *msg;
        raft->snap_want_end = msg->snap_end;
        raft->snap_want_epoch = msg->snap_epoch;
        return;
    } else {
        append_batches(raft, msg);
        follow_hw(raft, msg->hw);
    }
    raft_fetch_tick(raft, now_ms);
}

int raft_replica_state(const raft_t *raft, int32_t id, int64_t *end, int64_t *last_fetch_ms,
                       int64_t *caught_up_ms)
{
    if (raft->role != RAFT_LEADER)
        return -1;
    for (int i = 0; i < raft->npeers; i++) {
        const raft_peer_t *p = &raft->peers[i];
        if (p->id != id)
            continue;
        int self = id == raft->cfg.node_id;
        *end = self ? raft->end : p->end;
        *last_fetch_ms = self ? -1 : p->last_fetch_ms;
        *caught_up_ms = self ? -1 : p->caught_up_ms;
        return 0;
    }
    return -1;
}

int raft_granting_voters(const raft_t *raft, int32_t *ids, int cap)
{
    int n = 0;
    if (raft->role != RAFT_LEADER)
        return 0;
    for (int i = 0; i < raft->cfg.nvoters && n < cap; i++)
        if (raft->granted & (1u << i))
            ids[n++] = raft->cfg.voters[i];
    return n;
}

int raft_replicas(const raft_t *raft, int32_t *ids, int *voter, int cap)
{
    int n = 0;
    if (raft->role != RAFT_LEADER)
        return 0;
    for (int i = 0; i < raft->npeers && n < cap; i++) {
        ids[n] = raft->peers[i].id;
        voter[n++] = raft->peers[i].voter;
    }
    return n;
}

int raft_replica_dir(const raft_t *raft, int32_t id, uint8_t out[16])
{
    if (raft->role != RAFT_LEADER)
        return -1;
    for (int i = 0; i < raft->npeers; i++) {
        if (raft->peers[i].id == id) {
            memcpy(out, raft->peers[i].dir_id, 16);
            return 0;
        }
    }
    return -1;
}
