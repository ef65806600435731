/* 0300-group-balance: 1, 3 and 8 consumers of one group (librdkafka's
 * default eager "range" assignor) on a 6-partition topic. Once the group
 * is stable every partition has exactly one owner and the partitions are
 * spread evenly; then 3000 messages are produced and every one of them is
 * consumed exactly once, by the consumer that owns its partition (no
 * duplicate within the stable generation, nothing lost). DescribeGroups
 * (through the admin API) shows the group Stable with every member. */
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPART 6
#define NMSG 3000
#define MAXC 8

typedef struct cons_s {
    rd_kafka_t *rk;
    int idx;
    int last_event; /* 1 assign, 2 revoke */
    int nparts;
} cons_t;

static cons_t cons[MAXC];
static int owner[NPART];
static int seen[NMSG];

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    cons_t *c = opaque;
    for (int i = 0; i < parts->cnt; i++) {
        int p = parts->elems[i].partition;
        TL_ASSERT(p >= 0 && p < NPART, "partition %d", p);
        if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
            TL_ASSERT(owner[p] < 0, "partition %d assigned to consumer %d while consumer %d owns it",
                      p, c->idx, owner[p]);
            owner[p] = c->idx;
        } else {
            TL_ASSERT(owner[p] == c->idx, "consumer %d revoked partition %d it does not own",
                      c->idx, p);
            owner[p] = -1;
        }
    }
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        c->last_event = 1;
        c->nparts = parts->cnt;
        rd_kafka_assign(rk, parts);
    } else {
        c->last_event = 2;
        c->nparts = 0;
        rd_kafka_assign(rk, NULL);
    }
}

static void start_consumer(cons_t *c, int idx, const char *bs, const char *group,
                           const char *topic)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);
    char id[32];

    snprintf(id, sizeof(id), "c%d", idx);
    tl_conf_set(conf, "client.id", id);
    tl_conf_set(conf, "group.id", group);
    tl_conf_set(conf, "auto.offset.reset", "earliest");
    tl_conf_set(conf, "session.timeout.ms", "10000");
    tl_conf_set(conf, "fetch.wait.max.ms", "50");
    c->idx = idx;
    c->last_event = 0;
    rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    rd_kafka_conf_set_opaque(conf, c);
    c->rk = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_poll_set_consumer(c->rk);
    rd_kafka_topic_partition_list_add(sub, topic, RD_KAFKA_PARTITION_UA);
    TL_ASSERT_EQ(rd_kafka_subscribe(c->rk, sub), 0);
    rd_kafka_topic_partition_list_destroy(sub);
}

/* Polls every consumer once; handles messages. Returns messages seen. */
static int poll_all(int n)
{
    int got = 0;
    for (int i = 0; i < n; i++) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(cons[i].rk, 0);
        if (!m)
            continue;
        if (m->err) {
            TL_ASSERT(m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF, "consumer %d: %s", i,
                      rd_kafka_message_errstr(m));
        } else {
            int seq = atoi((const char *)m->payload);
            TL_ASSERT(seq >= 0 && seq < NMSG, "bad message");
            TL_ASSERT_EQ(m->partition, seq % NPART);
            TL_ASSERT(owner[m->partition] == i, "message %d of partition %d went to consumer %d, "
                      "owner is %d", seq, (int)m->partition, i, owner[m->partition]);
            TL_ASSERT(!seen[seq], "message %d delivered twice", seq);
            seen[seq]++;
            got++;
        }
        rd_kafka_message_destroy(m);
    }
    return got;
}

static int stable(int n)
{
    int owned = 0;
    for (int i = 0; i < n; i++)
        if (cons[i].last_event != 1)
            return 0;
    for (int p = 0; p < NPART; p++)
        owned += owner[p] >= 0;
    return owned == NPART;
}

/* Waits until every consumer holds its assignment and nothing has moved
 * for a second. */
static void wait_stable(int n)
{
    double deadline = tl_now() + 60, since = 0;
    while (tl_now() < deadline) {
        poll_all(n);
        if (!stable(n)) {
            since = 0;
        } else if (!since) {
            since = tl_now();
        } else if (tl_now() - since > 1.0) {
            return;
        }
        usleep(2000);
    }
    tl_fail("group of %d consumers not stable after 60 s", n);
}

static void check_described(const char *bs, const char *group, int n)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    const char *groups[1] = {group};

    rd_kafka_DescribeConsumerGroups(rk, groups, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 15000);
    TL_ASSERT(ev, "no DescribeConsumerGroups result");
    TL_ASSERT(!rd_kafka_event_error(ev), "describe: %s", rd_kafka_event_error_string(ev));
    const rd_kafka_DescribeConsumerGroups_result_t *res =
        rd_kafka_event_DescribeConsumerGroups_result(ev);
    size_t cnt;
    const rd_kafka_ConsumerGroupDescription_t **d =
        rd_kafka_DescribeConsumerGroups_result_groups(res, &cnt);
    TL_ASSERT_EQ(cnt, 1);
    TL_ASSERT(!rd_kafka_ConsumerGroupDescription_error(d[0]), "group error");
    TL_ASSERT_EQ(rd_kafka_ConsumerGroupDescription_state(d[0]), RD_KAFKA_CONSUMER_GROUP_STATE_STABLE);
    TL_ASSERT_EQ(rd_kafka_ConsumerGroupDescription_member_count(d[0]), n);
    TL_ASSERT(!strcmp(rd_kafka_ConsumerGroupDescription_partition_assignor(d[0]), "range"),
              "assignor %s", rd_kafka_ConsumerGroupDescription_partition_assignor(d[0]));
    int total = 0;
    for (int i = 0; i < n; i++) {
        const rd_kafka_MemberDescription_t *m = rd_kafka_ConsumerGroupDescription_member(d[0], i);
        const rd_kafka_MemberAssignment_t *a = rd_kafka_MemberDescription_assignment(m);
        total += rd_kafka_MemberAssignment_partitions(a)->cnt;
        TL_ASSERT(!strncmp(rd_kafka_MemberDescription_host(m), "/127.0.0.1", 10), "host %s",
                  rd_kafka_MemberDescription_host(m));
    }
    TL_ASSERT_EQ(total, NPART);
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
}

static void round_of(const char *bs, int n)
{
    char *topic = tl_topic_name("t0300"), group[256];
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_t *prod;
    double t0 = tl_now();
    int got = 0;

    snprintf(group, sizeof(group), "g-%s", topic);
    tl_conf_set(conf, "linger.ms", "5");
    prod = tl_new(RD_KAFKA_PRODUCER, conf);
    TL_ASSERT_EQ(tl_create_topic(prod, topic, NPART), NPART);
    memset(seen, 0, sizeof(seen));
    for (int p = 0; p < NPART; p++)
        owner[p] = -1;
    for (int i = 0; i < n; i++)
        start_consumer(&cons[i], i, bs, group, topic);
    wait_stable(n);
    int min = NPART, max = 0;
    for (int i = 0; i < n; i++) {
        min = cons[i].nparts < min ? cons[i].nparts : min;
        max = cons[i].nparts > max ? cons[i].nparts : max;
    }
    tl_log("%d consumers stable after %.1f s, %d..%d partitions each", n, tl_now() - t0, min, max);
    TL_ASSERT(max - min <= 1, "unbalanced: %d..%d partitions per consumer", min, max);
    check_described(bs, group, n);

    for (int i = 0; i < NMSG; i++) {
        char v[16];
        int len = snprintf(v, sizeof(v), "%d", i);
        TL_ASSERT_EQ(rd_kafka_producev(prod, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(i % NPART),
                                       RD_KAFKA_V_VALUE(v, (size_t)len),
                                       RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                     0);
    }
    TL_ASSERT_EQ(rd_kafka_flush(prod, 30000), 0);
    double deadline = tl_now() + 60;
    while (got < NMSG) {
        TL_ASSERT(tl_now() < deadline, "consumed %d of %d messages in 60 s", got, NMSG);
        int k = poll_all(n);
        got += k;
        if (!k)
            usleep(1000);
    }
    /* Nothing more arrives, and the group stayed put. */
    for (double end = tl_now() + 0.5; tl_now() < end;)
        TL_ASSERT_EQ(poll_all(n), 0);
    TL_ASSERT(stable(n), "the group rebalanced while consuming");
    for (int i = 0; i < n; i++) {
        rd_kafka_consumer_close(cons[i].rk);
        rd_kafka_destroy(cons[i].rk);
    }
    rd_kafka_destroy(prod);
    tl_log("%d consumers: %d messages, each once, in %.1f s", n, NMSG, tl_now() - t0);
    free(topic);
}

int main(void)
{
    const char *bs;
    tl_init("0300-group-balance");
    bs = tl_bootstrap();
    round_of(bs, 1);
    round_of(bs, 3);
    round_of(bs, 8);
    return tl_done();
}
