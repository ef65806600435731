/* 0712-cluster-brokers: three controller-only nodes and three broker-only
 * nodes, each its own process: the brokers follow the quorum as
 * observers, register with the active controller (BrokerRegistration) and
 * are unfenced once caught up (BrokerHeartbeat; the time is logged);
 *   - DescribeCluster on any broker lists the three brokers unfenced;
 *   - CreateTopics (6 partitions, replication factor 3) on the active
 *     controller: every broker's Metadata has the topic with 6 partitions
 *     of 3 replicas among the brokers, the leaders spread over all three,
 *     and each broker has the partition directories of its replicas;
 *   - an idempotent librdkafka producer writes through one broker and a
 *     consumer reads the same bytes in order through another;
 *   - CreateTopics on a broker is forwarded to the active controller
 *     (Envelope) and the topic is in another broker's Metadata;
 *   - a SIGSTOPped broker is fenced within broker.session.timeout.ms (the
 *     time is logged) and leads no partition any more; after SIGCONT it
 *     is unfenced again;
 *   - kill -9 of the active controller: the brokers carry on with the new
 *     one and stay unfenced;
 *   - a broker stopped with SIGTERM moves its leaderships away first
 *     (controlled shutdown): none is left on it once it has exited;
 *   - every node exits cleanly on SIGTERM.
 * With KAFKA_REF=1 the same runs against Apache Kafka 4.4 nodes. */
#include <dirent.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "util/kerr.h"

#define NC 3 /* controllers: ids 1-3 */
#define NB 3 /* brokers: ids 4-6 */
#define TOPIC "c0712"
#define NPART 6

static void check_idem_msg(const rd_kafka_message_t *m, void *arg)
{
    int *seen = arg;
    char want[32];
    snprintf(want, sizeof(want), "idem-%d", (int)m->offset);
    TL_ASSERT(m->len == strlen(want) && !memcmp(m->payload, want, m->len),
              "offset %lld: '%.*s', want '%s'", (long long)m->offset, (int)m->len,
              (const char *)m->payload, want);
    (*seen)++;
}

/* A stock client through the cluster: an idempotent producer (its
 * producer id from a block the active controller gave broker 5) writes
 * through one broker, a consumer reads through another, the same bytes in
 * the same order. Replication factor 1: partition data is not replicated
 * yet. */
static void check_idempotent_clients(tl_cluster *c)
{
    rd_kafka_conf_t *conf = tl_conf(tl_cluster_node(c, 5)->bootstrap);
    tl_conf_set(conf, "enable.idempotence", "true");
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    TL_ASSERT_EQ(tl_create_topic(rk, TOPIC "-idem", 1), 1);
    tl_produce_seq(rk, TOPIC "-idem", 0, "idem", 10);
    rd_kafka_destroy(rk);
    int seen = 0;
    rd_kafka_t *cons = tl_consume_from_start(tl_conf(tl_cluster_node(c, 6)->bootstrap),
                                             TOPIC "-idem", 1, 10, 30, check_idem_msg, &seen);
    rd_kafka_destroy(cons);
    TL_ASSERT_EQ(seen, 10);
}

/* The topic's leaders as broker `via` describes them: 1 when it has all
 * partitions with 3 replicas among the brokers; leaders[p] gets each. */
static int metadata_of(tl_node *via, const char *name, int32_t leaders[NPART])
{
    tl_kraft_topic t;
    if (tl_kraft_metadata(via, name, &t) < 0 || t.npart != NPART)
        return 0;
    for (int p = 0; p < NPART; p++) {
        leaders[p] = t.leader[p];
        if (t.nrep[p] != 3)
            return 0;
        for (int r = 0; r < t.nrep[p]; r++)
            if (t.rep[p][r] <= NC || t.rep[p][r] > NC + NB)
                return 0;
    }
    return 1;
}

static int metadata(tl_node *via, int32_t leaders[NPART])
{
    return metadata_of(via, TOPIC, leaders);
}

static void create_topic(const char *addr, const char *name)
{
    int16_t err = tl_kraft_create_topic(addr, name, NPART, 3);
    TL_ASSERT(err == 0, "CreateTopics %s at %s: error %d", name, addr, err);
}

static int count_dirs(tl_node *node)
{
    char path[PATH_MAX + 16];
    int n = 0;
    snprintf(path, sizeof(path), "%s/data", node->dir);
    DIR *d = opendir(path);
    struct dirent *e;
    while (d && (e = readdir(d)))
        n += strncmp(e->d_name, TOPIC "-", strlen(TOPIC) + 1) == 0;
    if (d)
        closedir(d);
    return n;
}

static void check_topic(tl_cluster *c, int32_t leaders[NPART])
{
    int led[NC + NB + 1] = {0};
    for (int id = NC + 1; id <= NC + NB; id++) {
        double until = tl_now() + 15;
        while (!metadata(tl_cluster_node(c, id), leaders) && tl_now() < until)
            usleep(50000);
        TL_ASSERT(metadata(tl_cluster_node(c, id), leaders), "broker %d: no topic %s", id, TOPIC);
    }
    for (int p = 0; p < NPART; p++)
        if (leaders[p] > NC && leaders[p] <= NC + NB)
            led[leaders[p]]++;
    for (int id = NC + 1; id <= NC + NB; id++) {
        TL_ASSERT(led[id] == NPART / NB, "broker %d leads %d of %d partitions", id, led[id], NPART);
        if (!tl_is_kafka()) {
            double until = tl_now() + 10;
            while (count_dirs(tl_cluster_node(c, id)) < NPART && tl_now() < until)
                usleep(50000);
            TL_ASSERT_EQ(count_dirs(tl_cluster_node(c, id)), NPART);
        }
    }
}

int main(void)
{
    int32_t leaders[NPART];
    tl_init("0712-cluster-brokers");
    tl_cluster *c = tl_cluster_new("0712-cluster", TL_QUORUM_SHARED);
    tl_cluster_add_n(c, NC, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_add_n(c, NB, TL_ROLE_BROKER, NULL);
    double t0 = tl_now();
    tl_cluster_start(c);
    double t1 = tl_now(); /* every node listens (a JVM takes seconds to) */
    tl_node *b4 = tl_cluster_node(c, 4);
    for (int id = NC + 1; id <= NC + NB; id++)
        tl_kraft_wait_fenced(b4, id, 0, 60);
    tl_log("three brokers registered and unfenced %.0f ms after the start, %.0f ms after all listen",
           (tl_now() - t0) * 1000, (tl_now() - t1) * 1000);
    /* DescribeCluster names the active controller once the controllers'
     * registrations are committed, which can come after the brokers' */
    int ctl = 0;
    double until_ctl = tl_now() + 10;
    while (!(ctl = tl_kraft_active_controller(c)) && tl_now() < until_ctl)
        usleep(50000);
    TL_ASSERT(ctl, "no active controller");
    create_topic(tl_cluster_node(c, ctl)->controller, TOPIC);
    check_topic(c, leaders);
    /* through a broker: forwarded to the active controller in an Envelope */
    create_topic(tl_cluster_node(c, 5)->bootstrap, TOPIC "-fwd");
    double until0 = tl_now() + 10;
    while (!metadata_of(tl_cluster_node(c, 6), TOPIC "-fwd", leaders) && tl_now() < until0)
        usleep(50000);
    TL_ASSERT(metadata_of(tl_cluster_node(c, 6), TOPIC "-fwd", leaders),
              "a topic created through broker 5 is not in broker 6's Metadata");
    check_idempotent_clients(c);

    /* a paused broker is fenced and loses its leaderships */
    tl_node_pause(tl_cluster_node(c, 5));
    double fence_s = tl_kraft_wait_fenced(b4, 5, 1, 30);
    tl_log("broker 5 fenced %.0f ms after SIGSTOP (broker.session.timeout.ms 9000)",
           fence_s * 1000);
    double until = tl_now() + 10;
    int leads = 1;
    while (leads && tl_now() < until) {
        leads = 0;
        if (metadata(b4, leaders))
            for (int p = 0; p < NPART; p++)
                leads |= leaders[p] == 5;
        usleep(50000);
    }
    TL_ASSERT(!leads, "fenced broker 5 still leads a partition");
    tl_node_resume(tl_cluster_node(c, 5));
    tl_log("broker 5 unfenced %.0f ms after SIGCONT", tl_kraft_wait_fenced(b4, 5, 0, 30) * 1000);

    /* the active controller dies: the brokers go on with the next one */
    t0 = tl_now();
    tl_node_kill9(tl_cluster_node(c, ctl));
    until = tl_now() + 30;
    int next = 0;
    while (tl_now() < until && (!(next = tl_kraft_active_controller(c)) || next == ctl))
        usleep(100000);
    TL_ASSERT(next && next != ctl, "no new active controller");
    tl_log("controller %d active %.0f ms after kill -9 of %d", next, (tl_now() - t0) * 1000, ctl);
    usleep(3000000);
    tl_kraft_nodes st;
    TL_ASSERT(tl_kraft_describe_cluster(b4, 0, &st) == 0, "broker 4 does not answer");
    for (int id = NC + 1; id <= NC + NB; id++)
        TL_ASSERT(st.state[id] == 0, "broker %d fenced after the controller failover", id);
    tl_log("controller %d took over from %d; the brokers stayed unfenced", next, ctl);
    tl_node_restart(tl_cluster_node(c, ctl));

    /* a broker stopped cleanly hands its leaderships over first
     * (controlled shutdown), well before its session would expire */
    TL_ASSERT(tl_node_stop(tl_cluster_node(c, 6)) == 0, "broker 6 did not exit cleanly");
    t0 = tl_now();
    leads = 1;
    until = tl_now() + 5;
    while (leads && tl_now() < until) {
        leads = 0;
        if (metadata(b4, leaders))
            for (int p = 0; p < NPART; p++)
                leads |= leaders[p] == 6;
        if (leads)
            usleep(50000);
    }
    TL_ASSERT(!leads, "broker 6 still leads a partition after its controlled shutdown");
    tl_log("broker 6 stopped: no partition led by it %.0f ms later", (tl_now() - t0) * 1000);

    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
