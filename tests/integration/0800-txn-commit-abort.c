/* 0800-txn-commit-abort: transactions committed and aborted, as every
 * reader sees them. One transactional producer (a transactional.id new
 * to this run) runs 6 transactions over 3 topics x 4 partitions, the
 * even ones committed and the odd ones aborted. Each writes 5 messages
 * to every partition (values "txnK-tT-pP-mM") and sends offsets of a
 * consumer group G that differ per transaction and partition
 * (send_offsets_to_transaction, metadata "txnK").
 *
 * Every partition's log is then, transaction K taking offsets 6K..6K+5:
 * its 5 messages at 6K..6K+4 and its marker at 6K+5. Asserted:
 *   - each delivery report at exactly that offset;
 *   - while K is open (produced, flushed, not ended): ListOffsets latest
 *     read_committed (raw v7, IsolationLevel 1) stays at 6K, the first
 *     offset of K, while read_uncommitted's is 6K+5; a raw Fetch v12 at
 *     read_committed from 6K returns no batch, LastStableOffset 6K and
 *     high watermark 6K+5, at read_uncommitted K's 5 messages; G's
 *     offsets sent in K are not committed: OffsetFetch v7 with
 *     RequireStable answers UNSTABLE_OFFSET_COMMIT (offset -1) for each
 *     partition, without it the offsets of the last committed transaction
 *     (-1 before the first);
 *   - once K ended: both latest offsets 6K+6, and G's committed offsets
 *     (OffsetFetch with RequireStable, and rd_kafka_committed) those of
 *     the last committed transaction with its metadata, never an aborted
 *     one's;
 *   - at the end a read_committed consumer reads each partition from the
 *     start and gets exactly the messages of transactions 0, 2 and 4, in
 *     order, each once, at their offsets (no marker, no aborted message),
 *     and its end of partition is 36; a read_uncommitted consumer gets
 *     all 30 messages of every partition at their offsets;
 *   - the high watermark, ListOffsets latest at both levels: 36;
 *   - a raw Fetch at read_committed (v4 and v12) of each partition from 0:
 *     AbortedTransactions = (producer id, 6), (.., 18), (.., 30) with
 *     the producer id of the batches, LastStableOffset 36; its batches
 *     hold every offset 0..35 once: the messages (transactional, the
 *     producer's id and epoch, values byte for byte) and at 6K+5 a
 *     control batch, COMMIT for even K and ABORT for odd K; from 19
 *     (inside transaction 3) the list is (.., 18), (.., 30); at
 *     read_uncommitted the list is null. */
#include "testlib/txn.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NTOPIC 3
#define NPART 4
#define NTXN 6
#define NMSG 5
#define SPAN (NMSG + 1) /* a transaction's messages and its marker */
#define END ((int64_t)NTXN * SPAN)

static const char *bs;
static char *topics[NTOPIC];
static char group[256];

static int is_committed(int k)
{
    return k % 2 == 0;
}

static int64_t first_offset(int k)
{
    return (int64_t)k * SPAN;
}

static char *value_of(int k, int t, int p, int m)
{
    static char buf[8][64];
    static int next;
    char *v = buf[next++ % 8];
    snprintf(v, 64, "txn%d-t%d-p%d-m%d", k, t, p, m);
    return v;
}

/* The offset transaction k commits for G on topic t, partition p. */
static int64_t group_offset(int k, int t, int p)
{
    return 1000 * (k + 1) + 10 * t + p;
}

static void waitfor_latest(int t, int p, int64_t want, const char *what)
{
    double deadline = tl_now() + 20;
    int64_t rc, ru;
    for (;;) {
        tl_txn_latest(bs, topics[t], p, &rc, &ru);
        if (rc == want)
            break;
        TL_ASSERT(tl_now() < deadline, "%s: %s-%d: latest read_committed %" PRId64
                  " after 20 s, expected %" PRId64, what, topics[t], p, rc, want);
        usleep(50 * 1000);
    }
    TL_ASSERT(ru == want, "%s: %s-%d: latest read_uncommitted %" PRId64 ", read_committed %"
              PRId64, what, topics[t], p, ru, rc);
}

/* G's offsets with RequireStable, once no partition is unstable any more
 * (a transaction's offsets are pending until its marker reached
 * __consumer_offsets): those of transaction last (-1: none yet). */
static void check_stable_offsets(int last, const char *what)
{
    for (int t = 0; t < NTOPIC; t++) {
        int64_t off[NPART];
        int16_t err[NPART];
        char *md[NPART];
        double deadline = tl_now() + 20;
        for (;;) {
            int unstable = 0;
            tl_txn_offset_fetch(bs, group, topics[t], NPART, 1, off, err, md);
            for (int p = 0; p < NPART; p++)
                unstable += err[p] == TL_ERR_UNSTABLE_OFFSET_COMMIT;
            if (!unstable)
                break;
            TL_ASSERT(tl_now() < deadline, "%s: %s: offsets of %s still unstable after 20 s",
                      what, group, topics[t]);
            for (int p = 0; p < NPART; p++)
                free(md[p]);
            usleep(50 * 1000);
        }
        for (int p = 0; p < NPART; p++) {
            char want_md[16];
            snprintf(want_md, sizeof(want_md), "txn%d", last);
            TL_ASSERT(err[p] == 0, "%s: OffsetFetch %s-%d: error %d", what, topics[t], p, err[p]);
            TL_ASSERT(off[p] == (last < 0 ? -1 : group_offset(last, t, p)),
                      "%s: %s-%d: committed %" PRId64 ", expected transaction %d's %" PRId64,
                      what, topics[t], p, off[p], last, last < 0 ? -1 : group_offset(last, t, p));
            if (last >= 0)
                TL_ASSERT(md[p] && strcmp(md[p], want_md) == 0,
                          "%s: %s-%d: metadata '%s', expected '%s'", what, topics[t], p,
                          md[p] ? md[p] : "(null)", want_md);
            free(md[p]);
        }
    }
}

/* While offsets of an open transaction are pending: RequireStable gives
 * UNSTABLE_OFFSET_COMMIT, and without it the last committed ones. */
static void check_pending_offsets(int k, int last)
{
    for (int t = 0; t < NTOPIC; t++) {
        int64_t off[NPART];
        int16_t err[NPART];
        tl_txn_offset_fetch(bs, group, topics[t], NPART, 1, off, err, NULL);
        for (int p = 0; p < NPART; p++) {
            TL_ASSERT(err[p] == TL_ERR_UNSTABLE_OFFSET_COMMIT,
                      "transaction %d open: OffsetFetch RequireStable %s-%d: error %d, offset %"
                      PRId64, k, topics[t], p, err[p], off[p]);
            TL_ASSERT(off[p] == -1, "transaction %d open: unstable %s-%d with offset %" PRId64,
                      k, topics[t], p, off[p]);
        }
        tl_txn_offset_fetch(bs, group, topics[t], NPART, 0, off, err, NULL);
        for (int p = 0; p < NPART; p++) {
            TL_ASSERT(err[p] == 0, "transaction %d open: OffsetFetch %s-%d: error %d", k,
                      topics[t], p, err[p]);
            TL_ASSERT(off[p] == (last < 0 ? -1 : group_offset(last, t, p)),
                      "transaction %d open: %s-%d: committed %" PRId64 ", expected %" PRId64, k,
                      topics[t], p, off[p], last < 0 ? -1 : group_offset(last, t, p));
        }
    }
}

/* rd_kafka_committed of G (librdkafka asks with RequireStable at its
 * default isolation level, read_committed, and retries while unstable). */
static void check_committed(rd_kafka_t *cg, int last, const char *what)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(NTOPIC * NPART);
    for (int t = 0; t < NTOPIC; t++)
        for (int p = 0; p < NPART; p++)
            rd_kafka_topic_partition_list_add(l, topics[t], p);
    rd_kafka_resp_err_t err = rd_kafka_committed(cg, l, 30000);
    TL_ASSERT(err == 0, "%s: committed: %s", what, rd_kafka_err2name(err));
    for (int i = 0; i < l->cnt; i++) {
        const rd_kafka_topic_partition_t *tp = &l->elems[i];
        int t = i / NPART, p = tp->partition;
        int64_t want = last < 0 ? RD_KAFKA_OFFSET_INVALID : group_offset(last, t, p);
        TL_ASSERT(!tp->err, "%s: committed %s-%d: %s", what, tp->topic, p,
                  rd_kafka_err2name(tp->err));
        TL_ASSERT(tp->offset == want, "%s: committed %s-%d: %" PRId64 ", expected %" PRId64,
                  what, tp->topic, p, tp->offset, want);
    }
    rd_kafka_topic_partition_list_destroy(l);
}

/* While transaction k is open on every partition. */
static void check_open(int k)
{
    int64_t first = first_offset(k);
    tl_txn_fetch f;

    for (int t = 0; t < NTOPIC; t++)
        for (int p = 0; p < NPART; p++) {
            int64_t rc, ru;
            tl_txn_latest(bs, topics[t], p, &rc, &ru);
            TL_ASSERT(rc == first && ru == first + NMSG,
                      "transaction %d open: %s-%d: latest read_committed %" PRId64
                      " (expected %" PRId64 "), read_uncommitted %" PRId64 " (expected %" PRId64
                      ")", k, topics[t], p, rc, first, ru, first + NMSG);
        }
    tl_txn_fetch_raw(bs, topics[1], 2, first, TL_READ_COMMITTED, 12, &f);
    TL_ASSERT_EQ(f.error, 0);
    TL_ASSERT_EQ(f.last_stable_offset, first);
    TL_ASSERT_EQ(f.high_watermark, first + NMSG);
    TL_ASSERT(f.nbatch == 0, "transaction %d open: read_committed fetch from %" PRId64
              " returned %d batches (the first at %" PRId64 ")", k, first, f.nbatch,
              f.batches[0].base_offset);
    tl_txn_fetch_free(&f);
    tl_txn_fetch_raw(bs, topics[1], 2, first, TL_READ_UNCOMMITTED, 12, &f);
    TL_ASSERT_EQ(f.error, 0);
    TL_ASSERT_EQ(f.last_stable_offset, first);
    TL_ASSERT_EQ(f.high_watermark, first + NMSG);
    int m = 0;
    for (int i = 0; i < f.nbatch; i++)
        for (int j = 0; j < f.batches[i].nrec; j++, m++) {
            TL_ASSERT(m < NMSG, "read_uncommitted fetch: more than %d records", NMSG);
            TL_ASSERT_EQ(f.batches[i].offsets[j], first + m);
            TL_ASSERT(strcmp(f.batches[i].values[j], value_of(k, 1, 2, m)) == 0,
                      "read_uncommitted fetch: '%s' at %" PRId64, f.batches[i].values[j],
                      first + m);
        }
    TL_ASSERT_EQ(m, NMSG);
    tl_txn_fetch_free(&f);
}

static void run_txn(rd_kafka_t *rk, rd_kafka_t *cg, int k, int *last)
{
    static tl_txn_slot slots[NTOPIC][NPART][NMSG];
    rd_kafka_consumer_group_metadata_t *gm;
    rd_kafka_topic_partition_list_t *offs;
    rd_kafka_error_t *error;
    char what[64];

    error = rd_kafka_begin_transaction(rk);
    TL_ASSERT(!error, "begin %d: %s", k, rd_kafka_error_string(error));
    for (int m = 0; m < NMSG; m++)
        for (int t = 0; t < NTOPIC; t++)
            for (int p = 0; p < NPART; p++)
                tl_txn_send(rk, topics[t], p, value_of(k, t, p, m), &slots[t][p][m]);
    TL_ASSERT_EQ(rd_kafka_flush(rk, 30000), 0);
    for (int t = 0; t < NTOPIC; t++)
        for (int p = 0; p < NPART; p++)
            for (int m = 0; m < NMSG; m++) {
                const tl_txn_slot *s = &slots[t][p][m];
                TL_ASSERT(s->done && !s->err, "transaction %d: '%s': %s", k, value_of(k, t, p, m),
                          rd_kafka_err2name(s->err));
                TL_ASSERT(s->offset == first_offset(k) + m,
                          "transaction %d: '%s' delivered at %" PRId64 ", expected %" PRId64, k,
                          value_of(k, t, p, m), s->offset, first_offset(k) + m);
            }
    check_open(k);

    offs = rd_kafka_topic_partition_list_new(NTOPIC * NPART);
    for (int t = 0; t < NTOPIC; t++)
        for (int p = 0; p < NPART; p++) {
            rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(offs, topics[t], p);
            char md[16];
            snprintf(md, sizeof(md), "txn%d", k);
            tp->offset = group_offset(k, t, p);
            tp->metadata = strdup(md);
            tp->metadata_size = strlen(md);
        }
    gm = rd_kafka_consumer_group_metadata_new(group);
    error = rd_kafka_send_offsets_to_transaction(rk, offs, gm, 30000);
    TL_ASSERT(!error, "send_offsets %d: %s", k, rd_kafka_error_string(error));
    rd_kafka_consumer_group_metadata_destroy(gm);
    rd_kafka_topic_partition_list_destroy(offs);
    check_pending_offsets(k, *last);

    double t0 = tl_now();
    error = is_committed(k) ? rd_kafka_commit_transaction(rk, 30000)
                            : rd_kafka_abort_transaction(rk, 30000);
    TL_ASSERT(!error, "%s %d: %s", is_committed(k) ? "commit" : "abort", k,
              rd_kafka_error_string(error));
    double took = tl_now() - t0;
    if (is_committed(k))
        *last = k;
    snprintf(what, sizeof(what), "after %s %d", is_committed(k) ? "commit" : "abort", k);
    for (int t = 0; t < NTOPIC; t++)
        for (int p = 0; p < NPART; p++)
            waitfor_latest(t, p, first_offset(k) + SPAN, what);
    check_stable_offsets(*last, what);
    check_committed(cg, *last, what);
    tl_log("transaction %d: %s in %.3f s; markers at %" PRId64 ", G's offsets those of %d", k,
           is_committed(k) ? "committed" : "aborted", took, first_offset(k) + NMSG, *last);
}

static void check_readers(void)
{
    int64_t until[NPART], offs[NTXN * NMSG];
    char *vals[NTXN * NMSG];

    for (int p = 0; p < NPART; p++)
        until[p] = END;
    for (int t = 0; t < NTOPIC; t++) {
        tl_txn_reader *rc = tl_txn_reader_new(bs, topics[t], NPART, TL_READ_COMMITTED);
        tl_txn_reader *ru = tl_txn_reader_new(bs, topics[t], NPART, TL_READ_UNCOMMITTED);
        TL_ASSERT(tl_txn_reader_poll(rc, until, 30), "read_committed: %s not read to %" PRId64
                  " in 30 s", topics[t], END);
        TL_ASSERT(tl_txn_reader_poll(ru, until, 30), "read_uncommitted: %s not read to %" PRId64
                  " in 30 s", topics[t], END);
        for (int p = 0; p < NPART; p++) {
            int n = 0, nu = 0;
            for (int k = 0; k < NTXN; k++)
                for (int m = 0; m < NMSG; m++) {
                    if (is_committed(k)) {
                        offs[n] = first_offset(k) + m;
                        vals[n++] = strdup(value_of(k, t, p, m));
                    }
                }
            tl_txn_reader_expect(rc, p, n, offs, vals, "read_committed");
            TL_ASSERT_EQ(rc->parts[p].eof, END);
            for (int i = 0; i < n; i++)
                free(vals[i]);
            for (int k = 0; k < NTXN; k++)
                for (int m = 0; m < NMSG; m++) {
                    offs[nu] = first_offset(k) + m;
                    vals[nu++] = strdup(value_of(k, t, p, m));
                }
            tl_txn_reader_expect(ru, p, nu, offs, vals, "read_uncommitted");
            TL_ASSERT_EQ(ru->parts[p].eof, END);
            for (int i = 0; i < nu; i++)
                free(vals[i]);
        }
        /* Nothing more comes (a marker or a duplicate delivered late). */
        tl_txn_reader_poll(rc, NULL, 0.5);
        tl_txn_reader_poll(ru, NULL, 0.5);
        TL_ASSERT_EQ(tl_txn_reader_count(rc), NPART * (NTXN / 2) * NMSG);
        TL_ASSERT_EQ(tl_txn_reader_count(ru), NPART * NTXN * NMSG);
        tl_txn_reader_free(rc);
        tl_txn_reader_free(ru);
    }
    tl_log("read_committed: %d messages per partition, read_uncommitted: %d, both ending at %"
           PRId64, (NTXN / 2) * NMSG, NTXN * NMSG, END);
}

/* The aborted transactions of a read_committed Fetch from offset from:
 * those whose marker is at or after it. */
static void check_aborted_list(const tl_txn_fetch *f, int64_t pid, int64_t from, int ver)
{
    int n = 0;
    for (int k = 0; k < NTXN; k++) {
        if (is_committed(k) || first_offset(k) + NMSG < from)
            continue;
        TL_ASSERT(n < f->n_aborted, "Fetch v%d from %" PRId64 ": %d aborted transactions, the "
                  "one at %" PRId64 " missing", ver, from, f->n_aborted, first_offset(k));
        TL_ASSERT(f->aborted_pid[n] == pid && f->aborted_first[n] == first_offset(k),
                  "Fetch v%d from %" PRId64 ": aborted transaction %d is (%" PRId64 ", %" PRId64
                  "), expected (%" PRId64 ", %" PRId64 ")", ver, from, n, f->aborted_pid[n],
                  f->aborted_first[n], pid, first_offset(k));
        n++;
    }
    TL_ASSERT(f->n_aborted == n, "Fetch v%d from %" PRId64 ": %d aborted transactions, "
              "expected %d", ver, from, f->n_aborted, n);
}

/* A read_committed Fetch of topic t, partition p from 0: every offset in
 * a batch, the markers where they belong. Returns the producer id. */
static int64_t check_fetch(int t, int p, int ver, int64_t want_pid)
{
    tl_txn_fetch f;
    int64_t next = 0, pid = -1;
    int epoch = -1, coord_epoch = -2;

    tl_txn_fetch_raw(bs, topics[t], p, 0, TL_READ_COMMITTED, (int16_t)ver, &f);
    TL_ASSERT_EQ(f.error, 0);
    TL_ASSERT_EQ(f.high_watermark, END);
    TL_ASSERT_EQ(f.last_stable_offset, END);
    if (ver >= 5)
        TL_ASSERT_EQ(f.log_start_offset, 0);
    for (int i = 0; i < f.nbatch; i++) {
        const tl_txn_batch *b = &f.batches[i];
        if (pid < 0) {
            pid = b->producer_id;
            epoch = b->producer_epoch;
        }
        TL_ASSERT(b->producer_id == pid && b->producer_epoch == epoch,
                  "batch at %" PRId64 ": producer %" PRId64 " epoch %d, the first batch's %"
                  PRId64 " epoch %d", b->base_offset, b->producer_id, b->producer_epoch, pid,
                  epoch);
        TL_ASSERT(b->transactional, "batch at %" PRId64 " not transactional (attributes %#x)",
                  b->base_offset, b->attributes);
        for (int j = 0; j < b->nrec; j++, next++) {
            int k = (int)(next / SPAN), m = (int)(next % SPAN);
            TL_ASSERT(b->offsets[j] == next, "Fetch v%d %s-%d: record at %" PRId64
                      ", expected %" PRId64, ver, topics[t], p, b->offsets[j], next);
            if (m == NMSG) {
                TL_ASSERT(b->control && b->nrec == 1, "offset %" PRId64 ": not a marker alone "
                          "(control %d, %d records)", next, b->control, b->nrec);
                TL_ASSERT(b->ctrl_type == (is_committed(k) ? 1 : 0),
                          "marker of transaction %d: type %d", k, b->ctrl_type);
                if (coord_epoch == -2)
                    coord_epoch = b->ctrl_coordinator_epoch;
                TL_ASSERT(b->ctrl_coordinator_epoch == coord_epoch,
                          "marker of transaction %d: coordinator epoch %d, the first one's %d", k,
                          b->ctrl_coordinator_epoch, coord_epoch);
            } else {
                TL_ASSERT(!b->control, "offset %" PRId64 ": a control batch", next);
                TL_ASSERT(b->values[j] && strcmp(b->values[j], value_of(k, t, p, m)) == 0 &&
                              b->keys[j] == NULL,
                          "Fetch v%d %s-%d at %" PRId64 ": '%s', expected '%s' (no key)", ver,
                          topics[t], p, next, b->values[j] ? b->values[j] : "(null)",
                          value_of(k, t, p, m));
            }
        }
    }
    TL_ASSERT(next == END, "Fetch v%d %s-%d: records up to %" PRId64 ", expected %" PRId64, ver,
              topics[t], p, next, END);
    TL_ASSERT(pid >= 0, "producer id %" PRId64, pid);
    TL_ASSERT(want_pid < 0 || pid == want_pid, "producer id %" PRId64 ", elsewhere %" PRId64,
              pid, want_pid);
    check_aborted_list(&f, pid, 0, ver);
    if (t == 0 && p == 0)
        tl_log("Fetch v%d %s-0: %d batches, producer %" PRId64 " epoch %d in all of them, "
               "markers of coordinator epoch %d", ver, topics[0], f.nbatch, pid, epoch,
               coord_epoch);
    tl_txn_fetch_free(&f);
    return pid;
}

static void check_fetches(void)
{
    tl_txn_fetch f;
    int64_t pid = -1;

    for (int t = 0; t < NTOPIC; t++)
        for (int p = 0; p < NPART; p++) {
            pid = check_fetch(t, p, 12, pid);
            TL_ASSERT_EQ(tl_txn_list_offset(bs, topics[t], p, TL_READ_COMMITTED, -2, 7), 0);
        }
    check_fetch(0, 0, 4, pid);
    tl_txn_fetch_raw(bs, topics[2], 3, first_offset(3) + 1, TL_READ_COMMITTED, 12, &f);
    TL_ASSERT_EQ(f.error, 0);
    TL_ASSERT_EQ(f.last_stable_offset, END);
    check_aborted_list(&f, pid, first_offset(3) + 1, 12);
    tl_txn_fetch_free(&f);
    tl_txn_fetch_raw(bs, topics[2], 3, 0, TL_READ_UNCOMMITTED, 4, &f);
    TL_ASSERT_EQ(f.error, 0);
    TL_ASSERT(f.n_aborted == -1, "read_uncommitted Fetch v4: %d aborted transactions, "
              "expected a null list", f.n_aborted);
    tl_txn_fetch_free(&f);
    tl_log("Fetch at read_committed: producer %" PRId64 ", aborted transactions at %" PRId64
           ", %" PRId64 ", %" PRId64 ", last stable offset %" PRId64, pid, first_offset(1),
           first_offset(3), first_offset(5), END);
}

int main(void)
{
    rd_kafka_t *adm, *rk, *cg;
    rd_kafka_conf_t *conf;
    rd_kafka_error_t *error;
    char *txn_id;
    int last = -1;

    tl_init("0800-txn-commit-abort");
    bs = tl_bootstrap();
    for (int t = 0; t < NTOPIC; t++)
        topics[t] = tl_topic_name("t0800");
    txn_id = tl_topic_name("txn0800");
    snprintf(group, sizeof(group), "%s-G", txn_id);

    adm = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    for (int t = 0; t < NTOPIC; t++)
        TL_ASSERT(tl_create_topic(adm, topics[t], NPART) >= NPART, "create %s", topics[t]);

    conf = tl_txn_conf(bs);
    tl_conf_set(conf, "transactional.id", txn_id);
    tl_conf_set(conf, "linger.ms", "5");
    rk = tl_new(RD_KAFKA_PRODUCER, conf);
    double t0 = tl_now();
    error = rd_kafka_init_transactions(rk, 30000);
    TL_ASSERT(!error, "init_transactions: %s", rd_kafka_error_string(error));
    tl_log("init_transactions of %s in %.3f s", txn_id, tl_now() - t0);

    conf = tl_conf(bs);
    tl_conf_set(conf, "group.id", group);
    tl_conf_set(conf, "enable.auto.commit", "false");
    cg = tl_new(RD_KAFKA_CONSUMER, conf);
    check_stable_offsets(-1, "before any transaction");

    for (int k = 0; k < NTXN; k++)
        run_txn(rk, cg, k, &last);
    rd_kafka_destroy(rk);

    for (int t = 0; t < NTOPIC; t++)
        for (int p = 0; p < NPART; p++) {
            int64_t lo, hi, rc, ru;
            TL_ASSERT_EQ(rd_kafka_query_watermark_offsets(adm, topics[t], p, &lo, &hi, 10000), 0);
            TL_ASSERT(lo == 0 && hi == END, "%s-%d: watermarks %" PRId64 "..%" PRId64, topics[t],
                      p, lo, hi);
            tl_txn_latest(bs, topics[t], p, &rc, &ru);
            TL_ASSERT(rc == END && ru == END, "%s-%d: latest %" PRId64 " / %" PRId64, topics[t],
                      p, rc, ru);
        }
    check_readers();
    check_fetches();
    check_committed(cg, last, "at the end");

    rd_kafka_consumer_close(cg);
    rd_kafka_destroy(cg);
    rd_kafka_destroy(adm);
    for (int t = 0; t < NTOPIC; t++)
        free(topics[t]);
    free(txn_id);
    return tl_done();
}
