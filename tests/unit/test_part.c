/* The partition registry on real log dirs: topic creation with configs,
 * the checks Kafka's controller makes (and that a refused change leaves
 * the disk alone), config changes reaching the live logs, added
 * partitions, deletion and re-creation, and restarts: the metadata log
 * brings everything back, removes directories of topics deleted just
 * before a crash, and is synthesized for a data dir that predates it.
 * Also compression.type recompression of produced batches. */
#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "cluster/ctl.h"
#include "cluster/meta_log.h"
#include "log/log_batch.h"
#include "log/log_mgr.h"
#include "partition/part.h"
#include "tests/unit/unit.h"
#include "util/fault.h"
#include "util/logging.h"

#define NOW 1700000000000LL

static char tmpdir[256];
static log_mgr_t *mgr;
static part_reg_t *reg;

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static ctl_t *ctl;

static void open_all(void)
{
    const char *dirs[1] = {tmpdir};
    log_mgr_config_t mc;
    part_reg_config_t pc;
    ctl_config_t cc;
    char err[256];

    memset(&mc, 0, sizeof(mc));
    mc.dirs = dirs;
    mc.ndirs = 1;
    mc.node_id = 1;
    log_config_defaults(&mc.defaults);
    mgr = log_mgr_open(&mc, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mgr);
    memset(&cc, 0, sizeof(cc));
    cc.node_id = 1;
    part_topic_cfg_defaults(&cc.defaults);
    ctl = ctl_open(mgr, &cc, NOW);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ctl);
    memset(&pc, 0, sizeof(pc));
    pc.defaults = cc.defaults;
    pc.num_partitions = 1;
    pc.node_id = 1;
    pc.ctl = ctl;
    reg = part_reg_open_ex(mgr, &pc, NOW);
    CU_ASSERT_PTR_NOT_NULL_FATAL(reg);
}

static void close_all(void)
{
    part_reg_free(reg);
    ctl_free(ctl);
    log_mgr_close(mgr, -1);
    reg = NULL;
    ctl = NULL;
    mgr = NULL;
}

/* ---- the controller's changes, run to the end (no pool: in the call) ---- */

static int op_done_count;

static void op_done(ctl_op_t *op)
{
    (void)op;
    op_done_count++;
}

static int16_t run_op(ctl_op_t *op, char *err, size_t errlen)
{
    int before = op_done_count;
    op->done = op_done;
    op->now_ms = NOW;
    ctl_submit(ctl, op);
    CU_ASSERT_EQUAL(op_done_count, before + 1);
    if (err)
        snprintf(err, errlen, "%s", op->msg);
    return op->err;
}

static int16_t t_create(const char *name, int32_t n, const ctl_kv_t *kv, int nkv, int check_only,
                        topic_t **out, char *err, size_t errlen)
{
    ctl_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = CTL_CREATE_TOPIC;
    op.name = name;
    op.name_len = strlen(name);
    op.nparts = n;
    op.rf = -1;
    op.nassign = -1;
    op.kv = kv;
    op.nkv = nkv;
    op.validate_only = check_only;
    int16_t e = run_op(&op, err, errlen);
    if (out)
        *out = part_topic_get(reg, name, strlen(name));
    return e;
}

static int16_t t_on_topic(int kind, topic_t *t, int32_t n, const ctl_kv_t *kv, int nkv,
                          int replace, int check_only, char *err, size_t errlen)
{
    ctl_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = kind;
    memcpy(op.topic_id, t->id, 16);
    op.nparts = n;
    op.nassign = -1;
    op.kv = kv;
    op.nkv = nkv;
    op.replace = replace;
    op.validate_only = check_only;
    return run_op(&op, err, errlen);
}

static int16_t t_alter(topic_t *t, const ctl_kv_t *kv, int nkv, int replace, int check_only,
                       char *err, size_t errlen)
{
    return t_on_topic(CTL_ALTER_CONFIGS, t, 0, kv, nkv, replace, check_only, err, errlen);
}

static int16_t t_add_parts(topic_t *t, int32_t count, int check_only, char *err, size_t errlen)
{
    return t_on_topic(CTL_CREATE_PARTITIONS, t, count, NULL, 0, 0, check_only, err, errlen);
}

static int16_t t_delete(topic_t *t)
{
    return t_on_topic(CTL_DELETE_TOPIC, t, 0, NULL, 0, 0, 0, NULL, 0);
}

/* Names in tmpdir, sorted and joined, to compare directory states. */
static char *listing(void)
{
    static char out[4096];
    struct dirent **ents;
    int n = scandir(tmpdir, &ents, NULL, alphasort);
    out[0] = '\0';
    for (int i = 0; i < n; i++) {
        if (ents[i]->d_name[0] != '.' && !strstr(ents[i]->d_name, "checkpoint"))
            snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s ", ents[i]->d_name);
        free(ents[i]);
    }
    free(ents);
    return out;
}

static int exists(const char *name)
{
    char p[600];
    struct stat st;
    snprintf(p, sizeof(p), "%s/%s", tmpdir, name);
    return stat(p, &st) == 0;
}

static topic_t *create(const char *name, int32_t n, const ctl_kv_t *kv, int nkv, int16_t want)
{
    topic_t *t = NULL;
    char err[512] = "";
    int16_t e = t_create(name, n, kv, nkv, 0, &t, err, sizeof(err));
    CU_ASSERT_EQUAL(e, want);
    if (e != want)
        fprintf(stderr, "create %s: %d %s\n", name, e, err);
    return e ? NULL : t;
}

static void test_create(void)
{
    ctl_kv_t kv[] = {{"retention.ms", "1000"}, {"cleanup.policy", "compact"}};
    topic_t *t = create("orders", 3, kv, 2, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->nparts, 3);
    CU_ASSERT(exists("orders-0") && exists("orders-2") && !exists("orders-3"));
    CU_ASSERT(exists("__cluster_metadata-0"));
    CU_ASSERT_EQUAL(part_topic_get(reg, "orders", 6), t);
    CU_ASSERT_EQUAL(part_topic_by_id(reg, t->id), t);
    uint8_t id[16];
    CU_ASSERT(log_mgr_topic_id(mgr, "orders", 2, id) && !memcmp(id, t->id, 16));
    CU_ASSERT(t->cfg.compacted && !t->cfg.cleanup_delete);
    CU_ASSERT_EQUAL(t->cfg.log.retention_ms, 1000);
    /* compact only: the log itself never deletes by retention */
    CU_ASSERT_EQUAL(log_config(t->parts[0]->log)->retention_ms, -1);
    const mi_config_t *dyn = part_topic_dynamic(reg, t);
    CU_ASSERT_PTR_NOT_NULL_FATAL(dyn);
    CU_ASSERT_EQUAL(dyn->n, 2);
    CU_ASSERT_EQUAL(t->parts[1]->leader_epoch, 0);
    /* the metadata log itself is no topic */
    CU_ASSERT_PTR_NULL(part_topic_get(reg, META_LOG_TOPIC, strlen(META_LOG_TOPIC)));
}

/* Every refusal, with Kafka's code, leaves the data dir as it was. */
static void test_create_refused(void)
{
    char before[4096];
    ctl_kv_t unknown[] = {{"retention.ms", "-5"}, {"foo.bar", "1"}};
    ctl_kv_t bad[] = {{"segment.bytes", "1000"}};
    ctl_kv_t null[] = {{"retention.ms", NULL}};
    ctl_kv_t lag[] = {{"min.compaction.lag.ms", "10"}, {"max.compaction.lag.ms", "5"}};
    char err[512];

    create("a.b", 1, NULL, 0, 0);
    snprintf(before, sizeof(before), "%s", listing());
    int64_t leo = log_end_offset(reg->meta->log);
    create("orders", 1, NULL, 0, 36);
    create("a_b", 1, NULL, 0, 17);
    create("bad name", 1, NULL, 0, 17);
    create("", 1, NULL, 0, 17);
    create("..", 1, NULL, 0, 17);
    create(META_LOG_TOPIC, 1, NULL, 0, 42);
    create("zero", 0, NULL, 0, 37);
    create("neg", -3, NULL, 0, 37);
    create("unk", 0, unknown, 2, 40); /* unknown key before bad values and count */
    create("badv", 1, bad, 1, 40);
    create("nullv", 1, null, 1, 40);
    create("lag", 1, lag, 2, 40);
    CU_ASSERT_STRING_EQUAL(listing(), before);
    CU_ASSERT_EQUAL(log_end_offset(reg->meta->log), leo);
    CU_ASSERT_EQUAL(t_create("unk", 1, unknown, 2, 1, NULL, err, sizeof(err)), 40);
    CU_ASSERT_STRING_EQUAL(err, "Unknown topic config name: foo.bar");
    CU_ASSERT_EQUAL(t_create("a_b", 1, NULL, 0, 1, NULL, err, sizeof(err)), 17);
    CU_ASSERT_STRING_EQUAL(err, "Topic 'a_b' collides with existing topic: a.b");
}

static void test_alter_configs(void)
{
    topic_t *t = part_topic_get(reg, "orders", 6);
    ctl_kv_t set[] = {{"retention.ms", "5000"}, {"cleanup.policy", "delete"},
                       {"segment.bytes", "2097152"}};
    ctl_kv_t del[] = {{"segment.bytes", NULL}, {"no.such.key", NULL}};
    ctl_kv_t bad[] = {{"retention.ms", "x"}};
    ctl_kv_t unk[] = {{"foo", "1"}};
    ctl_kv_t repl[] = {{"max.message.bytes", "2000"}};
    char err[512];
    int64_t leo = log_end_offset(reg->meta->log);

    CU_ASSERT_EQUAL(t_alter(t, set, 3, 0, 1, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(log_end_offset(reg->meta->log), leo); /* validate only */
    CU_ASSERT_EQUAL(t->cfg.log.retention_ms, 1000);
    CU_ASSERT_EQUAL(t_alter(t, set, 3, 0, 0, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(t->cfg.log.retention_ms, 5000);
    CU_ASSERT(t->cfg.cleanup_delete && !t->cfg.compacted);
    /* the live logs have it at once (retention and roll read it) */
    for (int i = 0; i < 3; i++) {
        CU_ASSERT_EQUAL(log_config(t->parts[i]->log)->retention_ms, 5000);
        CU_ASSERT_EQUAL(log_config(t->parts[i]->log)->segment_bytes, 2097152);
    }
    CU_ASSERT_EQUAL(t_alter(t, del, 2, 0, 0, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(log_config(t->parts[0]->log)->segment_bytes, 1073741824);
    leo = log_end_offset(reg->meta->log);
    CU_ASSERT_EQUAL(t_alter(t, bad, 1, 0, 0, err, sizeof(err)), 40);
    CU_ASSERT_EQUAL(t_alter(t, unk, 1, 0, 0, err, sizeof(err)), 40);
    CU_ASSERT_STRING_EQUAL(err, "Unknown topic config name: foo");
    CU_ASSERT_EQUAL(log_end_offset(reg->meta->log), leo);
    CU_ASSERT_EQUAL(t->cfg.log.retention_ms, 5000);
    /* legacy AlterConfigs replaces the whole set */
    CU_ASSERT_EQUAL(t_alter(t, repl, 1, 1, 0, err, sizeof(err)), 0);
    const mi_config_t *dyn = part_topic_dynamic(reg, t);
    CU_ASSERT_EQUAL_FATAL(dyn->n, 1);
    CU_ASSERT_STRING_EQUAL(dyn->v[0].key, "max.message.bytes");
    CU_ASSERT_EQUAL(t->cfg.log.retention_ms, 604800000);
    CU_ASSERT_EQUAL(t->cfg.max_message_bytes, 2000);
    ctl_kv_t back[] = {{"retention.ms", "5000"}};
    CU_ASSERT_EQUAL(t_alter(t, back, 1, 0, 0, err, sizeof(err)), 0);
}

static void test_add_partitions(void)
{
    topic_t *t = part_topic_get(reg, "orders", 6);
    char err[512];

    CU_ASSERT_EQUAL(t_add_parts(t, 3, 0, err, sizeof(err)), 37);
    CU_ASSERT_STRING_EQUAL(err, "Topic already has 3 partition(s).");
    CU_ASSERT_EQUAL(t_add_parts(t, 2, 0, err, sizeof(err)), 37);
    CU_ASSERT_STRING_EQUAL(err, "The topic orders currently has 3 partition(s); 2 would not be "
                                "an increase.");
    CU_ASSERT_EQUAL(t_add_parts(t, 5, 1, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(t->nparts, 3);
    CU_ASSERT(!exists("orders-3"));
    CU_ASSERT_EQUAL(t_add_parts(t, 5, 0, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(t->nparts, 5);
    CU_ASSERT(exists("orders-4"));
    CU_ASSERT_EQUAL(log_config(t->parts[4]->log)->retention_ms, 5000);
}

static int woken;
static void on_wake(part_watch_t *w)
{
    (void)w;
    woken++;
}

static void test_delete_and_recreate(void)
{
    topic_t *t = part_topic_get(reg, "a.b", 3);
    part_watch_t w = {NULL, NULL, on_wake, NULL};
    uint8_t old[16];

    memcpy(old, t->id, 16);
    part_watch_add(t->parts[0], &w);
    CU_ASSERT_EQUAL(t_delete(t), 0);
    CU_ASSERT_EQUAL(woken, 1); /* a parked fetch is told */
    CU_ASSERT_PTR_NULL(part_topic_get(reg, "a.b", 3));
    CU_ASSERT_PTR_NULL(part_topic_by_id(reg, old));
    CU_ASSERT(!exists("a.b-0"));
    CU_ASSERT(strstr(listing(), "-delete ") != NULL);
    /* at once: same name, new id; and a_b no longer collides */
    t = create("a.b", 2, NULL, 0, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(memcmp(t->id, old, 16) != 0);
    CU_ASSERT_EQUAL(t->nparts, 2);
    CU_ASSERT_EQUAL(t_delete(t), 0);
    CU_ASSERT_PTR_NOT_NULL(create("a_b", 1, NULL, 0, 0));
}

/* After a restart everything is as it was. */
static void test_restart(void)
{
    uint8_t id[16];
    memcpy(id, part_topic_get(reg, "orders", 6)->id, 16);
    close_all();
    open_all();
    topic_t *t = part_topic_get(reg, "orders", 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(!memcmp(t->id, id, 16));
    CU_ASSERT_EQUAL(t->nparts, 5);
    CU_ASSERT_EQUAL(t->cfg.log.retention_ms, 5000);
    CU_ASSERT_EQUAL(t->cfg.max_message_bytes, 2000);
    CU_ASSERT_EQUAL(log_config(t->parts[3]->log)->retention_ms, 5000);
    CU_ASSERT_PTR_NULL(part_topic_get(reg, "a.b", 3));
    CU_ASSERT_PTR_NOT_NULL(part_topic_get(reg, "a_b", 3));
}

/* A partition directory the metadata log does not know (a topic deleted
 * just before a crash, before its directories were renamed) is deleted at
 * the next start; a partition the image has but the disk lost is made. */
static void test_strays(void)
{
    uint8_t id[16] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
    CU_ASSERT_PTR_NOT_NULL(log_mgr_create(mgr, "ghost", 0, id, NULL, NOW));
    CU_ASSERT_PTR_NOT_NULL(log_mgr_create(mgr, "orders", 7, NULL, NULL, NOW));
    close_all();
    CU_ASSERT(exists("ghost-0") && exists("orders-7"));
    open_all();
    CU_ASSERT(!exists("ghost-0") && !exists("orders-7"));
    CU_ASSERT_PTR_NULL(log_mgr_get(mgr, "ghost", 0));
    CU_ASSERT_PTR_NULL(part_topic_get(reg, "ghost", 5));
    CU_ASSERT_EQUAL(part_topic_get(reg, "orders", 6)->nparts, 5);
}

/* A data dir written before the metadata log existed: its topics are
 * adopted with the ids in partition.metadata. */
static void test_synthesize(void)
{
    uint8_t id[16];
    char path[600];
    memcpy(id, part_topic_get(reg, "orders", 6)->id, 16);
    close_all();
    snprintf(path, sizeof(path), "%s/%s-0", tmpdir, META_LOG_TOPIC);
    nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    open_all();
    topic_t *t = part_topic_get(reg, "orders", 6);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(!memcmp(t->id, id, 16));
    CU_ASSERT_EQUAL(t->nparts, 5);
    CU_ASSERT_EQUAL(meta_image_feature(&reg->meta->img, "metadata.version"),
                    META_LOG_METADATA_VERSION);
    /* once: the next start replays what was written */
    close_all();
    open_all();
    CU_ASSERT_EQUAL(part_topic_get(reg, "orders", 6)->nparts, 5);
}

static void test_recompress(void)
{
    ctl_kv_t kv[] = {{"compression.type", "gzip"}};
    topic_t *t = create("zipped", 1, kv, 1, 0);
    log_record_t recs[3];
    log_batch_build_t opt;
    log_batch_hdr_t h;
    buf_t in, out;
    int rewritten;

    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    memset(recs, 0, sizeof(recs));
    for (int i = 0; i < 3; i++) {
        recs[i].timestamp = NOW + i;
        recs[i].key = (const uint8_t *)"k";
        recs[i].key_len = 1;
        recs[i].value = (const uint8_t *)"value value value";
        recs[i].value_len = 17;
    }
    buf_init(&in);
    buf_init(&out);
    log_batch_build_init(&opt);
    opt.producer_id = 42;
    opt.producer_epoch = 3;
    opt.base_sequence = 7;
    CU_ASSERT_EQUAL_FATAL(log_batch_build(&in, &opt, recs, 3), 0);
    CU_ASSERT_EQUAL(part_recompress(t->parts[0], in.p, in.len, &out, &rewritten), 0);
    CU_ASSERT_EQUAL_FATAL(rewritten, 1);
    CU_ASSERT_EQUAL_FATAL(log_batch_hdr_parse(out.p, out.len, &h), 0);
    CU_ASSERT_EQUAL(LOG_BATCH_ATTR_CODEC(h.attributes), LOG_BATCH_CODEC_GZIP);
    CU_ASSERT_EQUAL(h.records_count, 3);
    CU_ASSERT_EQUAL(h.producer_id, 42);
    CU_ASSERT_EQUAL(h.producer_epoch, 3);
    CU_ASSERT_EQUAL(h.base_sequence, 7);
    CU_ASSERT_EQUAL(h.max_timestamp, NOW + 2);
    CU_ASSERT(log_batch_crc_ok(out.p, out.len));
    log_batch_iter_t *it = log_batch_iter_new(out.p, out.len);
    log_record_t r;
    int n = 0;
    while (log_batch_iter_next(it, &r) == 1) {
        CU_ASSERT_EQUAL(r.timestamp, NOW + n);
        CU_ASSERT_EQUAL(r.value_len, 17);
        n++;
    }
    CU_ASSERT_EQUAL(n, 3);
    log_batch_iter_free(it);
    /* already the topic's codec, or a "producer" topic: left alone */
    buf_t again;
    buf_init(&again);
    CU_ASSERT_EQUAL(part_recompress(t->parts[0], out.p, out.len, &again, &rewritten), 0);
    CU_ASSERT_EQUAL(rewritten, 0);
    CU_ASSERT_EQUAL(part_recompress(part_topic_get(reg, "orders", 6)->parts[0], in.p, in.len,
                                    &again, &rewritten), 0);
    CU_ASSERT_EQUAL(rewritten, 0);
    CU_ASSERT_EQUAL(again.len, 0);
    buf_free(&again);
    buf_free(&in);
    buf_free(&out);
}

/* part_topic_create with a topic_cfg_t: the differences from the defaults
 * become dynamic configs that survive a restart. */
static void test_create_with_cfg(void)
{
    topic_cfg_t cfg;
    topic_t *t;
    part_topic_cfg_defaults(&cfg);
    cfg.compacted = true;
    cfg.cleanup_delete = false;
    cfg.log.segment_bytes = 100 * 1024 * 1024;
    ctl_op_t *op = ctl_op_new_topic(ctl, "__internal", 10, 2, &cfg, NOW);
    CU_ASSERT_EQUAL(run_op(op, NULL, 0), 0);
    ctl_op_free(op);
    close_all();
    open_all();
    t = part_topic_get(reg, "__internal", 10);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT(t->internal);
    CU_ASSERT(t->cfg.compacted && !t->cfg.cleanup_delete);
    CU_ASSERT_EQUAL(t->cfg.log.segment_bytes, 100 * 1024 * 1024);
    CU_ASSERT_EQUAL(part_topic_dynamic(reg, t)->n, 2);
}

/* A failed fsync takes the metadata log offline: every change is then
 * refused with the reason, no partition log is created or removed, and
 * the topics there are keep working; a restart brings the log back. */
static void test_metadata_log_offline(void)
{
    ctl_kv_t kv[] = {{"retention.ms", "5000"}};
    topic_t *t = part_topic_get(reg, "__internal", 10), *made;
    char err[512], before[4096];

    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_FALSE(ctl_offline(ctl));
    CU_ASSERT_EQUAL(fault_fail_after(FAULT_SYNC, 0, EIO), 0);
    CU_ASSERT_EQUAL(t_alter(t, kv, 1, 0, 0, err, sizeof(err)), 56);
    fault_reset();
    CU_ASSERT_TRUE(ctl_offline(ctl));
    CU_ASSERT_STRING_EQUAL(err, CTL_OFFLINE_MSG);
    snprintf(before, sizeof(before), "%s", listing());
    err[0] = '\0';
    CU_ASSERT_EQUAL(t_create("later", 2, NULL, 0, 0, &made, err, sizeof(err)), 56);
    CU_ASSERT_STRING_EQUAL(err, CTL_OFFLINE_MSG);
    CU_ASSERT_EQUAL(t_add_parts(t, 4, 0, err, sizeof(err)), 56);
    CU_ASSERT_EQUAL(t_delete(t), 56);
    CU_ASSERT_STRING_EQUAL(listing(), before);
    CU_ASSERT_EQUAL(part_topic_get(reg, "__internal", 10), t);
    CU_ASSERT_EQUAL(t->nparts, 2);
    CU_ASSERT_FALSE(part_offline(t->parts[0]));
    close_all();
    open_all();
    CU_ASSERT_FALSE(ctl_offline(ctl));
    CU_ASSERT_EQUAL(t_create("later", 2, NULL, 0, 0, &made, err, sizeof(err)), 0);
}

/* ---- producer ids ---- */

static int64_t got_pid;

static void pid_cb(ctl_pid_wait_t *w, int64_t pid, int16_t err)
{
    (void)w;
    got_pid = err ? -2 : pid;
}

static int64_t next_pid(void)
{
    ctl_pid_wait_t w = {pid_cb, NULL};
    int64_t pid = ctl_producer_id(ctl, &w);
    return pid >= 0 ? pid : got_pid; /* without a pool the block commits in the call */
}

/* Ids come in blocks of 1000 committed as ProducerIdsRecords: unique and
 * increasing, never handed out again after a restart, and above what an
 * older data dir's block file had handed out. */
static void test_producer_ids(void)
{
    char path[600];
    int64_t first = next_pid(), last = first;
    CU_ASSERT(first >= 0);
    for (int i = 1; i < 1500; i++) {
        int64_t pid = next_pid();
        CU_ASSERT_EQUAL(pid, last + 1);
        last = pid;
    }
    CU_ASSERT(meta_image_feature(&reg->meta->img, "metadata.version") > 0);
    CU_ASSERT_EQUAL(reg->meta->img.next_producer_id, first + 2000);
    close_all();
    open_all();
    CU_ASSERT_EQUAL(next_pid(), first + 2000); /* the rest of the block is skipped */
    close_all();
    snprintf(path, sizeof(path), "%s/strand-producer-id-block", tmpdir);
    FILE *fp = fopen(path, "w");
    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    fprintf(fp, "%lld\n", (long long)(first + 50000));
    fclose(fp);
    open_all();
    CU_ASSERT_EQUAL(next_pid(), first + 50000);
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/strand-test-part-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    lg_set_level(LG_ERROR);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("partition registry", NULL, NULL);
    CU_add_test(s, "open", open_all);
    CU_add_test(s, "create with configs", test_create);
    CU_add_test(s, "refused creations change nothing", test_create_refused);
    CU_add_test(s, "alter configs", test_alter_configs);
    CU_add_test(s, "add partitions", test_add_partitions);
    CU_add_test(s, "delete and re-create", test_delete_and_recreate);
    CU_add_test(s, "restart", test_restart);
    CU_add_test(s, "strays", test_strays);
    CU_add_test(s, "synthesized metadata log", test_synthesize);
    CU_add_test(s, "compression.type recompression", test_recompress);
    CU_add_test(s, "create with a topic_cfg_t", test_create_with_cfg);
    CU_add_test(s, "metadata log offline", test_metadata_log_offline);
    CU_add_test(s, "producer ids", test_producer_ids);
    CU_add_test(s, "close", close_all);
    int rc = unit_run();
    nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    return rc;
}
