/* 0302-group-cooperative: incremental (cooperative-sticky) rebalancing.
 * Consumers A and B share a 6-partition topic that a producer keeps
 * writing to; then C joins. The broker only relays the protocol, but its
 * state machine must let the members rejoin with what they own and run
 * the second rebalance the assignor asks for. Checked:
 *  - A and B lose exactly the partitions C gets (one each), nothing else;
 *  - the partitions they keep are never revoked and keep being consumed
 *    while the group rebalances (no gap over 1.5 s in their deliveries);
 *  - every partition has one owner at a time. */
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPART 6
#define NCONS 3

typedef struct cons_s {
    rd_kafka_t *rk;
    char name[4];
    int idx;
    int owns[NPART];
    int revoked[NPART]; /* times revoked */
    int nowned;
} cons_t;

static cons_t cons[NCONS];
static int ncons;
static const char *topic;
static int owner[NPART];
/* Deliveries per partition while watching: last time and largest gap. */
static double last_at[NPART], max_gap[NPART];
static int delivered_in_window[NPART];
static int watching;

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    cons_t *c = opaque;
    TL_ASSERT(!strcmp(rd_kafka_rebalance_protocol(rk), "COOPERATIVE"), "protocol %s",
              rd_kafka_rebalance_protocol(rk));
    for (int i = 0; i < parts->cnt; i++) {
        int p = parts->elems[i].partition;
        if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
            TL_ASSERT(owner[p] < 0, "partition %d assigned to %s while %s owns it", p, c->name,
                      cons[owner[p]].name);
            owner[p] = c->idx;
            c->owns[p] = 1;
            c->nowned++;
            last_at[p] = tl_now();
        } else {
            TL_ASSERT(owner[p] == c->idx, "%s revoked %d it does not own", c->name, p);
            owner[p] = -1;
            c->owns[p] = 0;
            c->revoked[p]++;
            c->nowned--;
        }
    }
    tl_log("%s: %s %d partition(s), now %d", c->name,
           err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS ? "assigned" : "revoked", parts->cnt,
           c->nowned);
    rd_kafka_error_t *e = err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS
                              ? rd_kafka_incremental_assign(rk, parts)
                              : rd_kafka_incremental_unassign(rk, parts);
    TL_ASSERT(!e, "incremental (un)assign: %s", e ? rd_kafka_error_string(e) : "");
}

static void start(int idx, const char *bs, const char *group)
{
    cons_t *c = &cons[idx];
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_topic_partition_list_t *sub = rd_kafka_topic_partition_list_new(1);

    snprintf(c->name, sizeof(c->name), "%c", 'A' + idx);
    c->idx = idx;
    tl_conf_set(conf, "client.id", c->name);
    tl_conf_set(conf, "group.id", group);
    tl_conf_set(conf, "partition.assignment.strategy", "cooperative-sticky");
    tl_conf_set(conf, "auto.offset.reset", "latest");
    tl_conf_set(conf, "session.timeout.ms", "10000");
    tl_conf_set(conf, "heartbeat.interval.ms", "2000");
    tl_conf_set(conf, "fetch.wait.max.ms", "20");
    rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    rd_kafka_conf_set_opaque(conf, c);
    c->rk = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_poll_set_consumer(c->rk);
    rd_kafka_topic_partition_list_add(sub, topic, RD_KAFKA_PARTITION_UA);
    TL_ASSERT_EQ(rd_kafka_subscribe(c->rk, sub), 0);
    rd_kafka_topic_partition_list_destroy(sub);
    ncons = idx + 1;
}

static void produce_tick(rd_kafka_t *prod)
{
    static double next;
    if (tl_now() < next)
        return;
    next = tl_now() + 0.01;
    for (int p = 0; p < NPART; p++)
        TL_ASSERT_EQ(rd_kafka_producev(prod, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(p),
                                       RD_KAFKA_V_VALUE("m", 1),
                                       RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                     0);
    rd_kafka_poll(prod, 0);
}

static void poll_all(rd_kafka_t *prod)
{
    produce_tick(prod);
    for (int i = 0; i < ncons; i++) {
        rd_kafka_message_t *m;
        for (int k = 0; k < 100 && (m = rd_kafka_consumer_poll(cons[i].rk, 0)); k++) {
            if (m->err) {
                TL_ASSERT(m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF, "%s: %s", cons[i].name,
                          rd_kafka_message_errstr(m));
            } else {
                int p = m->partition;
                double now = tl_now();
                TL_ASSERT(owner[p] == i, "%s got a message of partition %d owned by %d",
                          cons[i].name, p, owner[p]);
                if (watching && now - last_at[p] > max_gap[p])
                    max_gap[p] = now - last_at[p];
                if (watching)
                    delivered_in_window[p]++;
                last_at[p] = now;
            }
            rd_kafka_message_destroy(m);
        }
    }
    usleep(1000);
}

/* Every partition owned, each consumer with n_each..n_each+1, unchanged
 * for a second. */
static void wait_stable(rd_kafka_t *prod, int n, const char *what)
{
    double deadline = tl_now() + 60, since = 0;
    while (tl_now() < deadline) {
        int ok = 1, owned = 0;
        poll_all(prod);
        for (int p = 0; p < NPART; p++)
            owned += owner[p] >= 0;
        for (int i = 0; i < n; i++)
            ok &= cons[i].nowned == NPART / n;
        if (!ok || owned != NPART)
            since = 0;
        else if (!since)
            since = tl_now();
        else if (tl_now() - since > 1.0)
            return;
    }
    tl_fail("not stable after 60 s: %s", what);
}

int main(void)
{
    const char *bs;
    char group[256];
    int kept[NPART];

    tl_init("0302-group-cooperative");
    bs = tl_bootstrap();
    topic = tl_topic_name("t0302");
    snprintf(group, sizeof(group), "g-%s", topic);
    for (int p = 0; p < NPART; p++)
        owner[p] = -1;
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "linger.ms", "1");
    rd_kafka_t *prod = tl_new(RD_KAFKA_PRODUCER, conf);
    TL_ASSERT_EQ(tl_create_topic(prod, topic, NPART), NPART);

    start(0, bs, group);
    start(1, bs, group);
    wait_stable(prod, 2, "A and B");
    for (int p = 0; p < NPART; p++) {
        kept[p] = owner[p];
        max_gap[p] = 0;
    }
    for (int i = 0; i < 2; i++)
        memset(cons[i].revoked, 0, sizeof(cons[i].revoked));

    tl_log("C joins");
    double t0 = tl_now();
    watching = 1;
    start(2, bs, group);
    while (!cons[2].nowned) {
        TL_ASSERT(tl_now() - t0 < 60, "C got nothing in 60 s");
        poll_all(prod);
    }
    double t1 = tl_now();
    wait_stable(prod, 3, "A, B and C");
    watching = 0;
    tl_log("C got its first partitions %.1f s after joining", t1 - t0);

    int moved = 0;
    for (int p = 0; p < NPART; p++) {
        cons_t *was = &cons[kept[p]];
        if (owner[p] == 2) {
            moved++;
            TL_ASSERT_EQ(was->revoked[p], 1);
            continue;
        }
        TL_ASSERT(owner[p] == kept[p], "partition %d moved from %s to %s", p, was->name,
                  cons[owner[p]].name);
        TL_ASSERT(!was->revoked[p], "%s lost partition %d it kept", was->name, p);
        tl_log("partition %d stayed with %s: %d messages during the rebalance, largest gap "
               "%.2f s", p, was->name, delivered_in_window[p], max_gap[p]);
        TL_ASSERT(delivered_in_window[p] > 0, "partition %d starved", p);
        TL_ASSERT(max_gap[p] < 1.5, "partition %d stalled %.2f s", p, max_gap[p]);
    }
    TL_ASSERT_EQ(moved, 2);
    TL_ASSERT_EQ(cons[0].nowned, 2);
    TL_ASSERT_EQ(cons[1].nowned, 2);

    for (int i = 0; i < NCONS; i++) {
        rd_kafka_consumer_close(cons[i].rk);
        rd_kafka_destroy(cons[i].rk);
    }
    rd_kafka_flush(prod, 10000);
    rd_kafka_destroy(prod);
    return tl_done();
}
