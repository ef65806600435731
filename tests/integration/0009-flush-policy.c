/* 0009-flush-policy: with log.flush.interval.messages=1 every acknowledged
 * write has been fsynced before its answer (Kafka flushes in the append
 * path). Several producers write at once, so the flushes are grouped; the
 * proof that they happened is the recovery point, which only a flush
 * moves: the recovery-point-offset-checkpoint written 100 ms later must
 * name the full log end of every partition. Strand only (own broker). */
#include "testlib/testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPROD 4
#define NMSG 500
#define NPART 4

static int acked;

static void on_dr(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    (void)rk;
    (void)opaque;
    TL_ASSERT(!m->err, "delivery failed: %s", rd_kafka_err2str(m->err));
    acked++;
}

/* Sums the offsets of topic's lines in the checkpoint file. */
static long long checkpoint_sum(const char *path, const char *topic)
{
    FILE *fp = fopen(path, "r");
    char name[300];
    int part;
    long long off, sum = 0;
    if (!fp)
        return -1;
    if (fscanf(fp, "%*d %*d") != 0) {
        fclose(fp);
        return -1;
    }
    while (fscanf(fp, "%299s %d %lld", name, &part, &off) == 3)
        if (!strcmp(name, topic))
            sum += off;
    fclose(fp);
    return sum;
}

int main(void)
{
    tl_init("0009-flush-policy");
    if (tl_is_kafka())
        tl_skip("reads strand's checkpoint files directly");
    static const char *extra[] = {"log.flush.interval.messages=1",
                                  "log.flush.offset.checkpoint.interval.ms=100", NULL};
    tl_broker b = {0};
    char *dir = tl_scratch_dir("0009");
    char *topic = tl_topic_name("t0009");
    rd_kafka_t *rk[NPROD];
    char path[700];

    tl_broker_start(&b, dir, extra);
    for (int i = 0; i < NPROD; i++) {
        rd_kafka_conf_t *conf = tl_conf(b.bootstrap);
        tl_conf_set(conf, "acks", "all");
        tl_conf_set(conf, "linger.ms", "0");
        rd_kafka_conf_set_dr_msg_cb(conf, on_dr);
        rk[i] = tl_new(RD_KAFKA_PRODUCER, conf);
    }
    TL_ASSERT(tl_create_topic(rk[0], topic, NPART) >= NPART, "partitions");
    for (int n = 0; n < NMSG; n++)
        for (int i = 0; i < NPROD; i++) {
            char v[32];
            snprintf(v, sizeof(v), "p%d-%d", i, n);
            rd_kafka_resp_err_t err = rd_kafka_producev(
                rk[i], RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(n % NPART),
                RD_KAFKA_V_VALUE(v, strlen(v)), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                RD_KAFKA_V_END);
            TL_ASSERT(!err, "produce: %s", rd_kafka_err2str(err));
            rd_kafka_poll(rk[i], 0);
        }
    for (int i = 0; i < NPROD; i++) {
        TL_ASSERT(rd_kafka_flush(rk[i], 30000) == 0, "flush timed out");
        rd_kafka_destroy(rk[i]);
    }
    TL_ASSERT_EQ(acked, NPROD * NMSG);

    /* No roll happened (1 GiB segments), so only flushes moved it. */
    snprintf(path, sizeof(path), "%s/data/recovery-point-offset-checkpoint", dir);
    long long sum = -1;
    for (int i = 0; i < 50 && sum != NPROD * NMSG; i++) {
        usleep(100000);
        sum = checkpoint_sum(path, topic);
    }
    TL_ASSERT(sum == NPROD * NMSG, "recovery points add up to %lld, want %d", sum, NPROD * NMSG);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(dir);
    free(topic);
    return tl_done();
}
