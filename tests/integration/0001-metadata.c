/* 0001-metadata: a librdkafka client sees the broker (id, host, port as
 * advertised) and a topic the broker auto-creates on a metadata request,
 * and does not create one when the client asks it not to. */
#include "testlib/testlib.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static rd_kafka_t *new_client(const char *bs, const char *auto_create)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "allow.auto.create.topics", auto_create);
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

/* The one broker, as bootstrap names it (host and port). */
static int32_t check_brokers(rd_kafka_t *rk, const char *bs)
{
    const struct rd_kafka_metadata *md;
    char hostport[300];
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, NULL, &md, 10000);
    int32_t id;

    TL_ASSERT(!err, "metadata: %s", rd_kafka_err2name(err));
    TL_ASSERT_EQ(md->broker_cnt, 1);
    snprintf(hostport, sizeof(hostport), "%s:%d", md->brokers[0].host, md->brokers[0].port);
    TL_ASSERT(strcmp(hostport, bs) == 0, "broker advertised as %s, bootstrap is %s", hostport, bs);
    TL_ASSERT_EQ(md->orig_broker_id, md->brokers[0].id);
    TL_ASSERT(md->brokers[0].id >= 0, "broker id %d", md->brokers[0].id);
    id = md->brokers[0].id;
    tl_log("broker id %d at %s", id, hostport);
    rd_kafka_metadata_destroy(md);
    return id;
}

static void check_absent(rd_kafka_t *rk, const char *topic)
{
    const struct rd_kafka_metadata *md;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, 10000);
    TL_ASSERT(!err, "metadata: %s", rd_kafka_err2name(err));
    TL_ASSERT_EQ(md->topic_cnt, 1);
    TL_ASSERT(md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
              "topic %s without auto-create: %s", topic, rd_kafka_err2name(md->topics[0].err));
    TL_ASSERT_EQ(md->topics[0].partition_cnt, 0);
    rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
}

/* The auto-created topic: partitions 0..n-1, each led by our broker, and
 * listed in an all-topics request too. */
static void check_created(rd_kafka_t *rk, const char *topic, int32_t id)
{
    const struct rd_kafka_metadata *md;
    int n = tl_wait_topic(rk, topic, 30000), found = 0;
    rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 1, NULL, &md, 10000);

    TL_ASSERT(!err, "metadata: %s", rd_kafka_err2name(err));
    for (int i = 0; i < md->topic_cnt; i++) {
        const rd_kafka_metadata_topic_t *t = &md->topics[i];
        if (strcmp(t->topic, topic) != 0)
            continue;
        found++;
        TL_ASSERT_EQ(t->err, 0);
        TL_ASSERT_EQ(t->partition_cnt, n);
        for (int p = 0; p < t->partition_cnt; p++) {
            const rd_kafka_metadata_partition_t *part = &t->partitions[p];
            TL_ASSERT(part->id >= 0 && part->id < n, "partition id %d", part->id);
            TL_ASSERT_EQ(part->err, 0);
            TL_ASSERT_EQ(part->leader, id);
            TL_ASSERT_EQ(part->replica_cnt, 1);
            TL_ASSERT_EQ(part->replicas[0], id);
            TL_ASSERT_EQ(part->isr_cnt, 1);
            TL_ASSERT_EQ(part->isrs[0], id);
        }
    }
    TL_ASSERT_EQ(found, 1);
    tl_log("auto-created %s with %d partition(s)", topic, n);
    rd_kafka_metadata_destroy(md);
}

int main(void)
{
    const char *bs;
    char *missing, *created;
    rd_kafka_t *rk_no, *rk_yes;
    int32_t id;

    tl_init("0001-metadata");
    bs = tl_bootstrap();
    missing = tl_topic_name("t0001-absent");
    created = tl_topic_name("t0001-auto");
    rk_no = new_client(bs, "false");
    rk_yes = new_client(bs, "true");

    id = check_brokers(rk_no, bs);
    check_absent(rk_no, missing);
    check_created(rk_yes, created, id);
    /* Asking without auto-create must not have created the first one. */
    check_absent(rk_no, missing);

    rd_kafka_destroy(rk_no);
    rd_kafka_destroy(rk_yes);
    free(missing);
    free(created);
    return tl_done();
}
