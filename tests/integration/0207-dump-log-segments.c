/* 0207-dump-log-segments: Kafka's own log dumper reads what the broker
 * wrote. The test's own broker creates a topic with a config and two
 * partitions, creates and deletes another, and a consumer group commits
 * offsets (with metadata) and leaves; after a clean stop Kafka 4.4's
 * DumpLogSegments (org.apache.kafka.tools.DumpLogSegments, the class
 * behind kafka-dump-log.sh) decodes __cluster_metadata-0 with
 * --cluster-metadata-decoder and __consumer_offsets with
 * --offsets-decoder: every batch valid, no record it cannot decode, and
 * the records hold what was done (FeatureLevelRecord metadata.version,
 * TopicRecord, ConfigRecord, a PartitionRecord per partition,
 * RemoveTopicRecord; the node's RegisterBrokerRecord, with its listener,
 * rack, log dir and features, fenced, its broker epoch the record's own
 * offset, and the BrokerRegistrationChangeRecord that unfences it; offset
 * commit keys and values, group metadata).
 * Skipped when Java or Kafka's jars (scripts/kafka-ref.sh) are missing. */
#include "0200-admin.h"
#include "testlib/tools.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const extra[] = {"group.initial.rebalance.delay.ms=0",
                                    "broker.rack=dump-rack", NULL};
static int assigned;

static void rebalance_cb(rd_kafka_t *rk, rd_kafka_resp_err_t err,
                         rd_kafka_topic_partition_list_t *parts, void *opaque)
{
    (void)opaque;
    if (err == RD_KAFKA_RESP_ERR__ASSIGN_PARTITIONS) {
        rd_kafka_assign(rk, parts);
        assigned = 1;
    } else {
        rd_kafka_assign(rk, NULL);
    }
}

/* A member of group joins, commits topic[0] at 3 with metadata "md" and
 * topic[1] at 5, and leaves. */
static void commit_offsets(const char *bs, const char *group, const char *topic)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "group.id", group);
    tl_conf_set(conf, "enable.auto.commit", "false");
    rd_kafka_conf_set_rebalance_cb(conf, rebalance_cb);
    rd_kafka_t *c = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_poll_set_consumer(c);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(2);
    rd_kafka_topic_partition_list_add(l, topic, RD_KAFKA_PARTITION_UA);
    TL_ASSERT_EQ(rd_kafka_subscribe(c, l), 0);
    rd_kafka_topic_partition_list_destroy(l);
    for (double end = tl_now() + 60; !assigned;) {
        TL_ASSERT(tl_now() < end, "no assignment in 60 s");
        rd_kafka_message_t *m = rd_kafka_consumer_poll(c, 50);
        if (m)
            rd_kafka_message_destroy(m);
    }
    l = rd_kafka_topic_partition_list_new(2);
    rd_kafka_topic_partition_t *p0 = rd_kafka_topic_partition_list_add(l, topic, 0);
    p0->offset = 3;
    p0->metadata = strdup("md"); /* freed with the list */
    p0->metadata_size = 2;
    rd_kafka_topic_partition_list_add(l, topic, 1)->offset = 5;
    TL_ASSERT_EQ(rd_kafka_commit(c, l, 0), 0);
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_consumer_close(c);
    rd_kafka_destroy(c);
}

/* Lines of out containing every one of the NULL-terminated needles. */
static int count_lines(const char *out, const char *const *needles)
{
    int n = 0;
    for (const char *line = out; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        int all = 1;
        for (const char *const *k = needles; all && *k; k++) {
            const char *hit = strstr(line, *k);
            all = hit && hit < line + len;
        }
        n += all;
        line += len + (end ? 1 : 0);
    }
    return n;
}

#define LINES(out, ...) count_lines((out), (const char *const[]){__VA_ARGS__, NULL})

/* The topic id DumpLogSegments printed for the TopicRecord of name. */
static void topic_id(const char *out, const char *name, char *id, size_t idlen)
{
    char want[128];
    snprintf(want, sizeof(want), "\"name\":\"%s\",\"topicId\":\"", name);
    const char *p = strstr(out, want);
    TL_ASSERT(p, "no TopicRecord for %s", name);
    p += strlen(want);
    const char *q = strchr(p, '"');
    TL_ASSERT(q && (size_t)(q - p) < idlen, "bad topic id");
    snprintf(id, idlen, "%.*s", (int)(q - p), p);
}

/* Comma-separated paths of the non-empty .log files of the partition
 * directories under data whose name starts with prefix. */
static char *log_files(const char *data, const char *prefix)
{
    size_t cap = 1 << 16, len = 0;
    char *list = calloc(1, cap);
    DIR *d = opendir(data);
    struct dirent *e;
    TL_ASSERT(list && d, "cannot read %s", data);
    while ((e = readdir(d))) {
        if (strncmp(e->d_name, prefix, strlen(prefix)) != 0)
            continue;
        char sub[1024];
        snprintf(sub, sizeof(sub), "%s/%s", data, e->d_name);
        DIR *s = opendir(sub);
        struct dirent *f;
        while (s && (f = readdir(s))) {
            size_t n = strlen(f->d_name);
            char path[2048];
            struct stat st;
            if (n < 4 || strcmp(f->d_name + n - 4, ".log") != 0)
                continue;
            snprintf(path, sizeof(path), "%s/%s", sub, f->d_name);
            if (stat(path, &st) != 0 || st.st_size == 0 || len + strlen(path) + 2 > cap)
                continue;
            len += (size_t)snprintf(list + len, cap - len, "%s%s", len ? "," : "", path);
        }
        if (s)
            closedir(s);
    }
    closedir(d);
    TL_ASSERT(len > 0, "no %s logs under %s", prefix, data);
    return list;
}

static char *dump(const char *cp, const char *decoder, const char *files)
{
    char *cmd = malloc(strlen(cp) + strlen(files) + 512);
    sprintf(cmd,
            "java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.level=OFF -cp '%s' "
            "org.apache.kafka.tools.DumpLogSegments %s --files '%s' 2>&1",
            cp, decoder, files);
    char *out = tl_cmd_output(cmd);
    free(cmd);
    TL_ASSERT(!strstr(out, "Exception") && !strstr(out, "rror") && !strstr(out, "isvalid: false"),
              "DumpLogSegments %s reported a problem:\n%s", decoder, out);
    return out;
}

/* The node registered as a broker: a RegisterBrokerRecord whose broker
 * epoch is its own offset, and its unfencing at that epoch. */
static void check_registration(const char *out, int port)
{
    char ep[128], epoch[64], unfence[128];
    snprintf(ep, sizeof(ep), "\"host\":\"127.0.0.1\",\"port\":%d,\"securityProtocol\":0", port);
    TL_ASSERT(LINES(out, "\"type\":\"REGISTER_BROKER_RECORD\"", ep, "\"rack\":\"dump-rack\"",
                    "\"fenced\":true", "\"logDirs\":[\"",
                    "{\"name\":\"metadata.version\",\"minSupportedVersion\":") >= 1,
              "no RegisterBrokerRecord with the listener, rack, dirs and features");
    const char *rec = strstr(out, "\"type\":\"REGISTER_BROKER_RECORD\"");
    const char *line = rec;
    while (line > out && line[-1] != '\n')
        line--;
    long off = -1;
    TL_ASSERT(sscanf(line, "| offset: %ld ", &off) == 1, "no offset on the record's line");
    snprintf(epoch, sizeof(epoch), "\"brokerEpoch\":%ld,", off);
    TL_ASSERT(strstr(rec, epoch) && strstr(rec, epoch) < strchr(rec, '\n'),
              "the broker epoch is not the record's offset %ld", off);
    snprintf(unfence, sizeof(unfence), "\"brokerEpoch\":%ld,\"fenced\":-1", off);
    TL_ASSERT(LINES(out, "\"type\":\"BROKER_REGISTRATION_CHANGE_RECORD\"", unfence) >= 1,
              "no BrokerRegistrationChangeRecord unfencing epoch %ld", off);
}

static void check_metadata(const char *cp, const char *data, int port)
{
    char id_a[64], id_gone[64], *files = log_files(data, "__cluster_metadata-0");
    char *out = dump(cp, "--cluster-metadata-decoder", files);
    TL_ASSERT(LINES(out, "\"type\":\"FEATURE_LEVEL_RECORD\"", "\"name\":\"metadata.version\"") >= 1,
              "no metadata.version FeatureLevelRecord");
    topic_id(out, "dump-a", id_a, sizeof(id_a));
    topic_id(out, "dump-gone", id_gone, sizeof(id_gone));
    TL_ASSERT_EQ(LINES(out, "\"type\":\"CONFIG_RECORD\"", "\"resourceName\":\"dump-a\"",
                       "\"name\":\"retention.ms\",\"value\":\"123456789\""), 1);
    TL_ASSERT_EQ(LINES(out, "\"type\":\"PARTITION_RECORD\"", id_a, "\"replicas\":[", "\"leader\":"),
                 2);
    TL_ASSERT_EQ(LINES(out, "\"type\":\"PARTITION_RECORD\"", id_a, "\"partitionId\":1,"), 1);
    TL_ASSERT_EQ(LINES(out, "\"type\":\"PARTITION_RECORD\"", id_gone), 1);
    TL_ASSERT_EQ(LINES(out, "\"type\":\"REMOVE_TOPIC_RECORD\"", id_gone), 1);
    check_registration(out, port);
    tl_log("__cluster_metadata-0: %d records decoded", LINES(out, "payload: {\"type\":"));
    free(out);
    free(files);
}

static void check_offsets(const char *cp, const char *data, const char *group)
{
    char key0[256], key1[256], gkey[256], *files = log_files(data, "__consumer_offsets-");
    char *out = dump(cp, "--offsets-decoder", files);
    snprintf(key0, sizeof(key0), "{\"group\":\"%s\",\"topic\":\"dump-a\",\"partition\":0}", group);
    snprintf(key1, sizeof(key1), "{\"group\":\"%s\",\"topic\":\"dump-a\",\"partition\":1}", group);
    snprintf(gkey, sizeof(gkey), "key: {\"type\":\"2\",\"data\":{\"group\":\"%s\"}}", group);
    TL_ASSERT_EQ(LINES(out, "key: {\"type\":\"1\"", key0, "\"offset\":3,", "\"metadata\":\"md\""), 1);
    TL_ASSERT_EQ(LINES(out, "key: {\"type\":\"1\"", key1, "\"offset\":5,", "\"metadata\":\"\""), 1);
    TL_ASSERT(LINES(out, gkey, "\"protocolType\":\"consumer\"") >= 1, "no GroupMetadata of %s",
              group);
    tl_log("__consumer_offsets: %d records decoded", LINES(out, "| offset: "));
    free(out);
    free(files);
}

int main(void)
{
    tl_init("0207-dump-log-segments");
    char cp[4096];
    if (tl_kafka_classpath(cp, sizeof(cp)) < 0)
        tl_skip("no java, or Kafka's jars are not to be had (scripts/kafka-ref.sh classpath)");

    char *dir = tl_scratch_dir("0207");
    tl_broker b = {0};
    const char *const configs[] = {"retention.ms", "123456789", NULL};
    const char *group = "dump-group";
    tl_broker_start(&b, dir, extra);
    rd_kafka_t *rk = adm_client(b.bootstrap);
    TL_ASSERT_EQ(adm_create(rk, "dump-a", 2, 1, configs, 0, NULL, 0), 0);
    TL_ASSERT_EQ(adm_create(rk, "dump-gone", 1, 1, NULL, 0, NULL, 0), 0);
    TL_ASSERT_EQ(tl_wait_topic(rk, "dump-gone", 30000), 1);
    TL_ASSERT_EQ(adm_delete(rk, "dump-gone"), 0);
    TL_ASSERT_EQ(tl_wait_topic(rk, "dump-a", 30000), 2);
    rd_kafka_destroy(rk);
    commit_offsets(b.bootstrap, group, "dump-a");
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);

    char data[600];
    snprintf(data, sizeof(data), "%s/data", b.dir);
    check_metadata(cp, data, b.port);
    check_offsets(cp, data, group);
    free(dir);
    return tl_done();
}
