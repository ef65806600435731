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

void broker_advertised(broker_t *b, const char **host, int *port)
{
    const bcfg_listener_t *l = b->cfg.nadvertised ? b->cfg.advertised : b->cfg.listeners;
    int n = b->cfg.nadvertised ? b->cfg.nadvertised : b->cfg.nlisteners;
    const char *ctrl = b->cfg.controller_listener_names;

    for (int i = 0; i < n; i++) {
        if (*ctrl && strstr(ctrl, l[i].name))
            continue;
        *host = *l[i].host ? l[i].host : b->hostname;
        *port = l[i].port;
        if (l[i].port == 0 && b->nlisteners)
            *port = net_listener_port(b->listeners[0]);
        return;
    }
    *host = b->hostname;
    *port = b->nlisteners ? net_listener_port(b->listeners[0]) : 9092;
}

/* ---- connections ---- */

static void broker_on_accept(net_listener_t *lst, int fd, void *data)
{
    broker_t *b = data;
    (void)lst;
    if (b->stopping || b->nconns >= b->cfg.max_connections) {
        close(fd);
        return;
    }
    net_conn_t *conn = net_conn_new(b->loop, fd, &broker_conn_ops, b->cfg.socket_request_max_bytes,
                                    sizeof(api_conn_t));
    if (conn->closing)
        return;
    if (b->cfg.socket_send_buffer_bytes > 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &b->cfg.socket_send_buffer_bytes, sizeof(int));
    if (b->cfg.socket_receive_buffer_bytes > 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &b->cfg.socket_receive_buffer_bytes, sizeof(int));
    api_conn_t *ac = conn->udata;
    ac->b = b;
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
    ac->b->nconns--;
    conn->udata = NULL; /* the memory goes with the connection */
}

static const net_conn_ops_t broker_conn_ops = {
    .on_request = api_on_request,
    .on_close = broker_on_close,
};

static int broker_listen(broker_t *b)
{
    const char *ctrl = b->cfg.controller_listener_names;
    for (int i = 0; i < b->cfg.nlisteners; i++) {
        const bcfg_listener_t *l = &b->cfg.listeners[i];
        if (*ctrl && strstr(ctrl, l->name)) {
            /* One node is its own quorum: nothing to serve there yet. */
            lg_info("listener %s (controller) is not opened: single-node quorum", l->name);
            continue;
        }
        net_listener_t *lst = net_listener_new(b->loop, l->host, l->port, broker_on_accept, b);
        if (!lst) {
            lg_error("cannot listen on %s://%s:%d: %s", l->name, l->host, l->port,
                     strerror(errno));
            return -1;
        }
        b->listeners = xrealloc(b->listeners, (size_t)(b->nlisteners + 1) * sizeof(*b->listeners));
        b->listeners[b->nlisteners++] = lst;
        lg_info("listening on %s://%s:%d", l->name, *l->host ? l->host : "0.0.0.0",
                net_listener_port(lst));
    }
    if (!b->nlisteners) {
        lg_error("no client listener configured");
        return -1;
    }
    return 0;
}

/* ---- periodic jobs ---- */

static void broker_every(broker_t *b, int64_t ms, net_timer_cb *cb)
{
    if (ms > 0 && ms < INT64_MAX / 2)
        net_timer_add(b->loop, ms, cb, b);
}

static void broker_job_retention(net_loop_t *loop, void *data)
{
    broker_t *b = data;
    (void)loop;
    int n = log_mgr_retention(b->logs, net_now_wall_ms());
    if (n > 0)
        lg_info("retention deleted %d segments", n);
    part_flush_rolled(b->reg);
    broker_every(b, b->cfg.log_retention_check_interval_ms, broker_job_retention);
}

/* The checkpoint files are rendered on the loop and written and fsynced
 * on a worker; the next round is armed when this one is back. */
typedef struct broker_ckpt_s {
    net_job_t job; /* first */
    broker_t *b;
    log_mgr_ckpt_t ck;
} broker_ckpt_t;

static void broker_job_checkpoint(net_loop_t *loop, void *data);

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
    if (!b->stopping)
        broker_every(b, b->cfg.log_flush_offset_checkpoint_interval_ms, broker_job_checkpoint);
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
    if (b->pool && !b->stopping) {
        net_pool_submit(b->pool, &c->job);
        return;
    }
    broker_ckpt_work(&c->job);
    broker_ckpt_done(&c->job);
}

/* flush.ms: checked once a second (or at the configured interval if it
 * is shorter), as Kafka's log flusher does at log.flush.scheduler.interval.ms. */
static void broker_job_flush(net_loop_t *loop, void *data)
{
    broker_t *b = data;
    (void)loop;
    part_flush_due(b->reg, net_now_wall_ms());
    int64_t every = b->cfg.log_flush_interval_ms < 1000 ? b->cfg.log_flush_interval_ms : 1000;
    broker_every(b, every, broker_job_flush);
}

static void broker_job_idle(net_loop_t *loop, void *data)
{
    broker_t *b = data;
    int64_t now = net_loop_now_mono(loop);
    int trimmed = 0;
    for (net_conn_t *c = b->conns.next, *next; c != &b->conns; c = next) {
        next = c->next;
        if (!c->busy && !c->outq_head && now - c->last_active > b->cfg.connections_max_idle_ms)
            net_conn_close(c, "idle longer than connections.max.idle.ms");
        else if (now - c->last_active > 5000)
            trimmed += net_conn_trim(c);
    }
    /* Freed buffers stay in malloc's free lists; give the pages back so
     * that idle clients really cost little. */
    if (trimmed >= 16)
        malloc_trim(0);
    /* Files of deleted topics and segments (retention's too) go when
     * file.delete.delay.ms has passed, as in Kafka, not minutes later at the
     * next retention check. */
    log_mgr_purge(b->logs, net_now_wall_ms());
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
    if (b->sigio.fd < 0 || net_io_set(b->loop, &b->sigio, NET_READ) < 0) {
        lg_error("signalfd: %s", strerror(errno));
        return -1;
    }
    return 0;
}

/* ---- start and stop ---- */

static int broker_open_logs(broker_t *b)
{
    log_mgr_config_t mc;
    topic_cfg_t tdef;
    char err[512] = "";

    broker_topic_defaults(&b->cfg, &tdef);
    memset(&mc, 0, sizeof(mc));
    mc.dirs = (const char *const *)b->cfg.log_dirs;
    mc.ndirs = b->cfg.nlog_dirs;
    mc.node_id = b->cfg.node_id;
    mc.defaults = tdef.log;
    b->logs = log_mgr_open(&mc, net_now_wall_ms(), err, sizeof(err));
    if (!b->logs) {
        lg_error("cannot open log dirs: %s", err);
        return -1;
    }
    snprintf(b->cluster_id, sizeof(b->cluster_id), "%s", log_mgr_cluster_id(b->logs));
    /* Metadata flows down: the controller owns the metadata log, the
     * partition layer follows it. */
    cfg_topic_apply_static(&tdef, &b->cfg.props);
    ctl_config_t cc = {b->cfg.node_id, tdef};
    b->ctl = ctl_open(b->logs, &cc, net_now_wall_ms());
    if (!b->ctl)
        return -1;
    ctl_attach(b->ctl, b->loop, b->pool);
    part_reg_config_t rc;
    memset(&rc, 0, sizeof(rc));
    rc.defaults = tdef;
    rc.num_partitions = b->cfg.num_partitions;
    rc.node_id = b->cfg.node_id;
    rc.ctl = b->ctl;
    b->reg = part_reg_open_ex(b->logs, &rc, net_now_wall_ms());
    part_attach(b->reg, b->loop, b->pool);
    b->fsess = fsess_cache_new(b->cfg.max_incremental_fetch_session_cache_slots);
    return 0;
}

/* Produced batches are checked (CRC, decompression) and copied into the
 * page cache on these threads so that the loop, which owns all state,
 * keeps receiving meanwhile. The work
 * is pure CPU: more threads than CPUs would only queue. One CPU gets none,
 * the loop does it all. Called after the signals are blocked, which the
 * threads inherit. */
static int broker_start_pool(broker_t *b)
{
    long ncpu = sysconf(_SC_NPROCESSORS_ONLN);
    int n = b->cfg.num_io_threads;

    if (ncpu < 2)
        return 0;
    if (n > ncpu)
        n = (int)ncpu;
    b->pool = net_pool_new(b->loop, n, log_batch_thread_cleanup);
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
    b->cfg = *cfg;
    memset(cfg, 0, sizeof(*cfg));
    b->start_mono_ms = net_now_mono_ms();
    b->conns.next = b->conns.prev = &b->conns;
    b->sigio.fd = -1;
    lg_set_level((enum lg_level)b->cfg.log_level);
    if (gethostname(b->hostname, sizeof(b->hostname) - 1) < 0)
        strcpy(b->hostname, "localhost");
    broker_raise_fd_limit();
    b->loop = net_loop_new();
    if (!b->loop) {
        lg_error("epoll: %s", strerror(errno));
        return -1;
    }
    if (broker_signals(b) < 0 || broker_start_pool(b) < 0 || broker_open_logs(b) < 0)
        return -1;
    /* With group state on disk, its replay starts now, in slices per loop
     * turn (groups answer COORDINATOR_LOAD_IN_PROGRESS until theirs is
     * loaded). Without, __consumer_offsets is created on first use, as
     * Kafka does, so that a fresh broker starts at once. */
    if (part_topic_get(b->reg, "__consumer_offsets", 18) && !api_group_coord(b))
        lg_warn("group coordinator not available yet: will retry on first use");
    /* After every module has read its keys, so that only unknown ones are
     * reported. */
    broker_config_report_ignored(&b->cfg);
    if (broker_listen(b) < 0)
        return -1;
    broker_every(b, b->cfg.log_retention_check_interval_ms, broker_job_retention);
    broker_every(b, b->cfg.log_flush_offset_checkpoint_interval_ms, broker_job_checkpoint);
    broker_every(b, 1000, broker_job_flush);
    broker_every(b, 1000, broker_job_idle);
    lg_info("strand node %d of cluster %s started in %lld ms", b->cfg.node_id, b->cluster_id,
            (long long)(net_now_mono_ms() - b->start_mono_ms));
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
    for (int i = 0; i < b->nlisteners; i++)
        net_listener_free(b->listeners[i]);
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
        net_timer_add(b->loop, 20, broker_drain, b);
        net_loop_run(b->loop);
    }
    while (b->conns.next != &b->conns)
        net_conn_close(b->conns.next, NULL);
    net_timer_add(b->loop, 0, broker_drain, b);
    net_loop_run(b->loop); /* runs the deferred frees */
}

int broker_run(broker_t *b)
{
    int rc = 0;
    net_loop_run(b->loop);
    b->stopping = 1;
    broker_shutdown(b);
    net_pool_free(b->pool); /* jobs of closed connections come back cancelled */
    b->pool = NULL;
    ctl_attach(b->ctl, b->loop, NULL);
    part_attach(b->reg, b->loop, NULL);
    part_append_shutdown(b->reg); /* writes still queued and the last flush round */
    api_group_shutdown(b);
    part_reg_free(b->reg);
    ctl_free(b->ctl);
    fsess_cache_free(b->fsess);
    if (log_mgr_close(b->logs, -1) < 0) {
        lg_error("clean shutdown of the logs failed: %s", strerror(errno));
        rc = 1;
    }
    free(b->listeners);
    if (b->sigio.fd >= 0) {
        net_io_del(b->loop, &b->sigio);
        close(b->sigio.fd);
    }
    net_loop_free(b->loop);
    broker_config_free(&b->cfg);
    lg_info("shut down");
    return rc;
}
