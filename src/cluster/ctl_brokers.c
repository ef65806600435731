/* The controller's broker part (ctl.h): this node registers with its own
 * controller and heartbeats, in-process, through the same decisions
 * (bkr.h) a remote broker's BrokerRegistration and BrokerHeartbeat get,
 * so that its registration is in the metadata log as a Kafka combined
 * node's is: a RegisterBrokerRecord (fenced, with its listeners,
 * features, rack and log dir ids) and the BrokerRegistrationChangeRecord
 * that unfences it once caught up.
 *
 * The node's previous registration (a new incarnation registers at each
 * start) belongs to this process's predecessor, which cannot be alive:
 * no session is started for it, so the new incarnation is not refused as
 * a duplicate. Stale sessions are not fenced here: the only broker is
 * this node, whose heartbeats come from its own loop. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/ctl_int.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"
#include "util/uuid.h"

#define CTL_SESSION_TIMEOUT_MS 9000 /* broker.session.timeout.ms's default */
#define CTL_HEARTBEAT_INTERVAL_MS 2000 /* broker.heartbeat.interval.ms's */

void ctl_brokers_init(ctl_t *ctl, const ctl_config_t *cfg)
{
    int64_t timeout = cfg->session_timeout_ms > 0 ? cfg->session_timeout_ms
                                                  : CTL_SESSION_TIMEOUT_MS;
    int64_t interval = cfg->heartbeat_interval_ms > 0 ? cfg->heartbeat_interval_ms
                                                      : CTL_HEARTBEAT_INTERVAL_MS;
    bkr_ctl_init(&ctl->bkr, log_mgr_cluster_id(ctl->logs), timeout, interval);
    bkr_out_init(&ctl->bout);
    ctl->rack = cfg->rack && *cfg->rack ? xstrdup(cfg->rack) : NULL;
    ctl->node_epoch = -1;
}

void ctl_brokers_free(ctl_t *ctl)
{
    bkr_ctl_free(&ctl->bkr);
    bkr_out_free(&ctl->bout);
    free(ctl->rack);
}

void ctl_broker_link_lost(ctl_t *ctl, int32_t id, int64_t epoch, int64_t now_ms)
{
    bkr_link_lost(&ctl->bkr, &ctl->meta->img, id, epoch, now_ms);
}

int64_t ctl_node_epoch(const ctl_t *ctl)
{
    return ctl->node_epoch;
}

static meta_str_t ctl_s(const char *s)
{
    meta_str_t m = {s, s ? (int32_t)strlen(s) : -1};
    return m;
}

/* Every feature Strand knows, with the levels it supports. */
static bkr_feature_t *ctl_node_features(int *n)
{
    const ctl_feature_t *f = ctl_features(n);
    bkr_feature_t *v = xcalloc((size_t)*n + 1, sizeof(*v));
    for (int i = 0; i < *n; i++) {
        v[i].name = ctl_s(f[i].name);
        v[i].min = f[i].min_level;
        v[i].max = f[i].max_level;
    }
    return v;
}

/* Commits the last decision's records (start-up: synchronous). */
static int16_t ctl_bout_commit(ctl_t *ctl, int64_t now_ms)
{
    int16_t err = ctl->bout.n ? meta_log_commit(ctl->meta, ctl->bout.v, ctl->bout.n, now_ms) : 0;
    bkr_out_reset(&ctl->bout);
    return err;
}

/* The heartbeat of this node, which has applied everything committed. */
static void ctl_node_hb(ctl_t *ctl, int64_t now_ms, bkr_answer_t *ans)
{
    int64_t end = meta_log_end_offset(ctl->meta);
    bkr_heartbeat_req_t hb = {ctl->node_id, ctl->node_epoch, end - 1, false, false};
    bkr_out_reset(&ctl->bout);
    bkr_heartbeat(&ctl->bkr, &ctl->meta->img, &hb, end, now_ms, &ctl->bout, ans);
}

static int16_t ctl_node_register(ctl_t *ctl, const bkr_listener_t *listeners, int n,
                                 int64_t now_ms, bkr_answer_t *ans)
{
    int ndirs = log_mgr_ndirs(ctl->logs), nf;
    uint8_t(*dirs)[16] = xcalloc((size_t)ndirs + 1, 16);
    bkr_feature_t *features = ctl_node_features(&nf);
    bkr_register_req_t req;

    for (int i = 0; i < ndirs; i++)
        log_mgr_dir_id(ctl->logs, i, dirs[i]);
    memset(&req, 0, sizeof(req));
    req.broker_id = ctl->node_id;
    req.cluster_id = ctl_s(ctl->bkr.cluster_id);
    memcpy(req.incarnation, ctl->incarnation, 16);
    req.listeners = listeners;
    req.nlisteners = n;
    req.features = features;
    req.nfeatures = nf;
    req.rack = ctl_s(ctl->rack);
    req.dirs = (const uint8_t(*)[16])dirs;
    req.ndirs = ndirs;
    req.prev_epoch = log_mgr_prev_broker_epoch(ctl->logs);
    bkr_out_reset(&ctl->bout);
    bkr_register(&ctl->bkr, &ctl->meta->img, &req, meta_log_end_offset(ctl->meta), now_ms,
                 &ctl->bout, ans);
    int16_t err = ans->err ? ans->err : ctl_bout_commit(ctl, now_ms);
    free(dirs);
    free(features);
    return err;
}

int16_t ctl_register_node(ctl_t *ctl, const bkr_listener_t *listeners, int n, int64_t now_ms)
{
    bkr_answer_t ans;
    int16_t err;

    if (uuid_generate(ctl->incarnation) < 0)
        return KERR_UNKNOWN_SERVER_ERROR;
    if ((err = ctl_node_register(ctl, listeners, n, now_ms, &ans))) {
        lg_error("broker registration: %s", ans.err ? ans.msg : "cannot write the metadata log");
        return err;
    }
    ctl->node_epoch = ans.epoch;
    ctl_node_hb(ctl, now_ms, &ans);
    if (ans.err || (err = ctl_bout_commit(ctl, now_ms))) {
        lg_error("broker heartbeat: %s", ans.err ? ans.msg : "cannot write the metadata log");
        return ans.err ? ans.err : err;
    }
    lg_info("registered as broker %d, epoch %lld%s", ctl->node_id, (long long)ctl->node_epoch,
            ans.fenced ? " (fenced)" : "");
    return KERR_NONE;
}

static void ctl_hb_done(ctl_op_t *op)
{
    ctl_t *ctl = op->udata;
    if (op->err)
        lg_warn("broker heartbeat: %s", op->msg);
    ctl->hb_busy = 0;
}

void ctl_node_heartbeat(ctl_t *ctl, int64_t now_ms)
{
    if (ctl->hb_busy || ctl->node_epoch < 0)
        return;
    memset(&ctl->hb, 0, sizeof(ctl->hb));
    ctl->hb.kind = CTL_NODE_HEARTBEAT;
    ctl->hb.nassign = -1;
    ctl->hb.now_ms = now_ms;
    ctl->hb.done = ctl_hb_done;
    ctl->hb.udata = ctl;
    ctl->hb_busy = 1;
    ctl_submit(ctl, &ctl->hb);
}

int16_t ctl_plan_node_heartbeat(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    bkr_answer_t ans;
    ctl_node_hb(ctl, op->now_ms, &ans);
    if (ans.err) {
        snprintf(op->msg, sizeof(op->msg), "%s", ans.msg);
        return ans.err;
    }
    /* The batch is encoded when it is submitted, while bout still holds
     * what the records point to. */
    for (int i = 0; i < ctl->bout.n; i++)
        *ctl_batch_add(b, ctl->bout.v[i].type) = ctl->bout.v[i];
    return KERR_NONE;
}
