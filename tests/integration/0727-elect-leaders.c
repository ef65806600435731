/* 0727-elect-leaders: ElectLeaders (43) on a quorum of three combined
 * nodes (1-3) and two brokers (4, 5), auto.leader.rebalance.enable off,
 * sent with the generated codecs (librdkafka 2.0.2 has no ElectLeaders):
 *   - preferred: a topic of three partitions on replicas 1,2,3 / 2,3,1 /
 *     3,1,2; node 2 stopped (controlled shutdown) moves its leadership to
 *     3 and started again stays a follower; ElectLeaders preferred of the
 *     three partitions through node 1's broker listener (forwarded to the
 *     active controller) elects 2 again (NONE), the other two
 *     ELECTION_NOT_NEEDED; a second call: all three ELECTION_NOT_NEEDED
 *     with Kafka's message; the same through the active controller's own
 *     listener at v0 and v1; an unknown topic and partition; the null
 *     topic list, listing no partition when none needs an election;
 *   - unclean: a topic of one partition on brokers 4,5; A acknowledged by
 *     both; 5 killed (ISR 4), B acknowledged by 4 alone; 4 killed: no
 *     leader, the ISR kept at 4; 5 started again: still no leader
 *     (unclean.leader.election.enable false), while a second topic on 4,5
 *     with the key on, through the same kills, is led by 5 alone as soon
 *     as 5 is unfenced, a consumer reading A only there, and a third one,
 *     without the key, gets 5 as leader once the key is set on it (the
 *     periodic round, unclean.leader.election.interval.ms=1000); preferred:
 *     PREFERRED_LEADER_NOT_AVAILABLE; unclean: 5 leads with the ISR 5
 *     alone; a consumer reads A only (B was only on 4); C goes to offset
 *     1; 4 started again truncates B away, follows 5 and joins the ISR
 *     (the leader's AlterPartition ends the recovery); a consumer reads
 *     A, C;
 *   - rebalance: the cluster restarted with auto.leader.rebalance.enable
 *     and leader.imbalance.check.interval.seconds=2: every partition of
 *     the first topic led by its first replica again; node 3 stopped (its
 *     partition to 1) and started again leads it again within the check.
 * With KAFKA_REF=1 the same runs against Apache Kafka 4.4 nodes, formatted
 * at 4.0-IV3 as the Strand nodes are (eligible leader replicas off: the
 * elections without them). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"
#include "util/kerr.h"

#define PT "e0727p"
#define UT "e0727u"
#define VT "e0727v"
#define WT "e0727w"

/* ---- requests with the generated codecs ---- */

/* CreateTopics v7 of name with explicit assignments (nparts lists of rf
 * replicas) and one config (key NULL: none) at addr: the topic's error. */
static int16_t create_assigned_cfg(const char *addr, const char *name, int nparts, int rf,
                                   const int32_t *assign, const char *key, const char *value)
{
    proto_create_topics_req_t req;
    proto_create_topics_req_creatable_topic_t t;
    proto_create_topics_req_creatable_topic_config_t cfg;
    proto_create_topics_req_creatable_replica_assignment_t a[8];
    proto_create_topics_resp_t resp;
    arena_t arena;
    int fd = tl_connect(addr, 2000);
    TL_ASSERT(fd >= 0, "connect to %s", addr);
    arena_init(&arena, 1 << 14);
    proto_create_topics_req_init(&req);
    proto_create_topics_req_creatable_topic_init(&t);
    t.name = tl_wire_str(name);
    t.num_partitions = -1;
    t.replication_factor = -1;
    for (int i = 0; i < nparts; i++) {
        proto_create_topics_req_creatable_replica_assignment_init(&a[i]);
        a[i].partition_index = i;
        a[i].broker_ids.n = rf;
        a[i].broker_ids.v = (int32_t *)&assign[i * rf];
    }
    t.assignments.n = nparts;
    t.assignments.v = a;
    if (key) {
        proto_create_topics_req_creatable_topic_config_init(&cfg);
        cfg.name = tl_wire_str(key);
        cfg.value = tl_wire_str(value);
        t.configs.n = 1;
        t.configs.v = &cfg;
    }
    req.topics.n = 1;
    req.topics.v = &t;
    req.timeout_ms = 10000;
    TL_WIRE_CALL(fd, &arena, create_topics, 19, 7, &req, &resp);
    close(fd);
    TL_ASSERT_EQ(resp.topics.n, 1);
    int16_t err = resp.topics.v[0].error_code;
    arena_destroy(&arena);
    return err;
}

static int16_t create_assigned(const char *addr, const char *name, int nparts, int rf,
                               const int32_t *assign)
{
    return create_assigned_cfg(addr, name, nparts, rf, assign, NULL, NULL);
}

/* IncrementalAlterConfigs v1 at addr: SET of one topic config. */
static int16_t set_topic_config(const char *addr, const char *topic, const char *key,
                                const char *value)
{
    proto_incremental_alter_configs_req_t req;
    proto_incremental_alter_configs_req_alter_configs_resource_t res;
    proto_incremental_alter_configs_req_alterable_config_t kv;
    proto_incremental_alter_configs_resp_t resp;
    arena_t arena;
    int fd = tl_connect(addr, 2000);
    TL_ASSERT(fd >= 0, "connect to %s", addr);
    arena_init(&arena, 1 << 12);
    proto_incremental_alter_configs_req_init(&req);
    proto_incremental_alter_configs_req_alter_configs_resource_init(&res);
    proto_incremental_alter_configs_req_alterable_config_init(&kv);
    kv.name = tl_wire_str(key);
    kv.config_operation = 0;
    kv.value = tl_wire_str(value);
    res.resource_type = 2;
    res.resource_name = tl_wire_str(topic);
    res.configs.n = 1;
    res.configs.v = &kv;
    req.resources.n = 1;
    req.resources.v = &res;
    TL_WIRE_CALL(fd, &arena, incremental_alter_configs, 44, 1, &req, &resp);
    close(fd);
    TL_ASSERT_EQ(resp.responses.n, 1);
    int16_t err = resp.responses.v[0].error_code;
    arena_destroy(&arena);
    return err;
}

/* One answer of ElectLeaders, flattened. */
typedef struct {
    int16_t top;           /* -1 at v0 */
    int ntopics;
    int n;                 /* partitions over every topic */
    char topic[16][32];
    int32_t part[16];
    int16_t err[16];
    char msg[16][96];      /* "(null)" for a null message */
} elect_res;

/* ElectLeaders v`ver` of type (ignored at v0) for topic's partitions
 * parts[0..n) (topic NULL: the null list) at addr. */
static void elect(const char *addr, int16_t ver, int8_t type, const char *topic,
                  const int32_t *parts, int n, elect_res *out)
{
    proto_elect_leaders_req_t req;
    proto_elect_leaders_req_topic_partitions_t tp;
    proto_elect_leaders_resp_t resp;
    arena_t arena;
    int fd = tl_connect(addr, 2000);
    TL_ASSERT(fd >= 0, "connect to %s", addr);
    arena_init(&arena, 1 << 14);
    proto_elect_leaders_req_init(&req);
    proto_elect_leaders_req_topic_partitions_init(&tp);
    req.election_type = type;
    req.timeout_ms = 30000;
    req.topic_partitions.n = -1;
    if (topic) {
        tp.topic = tl_wire_str(topic);
        tp.partitions.n = n;
        tp.partitions.v = (int32_t *)parts;
        req.topic_partitions.n = 1;
        req.topic_partitions.v = &tp;
    }
    TL_WIRE_CALL(fd, &arena, elect_leaders, 43, ver, &req, &resp);
    close(fd);
    memset(out, 0, sizeof(*out));
    out->top = ver >= 1 ? resp.error_code : -1;
    out->ntopics = resp.replica_election_results.n;
    for (int i = 0; i < resp.replica_election_results.n; i++) {
        const proto_elect_leaders_resp_replica_election_result_t *t =
            &resp.replica_election_results.v[i];
        for (int j = 0; j < t->partition_result.n && out->n < 16; j++) {
            const proto_elect_leaders_resp_partition_result_t *p = &t->partition_result.v[j];
            snprintf(out->topic[out->n], 32, "%.*s", (int)t->topic.len, t->topic.p);
            out->part[out->n] = p->partition_id;
            out->err[out->n] = p->error_code;
            if (p->error_message.len < 0)
                snprintf(out->msg[out->n], 96, "(null)");
            else
                snprintf(out->msg[out->n], 96, "%.*s", (int)p->error_message.len,
                         p->error_message.p);
            out->n++;
        }
    }
    arena_destroy(&arena);
}

/* The result of partition p of topic in r. */
static int res_of(const elect_res *r, const char *topic, int32_t p)
{
    for (int i = 0; i < r->n; i++)
        if (!strcmp(r->topic[i], topic) && r->part[i] == p)
            return i;
    tl_fail("no result for %s-%d", topic, (int)p);
}

static void expect(const elect_res *r, const char *topic, int32_t p, int16_t err, const char *msg)
{
    int i = res_of(r, topic, p);
    TL_ASSERT(r->err[i] == err, "%s-%d: error %s, want %s", topic, (int)p, kerr_name(r->err[i]),
              kerr_name(err));
    TL_ASSERT(!strcmp(r->msg[i], msg), "%s-%d: message '%s', want '%s'", topic, (int)p, r->msg[i],
              msg);
}

/* ---- waiting on the metadata ---- */

/* Until via's Metadata shows topic's partition p led by leader with an
 * ISR of nisr members (-1: any): the seconds it took. */
static double wait_part(tl_node *via, const char *topic, int p, int32_t leader, int nisr,
                        double timeout_s)
{
    tl_kraft_topic t;
    double t0 = tl_now();
    for (;;) {
        memset(&t, 0, sizeof(t));
        if (tl_kraft_metadata(via, topic, &t) == 0 && t.npart > p && t.leader[p] == leader &&
            (nisr < 0 || t.nisr[p] == nisr))
            return tl_now() - t0;
        TL_ASSERT(tl_now() < t0 + timeout_s, "%s-%d: leader %d ISR %d after %.0f s, want %d, %d",
                  topic, p, t.npart > p ? (int)t.leader[p] : -9, t.npart > p ? t.nisr[p] : -9,
                  timeout_s, (int)leader, nisr);
        usleep(100000);
    }
}

/* ---- producing and consuming ---- */

static rd_kafka_resp_err_t last_err;
static int64_t last_offset;
static int got;

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    last_err = m->err;
    last_offset = m->offset;
    got = 1;
}

/* value to topic-0 acks=all through a fresh producer at addr: its
 * offset. */
static int64_t send_one(const char *addr, const char *topic, const char *value)
{
    rd_kafka_conf_t *conf = tl_conf(addr);
    tl_conf_set(conf, "acks", "all");
    tl_conf_set(conf, "message.timeout.ms", "30000");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    got = 0;
    rd_kafka_resp_err_t err = rd_kafka_producev(
        rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
        RD_KAFKA_V_VALUE((void *)value, strlen(value)), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_END);
    TL_ASSERT(err == 0, "produce: %s", rd_kafka_err2str(err));
    double until = tl_now() + 40;
    while (!got && tl_now() < until)
        rd_kafka_poll(rk, 20);
    rd_kafka_destroy(rk);
    TL_ASSERT(got && last_err == 0, "%s to %s: %s", value, topic,
              got ? rd_kafka_err2str(last_err) : "no answer");
    return last_offset;
}

static const char *const *want_msgs;

static void check_msg(const rd_kafka_message_t *m, void *arg)
{
    int *n = arg;
    const char *w = want_msgs[m->offset];
    TL_ASSERT(m->offset == *n, "offset %lld, want %d", (long long)m->offset, *n);
    TL_ASSERT(m->len == strlen(w) && !memcmp(m->payload, w, m->len), "%lld: '%.*s', want '%s'",
              (long long)m->offset, (int)m->len, (const char *)m->payload, w);
    (*n)++;
}

/* A consumer from the start of topic-0 at addr reads want[0..n), and
 * nothing after them within a second. */
static void consume(const char *addr, const char *topic, const char *const *want, int n)
{
    int got_n = 0;
    want_msgs = want;
    rd_kafka_t *rk = tl_consume_from_start(tl_conf(addr), topic, 1, n, 60, check_msg, &got_n);
    rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 1000);
    TL_ASSERT(!m || m->err, "a message after the %d expected (offset %lld)", n,
              m ? (long long)m->offset : -1LL);
    if (m)
        rd_kafka_message_destroy(m);
    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(got_n, n);
}

/* ---- the scenarios ---- */

static void preferred(tl_cluster *c, int quorum)
{
    static const int32_t assign[] = {1, 2, 3, 2, 3, 1, 3, 1, 2};
    static const int32_t parts[] = {0, 1, 2};
    tl_node *n1 = tl_cluster_node(c, 1), *n2 = tl_cluster_node(c, 2);
    elect_res r;
    TL_ASSERT_EQ(create_assigned(n1->bootstrap, PT, 3, 3, assign), 0);
    for (int p = 0; p < 3; p++)
        wait_part(n1, PT, p, assign[p * 3], 3, 30);

    TL_ASSERT_EQ(tl_node_stop(n2), 0);
    double took = wait_part(n1, PT, 1, 3, 2, 30);
    tl_log("node 2 stopped: %s-1 led by 3 after %.1f s", PT, took);
    tl_node_start(n2);
    took = wait_part(n1, PT, 1, 3, 3, 60);
    tl_log("node 2 started: in the ISR of %s-1 again after %.1f s, 3 still leads", PT, took);

    elect(n1->bootstrap, 2, 0, PT, parts, 3, &r);
    TL_ASSERT(r.top == 0 && r.n == 3, "top %d, %d results", r.top, r.n);
    expect(&r, PT, 0, KERR_ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.");
    expect(&r, PT, 1, 0, "(null)");
    expect(&r, PT, 2, KERR_ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.");
    wait_part(n1, PT, 1, 2, 3, 10);
    tl_log("ElectLeaders preferred (v2, forwarded): %s-1 led by 2 again", PT);

    elect(n1->bootstrap, 2, 0, PT, parts, 3, &r);
    for (int p = 0; p < 3; p++)
        expect(&r, PT, p, KERR_ELECTION_NOT_NEEDED,
               "Leader election not needed for topic partition.");
    /* The active controller's own listener, v0 (no top-level error). */
    (void)quorum; /* node 2's stop may have moved the quorum's leader */
    const char *ctl = tl_cluster_node(c, tl_kraft_active_controller(c))->controller;
    elect(ctl, 0, 1, PT, parts, 1, &r);
    TL_ASSERT(r.top == -1 && r.n == 1, "v0: %d results", r.n);
    expect(&r, PT, 0, KERR_ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.");
    elect(ctl, 1, 1, PT, parts, 3, &r);
    TL_ASSERT(r.top == 0 && r.n == 3, "v1: top %d, %d results", r.top, r.n);
    expect(&r, PT, 2, KERR_ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.");
    static const int32_t far[] = {7};
    elect(ctl, 2, 0, "e0727-none", parts, 1, &r);
    expect(&r, "e0727-none", 0, KERR_UNKNOWN_TOPIC_OR_PARTITION, "No such topic as e0727-none");
    elect(n1->bootstrap, 2, 1, PT, far, 1, &r);
    expect(&r, PT, 7, KERR_UNKNOWN_TOPIC_OR_PARTITION, "No such partition as " PT "-7");
    elect(n1->bootstrap, 2, 0, NULL, NULL, 0, &r);
    TL_ASSERT(r.top == 0 && r.n == 0, "every partition: top %d, %d partition results", r.top, r.n);
    tl_log("again: ELECTION_NOT_NEEDED (also v0, v1 at the controller); unknown ones; the null "
           "list: %d topics, no partition", r.ntopics);
}

static void unclean(tl_cluster *c, int quorum)
{
    static const int32_t assign[] = {4, 5};
    static const int32_t part0[] = {0};
    static const char *const a_only[] = {"A"}, *const a_c[] = {"A", "C"};
    tl_node *n1 = tl_cluster_node(c, 1), *n4 = tl_cluster_node(c, 4), *n5 = tl_cluster_node(c, 5);
    tl_node *q = tl_cluster_node(c, quorum);
    elect_res r;
    TL_ASSERT_EQ(create_assigned(n1->bootstrap, UT, 1, 2, assign), 0);
    TL_ASSERT_EQ(create_assigned_cfg(n1->bootstrap, VT, 1, 2, assign,
                                     "unclean.leader.election.enable", "true"),
                 0);
    TL_ASSERT_EQ(create_assigned(n1->bootstrap, WT, 1, 2, assign), 0);
    wait_part(n1, UT, 0, 4, 2, 30);
    wait_part(n1, VT, 0, 4, 2, 30);
    wait_part(n1, WT, 0, 4, 2, 30);
    TL_ASSERT_EQ(send_one(n1->bootstrap, UT, "A"), 0);
    TL_ASSERT_EQ(send_one(n1->bootstrap, VT, "A"), 0);

    tl_node_kill9(n5);
    tl_kraft_wait_fenced(q, 5, 1, 60);
    wait_part(n1, UT, 0, 4, 1, 30);
    wait_part(n1, VT, 0, 4, 1, 30);
    TL_ASSERT_EQ(send_one(n1->bootstrap, UT, "B"), 1);
    TL_ASSERT_EQ(send_one(n1->bootstrap, VT, "B"), 1);
    tl_node_kill9(n4);
    tl_kraft_wait_fenced(q, 4, 1, 60);
    wait_part(n1, UT, 0, -1, 1, 30);
    wait_part(n1, VT, 0, -1, 1, 30);
    tl_log("5 killed, B acknowledged by 4 alone; 4 killed: %s-0 and %s-0 have no leader "
           "(nobody else to take %s-0 either)",
           UT, VT, VT);

    tl_node_start(n5);
    tl_kraft_wait_fenced(q, 5, 0, 60);
    /* unclean.leader.election.enable: the unfencing elects 5 at once. */
    double took = wait_part(n1, VT, 0, 5, 1, 10);
    consume(n1->bootstrap, VT, a_only, 1);
    tl_log("5 back: %s-0 (unclean.leader.election.enable) led by 5 alone %.1f s after its "
           "unfencing; a consumer reads A only",
           VT, took);
    /* The key turned on later: the periodic round takes it up. */
    wait_part(n1, WT, 0, -1, 1, 1);
    TL_ASSERT_EQ(set_topic_config(n1->bootstrap, WT, "unclean.leader.election.enable", "true"), 0);
    took = wait_part(n1, WT, 0, 5, 1, 10);
    tl_log("%s-0: unclean.leader.election.enable set after: led by 5 %.1f s later "
           "(unclean.leader.election.interval.ms=1000)",
           WT, took);
    wait_part(n1, UT, 0, -1, 1, 1);
    elect(n1->bootstrap, 2, 0, UT, part0, 1, &r);
    expect(&r, UT, 0, KERR_PREFERRED_LEADER_NOT_AVAILABLE,
           "The preferred leader was not available.");
    elect(n1->bootstrap, 2, 1, UT, part0, 1, &r);
    expect(&r, UT, 0, 0, "(null)");
    wait_part(n1, UT, 0, 5, 1, 10);
    tl_log("5 back: preferred not available; unclean: 5 leads, the ISR 5 alone");
    consume(n1->bootstrap, UT, a_only, 1);
    TL_ASSERT_EQ(send_one(n1->bootstrap, UT, "C"), 1);
    tl_log("a consumer reads A only (B is lost); C at offset 1");

    tl_node_start(n4);
    took = wait_part(n1, UT, 0, 5, 2, 60);
    tl_log("4 started again: in the ISR after %.1f s", took);
    consume(n1->bootstrap, UT, a_c, 2);
    elect(n1->bootstrap, 2, 1, UT, part0, 1, &r);
    expect(&r, UT, 0, KERR_ELECTION_NOT_NEEDED, "Leader election not needed for topic partition.");
    tl_log("a consumer reads A, C; unclean again: ELECTION_NOT_NEEDED");
}

/* auto.leader.rebalance.enable with a check every 2 s: node 3 stopped
 * and started again gets its partition back from the controller alone. */
static void rebalance(tl_cluster *c)
{
    tl_node *n1 = tl_cluster_node(c, 1), *n3 = tl_cluster_node(c, 3);
    tl_cluster_stop(c);
    tl_cluster_set(c, "auto.leader.rebalance.enable=true");
    tl_cluster_set(c, "leader.imbalance.check.interval.seconds=2");
    tl_kraft_view v;
    int quorum = tl_kraft_start(c, &v);
    for (int id = 1; id <= 5; id++)
        tl_kraft_wait_fenced(tl_cluster_node(c, quorum), id, 0, 60);
    for (int p = 0; p < 3; p++)
        wait_part(n1, PT, p, p + 1, 3, 30);
    TL_ASSERT_EQ(tl_node_stop(n3), 0);
    wait_part(n1, PT, 2, 1, 2, 30);
    tl_node_start(n3);
    double took = wait_part(n1, PT, 2, 3, 3, 30);
    tl_log("rebalance on (every 2 s): node 3 stopped and started, leads %s-2 again %.1f s after "
           "its start, with no ElectLeaders",
           PT, took);
}

int main(void)
{
    tl_kraft_view v;
    tl_init("0727-elect-leaders");
    /* Both kinds of node formatted where eligible leader replicas are off
     * (on from 4.1-IV0, and by default): the elections without them. */
    setenv("KAFKA_REF_FORMAT_ARGS", "--release-version=4.0-IV3", 0);
    tl_cluster *c = tl_cluster_new("0727-elect-leaders", TL_QUORUM_SHARED);
    tl_cluster_set(c, "broker.session.timeout.ms=6000");
    tl_cluster_set(c, "auto.leader.rebalance.enable=false");
    tl_cluster_set(c, "unclean.leader.election.interval.ms=1000");
    tl_cluster_add_n(c, 3, TL_ROLE_COMBINED, NULL);
    tl_cluster_add_n(c, 2, TL_ROLE_BROKER, NULL);
    int quorum = tl_kraft_start(c, &v);
    for (int id = 1; id <= 5; id++)
        tl_kraft_wait_fenced(tl_cluster_node(c, quorum), id, 0, 60);
    preferred(c, quorum);
    quorum = tl_kraft_active_controller(c);
    unclean(c, quorum);
    rebalance(c);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
