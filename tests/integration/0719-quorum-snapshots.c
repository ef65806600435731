/* 0719-quorum-snapshots: snapshots of a Raft metadata quorum, on three
 * controller-only nodes that take one every KB of records
 * (metadata.log.max.record.bytes.between.snapshots) and keep only the
 * latest (metadata.max.retention.bytes=1, so each new snapshot moves the
 * log start up to it):
 *   - with a follower killed, 60 changes commit on the leader: its
 *     metadata log dir holds exactly one .checkpoint, past where the
 *     killed follower's log ends, and no .part file;
 *   - the follower restarts: its fetch is below the leader's log start, so
 *     it fetches the snapshot (FetchSnapshot) and catches up from it: its
 *     log restarts at a snapshot's end offset (its first segment's base
 *     offset), it holds that snapshot's file, and it describes the last
 *     change;
 *   - kill -9 of the leader: the node that caught up from the snapshot and
 *     the third elect a new leader, which takes a change, and the old leader
 *     restarts and catches up too;
 *   - a broker (an observer) killed at the same time, while a topic of its
 *     replicas is deleted and another created, catches up from a snapshot
 *     too. It takes no snapshots itself (the default interval), so it
 *     restarts knowing nothing of either topic: the deleted topic's
 *     directories are set aside as strays once it has caught up
 *     ("snap-gone-N.<uuid>-stray", kept, as Kafka's broker does), the
 *     new one's are made, and
 *     its Metadata has the new topic and not the deleted one, and both
 *     brokers (their registrations are in the snapshot);
 *   - a controller-only node that starts from its own snapshot loads no
 *     partition (it hosts none: it logged each as offline before);
 *   - the other broker, which takes snapshots itself, stopped and started
 *     again: it loads its partitions from its own snapshot, the ones it is
 *     not the first replica of too (their log dir is its replica's, not
 *     the first's), so none is set aside;
 *   - Kafka 4.4's DumpLogSegments (--cluster-metadata-decoder) reads the
 *     snapshot the follower fetched, and finds one of the changes and the
 *     brokers' registrations (RegisterBrokerRecord v3) in it.
 * Strand's own files and log layout are checked, so it does not run
 * against Kafka (whose metadata log start moves only with whole 8 MB
 * segments: a follower catches up from the log there). */
#include <dirent.h>
#include <errno.h>
#include <sys/stat.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "0200-admin.h"
#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/testlib.h"
#include "testlib/tools.h"

#define N 3 /* controllers 1-3; brokers 4 and 5 */
#define B1 4
#define B2 5
#define CHANGES 60

static const char *const extra[] = {"metadata.log.max.record.bytes.between.snapshots=1024",
                                    "metadata.max.retention.bytes=1", NULL};

typedef struct snap_files {
    int nsnaps, nparts;
    long long last_end;   /* the latest snapshot's end offset, -1: none */
    char last[64];
    long long first_base; /* the first segment's base offset, -1: none */
} snap_files;

static void metadata_dir(tl_node *node, char *out, size_t cap)
{
    snprintf(out, cap, "%s/data/__cluster_metadata-0", node->dir);
}

static void scan(tl_node *node, snap_files *s)
{
    char dir[PATH_MAX + 64];
    struct dirent *e;
    metadata_dir(node, dir, sizeof(dir));
    DIR *d = opendir(dir);
    memset(s, 0, sizeof(*s));
    s->last_end = s->first_base = -1;
    TL_ASSERT(d, "cannot read %s", dir);
    while ((e = readdir(d))) {
        size_t n = strlen(e->d_name);
        long long off = strtoll(e->d_name, NULL, 10);
        if (n > 5 && !strcmp(e->d_name + n - 5, ".part"))
            s->nparts++;
        if (n == 42 && !strcmp(e->d_name + 31, ".checkpoint")) {
            s->nsnaps++;
            if (off > s->last_end) {
                s->last_end = off;
                snprintf(s->last, sizeof(s->last), "%s", e->d_name);
            }
        }
        if (n == 24 && !strcmp(e->d_name + 20, ".log") && (s->first_base < 0 || off < s->first_base))
            s->first_base = off;
    }
    closedir(d);
}

/* Copies src to dst; -1 when src cannot be read (gone). */
static int copy_file(const char *src, const char *dst)
{
    char buf[65536];
    size_t n;
    FILE *in = fopen(src, "rb"), *out;
    if (!in)
        return -1;
    out = fopen(dst, "wb");
    TL_ASSERT(out != NULL, "cannot write %s", dst);
    while ((n = fread(buf, 1, sizeof(buf), in)) > 0)
        TL_ASSERT(fwrite(buf, 1, n, out) == n, "cannot write %s", dst);
    fclose(in);
    TL_ASSERT(fclose(out) == 0, "cannot write %s", dst);
    return 0;
}

/* DumpLogSegments reads the snapshot and finds one of the changes in it
 * (the one it was taken after: the log after it holds the rest). */
static void dump_snapshot(const char *path, const char *want)
{
    char cmd[8192], cp[2048], needle[128];
    if (tl_kafka_classpath(cp, sizeof(cp)) < 0) {
        tl_log("no java, or Kafka's jars are not to be had: DumpLogSegments not run");
        return;
    }
    snprintf(cmd, sizeof(cmd),
             "java -Xmx256m -XX:TieredStopAtLevel=1 -Dlog4j2.level=OFF -cp '%s' "
             "org.apache.kafka.tools.DumpLogSegments --cluster-metadata-decoder "
             "--files '%s' 2>&1",
             cp, path);
    char *out = tl_cmd_output(cmd);
    TL_ASSERT(!strstr(out, "Exception") && !strstr(out, "isvalid: false") &&
                  strstr(out, "Snapshot end offset: ") && strstr(out, "SnapshotFooter"),
              "DumpLogSegments did not read the snapshot:\n%s", out);
    snprintf(needle, sizeof(needle), "\"name\":\"log.retention.ms\",\"value\":\"%s", want);
    TL_ASSERT(strstr(out, needle), "the snapshot lacks %s:\n%s", needle, out);
    TL_ASSERT(strstr(out, "{\"type\":\"REGISTER_BROKER_RECORD\",\"version\":3,\"data\":{\"brokerId\":4,"),
              "the snapshot lacks broker 4's registration:\n%s", out);
    free(out);
}

/* How many of node's partition directories belong to topic: live ones
 * ("<topic>-<p>"), or (strays) those set aside ("<topic>-<p>.<hex>-stray"). */
static int topic_dirs_of(tl_node *node, const char *topic, int strays)
{
    char dir[PATH_MAX + 16], prefix[128];
    struct dirent *e;
    int n = 0;
    snprintf(dir, sizeof(dir), "%s/data", node->dir);
    snprintf(prefix, sizeof(prefix), "%s-", topic);
    DIR *d = opendir(dir);
    TL_ASSERT(d, "cannot read %s", dir);
    while ((e = readdir(d))) {
        const char *rest = e->d_name + strlen(prefix);
        if (strncmp(e->d_name, prefix, strlen(prefix)))
            continue;
        rest += strspn(rest, "0123456789");
        n += strays ? !strncmp(rest, ".", 1) && strstr(rest, "-stray") != NULL : *rest == 0;
    }
    closedir(d);
    return n;
}

static int topic_dirs(tl_node *node, const char *topic)
{
    return topic_dirs_of(node, topic, 0);
}

static void wait_dirs(tl_node *node, const char *topic, int want)
{
    for (int i = 0; i < 300 && topic_dirs(node, topic) != want; i++)
        usleep(100 * 1000);
    TL_ASSERT_EQ(topic_dirs(node, topic), want);
}

/* Both brokers are in b's Metadata (registered, and known to it). */
static void wait_brokers(tl_node *b)
{
    rd_kafka_t *rk = adm_client(b->bootstrap);
    int n = 0;
    for (int i = 0; i < 300 && n != 2; i++) {
        const struct rd_kafka_metadata *md;
        if (rd_kafka_metadata(rk, 0, NULL, &md, 2000) == 0) {
            n = md->broker_cnt;
            rd_kafka_metadata_destroy(md);
        }
        if (n != 2)
            usleep(100 * 1000);
    }
    TL_ASSERT_EQ(n, 2);
    rd_kafka_destroy(rk);
}

/* CreateTopics through bs, retried while the brokers are unfenced. */
static void create(const char *bs, const char *topic)
{
    rd_kafka_t *rk = adm_client(bs);
    char msg[256];
    int err = -1;
    for (int i = 0; i < 100 && err; i++) {
        err = adm_create(rk, topic, 2, 2, NULL, 0, msg, sizeof(msg));
        if (err)
            usleep(200 * 1000);
    }
    TL_ASSERT(err == 0, "CreateTopics %s: %d %s", topic, err, msg);
    rd_kafka_destroy(rk);
}

static void check_broker_metadata(tl_node *b)
{
    rd_kafka_t *rk = adm_client(b->bootstrap);
    int n = 0;
    for (int i = 0; i < 100 && (n = adm_nparts(rk, "snap-new")) != 2; i++)
        usleep(100 * 1000);
    TL_ASSERT_EQ(n, 2);
    TL_ASSERT_EQ(adm_nparts(rk, "snap-kept"), 2);
    TL_ASSERT_EQ(adm_nparts(rk, "snap-gone"), 0);
    const struct rd_kafka_metadata *md;
    TL_ASSERT_EQ(rd_kafka_metadata(rk, 0, NULL, &md, 5000), 0);
    TL_ASSERT_EQ(md->broker_cnt, 2); /* the registrations came with the snapshot */
    rd_kafka_metadata_destroy(md);
    rd_kafka_destroy(rk);
}

/* b, a replica of both partitions of snap-kept (the first of one only),
 * starts again from its own snapshot and keeps both. */
static void restart_broker(tl_node *b, tl_node *via)
{
    snap_files sf;
    scan(b, &sf);
    TL_ASSERT(sf.nsnaps >= 1, "broker %d took no snapshot", b->id);
    tl_node_stop(b);
    TL_ASSERT(tl_kraft_wait_fenced(via, b->id, 1, 30) >= 0, "broker %d not fenced", b->id);
    tl_node_start(b);
    TL_ASSERT(tl_kraft_wait_fenced(via, b->id, 0, 30) >= 0, "broker %d not unfenced", b->id);
    TL_ASSERT_EQ(topic_dirs(b, "snap-kept"), 2);
    TL_ASSERT_EQ(topic_dirs_of(b, "snap-kept", 1), 0);
    tl_log("broker %d restarted from snapshot %s with both its partitions", b->id, sf.last);
}

/* How many lines of node's log have s. */
static int log_count(tl_node *node, const char *s)
{
    char path[PATH_MAX + 16], line[2048];
    int n = 0;
    snprintf(path, sizeof(path), "%s/node.log", node->dir);
    FILE *f = fopen(path, "r");
    TL_ASSERT(f, "cannot read %s", path);
    while (fgets(line, sizeof(line), f))
        n += strstr(line, s) != NULL;
    fclose(f);
    return n;
}

static int other_than(int a, int b)
{
    for (int id = 1; id <= N; id++)
        if (id != a && id != b)
            return id;
    return 0;
}

int main(void)
{
    tl_init("0719-quorum-snapshots");
    if (tl_is_kafka())
        tl_skip("Strand's snapshot files and log layout are checked");
    tl_cluster *c = tl_cluster_new("0719-quorum-snapshots", TL_QUORUM_SHARED);
    tl_kraft_view v;
    snap_files lf, ff;
    char value[32], path[PATH_MAX + 160];

    tl_cluster_add_n(c, N, TL_ROLE_CONTROLLER, extra);
    tl_cluster_add(c, TL_ROLE_BROKER, extra);
    tl_cluster_add(c, TL_ROLE_BROKER, NULL);
    tl_cluster_start(c);
    tl_node *b1 = tl_cluster_node(c, B1), *b2 = tl_cluster_node(c, B2);
    wait_brokers(b1);
    create(b1->bootstrap, "snap-gone");
    create(b1->bootstrap, "snap-kept");
    wait_dirs(b2, "snap-gone", 2);
    int leader = tl_kraft_find_leader(c, 0, 30, &v);
    TL_ASSERT(leader > 0, "no leader");
    tl_kraft_wait_hw(c, leader, &v);
    int f = leader % N + 1;
    tl_kraft_wait_caught_up(c, f, 20);
    tl_node_kill9(tl_cluster_node(c, f));
    tl_node_kill9(b2);
    rd_kafka_t *rk = adm_client(b1->bootstrap);
    TL_ASSERT_EQ(adm_delete(rk, "snap-gone"), 0);
    rd_kafka_destroy(rk);
    create(b1->bootstrap, "snap-new");

    for (int i = 0; i < CHANGES; i++) {
        snprintf(value, sizeof(value), "%d", 1000000 + i);
        TL_ASSERT_EQ(tl_kraft_alter_default(tl_cluster_node(c, leader), value), 0);
    }
    tl_kraft_describe(tl_cluster_node(c, leader), &v);
    /* a snapshot just written is cleaned behind once the loop hears of it */
    for (int i = 0; i < 50; i++) {
        scan(tl_cluster_node(c, leader), &lf);
        if (lf.nsnaps == 1)
            break;
        usleep(100 * 1000);
    }
    tl_log("leader %d: high watermark %lld, %d snapshot(s), latest %s", leader, (long long)v.hw,
           lf.nsnaps, lf.last);
    TL_ASSERT_EQ(lf.nsnaps, 1);
    TL_ASSERT_EQ(lf.nparts, 0);
    TL_ASSERT(lf.last_end > v.end[f], "the leader's log start %lld is not past node %d's end %lld",
              lf.last_end, f, (long long)v.end[f]);

    tl_node_start(tl_cluster_node(c, f));
    tl_node_start(b2);
    tl_kraft_wait_caught_up(c, f, 30);
    TL_ASSERT_EQ(log_count(tl_cluster_node(c, f), "it is offline"), 0);
    wait_dirs(b2, "snap-new", 2);
    wait_dirs(b2, "snap-gone", 0);
    TL_ASSERT_EQ(topic_dirs_of(b2, "snap-gone", 1), 2);
    check_broker_metadata(b2);
    scan(b2, &ff);
    tl_log("broker %d: first segment at %lld, latest snapshot %s", B2, ff.first_base, ff.last);
    TL_ASSERT(ff.first_base > 0, "broker %d did not restart its log at a snapshot", B2);
    tl_kraft_wait_default(c, value);
    scan(tl_cluster_node(c, f), &ff);
    tl_log("node %d: first segment at %lld, latest snapshot %s", f, ff.first_base, ff.last);
    TL_ASSERT(ff.first_base > 0 && ff.nsnaps >= 1 && ff.nparts == 0,
              "node %d did not restart its log at a snapshot (first segment %lld, %d snapshots)",
              f, ff.first_base, ff.nsnaps);
    TL_ASSERT(ff.last_end >= ff.first_base, "no snapshot at node %d's log start", f);
    /* DumpLogSegments reads a copy: the node may take a newer snapshot (the
     * ISRs grow back once the restarted broker catches up) and delete this
     * one while the tool runs. */
    /* (Its name kept: the tool takes the end offset and epoch from it.) */
    char copy[PATH_MAX + 160];
    snprintf(copy, sizeof(copy), "%s/snapshot-copy", tl_cluster_dir(c));
    TL_ASSERT(mkdir(copy, 0755) == 0 || errno == EEXIST, "mkdir %s", copy);
    for (int tries = 0;; tries++) {
        metadata_dir(tl_cluster_node(c, f), path, sizeof(path));
        size_t at = strlen(path);
        snprintf(path + at, sizeof(path) - at, "/%s", ff.last);
        snprintf(copy, sizeof(copy), "%s/snapshot-copy/%s", tl_cluster_dir(c), ff.last);
        if (copy_file(path, copy) == 0)
            break;
        TL_ASSERT(tries < 20, "cannot copy %s", path);
        scan(tl_cluster_node(c, f), &ff);
    }
    dump_snapshot(copy, "10000");

    restart_broker(b1, b2);

    /* the node that caught up from a snapshot can lead */
    tl_node_kill9(tl_cluster_node(c, leader));
    int next = tl_kraft_find_leader(c, v.epoch, 30, &v);
    TL_ASSERT(next > 0 && next != leader, "no new leader after the kill");
    tl_kraft_wait_hw(c, next, &v);
    TL_ASSERT_EQ(tl_kraft_alter_default_retry(tl_cluster_node(c, next), "4444444"), 0);
    tl_kraft_wait_default(c, "4444444");
    tl_node_start(tl_cluster_node(c, leader));
    tl_kraft_wait_caught_up(c, leader, 30);
    tl_kraft_wait_default(c, "4444444");
    tl_log("new leader %d (the third node is %d)", next, other_than(leader, f));
    tl_cluster_stop(c);
    tl_cluster_free(c);
    return tl_done();
}
