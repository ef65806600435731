/* 0214-metadata-snapshots: snapshots of the metadata log survive kill -9,
 * and Kafka's own tools read them.
 *
 * The test's own broker runs with metadata.log.max.record.bytes.between.
 * snapshots=1, so every metadata change is followed by a snapshot written
 * on a worker thread. Topics are created with the librdkafka admin API
 * and one is deleted, and the broker is killed with SIGKILL at a varying
 * moment after an acknowledgement (often while a snapshot is being
 * written), then restarted on the same data, several times: after each
 * restart every acknowledged topic is there with its partitions and the
 * deleted one is not, and no .checkpoint.part file is left. After a
 * clean stop, Kafka 4.4's DumpLogSegments (kafka-dump-log.sh)
 * --cluster-metadata-decoder reads the latest snapshot file: a valid
 * SnapshotHeader first, a TopicRecord and PartitionRecords for every
 * topic, the config, the SnapshotFooter last, every batch valid.
 *
 * Against Kafka (KAFKA_REF=1) the same holds: Kafka's own snapshots.
 * The DumpLogSegments part is skipped without Java or Kafka's jars. */
#include "0200-admin.h"
#include "testlib/tools.h"

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#define ROUNDS 4
#define PER_ROUND 4

static const char *const extra[] = {"metadata.log.max.record.bytes.between.snapshots=1",
                                    NULL};

/* The latest snapshot file in the metadata log dir into out ("" if none);
 * the number of .part files into *parts. */
static void latest_snapshot(const char *mdir, char *out, size_t cap, int *parts)
{
    DIR *d = opendir(mdir);
    struct dirent *e;
    char best[64] = "";

    *parts = 0;
    TL_ASSERT(d, "cannot read %s", mdir);
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        if (n > 5 && !strcmp(e->d_name + n - 5, ".part"))
            (*parts)++;
        if (n == 42 && !strcmp(e->d_name + 31, ".checkpoint") && strcmp(e->d_name, best) > 0)
            snprintf(best, sizeof(best), "%s", e->d_name);
    }
    closedir(d);
    snprintf(out, cap, "%s%s%s", *best ? mdir : "", *best ? "/" : "", best);
}

/* The broker's Metadata answer for name is UNKNOWN_TOPIC_OR_PART. */
static void check_absent(rd_kafka_t *rk, const char *name)
{
    const struct rd_kafka_metadata *md = NULL;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, name, NULL);
    TL_ASSERT_EQ(rd_kafka_metadata(rk, 0, rkt, &md, 10000), 0);
    TL_ASSERT(md->topic_cnt == 1 && md->topics[0].err == RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART,
              "%s is back", name);
    rd_kafka_metadata_destroy(md);
    rd_kafka_topic_destroy(rkt);
}

static void check_topics(const char *bs, int ntopics)
{
    rd_kafka_t *rk = adm_client(bs);
    for (int i = 0; i < ntopics; i++) {
        char name[32];
        snprintf(name, sizeof(name), "snap-%d", i);
        TL_ASSERT_EQ(tl_wait_topic(rk, name, 30000), 1 + i % 3);
    }
    check_absent(rk, "snap-gone");
    rd_kafka_destroy(rk);
}

static int kill_loop(tl_broker *b, const char *mdir)
{
    const char *const configs[] = {"retention.ms", "7654321", NULL};
    int n = 0, parts;
    char snap[600];

    srand((unsigned)time(NULL));
    for (int r = 0; r < ROUNDS; r++) {
        rd_kafka_t *rk = adm_client(b->bootstrap);
        if (r == 0) {
            TL_ASSERT_EQ(adm_create(rk, "snap-gone", 1, 1, NULL, 0, NULL, 0), 0);
            TL_ASSERT_EQ(tl_wait_topic(rk, "snap-gone", 30000), 1);
            TL_ASSERT_EQ(adm_delete(rk, "snap-gone"), 0);
        }
        for (int i = 0; i < PER_ROUND; i++, n++) {
            char name[32];
            snprintf(name, sizeof(name), "snap-%d", n);
            TL_ASSERT_EQ(adm_create(rk, name, 1 + n % 3, 1, n == 0 ? configs : NULL, 0, NULL, 0),
                         0);
        }
        /* Up to 20 ms after the last answer: the snapshot of the last
         * change is being written, or just was. */
        usleep((useconds_t)(rand() % 20000));
        tl_broker_kill9(b);
        tl_broker_start(b, b->dir, extra);
        /* A torn .part of the killed process is gone at start; the start's
         * own registration records may be being snapshotted: that .part is
         * renamed within moments. */
        for (int w = 0; w < 200; w++) {
            latest_snapshot(mdir, snap, sizeof(snap), &parts);
            if (parts == 0)
                break;
            usleep(10000);
        }
        TL_ASSERT(*snap, "round %d: no snapshot in %s", r, mdir);
        TL_ASSERT_EQ(parts, 0);
        rd_kafka_destroy(rk);
        check_topics(b->bootstrap, n);
    }
    return n;
}

/* Lines of out with both needles. */
static int lines_with(const char *out, const char *a, const char *b)
{
    int n = 0;
    for (const char *line = out; *line;) {
        const char *end = strchr(line, '\n');
        size_t len = end ? (size_t)(end - line) : strlen(line);
        const char *x = strstr(line, a), *y = strstr(line, b);
        n += x && y && x < line + len && y < line + len;
        line += len + (end ? 1 : 0);
    }
    return n;
}

static void dump_snapshot(const char *snap, int ntopics)
{
    char cmd[4096], cp[2048];
    if (tl_kafka_classpath(cp, sizeof(cp)) < 0)
        tl_skip("no java, or Kafka's jars are not to be had (scripts/kafka-ref.sh classpath)");
    snprintf(cmd, sizeof(cmd),
             "java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.level=OFF -cp '%s' "
             "org.apache.kafka.tools.DumpLogSegments --cluster-metadata-decoder "
             "--files '%s' 2>&1",
             cp, snap);
    char *out = tl_cmd_output(cmd);
    TL_ASSERT(!strstr(out, "Exception") && !strstr(out, "rror") && !strstr(out, "isvalid: false"),
              "DumpLogSegments reported a problem:\n%s", out);
    TL_ASSERT(strstr(out, "Snapshot end offset: "), "not read as a snapshot:\n%s", out);
    const char *h = strstr(out, "SnapshotHeader {\"version\":0,\"lastContainedLogTimestamp\":");
    const char *t = strstr(out, "SnapshotFooter {\"version\":0}");
    TL_ASSERT(h && t && h < t && !strstr(t + 1, "| offset:"), "header/footer:\n%s", out);
    for (int i = 0; i < ntopics; i++) {
        char want[64];
        snprintf(want, sizeof(want), "\"name\":\"snap-%d\",\"topicId\":", i);
        TL_ASSERT_EQ(lines_with(out, "\"type\":\"TOPIC_RECORD\"", want), 1);
    }
    TL_ASSERT_EQ(lines_with(out, "\"name\":\"snap-gone\"", "TOPIC_RECORD"), 0);
    TL_ASSERT_EQ(lines_with(out, "\"type\":\"CONFIG_RECORD\"",
                            "\"resourceName\":\"snap-0\",\"name\":\"retention.ms\","
                            "\"value\":\"7654321\""),
                 1);
    TL_ASSERT(lines_with(out, "\"type\":\"PARTITION_RECORD\"", "\"partitionId\":2,") >= 1,
              "no partition 2");
    tl_log("%s: %d records", snap, lines_with(out, "| offset: ", "CreateTime"));
    free(out);
}

int main(void)
{
    tl_init("0214-metadata-snapshots");
    char *dir = tl_scratch_dir("0214");
    tl_broker b = {0};
    char mdir[700], snap[800];
    int parts;

    tl_broker_start(&b, dir, extra);
    snprintf(mdir, sizeof(mdir), "%s/data/__cluster_metadata-0", b.dir);
    int n = kill_loop(&b, mdir);
    /* One more change, so that the latest snapshot has every topic. */
    rd_kafka_t *rk = adm_client(b.bootstrap);
    char last[32];
    snprintf(last, sizeof(last), "snap-%d", n);
    TL_ASSERT_EQ(adm_create(rk, last, 1 + n % 3, 1, NULL, 0, NULL, 0), 0);
    TL_ASSERT_EQ(tl_wait_topic(rk, last, 30000), 1 + n % 3);
    rd_kafka_destroy(rk);
    n++;
    usleep(200000); /* the snapshot is written on a worker */
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    latest_snapshot(mdir, snap, sizeof(snap), &parts);
    tl_log("%d topics over %d kills; latest snapshot %s", n, ROUNDS, snap);
    dump_snapshot(snap, n);
    free(dir);
    return tl_done();
}
