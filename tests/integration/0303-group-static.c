/* 0303-group-static: static membership (group.instance.id, KIP-345).
 *  - Consumers A (instance "a") and B ("b") share 6 partitions.
 *  - A is closed (a static member does not leave) and a new A starts with
 *    the same instance id within the session timeout: it gets A's old
 *    partitions back, and B sees no rebalance at all.
 *  - A third process claims instance "a" while A runs: the newcomer takes
 *    the place and the old A is fenced (FENCED_INSTANCE_ID, fatal), again
 *    without a rebalance for B.
 *  - When the instance stays away beyond the session timeout, its member
 *    is removed and B gets every partition.
 * DescribeGroups shows the instance ids. */
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPART 6

typedef struct cons_s {
    rd_kafka_t *rk;
    char name[8];
    int owns[NPART];
    int nowned;
    int events;
    int fenced;
} cons_t;

static const char *topic;
static char group[256];

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    cons_t *c = opaque;
    c->events++;
    memset(c->owns, 0, sizeof(c->owns));
    c->nowned = 0;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        for (int i = 0; i < parts->cnt; i++)
            c->owns[parts->elems[i].partition] = 1;
        c->nowned = parts->cnt;
        rd_kafka_assign(rk, parts);
    } else {
        rd_kafka_assign(rk, NULL);
    }
    tl_log("%s: %s %d partition(s)", c->name,
           err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS ? "assigned" : "revoked", parts->cnt);
}

static void error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    cons_t *c = opaque;
    if (err == RD_KAFKA_RESP_ERR__FATAL) {
        char buf[256];
        if (rd_kafka_fatal_error(rk, buf, sizeof(buf)) == RD_KAFKA_RESP_ERR_FENCED_INSTANCE_ID)
            c->fenced = 1;
        tl_log("%s: fatal: %s", c->name, buf);
    }
}

static void start(cons_t *c, const char *name, const char *instance, const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);

    memset(c, 0, sizeof(*c));
    snprintf(c->name, sizeof(c->name), "%s", name);
    tl_conf_set(conf, "client.id", name);
    tl_conf_set(conf, "group.id", group);
    tl_conf_set(conf, "group.instance.id", instance);
    tl_conf_set(conf, "session.timeout.ms", "10000");
    tl_conf_set(conf, "heartbeat.interval.ms", "500");
    tl_conf_set(conf, "auto.offset.reset", "earliest");
    rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    rd_kafka_conf_set_error_cb(conf, error_cb);
    rd_kafka_conf_set_opaque(conf, c);
    c->rk = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_poll_set_consumer(c->rk);
    rd_kafka_topic_partition_list_add(sub, topic, RD_KAFKA_PARTITION_UA);
    TL_ASSERT_EQ(rd_kafka_subscribe(c->rk, sub), 0);
    rd_kafka_topic_partition_list_destroy(sub);
}

static void poll_for(cons_t **cs, int n, double secs)
{
    for (double end = tl_now() + secs; tl_now() < end;) {
        for (int i = 0; i < n; i++) {
            rd_kafka_message_t *m = cs[i]->fenced ? NULL : rd_kafka_consumer_poll(cs[i]->rk, 0);
            if (m && m->err == RD_KAFKA_RESP_ERR__FATAL)
                error_cb(cs[i]->rk, m->err, rd_kafka_message_errstr(m), cs[i]);
            else if (m && m->err)
                tl_log("%s: %s", cs[i]->name, rd_kafka_message_errstr(m));
            if (m)
                rd_kafka_message_destroy(m);
        }
        usleep(2000);
    }
}

static void poll_until_owned(cons_t **cs, int n, int want, double secs, const char *what)
{
    double deadline = tl_now() + secs;
    for (;;) {
        int owned = 0;
        for (int i = 0; i < n; i++)
            owned += cs[i]->nowned;
        if (owned == want)
            return;
        TL_ASSERT(tl_now() < deadline, "%s: %d partitions owned after %.0f s", what, owned, secs);
        poll_for(cs, n, 0.01);
    }
}

static void check_instances(const char *bs, int members)
{
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    const char *groups[1] = {group};
    rd_kafka_DescribeConsumerGroups(rk, groups, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 15000);
    TL_ASSERT(ev && !rd_kafka_event_error(ev), "DescribeConsumerGroups failed");
    size_t cnt;
    const rd_kafka_ConsumerGroupDescription_t **d = rd_kafka_DescribeConsumerGroups_result_groups(
        rd_kafka_event_DescribeConsumerGroups_result(ev), &cnt);
    TL_ASSERT_EQ(cnt, 1);
    TL_ASSERT_EQ(rd_kafka_ConsumerGroupDescription_member_count(d[0]), members);
    for (int i = 0; i < members; i++) {
        const rd_kafka_MemberDescription_t *m = rd_kafka_ConsumerGroupDescription_member(d[0], i);
        const char *inst = rd_kafka_MemberDescription_group_instance_id(m);
        const char *id = rd_kafka_MemberDescription_consumer_id(m);
        TL_ASSERT(inst && (!strcmp(inst, "a") || !strcmp(inst, "b")), "instance %s",
                  inst ? inst : "(null)");
        /* Kafka names static members after their instance. */
        TL_ASSERT(!strncmp(id, inst, 1) && id[1] == '-', "member id %s of instance %s", id, inst);
    }
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_destroy(rk);
}

int main(void)
{
    const char *bs;
    cons_t a, a2, a3, b;
    int a_owned[NPART];

    tl_init("0303-group-static");
    bs = tl_bootstrap();
    topic = tl_topic_name("t0303");
    snprintf(group, sizeof(group), "g-%s", topic);
    rd_kafka_t *prod = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    TL_ASSERT_EQ(tl_create_topic(prod, topic, NPART), NPART);
    rd_kafka_destroy(prod);

    start(&a, "A", "a", bs);
    start(&b, "B", "b", bs);
    cons_t *ab[2] = {&a, &b};
    poll_until_owned(ab, 2, NPART, 60, "A and B");
    poll_for(ab, 2, 1.0);
    TL_ASSERT(a.nowned == 3 && b.nowned == 3, "A %d, B %d", a.nowned, b.nowned);
    memcpy(a_owned, a.owns, sizeof(a_owned));
    check_instances(bs, 2);
    int b_events = b.events;

    tl_log("restarting A");
    rd_kafka_consumer_close(a.rk);
    rd_kafka_destroy(a.rk);
    cons_t *a2b[2] = {&a2, &b};
    start(&a2, "A2", "a", bs);
    poll_until_owned(a2b, 2, NPART, 30, "restarted A");
    poll_for(a2b, 2, 2.0);
    TL_ASSERT(!memcmp(a2.owns, a_owned, sizeof(a_owned)), "A came back with other partitions");
    TL_ASSERT_EQ(b.events, b_events);
    check_instances(bs, 2);

    tl_log("a second process claims instance a");
    cons_t *all[3] = {&a2, &b, &a3};
    start(&a3, "A3", "a", bs);
    double deadline = tl_now() + 30;
    while (!a2.fenced || a3.nowned != 3) {
        TL_ASSERT(tl_now() < deadline, "A2 fenced %d, A3 owns %d", a2.fenced, a3.nowned);
        poll_for(all, 3, 0.01);
    }
    TL_ASSERT(!memcmp(a3.owns, a_owned, sizeof(a_owned)), "A3 got other partitions");
    TL_ASSERT_EQ(b.events, b_events);
    rd_kafka_destroy_flags(a2.rk, RD_KAFKA_DESTROY_F_NO_CONSUMER_CLOSE);

    tl_log("instance a goes away for good");
    rd_kafka_consumer_close(a3.rk);
    rd_kafka_destroy(a3.rk);
    double t0 = tl_now();
    cons_t *bonly[1] = {&b};
    while (b.nowned != NPART) {
        TL_ASSERT(tl_now() - t0 < 40, "B did not get A's partitions");
        poll_for(bonly, 1, 0.01);
    }
    tl_log("B got everything %.1f s after A left", tl_now() - t0);
    TL_ASSERT(tl_now() - t0 > 8, "a static member was removed before its session timeout");
    rd_kafka_consumer_close(b.rk);
    rd_kafka_destroy(b.rk);
    return tl_done();
}
