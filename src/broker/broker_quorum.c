/* The metadata quorum of a node that is one of several controllers: its
 * Raft node (cluster/raft_node.h) over the metadata log, talking to the
 * other voters through outbound connections to their controller
 * listeners (cluster/raft_net.h) and answered on this node's controller
 * listener (api/api_raft.c). Started once the pool runs, stopped before
 * the logs close: a leader hands over first (EndQuorumEpoch), so the
 * others elect at once rather than after a fetch timeout. */
#include "broker/broker_quorum.h"
#include "broker/broker_storage.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "cluster/ctl.h"
#include "cluster/raft_net.h"
#include "cluster/raft_reconf.h"
#include "cluster/raft_voters.h"
#include "proto/proto_gen.h"
#include "util/kerr.h"
#include "util/logging.h"

/* Whether this node runs a Raft quorum with others: every node but the
 * one that is its own quorum (broker_storage_single_node: a combined
 * node whose one voter, or one bootstrap server, is itself; it appends
 * its metadata directly, so the README's single-node config runs with no
 * format step). A broker-only node follows the quorum as an observer; a
 * controller or a combined node is a voter, or on a dynamic quorum an
 * observer until it is added. */
int broker_quorum_wanted(const broker_config_t *cfg)
{
    return !broker_storage_single_node(cfg);
}

/* The endpoint of voter v a broker dials: the one under the first name
 * of controller.listener.names, as Kafka's brokers pick it, else its
 * first. */
static const raft_endpoint_t *broker_quorum_voter_ep(const broker_config_t *cfg,
                                                     const raft_voter_t *v)
{
    const char *names = cfg->controller_listener_names ? cfg->controller_listener_names : "";
    size_t n = strcspn(names, ",");

    for (int i = 0; i < v->neps; i++)
        if (strlen(v->eps[i].name) == n && !strncmp(v->eps[i].name, names, n))
            return &v->eps[i];
    return v->neps > 0 ? &v->eps[0] : NULL;
}

int broker_quorum_leader_addr(const broker_t *b, int32_t *id, const char **host, int *port)
{
    const broker_config_t *cfg = &b->node.cfg;
    const raft_voters_entry_t *e = raft_voters_hist_last(&b->voters);
    const raft_voter_t *v;
    const raft_endpoint_t *ep;

    *id = b->node.raft ? raft_leader(raft_node_core(b->node.raft)) : -1;
    if (*id < 0)
        return -1;
    for (int i = 0; i < cfg->quorum.nvoters; i++) {
        if (cfg->quorum.voters[i].id == *id) {
            *host = cfg->quorum.voters[i].host;
            *port = cfg->quorum.voters[i].port;
            return 0;
        }
    }
    /* a dynamic quorum: the voter set in force, else where the leader's
     * Fetch responses said it is (before its VotersRecord is committed) */
    if (b->node.voters && e && (v = raft_voters_find(&e->set, *id)) &&
        (ep = broker_quorum_voter_ep(cfg, v))) {
        *host = ep->host;
        *port = ep->port;
        return 0;
    }
    return raft_net_peer_addr(b->raft_net, *id, host, port);
}

static void broker_quorum_raft(const broker_config_t *cfg, raft_config_t *rc)
{
    const bcfg_quorum_t *q = &cfg->quorum;
    memset(rc, 0, sizeof(*rc));
    rc->node_id = cfg->node_id;
    rc->nvoters = q->nvoters < RAFT_MAX_VOTERS ? q->nvoters : RAFT_MAX_VOTERS;
    for (int i = 0; i < rc->nvoters; i++)
        rc->voters[i] = q->voters[i].id;
    rc->election_timeout_ms = q->election_timeout_ms;
    rc->fetch_timeout_ms = q->fetch_timeout_ms;
    rc->election_backoff_max_ms = q->election_backoff_max_ms;
    rc->request_timeout_ms = q->request_timeout_ms;
    rc->fetch_max_wait_ms = 500; /* KRaft's fetch.max.wait of the quorum */
}

/* The voters in force as peers of the transport (their endpoints). */
static void broker_quorum_peers(broker_t *b)
{
    const raft_voters_entry_t *e = raft_voters_hist_last(&b->voters);

    for (int i = 0; e && b->raft_net && i < e->set.n; i++) {
        const raft_voter_t *v = &e->set.v[i];
        if (v->id != b->node.cfg.node_id && v->neps > 0)
            raft_net_set_peer(b->raft_net, v->id, v->eps[0].host, v->eps[0].port);
    }
}

/* The core's voters are e's. */
static void broker_quorum_set_voters(broker_t *b, const raft_voters_entry_t *e)
{
    int32_t ids[RAFT_MAX_VOTERS];
    int n = e->set.n < RAFT_MAX_VOTERS ? e->set.n : RAFT_MAX_VOTERS;

    for (int i = 0; i < n; i++)
        ids[i] = e->set.v[i].id;
    lg_info("metadata quorum: %d voters from offset %lld", n, (long long)e->offset);
    raft_node_set_voters(b->node.raft, ids, n);
}

static void broker_quorum_on_set(void *ctx)
{
    broker_quorum_peers(ctx);
}

static void broker_quorum_update_done(void *arg, const uint8_t *body, size_t len)
{
    broker_t *b = arg;
    proto_update_raft_voter_resp_t r;
    arena_t arena;

    b->update_inflight = 0;
    arena_init(&arena, 256);
    proto_update_raft_voter_resp_init(&r);
    if (body && proto_update_raft_voter_resp_decode(&r, 0, body, len, &arena) == 0)
        lg_info("metadata quorum: UpdateRaftVoter of this node's endpoint: %s",
                kerr_name(r.error_code));
    arena_destroy(&arena);
}

/* The UpdateRaftVoter of this voter: its endpoint l under its listener's name. */
static void broker_quorum_update_send(broker_t *b, const raft_voter_t *me,
                                      const bcfg_listener_t *l, int32_t leader)
{
    raft_t *raft = raft_node_core(b->node.raft);
    proto_update_raft_voter_req_t r;
    proto_update_raft_voter_req_listener_t ls;
    raft_transport_t tr = raft_net_transport(b->raft_net);
    const char *names = b->node.cfg.controller_listener_names;
    buf_t body;

    proto_update_raft_voter_req_init(&r);
    r.cluster_id = (proto_str_t){b->node.cluster_id, (int32_t)strlen(b->node.cluster_id)};
    r.current_leader_epoch = raft_epoch(raft);
    r.voter_id = me->id;
    memcpy(r.voter_directory_id.b, me->dir_id, 16);
    ls.name = (proto_str_t){names ? names : "", names ? (int32_t)strcspn(names, ",") : 0};
    ls.host = (proto_str_t){b->quorum_host, (int32_t)strlen(b->quorum_host)};
    ls.port = (uint16_t)l->port;
    r.listeners.n = 1;
    r.listeners.v = &ls;
    r.k_raft_version_feature.min_supported_version = 0;
    r.k_raft_version_feature.max_supported_version = 1;
    buf_init(&body);
    proto_update_raft_voter_req_encode(&r, 0, &body);
    b->update_inflight = 1;
    tr.send(tr.ctx, leader, 82, 0, &body, broker_quorum_update_done, b);
}

/* A voter whose endpoint in the set in force is not the one it listens
 * on asks the leader to update it (UpdateRaftVoter), as Kafka's voters
 * do; again a second later while it still differs. */
static void broker_quorum_update_self(broker_t *b, int64_t now)
{
    raft_t *raft = raft_node_core(b->node.raft);
    const raft_voters_entry_t *e = raft_voters_hist_last(&b->voters);
    const raft_voter_t *me = e ? raft_voters_find(&e->set, b->node.cfg.node_id) : NULL;
    const bcfg_listener_t *l = broker_config_controller_listener(&b->node.cfg);
    const char *names = b->node.cfg.controller_listener_names;
    size_t nlen = names ? strcspn(names, ",") : 0;

    if (!me || !l || b->update_inflight || now < b->update_at ||
        raft_role(raft) != RAFT_FOLLOWER || raft_leader(raft) < 0)
        return;
    if (me->neps == 1 && me->eps[0].port == l->port && !strcmp(me->eps[0].host, b->quorum_host) &&
        strlen(me->eps[0].name) == nlen && !strncmp(me->eps[0].name, names, nlen))
        return;
    b->update_at = now + 1000;
    broker_quorum_update_send(b, me, l, raft_leader(raft));
}

/* A voter change waiting for its commit times out; this voter's endpoint
 * is checked. */
static void broker_quorum_reconf_tick(net_loop_t *loop, void *data)
{
    broker_t *b = data;

    if (!b->node.reconf)
        return;
    raft_reconf_tick(b->node.reconf, net_now_wall_ms());
    broker_quorum_update_self(b, net_now_wall_ms());
    b->reconf_timer = net_timer_add(loop, 100, broker_quorum_reconf_tick, b);
}

static void broker_quorum_reconf_start(broker_t *b)
{
    raft_reconf_t *rc = &b->reconf;

    memset(rc, 0, sizeof(*rc));
    rc->node = b->node.raft;
    rc->hist = &b->voters;
    rc->self_id = b->node.cfg.node_id;
    rc->fetch_timeout_ms = b->node.cfg.quorum.fetch_timeout_ms;
    rc->on_set = broker_quorum_on_set;
    rc->ctx = b;
    b->node.voters = &b->voters;
    b->node.reconf = rc;
    b->reconf_timer = net_timer_add(b->node.loop, 100, broker_quorum_reconf_tick, b);
}

/* The KRaftVersion and Voters records of a snapshot's header batch. */
typedef struct bq_snap_ctl_s {
    int16_t kv;
    int has;
    raft_voters_t vs;
} bq_snap_ctl_t;

static void bq_on_ctl(void *arg, int16_t type, const uint8_t *p, size_t len)
{
    bq_snap_ctl_t *c = arg;
    if (type == PROTO_REC_K_RAFT_VERSION_RECORD)
        c->kv = (int16_t)raft_kraft_version_decode(p, len);
    else if (type == PROTO_REC_VOTERS_RECORD && !c->has)
        c->has = raft_voters_decode(&c->vs, p, len) == 0;
}

/* The voters snapshot id holds are in force from its last offset on
 * (entries after it are dropped): a log whose start moved past its
 * VotersRecord has them only there. A static quorum's snapshot holds
 * none: nothing changes. Returns 1 when the history changed. */
static int broker_quorum_snap_voters(broker_t *b, meta_snap_id_t id)
{
    bq_snap_ctl_t c;
    meta_snap_info_t info;
    int changed = 0;
    memset(&c, 0, sizeof(c));
    c.kv = -1;
    raft_voters_init(&c.vs);
    memset(&info, 0, sizeof(info));
    info.on_ctl = bq_on_ctl;
    info.arg = &c;
    if (meta_snap_header_ctl(log_dir(ctl_meta(b->node.ctl)->log), id, &info) == 0 && c.kv > 0) {
        /* at the snapshot's last offset: the voters were in the log then,
         * a first leader has nothing to write again */
        raft_voters_hist_put(&b->voters, id.end_offset - 1, c.kv, c.has ? &c.vs : NULL);
        changed = 1;
    }
    raft_voters_free(&c.vs);
    return changed;
}

/* A dynamic quorum (controller.quorum.bootstrap.servers): the voters are
 * the latest VotersRecord of the log, or else the bootstrap checkpoint's
 * (a first leader then writes them into the log after its
 * LeaderChangeMessage, as Kafka's does); the bootstrap servers are peers
 * -2, -3, ... (as KRaft numbers them), where a node that knows no leader
 * fetches. Returns 0, or -1 (logged). */
static int broker_quorum_dynamic(broker_t *b, raft_node_config_t *nc, raft_net_peer_t *peers,
                                 int *np)
{
    const bcfg_quorum_t *q = &b->node.cfg.quorum;
    log_t *log = ctl_meta(b->node.ctl)->log;
    const raft_voters_entry_t *e;

    raft_voters_hist_init(&b->voters);
    buf_init(&b->epoch_ctl);
    if (b->boot.kraft_version > 0)
        raft_voters_hist_put(&b->voters, -1, b->boot.kraft_version,
                             b->boot.has_voters ? &b->boot.voters : NULL);
    meta_snap_id_t snap;
    if (meta_log_latest_snapshot(ctl_meta(b->node.ctl), &snap))
        broker_quorum_snap_voters(b, snap);
    ctl_meta(b->node.ctl)->voters = &b->voters;
    if (raft_voters_hist_load(&b->voters, log, log_start_offset(log)) < 0) {
        lg_error("metadata quorum: cannot read the voters from the metadata log: %s",
                 strerror(errno));
        return -1;
    }
    b->voters_next = log_end_offset(log);
    nc->kraft_version = 1;
    e = raft_voters_hist_last(&b->voters);
    for (int i = 0; e && i < e->set.n && nc->raft.nvoters < RAFT_MAX_VOTERS; i++) {
        const raft_voter_t *v = &e->set.v[i];
        nc->raft.voters[nc->raft.nvoters++] = v->id;
        if (v->id != b->node.cfg.node_id && v->neps > 0 && *np < RAFT_MAX_VOTERS)
            peers[(*np)++] = (raft_net_peer_t){v->id, v->eps[0].host, v->eps[0].port};
    }
    if (e && e->has_set && e->offset < 0) {
        nc->nepoch_ctl = raft_voters_hist_ctl(&b->voters, 0, nc->epoch_ctl, &b->epoch_ctl);
        nc->raft.epoch_extra = nc->nepoch_ctl;
    }
    for (int i = 0; i < q->nbootstrap && *np < 2 * RAFT_MAX_VOTERS; i++) {
        peers[(*np)++] = (raft_net_peer_t){-(i + 2), q->bootstrap[i].host, q->bootstrap[i].port};
        if (nc->nbootstrap < RAFT_MAX_VOTERS)
            nc->bootstrap[nc->nbootstrap++] = -(i + 2);
    }
    return 0;
}

/* This node's own entry in the voters: where the others reach it. */
static const bcfg_voter_t *broker_quorum_self(const broker_config_t *cfg)
{
    for (int i = 0; i < cfg->quorum.nvoters; i++)
        if (cfg->quorum.voters[i].id == cfg->node_id)
            return &cfg->quorum.voters[i];
    return NULL;
}

static void broker_quorum_wire(broker_t *b, raft_wire_t *w)
{
    const broker_config_t *cfg = &b->node.cfg;
    const bcfg_voter_t *self = broker_quorum_self(cfg);
    const bcfg_listener_t *l = broker_config_controller_listener(cfg);
    static char listener[128];
    const char *names = cfg->controller_listener_names ? cfg->controller_listener_names : "";
    size_t n = strcspn(names, ",");
    snprintf(listener, sizeof(listener), "%.*s", (int)n, names);
    memset(w, 0, sizeof(*w));
    w->cluster_id = b->node.cluster_id;
    w->node_id = cfg->node_id;
    w->listener = listener;
    w->host = self ? self->host : b->hostname;
    w->port = (uint16_t)(self ? self->port : 0);
    if (!self && l) {
        /* copied: a dynamic config change rebuilds the listeners */
        snprintf(b->quorum_host, sizeof(b->quorum_host), "%s", *l->host ? l->host : b->hostname);
        w->host = b->quorum_host;
        w->port = (uint16_t)l->port;
    }
    log_mgr_dir_id(b->logs, 0, w->dir_id); /* the metadata log's dir */
}

/* A leader that lost its role: the voter sets it appended and that have
 * not committed may be truncated away by the next leader, so it goes back
 * to the committed set, as every other node holds (they take the rest
 * when it commits). After the core's outputs, not inside them. */
static void broker_quorum_uncommitted(net_loop_t *loop, void *data)
{
    broker_t *b = data;
    const raft_voters_entry_t *e;

    (void)loop;
    b->voters_check = 0;
    e = raft_voters_hist_last(&b->voters);
    if (!b->node.raft || !b->node.reconf || !e || e->offset < b->voters_next ||
        raft_role(raft_node_core(b->node.raft)) == RAFT_LEADER)
        return;
    raft_voters_hist_truncate(&b->voters, b->voters_next);
    if ((e = raft_voters_hist_last(&b->voters)))
        broker_quorum_set_voters(b, e);
}

static void broker_quorum_role(void *ctx, int role, int32_t epoch, int32_t leader)
{
    broker_t *b = ctx;
    lg_info("metadata quorum: %s in epoch %d (leader %d)", raft_role_name(role), epoch, leader);
    if (b->node.raft)
        meta_log_role(ctl_meta(b->node.ctl), net_now_wall_ms());
    if (b->node.reconf && role != RAFT_LEADER && !b->voters_check) {
        b->voters_check = 1;
        net_loop_defer(b->node.loop, broker_quorum_uncommitted, b);
    }
}

/* As Kafka halts on a failed metadata log dir. */
static void broker_quorum_fatal(void *ctx)
{
    (void)ctx;
    _exit(1);
}

/* A dynamic quorum: the voter sets of newly committed control batches
 * (where DescribeCluster and the peers' addresses come from; the leader
 * wrote its own). */
static void broker_quorum_scan_voters(broker_t *b, int64_t hw)
{
    const raft_voters_entry_t *e = raft_voters_hist_last(&b->voters);
    int64_t before = e ? e->offset : INT64_MIN;
    buf_t out;

    while (b->voters_next < hw) {
        buf_init(&out);
        int64_t next = b->voters_next;
        if (raft_node_read(b->node.raft, b->voters_next, 1 << 20, &out) == 0)
            next = raft_voters_hist_scan(&b->voters, out.p, out.len, b->voters_next);
        buf_free(&out);
        if (next <= b->voters_next)
            break; /* nothing readable yet (a snapshot's start): next time */
        b->voters_next = next;
    }
    e = raft_voters_hist_last(&b->voters);
    if (e && e->offset != before && raft_role(raft_node_core(b->node.raft)) != RAFT_LEADER)
        broker_quorum_set_voters(b, e); /* the leader set it when it appended it */
    broker_quorum_peers(b);
}

static void broker_quorum_commit(void *ctx, int64_t hw)
{
    broker_t *b = ctx;
    if (!b->node.raft)
        return;
    meta_log_committed(ctl_meta(b->node.ctl), hw, net_now_wall_ms());
    if (b->node.voters)
        broker_quorum_scan_voters(b, hw);
    if (b->node.reconf)
        raft_reconf_committed(b->node.reconf, hw);
}

/* After a fetched snapshot replaced the log (deferred: not inside the
 * Raft node's disk work), the voters in force are the snapshot's. */
static void broker_quorum_snap_installed(net_loop_t *loop, void *data)
{
    broker_t *b = data;
    const raft_voters_entry_t *e = raft_voters_hist_last(&b->voters);
    (void)loop;
    if (b->node.raft && e)
        broker_quorum_set_voters(b, e);
    if (b->node.raft)
        broker_quorum_peers(b);
}

static void broker_quorum_snapshot(void *ctx, meta_snap_id_t id, meta_image_t *img,
                                   int64_t last_ts)
{
    broker_t *b = ctx;
    meta_log_install(ctl_meta(b->node.ctl), id, img, last_ts, net_now_wall_ms());
    if (!b->node.reconf)
        return;
    b->voters_next = id.end_offset; /* the log starts there now */
    if (broker_quorum_snap_voters(b, id))
        net_loop_defer(b->node.loop, broker_quorum_snap_installed, b);
}

int broker_quorum_start(broker_t *b)
{
    const broker_config_t *cfg = &b->node.cfg;
    raft_net_peer_t peers[2 * RAFT_MAX_VOTERS];
    raft_node_config_t nc;
    raft_node_hooks_t hooks = {.ctx = b,
                               .on_commit = broker_quorum_commit,
                               .on_role = broker_quorum_role,
                               .on_fatal = broker_quorum_fatal,
                               .on_snapshot = broker_quorum_snapshot};
    char err[512];
    int np = 0;

    if (!broker_quorum_wanted(cfg))
        return 0;
    for (int i = 0; i < cfg->quorum.nvoters && np < RAFT_MAX_VOTERS; i++) {
        if (cfg->quorum.voters[i].id == cfg->node_id)
            continue;
        peers[np].id = cfg->quorum.voters[i].id;
        peers[np].host = cfg->quorum.voters[i].host;
        peers[np].port = cfg->quorum.voters[i].port;
        np++;
    }
    memset(&nc, 0, sizeof(nc));
    broker_quorum_raft(cfg, &nc.raft);
    broker_quorum_wire(b, &nc.wire);
    for (int i = 0; i < nc.raft.nvoters; i++)
        if (nc.raft.voters[i] != cfg->node_id)
            nc.bootstrap[nc.nbootstrap++] = nc.raft.voters[i];
    if (!cfg->quorum.nvoters && broker_quorum_dynamic(b, &nc, peers, &np) < 0)
        return -1;
    nc.seed = (uint64_t)net_now_mono_ms() * 2654435761u + (uint64_t)cfg->node_id;
    b->raft_net = raft_net_new(b->node.loop, peers, np, "raft-client", cfg->quorum.request_timeout_ms,
                               cfg->quorum.election_backoff_max_ms);
    raft_transport_t tr = raft_net_transport(b->raft_net);
    b->node.raft = raft_node_new(&nc, ctl_meta(b->node.ctl)->log, b->node.loop, b->pool, &tr, &hooks,
                                 err, sizeof(err));
    if (!b->node.raft) {
        lg_error("cannot start the metadata quorum: %s", err);
        return -1;
    }
    ctl_use_raft(b->node.ctl, b->node.raft);
    if (!cfg->quorum.nvoters)
        broker_quorum_reconf_start(b);
    /* what the core did while the node was made (its first role) */
    meta_log_role(ctl_meta(b->node.ctl), net_now_wall_ms());
    lg_info("metadata quorum: node %d, %s %d voters%s", cfg->node_id,
            raft_is_voter(raft_node_core(b->node.raft), cfg->node_id) ? "one of" : "an observer of",
            nc.raft.nvoters, cfg->quorum.nvoters ? "" : " (a dynamic quorum)");
    return 0;
}

static void broker_quorum_stop_loop(net_loop_t *loop, void *data)
{
    (void)data;
    net_loop_stop(loop);
}

void broker_quorum_stop(broker_t *b)
{
    if (!b->node.raft)
        return;
    if (raft_role(raft_node_core(b->node.raft)) == RAFT_LEADER) {
        /* a moment for the EndQuorumEpoch notices to leave */
        raft_node_resign(b->node.raft);
        net_timer_add(b->node.loop, 100, broker_quorum_stop_loop, NULL);
        net_loop_run(b->node.loop);
    }
    raft_net_free(b->raft_net); /* calls back what is in flight */
    b->raft_net = NULL;
    ctl_use_raft(b->node.ctl, NULL);
    b->node.voters = NULL;
    if (b->node.reconf)
        net_timer_cancel(b->node.loop, b->reconf_timer);
    b->node.reconf = NULL;
    raft_node_free(b->node.raft);
    b->node.raft = NULL;
    raft_voters_hist_free(&b->voters); /* the node borrowed its records */
    buf_free(&b->epoch_ctl);
}
