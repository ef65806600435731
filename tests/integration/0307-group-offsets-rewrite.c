/* 0307-group-offsets-rewrite: __consumer_offsets does not grow without
 * bound. With offsets.topic.segment.bytes=1048576 (the smallest Kafka
 * takes), a member of a stable group commits 3 partitions 6000 times
 * (about 2.3 MB of records). The
 * coordinator rewrites the group's partition from its live state and
 * drops what came before (strand: its log start offset moves and the
 * partition stays small; Kafka compacts instead, so that part is only
 * checked on strand). Through a clean restart and a kill -9 the committed
 * offsets are the last ones and the member keeps its place (no
 * rebalance, DescribeGroups shows it). */
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPART 3
#define COMMITS 6000

static const char *const extra[] = {"group.initial.rebalance.delay.ms=0",
                                    "offsets.topic.segment.bytes=1048576", NULL};
static const char *topic;
static char group[256];
static int events;

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    events++;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS)
        rd_kafka_assign(rk, parts);
    else
        rd_kafka_assign(rk, NULL);
}

static void wait_assigned(rd_kafka_t *rk)
{
    double deadline = tl_now() + 60;
    while (!events) {
        TL_ASSERT(tl_now() < deadline, "no assignment in 60 s");
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 50);
        if (m)
            rd_kafka_message_destroy(m);
    }
}

/* Polls for a while (heartbeats, reconnects); messages are ignored. */
static void idle(rd_kafka_t *rk, double secs)
{
    for (double end = tl_now() + secs; tl_now() < end;) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 50);
        if (m)
            rd_kafka_message_destroy(m);
    }
}

static void commit_all(rd_kafka_t *rk, int64_t off)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(NPART);
    for (int p = 0; p < NPART; p++)
        rd_kafka_topic_partition_list_add(l, topic, p)->offset = off + p;
    rd_kafka_resp_err_t err;
    double deadline = tl_now() + 30;
    /* Retried: around a restart the coordinator may be away for a bit. */
    while ((err = rd_kafka_commit(rk, l, 0)) != 0) {
        TL_ASSERT(tl_now() < deadline, "commit of %" PRId64 ": %s", off, rd_kafka_err2name(err));
        idle(rk, 0.1);
    }
    rd_kafka_topic_partition_list_destroy(l);
}

static void check_committed(rd_kafka_t *rk, int64_t off)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(NPART);
    for (int p = 0; p < NPART; p++)
        rd_kafka_topic_partition_list_add(l, topic, p);
    TL_ASSERT_EQ(rd_kafka_committed(rk, l, 30000), 0);
    for (int p = 0; p < NPART; p++)
        TL_ASSERT(l->elems[p].offset == off + p, "partition %d: committed %" PRId64
                  ", expected %" PRId64, p, l->elems[p].offset, off + p);
    rd_kafka_topic_partition_list_destroy(l);
}

static void check_member(const char *bs, const char *member_id)
{
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    const char *groups[1] = {group};
    rd_kafka_DescribeConsumerGroups(rk, groups, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
    TL_ASSERT(ev && !rd_kafka_event_error(ev), "DescribeConsumerGroups failed");
    size_t cnt;
    const rd_kafka_ConsumerGroupDescription_t **d = rd_kafka_DescribeConsumerGroups_result_groups(
        rd_kafka_event_DescribeConsumerGroups_result(ev), &cnt);
    TL_ASSERT(cnt == 1 && rd_kafka_ConsumerGroupDescription_member_count(d[0]) == 1,
              "group members");
    const char *id = rd_kafka_MemberDescription_consumer_id(
        rd_kafka_ConsumerGroupDescription_member(d[0], 0));
    TL_ASSERT(!strcmp(id, member_id), "member %s, expected %s", id, member_id);
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
}

/* The group's __consumer_offsets partition: Kafka's
 * abs(groupId.hashCode()) % 50 (the name is ASCII). */
static int32_t group_partition(void)
{
    uint32_t h = 0;
    for (const char *c = group; *c; c++)
        h = h * 31 + (uint8_t)*c;
    int32_t s = (int32_t)h;
    return (s == INT32_MIN ? 0 : s < 0 ? -s : s) % 50;
}

/* strand only: the group's partition was rewritten (its log starts past
 * 0) and holds little. */
static void check_rewritten(rd_kafka_t *rk)
{
    int64_t lo, hi;
    int32_t p = group_partition();
    TL_ASSERT_EQ(rd_kafka_query_watermark_offsets(rk, "__consumer_offsets", p, &lo, &hi, 10000), 0);
    tl_log("__consumer_offsets-%d: offsets %" PRId64 "..%" PRId64, p, lo, hi);
    TL_ASSERT(lo > 0, "partition %d was not rewritten", p);
    TL_ASSERT(hi - lo < COMMITS * NPART / 2, "partition %d holds %" PRId64 " records", p, hi - lo);
}

int main(void)
{
    tl_broker b = {0};
    char *dir;

    tl_init("0307-group-offsets-rewrite");
    dir = tl_scratch_dir("0307-broker");
    topic = tl_topic_name("t0307");
    snprintf(group, sizeof(group), "g-%s", topic);
    tl_broker_start(&b, dir, extra);
    rd_kafka_t *prod = tl_new(RD_KAFKA_PRODUCER, tl_conf(b.bootstrap));
    TL_ASSERT_EQ(tl_create_topic(prod, topic, NPART), NPART);
    rd_kafka_destroy(prod);

    rd_kafka_conf_t *conf = tl_conf(b.bootstrap);
    tl_conf_set(conf, "group.id", group);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "session.timeout.ms", "30000");
    tl_conf_set(conf, "heartbeat.interval.ms", "500");
    tl_conf_set(conf, "reconnect.backoff.ms", "20");
    tl_conf_set(conf, "reconnect.backoff.max.ms", "200");
    rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    rd_kafka_t *c = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_poll_set_consumer(c);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(sub, topic, RD_KAFKA_PARTITION_UA);
    TL_ASSERT_EQ(rd_kafka_subscribe(c, sub), 0);
    rd_kafka_topic_partition_list_destroy(sub);
    wait_assigned(c);
    int ev0 = events;
    char *member = rd_kafka_memberid(c);

    double t0 = tl_now();
    for (int i = 1; i <= COMMITS; i++)
        commit_all(c, i * 10);
    tl_log("%d commits of %d partitions in %.1f s", COMMITS, NPART, tl_now() - t0);
    int64_t last = COMMITS * 10;
    check_committed(c, last);
    if (!tl_is_kafka())
        check_rewritten(c);

    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    tl_broker_start(&b, b.dir, extra);
    idle(c, 2.0);
    check_committed(c, last);
    check_member(b.bootstrap, member);
    commit_all(c, last + 1000);
    tl_broker_kill9(&b);
    tl_broker_start(&b, b.dir, extra);
    idle(c, 2.0);
    check_committed(c, last + 1000);
    check_member(b.bootstrap, member);
    TL_ASSERT_EQ(events, ev0);
    tl_log("offsets and membership kept through a restart and a kill -9");

    rd_kafka_mem_free(c, member);
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(dir);
    return tl_done();
}
