/* librdkafka plumbing shared by the workloads: configs, topics, offsets. */
#include "bench/bench.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static void bench_error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    (void)opaque;
    bench_log("librdkafka %s: %s: %s", rd_kafka_name(rk),
              rd_kafka_err2name((rd_kafka_resp_err_t)err), reason);
}

rd_kafka_conf_t *bench_conf(const char *bootstrap)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    rd_kafka_conf_set_error_cb(conf, bench_error_cb);
    bench_conf_set(conf, "bootstrap.servers", bootstrap);
    bench_conf_set(conf, "client.id", "strand-bench");
    /* ApiVersions and Metadata at once, not after a 1 s backoff */
    bench_conf_set(conf, "reconnect.backoff.ms", "10");
    /* BENCH_RDKAFKA_DEBUG=metadata,broker...: librdkafka's own log on
     * stderr, to see where a figure's time goes */
    if (getenv("BENCH_RDKAFKA_DEBUG"))
        bench_conf_set(conf, "debug", getenv("BENCH_RDKAFKA_DEBUG"));
    return conf;
}

void bench_conf_set(rd_kafka_conf_t *conf, const char *key, const char *val)
{
    char err[256];
    if (rd_kafka_conf_set(conf, key, val, err, sizeof(err)) != RD_KAFKA_CONF_OK)
        bench_die("config %s=%s: %s", key, val, err);
}

rd_kafka_t *bench_new(rd_kafka_type_t type, rd_kafka_conf_t *conf)
{
    char err[512];
    rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof(err));
    if (!rk)
        bench_die("rd_kafka_new: %s", err);
    return rk;
}

static void bench_create_topic(rd_kafka_t *rk, const char *topic, int partitions, int rf)
{
    char err[256];
    size_t cnt = 0;
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, partitions, rf, err, sizeof(err));
    if (!nt)
        bench_die("NewTopic %s: %s", topic, err);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
    if (!ev)
        bench_die("CreateTopics %s: no answer in 30 s", topic);
    if (rd_kafka_event_error(ev))
        bench_die("CreateTopics %s: %s", topic, rd_kafka_event_error_string(ev));
    const rd_kafka_topic_result_t **res =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
    rd_kafka_resp_err_t terr = cnt == 1 ? rd_kafka_topic_result_error(res[0]) : RD_KAFKA_RESP_ERR__FAIL;
    if (terr && terr != RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS)
        bench_die("CreateTopics %s: %s", topic, rd_kafka_err2name(terr));
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
}

/* Number of partitions with a leader, or 0 while the topic is unknown. */
static int bench_topic_ready(rd_kafka_t *rk, rd_kafka_topic_t *rkt)
{
    const struct rd_kafka_metadata *md = NULL;
    int n = 0;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 5000) != RD_KAFKA_RESP_ERR_NO_ERROR)
        return 0;
    if (md->topic_cnt == 1 && !md->topics[0].err) {
        n = md->topics[0].partition_cnt;
        for (int i = 0; i < md->topics[0].partition_cnt; i++)
            if (md->topics[0].partitions[i].leader < 0)
                n = 0;
    }
    rd_kafka_metadata_destroy(md);
    return n;
}

int bench_topic_ensure(rd_kafka_t *rk, const bench_opts_t *o)
{
    if (!o->auto_create)
        bench_create_topic(rk, o->topic, o->partitions, o->replication);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, o->topic, NULL);
    double until = bench_now() + 30;
    int n;
    /* a Metadata request for the topic is also what auto-creates it */
    while (!(n = bench_topic_ready(rk, rkt))) {
        if (bench_now() > until)
            bench_die("topic %s has no leaders after 30 s", o->topic);
        usleep(20000);
    }
    rd_kafka_topic_destroy(rkt);
    return n;
}

int32_t bench_leader_addr(rd_kafka_t *rk, const char *topic, int part, char *addr, size_t len)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    int32_t leader = -1;
    if (rd_kafka_metadata(rk, 0, rkt, &md, 5000) == RD_KAFKA_RESP_ERR_NO_ERROR) {
        if (md->topic_cnt == 1 && part < md->topics[0].partition_cnt)
            leader = md->topics[0].partitions[part].leader;
        for (int i = 0; leader >= 0 && i < md->broker_cnt; i++)
            if (md->brokers[i].id == leader)
                snprintf(addr, len, "%s:%d", md->brokers[i].host, md->brokers[i].port);
        rd_kafka_metadata_destroy(md);
    }
    rd_kafka_topic_destroy(rkt);
    return leader;
}

void bench_watermarks(rd_kafka_t *rk, const char *topic, int part, int64_t *lo, int64_t *hi)
{
    rd_kafka_resp_err_t err = rd_kafka_query_watermark_offsets(rk, topic, part, lo, hi, 10000);
    if (err)
        bench_die("watermarks of %s-%d: %s", topic, part, rd_kafka_err2name(err));
}

/* Whether the data directory still has one of topic's partition
 * directories: "<topic>-<p>" (Kafka renames it "<topic>-<p>.<id>-delete"
 * first). */
static int bench_topic_on_disk(const char *data, const char *topic)
{
    DIR *d = opendir(data);
    struct dirent *e;
    size_t tlen = strlen(topic);
    int found = 0;
    if (!d)
        return 0;
    while (!found && (e = readdir(d)))
        found = !strncmp(e->d_name, topic, tlen) && e->d_name[tlen] == '-';
    closedir(d);
    return found;
}

/* Deletes o->topic after a produce window, so that the next one has the
 * disk space; with --data (the broker's data directory), returns once its
 * files are gone (20 s at most), so their memory is free again. */
int bench_cmd_delete(const bench_opts_t *o)
{
    rd_kafka_t *rk = bench_new(RD_KAFKA_PRODUCER, bench_conf(o->bootstrap));
    rd_kafka_DeleteTopic_t *dt = rd_kafka_DeleteTopic_new(o->topic);
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    size_t cnt = 0;
    rd_kafka_DeleteTopics(rk, &dt, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
    if (!ev)
        bench_die("DeleteTopics %s: no answer in 30 s", o->topic);
    if (rd_kafka_event_error(ev))
        bench_die("DeleteTopics %s: %s", o->topic, rd_kafka_event_error_string(ev));
    const rd_kafka_topic_result_t **res =
        rd_kafka_DeleteTopics_result_topics(rd_kafka_event_DeleteTopics_result(ev), &cnt);
    rd_kafka_resp_err_t err = cnt == 1 ? rd_kafka_topic_result_error(res[0]) : RD_KAFKA_RESP_ERR__FAIL;
    if (err)
        bench_die("DeleteTopics %s: %s", o->topic, rd_kafka_err2name(err));
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_DeleteTopic_destroy(dt);
    rd_kafka_destroy(rk);
    double until = bench_now() + 20;
    while (o->data && bench_topic_on_disk(o->data, o->topic) && bench_now() < until)
        usleep(10000);
    return 0;
}
