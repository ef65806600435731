/* cluster: see cluster.h. The nodes and what a test does to them; their
 * properties are cluster_props.c's, their processes cluster_proc.c's. */
#include "testlib/cluster_int.h"

#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib/netns.h"
#include "testlib/testlib.h"

/* Kills every node still running; on a failure prints their logs first. */
static void tl_cluster_on_end(void *arg, int failed)
{
    tl_cluster *c = arg;
    if (failed)
        tl_cluster_dump_logs(c, 25);
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].pid > 0) {
            tl_proc_kill9(&c->nodes[i]);
            c->nodes[i].pid = 0;
        }
    for (int i = 0; i < c->nnodes; i++)
        tl_netns_remove(&c->nodes[i]);
}

/* A shared quorum needs one cluster id in every node's format (16 random
 * bytes, URL-safe base64, as kafka-storage random-uuid): Strand nodes are
 * formatted with it before their first start, kafka-ref.sh takes it from
 * KAFKA_REF_CLUSTER_ID. */
static void tl_cluster_new_id(tl_cluster *c)
{
    static const char b64[] =
        "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
    char id[23];
    for (int i = 0; i < 22; i++)
        id[i] = b64[tl_rand() % 64];
    id[21] = b64[(tl_rand() % 4) * 16]; /* 128 bits: the last char holds 2 */
    id[22] = '\0';
    memcpy(c->cluster_id, id, sizeof(id));
    setenv("KAFKA_REF_CLUSTER_ID", id, 1);
}

tl_cluster *tl_cluster_new(const char *name, tl_quorum quorum)
{
    tl_cluster *c = calloc(1, sizeof(*c));
    char *dir;
    if (!c)
        tl_fail("out of memory");
    snprintf(c->name, sizeof(c->name), "%s", name);
    dir = tl_scratch_dir(name);
    snprintf(c->dir, sizeof(c->dir), "%s", dir);
    free(dir);
    c->quorum = quorum;
    c->kafka = tl_is_kafka();
    if (quorum == TL_QUORUM_SHARED)
        tl_cluster_new_id(c);
    tl_on_end(tl_cluster_on_end, c);
    return c;
}

void tl_cluster_free(tl_cluster *c)
{
    if (!c)
        return;
    tl_on_end_remove(tl_cluster_on_end, c);
    tl_cluster_on_end(c, 0);
    for (int i = 0; i < c->nproxies; i++)
        tl_proxy_free(c->proxies[i]);
    for (int i = 0; i < c->nnodes; i++)
        for (int j = 0; j < c->nodes[i].nextra; j++)
            free(c->nodes[i].extra[j]);
    for (int j = 0; j < c->nextra; j++)
        free(c->extra[j]);
    free(c);
}

static char *tl_strdup(const char *s)
{
    char *d = strdup(s);
    if (!d)
        tl_fail("out of memory");
    return d;
}

void tl_node_set(tl_node *node, const char *kv)
{
    if (!strchr(kv, '='))
        tl_fail("node %d: not KEY=VALUE: %s", node->id, kv);
    if (node->nextra == TL_NODE_MAX_EXTRA)
        tl_fail("node %d: more than %d extra keys", node->id, TL_NODE_MAX_EXTRA);
    node->extra[node->nextra++] = tl_strdup(kv);
}

void tl_cluster_set(tl_cluster *c, const char *kv)
{
    if (c->nextra == TL_NODE_MAX_EXTRA)
        tl_fail("cluster: more than %d extra keys", TL_NODE_MAX_EXTRA);
    c->extra[c->nextra++] = tl_strdup(kv);
    for (int i = 0; i < c->nnodes; i++)
        tl_node_set(&c->nodes[i], kv);
}

tl_node *tl_cluster_add(tl_cluster *c, int roles, const char *const *extra)
{
    tl_node *node;
    if (c->nnodes == TL_CLUSTER_MAX)
        tl_fail("cluster: more than %d nodes", TL_CLUSTER_MAX);
    if (c->quorum == TL_QUORUM_SOLO)
        roles = TL_ROLE_COMBINED;
    if (!(roles & TL_ROLE_COMBINED))
        tl_fail("cluster: a node needs a role");
    node = &c->nodes[c->nnodes++];
    memset(node, 0, sizeof(*node));
    node->cluster = c;
    node->id = c->nnodes;
    node->roles = roles;
    node->kafka = c->kafka;
    node->port = roles & TL_ROLE_BROKER ? tl_cluster_free_port(c) : 0;
    node->cport = roles & TL_ROLE_CONTROLLER ? tl_cluster_free_port(c) : 0;
    node->adv_port = node->port;
    tl_node_set_host(node, "127.0.0.1");
    snprintf(node->dir, sizeof(node->dir), "%s/node-%d", c->dir, node->id);
    if (mkdir(node->dir, 0755) < 0 && errno != EEXIST)
        tl_fail("mkdir %s: %s", node->dir, strerror(errno));
    for (int i = 0; i < c->nextra; i++)
        tl_node_set(node, c->extra[i]);
    for (; extra && *extra; extra++)
        tl_node_set(node, *extra);
    return node;
}

void tl_cluster_add_n(tl_cluster *c, int n, int roles, const char *const *extra)
{
    for (int i = 0; i < n; i++)
        tl_cluster_add(c, roles, extra);
}

int tl_cluster_size(const tl_cluster *c)
{
    return c->nnodes;
}

tl_node *tl_cluster_node(tl_cluster *c, int id)
{
    if (id < 1 || id > c->nnodes)
        tl_fail("cluster %s has no node %d", c->name, id);
    return &c->nodes[id - 1];
}

const char *tl_cluster_dir(const tl_cluster *c)
{
    return c->dir;
}

void tl_node_set_host(tl_node *node, const char *host)
{
    snprintf(node->host, sizeof(node->host), "%s", host);
    if (node->port && node->adv_port == node->port)
        snprintf(node->bootstrap, sizeof(node->bootstrap), "%s:%d", host, node->port);
    if (node->cport)
        snprintf(node->controller, sizeof(node->controller), "%s:%d", host, node->cport);
}

/* ---- lifecycle ---- */

void tl_node_spawn(tl_node *node)
{
    if (node->pid > 0)
        tl_fail("node %d is running already", node->id);
    if (!node->kafka)
        tl_node_write_props(node);
    if (!node->kafka && node->cluster->quorum == TL_QUORUM_SHARED)
        tl_proc_format(node, node->cluster->cluster_id);
    tl_proc_spawn(node);
}

void tl_node_wait_listening(tl_node *node, double timeout_s)
{
    tl_proc_wait_ready(node, timeout_s);
    tl_log("node %d (%s) pid %d: broker %s controller %s, data in %s", node->id,
           node->kafka ? "kafka" : "strand", (int)node->pid,
           node->bootstrap[0] ? node->bootstrap : "-",
           node->controller[0] ? node->controller : "-", node->dir);
}

/* Kafka takes seconds to start, more on a loaded machine. */
static double tl_node_start_timeout(const tl_node *node)
{
    return node->kafka ? 120 : 20;
}

void tl_node_start(tl_node *node)
{
    tl_node_spawn(node);
    tl_node_wait_listening(node, tl_node_start_timeout(node));
}

void tl_cluster_start(tl_cluster *c)
{
    int spawned[TL_CLUSTER_MAX] = {0};
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].pid <= 0) {
            tl_node_spawn(&c->nodes[i]);
            spawned[i] = 1;
        }
    for (int i = 0; i < c->nnodes; i++)
        if (spawned[i])
            tl_node_wait_listening(&c->nodes[i], tl_node_start_timeout(&c->nodes[i]));
}

int tl_node_running(tl_node *node)
{
    return node->pid > 0;
}

/* SIGTERM to node (resumed first when paused), no wait. */
static void tl_node_term(tl_node *node)
{
    if (node->paused)
        tl_node_resume(node);
    tl_proc_term(node);
}

static int tl_node_reap(tl_node *node)
{
    int rc = tl_proc_reap(node);
    tl_log("node %d stopped (exit %d)", node->id, rc);
    return rc;
}

int tl_node_stop(tl_node *node)
{
    if (node->pid <= 0)
        return 0;
    tl_node_term(node);
    return tl_node_reap(node);
}

/* Brokers first, then the controllers, as an operator stops a cluster:
 * a broker's controlled shutdown needs the active controller. The nodes
 * of a pass are told together: the last combined node told alone would
 * have no quorum left for its controlled shutdown (a Kafka node then
 * waits for it until killed). */
void tl_cluster_stop(tl_cluster *c)
{
    int bad = 0;
    for (int pass = 0; pass < 2; pass++) {
        int told[TL_CLUSTER_MAX] = {0};
        for (int i = 0; i < c->nnodes; i++) {
            tl_node *node = &c->nodes[i];
            if ((pass == 0) != !(node->roles & TL_ROLE_CONTROLLER) || node->pid <= 0)
                continue;
            tl_node_term(node);
            told[i] = 1;
        }
        for (int i = 0; i < c->nnodes; i++)
            if (told[i] && tl_node_reap(&c->nodes[i]) != 0) {
                tl_log("node %d did not exit 0 on SIGTERM", c->nodes[i].id);
                bad++;
            }
    }
    if (bad)
        tl_fail("cluster %s: %d node(s) did not shut down cleanly", c->name, bad);
}

void tl_node_kill9(tl_node *node)
{
    if (node->pid <= 0)
        tl_fail("kill -9: node %d is not running", node->id);
    tl_proc_kill9(node);
    node->paused = 0;
    tl_log("node %d killed (SIGKILL)", node->id);
}

void tl_node_pause(tl_node *node)
{
    if (node->pid <= 0 || node->paused)
        tl_fail("pause: node %d is not running or paused already", node->id);
    kill(node->pid, SIGSTOP);
    tl_proc_wait_state(node->pid, 1);
    node->paused = 1;
    tl_log("node %d paused (SIGSTOP)", node->id);
}

void tl_node_resume(tl_node *node)
{
    if (node->pid <= 0 || !node->paused)
        tl_fail("resume: node %d is not paused", node->id);
    kill(node->pid, SIGCONT);
    tl_proc_wait_state(node->pid, 0);
    node->paused = 0;
    tl_log("node %d resumed (SIGCONT)", node->id);
}

void tl_node_restart(tl_node *node)
{
    int rc = tl_node_stop(node);
    if (rc != 0)
        tl_fail("restart: node %d exited %d on SIGTERM", node->id, rc);
    tl_node_start(node);
}

/* ---- proxies ---- */

static tl_proxy *tl_cluster_own(tl_cluster *c, tl_proxy *px)
{
    if (c->nproxies == TL_CLUSTER_MAX_PROXIES)
        tl_fail("cluster: more than %d proxies", TL_CLUSTER_MAX_PROXIES);
    c->proxies[c->nproxies++] = px;
    return px;
}

tl_proxy *tl_node_front(tl_node *node)
{
    tl_cluster *c = node->cluster;
    tl_proxy *px;
    if (!(node->roles & TL_ROLE_BROKER) || node->starts)
        tl_fail("front: node %d has no broker listener or has started", node->id);
    px = tl_cluster_own(c, tl_proxy_new(tl_cluster_free_port(c), node->port));
    node->adv_port = tl_proxy_port(px);
    snprintf(node->bootstrap, sizeof(node->bootstrap), "%s", tl_proxy_addr(px));
    return px;
}

tl_proxy *tl_cluster_link(tl_cluster *c, tl_node *from, tl_node *to)
{
    tl_proxy *px;
    if (!(to->roles & TL_ROLE_CONTROLLER) || from->starts)
        tl_fail("link: node %d is no controller, or node %d has started", to->id, from->id);
    px = tl_cluster_own(c, tl_proxy_new(tl_cluster_free_port(c), to->cport));
    from->link_port[to->id - 1] = tl_proxy_port(px);
    return px;
}

/* ---- logs ---- */

void tl_cluster_dump_logs(tl_cluster *c, int lines)
{
    for (int i = 0; i < c->nnodes; i++) {
        char path[PATH_MAX + 16], cmd[PATH_MAX + 64];
        tl_node_log_path(&c->nodes[i], path, sizeof(path));
        fprintf(stderr, "---- node %d (%s), last %d lines of %s\n", c->nodes[i].id,
                c->nodes[i].pid > 0 ? "running" : "not running", lines, path);
        fflush(stderr);
        snprintf(cmd, sizeof(cmd), "tail -n %d '%s' >&2", lines, path);
        if (system(cmd) != 0)
            fprintf(stderr, "(no log)\n");
        if (c->nodes[i].kafka) { /* why kafka-ref.sh failed, if it did */
            snprintf(cmd, sizeof(cmd), "tail -n 5 '%s/kafka-ref.log' >&2", c->nodes[i].dir);
            if (system(cmd) != 0)
                fprintf(stderr, "(no kafka-ref.log)\n");
        }
    }
    fprintf(stderr, "----\n");
}
