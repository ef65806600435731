/* 0722-cluster-listeners: a broker answers with the endpoints of the
 * listener a request came in on, as Kafka's does. One controller and two
 * brokers: broker 2 has two broker listeners, INTERNAL (127.0.0.1, the
 * inter-broker one) and EXTERNAL (another port, advertised as
 * localhost); broker 3 has INTERNAL only.
 *   - Metadata (v0, v5, v6, v12) through INTERNAL of either broker names
 *     both brokers at their INTERNAL endpoints, every partition led;
 *   - Metadata through EXTERNAL names broker 2 alone, at localhost and
 *     its EXTERNAL port; a partition led by broker 3 (which has no such
 *     listener) has leader -1 and LISTENER_NOT_FOUND from v6,
 *     LEADER_NOT_AVAILABLE before; broker 3's replicas are offline (v5+),
 *     and at v0 left out of replicas and ISR, a partition broker 2 leads
 *     then answering REPLICA_NOT_AVAILABLE (a topic of replication
 *     factor 2 shows it);
 *   - DescribeTopicPartitions through EXTERNAL: leader -1 for broker 3's
 *     partitions, no error;
 *   - DescribeCluster the same: both brokers through INTERNAL, broker 2
 *     alone at its EXTERNAL endpoint through EXTERNAL;
 *   - FindCoordinator: a group of a __consumer_offsets partition led by
 *     broker 2 is at localhost:EXTERNAL through EXTERNAL and at
 *     127.0.0.1:INTERNAL through INTERNAL; one of a partition led by
 *     broker 3 is COORDINATOR_NOT_AVAILABLE through EXTERNAL;
 *   - librdkafka bootstrapped on EXTERNAL sees broker 2 alone at
 *     localhost:EXTERNAL, produces to a partition broker 2 leads and a
 *     consumer of the group coordinated there reads the same values back
 *     and commits its offset through EXTERNAL.
 * With KAFKA_REF=1 the same runs against Apache Kafka 4.4 nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"
#include "util/kerr.h"

#define TOPIC "c0722"
#define NPART 4
#define TOPIC2 "c0722-rf2" /* replication factor 2: replicas on both brokers */
#define NPART2 2
#define NOFF 4 /* offsets.topic.num.partitions */
#define NMSG 20

typedef struct lsn {
    char internal[64]; /* 127.0.0.1:port of each broker's INTERNAL */
    char external[64]; /* localhost:port of broker 2's EXTERNAL */
    int ext_port;
} lsn;

static lsn L[4]; /* by node id */

/* Kafka's partition of a group: Utils.abs(String.hashCode()) % n (the
 * minimum int maps to 0), for ASCII. */
static int32_t group_partition(const char *group, int32_t n)
{
    uint32_t h = 0;
    for (const char *p = group; *p; p++)
        h = 31 * h + (uint8_t)*p;
    int64_t s = (int32_t)h;
    return s == INT32_MIN ? 0 : (int32_t)((s < 0 ? -s : s) % n);
}

static void add_listeners(tl_node *node, int ext_port)
{
    tl_node_set(node, "listener.security.protocol.map=INTERNAL:PLAINTEXT,EXTERNAL:PLAINTEXT,"
                      "CONTROLLER:PLAINTEXT");
    tl_node_set(node, "inter.broker.listener.name=INTERNAL");
    snprintf(L[node->id].internal, sizeof(L[0].internal), "127.0.0.1:%d", node->port);
    if (!ext_port) {
        tl_node_set(node, tl_fmt("listeners=INTERNAL://127.0.0.1:%d", node->port));
        tl_node_set(node, tl_fmt("advertised.listeners=INTERNAL://127.0.0.1:%d", node->port));
        return;
    }
    L[node->id].ext_port = ext_port;
    snprintf(L[node->id].external, sizeof(L[0].external), "localhost:%d", ext_port);
    tl_node_set(node, tl_fmt("listeners=INTERNAL://127.0.0.1:%d,EXTERNAL://127.0.0.1:%d",
                             node->port, ext_port));
    tl_node_set(node, tl_fmt("advertised.listeners=INTERNAL://127.0.0.1:%d,"
                             "EXTERNAL://localhost:%d",
                             node->port, ext_port));
}

/* "id@host:port,..." of a Metadata answer's brokers, in id order. */
static void brokers_str(const proto_metadata_resp_t *r, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int32_t want = 0; want < 8; want++)
        for (int32_t i = 0; i < r->brokers.n; i++)
            if (r->brokers.v[i].node_id == want)
                len += (size_t)snprintf(buf + len, cap - len, "%s%d@%.*s:%d", len ? "," : "",
                                        want, (int)r->brokers.v[i].host.len,
                                        r->brokers.v[i].host.p, r->brokers.v[i].port);
}

static void metadata_at(const char *addr, int16_t ver, const char *topic, arena_t *arena,
                        proto_metadata_resp_t *resp)
{
    int fd = tl_connect(addr, 5000);
    TL_ASSERT(fd >= 0, "%s does not answer", addr);
    tl_wire_metadata(fd, arena, ver, topic, 0, resp);
    close(fd);
}

/* A partition as INTERNAL shows it: every broker reachable there. */
typedef struct pinfo {
    int32_t leader;
    int nrep;
    int32_t rep[2];
} pinfo;

/* The partitions of topic through INTERNAL of broker 2, once all have a
 * leader and nrep replicas (30 s at most). */
static void parts_of(const char *topic, int nparts, int nrep, pinfo *out)
{
    double until = tl_now() + 30;
    for (;;) {
        arena_t arena;
        proto_metadata_resp_t r;
        int ok;
        arena_init(&arena, 4096);
        metadata_at(L[2].internal, 12, topic, &arena, &r);
        ok = r.topics.n == 1 && r.topics.v[0].error_code == 0 &&
             r.topics.v[0].partitions.n == nparts;
        for (int32_t i = 0; ok && i < nparts; i++) {
            const proto_metadata_resp_metadata_response_partition_t *p =
                &r.topics.v[0].partitions.v[i];
            pinfo *pi = &out[p->partition_index];
            ok = p->error_code == 0 && (p->leader_id == 2 || p->leader_id == 3) &&
                 p->replica_nodes.n == nrep;
            pi->leader = p->leader_id;
            pi->nrep = nrep;
            for (int k = 0; ok && k < nrep; k++)
                pi->rep[k] = p->replica_nodes.v[k];
        }
        arena_destroy(&arena);
        if (ok)
            return;
        TL_ASSERT(tl_now() < until, "%s: not every partition has a leader", topic);
        usleep(100000);
    }
}

static void leaders_of(const char *topic, int nparts, int32_t *leaders)
{
    pinfo pi[NPART > NOFF ? NPART : NOFF];
    parts_of(topic, nparts, 1, pi);
    for (int i = 0; i < nparts; i++)
        leaders[i] = pi[i].leader;
}

/* "a,b" of an int array. */
static const char *ids_str(const int32_t *v, int n, char *buf, size_t cap)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++)
        len += (size_t)snprintf(buf + len, cap - len, "%s%d", i ? "," : "", v[i]);
    return buf;
}

/* What Metadata v`ver` must say of partition pi through EXTERNAL
 * (external: broker 3, which lacks it, is unreachable) or INTERNAL, as
 * Kafka's metadata cache does: an unreachable leader is -1 with
 * LISTENER_NOT_FOUND (v6+) or LEADER_NOT_AVAILABLE; unreachable replicas
 * are offline (v5+) and, at v0 only, left out of replicas and ISR, a led
 * partition answering REPLICA_NOT_AVAILABLE then. */
static void check_partition(const proto_metadata_resp_metadata_response_partition_t *p,
                            const pinfo *pi, int16_t ver, int external, const char *where)
{
    int32_t reach[2], off[2];
    int nreach = 0, noff = 0;
    char got[64], want[64];
    for (int k = 0; k < pi->nrep; k++) {
        if (external && pi->rep[k] == 3)
            off[noff++] = pi->rep[k];
        else
            reach[nreach++] = pi->rep[k];
    }
    int led = !external || pi->leader == 2;
    int16_t err = !led       ? (ver >= 6 ? KERR_LISTENER_NOT_FOUND : KERR_LEADER_NOT_AVAILABLE)
                  : ver == 0 && noff ? KERR_REPLICA_NOT_AVAILABLE
                                     : KERR_NONE;
    TL_ASSERT(p->leader_id == (led ? pi->leader : -1), "%s v%d: partition %d leader %d, want %d",
              where, ver, p->partition_index, p->leader_id, led ? pi->leader : -1);
    TL_ASSERT(p->error_code == err, "%s v%d: partition %d error %s, want %s", where, ver,
              p->partition_index, kerr_name(p->error_code), kerr_name(err));
    const int32_t *wr = ver == 0 ? reach : pi->rep;
    int nwr = ver == 0 ? nreach : pi->nrep;
    ids_str(wr, nwr, want, sizeof(want));
    ids_str(p->replica_nodes.v, p->replica_nodes.n, got, sizeof(got));
    TL_ASSERT(!strcmp(got, want), "%s v%d: partition %d replicas %s, want %s", where, ver,
              p->partition_index, got, want);
    ids_str(p->isr_nodes.v, p->isr_nodes.n, got, sizeof(got));
    TL_ASSERT(!strcmp(got, want), "%s v%d: partition %d ISR %s, want %s", where, ver,
              p->partition_index, got, want);
    if (ver < 5)
        return;
    ids_str(off, noff, want, sizeof(want));
    ids_str(p->offline_replicas.v, p->offline_replicas.n, got, sizeof(got));
    TL_ASSERT(!strcmp(got, want), "%s v%d: partition %d offline replicas %s, want %s", where,
              ver, p->partition_index, got, want);
}

/* Metadata of topic through addr at ver: the brokers named as want, each
 * partition as check_partition has it. */
static void check_metadata(const char *addr, int16_t ver, const char *topic, int nparts,
                           const pinfo *parts, const char *want, int external)
{
    arena_t arena;
    proto_metadata_resp_t r;
    char got[256], where[128];
    arena_init(&arena, 4096);
    metadata_at(addr, ver, topic, &arena, &r);
    brokers_str(&r, got, sizeof(got));
    snprintf(where, sizeof(where), "Metadata of %s through %s", topic, addr);
    TL_ASSERT(!strcmp(got, want), "%s v%d: brokers %s, want %s", where, ver, got, want);
    TL_ASSERT(r.topics.n == 1 && r.topics.v[0].error_code == 0, "%s v%d: topic error", where,
              ver);
    TL_ASSERT_EQ(r.topics.v[0].partitions.n, nparts);
    for (int32_t i = 0; i < nparts; i++) {
        const proto_metadata_resp_metadata_response_partition_t *p = &r.topics.v[0].partitions.v[i];
        check_partition(p, &parts[p->partition_index], ver, external, where);
    }
    arena_destroy(&arena);
}

/* DescribeTopicPartitions of topic through addr: as Kafka's, a leader
 * without an endpoint of the listener is -1, with no error; replicas all
 * listed. */
static void check_describe_partitions(const char *addr, const char *topic, int nparts,
                                      const pinfo *parts, int external)
{
    proto_describe_topic_partitions_req_t req;
    proto_describe_topic_partitions_req_topic_request_t tr;
    proto_describe_topic_partitions_resp_t resp;
    arena_t arena;
    int fd = tl_connect(addr, 5000);
    TL_ASSERT(fd >= 0, "%s does not answer", addr);
    arena_init(&arena, 4096);
    proto_describe_topic_partitions_req_init(&req);
    proto_describe_topic_partitions_req_topic_request_init(&tr);
    tr.name = tl_wire_str(topic);
    req.topics.n = 1;
    req.topics.v = &tr;
    req.response_partition_limit = 100;
    TL_WIRE_CALL(fd, &arena, describe_topic_partitions, 75, 0, &req, &resp);
    close(fd);
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].error_code == 0 &&
                  resp.topics.v[0].partitions.n == nparts,
              "DescribeTopicPartitions of %s through %s", topic, addr);
    for (int32_t i = 0; i < nparts; i++) {
        const proto_describe_topic_partitions_resp_describe_topic_partitions_response_partition_t
            *p = &resp.topics.v[0].partitions.v[i];
        const pinfo *pi = &parts[p->partition_index];
        int32_t want = !external || pi->leader == 2 ? pi->leader : -1;
        TL_ASSERT(p->leader_id == want && p->error_code == 0 && p->replica_nodes.n == pi->nrep,
                  "DescribeTopicPartitions through %s: partition %d leader %d error %s, want %d",
                  addr, p->partition_index, p->leader_id, kerr_name(p->error_code), want);
    }
    arena_destroy(&arena);
}

static void check_describe_cluster(const char *addr, const char *want)
{
    proto_describe_cluster_req_t req;
    proto_describe_cluster_resp_t resp;
    arena_t arena;
    char got[256];
    size_t len = 0;
    int fd = tl_connect(addr, 5000);
    TL_ASSERT(fd >= 0, "%s does not answer", addr);
    arena_init(&arena, 4096);
    proto_describe_cluster_req_init(&req);
    req.endpoint_type = 1;
    TL_WIRE_CALL(fd, &arena, describe_cluster, 60, 1, &req, &resp);
    close(fd);
    TL_ASSERT(resp.error_code == 0, "DescribeCluster through %s: %s", addr,
              kerr_name(resp.error_code));
    got[0] = '\0';
    for (int32_t want_id = 0; want_id < 8; want_id++)
        for (int32_t i = 0; i < resp.brokers.n; i++)
            if (resp.brokers.v[i].broker_id == want_id)
                len += (size_t)snprintf(got + len, sizeof(got) - len, "%s%d@%.*s:%d",
                                        len ? "," : "", want_id,
                                        (int)resp.brokers.v[i].host.len, resp.brokers.v[i].host.p,
                                        resp.brokers.v[i].port);
    TL_ASSERT(!strcmp(got, want), "DescribeCluster through %s: brokers %s, want %s", addr, got,
              want);
    arena_destroy(&arena);
}

/* FindCoordinator v4 of group through addr: its error, and "id@host:port". */
static int16_t find_coordinator(const char *addr, const char *group, char *out, size_t cap)
{
    proto_find_coordinator_req_t req;
    proto_find_coordinator_resp_t resp;
    proto_str_t key = tl_wire_str(group);
    arena_t arena;
    int fd = tl_connect(addr, 5000);
    TL_ASSERT(fd >= 0, "%s does not answer", addr);
    arena_init(&arena, 4096);
    proto_find_coordinator_req_init(&req);
    req.coordinator_keys.n = 1;
    req.coordinator_keys.v = &key;
    TL_WIRE_CALL(fd, &arena, find_coordinator, 10, 4, &req, &resp);
    close(fd);
    TL_ASSERT_EQ(resp.coordinators.n, 1);
    const proto_find_coordinator_resp_coordinator_t *co = &resp.coordinators.v[0];
    snprintf(out, cap, "%d@%.*s:%d", co->node_id, (int)co->host.len, co->host.p, co->port);
    int16_t err = co->error_code;
    arena_destroy(&arena);
    return err;
}

/* A group whose __consumer_offsets partition broker id leads. */
static void group_led_by(const int32_t *off_leaders, int id, char *group, size_t cap)
{
    for (int i = 0; i < 1000; i++) {
        snprintf(group, cap, "g0722-%d", i);
        if (off_leaders[group_partition(group, NOFF)] == id)
            return;
    }
    tl_fail("no group of a partition led by %d", id);
}

static void check_coordinators(void)
{
    char g2[32], g3[32], got[128];
    int32_t off_leaders[NOFF];
    /* the first asks create __consumer_offsets */
    double until = tl_now() + 60;
    while (find_coordinator(L[2].internal, "g0722-first", got, sizeof(got)) && tl_now() < until)
        usleep(200000);
    leaders_of("__consumer_offsets", NOFF, off_leaders);
    group_led_by(off_leaders, 2, g2, sizeof(g2));
    group_led_by(off_leaders, 3, g3, sizeof(g3));
    char want_int2[80], want_ext2[80], want_int3[80];
    snprintf(want_int2, sizeof(want_int2), "2@%s", L[2].internal);
    snprintf(want_ext2, sizeof(want_ext2), "2@%s", L[2].external);
    snprintf(want_int3, sizeof(want_int3), "3@%s", L[3].internal);
    int16_t err;
    until = tl_now() + 30;
    while ((err = find_coordinator(L[2].internal, g2, got, sizeof(got))) && tl_now() < until)
        usleep(100000);
    TL_ASSERT(!err && !strcmp(got, want_int2), "%s through INTERNAL: %s %s, want %s", g2,
              kerr_name(err), got, want_int2);
    err = find_coordinator(L[2].external, g2, got, sizeof(got));
    TL_ASSERT(!err && !strcmp(got, want_ext2), "%s through EXTERNAL: %s %s, want %s", g2,
              kerr_name(err), got, want_ext2);
    until = tl_now() + 30;
    while ((err = find_coordinator(L[3].internal, g3, got, sizeof(got))) && tl_now() < until)
        usleep(100000);
    TL_ASSERT(!err && !strcmp(got, want_int3), "%s through broker 3: %s %s, want %s", g3,
              kerr_name(err), got, want_int3);
    err = find_coordinator(L[2].external, g3, got, sizeof(got));
    TL_ASSERT(err == KERR_COORDINATOR_NOT_AVAILABLE,
              "%s (broker 3 has no EXTERNAL) through EXTERNAL: %s %s", g3, kerr_name(err), got);
    tl_log("FindCoordinator: %s at %s through EXTERNAL, %s not available there", g2, want_ext2,
           g3);
}

static void check_value(const rd_kafka_message_t *m, void *arg)
{
    int *seen = arg;
    char want[32];
    snprintf(want, sizeof(want), "ext-%d", (int)m->offset);
    TL_ASSERT(m->len == strlen(want) && !memcmp(m->payload, want, m->len),
              "offset %lld: '%.*s', want '%s'", (long long)m->offset, (int)m->len,
              (const char *)m->payload, want);
    (*seen)++;
}

/* librdkafka through EXTERNAL: the one broker it can reach, a partition
 * it leads written and read back by a group it coordinates. */
static void check_librdkafka(const int32_t *leaders)
{
    rd_kafka_conf_t *conf = tl_conf(L[2].external);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    const rd_kafka_metadata_t *md;
    TL_ASSERT_EQ(rd_kafka_metadata(rk, 1, NULL, &md, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
    TL_ASSERT(md->broker_cnt == 1 && md->brokers[0].id == 2 &&
                  !strcmp(md->brokers[0].host, "localhost") &&
                  md->brokers[0].port == L[2].ext_port,
              "librdkafka through EXTERNAL: %d brokers, the first %d@%s:%d", md->broker_cnt,
              md->broker_cnt ? md->brokers[0].id : -1, md->broker_cnt ? md->brokers[0].host : "",
              md->broker_cnt ? md->brokers[0].port : -1);
    rd_kafka_metadata_destroy(md);
    int32_t part = leaders[0] == 2 ? 0 : leaders[1] == 2 ? 1 : leaders[2] == 2 ? 2 : 3;
    TL_ASSERT_EQ(leaders[part], 2);
    tl_produce_seq(rk, TOPIC, part, "ext", NMSG);
    rd_kafka_destroy(rk);
}

static void check_consumer(const int32_t *leaders, const char *group)
{
    int32_t part = leaders[0] == 2 ? 0 : leaders[1] == 2 ? 1 : leaders[2] == 2 ? 2 : 3;
    rd_kafka_conf_t *conf = tl_conf(L[2].external);
    tl_conf_set(conf, "group.id", group);
    rd_kafka_t *rk = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(tp, TOPIC, part)->offset = RD_KAFKA_OFFSET_BEGINNING;
    TL_ASSERT_EQ(rd_kafka_assign(rk, tp), RD_KAFKA_RESP_ERR_NO_ERROR);
    int seen = 0;
    double until = tl_now() + 30;
    while (seen < NMSG && tl_now() < until) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 200);
        if (!m)
            continue;
        TL_ASSERT(!m->err, "consume through EXTERNAL: %s", rd_kafka_message_errstr(m));
        TL_ASSERT_EQ(m->partition, part);
        TL_ASSERT_EQ(m->offset, seen);
        check_value(m, &seen);
        rd_kafka_message_destroy(m);
    }
    TL_ASSERT_EQ(seen, NMSG);
    tp->elems[0].offset = NMSG;
    TL_ASSERT_EQ(rd_kafka_commit(rk, tp, 0), RD_KAFKA_RESP_ERR_NO_ERROR);
    tp->elems[0].offset = -1;
    TL_ASSERT_EQ(rd_kafka_committed(rk, tp, 10000), RD_KAFKA_RESP_ERR_NO_ERROR);
    TL_ASSERT_EQ(tp->elems[0].offset, NMSG);
    rd_kafka_topic_partition_list_destroy(tp);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    tl_log("librdkafka through EXTERNAL: %d messages of partition %d read by %s, offset %d "
           "committed", NMSG, part, group, NMSG);
}

int main(void)
{
    int32_t leaders[NPART], off_leaders[NOFF];
    char g2[32];
    tl_init("0722-cluster-listeners");
    tl_cluster *c = tl_cluster_new("0722-cluster", TL_QUORUM_SHARED);
    tl_cluster_set(c, "offsets.topic.replication.factor=1");
    tl_cluster_set(c, tl_fmt("offsets.topic.num.partitions=%d", NOFF));
    tl_cluster_add(c, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_add_n(c, 2, TL_ROLE_BROKER, NULL);
    int ext = tl_cluster_free_port(c);
    while (ext == tl_cluster_node(c, 2)->port || ext == tl_cluster_node(c, 3)->port)
        ext = tl_cluster_free_port(c);
    add_listeners(tl_cluster_node(c, 2), ext);
    add_listeners(tl_cluster_node(c, 3), 0);
    tl_cluster_start(c);
    tl_node *b2 = tl_cluster_node(c, 2);
    tl_kraft_wait_fenced(b2, 2, 0, 60);
    tl_kraft_wait_fenced(b2, 3, 0, 60);
    int16_t err = tl_kraft_create_topic(tl_cluster_node(c, 1)->controller, TOPIC, NPART, 1);
    TL_ASSERT(err == 0, "CreateTopics: %s", kerr_name(err));
    pinfo parts[NPART], parts2[NPART2];
    parts_of(TOPIC, NPART, 1, parts);
    int n2 = 0;
    for (int i = 0; i < NPART; i++)
        n2 += (leaders[i] = parts[i].leader) == 2;
    TL_ASSERT(n2 > 0 && n2 < NPART, "broker 2 leads %d of %d partitions", n2, NPART);
    err = tl_kraft_create_topic(tl_cluster_node(c, 1)->controller, TOPIC2, NPART2, 2);
    TL_ASSERT(err == 0, "CreateTopics %s: %s", TOPIC2, kerr_name(err));
    parts_of(TOPIC2, NPART2, 2, parts2);
    tl_log("%s: partition 0 led by %d, 1 by %d", TOPIC2, parts2[0].leader, parts2[1].leader);

    char both_s[256], ext_s[128];
    snprintf(both_s, sizeof(both_s), "2@%s,3@%s", L[2].internal, L[3].internal);
    snprintf(ext_s, sizeof(ext_s), "2@%s", L[2].external);
    static const int16_t vers[] = {0, 5, 6, 12};
    for (size_t i = 0; i < sizeof(vers) / sizeof(vers[0]); i++) {
        int16_t ver = vers[i];
        check_metadata(L[2].internal, ver, TOPIC, NPART, parts, both_s, 0);
        check_metadata(L[3].internal, ver, TOPIC, NPART, parts, both_s, 0);
        check_metadata(L[2].external, ver, TOPIC, NPART, parts, ext_s, 1);
        check_metadata(L[2].internal, ver, TOPIC2, NPART2, parts2, both_s, 0);
        check_metadata(L[2].external, ver, TOPIC2, NPART2, parts2, ext_s, 1);
    }
    check_describe_partitions(L[2].internal, TOPIC, NPART, parts, 0);
    check_describe_partitions(L[2].external, TOPIC, NPART, parts, 1);
    tl_log("Metadata: %s through INTERNAL, %s through EXTERNAL", both_s, ext_s);
    check_describe_cluster(L[2].internal, both_s);
    check_describe_cluster(L[3].internal, both_s);
    check_describe_cluster(L[2].external, ext_s);
    check_coordinators();
    check_librdkafka(leaders);
    leaders_of("__consumer_offsets", NOFF, off_leaders);
    group_led_by(off_leaders, 2, g2, sizeof(g2));
    check_consumer(leaders, g2);

    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
