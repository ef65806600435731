/* 0734-reassign: partition reassignment (AlterPartitionReassignments,
 * ListPartitionReassignments), sent to a broker that forwards them to the
 * active controller. Three controllers and three brokers; a topic of one
 * partition on two of the brokers (a, b), NMSG messages acks=all; c is
 * the third broker:
 *   - refusals, each in its partition, with Kafka's messages (checked):
 *     an unknown topic and partition
 *     (UNKNOWN_TOPIC_OR_PARTITION), a broker that is not registered and a
 *     broker named twice (INVALID_REPLICA_ASSIGNMENT), a cancel with
 *     nothing in progress (NO_REASSIGNMENT_IN_PROGRESS), a change of the
 *     replica count with AllowReplicationFactorChange false (v1,
 *     INVALID_REPLICATION_FACTOR);
 *   - c killed (fenced): [a, c] stays in progress, as c cannot catch up:
 *     ListPartitionReassignments shows replicas [a, c, b], adding [c],
 *     removing [b], as Metadata does the replicas; cancelled (null
 *     replicas), the partition is on [a, b] again and nothing is listed;
 *   - c started again: [c, a] completes once c has caught up: Metadata
 *     shows replicas [c, a] and both in the ISR, nothing is listed, b has
 *     deleted its log, and a consumer reads the NMSG messages.
 * With KAFKA_REF=1 the same runs against Apache Kafka 4.4 nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"
#include "util/kerr.h"

#define NC 3
#define NB 3
#define TOPIC "r0734"
#define NMSG 200

static tl_cluster *c;
static int via; /* the broker asked */

static char last_msg[512]; /* the last answer's message ("" for null) */

/* AlterPartitionReassignments (version ver, allow) of TOPIC-p (topic
 * names another topic when given) to n replicas (n < 0: cancel): the
 * partition's error code, its message in last_msg. */
static int16_t reassign(int16_t ver, int allow, const char *topic, int32_t p, const int32_t *reps,
                        int n)
{
    proto_alter_partition_reassignments_req_t r;
    proto_alter_partition_reassignments_req_reassignable_topic_t t;
    proto_alter_partition_reassignments_req_reassignable_partition_t rp;
    proto_alter_partition_reassignments_resp_t resp;
    arena_t arena;
    proto_alter_partition_reassignments_req_init(&r);
    proto_alter_partition_reassignments_req_reassignable_topic_init(&t);
    proto_alter_partition_reassignments_req_reassignable_partition_init(&rp);
    r.allow_replication_factor_change = allow != 0;
    rp.partition_index = p;
    rp.replicas.n = n;
    rp.replicas.v = (int32_t *)reps;
    t.name = tl_wire_str(topic ? topic : TOPIC);
    t.partitions.n = 1;
    t.partitions.v = &rp;
    r.topics.n = 1;
    r.topics.v = &t;
    int fd = tl_connect(tl_cluster_node(c, via)->bootstrap, 2000);
    TL_ASSERT(fd >= 0, "connect");
    arena_init(&arena, 4096);
    TL_WIRE_CALL(fd, &arena, alter_partition_reassignments, 45, ver, &r, &resp);
    close(fd);
    TL_ASSERT(resp.error_code == 0 && resp.responses.n == 1 &&
                  resp.responses.v[0].partitions.n == 1,
              "AlterPartitionReassignments: error %d, %d topics", resp.error_code,
              resp.responses.n);
    const proto_alter_partition_reassignments_resp_reassignable_partition_response_t *pr =
        &resp.responses.v[0].partitions.v[0];
    int16_t err = pr->error_code;
    snprintf(last_msg, sizeof(last_msg), "%.*s",
             pr->error_message.len > 0 ? (int)pr->error_message.len : 0,
             pr->error_message.p ? pr->error_message.p : "");
    tl_log("reassign %s-%d to %d replica(s) (v%d): %d %.*s", topic ? topic : TOPIC, (int)p, n,
           ver, err, pr->error_message.len > 0 ? (int)pr->error_message.len : 0,
           pr->error_message.p ? pr->error_message.p : "");
    arena_destroy(&arena);
    return err;
}

typedef struct ongoing {
    int listed;
    int nrep, nadd, nrem;
    int32_t rep[8], add[8], rem[8];
} ongoing;

static void copy_ids(const proto_int32_array_t *a, int32_t *out, int *n)
{
    *n = a->n > 8 ? 8 : a->n < 0 ? 0 : a->n;
    memcpy(out, a->v, (size_t)*n * sizeof(int32_t));
}

/* ListPartitionReassignments of every topic: TOPIC-0's entry. */
static ongoing list_ongoing(void)
{
    proto_list_partition_reassignments_req_t r;
    proto_list_partition_reassignments_resp_t resp;
    arena_t arena;
    ongoing o;
    memset(&o, 0, sizeof(o));
    proto_list_partition_reassignments_req_init(&r);
    r.topics.n = -1;
    int fd = tl_connect(tl_cluster_node(c, via)->bootstrap, 2000);
    TL_ASSERT(fd >= 0, "connect");
    arena_init(&arena, 4096);
    TL_WIRE_CALL(fd, &arena, list_partition_reassignments, 46, 0, &r, &resp);
    close(fd);
    TL_ASSERT(resp.error_code == 0, "ListPartitionReassignments: %d", resp.error_code);
    for (int32_t i = 0; i < resp.topics.n; i++) {
        const proto_list_partition_reassignments_resp_ongoing_topic_reassignment_t *t =
            &resp.topics.v[i];
        if (t->name.len != (int32_t)strlen(TOPIC) || memcmp(t->name.p, TOPIC, strlen(TOPIC)))
            continue;
        for (int32_t j = 0; j < t->partitions.n; j++)
            if (t->partitions.v[j].partition_index == 0) {
                o.listed = 1;
                copy_ids(&t->partitions.v[j].replicas, o.rep, &o.nrep);
                copy_ids(&t->partitions.v[j].adding_replicas, o.add, &o.nadd);
                copy_ids(&t->partitions.v[j].removing_replicas, o.rem, &o.nrem);
            }
    }
    arena_destroy(&arena);
    return o;
}

static int same(const int32_t *a, int na, const int32_t *b, int nb)
{
    return na == nb && !memcmp(a, b, (size_t)na * sizeof(int32_t));
}

/* Waits (timeout_s) until the brokers' Metadata gives TOPIC-0 these
 * replicas, in this order, and (isr > 0) an ISR of that many. */
static void wait_replicas(const int32_t *want, int n, int isr, double timeout_s)
{
    double until = tl_now() + timeout_s;
    tl_kraft_topic t;
    for (;;) {
        memset(&t, 0, sizeof(t));
        if (tl_kraft_metadata(tl_cluster_node(c, via), TOPIC, &t) == 0 && t.npart == 1 &&
            same(t.rep[0], t.nrep[0], want, n) && (isr == 0 || t.nisr[0] == isr))
            return;
        TL_ASSERT(tl_now() < until, "%s-0: %d replicas [%d %d %d], isr %d; want %d", TOPIC,
                  t.nrep[0], t.rep[0][0], t.rep[0][1], t.rep[0][2], t.nisr[0], n);
        usleep(100000);
    }
}

static void no_check(const rd_kafka_message_t *m, void *arg)
{
    (void)m;
    (void)arg;
}

static void refused(int16_t got, int16_t want, const char *msg)
{
    TL_ASSERT(got == want && !strcmp(last_msg, msg), "error %d '%s', want %d '%s'", got, last_msg,
              want, msg);
}

static void refusals(int a, int b, int cc)
{
    int32_t unknown[] = {a, 99}, twice[] = {a, a}, three[] = {a, b, cc};
    char msg[128];
    snprintf(msg, sizeof(msg), "The manual partition assignment includes the broker %d more "
             "than once.", a);
    refused(reassign(0, 1, "r0734-none", 0, unknown, 1), KERR_UNKNOWN_TOPIC_OR_PARTITION,
            "Unable to find a topic named r0734-none.");
    refused(reassign(0, 1, NULL, 7, unknown, 1), KERR_UNKNOWN_TOPIC_OR_PARTITION,
            "Unable to find partition " TOPIC ":7.");
    refused(reassign(0, 1, NULL, 0, unknown, 2), KERR_INVALID_REPLICA_ASSIGNMENT,
            "The manual partition assignment includes broker 99, but no such broker is "
            "registered.");
    refused(reassign(0, 1, NULL, 0, twice, 2), KERR_INVALID_REPLICA_ASSIGNMENT, msg);
    refused(reassign(0, 1, NULL, 0, NULL, -1), KERR_NO_REASSIGNMENT_IN_PROGRESS, "");
    refused(reassign(1, 0, NULL, 0, three, 3), KERR_INVALID_REPLICATION_FACTOR,
            "The replication factor is changed from 2 to 3");
    TL_ASSERT(!list_ongoing().listed, "listed with nothing in progress");
}

int main(void)
{
    tl_init("0734-reassign");
    c = tl_cluster_new("0734-reassign", TL_QUORUM_SHARED);
    tl_cluster_add_n(c, NC, TL_ROLE_CONTROLLER, NULL);
    tl_cluster_add_n(c, NB, TL_ROLE_BROKER, NULL);
    tl_cluster_start(c);
    for (int id = NC + 1; id <= NC + NB; id++)
        tl_kraft_wait_fenced(tl_cluster_node(c, NC + 1), id, 0, 120);
    int16_t err = tl_kraft_create_topic(tl_cluster_node(c, NC + 1)->bootstrap, TOPIC, 1, 2);
    TL_ASSERT(err == 0, "CreateTopics: error %d", err);
    tl_kraft_topic t;
    double until = tl_now() + 30;
    while (tl_kraft_metadata(tl_cluster_node(c, NC + 1), TOPIC, &t) || t.npart != 1 ||
           t.nisr[0] != 2) {
        TL_ASSERT(tl_now() < until, "%s-0 not on two replicas", TOPIC);
        usleep(100000);
    }
    int a = t.rep[0][0], b = t.rep[0][1], cc = NC + 1 + NC + 2 + NC + 3 - a - b;
    via = a;
    rd_kafka_t *prod = tl_new(RD_KAFKA_PRODUCER, tl_conf(tl_cluster_bootstrap(c)));
    tl_produce_seq(prod, TOPIC, 0, "m", NMSG);
    rd_kafka_destroy(prod);
    tl_log("%s-0 on [%d, %d] with %d messages; broker %d has none", TOPIC, a, b, NMSG, cc);
    refusals(a, b, cc);

    tl_node_kill9(tl_cluster_node(c, cc));
    tl_kraft_wait_fenced(tl_cluster_node(c, a), cc, 1, 60);
    int32_t to_ac[] = {a, cc}, merged[] = {a, cc, b}, orig[] = {a, b};
    TL_ASSERT_EQ(reassign(1, 1, NULL, 0, to_ac, 2), 0);
    ongoing o = list_ongoing();
    TL_ASSERT(o.listed && same(o.rep, o.nrep, merged, 3) && same(o.add, o.nadd, &cc, 1) &&
                  same(o.rem, o.nrem, &b, 1),
              "listed %d: %d replicas, %d adding, %d removing", o.listed, o.nrep, o.nadd, o.nrem);
    wait_replicas(merged, 3, 2, 10);
    tl_log("[%d, %d] in progress while %d is down: replicas [%d, %d, %d], adding %d, removing %d",
           a, cc, cc, a, cc, b, cc, b);
    TL_ASSERT_EQ(reassign(0, 1, NULL, 0, NULL, -1), 0);
    wait_replicas(orig, 2, 2, 10);
    TL_ASSERT(!list_ongoing().listed, "listed after the cancel");
    tl_log("cancelled: on [%d, %d] again", a, b);

    tl_node_start(tl_cluster_node(c, cc));
    tl_kraft_wait_fenced(tl_cluster_node(c, a), cc, 0, 60);
    int32_t to_ca[] = {cc, a};
    double t0 = tl_now();
    TL_ASSERT_EQ(reassign(1, 1, NULL, 0, to_ca, 2), 0);
    wait_replicas(to_ca, 2, 2, 60);
    TL_ASSERT(!list_ongoing().listed, "listed once complete");
    tl_log("[%d, %d] complete %.1f s after the request", cc, a, tl_now() - t0);
    char dir[PATH_MAX + 64];
    struct stat st;
    snprintf(dir, sizeof(dir), "%s/data/%s-0", tl_cluster_node(c, b)->dir, TOPIC);
    until = tl_now() + 30;
    while (stat(dir, &st) == 0) {
        TL_ASSERT(tl_now() < until, "%s is still there", dir);
        usleep(100000);
    }
    int n = 0;
    rd_kafka_t *cons = tl_consume_from_start(tl_conf(tl_cluster_node(c, cc)->bootstrap), TOPIC, 1,
                                             NMSG, 60, no_check, &n);
    rd_kafka_destroy(cons);
    tl_log("broker %d deleted its replica; %d messages read from [%d, %d]", b, NMSG, cc, a);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
