/* Start-up, the periodic jobs and shutdown of the broker process. */
#include "broker/broker.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/signalfd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>

#include "api/api.h"
#include "api/api_fsess.h"
#include "api/api_group.h"
#include "api/api_txn.h"
#include "broker/broker_dyn.h"
#include "broker/broker_ctlreg.h"
#include "broker/broker_life.h"
#include "broker/broker_quorum.h"
#include "broker/broker_storage.h"
#include "log/log_batch.h"
#include "net/net_pool.h"
#include "partition/part_append.h"
#include "partition/part_flush.h"
#include "util/logging.h"
#include "util/mem.h"


static const net_conn_ops_t broker_conn_ops;

static void broker_topic_defaults(const broker_config_t *cfg, topic_cfg_t *t)
{
    part_topic_cfg_defaults(t);
    t->log.segment_bytes = cfg->log_segment_bytes;
    t->log.segment_ms = cfg->log_roll_ms;
    t->log.retention_ms = cfg->log_retention_ms;
    t->log.retention_bytes = cfg->log_retention_bytes;
    t->log.index_interval_bytes = cfg->log_index_interval_bytes;
    t->log.segment_index_bytes = cfg->log_index_size_max_bytes;
    t->log.file_delete_delay_ms = cfg->log_segment_delete_delay_ms;
    t->log.flush_messages = cfg->log_flush_interval_messages;
    t->log.flush_ms = cfg->log_flush_interval_ms;
    t->log.producer_id_expiration_ms = cfg->producer_id_expiration_ms;
    t->log.timestamp_type = cfg->log_message_timestamp_log_append ? 1 : 0;
    t->max_message_bytes = cfg->message_max_bytes;
    t->min_insync_replicas = cfg->min_insync_replicas;
    t->ts_before_max_ms = cfg->log_message_timestamp_before_max_ms;
    t->ts_after_max_ms = cfg->log_message_timestamp_after_max_ms;
    t->compacted = strstr(cfg->log_cleanup_policy, "compact") != NULL;
    t->flush_messages = cfg->log_flush_interval_messages;
    t->flush_ms = cfg->log_flush_interval_ms;
}

int broker_listener_port(const broker_t *b, const char *name)
{
    size_t len = strlen(name);
    for (int i = 0; i < b->nlisteners; i++)
        if (!strncmp(b->lkeys[i], name, len) && b->lkeys[i][len] == ' ')
            return net_listener_port(b->listeners[i]);
    return b->nlisteners ? net_listener_port(b->listeners[0]) : 9092;
}

static void broker_adv_free(broker_t *b)
{
    for (int i = 0; i < b->node.nadv; i++) {
        free(b->node.adv[i].name);
        free(b->node.adv[i].host);
    }
    free(b->node.adv);
    b->node.adv = NULL;
    b->node.nadv = 0;
}

/* The endpoints advertised to clients, once the listeners are open: each
 * advertised listener that is not a controller listener, with the host
 * name for one without a host and its listener's bound port for port 0
 * (as Kafka takes it). Again after a dynamic change of the listeners: made
 * anew (the listeners they came from may go), which is why handlers keep
 * them no longer than their call. */
void broker_advertise(broker_t *b)
{
    const broker_config_t *cfg = &b->node.cfg;
    const bcfg_listener_t *l = cfg->nadvertised ? cfg->advertised : cfg->listeners;
    int n = cfg->nadvertised ? cfg->nadvertised : cfg->nlisteners;

    broker_adv_free(b);
    b->node.adv = xcalloc((size_t)n + 1, sizeof(*b->node.adv));
    for (int i = 0; i < n; i++) {
        if (l[i].controller)
            continue;
        api_endpoint_t *ep = &b->node.adv[b->node.nadv++];
        ep->name = xstrdup(l[i].name);
        ep->host = xstrdup(*l[i].host ? l[i].host : b->hostname);
        ep->port = l[i].port ? l[i].port : broker_listener_port(b, l[i].name);
    }
}

/* ---- connections ---- */

/* The index of open listener lst, or -1. */
static int broker_listener_index(const broker_t *b, const net_listener_t *lst)
{
    for (int i = 0; i < b->nlisteners; i++)
        if (b->listeners[i] == lst)
            return i;
    return -1;
}

/* The one copy of listener name key[0..len), kept until shutdown: a
 * connection points to it, so that it costs no allocation of its own (an
 * idle connection must stay small, and a small block of each would keep
 * the freed buffers' pages resident) and outlives its listener. Names
 * only come from the config, so the list stays short. */
static const char *broker_lname(broker_t *b, const char *key, size_t len)
{
    for (int i = 0; i < b->nlnames; i++)
        if (strlen(b->lnames[i]) == len && !memcmp(b->lnames[i], key, len))
            return b->lnames[i];
    b->lnames = xrealloc(b->lnames, (size_t)(b->nlnames + 1) * sizeof(*b->lnames));
    b->lnames[b->nlnames] = xstrndup(key, len);
    return b->lnames[b->nlnames++];
}

/* A connection's listener: its kind (enum api_listener) and its name (the
 * first word of its key). */
static void broker_conn_listener(broker_t *b, const net_listener_t *lst, api_conn_t *ac)
{
    int i = broker_listener_index(b, lst);
    ac->kind = i >= 0 ? b->lkinds[i] : API_L_BROKER;
    if (i >= 0)
        ac->listener = broker_lname(b, b->lkeys[i], strcspn(b->lkeys[i], " "));
}

static void broker_on_accept(net_listener_t *lst, int fd, void *data)
{
    broker_t *b = data;

    if (b->node.stopping || b->nconns >= b->node.cfg.max_connections) {
        close(fd);
        return;
    }
    net_conn_t *conn = net_conn_new(b->node.loop, fd, &broker_conn_ops, b->node.cfg.socket_request_max_bytes,
                                    sizeof(api_conn_t));
    if (conn->closing)
        return;
    if (b->node.cfg.socket_send_buffer_bytes > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b->node.cfg.socket_send_buffer_bytes, sizeof(int));
    if (b->node.cfg.socket_receive_buffer_bytes > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b->node.cfg.socket_receive_buffer_bytes, sizeof(int));
    api_conn_t *ac = conn->udata;
    ac->b = &b->node;
    broker_conn_listener(b, lst, ac);
    conn->next = b->conns.next;
    conn->prev = &b->conns;
    b->conns.next->prev = conn;
    b->conns.next = conn;
    b->nconns++;
}

static void broker_on_close(net_conn_t *conn)
{
    api_conn_t *ac = conn->udata;
    if (!ac || !ac->b) {
        /* Closed before it was linked in (a failure inside net_conn_new). */
        conn->udata = NULL;
        return;
    }
    api_on_close(conn);
    conn->prev->next = conn->next;
    conn->next->prev = conn->prev;
    /* the node is the broker context's first member */
    ((broker_t *)(void *)ac->b)->nconns--;
    conn->udata = NULL; /* the memory goes with the connection */
}

static const net_conn_ops_t broker_conn_ops = {
    .on_request = api_on_request,
    .on_close = broker_on_close,
};

static void broker_lkey(const bcfg_listener_t *l, char *buf, size_t cap)
{
    snprintf(buf, cap, "%s %s %d", l->name, l->host, l->port);
}

/* Whether the config still names the endpoint of open listener i. */
static int broker_listener_wanted(const broker_t *b, int i)
{
    char key[512];
    for (int j = 0; j < b->node.cfg.nlisteners; j++) {
        broker_lkey(&b->node.cfg.listeners[j], key, sizeof(key));
        if (!strcmp(key, b->lkeys[i]))
            return 1;
    }
    return 0;
}

static int broker_listener_open(broker_t *b, const bcfg_listener_t *l)
{
    char key[512];
    net_listener_t *lst = net_listener_new(b->node.loop, l->host, l->port, broker_on_accept, b);
    if (!lst) {
        lg_error("cannot listen on %s://%s:%d: %s", l->name, l->host, l->port, strerror(errno));
        return -1;
    }
    broker_lkey(l, key, sizeof(key));
    b->listeners = xrealloc(b->listeners, (size_t)(b->nlisteners + 1) * sizeof(*b->listeners));
    b->lkeys = xrealloc(b->lkeys, (size_t)(b->nlisteners + 1) * sizeof(*b->lkeys));
    b->lkinds = xrealloc(b->lkinds, (size_t)(b->nlisteners + 1) * sizeof(*b->lkinds));
    b->lkeys[b->nlisteners] = xstrdup(key);
    b->lkinds[b->nlisteners] = l->controller ? API_L_CONTROLLER : API_L_BROKER;
    b->listeners[b->nlisteners++] = lst;
    lg_info("listening on %s://%s:%d%s", l->name, *l->host ? l->host : "0.0.0.0",
            net_listener_port(lst), l->controller ? " (controller)" : "");
    return 0;
}

/* Closes first, so that an endpoint that moves to another host may keep
 * its port. Connections accepted already stay open. */
int broker_listeners_sync(broker_t *b)
{
    char key[512];
    int failed = 0;

    for (int i = 0; i < b->nlisteners;) {
        if (broker_listener_wanted(b, i)) {
            i++;
            continue;
        }
        lg_info("listener %s closed", b->lkeys[i]);
        net_listener_free(b->listeners[i]);
        free(b->lkeys[i]);
        b->nlisteners--;
        b->listeners[i] = b->listeners[b->nlisteners];
        b->lkeys[i] = b->lkeys[b->nlisteners];
        b->lkinds[i] = b->lkinds[b->nlisteners];
    }
    for (int j = 0; j < b->node.cfg.nlisteners; j++) {
        const bcfg_listener_t *l = &b->node.cfg.listeners[j];
        int open = 0;
        broker_lkey(l, key, sizeof(key));
        for (int i = 0; i < b->nlisteners; i++)
            open |= !strcmp(b->lkeys[i], key);
        if (!open && broker_listener_open(b, l) < 0)
            failed++;
    }
    return failed;
}

static int broker_listen(broker_t *b)
{
    int nbroker = 0;

    if (broker_listeners_sync(b) > 0)
        return -1;
    for (int i = 0; i < b->nlisteners; i++)
        nbroker += b->lkinds[i] == API_L_BROKER;
    if (b->node.cfg.role_broker && !nbroker) {
        lg_error("no client listener configured");
        return -1;
    }
    return 0;
}

/* ---- periodic jobs ---- */

static void broker_every(broker_t *b, int64_t ms, net_timer_cb *cb)
{
    if (ms > 0 && ms < INT64_MAX / 2)
        net_timer_add(b->node.loop, ms, cb, b);
}

/* broker.heartbeat.interval.ms (checked by the config table). */
static int64_t broker_heartbeat_interval(broker_t *b)
{
    const char *v = props_get(&b->node.cfg.props, "broker.heartbeat.interval.ms");
    return v ? strtoll(v, NULL, 10) : 2000;
}

static void broker_job_retention(net_loop_t *loop, void *data)
{
    broker_t *b = data;
    (void)loop;
    int n = log_mgr_retention(b->logs, net_now_wall_ms());
    if (n > 0)
        lg_info("retention deleted %d segments", n);
    part_flush_rolled(b->node.reg);
    broker_every(b, b->node.cfg.log_retention_check_interval_ms, broker_job_retention);
}

/* The checkpoint files are rendered on the loop and written and fsynced
 * on a worker; the next round is armed when this one is back. */
typedef struct broker_ckpt_s {
    net_job_t job; /* first */
    broker_t *b;
    log_mgr_ckpt_t ck;
} broker_ckpt_t;

static void broker_job_checkpoint(net_loop_t *loop, void *data);

/* The checkpoint files are written together, at the shorter of Kafka's
 * two intervals: replica.high.watermark.checkpoint.interval.ms for the
 * high watermarks (5 s), log.flush.offset.checkpoint.interval.ms for the
 * recovery points (60 s); a recovery point written sooner is as true. */
static int64_t broker_checkpoint_interval(const broker_t *b)
{
    int64_t a = b->node.cfg.log_flush_offset_checkpoint_interval_ms;
    int64_t h = b->node.cfg.replica_high_watermark_checkpoint_interval_ms;
    return h > 0 && h < a ? h : a;
}

static void broker_ckpt_work(net_job_t *job)
{
    log_mgr_checkpoint_run(&((broker_ckpt_t *)job)->ck);
}

static void broker_ckpt_done(net_job_t *job)
{
    broker_ckpt_t *c = (broker_ckpt_t *)job;
    broker_t *b = c->b;
    if (log_mgr_checkpoint_end(&c->ck) < 0)
        lg_error("writing checkpoint files failed");
    free(c);
    if (!b->node.stopping)
        broker_every(b, broker_checkpoint_interval(b), broker_job_checkpoint);
}

static void broker_job_checkpoint(net_loop_t *loop, void *data)
{
    broker_t *b = data;
    broker_ckpt_t *c = xcalloc(1, sizeof(*c));
    (void)loop;
    c->b = b;
    c->job.work = broker_ckpt_work;
    c->job.done = broker_ckpt_done;
    log_mgr_checkpoint_begin(b->logs, &c->ck);
    net_pool_run(b->node.stopping ? NULL : b->pool, &c->job);
}

/* flush.ms: checked once a second (or at the configured interval if it
 * is shorter), as Kafka's log flusher does at log.flush.scheduler.interval.ms. */
static void broker_job_flush(net_loop_t *loop, void *data)
{
    broker_t *b = data;
    (void)loop;
    part_flush_due(b->node.reg, net_now_wall_ms());
    int64_t every = b->node.cfg.log_flush_interval_ms < 1000 ? b->node.cfg.log_flush_interval_ms : 1000;
    broker_every(b, every, broker_job_flush);
}

/* Files of deleted topics and segments (retention's too) go when
 * file.delete.delay.ms has passed, as in Kafka, not minutes later at the
 * next retention check; they are removed on a worker (a large topic is
 * thousands of files). One purge is out at a time. */
typedef struct broker_purge_s {
    net_job_t job; /* first */
    broker_t *b;
    log_mgr_purge_t pg;
} broker_purge_t;

static void broker_purge_work(net_job_t *job)
{
    log_mgr_purge_run(&((broker_purge_t *)job)->pg);
}

static void broker_purge_done(net_job_t *job)
{
    broker_purge_t *p = (broker_purge_t *)job;
    log_mgr_purge_back(p->b->logs, &p->pg);
    p->b->purging = 0;
    free(p);
}

static void broker_purge(broker_t *b)
{
    if (b->purging)
        return;
    broker_purge_t *p = xcalloc(1, sizeof(*p));
    p->b = b;
    log_mgr_purge_take(b->logs, net_now_wall_ms(), &p->pg);
    if (!p->pg.n) {
        free(p);
        return;
    }
    p->job.work = broker_purge_work;
    p->job.done = broker_purge_done;
    b->purging = 1;
    net_pool_run(b->node.stopping ? NULL : b->pool, &p->job);
}

static void broker_job_idle(net_loop_t *loop, void *data)
{
    broker_t *b = data;
    int64_t now = net_loop_now_mono(loop);
    int trimmed = 0;
    for (net_conn_t *c = b->conns.next, *next; c != &b->conns; c = next) {
        next = c->next;
        if (!c->busy && !c->outq_head && now - c->last_active > b->node.cfg.connections_max_idle_ms)
            net_conn_close(c, "idle longer than connections.max.idle.ms");
        else if (now - c->last_active > 5000)
            trimmed += net_conn_trim(c);
    }
    /* Freed buffers stay in malloc's free lists; give the pages back so
     * that idle clients really cost little. */
    if (trimmed >= 16)
        malloc_trim(0);
    broker_purge(b);
    broker_every(b, 1000, broker_job_idle);
}

/* ---- signals ---- */

static void broker_on_signal(net_loop_t *loop, net_io_t *io, int events)
{
    struct signalfd_siginfo si;
    (void)events;
    while (read(io->fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
        lg_info("received signal %u, shutting down", si.ssi_signo);
        net_loop_stop(loop);
    }
}

static int broker_signals(broker_t *b)
{
    sigset_t set;
    sigemptyset(&set);
    sigaddset(&set, SIGTERM);
    sigaddset(&set, SIGINT);
    sigprocmask(SIG_BLOCK, &set, NULL);
    signal(SIGPIPE, SIG_IGN);
    b->sigio.fd = signalfd(-1, &set, SFD_NONBLOCK | SFD_CLOEXEC);
    b->sigio.cb = broker_on_signal;
    b->sigio.data = b;
    if (b->sigio.fd < 0 || net_io_set(b->node.loop, &b->sigio, NET_READ) < 0) {
        lg_error("signalfd: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- start and stop ---- */

/* The logs and the controller, which replays the metadata log: from
 * then on the dynamic broker configs are known. */
static int broker_open_logs(broker_t *b, topic_cfg_t *tdef)
{
    log_mgr_config_t mc;
    char err[512] = "";

    broker_topic_defaults(&b->node.cfg, tdef);
    memset(&mc, 0, sizeof(mc));
    mc.dirs = (const char *const *)b->node.cfg.log_dirs;
    mc.ndirs = b->node.cfg.nlog_dirs;
    mc.node_id = b->node.cfg.node_id;
    mc.defaults = tdef->log;
    b->logs = log_mgr_open(&mc, net_now_wall_ms(), err, sizeof(err));
    if (!b->logs) {
        lg_error("cannot open log dirs: %s", err);
        return -1;
    }
    snprintf(b->node.cluster_id, sizeof(b->node.cluster_id), "%s", log_mgr_cluster_id(b->logs));
    /* Metadata flows down: the controller owns the metadata log, the
     * partition layer follows it. */
    cfg_topic_apply_static(tdef, &b->node.cfg.props);
    const char *rack = props_get(&b->node.cfg.props, "broker.rack");
    const char *timeout = props_get(&b->node.cfg.props, "broker.session.timeout.ms");
    ctl_config_t cc = {b->node.cfg.node_id, *tdef, &b->node.cfg.props, broker_dyn_check, b,
                       rack, timeout ? strtoll(timeout, NULL, 10) : 0,
                       broker_quorum_wanted(&b->node.cfg), 0, -1,
                       b->node.cfg.quorum.heartbeat_interval_ms};
    /* format's bootstrap checkpoint: a node that cannot read it does not
     * start, as Kafka's does not */
    if (broker_boot_read(b->node.cfg.log_dirs[0], &b->boot, err, sizeof(err)) < 0) {
        lg_error("cannot read the bootstrap checkpoint: %s", err);
        return -1;
    }
    cc.boot_metadata_version = b->boot.metadata_version;
    cc.boot_elr_version = b->boot.present ? b->boot.elr_version : -1;
    b->node.ctl = ctl_open(b->logs, &cc, net_now_wall_ms());
    return b->node.ctl ? 0 : -1;
}

/* The partition registry, which loads the topics with the topic defaults
 * the dynamic broker configs make. */
static void broker_open_topics(broker_t *b, const topic_cfg_t *tdef)
{
    part_reg_config_t rc;

    ctl_attach(b->node.ctl, b->node.loop, b->pool);
    memset(&rc, 0, sizeof(rc));
    rc.defaults = *tdef;
    rc.props = &b->node.cfg.props;
    rc.on_broker_config = broker_dyn_apply;
    rc.on_broker_config_arg = b;
    rc.num_partitions = b->node.cfg.num_partitions;
    rc.node_id = b->node.cfg.node_id;
    rc.ctl = b->node.ctl;
    rc.inter_broker = b->node.cfg.inter_broker_listener_name;
    b->node.reg = part_reg_open_ex(b->logs, &rc, net_now_wall_ms());
    part_attach(b->node.reg, b->node.loop, b->pool);
    b->node.fsess = fsess_cache_new(b->node.cfg.max_incremental_fetch_session_cache_slots);
}

int broker_pool_size(const broker_t *b)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int n = b->node.cfg.num_io_threads;

    if (ncpu < 2)
        return 0;
    return n > ncpu ? (int)ncpu : n;
}

/* Produced batches are checked (CRC, decompression) and copied into the
 * page cache on these threads so that the loop, which owns all state,
 * keeps receiving meanwhile. The work
 * is pure CPU: more threads than CPUs would only queue. One CPU gets none,
 * the loop does it all. Called after the signals are blocked, which the
 * threads inherit. */
static int broker_start_pool(broker_t *b)
{
    int n = broker_pool_size(b);

    if (n < 1)
        return 0;
    b->pool = net_pool_new(b->node.loop, n, log_batch_thread_cleanup);
    if (!b->pool) {
        lg_error("cannot start %d io threads: %s", n, strerror(errno));
        return -1;
    }
    return 0;
}

/* Every client and every segment file is a descriptor: take all the
 * kernel allows, as servers with many clients do (the soft limit is often
 * 1024). */
static void broker_raise_fd_limit(void)
{
    struct rlimit rl;
    if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
        rl.rlim_cur = rl.rlim_max;
        if (setrlimit(RLIMIT_NOFILE, &rl) < 0)
            lg_warn("cannot raise the open-file limit: %s", strerror(errno));
    }
}

int broker_start(broker_t *b, broker_config_t *cfg)
{
    memset(b, 0, sizeof(*b));
    b->node.cfg = *cfg;
    memset(cfg, 0, sizeof(*cfg));
    b->start_mono_ms = net_now_mono_ms();
    b->conns.next = b->conns.prev = &b->conns;
    b->sigio.fd = -1;
    lg_set_level((enum lg_level)b->node.cfg.log_level);
    if (gethostname(b->hostname, sizeof(b->hostname) - 1) < 0)
        strcpy(b->hostname, "localhost");
    b->node.hostname = b->hostname;
    broker_raise_fd_limit();
    b->node.loop = net_loop_new();
    if (!b->node.loop) {
        lg_error("epoll: %s", strerror(errno));
        return -1;
    }
    topic_cfg_t tdef;
    /* Storage first: an unformatted cluster node is refused with Kafka's
     * message, whatever its shape. */
    if (broker_storage_check(&b->node.cfg) < 0)
        return -1;
    if (broker_signals(b) < 0 || broker_open_logs(b, &tdef) < 0)
        return -1;
    /* The dynamic configs are applied before anything they set starts. */
    broker_dyn_load(b);
    if (broker_start_pool(b) < 0)
        return -1;
    broker_open_topics(b, &tdef);
    if (broker_quorum_start(b) < 0)
        return -1;
    /* With group state on disk, its replay starts now, in slices per loop
     * turn (groups answer COORDINATOR_LOAD_IN_PROGRESS until theirs is
     * loaded). Without, __consumer_offsets is created on first use, as
     * Kafka does, so that a fresh broker starts at once. */
    if (part_topic_get(b->node.reg, "__consumer_offsets", 18) && !api_group_coord(&b->node))
        lg_warn("group coordinator not available yet: will retry on first use");
    /* So does the transactions' (their markers and timeouts wait for no
     * client) */
    if (part_topic_get(b->node.reg, "__transaction_state", 19) && !api_txn_coord(&b->node))
        lg_warn("transaction coordinator not available yet: will retry on first use");
    api_node_coordinator_keys(&b->node);
    /* After every module has read its keys, so that only unknown ones are
     * reported. */
    broker_config_report_ignored(&b->node.cfg);
    if (broker_listen(b) < 0)
        return -1;
    broker_advertise(b);
    /* A voter of a quorum of others registers nothing here: a broker
     * registers with the quorum's active controller. */
    if (!broker_quorum_wanted(&b->node.cfg) && broker_register(b) == 0)
        broker_every(b, broker_heartbeat_interval(b), broker_job_heartbeat);
    broker_life_start(b);
    broker_ctlreg_start(b);
    broker_every(b, b->node.cfg.log_retention_check_interval_ms, broker_job_retention);
    broker_every(b, broker_checkpoint_interval(b), broker_job_checkpoint);
    broker_every(b, 1000, broker_job_flush);
    broker_every(b, 1000, broker_job_idle);
    lg_info("strand node %d of cluster %s started in %lld ms", b->node.cfg.node_id,
            b->node.cluster_id, (long long)(net_now_mono_ms() - b->start_mono_ms));
    return 0;
}

/* Stops the loop again after a short run during shutdown. */
static void broker_drain(net_loop_t *loop, void *data)
{
    (void)data;
    net_loop_stop(loop);
}

static void broker_shutdown(broker_t *b)
{
    for (int i = 0; i < b->nlisteners; i++) {
        net_listener_free(b->listeners[i]);
        free(b->lkeys[i]);
    }
    b->nlisteners = 0;
    /* In-flight requests that wait (long polls) are answered now. */
    for (net_conn_t *c = b->conns.next; c != &b->conns; c = c->next)
        api_finish_pending(c);
    /* Give queued answers (a second at most) to reach their clients. */
    int64_t until = net_now_mono_ms() + 1000;
    for (;;) {
        int pending = 0;
        for (net_conn_t *c = b->conns.next; c != &b->conns; c = c->next)
            pending |= c->outq_head != NULL;
        if (!pending || net_now_mono_ms() >= until)
            break;
        net_timer_add(b->node.loop, 20, broker_drain, b);
        net_loop_run(b->node.loop);
    }
    while (b->conns.next != &b->conns)
        net_conn_close(b->conns.next, NULL);
    net_timer_add(b->node.loop, 0, broker_drain, b);
    net_loop_run(b->node.loop); /* runs the deferred frees */
}

int broker_run(broker_t *b)
{
    int rc = 0;
    net_loop_run(b->node.loop);
    broker_life_shutdown(b);
    b->node.stopping = 1;
    broker_shutdown(b);
    /* From here on the layers do their work in the call: what the jobs
     * still out complete (commits, partition logs) must not queue more
     * behind a pool that is going away. */
    b->node.reg->stopping = 1;
    broker_life_stop(b);
    broker_ctlreg_stop(b);
    broker_quorum_stop(b);
    ctl_attach(b->node.ctl, b->node.loop, NULL);
    net_pool_free(b->pool); /* jobs of closed connections come back cancelled */
    b->pool = NULL;
    part_attach(b->node.reg, b->node.loop, NULL);
    part_append_shutdown(b->node.reg); /* writes still queued and the last flush round */
    api_txn_shutdown(&b->node);
    api_group_shutdown(&b->node);
    part_reg_free(b->node.reg);
    if (!b->last_epoch && b->node.ctl) /* a single node registers itself */
        b->last_epoch = ctl_node_epoch(b->node.ctl) + 1;
    ctl_free(b->node.ctl);
    fsess_cache_free(b->node.fsess);
    if (log_mgr_close(b->logs, b->last_epoch - 1) < 0) {
        lg_error("clean shutdown of the logs failed: %s", strerror(errno));
        rc = 1;
    }
    free(b->listeners);
    free(b->lkeys);
    free(b->lkinds);
    broker_adv_free(b);
    for (int i = 0; i < b->nlnames; i++)
        free(b->lnames[i]);
    free(b->lnames);
    if (b->sigio.fd >= 0) {
        net_io_del(b->node.loop, &b->sigio);
        close(b->sigio.fd);
    }
    net_loop_free(b->node.loop);
    broker_config_free(&b->node.cfg);
    broker_boot_state_free(&b->boot);
    lg_info("shut down");
    return rc;
}
