/* 0720-cluster-groups: consumer groups through the brokers of a cluster of
 * 3 controllers and 3 broker-only nodes:
 *   - with two brokers up, fewer than offsets.topic.replication.factor
 *     (3), __consumer_offsets cannot be created: FindCoordinator answers
 *     COORDINATOR_NOT_AVAILABLE, as long as the third is not up, and each
 *     broker logs the refused creation once (at WARN), not at every
 *     client retry;
 *   - FindCoordinator (v0 and v4, so both key forms) at every broker names
 *     the same broker, the leader of the group's __consumer_offsets
 *     partition (Kafka's partitioning: the group id's Java hash code,
 *     made positive, modulo offsets.topic.num.partitions) as Metadata of
 *     __consumer_offsets shows it, at that broker's address; the topic is
 *     created on first use, through the active controller;
 *   - Heartbeat and DescribeGroups sent to a broker that does not lead
 *     the group's partition answer NOT_COORDINATOR; ListGroups lists the
 *     group only at its coordinator;
 *   - two librdkafka consumers of one group, bootstrapped on two other
 *     brokers, split the three partitions of a topic, read its messages
 *     exactly once between them and commit their offsets;
 *   - a new consumer of the group, bootstrapped on the coordinator, goes
 *     on from the committed offsets: it reads only what was produced
 *     after them;
 *   - the coordinator stops (controlled shutdown): the leadership of the
 *     group's partition moves, and both other brokers name the new leader
 *     the coordinator, which serves the group while the other answers
 *     NOT_COORDINATOR. (0729-group-failover checks the offsets past such
 *     a move.)
 * With KAFKA_REF=1 the same runs against Apache Kafka 4.4 nodes. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"
#include "util/kerr.h"

#define NC 3
#define NB 3
#define TOPIC "c0720"
#define GROUP "g0720"
#define NPART 3
#define NOFF 6    /* offsets.topic.num.partitions */
#define NMSG 30   /* per partition and round */

typedef struct coord {
    int16_t err;
    int32_t node_id;
    char host[64];
    int32_t port;
} coord;

/* The coordinator every running broker but skip names, once they agree
 * on one that is the leader of the group's partition (30 s at most). */
static int coordinator_after_move(tl_cluster *c, int skip);

/* FindCoordinator of GROUP at node, version ver (v4+: the keys form). */
static void find_coordinator(tl_node *node, int16_t ver, coord *out)
{
    proto_find_coordinator_req_t req;
    proto_find_coordinator_resp_t resp;
    proto_str_t key = tl_wire_str(GROUP);
    arena_t arena;
    int fd = tl_connect(node->bootstrap, 2000);
    TL_ASSERT(fd >= 0, "broker %d does not answer", node->id);
    arena_init(&arena, 4096);
    proto_find_coordinator_req_init(&req);
    if (ver >= 4) {
        req.coordinator_keys.n = 1;
        req.coordinator_keys.v = &key;
    } else {
        req.key = key;
    }
    TL_WIRE_CALL(fd, &arena, find_coordinator, 10, ver, &req, &resp);
    close(fd);
    if (ver >= 4) {
        TL_ASSERT(resp.coordinators.n == 1, "FindCoordinator v%d: %d coordinators", ver,
                  resp.coordinators.n);
        out->err = resp.coordinators.v[0].error_code;
        out->node_id = resp.coordinators.v[0].node_id;
        snprintf(out->host, sizeof(out->host), "%.*s", (int)resp.coordinators.v[0].host.len,
                 resp.coordinators.v[0].host.p);
        out->port = resp.coordinators.v[0].port;
    } else {
        out->err = resp.error_code;
        out->node_id = resp.node_id;
        snprintf(out->host, sizeof(out->host), "%.*s", (int)resp.host.len, resp.host.p);
        out->port = resp.port;
    }
    arena_destroy(&arena);
}

/* The coordinator every broker names, at every version form; the first
 * answers wait for __consumer_offsets to be created (60 s at most). */
static int find_everywhere(tl_cluster *c)
{
    int32_t id = -1;
    for (int b = NC + 1; b <= NC + NB; b++) {
        for (int16_t ver = 0; ver <= 4; ver += 4) {
            coord co;
            double until = tl_now() + 60;
            do {
                find_coordinator(tl_cluster_node(c, b), ver, &co);
                if (co.err)
                    usleep(100000);
            } while (co.err && tl_now() < until);
            TL_ASSERT(!co.err, "broker %d: FindCoordinator v%d: %s", b, ver, kerr_name(co.err));
            TL_ASSERT(id < 0 || co.node_id == id, "broker %d names %d, another named %d", b,
                      co.node_id, id);
            id = co.node_id;
            TL_ASSERT(id > NC && id <= NC + NB, "coordinator %d is not a broker", id);
            tl_node *cn = tl_cluster_node(c, id);
            char addr[128];
            snprintf(addr, sizeof(addr), "%s:%d", co.host, co.port);
            TL_ASSERT(!strcmp(addr, cn->bootstrap), "broker %d gives %s for %d, want %s", b,
                      addr, id, cn->bootstrap);
        }
    }
    return id;
}

/* The leader of the group's partition of __consumer_offsets, as every
 * broker's Metadata has it. */
static int32_t offsets_leader(tl_cluster *c)
{
    int32_t p = tl_kraft_group_partition(GROUP, NOFF), leader = -1;
    for (int b = NC + 1; b <= NC + NB; b++) {
        tl_kraft_topic t;
        double until = tl_now() + 10;
        while ((tl_kraft_metadata(tl_cluster_node(c, b), "__consumer_offsets", &t) < 0 ||
                t.npart != NOFF || t.leader[p] < 0) &&
               tl_now() < until)
            usleep(50000);
        TL_ASSERT(t.npart == NOFF, "broker %d: __consumer_offsets has %d partitions, want %d", b,
                  t.npart, NOFF);
        TL_ASSERT(t.nrep[p] == NB, "__consumer_offsets-%d has %d replicas, want %d", p,
                  t.nrep[p], NB);
        TL_ASSERT(leader < 0 || t.leader[p] == leader, "brokers disagree on the leader");
        leader = t.leader[p];
    }
    tl_log("%s is in __consumer_offsets-%d, led by broker %d", GROUP, p, leader);
    return leader;
}

static int coordinator_after_move(tl_cluster *c, int skip)
{
    int32_t p = tl_kraft_group_partition(GROUP, NOFF);
    double until = tl_now() + 30;
    for (;;) {
        int32_t id = -2, ok = 1;
        tl_kraft_topic t;
        for (int b = NC + 1; b <= NC + NB && ok; b++) {
            coord co;
            if (b == skip)
                continue;
            find_coordinator(tl_cluster_node(c, b), 4, &co);
            ok = !co.err && co.node_id != skip && (id == -2 || co.node_id == id);
            id = co.node_id;
        }
        int via = skip == NC + 1 ? NC + 2 : NC + 1;
        if (ok && tl_kraft_metadata(tl_cluster_node(c, via), "__consumer_offsets", &t) == 0 &&
            t.npart == NOFF && t.leader[p] == id)
            return id;
        TL_ASSERT(tl_now() < until, "no coordinator agreed on after broker %d stopped", skip);
        usleep(100000);
    }
}

/* Heartbeat v4 and DescribeGroups v5 of the group at node: their errors. */
static void group_errors(tl_node *node, int16_t *hb, int16_t *dg)
{
    proto_heartbeat_req_t h;
    proto_heartbeat_resp_t hr;
    proto_describe_groups_req_t d;
    proto_describe_groups_resp_t dr;
    proto_str_t g = tl_wire_str(GROUP);
    arena_t arena;
    int fd = tl_connect(node->bootstrap, 2000);
    TL_ASSERT(fd >= 0, "broker %d does not answer", node->id);
    arena_init(&arena, 4096);
    proto_heartbeat_req_init(&h);
    h.group_id = g;
    h.generation_id = 1;
    h.member_id = tl_wire_str("m0720");
    TL_WIRE_CALL(fd, &arena, heartbeat, 12, 4, &h, &hr);
    *hb = hr.error_code;
    proto_describe_groups_req_init(&d);
    d.groups.n = 1;
    d.groups.v = &g;
    TL_WIRE_CALL(fd, &arena, describe_groups, 15, 5, &d, &dr);
    TL_ASSERT(dr.groups.n == 1, "DescribeGroups: %d groups", dr.groups.n);
    *dg = dr.groups.v[0].error_code;
    close(fd);
    arena_destroy(&arena);
}

/* 1 when ListGroups v4 at node lists the group. */
static int lists_group(tl_node *node)
{
    proto_list_groups_req_t req;
    proto_list_groups_resp_t resp;
    arena_t arena;
    int fd = tl_connect(node->bootstrap, 2000), found = 0;
    TL_ASSERT(fd >= 0, "broker %d does not answer", node->id);
    arena_init(&arena, 4096);
    proto_list_groups_req_init(&req);
    TL_WIRE_CALL(fd, &arena, list_groups, 16, 4, &req, &resp);
    close(fd);
    TL_ASSERT(!resp.error_code, "ListGroups at %d: %s", node->id, kerr_name(resp.error_code));
    for (int i = 0; i < resp.groups.n; i++)
        found |= resp.groups.v[i].group_id.len == (int32_t)strlen(GROUP) &&
                 !memcmp(resp.groups.v[i].group_id.p, GROUP, strlen(GROUP));
    arena_destroy(&arena);
    return found;
}

static rd_kafka_t *consumer(tl_node *node)
{
    rd_kafka_conf_t *conf = tl_conf(node->bootstrap);
    tl_conf_set(conf, "group.id", GROUP);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "auto.offset.reset", "earliest");
    tl_conf_set(conf, "session.timeout.ms", "10000");
    rd_kafka_t *rk = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(sub, TOPIC, RD_KAFKA_PARTITION_UA);
    TL_ASSERT(!rd_kafka_subscribe(rk, sub), "subscribe");
    rd_kafka_topic_partition_list_destroy(sub);
    return rk;
}

static int assigned(rd_kafka_t *rk)
{
    rd_kafka_topic_partition_list_t *a = NULL;
    int n = 0;
    if (!rd_kafka_assignment(rk, &a) && a)
        n = a->cnt;
    if (a)
        rd_kafka_topic_partition_list_destroy(a);
    return n;
}

/* Polls the consumers until want messages came, each (partition, offset)
 * once, offsets from base[p] on; the prefix tells the round. */
static void consume(rd_kafka_t **rk, int n, int want, const int64_t *base, const char *prefix)
{
    static char seen[NPART][2 * NMSG];
    int got = 0, from[4] = {0};
    double until = tl_now() + 60;
    memset(seen, 0, sizeof(seen));
    while (got < want && tl_now() < until) {
        for (int i = 0; i < n; i++) {
            rd_kafka_message_t *m = rd_kafka_consumer_poll(rk[i], 50);
            if (!m)
                continue;
            if (m->err) {
                tl_log("consumer %d: %s", i, rd_kafka_message_errstr(m));
                rd_kafka_message_destroy(m);
                continue;
            }
            int32_t p = m->partition;
            int64_t k = m->offset - base[p];
            char want_v[64];
            TL_ASSERT(p >= 0 && p < NPART && k >= 0 && k < NMSG,
                      "consumer %d: %s-%d offset %lld out of range", i, TOPIC, p,
                      (long long)m->offset);
            TL_ASSERT(!seen[p][k], "%s-%d offset %lld read twice", TOPIC, p, (long long)m->offset);
            seen[p][k] = 1;
            snprintf(want_v, sizeof(want_v), "%s%d-%lld", prefix, p, (long long)k);
            TL_ASSERT(m->len == strlen(want_v) && !memcmp(m->payload, want_v, m->len),
                      "%s-%d offset %lld: '%.*s', want '%s'", TOPIC, p, (long long)m->offset,
                      (int)m->len, (const char *)m->payload, want_v);
            got++;
            from[i]++;
            rd_kafka_message_destroy(m);
        }
    }
    TL_ASSERT(got == want, "%d of %d messages read", got, want);
    for (int i = 0; i < n; i++) {
        TL_ASSERT(n == 1 || from[i] > 0, "consumer %d read nothing", i);
        rd_kafka_resp_err_t e = rd_kafka_commit(rk[i], NULL, 0);
        TL_ASSERT(!e || e == RD_KAFKA_RESP_ERR__NO_OFFSET, "commit: %s", rd_kafka_err2str(e));
    }
    tl_log("%d messages read once each (%d and %d by the consumers), offsets committed", got,
           from[0], from[1]);
}

static void produce(tl_node *node, const char *prefix)
{
    rd_kafka_t *p = tl_new(RD_KAFKA_PRODUCER, tl_conf(node->bootstrap));
    for (int32_t i = 0; i < NPART; i++)
        tl_produce_seq(p, TOPIC, i, tl_fmt("%s%d", prefix, i), NMSG);
    rd_kafka_destroy(p);
}

/* The coordinator's group APIs, at each running broker. */
static void check_coordinator_only(tl_cluster *c, int coord_id, int must_list)
{
    for (int b = NC + 1; b <= NC + NB; b++) {
        int16_t hb, dg;
        if (!tl_node_running(tl_cluster_node(c, b)))
            continue;
        group_errors(tl_cluster_node(c, b), &hb, &dg);
        int listed = lists_group(tl_cluster_node(c, b));
        if (b == coord_id) {
            double until = tl_now() + 10; /* a new coordinator may be loading */
            while ((dg == KERR_COORDINATOR_LOAD_IN_PROGRESS ||
                    hb == KERR_COORDINATOR_LOAD_IN_PROGRESS) &&
                   tl_now() < until) {
                usleep(100000);
                group_errors(tl_cluster_node(c, b), &hb, &dg);
            }
            TL_ASSERT(hb != KERR_NOT_COORDINATOR && dg == 0 && (listed || !must_list),
                      "coordinator %d: Heartbeat %s, DescribeGroups %s, listed %d", b,
                      kerr_name(hb), kerr_name(dg), listed);
        } else {
            TL_ASSERT(hb == KERR_NOT_COORDINATOR && dg == KERR_NOT_COORDINATOR && !listed,
                      "broker %d: Heartbeat %s, DescribeGroups %s, listed %d", b, kerr_name(hb),
                      kerr_name(dg), listed);
        }
    }
    tl_log("only broker %d answers for %s; the others say NOT_COORDINATOR", coord_id, GROUP);
}

/* Lines of node's log holding what (0 when there is no log). */
static int log_count(tl_node *node, const char *what, const char *level)
{
    char path[PATH_MAX + 16], line[1024];
    int n = 0;
    snprintf(path, sizeof(path), "%s/node.log", node->dir);
    FILE *f = fopen(path, "r");
    while (f && fgets(line, sizeof(line), f))
        n += strstr(line, what) && (!level || strstr(line, level));
    if (f)
        fclose(f);
    return n;
}

/* The refused creation of __consumer_offsets, asked again at every
 * FindCoordinator retry, is logged once, at WARN, not at every retry. */
static void check_logged_once(tl_node *node)
{
    const char *what = "cannot create __consumer_offsets";
    int n = log_count(node, what, NULL);
    TL_ASSERT(n == 1, "broker %d logged '%s' %d times", node->id, what, n);
    TL_ASSERT(log_count(node, what, " WARN ") == 1, "broker %d: '%s' not at WARN", node->id,
              what);
}

int main(void)
{
    tl_init("0720-cluster-groups");
    tl_cluster *c = tl_cluster_new("0720-cluster", TL_QUORUM_SHARED);
    tl_cluster_set(c, "offsets.topic.num.partitions=6");
    tl_cluster_set(c, "offsets.topic.replication.factor=3");
    tl_cluster_set(c, "group.initial.rebalance.delay.ms=0");
    tl_cluster_add_n(c, NC, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_add_n(c, NB, TL_ROLE_BROKER, NULL);
    /* all but the last broker */
    for (int id = 1; id < NC + NB; id++)
        tl_node_spawn(tl_cluster_node(c, id));
    for (int id = 1; id < NC + NB; id++)
        tl_node_wait_listening(tl_cluster_node(c, id), 120);
    tl_node *b4 = tl_cluster_node(c, 4);
    for (int id = NC + 1; id < NC + NB; id++)
        tl_kraft_wait_fenced(b4, id, 0, 60);
    double until0 = tl_now() + 2;
    int asked = 0;
    while (tl_now() < until0) {
        coord co;
        find_coordinator(tl_cluster_node(c, 4 + asked % 2), (int16_t)(asked % 5), &co);
        TL_ASSERT(co.err == KERR_COORDINATOR_NOT_AVAILABLE,
                  "FindCoordinator with 2 of 3 brokers: %s, node %d", kerr_name(co.err),
                  co.node_id);
        asked++;
        usleep(100000);
    }
    tl_log("2 brokers for replication factor 3: %d FindCoordinator answers over 2 s, every one "
           "COORDINATOR_NOT_AVAILABLE", asked);
    if (!tl_is_kafka())
        for (int id = NC + 1; id < NC + NB; id++)
            check_logged_once(tl_cluster_node(c, id));
    tl_node_start(tl_cluster_node(c, NC + NB));
    for (int id = NC + 1; id <= NC + NB; id++)
        tl_kraft_wait_fenced(b4, id, 0, 60);
    int16_t err = tl_kraft_create_topic(b4->bootstrap, TOPIC, NPART, 3);
    TL_ASSERT(!err, "CreateTopics %s: %s", TOPIC, kerr_name(err));

    double t0 = tl_now();
    int coord_id = find_everywhere(c);
    tl_log("every broker names broker %d the coordinator of %s (%.0f ms, __consumer_offsets "
           "created on first use)",
           coord_id, GROUP, (tl_now() - t0) * 1000);
    TL_ASSERT(offsets_leader(c) == coord_id, "the coordinator is not the partition's leader");

    /* two consumers, bootstrapped on the brokers that are not the
     * coordinator, split the topic */
    rd_kafka_t *rk[2];
    int other[2], no = 0;
    for (int b = NC + 1; b <= NC + NB; b++)
        if (b != coord_id)
            other[no++] = b;
    rk[0] = consumer(tl_cluster_node(c, other[0]));
    rk[1] = consumer(tl_cluster_node(c, other[1]));
    double until = tl_now() + 60;
    while (!(assigned(rk[0]) > 0 && assigned(rk[1]) > 0 &&
             assigned(rk[0]) + assigned(rk[1]) == NPART) &&
           tl_now() < until) {
        rd_kafka_message_t *m;
        for (int i = 0; i < 2; i++)
            if ((m = rd_kafka_consumer_poll(rk[i], 50)))
                rd_kafka_message_destroy(m);
    }
    TL_ASSERT(assigned(rk[0]) + assigned(rk[1]) == NPART && assigned(rk[0]) > 0,
              "assignment %d + %d of %d partitions", assigned(rk[0]), assigned(rk[1]), NPART);
    tl_log("consumers on brokers %d and %d joined: %d and %d partitions", other[0], other[1],
           assigned(rk[0]), assigned(rk[1]));
    check_coordinator_only(c, coord_id, 1);

    int64_t base[NPART] = {0};
    produce(b4, "a");
    consume(rk, 2, NPART * NMSG, base, "a");
    for (int i = 0; i < 2; i++) {
        rd_kafka_consumer_close(rk[i]);
        rd_kafka_destroy(rk[i]);
    }

    /* a new consumer on the coordinator's own broker goes on from the
     * committed offsets */
    produce(b4, "b");
    for (int p = 0; p < NPART; p++)
        base[p] = NMSG;
    rd_kafka_t *r3 = consumer(tl_cluster_node(c, coord_id));
    consume(&r3, 1, NPART * NMSG, base, "b");
    rd_kafka_consumer_close(r3);
    rd_kafka_destroy(r3);
    tl_log("a new consumer went on from the committed offsets");

    TL_ASSERT(tl_node_stop(tl_cluster_node(c, coord_id)) == 0, "broker %d did not exit cleanly",
              coord_id);
    int next = coordinator_after_move(c, coord_id);
    tl_log("broker %d stopped: both other brokers name broker %d, the partition's new leader",
           coord_id, next);
    check_coordinator_only(c, next, 0);

    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
