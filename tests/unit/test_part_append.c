/* The partition layer's append path on real logs: the checks in Kafka's
 * order, offsets and duplicates, the flush policy (a batch that asks for
 * a flush stays invisible until its round, whose fsyncs run on a worker,
 * has ended), acks=-1 as a delayed produce that waits for the high
 * watermark and times out with REQUEST_TIMED_OUT, and the read path's
 * answers (high watermark, regions, epochs). */
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log_batch.h"
#include "net/net_loop.h"
#include "net/net_pool.h"
#include "partition/part_append.h"
#include "partition/part_fetch.h"
#include "partition/part_fetcher.h"
#include "partition/part_int.h"
#include "cluster/meta_image.h"
#include "partition/part_read.h"
#include "util/kerr.h"
#include "tests/unit/unit.h"
#include "util/logging.h"

#define NOW 1700000000000LL

static char tmpdir[256];
static log_mgr_t *mgr;
static part_reg_t *reg;
static net_loop_t *loop;
static net_pool_t *pool;
static ctl_t *ctl;

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

static int setup(void)
{
    const char *dirs[1] = {tmpdir};
    log_mgr_config_t mc;
    part_reg_config_t pc;
    char err[256];

    snprintf(tmpdir, sizeof(tmpdir), "/tmp/strand-test-part-append-XXXXXX");
    if (!mkdtemp(tmpdir))
        return -1;
    memset(&mc, 0, sizeof(mc));
    mc.dirs = dirs;
    mc.ndirs = 1;
    mc.node_id = 1;
    log_config_defaults(&mc.defaults);
    if (!(mgr = log_mgr_open(&mc, NOW, err, sizeof(err))))
        return -1;
    ctl_config_t cc;
    memset(&cc, 0, sizeof(cc));
    cc.node_id = 1;
    part_topic_cfg_defaults(&cc.defaults);
    if (!(ctl = ctl_open(mgr, &cc, NOW)))
        return -1;
    memset(&pc, 0, sizeof(pc));
    pc.defaults = cc.defaults;
    pc.num_partitions = 1;
    pc.node_id = 1;
    pc.ctl = ctl;
    if (!(reg = part_reg_open_ex(mgr, &pc, NOW)) || !(loop = net_loop_new()))
        return -1;
    pool = net_pool_new(loop, 1, NULL);
    part_attach(reg, loop, pool);
    return pool ? 0 : -1;
}

static int teardown(void)
{
    net_pool_free(pool);
    part_append_shutdown(reg);
    part_reg_free(reg);
    ctl_free(ctl);
    log_mgr_close(mgr, -1);
    net_loop_free(loop);
    nftw(tmpdir, rm_cb, 16, FTW_DEPTH | FTW_PHYS);
    return 0;
}

static void stop_cb(net_loop_t *l, void *data)
{
    (void)data;
    net_loop_stop(l);
}

/* Runs the loop for ms (deferred work, pool completions, timers). */
static void run_for(int64_t ms)
{
    net_timer_add(loop, ms, stop_cb, NULL);
    net_loop_run(loop);
}

static void run_for(int64_t ms);

static void created(ctl_op_t *op)
{
    (void)op;
}

/* The controller commits in the call: it has no pool. */
static topic_t *topic(const char *name, const char *key, const char *value)
{
    ctl_kv_t kv[1] = {{key, value}};
    ctl_op_t op;
    memset(&op, 0, sizeof(op));
    op.kind = CTL_CREATE_TOPIC;
    op.name = name;
    op.name_len = strlen(name);
    op.nparts = 1;
    op.rf = -1;
    op.nassign = -1;
    op.kv = kv;
    op.nkv = key ? 1 : 0;
    op.now_ms = NOW;
    op.done = created;
    ctl_submit(ctl, &op);
    CU_ASSERT_EQUAL_FATAL(op.err, 0);
    for (int i = 0; i < 100 && !part_topic_get(reg, name, strlen(name))->parts[0]; i++)
        run_for(10); /* its log is made on the pool */
    return part_topic_get(reg, name, strlen(name));
}

/* A batch of n records "v0".."v<n-1>" (n * size bytes of values). */
static void batch(buf_t *out, int n, size_t size, int64_t pid, int32_t seq)
{
    log_record_t *r = calloc((size_t)n, sizeof(*r));
    uint8_t *val = malloc(size);
    log_batch_build_t opt;
    memset(val, 'x', size);
    for (int i = 0; i < n; i++) {
        r[i].offset = i;
        r[i].timestamp = NOW;
        r[i].key_len = -1;
        r[i].value = val;
        r[i].value_len = (int32_t)size;
    }
    log_batch_build_init(&opt);
    if (pid >= 0) {
        opt.producer_id = pid;
        opt.producer_epoch = 0;
        opt.base_sequence = seq;
    }
    buf_init(out);
    CU_ASSERT_EQUAL_FATAL(log_batch_build(out, &opt, r, n), 0);
    free(r);
    free(val);
}

static int ndone;

static void on_done(part_append_t *op)
{
    (void)op;
    ndone++;
}

static void op_init(part_append_t *op, part_append_ent_t *ents, int n, int16_t acks)
{
    memset(op, 0, sizeof(*op));
    op->reg = reg;
    op->acks = acks;
    op->origin = PART_ORIGIN_CLIENT;
    op->produce_version = 9;
    op->now_ms = NOW;
    op->timeout_ms = 300;
    op->ents = ents;
    op->nents = n;
    op->done = on_done;
    memset(ents, 0, (size_t)n * sizeof(*ents));
}

static void ent_set(part_append_ent_t *ent, const char *t, int32_t p, buf_t *b)
{
    ent->topic = t;
    ent->topic_len = strlen(t);
    ent->partition = p;
    ent->records = b ? b->p : NULL;
    ent->len = b ? (int32_t)b->len : 0;
}

/* Small appends complete in the call; offsets follow each other, a
 * retried idempotent batch is answered with its first offsets. */
static void test_offsets_and_duplicates(void)
{
    topic_t *t = topic("ap-a", NULL, NULL);
    part_append_t op;
    part_append_ent_t ent[1];
    buf_t b1, b2;

    batch(&b1, 3, 10, 7, 0);
    batch(&b2, 2, 10, 7, 3);
    ndone = 0;
    op_init(&op, ent, 1, 1);
    ent_set(&ent[0], "ap-a", 0, &b1);
    part_append(&op);
    CU_ASSERT_EQUAL(ndone, 1);
    CU_ASSERT_EQUAL(ent[0].err, 0);
    CU_ASSERT_EQUAL(ent[0].base_offset, 0);
    CU_ASSERT_EQUAL(ent[0].last_offset, 2);
    op_init(&op, ent, 1, -1);
    ent_set(&ent[0], "ap-a", 0, &b2);
    part_append(&op);
    CU_ASSERT_EQUAL(ndone, 2);
    CU_ASSERT_EQUAL(ent[0].base_offset, 3);
    CU_ASSERT_EQUAL(part_hwm(t->parts[0]), 5);
    /* the same batch again: a duplicate, nothing appended */
    buf_free(&b2); /* batch() starts a new buffer */
    batch(&b2, 2, 10, 7, 3);
    op_init(&op, ent, 1, 1);
    ent_set(&ent[0], "ap-a", 0, &b2);
    part_append(&op);
    CU_ASSERT_EQUAL(ent[0].err, 0);
    CU_ASSERT_EQUAL(ent[0].base_offset, 3);
    CU_ASSERT_EQUAL(log_end_offset(t->parts[0]->log), 5);
    buf_free(&b1);
    buf_free(&b2);
}

/* Errors in Kafka's order, each with -1 offsets; the other entries of
 * the same append go through. */
static void test_checks(void)
{
    part_append_t op;
    part_append_ent_t ent[6];
    buf_t ok, bad;

    topic("ap-b", NULL, NULL);
    batch(&ok, 1, 10, -1, -1);
    batch(&bad, 1, 10, -1, -1);
    bad.p[bad.len - 1] ^= 0xff; /* the CRC no longer matches */
    op_init(&op, ent, 6, 1);
    ent_set(&ent[0], "nope", 0, &ok);
    ent_set(&ent[1], "ap-b", 5, &ok);
    ent_set(&ent[2], "ap-b", 0, NULL);
    ent_set(&ent[3], "ap-b", 0, &bad);
    ent_set(&ent[4], "__consumer_offsets", 0, &ok);
    ent_set(&ent[5], "ap-b", 0, &ok);
    topic("__consumer_offsets", NULL, NULL);
    part_append(&op);
    CU_ASSERT_EQUAL(ent[0].err, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    CU_ASSERT_EQUAL(ent[1].err, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    CU_ASSERT_EQUAL(ent[2].err, KERR_INVALID_RECORD);
    CU_ASSERT_EQUAL(ent[3].err, KERR_CORRUPT_MESSAGE);
    CU_ASSERT_EQUAL(ent[3].verr, KERR_CORRUPT_MESSAGE);
    CU_ASSERT_EQUAL(ent[4].err, KERR_INVALID_TOPIC_EXCEPTION);
    CU_ASSERT_EQUAL(ent[5].err, 0);
    CU_ASSERT_EQUAL(ent[5].base_offset, 0);
    for (int i = 0; i < 5; i++)
        CU_ASSERT(ent[i].base_offset == -1 && ent[i].log_start_offset == -1);
    /* internal writers may write there */
    op_init(&op, ent, 1, 1);
    op.origin = PART_ORIGIN_COORDINATOR;
    ent_set(&ent[0], "__consumer_offsets", 0, &ok);
    part_append(&op);
    CU_ASSERT_EQUAL(ent[0].err, 0);
    op_init(&op, ent, 1, 2);
    ent_set(&ent[0], "ap-b", 0, &ok);
    part_append(&op);
    CU_ASSERT_EQUAL(ent[0].err, KERR_INVALID_REQUIRED_ACKS);
    buf_free(&ok);
    buf_free(&bad);
}

/* flush.messages=1: the append completes after its round (on the pool)
 * and the batch is invisible to readers until then. */
static void test_flush_policy(void)
{
    topic_t *t = topic("ap-c", "flush.messages", "1");
    part_append_t op;
    part_append_ent_t ent[1];
    buf_t b;

    batch(&b, 2, 10, -1, -1);
    ndone = 0;
    op_init(&op, ent, 1, 1);
    ent_set(&ent[0], "ap-c", 0, &b);
    part_append(&op);
    CU_ASSERT_EQUAL(ndone, 0);
    CU_ASSERT_EQUAL(log_end_offset(t->parts[0]->log), 2);
    CU_ASSERT_EQUAL(part_hwm(t->parts[0]), 0);
    CU_ASSERT_EQUAL(log_recovery_point(t->parts[0]->log), 0);
    run_for(200);
    CU_ASSERT_EQUAL(ndone, 1);
    CU_ASSERT_EQUAL(ent[0].err, 0);
    CU_ASSERT_EQUAL(part_hwm(t->parts[0]), 2);
    CU_ASSERT_EQUAL(log_recovery_point(t->parts[0]->log), 2);
    buf_free(&b);
}

/* Large appends are validated and written on the pool and complete on
 * the loop. */
static void test_pool_path(void)
{
    topic_t *t = topic("ap-d", NULL, NULL);
    part_append_t op;
    part_append_ent_t ent[1];
    buf_t b;

    batch(&b, 40, 1024, -1, -1);
    ndone = 0;
    op_init(&op, ent, 1, -1);
    ent_set(&ent[0], "ap-d", 0, &b);
    part_append(&op);
    CU_ASSERT_EQUAL(ndone, 0);
    run_for(200);
    CU_ASSERT_EQUAL(ndone, 1);
    CU_ASSERT_EQUAL(ent[0].err, 0);
    CU_ASSERT_EQUAL(ent[0].last_offset, 39);
    CU_ASSERT_EQUAL(part_hwm(t->parts[0]), 40);
    buf_free(&b);
}

/* acks=-1 with a second in-sync replica that lags: a delayed produce,
 * completed when that replica catches up, or REQUEST_TIMED_OUT. */
static void test_acks_all_waits(void)
{
    topic_t *t = topic("ap-e", NULL, NULL);
    part_t *part = t->parts[0];
    part_append_t op;
    part_append_ent_t ent[1];
    buf_t b;

    /* pretend node 2 is a replica in the ISR with nothing yet */
    part->replicas = realloc(part->replicas, 2 * sizeof(*part->replicas));
    part->replicas[1].node_id = 2;
    part->replicas[1].log_end_offset = 0;
    part->nreplicas = 2;
    part->isr = realloc(part->isr, 2 * sizeof(*part->isr));
    part->isr[1] = 2;
    part->nisr = 2;
    batch(&b, 1, 10, -1, -1);
    ndone = 0;
    op_init(&op, ent, 1, -1);
    ent_set(&ent[0], "ap-e", 0, &b);
    part_append(&op);
    CU_ASSERT_EQUAL(ndone, 0);
    CU_ASSERT_EQUAL(part_hwm(part), 0);
    run_for(50);
    CU_ASSERT_EQUAL(ndone, 0);
    part->replicas[1].log_end_offset = 1; /* it fetched */
    CU_ASSERT(part_update_hwm(part));
    part_notify(part);
    run_for(50);
    CU_ASSERT_EQUAL(ndone, 1);
    CU_ASSERT_EQUAL(ent[0].err, 0);
    /* and once more, never caught up: timed out */
    buf_free(&b); /* batch() starts a new buffer */
    batch(&b, 1, 10, -1, -1);
    op_init(&op, ent, 1, -1);
    ent_set(&ent[0], "ap-e", 0, &b);
    part_append(&op);
    run_for(500);
    CU_ASSERT_EQUAL(ndone, 2);
    CU_ASSERT_EQUAL(ent[0].err, KERR_REQUEST_TIMED_OUT);
    part->nisr = part->nreplicas = 1;
    buf_free(&b);
}

/* The high watermark waits for the maximal ISR (a pending expand's new
 * member too) and stays while the ISR is below min.insync.replicas. */
static void test_hwm_isr(void)
{
    topic_t *t = topic("ap-h", NULL, NULL);
    part_t *part = t->parts[0];
    int32_t me = part->node_id;
    buf_t b;
    part_append_t op;
    part_append_ent_t ent[1];

    part->replicas = realloc(part->replicas, 3 * sizeof(*part->replicas));
    for (int i = 1; i < 3; i++) {
        memset(&part->replicas[i], 0, sizeof(part->replicas[i]));
        part->replicas[i].node_id = me + i;
        part->replicas[i].broker_epoch = -1;
    }
    part->nreplicas = 3;
    part->isr = realloc(part->isr, 2 * sizeof(*part->isr));
    part->isr[1] = me + 1;
    part->nisr = 2;
    part->pend_isr = calloc(3, sizeof(*part->pend_isr));
    part->pend_isr[0] = me;
    part->pend_isr[1] = me + 1;
    part->pend_isr[2] = me + 2;
    part->npend = 3;
    part->pend_state = PART_ISR_SENT;
    CU_ASSERT_EQUAL(part_isr_maximal(part), 3);
    batch(&b, 2, 10, -1, -1);
    op_init(&op, ent, 1, 1);
    ent_set(&ent[0], "ap-h", 0, &b);
    part_append(&op);
    run_for(20);
    part->replicas[1].log_end_offset = 2;
    part_update_hwm(part);
    CU_ASSERT_EQUAL(part_hwm(part), 0); /* the joining member has nothing */
    part->replicas[2].log_end_offset = 1;
    part_update_hwm(part);
    CU_ASSERT_EQUAL(part_hwm(part), 1);
    part_isr_clear(part);
    CU_ASSERT_EQUAL(part_isr_maximal(part), 2);
    part_update_hwm(part);
    CU_ASSERT_EQUAL(part_hwm(part), 2);
    /* under min.insync.replicas: it stays */
    buf_free(&b);
    batch(&b, 1, 10, -1, -1);
    op_init(&op, ent, 1, 1);
    ent_set(&ent[0], "ap-h", 0, &b);
    part_append(&op);
    run_for(20);
    part->replicas[1].log_end_offset = 3;
    part->topic->cfg.min_insync_replicas = 3;
    CU_ASSERT(!part_update_hwm(part));
    CU_ASSERT_EQUAL(part_hwm(part), 2);
    part->topic->cfg.min_insync_replicas = 2;
    CU_ASSERT(part_update_hwm(part));
    CU_ASSERT_EQUAL(part_hwm(part), 3);
    part->topic->cfg.min_insync_replicas = 1;
    part->nisr = part->nreplicas = 1;
    buf_free(&b);
}

static int nfetched;

static void on_fetched(part_fetch_t *f)
{
    (void)f;
    nfetched++;
}

/* A fetch at the end waits, and an append wakes it on a later turn. */
static void test_long_poll(void)
{
    topic_t *t = topic("ap-f", NULL, NULL);
    part_fetch_t f;
    part_fetch_item_t it;
    part_append_t op;
    part_append_ent_t ent[1];
    buf_t b;

    memset(&f, 0, sizeof(f));
    memset(&it, 0, sizeof(it));
    memcpy(it.topic_id, t->id, 16);
    it.by_id = 1;
    it.rd.max_bytes = 1 << 20;
    it.rd.current_leader_epoch = -1;
    it.rd.last_fetched_epoch = -1;
    f.reg = reg;
    f.max_wait_ms = 2000;
    f.min_bytes = 1;
    f.max_bytes = 1 << 20;
    f.items = &it;
    f.nitems = 1;
    f.done = on_fetched;
    nfetched = 0;
    part_fetch(&f);
    CU_ASSERT_EQUAL(nfetched, 0);
    batch(&b, 1, 10, -1, -1);
    op_init(&op, ent, 1, 1);
    ent_set(&ent[0], "ap-f", 0, &b);
    part_append(&op);
    CU_ASSERT_EQUAL(nfetched, 0); /* not inside the append */
    run_for(50);
    CU_ASSERT_EQUAL(nfetched, 1);
    CU_ASSERT_EQUAL(it.rd.err, 0);
    CU_ASSERT_EQUAL(it.rd.high_watermark, 1);
    CU_ASSERT_EQUAL(it.rd.len, (int32_t)b.len);
    CU_ASSERT(it.rd.fd >= 0);
    close(it.rd.fd);
    /* an unknown topic id is answered at once */
    it.topic_id[0] ^= 1;
    part_fetch(&f);
    CU_ASSERT_EQUAL(nfetched, 2);
    CU_ASSERT_EQUAL(it.rd.err, KERR_UNKNOWN_TOPIC_ID);
    CU_ASSERT_EQUAL(it.rd.high_watermark, -1);
    buf_free(&b);
}

/* ---- roles and replica fetches (part_replica.c) ---- */

static int32_t r_replicas[3] = {1, 2, 3};

static void role(part_t *part, int32_t leader, int32_t epoch, int32_t *isr, int32_t nisr)
{
    mi_part_t mp;
    memset(&mp, 0, sizeof(mp));
    mp.present = true;
    mp.leader = leader;
    mp.leader_epoch = epoch;
    mp.partition_epoch = epoch;
    mp.replicas = r_replicas;
    mp.nreplicas = 3;
    mp.isr = isr;
    mp.nisr = nisr;
    part_set_role(reg, part, &mp, NOW);
}

/* A follower's fetch of t-0 at offset: the read's result. */
static part_read_t replica_fetch(topic_t *t, int32_t replica, int64_t broker_epoch,
                                 int32_t leader_epoch, int64_t offset)
{
    part_fetch_t f;
    part_fetch_item_t it;
    memset(&f, 0, sizeof(f));
    memset(&it, 0, sizeof(it));
    memcpy(it.topic_id, t->id, 16);
    it.by_id = 1;
    it.rd.fetch_offset = offset;
    it.rd.max_bytes = 1 << 20;
    it.rd.current_leader_epoch = leader_epoch;
    it.rd.last_fetched_epoch = -1;
    f.reg = reg;
    f.max_bytes = 1 << 20;
    f.items = &it;
    f.nitems = 1;
    f.done = on_fetched;
    f.replica = replica >= 0;
    f.replica_id = replica;
    f.replica_epoch = broker_epoch;
    part_fetch(&f);
    if (it.rd.fd >= 0)
        close(it.rd.fd);
    return it.rd;
}

/* The leader reads followers up to its log end, takes their fetch offsets
 * as their log ends and moves the high watermark to the smallest of the
 * ISR's, which completes an acks=-1 produce. */
static void test_replica_hwm(void)
{
    topic_t *t = topic("ap-r", NULL, NULL);
    part_t *part = t->parts[0];
    int32_t isr[3] = {1, 2, 3};
    part_append_t op;
    part_append_ent_t ent[1];
    buf_t b;

    role(part, 1, 7, isr, 3);
    CU_ASSERT(part_is_leader(part));
    CU_ASSERT_EQUAL(part->leader_epoch, 7);
    CU_ASSERT_EQUAL(log_latest_epoch(part->log), 7);
    CU_ASSERT_EQUAL(part->nreplicas, 3);
    CU_ASSERT_EQUAL(part->replicas[1].log_end_offset, -1);
    batch(&b, 3, 10, -1, -1);
    ndone = 0;
    op_init(&op, ent, 1, -1);
    op.timeout_ms = 5000;
    ent_set(&ent[0], "ap-r", 0, &b);
    part_append(&op);
    run_for(20);
    CU_ASSERT_EQUAL(ndone, 0); /* the followers have nothing yet */
    CU_ASSERT_EQUAL(part_hwm(part), 0);
    part_read_t rd = replica_fetch(t, 2, 10, 7, 0);
    CU_ASSERT_EQUAL(rd.err, 0);
    CU_ASSERT_EQUAL(rd.len, (int32_t)b.len); /* past the high watermark */
    CU_ASSERT_EQUAL(rd.high_watermark, 0);
    rd = replica_fetch(t, 2, 10, 7, 3);
    CU_ASSERT_EQUAL(part->replicas[1].log_end_offset, 3);
    CU_ASSERT(part->replicas[1].last_caught_up_ms > NOW); /* at the log end: now */
    CU_ASSERT_EQUAL(part_hwm(part), 0); /* 3 is unknown yet */
    rd = replica_fetch(t, 3, 11, 7, 1);
    CU_ASSERT_EQUAL(part_hwm(part), 1);
    CU_ASSERT_EQUAL(part->replicas[2].last_caught_up_ms, NOW); /* behind: as when it led */
    run_for(20);
    CU_ASSERT_EQUAL(ndone, 0);
    rd = replica_fetch(t, 3, 11, 7, 3);
    CU_ASSERT_EQUAL(part_hwm(part), 3);
    run_for(20);
    CU_ASSERT_EQUAL(ndone, 1);
    CU_ASSERT_EQUAL(ent[0].err, 0);
    CU_ASSERT_EQUAL(ent[0].base_offset, 0);
    /* Kafka's checks of the fetching replica */
    CU_ASSERT_EQUAL(replica_fetch(t, 2, 9, 7, 3).err, KERR_NOT_LEADER_OR_FOLLOWER); /* stale */
    CU_ASSERT_EQUAL(replica_fetch(t, 4, 1, 7, 3).err, KERR_UNKNOWN_LEADER_EPOCH);
    CU_ASSERT_EQUAL(replica_fetch(t, 4, 1, -1, 3).err, KERR_NOT_LEADER_OR_FOLLOWER);
    CU_ASSERT_EQUAL(replica_fetch(t, 2, 10, 6, 3).err, KERR_FENCED_LEADER_EPOCH);
    CU_ASSERT_EQUAL(replica_fetch(t, 2, 10, 8, 3).err, KERR_UNKNOWN_LEADER_EPOCH);
    /* an ISR without the slow replica: the high watermark follows the others */
    buf_free(&b);
    batch(&b, 2, 10, -1, -1);
    op_init(&op, ent, 1, 1);
    ent_set(&ent[0], "ap-r", 0, &b);
    part_append(&op);
    run_for(20);
    int32_t isr2[2] = {1, 2};
    role(part, 1, 7, isr2, 2);
    CU_ASSERT_EQUAL(part->replicas[1].log_end_offset, 3); /* kept: same leadership */
    replica_fetch(t, 2, 10, 7, 5);
    CU_ASSERT_EQUAL(part_hwm(part), 5);
    buf_free(&b);
}

/* A leader that becomes follower: its waiting acks=-1 produce answers
 * NOT_LEADER_OR_FOLLOWER, and produce and consumer fetches are refused. */
static void test_replica_follower(void)
{
    topic_t *t = topic("ap-s", NULL, NULL);
    part_t *part = t->parts[0];
    int32_t isr[3] = {1, 2, 3};
    part_append_t op;
    part_append_ent_t ent[1];
    buf_t b;

    role(part, 1, 3, isr, 3);
    batch(&b, 1, 10, -1, -1);
    ndone = 0;
    op_init(&op, ent, 1, -1);
    op.timeout_ms = 5000;
    ent_set(&ent[0], "ap-s", 0, &b);
    part_append(&op);
    run_for(20);
    CU_ASSERT_EQUAL(ndone, 0);
    role(part, 2, 4, isr, 3);
    CU_ASSERT(!part_is_leader(part));
    CU_ASSERT_EQUAL(part->fetching, 2);
    CU_ASSERT_EQUAL(part->leader_epoch, 4);
    run_for(20);
    CU_ASSERT_EQUAL(ndone, 1);
    CU_ASSERT_EQUAL(ent[0].err, KERR_NOT_LEADER_OR_FOLLOWER);
    buf_free(&b);
    batch(&b, 1, 10, -1, -1);
    op_init(&op, ent, 1, 1);
    ent_set(&ent[0], "ap-s", 0, &b);
    part_append(&op);
    run_for(20);
    CU_ASSERT_EQUAL(ent[0].err, KERR_NOT_LEADER_OR_FOLLOWER);
    CU_ASSERT_EQUAL(replica_fetch(t, -1, -1, -1, 0).err, KERR_NOT_LEADER_OR_FOLLOWER);
    CU_ASSERT_EQUAL(replica_fetch(t, 3, 1, 4, 0).err, KERR_NOT_LEADER_OR_FOLLOWER);
    /* leader again at a later epoch: it starts at the log end */
    role(part, 1, 5, isr, 3);
    CU_ASSERT_EQUAL(part->fetching, -1);
    CU_ASSERT_EQUAL(log_latest_epoch(part->log), 5);
    CU_ASSERT_EQUAL(part->replicas[1].log_end_offset, -1); /* forgotten */
    buf_free(&b);
}

/* A quorum's node leads nothing until the controller says it has caught
 * up: its image (a snapshot at start, a replay under way) may name it a
 * leader that is one no more. Then the image of now gives the roles: here
 * the image names this node (1) the leader. */
static void test_roles_wait_catch_up(void)
{
    topic_t *t = topic("ap-w", NULL, NULL);
    part_t *part = t->parts[0];
    int32_t isr[1] = {1};
    part_append_t op;
    part_append_ent_t ent[1];
    buf_t b;

    reg->quorum = true;
    reg->caught_up = false;
    role(part, 1, 3, isr, 1);
    CU_ASSERT(!part_is_leader(part));
    CU_ASSERT_EQUAL(part->fetching, -1);
    batch(&b, 1, 10, -1, -1);
    op_init(&op, ent, 1, 1);
    ent_set(&ent[0], "ap-w", 0, &b);
    part_append(&op);
    run_for(20);
    CU_ASSERT_EQUAL(ent[0].err, KERR_NOT_LEADER_OR_FOLLOWER);
    CU_ASSERT_EQUAL(log_end_offset(part->log), 0);
    part_reg_caught_up(reg, NOW);
    CU_ASSERT(part_is_leader(part));
    CU_ASSERT_EQUAL(part->leader_epoch, meta_image_topic(&reg->meta->img, "ap-w", 4)
                                            ->parts[0].leader_epoch);
    reg->quorum = false;
    buf_free(&b);
}

/* A diverging epoch in a leader's answer: where the follower truncates
 * (Kafka's getOffsetTruncationState). The log holds epoch 3 at 0-2 and
 * epoch 5 at 3-4. */
static void test_truncation_point(void)
{
    topic_t *t = topic("ap-t", NULL, NULL);
    part_t *part = t->parts[0];
    int32_t isr[1] = {1};
    part_append_t op;
    part_append_ent_t ent[1];
    buf_t b;

    for (int32_t epoch = 3; epoch <= 5; epoch += 2) {
        role(part, 1, epoch, isr, 1);
        batch(&b, epoch == 3 ? 3 : 2, 10, -1, -1);
        op_init(&op, ent, 1, 1);
        ent_set(&ent[0], "ap-t", 0, &b);
        part_append(&op);
        run_for(20);
        CU_ASSERT_EQUAL(ent[0].err, 0);
        buf_free(&b);
    }
    CU_ASSERT_EQUAL(log_end_offset(part->log), 5);
    CU_ASSERT_EQUAL(part_fetcher_truncation(part->log, 5, 4), 4); /* the leader's end of 5 */
    CU_ASSERT_EQUAL(part_fetcher_truncation(part->log, 5, 9), 5); /* never past ours */
    CU_ASSERT_EQUAL(part_fetcher_truncation(part->log, 4, 3), 3); /* 4 unknown: the end of 3 */
    CU_ASSERT_EQUAL(part_fetcher_truncation(part->log, 3, 2), 2);
    CU_ASSERT_EQUAL(part_fetcher_truncation(part->log, 2, 0), 0); /* nothing at or below 2 */
}

int main(void)
{
    lg_set_level(LG_ERROR);
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("part_append", setup, teardown);
    CU_add_test(s, "offsets and duplicates", test_offsets_and_duplicates);
    CU_add_test(s, "checks in Kafka's order", test_checks);
    CU_add_test(s, "flush policy on the pool", test_flush_policy);
    CU_add_test(s, "large appends on the pool", test_pool_path);
    CU_add_test(s, "acks=-1 waits for the ISR", test_acks_all_waits);
    CU_add_test(s, "the high watermark and the ISR", test_hwm_isr);
    CU_add_test(s, "long-poll fetch", test_long_poll);
    CU_add_test(s, "replica fetches move the high watermark", test_replica_hwm);
    CU_add_test(s, "a leader becomes follower", test_replica_follower);
    CU_add_test(s, "where a diverging follower truncates", test_truncation_point);
    CU_add_test(s, "roles wait for the catch-up", test_roles_wait_catch_up);
    return unit_run();
}
