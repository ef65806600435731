/* 0304-group-restart: group state survives broker restarts (the test runs
 * its own broker).
 *  1. Consumer X commits every message it handles. The broker is stopped
 *     (SIGTERM) and started again while X runs: X keeps its member id and
 *     generation (no rebalance: the group was reloaded Stable from
 *     __consumer_offsets), DescribeGroups shows it, and consumption goes
 *     on without loss or repeat.
 *  2. X handles 25 more messages without committing them and vanishes
 *     (no close); the broker is killed (SIGKILL) and restarted. A new
 *     consumer Y of the group starts every partition exactly at the last
 *     committed offset: the 25 come again, nothing before them does, and
 *     everything is consumed. */
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPART 4
#define PER_PART 500
#define UNCOMMITTED 25

static const char *topic;
static char group[256];
static int64_t committed[NPART], next_off[NPART];
static int first_pending[NPART];
static unsigned char seen[NPART][PER_PART];
static int events, total, no_commit, handled_uncommitted, commits_failed;
static const char *const extra[] = {"group.initial.rebalance.delay.ms=0", NULL};

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    events++;
    tl_log("%s: %s %d partition(s)", rd_kafka_name(rk),
           err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS ? "assigned" : "revoked", parts->cnt);
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        for (int i = 0; i < parts->cnt; i++)
            first_pending[parts->elems[i].partition] = 1;
        rd_kafka_assign(rk, parts);
    } else {
        rd_kafka_assign(rk, NULL);
    }
}

static rd_kafka_t *consumer(const char *bs, const char *name)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    tl_conf_set(conf, "client.id", name);
    tl_conf_set(conf, "group.id", group);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "auto.offset.reset", "earliest");
    tl_conf_set(conf, "session.timeout.ms", "10000");
    tl_conf_set(conf, "heartbeat.interval.ms", "500");
    tl_conf_set(conf, "reconnect.backoff.ms", "20");
    tl_conf_set(conf, "reconnect.backoff.max.ms", "200");
    rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    rd_kafka_t *rk = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_poll_set_consumer(rk);
    rd_kafka_topic_partition_list_add(sub, topic, RD_KAFKA_PARTITION_UA);
    TL_ASSERT_EQ(rd_kafka_subscribe(rk, sub), 0);
    rd_kafka_topic_partition_list_destroy(sub);
    return rk;
}

static void handle(rd_kafka_t *rk, rd_kafka_message_t *m)
{
    int p = m->partition;
    int64_t o = m->offset;
    TL_ASSERT(o >= 0 && o < PER_PART, "offset %" PRId64, o);
    if (first_pending[p]) {
        TL_ASSERT(o == committed[p], "%s started partition %d at %" PRId64 ", last commit %" PRId64,
                  rd_kafka_name(rk), p, o, committed[p]);
        first_pending[p] = 0;
    } else {
        TL_ASSERT(o == next_off[p], "partition %d: %" PRId64 " after %" PRId64, p, o,
                  next_off[p] - 1);
    }
    next_off[p] = o + 1;
    total += !seen[p][o];
    seen[p][o]++;
    if (no_commit) {
        handled_uncommitted++;
        return;
    }
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_list_add(l, topic, p)->offset = o + 1;
    if (!rd_kafka_commit(rk, l, 0) && !l->elems[0].err)
        committed[p] = o + 1;
    else
        commits_failed++;
    rd_kafka_topic_partition_list_destroy(l);
}

/* Consumes until stop() holds; errors of the broker going away are
 * expected and only logged. */
static void consume(rd_kafka_t *rk, int (*stop)(void), double secs, const char *what)
{
    double deadline = tl_now() + secs;
    while (!stop()) {
        TL_ASSERT(tl_now() < deadline, "timed out: %s (%d consumed)", what, total);
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 10);
        if (!m)
            continue;
        if (m->err)
            tl_log("%s: %s", rd_kafka_name(rk), rd_kafka_message_errstr(m));
        else
            handle(rk, m);
        rd_kafka_message_destroy(m);
    }
}

static int n_third(void) { return total >= NPART * PER_PART / 3; }
static int n_two_thirds(void) { return total >= 2 * NPART * PER_PART / 3; }
static int n_uncommitted(void) { return handled_uncommitted >= UNCOMMITTED; }
static int n_all(void) { return total == NPART * PER_PART; }

static void describe_has(const char *bs, const char *member_id)
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
    TL_ASSERT_EQ(cnt, 1);
    TL_ASSERT_EQ(rd_kafka_ConsumerGroupDescription_state(d[0]), RD_KAFKA_CONSUMER_GROUP_STATE_STABLE);
    TL_ASSERT_EQ(rd_kafka_ConsumerGroupDescription_member_count(d[0]), 1);
    const char *id = rd_kafka_MemberDescription_consumer_id(
        rd_kafka_ConsumerGroupDescription_member(d[0], 0));
    TL_ASSERT(!strcmp(id, member_id), "member %s, expected %s", id, member_id);
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
}

int main(void)
{
    tl_broker b = {0};
    char *dir;
    int dups = 0;

    tl_init("0304-group-restart");
    dir = tl_scratch_dir("0304-broker");
    topic = tl_topic_name("t0304");
    snprintf(group, sizeof(group), "g-%s", topic);
    tl_broker_start(&b, dir, extra);

    rd_kafka_conf_t *pc = tl_conf(b.bootstrap);
    tl_conf_set(pc, "linger.ms", "5");
    rd_kafka_t *prod = tl_new(RD_KAFKA_PRODUCER, pc);
    TL_ASSERT_EQ(tl_create_topic(prod, topic, NPART), NPART);
    for (int i = 0; i < NPART * PER_PART; i++)
        TL_ASSERT_EQ(rd_kafka_producev(prod, RD_KAFKA_V_TOPIC(topic),
                                       RD_KAFKA_V_PARTITION(i % NPART), RD_KAFKA_V_VALUE("v", 1),
                                       RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                     0);
    TL_ASSERT_EQ(rd_kafka_flush(prod, 30000), 0);
    rd_kafka_destroy(prod);

    rd_kafka_t *x = consumer(b.bootstrap, "X");
    consume(x, n_third, 60, "a third");
    char *xid = rd_kafka_memberid(x);
    int before = events;
    tl_log("clean restart after %d messages; X is member %s", total, xid);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    tl_broker_start(&b, b.dir, extra);
    consume(x, n_two_thirds, 60, "two thirds after the restart");
    TL_ASSERT_EQ(events, before);
    char *xid2 = rd_kafka_memberid(x);
    TL_ASSERT(!strcmp(xid, xid2), "X became %s", xid2);
    describe_has(b.bootstrap, xid);
    rd_kafka_mem_free(x, xid);
    rd_kafka_mem_free(x, xid2);

    no_commit = 1;
    consume(x, n_uncommitted, 60, "uncommitted messages");
    tl_log("X vanishes, broker killed after %d messages", total);
    rd_kafka_destroy_flags(x, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);
    tl_broker_kill9(&b);
    tl_broker_start(&b, b.dir, extra);
    no_commit = 0;
    rd_kafka_t *y = consumer(b.bootstrap, "Y");
    consume(y, n_all, 120, "everything with Y");
    for (int p = 0; p < NPART; p++)
        for (int o = 0; o < PER_PART; o++)
            dups += seen[p][o] - 1;
    tl_log("all %d messages; %d again (X left %d uncommitted); %d commits failed", total, dups,
           UNCOMMITTED, commits_failed);
    TL_ASSERT(dups >= UNCOMMITTED && dups <= UNCOMMITTED + commits_failed,
              "%d messages delivered twice", dups);
    rd_kafka_consumer_close(y);
    rd_kafka_destroy(y);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(dir);
    return tl_done();
}
