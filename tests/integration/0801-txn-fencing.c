/* 0801-txn-fencing: a second producer with the same transactional.id
 * fences the first. On a topic of 2 partitions:
 *   1. producer A (transactional id T) begins a transaction and sends 4
 *      messages to each partition (offsets 0-3, flushed): read_committed
 *      latest stays at 0.
 *   2. producer B (the same T) calls init_transactions: it returns once
 *      the coordinator aborted A's transaction (an ABORT marker at 4,
 *      latest 5 at both levels), B having A's producer id with the next
 *      epoch.
 *   3. A's next produce (to a partition already in its transaction) and
 *      its commit fail: the delivery report, the producer's fatal error
 *      and commit_transaction's error are Kafka's (see EXPECT_* below),
 *      the error fatal; the log does not grow.
 *   4. B commits two transactions of 3 messages per partition (5-7, 9-11).
 *   5. B begins a third (13-15, flushed) and producer C (T again) calls
 *      init_transactions: B's commit_transaction, its next call to the
 *      coordinator (EndTxn), fails fatally; ABORT marker at 16.
 *   6. C commits one transaction (17-19).
 * Then a read_committed consumer sees exactly B's two and C's committed
 * transactions at their offsets, nothing of A's or of B's fenced one; a
 * read_uncommitted consumer all messages; a raw Fetch at read_committed
 * lists the aborted transactions (producer id, 0) and (producer id, 13),
 * and its batches show one producer id and Kafka's epochs: A's e, the
 * marker that aborts A's transaction e+1 (the coordinator's fencing
 * bump), B's e+2 (InitProducerId, retried while it answered
 * CONCURRENT_TRANSACTIONS, bumps again), B's commit markers e+2, the
 * marker aborting B's third e+3, C e+4. Last, raw EndTxns with A's and
 * B's epochs: INVALID_PRODUCER_EPOCH at v1, PRODUCER_FENCED at v3, and
 * the log unchanged. */
#include "testlib/txn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPART 2
#define NA 4 /* A's messages per partition, 0-3; marker at 4 */
#define NB 3 /* per transaction of B and C */
#define END 21

/* What librdkafka 2.0.2 reports for a fenced producer against Kafka 4.4:
 * the Produce of the old epoch is answered INVALID_PRODUCER_EPOCH, which
 * is the delivery report's error; the producer then raises the fatal
 * error _FENCED ("This instance has been fenced by a newer instance"),
 * which commit_transaction returns, as it does when its EndTxn is
 * refused (PRODUCER_FENCED; INVALID_PRODUCER_EPOCH below EndTxn v2, and
 * librdkafka 2.0.2 sends v1). The raw EndTxns at the end check both. */
#define EXPECT_FENCED_PRODUCE RD_KAFKA_RESP_ERR_INVALID_PRODUCER_EPOCH
#define EXPECT_FENCED_FATAL RD_KAFKA_RESP_ERR__FENCED

static const char *bs;
static char *topic;
static char *txn_id;

static char *value_of(const char *who, int p, int m)
{
    static char buf[8][64];
    static int next;
    char *v = buf[next++ % 8];
    snprintf(v, 64, "%s-p%d-m%d", who, p, m);
    return v;
}

static rd_kafka_t *txn_producer(const char *name)
{
    rd_kafka_conf_t *conf = tl_txn_conf(bs);
    tl_conf_set(conf, "transactional.id", txn_id);
    tl_conf_set(conf, "client.id", name);
    tl_conf_set(conf, "linger.ms", "5");
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

static void init(rd_kafka_t *rk, const char *name)
{
    double t0 = tl_now();
    rd_kafka_error_t *error = rd_kafka_init_transactions(rk, 30000);
    TL_ASSERT(!error, "%s: init_transactions: %s", name, rd_kafka_error_string(error));
    tl_log("%s: init_transactions in %.3f s", name, tl_now() - t0);
}

static void begin(rd_kafka_t *rk, const char *name)
{
    rd_kafka_error_t *error = rd_kafka_begin_transaction(rk);
    TL_ASSERT(!error, "%s: begin_transaction: %s", name, rd_kafka_error_string(error));
}

/* n messages who-pP-mM to every partition, flushed, delivered at
 * first..first+n-1. */
static void send_flushed(rd_kafka_t *rk, const char *who, int n, int64_t first)
{
    tl_txn_slot slots[NPART][8];
    for (int m = 0; m < n; m++)
        for (int p = 0; p < NPART; p++)
            tl_txn_send(rk, topic, p, value_of(who, p, m), &slots[p][m]);
    TL_ASSERT_EQ(rd_kafka_flush(rk, 30000), 0);
    for (int p = 0; p < NPART; p++)
        for (int m = 0; m < n; m++) {
            TL_ASSERT(slots[p][m].done && !slots[p][m].err, "%s: '%s': %s", who,
                      value_of(who, p, m), rd_kafka_err2name(slots[p][m].err));
            TL_ASSERT(slots[p][m].offset == first + m, "%s: '%s' at %" PRId64 ", expected %"
                      PRId64, who, value_of(who, p, m), slots[p][m].offset, first + m);
        }
}

static void commit(rd_kafka_t *rk, const char *who)
{
    rd_kafka_error_t *error = rd_kafka_commit_transaction(rk, 30000);
    TL_ASSERT(!error, "%s: commit: %s", who, rd_kafka_error_string(error));
}

static void check_latest(int64_t committed, int64_t uncommitted, const char *what)
{
    for (int p = 0; p < NPART; p++) {
        int64_t rc, ru;
        tl_txn_latest(bs, topic, p, &rc, &ru);
        TL_ASSERT(rc == committed && ru == uncommitted, "%s: partition %d: latest %" PRId64
                  " read_committed, %" PRId64 " read_uncommitted; expected %" PRId64 ", %"
                  PRId64, what, p, rc, ru, committed, uncommitted);
    }
}

/* Waits until both latest offsets are want (markers are written after
 * EndTxn is answered). */
static void wait_latest(int64_t want, const char *what)
{
    double deadline = tl_now() + 20;
    for (int p = 0; p < NPART; p++) {
        int64_t rc, ru;
        for (;;) {
            tl_txn_latest(bs, topic, p, &rc, &ru);
            if (rc == want && ru == want)
                break;
            TL_ASSERT(tl_now() < deadline, "%s: partition %d: latest %" PRId64 " / %" PRId64
                      " after 20 s, expected %" PRId64, what, p, rc, ru, want);
            usleep(50 * 1000);
        }
    }
}

/* A fenced producer's error from the transaction API: fatal, _FENCED.
 * Takes ownership of error. */
static void check_fenced_error(const char *what, rd_kafka_error_t *error)
{
    tl_log("%s: %s: %s (fatal %d, retriable %d, txn_requires_abort %d)", what,
           rd_kafka_error_name(error), rd_kafka_error_string(error),
           rd_kafka_error_is_fatal(error), rd_kafka_error_is_retriable(error),
           rd_kafka_error_txn_requires_abort(error));
    TL_ASSERT(rd_kafka_error_code(error) == EXPECT_FENCED_FATAL, "%s: %s, expected %s", what,
              rd_kafka_error_name(error), rd_kafka_err2name(EXPECT_FENCED_FATAL));
    TL_ASSERT(rd_kafka_error_is_fatal(error), "%s: the error is not fatal", what);
    TL_ASSERT(!rd_kafka_error_txn_requires_abort(error), "%s: abortable, not fatal", what);
    rd_kafka_error_destroy(error);
}

/* Step 3: A, fenced, produces once more (to partition 0, already in its
 * transaction: a Produce, no AddPartitionsToTxn) and commits. */
static void fenced_produce_and_commit(rd_kafka_t *a)
{
    tl_txn_slot slot;
    char errstr[512];
    rd_kafka_resp_err_t err, fatal;

    err = tl_txn_try_send(a, topic, 0, "A-p0-after-fence", &slot);
    TL_ASSERT(err == 0, "A: produce after the fence not even queued: %s", rd_kafka_err2name(err));
    rd_kafka_flush(a, 10000);
    tl_log("A: delivery report after the fence: %s, offset %" PRId64,
           rd_kafka_err2name(slot.err), slot.offset);
    TL_ASSERT(slot.done && slot.err == EXPECT_FENCED_PRODUCE,
              "A: delivery report after the fence: done %d, %s, expected %s", slot.done,
              rd_kafka_err2name(slot.err), rd_kafka_err2name(EXPECT_FENCED_PRODUCE));
    fatal = rd_kafka_fatal_error(a, errstr, sizeof(errstr));
    tl_log("A: fatal error %s: %s", rd_kafka_err2name(fatal), fatal ? errstr : "");
    TL_ASSERT(fatal == EXPECT_FENCED_FATAL, "A: fatal error %s, expected %s",
              rd_kafka_err2name(fatal), rd_kafka_err2name(EXPECT_FENCED_FATAL));
    rd_kafka_error_t *error = rd_kafka_commit_transaction(a, 30000);
    TL_ASSERT(error, "A: commit_transaction succeeded after the fence");
    check_fenced_error("A: commit_transaction", error);
}

/* Partition p read at read_committed by a raw Fetch v12 from 0: every
 * offset where it belongs (see the top), the producer id and epochs, the
 * aborted transactions. *pid and *epoch0 (-1: take them from the first
 * batch) are A's. */
static void check_log(int p, int64_t *pid, int *epoch0)
{
    /* who, first offset, count, epoch after A's, control type (-1 data) */
    static const struct {
        const char *who;
        int64_t first;
        int n, epoch, ctrl;
    } runs[] = {{"A", 0, NA, 0, -1},   {"", 4, 1, 1, 0},    {"B1", 5, NB, 2, -1},
                {"", 8, 1, 2, 1},      {"B2", 9, NB, 2, -1}, {"", 12, 1, 2, 1},
                {"B3", 13, NB, 2, -1}, {"", 16, 1, 3, 0},   {"C1", 17, NB, 4, -1},
                {"", 20, 1, 4, 1}};
    tl_txn_fetch f;
    size_t run = 0;
    int64_t next = 0;

    tl_txn_fetch_raw(bs, topic, p, 0, TL_READ_COMMITTED, 12, &f);
    TL_ASSERT_EQ(f.error, 0);
    TL_ASSERT_EQ(f.high_watermark, END);
    TL_ASSERT_EQ(f.last_stable_offset, END);
    if (*pid < 0 && f.nbatch > 0) {
        *pid = f.batches[0].producer_id;
        *epoch0 = f.batches[0].producer_epoch;
    }
    for (int i = 0; i < f.nbatch; i++) {
        const tl_txn_batch *b = &f.batches[i];
        for (int j = 0; j < b->nrec; j++, next++) {
            while (run < sizeof(runs) / sizeof(runs[0]) &&
                   next >= runs[run].first + runs[run].n)
                run++;
            TL_ASSERT(run < sizeof(runs) / sizeof(runs[0]), "partition %d: a record at %" PRId64,
                      p, next);
            int m = (int)(next - runs[run].first);
            TL_ASSERT(b->offsets[j] == next, "partition %d: record at %" PRId64 ", expected %"
                      PRId64, p, b->offsets[j], next);
            TL_ASSERT(b->producer_id == *pid && b->producer_epoch == *epoch0 + runs[run].epoch &&
                          b->transactional,
                      "partition %d, offset %" PRId64 ": producer %" PRId64 " epoch %d "
                      "(transactional %d), expected %" PRId64 " epoch %d", p, next,
                      b->producer_id, b->producer_epoch, b->transactional, *pid,
                      *epoch0 + runs[run].epoch);
            if (runs[run].ctrl >= 0) {
                TL_ASSERT(b->control && b->ctrl_type == runs[run].ctrl,
                          "partition %d, offset %" PRId64 ": control %d type %d, expected a "
                          "%s marker", p, next, b->control, b->ctrl_type,
                          runs[run].ctrl ? "COMMIT" : "ABORT");
            } else {
                TL_ASSERT(!b->control && b->values[j] &&
                              strcmp(b->values[j], value_of(runs[run].who, p, m)) == 0,
                          "partition %d, offset %" PRId64 ": '%s', expected '%s'", p, next,
                          b->values[j] ? b->values[j] : "(null)", value_of(runs[run].who, p, m));
            }
        }
    }
    TL_ASSERT(next == END, "partition %d: records up to %" PRId64, p, next);
    TL_ASSERT(f.n_aborted == 2 && f.aborted_pid[0] == *pid && f.aborted_first[0] == 0 &&
                  f.aborted_pid[1] == *pid && f.aborted_first[1] == 13,
              "partition %d: %d aborted transactions, the first (%" PRId64 ", %" PRId64 ")", p,
              f.n_aborted, f.n_aborted > 0 ? f.aborted_pid[0] : -1,
              f.n_aborted > 0 ? f.aborted_first[0] : -1);
    tl_txn_fetch_free(&f);
}

int main(void)
{
    rd_kafka_t *adm, *a, *b, *c;
    rd_kafka_error_t *error;

    tl_init("0801-txn-fencing");
    bs = tl_bootstrap();
    topic = tl_topic_name("t0801");
    txn_id = tl_topic_name("txn0801");
    adm = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    TL_ASSERT(tl_create_topic(adm, topic, NPART) >= NPART, "create %s", topic);

    /* 1 */
    a = txn_producer("A");
    init(a, "A");
    begin(a, "A");
    send_flushed(a, "A", NA, 0);
    check_latest(0, NA, "A's transaction open");

    /* 2 */
    b = txn_producer("B");
    init(b, "B");
    check_latest(NA + 1, NA + 1, "B initialized");

    /* 3 */
    fenced_produce_and_commit(a);
    check_latest(NA + 1, NA + 1, "A fenced");
    rd_kafka_destroy(a);

    /* 4 */
    begin(b, "B");
    send_flushed(b, "B1", NB, 5);
    commit(b, "B1");
    wait_latest(9, "B1 committed");
    begin(b, "B");
    send_flushed(b, "B2", NB, 9);
    commit(b, "B2");
    wait_latest(13, "B2 committed");

    /* 5 */
    begin(b, "B");
    send_flushed(b, "B3", NB, 13);
    check_latest(13, 16, "B3 open");
    c = txn_producer("C");
    init(c, "C");
    check_latest(17, 17, "C initialized");
    error = rd_kafka_commit_transaction(b, 30000);
    TL_ASSERT(error, "B: commit_transaction succeeded after the fence");
    check_fenced_error("B: commit_transaction", error);
    check_latest(17, 17, "B fenced");
    rd_kafka_destroy(b);

    /* 6 */
    begin(c, "C");
    send_flushed(c, "C1", NB, 17);
    commit(c, "C1");
    wait_latest(END, "C1 committed");
    rd_kafka_destroy(c);

    /* The readers. */
    {
        int64_t until[NPART] = {END, END}, offs[32];
        char *vals[32];
        tl_txn_reader *rc = tl_txn_reader_new(bs, topic, NPART, TL_READ_COMMITTED);
        tl_txn_reader *ru = tl_txn_reader_new(bs, topic, NPART, TL_READ_UNCOMMITTED);
        TL_ASSERT(tl_txn_reader_poll(rc, until, 30), "read_committed: not at %d in 30 s", END);
        TL_ASSERT(tl_txn_reader_poll(ru, until, 30), "read_uncommitted: not at %d in 30 s", END);
        for (int p = 0; p < NPART; p++) {
            static const struct {
                const char *who;
                int n;
                int64_t first;
                int committed;
            } runs[] = {{"A", NA, 0, 0}, {"B1", NB, 5, 1}, {"B2", NB, 9, 1}, {"B3", NB, 13, 0},
                        {"C1", NB, 17, 1}};
            for (int level = 0; level < 2; level++) {
                int n = 0;
                for (size_t i = 0; i < sizeof(runs) / sizeof(runs[0]); i++)
                    for (int m = 0; m < runs[i].n; m++)
                        if (level == TL_READ_UNCOMMITTED || runs[i].committed) {
                            offs[n] = runs[i].first + m;
                            vals[n++] = strdup(value_of(runs[i].who, p, m));
                        }
                tl_txn_reader_expect(level ? rc : ru, p, n, offs, vals,
                                     level ? "read_committed" : "read_uncommitted");
                TL_ASSERT_EQ((level ? rc : ru)->parts[p].eof, END);
                for (int i = 0; i < n; i++)
                    free(vals[i]);
            }
        }
        tl_txn_reader_free(rc);
        tl_txn_reader_free(ru);
    }

    /* The log as a read_committed Fetch shows it. */
    int64_t pid = -1;
    int epoch0 = -1;
    for (int p = 0; p < NPART; p++)
        check_log(p, &pid, &epoch0);
    tl_log("producer id %" PRId64 ": A epoch %d, the markers and producers after it %d-%d; "
           "aborted transactions (%" PRId64 ", 0) and (%" PRId64 ", 13)", pid, epoch0,
           epoch0 + 1, epoch0 + 4, pid, pid);

    /* What the coordinator answers a fenced producer's EndTxn, by version
     * (librdkafka 2.0.2 maps either to _FENCED). */
    for (int e = 0; e < 2; e++) {
        int16_t epoch = (int16_t)(epoch0 + (e ? 2 : 0)); /* A's, B's */
        int16_t v1 = tl_txn_end_txn_raw(bs, txn_id, pid, epoch, 1, 1);
        int16_t v3 = tl_txn_end_txn_raw(bs, txn_id, pid, epoch, 1, 3);
        tl_log("EndTxn of epoch %d (current %d): v1 error %d, v3 error %d", epoch, epoch0 + 4,
               v1, v3);
        TL_ASSERT_EQ(v1, TL_ERR_INVALID_PRODUCER_EPOCH);
        TL_ASSERT_EQ(v3, TL_ERR_PRODUCER_FENCED);
    }
    check_latest(END, END, "after the raw EndTxns");

    rd_kafka_destroy(adm);
    free(topic);
    free(txn_id);
    return tl_done();
}
