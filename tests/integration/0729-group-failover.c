/* 0729-group-failover: a consumer group keeps its committed offsets
 * through a kill -9 of the broker that coordinates it, twice. Three
 * combined nodes; __consumer_offsets of 3 partitions, replication
 * factor 3 (the default with three brokers); a topic of 3 partitions:
 *   - a librdkafka consumer of group G commits offsets (with metadata)
 *     for the three partitions; the commit is answered once the
 *     coordinator's ISR has it;
 *   - the coordinator (the leader of G's __consumer_offsets partition) is
 *     killed with kill -9; a new consumer, bootstrapped on the others,
 *     reads the committed offsets back (librdkafka retries through
 *     NOT_COORDINATOR / COORDINATOR_LOAD_IN_PROGRESS while the leadership
 *     moves and the new leader loads the group): the same offsets and
 *     metadata; a subscribed consumer of G then starts at them;
 *   - new offsets are committed through the new coordinator; the killed
 *     node is started again and rejoins the ISR of G's partition; the
 *     second coordinator is killed too; the newer offsets are read back.
 * With KAFKA_REF=1 the same runs against three Apache Kafka 4.4 combined
 * nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"

#define N 3
#define TOPIC "g0729"
#define GROUP "g0729-group"
#define NPART 3
#define NOFF 3    /* offsets.topic.num.partitions */
#define NMSG 100  /* per partition */

static tl_cluster *c;

static rd_kafka_t *consumer_via(int skip)
{
    char bs[256] = "";
    for (int id = 1; id <= N; id++)
        if (id != skip && tl_node_running(tl_cluster_node(c, id)))
            snprintf(bs + strlen(bs), sizeof(bs) - strlen(bs), "%s%s", *bs ? "," : "",
                     tl_cluster_node(c, id)->bootstrap);
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "group.id", GROUP);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "auto.offset.reset", "error");
    return tl_new(RD_KAFKA_CONSUMER, conf);
}

static rd_kafka_topic_partition_list_t *offsets_of(int64_t base)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(NPART);
    for (int32_t p = 0; p < NPART; p++) {
        rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(l, TOPIC, p);
        char md[32];
        tp->offset = base + 10 * p;
        snprintf(md, sizeof(md), "md-%lld", (long long)tp->offset);
        tp->metadata = strdup(md);
        tp->metadata_size = strlen(md);
    }
    return l;
}

static void commit(int64_t base)
{
    rd_kafka_t *rk = consumer_via(-1);
    rd_kafka_topic_partition_list_t *l = offsets_of(base);
    rd_kafka_resp_err_t err = rd_kafka_commit(rk, l, 0);
    TL_ASSERT(err == RD_KAFKA_RESP_ERR_NO_ERROR, "commit: %s", rd_kafka_err2name(err));
    for (int i = 0; i < l->cnt; i++)
        TL_ASSERT(!l->elems[i].err, "commit %d: %s", (int)l->elems[i].partition,
                  rd_kafka_err2name(l->elems[i].err));
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_destroy(rk);
}

/* The committed offsets as a consumer through the brokers but skip reads
 * them (60 s at most, librdkafka retrying meanwhile): those of base. */
static void check_committed(int skip, int64_t base)
{
    rd_kafka_t *rk = consumer_via(skip);
    rd_kafka_topic_partition_list_t *l = offsets_of(0);
    double t0 = tl_now();
    rd_kafka_resp_err_t err = rd_kafka_committed(rk, l, 60000);
    TL_ASSERT(err == RD_KAFKA_RESP_ERR_NO_ERROR, "committed: %s", rd_kafka_err2name(err));
    for (int i = 0; i < l->cnt; i++) {
        const rd_kafka_topic_partition_t *tp = &l->elems[i];
        char md[32];
        int64_t want = base + 10 * tp->partition;
        snprintf(md, sizeof(md), "md-%lld", (long long)want);
        TL_ASSERT(!tp->err, "committed %d: %s", (int)tp->partition, rd_kafka_err2name(tp->err));
        TL_ASSERT(tp->offset == want, "%s-%d: committed %lld, want %lld", TOPIC,
                  (int)tp->partition, (long long)tp->offset, (long long)want);
        TL_ASSERT(tp->metadata_size == strlen(md) && !memcmp(tp->metadata, md, strlen(md)),
                  "%s-%d: metadata '%.*s', want '%s'", TOPIC, (int)tp->partition,
                  (int)tp->metadata_size, (const char *)tp->metadata, md);
    }
    tl_log("the offsets of %lld read back through the others in %.2f s", (long long)base,
           tl_now() - t0);
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_destroy(rk);
}

/* A subscribed consumer of the group starts at the committed offsets. */
static void check_resume(int skip, int64_t base)
{
    rd_kafka_t *rk = consumer_via(skip);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    int64_t first[NPART];
    int got = 0;
    double until = tl_now() + 60;
    rd_kafka_topic_partition_list_add(sub, TOPIC, RD_KAFKA_PARTITION_UA);
    TL_ASSERT_EQ(rd_kafka_subscribe(rk, sub), 0);
    rd_kafka_topic_partition_list_destroy(sub);
    for (int32_t p = 0; p < NPART; p++)
        first[p] = -1;
    while (got < NPART) {
        TL_ASSERT(tl_now() < until, "resumed %d of %d partitions", got, NPART);
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 200);
        if (!m)
            continue;
        if (!m->err && first[m->partition] < 0) {
            first[m->partition] = m->offset;
            TL_ASSERT(m->offset == base + 10 * m->partition, "%s-%d: resumed at %lld, want %lld",
                      TOPIC, (int)m->partition, (long long)m->offset,
                      (long long)(base + 10 * m->partition));
            got++;
        }
        rd_kafka_message_destroy(m);
    }
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    tl_log("a subscribed consumer of %s resumed at the committed offsets", GROUP);
}

static int coordinator(void)
{
    int32_t p = tl_kraft_group_partition(GROUP, NOFF);
    double until = tl_now() + 30;
    int32_t leader;
    while ((leader = tl_kraft_leader_of(c, "__consumer_offsets", p)) < 0) {
        TL_ASSERT(tl_now() < until, "__consumer_offsets-%d has no leader", (int)p);
        usleep(100000);
    }
    return leader;
}

static void wait_offsets_isr(void)
{
    double until = tl_now() + 60;
    while (!tl_kraft_isr_whole(c, "__consumer_offsets", NOFF, N)) {
        TL_ASSERT(tl_now() < until, "the ISRs of __consumer_offsets are not whole");
        usleep(100000);
    }
}

int main(void)
{
    tl_init("0729-group-failover");
    c = tl_cluster_new("0729-groups", TL_QUORUM_SHARED);
    tl_cluster_set(c, "offsets.topic.num.partitions=3");
    tl_cluster_set(c, "offsets.topic.replication.factor=3"); /* kafka-ref.sh sets 1 */
    tl_cluster_set(c, "broker.session.timeout.ms=6000");
    tl_cluster_add_n(c, N, TL_ROLE_COMBINED, NULL);
    tl_kraft_start_topic(c, TOPIC, NPART, 3);
    rd_kafka_t *prod = tl_new(RD_KAFKA_PRODUCER, tl_conf(tl_cluster_bootstrap(c)));
    for (int32_t p = 0; p < NPART; p++)
        tl_produce_seq(prod, TOPIC, p, "m", NMSG);
    rd_kafka_destroy(prod);

    commit(10);
    wait_offsets_isr();
    int first = coordinator();
    tl_log("%s committed through its coordinator, broker %d", GROUP, first);
    tl_node_kill9(tl_cluster_node(c, first));
    check_committed(first, 10);
    check_resume(first, 10);
    int second = coordinator();
    TL_ASSERT(second != first, "broker %d still coordinates", first);

    commit(40);
    tl_node_start(tl_cluster_node(c, first));
    wait_offsets_isr();
    tl_log("%s committed again through broker %d; broker %d back in the ISR", GROUP, second,
           first);
    tl_node_kill9(tl_cluster_node(c, second));
    check_committed(second, 40);
    check_resume(second, 40);
    tl_node_start(tl_cluster_node(c, second));
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
