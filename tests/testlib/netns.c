/* netns: see netns.h. Everything through `ip`, as an operator would type
 * it; each command's output goes to the node's log. */
#include "testlib/netns.h"

#include "testlib/cluster_int.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "testlib/testlib.h"

/* Runs a shell command built from fmt; returns its exit status. */
static int tl_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
static int tl_sh(const char *fmt, ...)
{
    char cmd[1024];
    va_list ap;
    int rc;
    va_start(ap, fmt);
    vsnprintf(cmd, sizeof(cmd), fmt, ap);
    va_end(ap);
    rc = system(cmd);
    return rc == -1 ? -1 : WEXITSTATUS(rc);
}

int tl_netns_available(void)
{
    static int known = -1;
    if (known < 0)
        known = getuid() == 0 &&
                tl_sh("ip netns add tlprobe%d >/dev/null 2>&1 && "
                      "ip netns del tlprobe%d >/dev/null 2>&1", (int)getpid(),
                      (int)getpid()) == 0;
    return known;
}

/* 10.A.B.(4 id + side): the /30's network (0), the test's side (1), the
 * node's (2). */
static void tl_netns_addr(const tl_node *node, int side, char *buf, size_t size)
{
    int pid = (int)getpid();
    snprintf(buf, size, "10.%d.%d.%d", 100 + (pid / 256) % 100, pid % 256, 4 * node->id + side);
}

static void tl_netns_veth(const tl_node *node, char side, char *buf, size_t size)
{
    snprintf(buf, size, "tl%c%dn%d", side, (int)getpid() % 10000000, node->id);
}

void tl_node_netns(tl_node *node)
{
    char net[32], host[32], peer[32], vh[16], vn[16];
    const char *log = node->dir;
    if (node->kafka || node->starts || node->id > 60)
        tl_fail("netns: node %d is Kafka, has started, or its id is above 60", node->id);
    snprintf(node->netns, sizeof(node->netns), "tl%d-%d", (int)getpid(), node->id);
    tl_netns_addr(node, 0, net, sizeof(net));
    tl_netns_addr(node, 1, peer, sizeof(peer));
    tl_netns_addr(node, 2, host, sizeof(host));
    tl_netns_veth(node, 'h', vh, sizeof(vh));
    tl_netns_veth(node, 'n', vn, sizeof(vn));
    /* The unreachable route stays when the link is down: without it the
     * node's address would be routed out of the machine by its default
     * route, where something may well answer. */
    if (tl_sh("{ ip netns add %s && ip link add %s type veth peer name %s netns %s && "
              "ip addr add %s/30 dev %s && ip link set %s up && "
              "ip route add unreachable %s/30 metric 4000 && "
              "ip -n %s addr add %s/30 dev %s && ip -n %s link set %s up && "
              "ip -n %s link set lo up; } >> '%s/netns.log' 2>&1",
              node->netns, vh, vn, node->netns, peer, vh, vh, net, node->netns, host, vn,
              node->netns, vn, node->netns, log) != 0)
        tl_fail("netns: setting up %s failed (%s/netns.log)", node->netns, log);
    tl_node_set_host(node, host);
    tl_log("node %d in netns %s at %s (link %s)", node->id, node->netns, host, vh);
}

static void tl_netns_link(tl_node *node, const char *state)
{
    char vh[16];
    tl_netns_veth(node, 'h', vh, sizeof(vh));
    if (!node->netns[0] ||
        tl_sh("ip link set %s %s >> '%s/netns.log' 2>&1", vh, state, node->dir) != 0)
        tl_fail("netns: link %s of node %d: %s failed", vh, node->id, state);
    tl_log("node %d: link %s %s", node->id, vh, state);
}

void tl_netns_cut(tl_node *node)
{
    tl_netns_link(node, "down");
}

void tl_netns_heal(tl_node *node)
{
    tl_netns_link(node, "up");
}

void tl_netns_remove(tl_node *node)
{
    if (!node->netns[0])
        return;
    char net[32];
    tl_netns_addr(node, 0, net, sizeof(net));
    /* the veth pair goes with the namespace, the route does not */
    tl_sh("{ ip netns del %s; ip route del unreachable %s/30 metric 4000; } >> '%s/netns.log' 2>&1",
          node->netns, net, node->dir);
    node->netns[0] = '\0';
}
