/* load: see load.h. */
#include "testlib/load.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib/testlib.h"

#define TL_LOAD_INFLIGHT 4000 /* produced and not yet acknowledged, at most */

struct tl_load {
    char topic[128];
    int nparts, rate;
    rd_kafka_t *rk, *cons;
    int64_t *sent, *acked, *mark; /* by partition */
    int64_t *next_seq, *next_off; /* the consumer's */
    int64_t consumed, lost, dups;
    double t0;           /* the rate's clock */
    int64_t budget_base; /* sent before t0 */
    int32_t watch_p;
    int watch_broker;    /* -1: no failover watched */
    double watch_at, failover_s;
    double last_ack, max_gap;
    pthread_t bg;
    volatile int bg_run, bg_producing;
};

static int64_t tl_load_sum(const tl_load *l, const int64_t *v)
{
    int64_t n = 0;
    for (int p = 0; p < l->nparts; p++)
        n += v[p];
    return n;
}

static void tl_load_value(int32_t p, int64_t i, char *out, size_t cap)
{
    snprintf(out, cap, "p%d-m%lld-%08x", (int)p, (long long)i,
             tl_mix32((uint32_t)(p * 1000003 + i)));
}

/* Idempotence with acks=all: message i of p is acknowledged at offset i,
 * after i - 1; anything else is a duplicate or a hole. */
static void tl_load_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    tl_load *l = opaque;
    int32_t p = m->partition;
    int64_t i = (int64_t)(intptr_t)m->_private;
    double now = tl_now();
    (void)rk;
    TL_ASSERT(m->err == RD_KAFKA_RESP_ERR_NO_ERROR, "%d/%lld: delivery: %s", (int)p,
              (long long)i, rd_kafka_err2str(m->err));
    TL_ASSERT(i == l->acked[p] && m->offset == i, "%d: message %lld acknowledged at offset "
              "%lld, %lld acknowledged before it", (int)p, (long long)i, (long long)m->offset,
              (long long)l->acked[p]);
    l->acked[p]++;
    if (now - l->last_ack > l->max_gap)
        l->max_gap = now - l->last_ack;
    l->last_ack = now;
    if (p == l->watch_p && l->watch_broker >= 0 && l->failover_s < 0 &&
        rd_kafka_message_broker_id(m) != l->watch_broker)
        l->failover_s = now - l->watch_at;
}

/* The seq of a consumed value, checked whole; -1 when it is not one of ours. */
static int64_t tl_load_seq(const rd_kafka_message_t *m)
{
    char want[64];
    long long i;
    int pp;
    if (m->len >= sizeof(want) || sscanf((const char *)m->payload, "p%d-m%lld-", &pp, &i) != 2)
        return -1;
    tl_load_value(m->partition, i, want, sizeof(want));
    if (pp != m->partition || m->len != strlen(want) || memcmp(m->payload, want, m->len))
        return -1;
    return i;
}

static void tl_load_consume(tl_load *l, const rd_kafka_message_t *m)
{
    int32_t p = m->partition;
    if (m->err) {
        TL_ASSERT(m->err != RD_KAFKA_RESP_ERR_OFFSET_OUT_OF_RANGE &&
                  m->err != RD_KAFKA_RESP_ERR__AUTO_OFFSET_RESET,
                  "consume %d: %s", (int)p, rd_kafka_message_errstr(m));
        tl_log("consume: %s (passed over)", rd_kafka_message_errstr(m));
        return;
    }
    TL_ASSERT(p >= 0 && p < l->nparts, "consumed partition %d", (int)p);
    TL_ASSERT(m->offset == l->next_off[p], "%d: consumed offset %lld, want %lld", (int)p,
              (long long)m->offset, (long long)l->next_off[p]);
    l->next_off[p]++;
    int64_t i = tl_load_seq(m);
    TL_ASSERT(i >= 0, "%d/%lld: not a value of ours: '%.*s'", (int)p, (long long)m->offset,
              (int)m->len, (const char *)m->payload);
    if (i < l->next_seq[p]) {
        l->dups++;
    } else {
        l->lost += i - l->next_seq[p];
        l->next_seq[p] = i + 1;
    }
    l->consumed++;
}

static void tl_load_produce(tl_load *l, int32_t p)
{
    char v[64];
    tl_load_value(p, l->sent[p], v, sizeof(v));
    rd_kafka_resp_err_t err = rd_kafka_producev(
        l->rk, RD_KAFKA_V_TOPIC(l->topic), RD_KAFKA_V_PARTITION(p),
        RD_KAFKA_V_VALUE(v, strlen(v)), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
        RD_KAFKA_V_OPAQUE((void *)(intptr_t)l->sent[p]), RD_KAFKA_V_END);
    TL_ASSERT(err == RD_KAFKA_RESP_ERR_NO_ERROR, "produce: %s", rd_kafka_err2str(err));
    l->sent[p]++;
}

void tl_load_pump(tl_load *l, int producing, int ms)
{
    double until = tl_now() + ms / 1000.0;
    do {
        int64_t sent = tl_load_sum(l, l->sent);
        int64_t budget = l->budget_base + (int64_t)((tl_now() - l->t0) * l->rate);
        while (producing && sent < budget &&
               sent - tl_load_sum(l, l->acked) < TL_LOAD_INFLIGHT) {
            tl_load_produce(l, (int32_t)(sent % l->nparts));
            sent++;
        }
        if (!producing) { /* no burst to catch up when producing resumes */
            l->t0 = tl_now();
            l->budget_base = sent;
        }
        rd_kafka_poll(l->rk, 0);
        rd_kafka_message_t *m = rd_kafka_consumer_poll(l->cons, 10);
        if (m) {
            tl_load_consume(l, m);
            rd_kafka_message_destroy(m);
        }
    } while (tl_now() < until);
}

static void *tl_load_bg_main(void *arg)
{
    tl_load *l = arg;
    while (l->bg_run)
        tl_load_pump(l, l->bg_producing, 50);
    return NULL;
}

void tl_load_bg_start(tl_load *l, int producing)
{
    l->bg_producing = producing;
    l->bg_run = 1;
    TL_ASSERT(pthread_create(&l->bg, NULL, tl_load_bg_main, l) == 0, "pthread_create");
}

void tl_load_bg_stop(tl_load *l)
{
    l->bg_run = 0;
    pthread_join(l->bg, NULL);
}

static rd_kafka_t *tl_load_consumer(const char *bootstrap, const char *topic, int nparts)
{
    rd_kafka_conf_t *conf = tl_conf(bootstrap);
    tl_conf_set(conf, "group.id", topic);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "auto.offset.reset", "error"); /* a truncation below what we read shows */
    tl_conf_set(conf, "reconnect.backoff.max.ms", "1000");
    rd_kafka_t *cons = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(nparts);
    for (int32_t p = 0; p < nparts; p++)
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    TL_ASSERT_EQ(rd_kafka_assign(cons, parts), 0);
    rd_kafka_topic_partition_list_destroy(parts);
    return cons;
}

tl_load *tl_load_new(const char *bootstrap, const char *topic, int nparts, int rate)
{
    tl_load *l = calloc(1, sizeof(*l));
    TL_ASSERT(l != NULL, "out of memory");
    snprintf(l->topic, sizeof(l->topic), "%s", topic);
    l->nparts = nparts;
    l->rate = rate;
    l->sent = calloc((size_t)nparts * 5, sizeof(int64_t));
    TL_ASSERT(l->sent != NULL, "out of memory");
    l->acked = l->sent + nparts;
    l->mark = l->acked + nparts;
    l->next_seq = l->mark + nparts;
    l->next_off = l->next_seq + nparts;
    l->watch_broker = -1;
    l->t0 = l->last_ack = tl_now();
    rd_kafka_conf_t *conf = tl_conf(bootstrap);
    tl_conf_set(conf, "acks", "all");
    tl_conf_set(conf, "enable.idempotence", "true");
    tl_conf_set(conf, "linger.ms", "5");
    tl_conf_set(conf, "message.timeout.ms", "300000");
    /* a restarted broker reached again within a second, not after the
     * client's backoff of up to 10 s: the failovers timed are the
     * brokers' */
    tl_conf_set(conf, "reconnect.backoff.max.ms", "1000");
    rd_kafka_conf_set_dr_msg_cb(conf, tl_load_dr);
    rd_kafka_conf_set_opaque(conf, l);
    l->rk = tl_new(RD_KAFKA_PRODUCER, conf);
    l->cons = tl_load_consumer(bootstrap, topic, nparts);
    return l;
}

void tl_load_free(tl_load *l)
{
    if (!l)
        return;
    rd_kafka_destroy(l->cons);
    rd_kafka_destroy(l->rk);
    free(l->sent);
    free(l);
}

int64_t tl_load_acked(const tl_load *l, int32_t p)
{
    return p < 0 ? tl_load_sum(l, l->acked) : l->acked[p];
}

void tl_load_mark(tl_load *l)
{
    memcpy(l->mark, l->acked, (size_t)l->nparts * sizeof(int64_t));
}

int tl_load_moved(const tl_load *l, int64_t n)
{
    for (int p = 0; p < l->nparts; p++)
        if (l->acked[p] < l->mark[p] + n)
            return 0;
    return 1;
}

void tl_load_watch(tl_load *l, int32_t p, int broker)
{
    l->watch_p = p;
    l->watch_broker = broker;
    l->watch_at = tl_now();
    l->failover_s = -1;
}

double tl_load_failover(const tl_load *l)
{
    return l->failover_s;
}

double tl_load_max_gap(tl_load *l)
{
    double now = tl_now(), gap = l->max_gap;
    if (tl_load_sum(l, l->sent) > tl_load_sum(l, l->acked) && now - l->last_ack > gap)
        gap = now - l->last_ack;
    l->max_gap = 0;
    return gap;
}

void tl_load_drain(tl_load *l, double timeout_s)
{
    double until = tl_now() + timeout_s;
    while (rd_kafka_outq_len(l->rk) > 0) {
        TL_ASSERT(tl_now() < until, "%d messages not acknowledged", rd_kafka_outq_len(l->rk));
        tl_load_pump(l, 0, 100);
    }
    int64_t sent = tl_load_sum(l, l->sent), acked = tl_load_sum(l, l->acked);
    TL_ASSERT(acked == sent, "%lld sent, %lld acknowledged", (long long)sent, (long long)acked);
    while (l->consumed < acked && tl_now() < until)
        tl_load_pump(l, 0, 100);
    for (int p = 0; p < l->nparts; p++)
        if (l->next_seq[p] < l->acked[p])
            l->lost += l->acked[p] - l->next_seq[p];
    tl_log("acknowledged %lld, consumed %lld, lost %lld, duplicated %lld", (long long)acked,
           (long long)l->consumed, (long long)l->lost, (long long)l->dups);
    TL_ASSERT(l->lost == 0 && l->dups == 0, "lost %lld, duplicated %lld", (long long)l->lost,
              (long long)l->dups);
    TL_ASSERT_EQ(l->consumed, acked);
}
