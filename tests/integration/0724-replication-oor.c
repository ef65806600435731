/* 0724-replication-oor: a follower whose log ends below its leader's log
 * start (OFFSET_OUT_OF_RANGE on its fetch) starts again at that start, as
 * Kafka's follower does (ListOffsets of the leader, then its log truncated
 * fully and begun at the leader's log start):
 *   - three combined nodes, a topic of one partition with replication
 *     factor 3; 100 messages acks=all;
 *   - a follower (neither the partition's leader nor the quorum's) is
 *     killed with kill -9; once it is fenced, 100 more messages, then
 *     DeleteRecords moves the log start to 150;
 *   - the follower starts again: after a clean stop its
 *     log-start-offset-checkpoint says 150 and its
 *     replication-offset-checkpoint 200, as the others'.
 * With KAFKA_REF=1 the same runs against three Apache Kafka 4.4 nodes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"

#define N 3
#define TOPIC "o0724"

static void produce(const char *bs, int from, int n)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "acks", "all");
    tl_conf_set(conf, "enable.idempotence", "true");
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    for (int i = from; i < from + n; i++) {
        char v[32];
        snprintf(v, sizeof(v), "m%d", i);
        TL_ASSERT(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(TOPIC), RD_KAFKA_V_PARTITION(0),
                                    RD_KAFKA_V_VALUE(v, strlen(v)),
                                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                    RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR_NO_ERROR,
                  "produce");
    }
    TL_ASSERT(rd_kafka_flush(rk, 60000) == RD_KAFKA_RESP_ERR_NO_ERROR, "flush");
    rd_kafka_destroy(rk);
}

static void delete_records(const char *bs, int64_t before)
{
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, TOPIC, 0)->offset = before;
    rd_kafka_DeleteRecords_t *dr = rd_kafka_DeleteRecords_new(l);
    rd_kafka_DeleteRecords(rk, &dr, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
    TL_ASSERT(ev && !rd_kafka_event_error(ev), "DeleteRecords: %s",
              ev ? rd_kafka_event_error_string(ev) : "timed out");
    const rd_kafka_topic_partition_list_t *res =
        rd_kafka_DeleteRecords_result_offsets(rd_kafka_event_DeleteRecords_result(ev));
    TL_ASSERT(res && res->cnt == 1 && !res->elems[0].err && res->elems[0].offset == before,
              "DeleteRecords result: %s, low watermark %lld",
              res ? rd_kafka_err2str(res->elems[0].err) : "none",
              res ? (long long)res->elems[0].offset : -1LL);
    rd_kafka_event_destroy(ev);
    rd_kafka_DeleteRecords_destroy(dr);
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
}

/* TOPIC-0 in node's checkpoint file name; -1 if absent. */
static int64_t ckpt(tl_node *node, const char *name)
{
    char path[PATH_MAX + 64], line[512], t[256];
    int part;
    long long off;
    int64_t v = -1;
    snprintf(path, sizeof(path), "%s/data/%s", node->dir, name);
    FILE *f = fopen(path, "r");
    TL_ASSERT(f != NULL, "no %s", path);
    while (fgets(line, sizeof(line), f))
        if (sscanf(line, "%255s %d %lld", t, &part, &off) == 3 && !strcmp(t, TOPIC) && part == 0)
            v = off;
    fclose(f);
    return v;
}

int main(void)
{
    tl_kraft_view v;
    tl_kraft_topic t;
    tl_init("0724-replication-oor");
    tl_cluster *c = tl_cluster_new("0724-oor", TL_QUORUM_SHARED);
    tl_cluster_set(c, "broker.session.timeout.ms=4000");
    tl_cluster_add_n(c, N, TL_ROLE_COMBINED, NULL);
    int quorum = tl_kraft_start(c, &v);
    for (int id = 1; id <= N; id++)
        tl_kraft_wait_fenced(tl_cluster_node(c, quorum), id, 0, 60);
    const char *bs = tl_cluster_node(c, quorum)->bootstrap;
    int16_t err = tl_kraft_create_topic(bs, TOPIC, 1, 3);
    TL_ASSERT(err == 0, "CreateTopics: error %d", err);
    double until = tl_now() + 30;
    while ((tl_kraft_metadata(tl_cluster_node(c, quorum), TOPIC, &t) < 0 || t.npart != 1 ||
            t.leader[0] < 1) && tl_now() < until)
        usleep(100000);
    TL_ASSERT(t.npart == 1 && t.leader[0] >= 1, "no leader for %s-0", TOPIC);
    int victim = 1;
    while (victim == quorum || victim == t.leader[0])
        victim++;
    produce(bs, 0, 100);
    tl_node_kill9(tl_cluster_node(c, victim));
    tl_kraft_wait_fenced(tl_cluster_node(c, quorum), victim, 1, 30);
    produce(bs, 100, 100);
    delete_records(bs, 150);
    tl_log("node %d (follower) killed at 100 messages; 200 written, log start moved to 150",
           victim);
    tl_node_start(tl_cluster_node(c, victim));
    tl_kraft_wait_fenced(tl_cluster_node(c, quorum), victim, 0, 30);
    sleep(3); /* a few fetches: out of range, ListOffsets, fetched from 150 */
    tl_cluster_stop(c);
    for (int id = 1; id <= N; id++) {
        int64_t start = ckpt(tl_cluster_node(c, id), "log-start-offset-checkpoint");
        int64_t hw = ckpt(tl_cluster_node(c, id), "replication-offset-checkpoint");
        TL_ASSERT(start == 150 && hw == 200, "node %d: log start %lld, high watermark %lld", id,
                  (long long)start, (long long)hw);
    }
    tl_log("every node: %s-0 starts at 150, high watermark 200 (node %d restarted at 150)", TOPIC,
           victim);
    tl_cluster_free(c);
    return tl_done();
}
