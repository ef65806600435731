/* A controller of a quorum registers with the active controller, as
 * Kafka's ControllerRegistrationManager does: once its image has a
 * metadata.version (it has caught up with the log that far), it sends
 * ControllerRegistration v0 (its id, an incarnation id new at each start,
 * its controller listeners as advertised, the features it supports,
 * zkMigrationReady false) to the quorum's leader, asks again after an
 * error (NOT_CONTROLLER: of the leader named by then), and is done while
 * its image holds a RegisterControllerRecord of this incarnation; it
 * registers again when that record is gone (a snapshot without it) or
 * replaced. DescribeCluster on a controller listener lists what these
 * registrations name (api/api_cluster.c). */
#include "broker/broker_ctlreg.h"

#include <stdlib.h>
#include <string.h>

#include "broker/broker_leader.h"
#include "cluster/ctl.h"
#include "proto/proto.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"
#include "util/uuid.h"

#define BCREG_TICK_MS 100
#define BCREG_IDLE_MS 1000
#define BCREG_RETRY_MS 1000

struct broker_ctlreg_s {
    broker_t *b;
    broker_leader_t *ctl; /* owned */
    uint8_t incarnation[16];
    int in_flight;
    int logged;           /* "registered" said for this registration */
    int64_t not_before;   /* no new request before (after an error) */
    net_timer_id_t timer;
};

static void bcreg_arm(broker_ctlreg_t *r, int64_t ms);

/* Whether the image holds this incarnation's registration. */
static int bcreg_registered(const broker_ctlreg_t *r)
{
    const mi_controller_t *c =
        meta_image_controller(ctl_image(r->b->node.ctl), r->b->node.cfg.node_id);
    return c && !memcmp(c->incarnation, r->incarnation, 16);
}

static void bcreg_on_resp(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    broker_ctlreg_t *r = arg;
    proto_controller_registration_resp_t m;
    arena_t arena;
    (void)out;
    r->in_flight = 0;
    arena_init(&arena, 256);
    proto_controller_registration_resp_init(&m);
    if (resp->err || proto_controller_registration_resp_decode(&m, resp->api_version, resp->body,
                                                               resp->len, &arena) < 0)
        m.error_code = KERR_NETWORK_EXCEPTION;
    int quiet = m.error_code == KERR_NOT_CONTROLLER || m.error_code == KERR_NETWORK_EXCEPTION;
    if (m.error_code && !quiet)
        lg_warn("controller registration refused: %s %.*s", kerr_name(m.error_code),
                m.error_message.len > 0 ? (int)m.error_message.len : 0,
                m.error_message.len > 0 ? m.error_message.p : "");
    if (m.error_code)
        r->not_before = net_now_mono_ms() +
                        (m.error_code == KERR_NOT_CONTROLLER ? BCREG_TICK_MS * 2 : BCREG_RETRY_MS);
    arena_destroy(&arena);
}

/* The controller listeners, advertised where advertised.listeners names
 * them, in the request's arena. */
static void bcreg_listeners(const broker_t *b, proto_controller_registration_req_t *m,
                            arena_t *arena)
{
    const broker_config_t *cfg = &b->node.cfg;
    proto_controller_registration_req_listener_t *v =
        arena_calloc(arena, (size_t)cfg->nlisteners + 1, sizeof(*v));
    int n = 0;

    for (int i = 0; i < cfg->nlisteners; i++) {
        const bcfg_listener_t *l = &cfg->listeners[i];
        if (!l->controller)
            continue;
        for (int j = 0; j < cfg->nadvertised; j++)
            if (!strcmp(cfg->advertised[j].name, l->name))
                l = &cfg->advertised[j];
        const char *host = *l->host ? l->host : b->hostname;
        v[n].name = (proto_str_t){l->name, (int32_t)strlen(l->name)};
        v[n].host = (proto_str_t){host, (int32_t)strlen(host)};
        v[n].port = (uint16_t)l->port;
        v[n].security_protocol = 0; /* PLAINTEXT: the only one served */
        n++;
    }
    m->listeners.n = n;
    m->listeners.v = v;
}

static void bcreg_send(broker_ctlreg_t *r, net_out_t *out)
{
    proto_controller_registration_req_t m;
    int nf;
    const ctl_feature_t *f = ctl_features(&nf);
    arena_t arena;
    buf_t body;

    arena_init(&arena, 1024);
    proto_controller_registration_req_init(&m);
    m.controller_id = r->b->node.cfg.node_id;
    memcpy(m.incarnation_id.b, r->incarnation, 16);
    m.zk_migration_ready = false;
    bcreg_listeners(r->b, &m, &arena);
    m.features.v = arena_calloc(&arena, (size_t)nf + 1, sizeof(*m.features.v));
    for (int i = 0; i < nf; i++) {
        m.features.v[i].name = (proto_str_t){f[i].name, (int32_t)strlen(f[i].name)};
        m.features.v[i].min_supported_version = f[i].min_level;
        m.features.v[i].max_supported_version = ctl_feature_registered_max(&f[i]);
    }
    m.features.n = nf;
    buf_init(&body);
    proto_controller_registration_req_encode(&m, 0, &body);
    arena_destroy(&arena);
    if (net_out_send(out, PROTO_API_CONTROLLER_REGISTRATION, 0, &body, 0, bcreg_on_resp, r) == 0)
        r->in_flight = 1;
    else
        buf_free(&body);
}

static void bcreg_tick(net_loop_t *loop, void *arg)
{
    broker_ctlreg_t *r = arg;
    net_out_t *out;
    (void)loop;
    r->timer = 0;
    if (bcreg_registered(r)) {
        if (!r->logged)
            lg_info("registered as controller %d with the quorum", r->b->node.cfg.node_id);
        r->logged = 1;
        bcreg_arm(r, BCREG_IDLE_MS);
        return;
    }
    r->logged = 0;
    if (!r->in_flight && net_now_mono_ms() >= r->not_before &&
        meta_image_feature(ctl_image(r->b->node.ctl), CTL_FEATURE_METADATA_VERSION) > 0 &&
        (out = broker_leader_out(r->ctl)))
        bcreg_send(r, out);
    bcreg_arm(r, BCREG_TICK_MS);
}

static void bcreg_arm(broker_ctlreg_t *r, int64_t ms)
{
    r->timer = net_timer_add(r->b->node.loop, ms, bcreg_tick, r);
}

int broker_ctlreg_start(broker_t *b)
{
    if (!b->node.cfg.role_controller || !b->node.raft)
        return 0;
    broker_ctlreg_t *r = xcalloc(1, sizeof(*r));
    r->b = b;
    uuid_generate(r->incarnation);
    r->ctl = broker_leader_new(b, "controller-registration");
    b->ctlreg = r;
    bcreg_arm(r, 0);
    return 0;
}

void broker_ctlreg_stop(broker_t *b)
{
    broker_ctlreg_t *r = b->ctlreg;
    if (!r)
        return;
    if (r->timer)
        net_timer_cancel(b->node.loop, r->timer);
    broker_leader_free(r->ctl); /* calls back what is out: in_flight drops */
    free(r);
    b->ctlreg = NULL;
}
