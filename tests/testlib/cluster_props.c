/* cluster_props: the ports, addresses and properties of a cluster's nodes.
 * One list of KEY=VALUE lines per node serves both kinds: strand reads it
 * as its server.properties, kafka-ref.sh takes it as overrides of its own
 * (the same keys, so a test's nodes are configured alike on both). */
#include "testlib/cluster_int.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testlib/testlib.h"

static int tl_port_bindable(int port)
{
    struct sockaddr_in sa = {0};
    int ok, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        tl_fail("socket: %s", strerror(errno));
    ok = bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0;
    close(fd);
    return ok;
}

static int tl_port_taken(const tl_cluster *c, int port)
{
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].port == port || c->nodes[i].cport == port)
            return 1;
    for (int i = 0; i < c->nproxies; i++)
        if (tl_proxy_port(c->proxies[i]) == port)
            return 1;
    return 0;
}

int tl_cluster_free_port(tl_cluster *c)
{
    for (int i = 0; i < 1000; i++) {
        /* 20000-31999: below the kernel's ephemeral range (32768+) */
        int port = 20000 + (int)(tl_rand() % 12000);
        if (!tl_port_taken(c, port) && tl_port_bindable(port))
            return port;
    }
    tl_fail("no free port in 20000-31999");
}

/* Appends a formatted item to buf (size 1024), comma separated. */
static void tl_list_add(char *buf, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void tl_list_add(char *buf, const char *fmt, ...)
{
    size_t len = strlen(buf);
    va_list ap;
    if (len)
        len += (size_t)snprintf(buf + len, 1024 - len, ",");
    va_start(ap, fmt);
    if (len < 1024)
        vsnprintf(buf + len, 1024 - len, fmt, ap);
    va_end(ap);
    if (strlen(buf) >= 1023)
        tl_fail("cluster: address list too long");
}

/* The voters as node `from` dials them (NULL: directly). */
static void tl_voters_of(tl_cluster *c, const tl_node *from, char *buf)
{
    buf[0] = '\0';
    for (int i = 0; i < c->nnodes; i++) {
        const tl_node *v = &c->nodes[i];
        int linked = from && from->link_port[i]; /* through a proxy of the test */
        if (v->roles & TL_ROLE_CONTROLLER)
            tl_list_add(buf, "%d@%s:%d", v->id, linked ? "127.0.0.1" : v->host,
                        linked ? from->link_port[i] : v->cport);
    }
}

const char *tl_cluster_voters(tl_cluster *c)
{
    tl_voters_of(c, NULL, c->voters);
    return c->voters;
}

const char *tl_cluster_bootstrap(tl_cluster *c)
{
    c->bootstrap[0] = '\0';
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].roles & TL_ROLE_BROKER)
            tl_list_add(c->bootstrap, "%s", c->nodes[i].bootstrap);
    return c->bootstrap;
}

const char *tl_cluster_controllers(tl_cluster *c)
{
    c->controllers[0] = '\0';
    for (int i = 0; i < c->nnodes; i++)
        if (c->nodes[i].roles & TL_ROLE_CONTROLLER)
            tl_list_add(c->controllers, "%s", c->nodes[i].controller);
    return c->controllers;
}

static char *tl_line(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static char *tl_line(const char *fmt, ...)
{
    char *s;
    va_list ap;
    va_start(ap, fmt);
    if (vasprintf(&s, fmt, ap) < 0)
        tl_fail("out of memory");
    va_end(ap);
    return s;
}

static const char *tl_roles_value(int roles)
{
    if (roles == TL_ROLE_COMBINED)
        return "broker,controller";
    return roles == TL_ROLE_BROKER ? "broker" : "controller";
}

int tl_node_props_lines(tl_node *node, char **lines, int max)
{
    tl_cluster *c = node->cluster;
    char voters[1024], listeners[256] = "";
    int n = 0;
    if (max < 9)
        tl_fail("tl_node_props_lines: room for 9 lines needed");
    if (c->quorum == TL_QUORUM_SOLO)
        snprintf(voters, sizeof(voters), "%d@%s:%d", node->id, node->host, node->cport);
    else
        tl_voters_of(c, node, voters);
    if (node->roles & TL_ROLE_BROKER)
        tl_list_add(listeners, "PLAINTEXT://%s:%d", node->host, node->port);
    if (node->roles & TL_ROLE_CONTROLLER)
        tl_list_add(listeners, "CONTROLLER://%s:%d", node->host, node->cport);
    lines[n++] = tl_line("process.roles=%s", tl_roles_value(node->roles));
    lines[n++] = tl_line("node.id=%d", node->id);
    lines[n++] = tl_line("controller.quorum.voters=%s", voters);
    lines[n++] = tl_line("controller.listener.names=CONTROLLER");
    lines[n++] = tl_line("listener.security.protocol.map=PLAINTEXT:PLAINTEXT,CONTROLLER:PLAINTEXT");
    lines[n++] = tl_line("listeners=%s", listeners);
    if (node->roles & TL_ROLE_BROKER) {
        lines[n++] = tl_line("advertised.listeners=PLAINTEXT://%s", node->bootstrap);
        lines[n++] = tl_line("inter.broker.listener.name=PLAINTEXT");
    }
    lines[n++] = tl_line("log.dirs=%s/data", node->dir);
    return n;
}

void tl_node_write_props(tl_node *node)
{
    char path[PATH_MAX + 32], *lines[16];
    int n = tl_node_props_lines(node, lines, 16);
    FILE *f;
    snprintf(path, sizeof(path), "%s/server.properties", node->dir);
    f = fopen(path, "w");
    if (!f)
        tl_fail("%s: %s", path, strerror(errno));
    fprintf(f, "# written by tests/testlib/cluster_props.c: node %d of %s\n", node->id,
            node->cluster->name);
    for (int i = 0; i < n; i++) {
        fprintf(f, "%s\n", lines[i]);
        free(lines[i]);
    }
    for (int i = 0; i < node->nextra; i++)
        fprintf(f, "%s\n", node->extra[i]);
    if (fclose(f) != 0)
        tl_fail("%s: %s", path, strerror(errno));
}

void tl_node_log_path(const tl_node *node, char *path, size_t size)
{
    snprintf(path, size, "%s/%s", node->dir, node->kafka ? "server.log" : "node.log");
}
