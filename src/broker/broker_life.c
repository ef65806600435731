/* A broker of a quorum of controllers: its life with the active
 * controller, as Kafka's BrokerLifecycleManager leads it. It registers
 * (BrokerRegistration: its advertised listeners, the features it
 * supports, its rack and log dir ids, a new incarnation id each start)
 * with the quorum's leader, then heartbeats with the metadata offset it
 * has applied: every 10 ms while it starts (until the controller says it
 * has caught up to its registration, and once more, as Kafka's broker
 * leaves its STARTING state), so it is unfenced moments after it has
 * caught up, then every broker.heartbeat.interval.ms; the controller
 * fences it when the heartbeats stop for broker.session.timeout.ms.
 * NOT_CONTROLLER or a lost connection: it asks again, of the leader the
 * quorum names by then; a stale epoch (its registration was replaced):
 * it registers again. The leader is dialled at its controller listener
 * as the quorum knows it (broker_quorum_leader_addr): from
 * controller.quorum.voters, or on a dynamic quorum, which lists no
 * voters in the config, from the voter set in force or the leader's
 * endpoint in its Fetch responses (broker_leader.h). */
#include "broker/broker_life.h"
#include "broker/broker_leader.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/ctl.h"
#include "cluster/raft_node.h"
#include "net/net_out.h"
#include "partition/part.h"
#include "proto/proto.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"
#include "util/uuid.h"

#define BLIFE_RETRY_MS 200
#define BLIFE_STARTING_MS 10

typedef struct broker_life_s broker_life_t;

struct broker_life_s {
    broker_t *b;
    broker_leader_t *ctl; /* owned: the connections to the active controller */
    broker_leader_t *alter; /* owned: those of the partitions' ISR changes */
    uint8_t incarnation[16];
    int64_t epoch;         /* -1 until registered */
    int fenced;
    int starting;          /* the start-up catch-up is not over yet */
    int in_flight;
    int stopping;          /* the calls back of net_out_free arm nothing */
    int want_shutdown;     /* controlled shutdown asked */
    int shut;              /* the controller said it may go */
    net_timer_id_t timer;
};

static void blife_arm(broker_life_t *l, int64_t ms);

static net_out_t *blife_leader_out(broker_life_t *l)
{
    return broker_leader_out(l->ctl);
}

static void blife_on_reg(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    broker_life_t *l = arg;
    proto_broker_registration_resp_t r;
    arena_t arena;
    (void)out;
    l->in_flight = 0;
    arena_init(&arena, 512);
    proto_broker_registration_resp_init(&r);
    if (resp->err || proto_broker_registration_resp_decode(&r, resp->api_version, resp->body,
                                                           resp->len, &arena) < 0) {
        blife_arm(l, BLIFE_RETRY_MS);
    } else if (r.error_code) {
        if (r.error_code != KERR_NOT_CONTROLLER)
            lg_warn("broker registration refused: %s", kerr_name(r.error_code));
        blife_arm(l, r.error_code == KERR_NOT_CONTROLLER ? BLIFE_RETRY_MS : 1000);
    } else {
        l->epoch = r.broker_epoch;
        l->fenced = 1;
        lg_info("registered as broker %d with the quorum, epoch %lld", l->b->node.cfg.node_id,
                (long long)l->epoch);
        blife_arm(l, 0);
    }
    arena_destroy(&arena);
}

/* When the next heartbeat goes after an answer without error: soon while
 * starting (the answer that first says caught up ends it), then at the
 * interval. */
static int64_t blife_next_hb(broker_life_t *l, const proto_broker_heartbeat_resp_t *r)
{
    if (!l->starting)
        return l->b->node.cfg.quorum.heartbeat_interval_ms;
    if (r->is_caught_up) {
        l->starting = 0;
        /* Only now is the image as complete as the quorum's: roles come
         * from it, and a log it does not give this node is a stray, not a
         * partition still to come. */
        part_reg_caught_up(l->b->node.reg, net_now_wall_ms());
    }
    return BLIFE_STARTING_MS;
}

static void blife_on_hb(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    broker_life_t *l = arg;
    proto_broker_heartbeat_resp_t r;
    arena_t arena;
    (void)out;
    l->in_flight = 0;
    arena_init(&arena, 512);
    proto_broker_heartbeat_resp_init(&r);
    int64_t next = l->b->node.cfg.quorum.heartbeat_interval_ms;
    if (resp->err || proto_broker_heartbeat_resp_decode(&r, resp->api_version, resp->body,
                                                        resp->len, &arena) < 0) {
        next = BLIFE_RETRY_MS;
    } else if (r.error_code == KERR_STALE_BROKER_EPOCH) {
        lg_warn("broker %d: its registration is gone; registering again", l->b->node.cfg.node_id);
        l->epoch = -1;
        next = 0;
    } else if (r.error_code) {
        next = BLIFE_RETRY_MS;
    } else {
        if (r.is_fenced != l->fenced) {
            l->fenced = r.is_fenced;
            lg_info("broker %d is %s", l->b->node.cfg.node_id, r.is_fenced ? "fenced" : "unfenced");
        }
        if (l->want_shutdown && r.should_shut_down)
            l->shut = 1;
        next = blife_next_hb(l, &r);
    }
    if (l->want_shutdown)
        next = l->shut ? -1 : BLIFE_RETRY_MS;
    arena_destroy(&arena);
    if (next >= 0)
        blife_arm(l, next);
}

static void blife_register(broker_life_t *l, net_out_t *out)
{
    broker_t *b = l->b;
    const broker_config_t *cfg = &b->node.cfg;
    proto_broker_registration_req_t r;
    buf_t body;
    int nf, nl = 0, nd = log_mgr_ndirs(b->logs);
    const ctl_feature_t *f = ctl_features(&nf);
    const bcfg_listener_t *ls = cfg->nadvertised ? cfg->advertised : cfg->listeners;
    int n = cfg->nadvertised ? cfg->nadvertised : cfg->nlisteners;
    proto_broker_registration_req_listener_t *lv = xcalloc((size_t)n + 1, sizeof(*lv));
    proto_broker_registration_req_feature_t *fv = xcalloc((size_t)nf + 1, sizeof(*fv));
    proto_uuid_t *dirs = xcalloc((size_t)nd + 1, sizeof(*dirs));

    proto_broker_registration_req_init(&r);
    r.broker_id = cfg->node_id;
    r.cluster_id = (proto_str_t){b->node.cluster_id, (int32_t)strlen(b->node.cluster_id)};
    memcpy(r.incarnation_id.b, l->incarnation, 16);
    for (int i = 0; i < n; i++) {
        if (ls[i].controller)
            continue;
        const char *host = *ls[i].host ? ls[i].host : b->hostname;
        lv[nl].name = (proto_str_t){ls[i].name, (int32_t)strlen(ls[i].name)};
        lv[nl].host = (proto_str_t){host, (int32_t)strlen(host)};
        lv[nl].port = (uint16_t)(ls[i].port ? ls[i].port : broker_listener_port(b, ls[i].name));
        lv[nl].security_protocol = 0; /* PLAINTEXT: the only one served */
        nl++;
    }
    for (int i = 0; i < nf; i++) {
        fv[i].name = (proto_str_t){f[i].name, (int32_t)strlen(f[i].name)};
        fv[i].min_supported_version = f[i].min_level;
        fv[i].max_supported_version = ctl_feature_registered_max(&f[i]);
    }
    for (int i = 0; i < nd; i++)
        log_mgr_dir_id(b->logs, i, dirs[i].b);
    r.listeners.n = nl;
    r.listeners.v = lv;
    r.features.n = nf;
    r.features.v = fv;
    r.rack = cfg->quorum.rack ? (proto_str_t){cfg->quorum.rack, (int32_t)strlen(cfg->quorum.rack)}
                              : PROTO_STR_NULL;
    r.log_dirs.n = nd;
    r.log_dirs.v = dirs;
    /* the epoch of .kafka_cleanshutdown (-1 after an unclean stop): with
     * eligible leader replicas the controller trusts this log's tail only
     * after a clean one */
    r.previous_broker_epoch = log_mgr_prev_broker_epoch(b->logs);
    buf_init(&body);
    proto_broker_registration_req_encode(&r, 4, &body);
    free(lv);
    free(fv);
    free(dirs);
    if (net_out_send(out, PROTO_API_BROKER_REGISTRATION, 4, &body, 0, blife_on_reg, l) == 0)
        l->in_flight = 1;
    else
        buf_free(&body);
}

static void blife_heartbeat(broker_life_t *l, net_out_t *out)
{
    proto_broker_heartbeat_req_t r;
    buf_t body;
    proto_broker_heartbeat_req_init(&r);
    r.broker_id = l->b->node.cfg.node_id;
    r.broker_epoch = l->epoch;
    r.current_metadata_offset = ctl_meta(l->b->node.ctl)->last_applied;
    r.want_shut_down = l->want_shutdown != 0;
    buf_init(&body);
    proto_broker_heartbeat_req_encode(&r, 2, &body);
    if (net_out_send(out, PROTO_API_BROKER_HEARTBEAT, 2, &body, 0, blife_on_hb, l) == 0)
        l->in_flight = 1;
    else
        buf_free(&body);
}

static void blife_tick(net_loop_t *loop, void *arg)
{
    broker_life_t *l = arg;
    (void)loop;
    l->timer = 0;
    if (l->in_flight)
        return;
    net_out_t *out = blife_leader_out(l);
    if (!out) {
        blife_arm(l, BLIFE_RETRY_MS); /* no leader known yet */
        return;
    }
    if (l->epoch < 0)
        blife_register(l, out);
    else
        blife_heartbeat(l, out);
    if (!l->in_flight)
        blife_arm(l, BLIFE_RETRY_MS);
}

static void blife_arm(broker_life_t *l, int64_t ms)
{
    if (l->stopping)
        return;
    if (l->timer)
        net_timer_cancel(l->b->node.loop, l->timer);
    l->timer = net_timer_add(l->b->node.loop, ms, blife_tick, l);
}

/* A forwarded request's Envelope to the active controller (api.h,
 * api_node_t.forward). */
typedef struct blife_fwd_s {
    void (*cb)(void *arg, const uint8_t *resp, size_t len);
    void *arg;
} blife_fwd_t;

static void blife_on_fwd(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    blife_fwd_t *f = arg;
    (void)out;
    if (resp->err)
        f->cb(f->arg, NULL, 0);
    else
        f->cb(f->arg, resp->body, resp->len);
    free(f);
}

static int blife_forward(void *ctx, buf_t *body, void (*cb)(void *arg, const uint8_t *resp, size_t len),
                         void *arg)
{
    broker_life_t *l = ctx;
    net_out_t *out = l->stopping ? NULL : blife_leader_out(l);
    blife_fwd_t *f;
    if (!out) {
        buf_free(body);
        return -1;
    }
    f = xcalloc(1, sizeof(*f));
    f->cb = cb;
    f->arg = arg;
    if (net_out_send(out, PROTO_API_ENVELOPE, 0, body, 0, blife_on_fwd, f) < 0) {
        buf_free(body);
        free(f);
        return -1;
    }
    return 0;
}

/* A block of producer ids from the active controller
 * (ctl_use_pid_source). */
static void blife_on_pids(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    broker_life_t *l = arg;
    proto_allocate_producer_ids_resp_t r;
    arena_t arena;
    (void)out;
    arena_init(&arena, 256);
    proto_allocate_producer_ids_resp_init(&r);
    if (resp->err || proto_allocate_producer_ids_resp_decode(&r, resp->api_version, resp->body,
                                                             resp->len, &arena) < 0)
        r.error_code = KERR_NOT_CONTROLLER;
    else if (r.error_code == KERR_STALE_BROKER_EPOCH)
        r.error_code = KERR_NOT_CONTROLLER; /* re-registering: ask again after */
    arena_destroy(&arena);
    if (!l->stopping)
        ctl_pid_block(l->b->node.ctl, r.error_code, r.producer_id_start, r.producer_id_len);
}

static int blife_fetch_pids(void *arg)
{
    broker_life_t *l = arg;
    net_out_t *out = l->stopping ? NULL : blife_leader_out(l);
    proto_allocate_producer_ids_req_t r;
    buf_t body;
    if (!out || l->epoch < 0)
        return -1; /* no epoch to name before the registration */
    proto_allocate_producer_ids_req_init(&r);
    r.broker_id = l->b->node.cfg.node_id;
    r.broker_epoch = l->epoch;
    buf_init(&body);
    proto_allocate_producer_ids_req_encode(&r, 0, &body);
    if (net_out_send(out, PROTO_API_ALLOCATE_PRODUCER_IDS, 0, &body, 0, blife_on_pids, l) < 0) {
        buf_free(&body);
        return -1;
    }
    return 0;
}

/* The partition layer's link to the active controller, for its
 * AlterPartition requests (part_use_controller). */
static net_out_t *blife_alter_out(void *arg)
{
    broker_life_t *l = arg;
    return l->stopping ? NULL : broker_leader_out(l->alter);
}

int broker_life_start(broker_t *b)
{
    if (!b->node.cfg.role_broker || !b->node.raft)
        return 0;
    broker_life_t *l = xcalloc(1, sizeof(*l));
    l->b = b;
    l->epoch = -1;
    l->starting = 1;
    uuid_generate(l->incarnation);
    l->ctl = broker_leader_new(b, "broker-lifecycle");
    l->alter = broker_leader_new(b, "alter-partition");
    b->life = l;
    b->node.forward = blife_forward;
    b->node.forward_ctx = l;
    ctl_use_pid_source(b->node.ctl, blife_fetch_pids, l);
    part_use_controller(b->node.reg, blife_alter_out, l);
    blife_arm(l, 0);
    return 0;
}

static void blife_stop_loop(net_loop_t *loop, void *arg)
{
    (void)arg;
    net_loop_stop(loop);
}

/* Kafka's controlled shutdown: heartbeats asking to shut down until the
 * controller, having moved this broker's leaderships away, says it may
 * (at most 5 s), while the broker still serves. */
void broker_life_shutdown(broker_t *b)
{
    broker_life_t *l = b->life;
    if (!l || l->epoch < 0)
        return;
    int64_t until = net_now_mono_ms() + 5000;
    l->want_shutdown = 1;
    if (!l->in_flight)
        blife_arm(l, 0);
    while (!l->shut && net_now_mono_ms() < until) {
        net_timer_add(b->node.loop, 50, blife_stop_loop, NULL);
        net_loop_run(b->node.loop);
    }
    lg_info("broker %d: controlled shutdown %s", b->node.cfg.node_id,
            l->shut ? "done" : "not acknowledged within 5 s");
}

void broker_life_stop(broker_t *b)
{
    broker_life_t *l = b->life;
    if (!l)
        return;
    l->stopping = 1;
    b->last_epoch = l->epoch + 1;
    b->node.forward = NULL;
    ctl_use_pid_source(b->node.ctl, NULL, NULL);
    if (l->timer)
        net_timer_cancel(b->node.loop, l->timer);
    l->timer = 0;
    part_use_controller(b->node.reg, NULL, NULL);
    broker_leader_free(l->ctl); /* calls back what is out: in_flight drops */
    broker_leader_free(l->alter);
    free(l);
    b->life = NULL;
}
