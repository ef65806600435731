/* The transaction coordinator's core (src/coord/txn.h) on a fake host: a
 * clock, an in-memory __transaction_state whose writes commit at once or
 * when the test says, producer ids counted up, and the markers it asks
 * for. Kafka's transitions and errors for InitProducerId (new ids, epoch
 * bumps, the fence of an open transaction, KIP-360 retries),
 * AddPartitionsToTxn, its verification, EndTxn (and its retries), the
 * markers and the Complete state, the abort of a transaction past its
 * timeout, the replay of the log into a new coordinator (markers written
 * again for a Prepare state), the expiry of idle ids, and the records'
 * bytes as Kafka's TransactionLog decodes them. */
#include <stdlib.h>
#include <string.h>

#include "coord/txn.h"
#include "coord/txn_rec.h"
#include "tests/unit/unit.h"
#include "util/buf.h"

#define NOW0 1700000000000LL
#define MAXW 256

typedef struct wrec_s {
    int32_t part;
    buf_t key, value;
    int tombstone;
} wrec_t;

static struct {
    int64_t now;
    int async;               /* writes wait for complete_write() */
    int16_t fail;            /* the next write fails with this */
    wrec_t w[MAXW];
    int nw;
    txn_write_done_fn *held_done;
    void *held_arg;
    int64_t next_pid;
    txn_markers_t *markers;  /* the last markers asked for */
    int nmarkers;
} fx;

static int64_t fx_now(void *ctx)
{
    (void)ctx;
    return fx.now;
}

static void fx_write(void *ctx, int32_t part, const buf_t *key, const buf_t *value,
                     txn_write_done_fn *done, void *arg)
{
    (void)ctx;
    int16_t err = fx.fail;
    fx.fail = 0;
    if (!err) {
        wrec_t *r = &fx.w[fx.nw++];
        r->part = part;
        buf_init(&r->key);
        buf_init(&r->value);
        buf_put(&r->key, key->p, key->len);
        r->tombstone = !value;
        if (value)
            buf_put(&r->value, value->p, value->len);
    }
    if (fx.async && !err) {
        fx.held_done = done;
        fx.held_arg = arg;
        return;
    }
    done(arg, err);
}

static void complete_write(void)
{
    txn_write_done_fn *d = fx.held_done;
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    fx.held_done = NULL;
    d(fx.held_arg, 0);
}

static void fx_pid(void *ctx, txn_pid_done_fn *done, void *arg)
{
    (void)ctx;
    done(arg, fx.next_pid++, 0);
}

static void fx_markers(void *ctx, txn_markers_t *m)
{
    (void)ctx;
    fx.markers = m;
    fx.nmarkers++;
}

static int32_t fx_coord_epoch(void *ctx, int32_t part)
{
    (void)ctx;
    (void)part;
    return 7;
}

static txn_coord_t *fx_coord(void)
{
    txn_config_t cfg;
    txn_env_t env = {NULL, fx_now, fx_write, fx_pid, fx_markers, fx_coord_epoch};
    txn_config_defaults(&cfg);
    txn_coord_t *c = txn_coord_new(&cfg, &env);
    for (int p = 0; p < cfg.num_partitions; p++) {
        txn_load_begin(c, p);
        txn_load_end(c, p);
    }
    return c;
}

static void fx_reset(void)
{
    for (int i = 0; i < fx.nw; i++) {
        buf_free(&fx.w[i].key);
        buf_free(&fx.w[i].value);
    }
    memset(&fx, 0, sizeof(fx));
    fx.now = NOW0;
    fx.next_pid = 1000;
}

/* answers */
static struct {
    int n;
    int16_t err;
    int64_t pid;
    int16_t epoch;
} ans;

static void pid_reply(void *arg, int16_t err, int64_t pid, int16_t epoch)
{
    (void)arg;
    ans.n++;
    ans.err = err;
    ans.pid = pid;
    ans.epoch = epoch;
}

static void err_reply(void *arg, int16_t err)
{
    (void)arg;
    ans.n++;
    ans.err = err;
}

#define ID "app-1"
#define IDL (sizeof(ID) - 1)

static int16_t init_pid(txn_coord_t *c, int64_t pid, int16_t epoch)
{
    memset(&ans, 0, sizeof(ans));
    txn_init_producer_id(c, ID, IDL, 60000, pid, epoch, pid_reply, NULL);
    CU_ASSERT_EQUAL(ans.n, 1);
    return ans.err;
}

static const txn_tp_t tps3[] = {{"a", 0}, {"a", 1}, {"b", 0}};

static int16_t add(txn_coord_t *c, int64_t pid, int16_t epoch, const txn_tp_t *tps, int n)
{
    memset(&ans, 0, sizeof(ans));
    txn_add_partitions(c, ID, IDL, pid, epoch, tps, n, err_reply, NULL);
    CU_ASSERT_EQUAL(ans.n, 1);
    return ans.err;
}

static int16_t end(txn_coord_t *c, int64_t pid, int16_t epoch, bool commit)
{
    memset(&ans, 0, sizeof(ans));
    txn_end(c, ID, IDL, pid, epoch, commit, err_reply, NULL);
    CU_ASSERT_EQUAL(ans.n, 1);
    return ans.err;
}

static const txn_t *entry(txn_coord_t *c)
{
    int16_t err;
    return txn_lookup(c, ID, IDL, &err);
}

/* The last write's value decoded. */
static txn_transit_t last_value(void)
{
    txn_transit_t to;
    CU_ASSERT_FATAL(fx.nw > 0);
    CU_ASSERT_EQUAL(txn_rec_value_decode(fx.w[fx.nw - 1].value.p, fx.w[fx.nw - 1].value.len, &to),
                    0);
    return to;
}

static void free_transit(txn_transit_t *to)
{
    for (int i = 0; i < to->ntps; i++)
        free(to->tps[i].topic);
    free(to->tps);
}

static void test_commit_cycle(void)
{
    fx_reset();
    txn_coord_t *c = fx_coord();
    txn_transit_t to;

    CU_ASSERT_EQUAL(init_pid(c, -1, -1), 0);
    CU_ASSERT_EQUAL(ans.pid, 1000);
    CU_ASSERT_EQUAL(ans.epoch, 0);
    CU_ASSERT_EQUAL(fx.nw, 1);
    CU_ASSERT_EQUAL(fx.w[0].part, txn_partition_for(c, ID, IDL));
    to = last_value();
    CU_ASSERT_EQUAL(to.state, TXN_EMPTY);
    CU_ASSERT_EQUAL(to.producer_id, 1000);
    CU_ASSERT_EQUAL(to.epoch, 0);
    CU_ASSERT_EQUAL(to.timeout_ms, 60000);
    CU_ASSERT_EQUAL(to.ntps, 0);
    CU_ASSERT_EQUAL(to.start_ms, -1);
    /* Empty's partitions are null: byte after the status is -1 (int32) */
    free_transit(&to);

    fx.now += 10;
    CU_ASSERT_EQUAL(add(c, 1000, 0, tps3, 3), 0);
    to = last_value();
    CU_ASSERT_EQUAL(to.state, TXN_ONGOING);
    CU_ASSERT_EQUAL(to.ntps, 3);
    CU_ASSERT_EQUAL(to.start_ms, NOW0 + 10);
    free_transit(&to);
    /* already in: answered without a write */
    CU_ASSERT_EQUAL(add(c, 1000, 0, tps3 + 1, 2), 0);
    CU_ASSERT_EQUAL(fx.nw, 2);
    int16_t errs[3] = {-1, -1, -1};
    txn_tp_t other = {"c", 9};
    CU_ASSERT_EQUAL(txn_verify(c, ID, IDL, 1000, 0, tps3, 2, errs), 0);
    CU_ASSERT(errs[0] == 0 && errs[1] == 0);
    CU_ASSERT_EQUAL(txn_verify(c, ID, IDL, 1000, 0, &other, 1, errs), 0);
    CU_ASSERT_EQUAL(errs[0], KERR_TRANSACTION_ABORTABLE);
    CU_ASSERT_EQUAL(txn_verify(c, ID, IDL, 1000, 1, &other, 1, errs), KERR_PRODUCER_FENCED);

    fx.now += 10;
    CU_ASSERT_EQUAL(end(c, 1000, 0, true), 0);
    to = last_value();
    CU_ASSERT_EQUAL(to.state, TXN_PREPARE_COMMIT);
    CU_ASSERT_EQUAL(to.ntps, 3);
    free_transit(&to);
    CU_ASSERT_EQUAL_FATAL(fx.nmarkers, 1);
    CU_ASSERT(fx.markers->commit && fx.markers->producer_id == 1000 && fx.markers->epoch == 0);
    CU_ASSERT_EQUAL(fx.markers->coordinator_epoch, 7);
    CU_ASSERT_EQUAL(fx.markers->n, 3);
    /* until the markers are written, a new transaction waits */
    CU_ASSERT_EQUAL(add(c, 1000, 0, tps3, 1), KERR_CONCURRENT_TRANSACTIONS);
    CU_ASSERT_EQUAL(end(c, 1000, 0, true), KERR_CONCURRENT_TRANSACTIONS);
    CU_ASSERT_EQUAL(end(c, 1000, 0, false), KERR_INVALID_TXN_STATE);
    txn_markers_done(fx.markers);
    to = last_value();
    CU_ASSERT_EQUAL(to.state, TXN_COMPLETE_COMMIT);
    CU_ASSERT_EQUAL(to.ntps, 0);
    CU_ASSERT_EQUAL(to.start_ms, NOW0 + 10);
    free_transit(&to);
    /* a retried commit succeeds, an abort of it does not */
    CU_ASSERT_EQUAL(end(c, 1000, 0, true), 0);
    CU_ASSERT_EQUAL(end(c, 1000, 0, false), KERR_INVALID_TXN_STATE);
    CU_ASSERT_EQUAL(end(c, 999, 0, true), KERR_INVALID_PRODUCER_ID_MAPPING);
    CU_ASSERT_EQUAL(end(c, 1000, 1, true), KERR_PRODUCER_FENCED);
    /* the next transaction starts from Complete */
    CU_ASSERT_EQUAL(add(c, 1000, 0, tps3, 1), 0);
    CU_ASSERT_EQUAL(entry(c)->state, TXN_ONGOING);
    txn_coord_free(c);
}

static void test_init_errors_and_bumps(void)
{
    fx_reset();
    txn_coord_t *c = fx_coord();

    memset(&ans, 0, sizeof(ans));
    txn_init_producer_id(c, ID, IDL, 900001, -1, -1, pid_reply, NULL);
    CU_ASSERT_EQUAL(ans.err, KERR_INVALID_TRANSACTION_TIMEOUT);
    txn_init_producer_id(c, "", 0, 1000, -1, -1, pid_reply, NULL);
    CU_ASSERT_EQUAL(ans.err, KERR_INVALID_REQUEST);
    CU_ASSERT_EQUAL(add(c, 1, 0, tps3, 1), KERR_INVALID_PRODUCER_ID_MAPPING);
    /* a new id's first write fails (a partition just created): the retry
     * starts over with a producer id, at epoch 0 */
    fx.fail = KERR_NOT_LEADER_OR_FOLLOWER;
    CU_ASSERT_EQUAL(init_pid(c, -1, -1), KERR_NOT_COORDINATOR);
    CU_ASSERT_EQUAL(init_pid(c, -1, -1), 0);
    CU_ASSERT(ans.pid == 1001 && ans.epoch == 0);
    fx.next_pid = 1000;
    txn_coord_free(c);
    c = fx_coord();
    CU_ASSERT_EQUAL(init_pid(c, -1, -1), 0);
    CU_ASSERT_EQUAL(init_pid(c, -1, -1), 0);
    CU_ASSERT(ans.pid == 1000 && ans.epoch == 1);
    /* KIP-360: the producer names its id and epoch: bumped again; a
     * retry of that bump (the previous epoch) gets the same answer */
    CU_ASSERT_EQUAL(init_pid(c, 1000, 1), 0);
    CU_ASSERT(ans.pid == 1000 && ans.epoch == 2);
    CU_ASSERT_EQUAL(init_pid(c, 1000, 1), 0);
    CU_ASSERT(ans.pid == 1000 && ans.epoch == 2);
    CU_ASSERT_EQUAL(init_pid(c, 1000, 0), KERR_PRODUCER_FENCED);
    CU_ASSERT_EQUAL(init_pid(c, 77, 2), KERR_PRODUCER_FENCED);
    /* a write in flight: concurrent */
    fx.async = 1;
    txn_init_producer_id(c, ID, IDL, 60000, -1, -1, pid_reply, NULL);
    CU_ASSERT_EQUAL(init_pid(c, -1, -1), KERR_CONCURRENT_TRANSACTIONS);
    memset(&ans, 0, sizeof(ans));
    complete_write();
    CU_ASSERT(ans.n == 1 && ans.err == 0 && ans.epoch == 3);
    fx.async = 0;
    /* a failed write leaves the entry as it was */
    fx.fail = KERR_NOT_ENOUGH_REPLICAS;
    CU_ASSERT_EQUAL(init_pid(c, -1, -1), KERR_COORDINATOR_NOT_AVAILABLE);
    CU_ASSERT_EQUAL(entry(c)->epoch, 3);
    CU_ASSERT_EQUAL(init_pid(c, -1, -1), 0);
    CU_ASSERT_EQUAL(ans.epoch, 4);
    txn_coord_free(c);
}

/* InitProducerId during an open transaction aborts it under a bumped
 * epoch and answers CONCURRENT_TRANSACTIONS; the retry bumps again. The
 * old producer is fenced. */
static void test_fence_open(void)
{
    fx_reset();
    txn_coord_t *c = fx_coord();
    txn_transit_t to;

    CU_ASSERT_EQUAL(init_pid(c, -1, -1), 0);
    CU_ASSERT_EQUAL(add(c, 1000, 0, tps3, 3), 0);
    CU_ASSERT_EQUAL(init_pid(c, -1, -1), KERR_CONCURRENT_TRANSACTIONS);
    to = last_value();
    CU_ASSERT_EQUAL(to.state, TXN_PREPARE_ABORT);
    CU_ASSERT_EQUAL(to.epoch, 1);
    free_transit(&to);
    CU_ASSERT_EQUAL_FATAL(fx.nmarkers, 1);
    CU_ASSERT(!fx.markers->commit && fx.markers->epoch == 1 && fx.markers->n == 3);
    CU_ASSERT_EQUAL(init_pid(c, -1, -1), KERR_CONCURRENT_TRANSACTIONS);
    CU_ASSERT_EQUAL(end(c, 1000, 0, true), KERR_PRODUCER_FENCED);
    txn_markers_done(fx.markers);
    CU_ASSERT_EQUAL(entry(c)->state, TXN_COMPLETE_ABORT);
    CU_ASSERT_EQUAL(init_pid(c, -1, -1), 0);
    CU_ASSERT_EQUAL(ans.epoch, 2);
    CU_ASSERT_EQUAL(add(c, 1000, 0, tps3, 1), KERR_PRODUCER_FENCED);
    txn_coord_free(c);
}

static void test_timeout_abort(void)
{
    fx_reset();
    txn_coord_t *c = fx_coord();

    CU_ASSERT_EQUAL(init_pid(c, -1, -1), 0);
    CU_ASSERT_EQUAL(add(c, 1000, 0, tps3, 2), 0);
    fx.now += 59999;
    txn_abort_timed_out(c);
    CU_ASSERT_EQUAL(entry(c)->state, TXN_ONGOING);
    fx.now += 1;
    txn_abort_timed_out(c);
    CU_ASSERT_EQUAL(entry(c)->state, TXN_PREPARE_ABORT);
    CU_ASSERT_EQUAL(entry(c)->epoch, 1);
    CU_ASSERT_EQUAL_FATAL(fx.nmarkers, 1);
    CU_ASSERT(!fx.markers->commit && fx.markers->epoch == 1);
    /* markers lost (say a leader gone): the sweep does not resend while
     * they are out, then does once they ended without completing */
    txn_abort_timed_out(c);
    CU_ASSERT_EQUAL(fx.nmarkers, 1);
    txn_markers_done(fx.markers);
    CU_ASSERT_EQUAL(entry(c)->state, TXN_COMPLETE_ABORT);
    CU_ASSERT_EQUAL(end(c, 1000, 0, false), KERR_PRODUCER_FENCED);
    txn_coord_free(c);
}

/* Every write replayed into a new coordinator gives the same entries; a
 * Prepare state gets its markers again at the end of the load. */
static void test_replay(void)
{
    fx_reset();
    txn_coord_t *c = fx_coord(), *d;
    txn_config_t cfg;
    txn_env_t env = {NULL, fx_now, fx_write, fx_pid, fx_markers, fx_coord_epoch};
    int32_t part = txn_partition_for(c, ID, IDL);

    CU_ASSERT_EQUAL(init_pid(c, -1, -1), 0);
    CU_ASSERT_EQUAL(add(c, 1000, 0, tps3, 3), 0);
    CU_ASSERT_EQUAL(end(c, 1000, 0, true), 0); /* markers never answered */
    txn_coord_free(c);
    txn_markers_free(fx.markers); /* the host going down with them */
    fx.markers = NULL;
    fx.nmarkers = 0;

    txn_config_defaults(&cfg);
    d = txn_coord_new(&cfg, &env);
    CU_ASSERT_EQUAL(txn_part_state(d, part), KERR_NOT_COORDINATOR);
    txn_load_begin(d, part);
    CU_ASSERT_EQUAL(txn_part_state(d, part), KERR_COORDINATOR_LOAD_IN_PROGRESS);
    memset(&ans, 0, sizeof(ans));
    txn_init_producer_id(d, ID, IDL, 60000, -1, -1, pid_reply, NULL);
    CU_ASSERT_EQUAL(ans.err, KERR_COORDINATOR_LOAD_IN_PROGRESS);
    int nw = fx.nw;
    for (int i = 0; i < nw; i++)
        CU_ASSERT_EQUAL(txn_load_record(d, part, fx.w[i].key.p, fx.w[i].key.len,
                                        fx.w[i].tombstone ? NULL : fx.w[i].value.p,
                                        fx.w[i].tombstone ? -1 : (int32_t)fx.w[i].value.len),
                        0);
    txn_load_end(d, part);
    const txn_t *t = entry(d);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    CU_ASSERT_EQUAL(t->state, TXN_PREPARE_COMMIT);
    CU_ASSERT(t->producer_id == 1000 && t->epoch == 0 && t->ntps == 3);
    CU_ASSERT_EQUAL_FATAL(fx.nmarkers, 1);
    CU_ASSERT(fx.markers->commit && fx.markers->n == 3);
    txn_markers_done(fx.markers);
    CU_ASSERT_EQUAL(entry(d)->state, TXN_COMPLETE_COMMIT);
    /* unloaded: not ours */
    txn_unload(d, part);
    CU_ASSERT_EQUAL(end(d, 1000, 0, true), KERR_NOT_COORDINATOR);
    txn_coord_free(d);
}

static void test_expiry(void)
{
    fx_reset();
    txn_coord_t *c = fx_coord();

    CU_ASSERT_EQUAL(init_pid(c, -1, -1), 0);
    fx.now += 604800000LL - 1;
    txn_expire_ids(c);
    CU_ASSERT_PTR_NOT_NULL(entry(c));
    fx.now += 1;
    txn_expire_ids(c);
    CU_ASSERT_PTR_NULL(entry(c));
    CU_ASSERT(fx.w[fx.nw - 1].tombstone);
    /* a new producer with the id starts over */
    CU_ASSERT_EQUAL(init_pid(c, -1, -1), 0);
    CU_ASSERT(ans.pid == 1001 && ans.epoch == 0);
    txn_coord_free(c);
}

/* The key and value as Kafka's TransactionLog writes them (v0 value):
 * int16 version, then the fields big-endian, partitions grouped by topic. */
static void test_record_bytes(void)
{
    static const uint8_t key[] = {0, 0, 0, 5, 'a', 'p', 'p', '-', '1'};
    txn_tp_t tps[] = {{"t", 2}, {"t", 0}};
    txn_transit_t to = {TXN_ONGOING, 5, -1, -1, 3, -1, 1000, tps, 2, 111, 222, 0};
    static const uint8_t val[] = {
        0, 0,                   /* value version 0 */
        0, 0, 0, 0, 0, 0, 0, 5, /* producer id */
        0, 3,                   /* epoch */
        0, 0, 3, 0xe8,          /* timeout 1000 */
        1,                      /* Ongoing */
        0, 0, 0, 1,             /* one topic */
        0, 1, 't',              /* its name */
        0, 0, 0, 2, 0, 0, 0, 2, 0, 0, 0, 0, /* partitions 2, 0 */
        0, 0, 0, 0, 0, 0, 0, 222, /* last update */
        0, 0, 0, 0, 0, 0, 0, 111, /* start */
    };
    buf_t b;

    buf_init(&b);
    txn_rec_key(&b, ID, IDL);
    CU_ASSERT(b.len == sizeof(key) && !memcmp(b.p, key, sizeof(key)));
    b.len = 0;
    txn_rec_value(&b, &to);
    CU_ASSERT_EQUAL(b.len, sizeof(val));
    CU_ASSERT(b.len == sizeof(val) && !memcmp(b.p, val, sizeof(val)));
    buf_free(&b);
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("transaction coordinator", NULL, NULL);
    CU_add_test(s, "record bytes", test_record_bytes);
    CU_add_test(s, "init, add, commit, markers, complete", test_commit_cycle);
    CU_add_test(s, "init errors and epoch bumps", test_init_errors_and_bumps);
    CU_add_test(s, "init fences an open transaction", test_fence_open);
    CU_add_test(s, "timeout abort", test_timeout_abort);
    CU_add_test(s, "replay", test_replay);
    CU_add_test(s, "expiry", test_expiry);
    int rc = unit_run();
    fx_reset();
    return rc;
}
