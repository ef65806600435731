/* Snapshots of the metadata log (src/cluster/meta_log_snap.c): taken when
 * the log has grown by max_bytes, loaded at start with only the log after
 * them replayed, the log before the latest deleted by Kafka's retention
 * rule (whole segments; older snapshots removed), and crash safety: with
 * every storage call of a commit, its snapshot and the cleaning failed in
 * turn (util/fault.h) and the process then "killed" (nothing closed), the
 * directory reopens to the image that was acknowledged. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "cluster/meta_log.h"
#include "cluster/meta_snap.h"
#include "util/fault.h"
#include "unit.h"
#include "unit_image.h"

#define NOW 1800000000000LL

typedef struct world_s {
    char dir[64];
    const char *dirs[1];
    log_mgr_config_t mc;
    log_mgr_t *mgr;
    meta_log_t *ml;
} world_t;

static void w_open(world_t *w)
{
    char err[256];
    int fresh;
    w->mgr = log_mgr_open(&w->mc, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->mgr);
    w->ml = meta_log_open(w->mgr, NOW, 0, &fresh);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->ml);
    /* Small segments and snapshots every few changes, everything beyond
     * the latest snapshot cleaned at once. */
    log_config_t cfg = *log_config(w->ml->log);
    cfg.segment_bytes = 600;
    cfg.file_delete_delay_ms = 0;
    log_set_config(w->ml->log, &cfg);
    meta_log_policy_t pol = {400, 0, 0, -1};
    meta_log_snap_policy(w->ml, &pol);
}

/* A crash: nothing flushed or closed. */
static void w_kill(world_t *w)
{
    meta_log_free(w->ml);
    log_mgr_free(w->mgr);
}

static void w_init(world_t *w)
{
    memset(w, 0, sizeof(*w));
    /* tmpfs when there is one: the test is about the order of calls, and
     * hundreds of real fsyncs would make it slow on a busy disk. */
    snprintf(w->dir, sizeof(w->dir), "%s/test_meta_log_snap.XXXXXX",
             access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp");
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(w->dir));
    w->dirs[0] = w->dir;
    w->mc.dirs = w->dirs;
    w->mc.ndirs = 1;
    w->mc.node_id = 1;
    log_config_defaults(&w->mc.defaults);
    w_open(w);
}

static void w_done(world_t *w)
{
    char cmd[128];
    w_kill(w);
    snprintf(cmd, sizeof(cmd), "rm -rf '%s'", w->dir);
    CU_ASSERT_EQUAL(system(cmd), 0);
}

/* Commits a topic of 2 partitions: 3 records in one batch. */
static int16_t add_topic(meta_log_t *ml, int i)
{
    char name[32];
    meta_rec_t recs[3];
    int32_t one = 1;
    proto_uuid_t dir = {{0}};

    snprintf(name, sizeof(name), "topic-%d", i);
    meta_rec_init(&recs[0], META_REC_TOPIC);
    recs[0].u.topic.name = (meta_str_t){name, (int32_t)strlen(name)};
    memset(recs[0].u.topic.topic_id.b, 0, 16);
    recs[0].u.topic.topic_id.b[0] = (uint8_t)(i + 1);
    recs[0].u.topic.topic_id.b[1] = (uint8_t)((i + 1) >> 8);
    for (int p = 0; p < 2; p++) {
        meta_part_rec_t *r = &recs[1 + p].u.part;
        meta_rec_init(&recs[1 + p], META_REC_PARTITION);
        r->partition_id = p;
        r->topic_id = recs[0].u.topic.topic_id;
        r->replicas = r->isr = (meta_i32s_t){1, &one};
        r->removing_replicas.n = r->adding_replicas.n = 0;
        r->leader = 1;
        r->directories = (meta_uuids_t){1, &dir};
    }
    return meta_log_commit(ml, recs, 3, NOW + i);
}

static int nsnaps(world_t *w)
{
    meta_snap_id_t *ids;
    int n = meta_snap_list(log_dir(w->ml->log), &ids);
    free(ids);
    return n;
}

static void test_take_load_clean(void)
{
    world_t w;
    meta_snap_id_t id;
    meta_image_t copy;
    char err[256];

    w_init(&w);
    for (int i = 0; i < 40; i++)
        CU_ASSERT_EQUAL_FATAL(add_topic(w.ml, i), 0);
    /* Taken by size: about every 400 bytes of batches. */
    CU_ASSERT_EQUAL_FATAL(meta_log_latest_snapshot(w.ml, &id), 1);
    CU_ASSERT(id.end_offset > 100 && id.end_offset <= meta_log_end_offset(w.ml));
    CU_ASSERT_EQUAL(id.epoch, 1);
    /* Retention 0 bytes: only the latest snapshot stays, and the log
     * starts at it, the segments before it deleted. */
    CU_ASSERT_EQUAL(nsnaps(&w), 1);
    CU_ASSERT_EQUAL(log_start_offset(w.ml->log), id.end_offset);
    CU_ASSERT(log_segment_count(w.ml->log) <= 3);
    meta_image_init(&copy);
    CU_ASSERT_EQUAL(meta_snap_load(log_dir(w.ml->log), id, &copy, NULL, err, sizeof(err)), 0);
    meta_image_free(&copy);
    /* Restart: the snapshot and the log after it give the same image. */
    int64_t leo = meta_log_end_offset(w.ml);
    for (int i = 40; i < 42; i++)
        CU_ASSERT_EQUAL_FATAL(add_topic(w.ml, i), 0);
    leo = meta_log_end_offset(w.ml);
    meta_image_t before;
    meta_image_init(&before);
    buf_t b;
    buf_init(&b);
    meta_snap_build(&b, id, &w.ml->img, 0, NULL, 0, 0); /* a deep copy */
    CU_ASSERT_EQUAL(meta_snap_parse(b.p, b.len, &before, NULL, err, sizeof(err)), 0);
    buf_free(&b);
    w_kill(&w);
    w_open(&w);
    CU_ASSERT(image_eq(&before, &w.ml->img));
    CU_ASSERT_EQUAL(meta_log_end_offset(w.ml), leo);
    CU_ASSERT(meta_image_topic(&w.ml->img, "topic-0", 7) != NULL);
    CU_ASSERT(meta_image_topic(&w.ml->img, "topic-41", 8) != NULL);
    CU_ASSERT_EQUAL(w.ml->epoch, 2);
    meta_image_free(&before);
    w_done(&w);
}

/* By time: nothing until metadata.log.max.snapshot.interval.ms has passed
 * since the log opened (or the latest snapshot), then at the next commit;
 * nothing new, nothing taken. */
static void test_by_time(void)
{
    world_t w;
    meta_snap_id_t id;
    meta_log_policy_t pol = {INT64_MAX, 1000, -1, -1};

    w_init(&w);
    meta_log_snap_policy(w.ml, &pol);
    CU_ASSERT_EQUAL(add_topic(w.ml, 0), 0);     /* at NOW */
    CU_ASSERT_EQUAL(add_topic(w.ml, 500), 0);   /* NOW + 500 */
    CU_ASSERT_EQUAL(meta_log_latest_snapshot(w.ml, &id), 0);
    CU_ASSERT_EQUAL(add_topic(w.ml, 1000), 0);  /* NOW + 1000: due */
    CU_ASSERT_EQUAL_FATAL(meta_log_latest_snapshot(w.ml, &id), 1);
    CU_ASSERT_EQUAL(id.end_offset, meta_log_end_offset(w.ml));
    CU_ASSERT_EQUAL(meta_log_snapshot_take(w.ml, NOW + 5000), 1);
    CU_ASSERT_EQUAL(nsnaps(&w), 1);
    w_done(&w);
}

/* Every topic name in img, counted. */
static int ntopics(const meta_image_t *img)
{
    size_t pos = 0;
    int n = 0;
    while (meta_image_topic_next(img, &pos))
        n++;
    return n;
}

/* The armed part of a round: commits topics 6.. until one fails.
 * Returns how many topics were acknowledged in all. */
static int commit_more(world_t *w)
{
    int acked = 6;
    for (int i = 6; i < 20; i++) {
        if (add_topic(w->ml, i) != 0)
            break;
        acked = i + 1;
    }
    return acked;
}

static void world_with_six(world_t *w)
{
    w_init(w);
    for (int i = 0; i < 6; i++)
        CU_ASSERT_EQUAL_FATAL(add_topic(w->ml, i), 0);
}

/* For each storage call n of the armed part (commits, snapshots written
 * inline, cleanings): fail it (every other round: it and every call
 * after it, a dying disk), kill, reopen: every acknowledged topic is
 * there, and at most the one whose commit failed besides (its batch may
 * have reached the disk before the failure was seen). */
static void test_crash_each_call(void)
{
    world_t w;
    int64_t calls;

    world_with_six(&w);
    fault_count_calls();
    CU_ASSERT_EQUAL(commit_more(&w), 20);
    calls = fault_calls(FAULT_ANY);
    fault_reset();
    fault_disarm();
    CU_ASSERT(nsnaps(&w) >= 1);
    w_done(&w);
    CU_ASSERT(calls > 20);
    int64_t step = calls / 200 + 1;
    for (int64_t n = 1; n <= calls; n += step) {
        world_with_six(&w);
        if (n % 2)
            fault_fail_nth(FAULT_ANY, n, EIO);
        else
            fault_fail_after(FAULT_ANY, n - 1, EIO);
        int acked = commit_more(&w);
        fault_reset();
        fault_disarm();
        w_kill(&w);
        w_open(&w);
        int got = ntopics(&w.ml->img);
        CU_ASSERT(got >= acked && got <= acked + 1);
        for (int i = 0; i < got; i++) {
            char name[32];
            snprintf(name, sizeof(name), "topic-%d", i);
            CU_ASSERT_PTR_NOT_NULL(meta_image_topic(&w.ml->img, name, strlen(name)));
        }
        w_done(&w);
    }
    printf("(%lld storage calls, every %lld failed) ", (long long)calls, (long long)step);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("meta_log_snap", NULL, NULL);
    CU_add_test(s, "taken by size, loaded at start, log before it deleted",
                test_take_load_clean);
    CU_add_test(s, "taken by time with new records", test_by_time);
    CU_add_test(s, "a crash at each storage call keeps what was acknowledged",
                test_crash_each_call);
    return unit_run();
}
