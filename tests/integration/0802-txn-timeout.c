/* 0802-txn-timeout: the coordinator aborts a transaction whose producer
 * went away. The test's own broker runs with
 * transaction.abort.timed.out.transaction.cleanup.interval.ms=1000 (the
 * default is 10 s). A child process, forked before this process makes
 * any librdkafka handle, runs a transactional producer with
 * transaction.timeout.ms=3000: it begins a transaction, sends 4 messages
 * to each of 2 partitions (offsets 0-3), flushes, reports and is killed
 * with SIGKILL. An idempotent producer then writes 5 messages to each
 * partition (4-8). Asserted:
 *   - while the transaction is open: ListOffsets latest read_committed is
 *     0 (its first offset), read_uncommitted 9; a read_committed consumer
 *     gets nothing;
 *   - the coordinator aborts it: not before transaction.timeout.ms from
 *     its begin, and within 15 s; the read_committed consumer then gets
 *     exactly the idempotent producer's messages at 4-8 in order and
 *     ends at 10 (the ABORT marker at 9), never one of the child's;
 *   - both latest offsets 10; a read_uncommitted consumer gets all 18
 *     messages (the child's at 0-3); a raw Fetch at read_committed lists
 *     the aborted transaction (the child's producer id, 0), and its marker
 *     at 9 is an ABORT of the child's producer id with the next epoch (the
 *     coordinator fences the timed-out producer before aborting).
 * The times (from the begin, from the kill) are logged. */
#include "testlib/txn.h"

#include <errno.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#define NPART 2
#define NC 4 /* the child's messages per partition, 0-3 */
#define NI 5 /* the idempotent producer's, 4-8 */
#define MARKER (NC + NI)
#define END (MARKER + 1)
#define TXN_TIMEOUT_S 3.0

static const char *const broker_extra[] = {
    "transaction.abort.timed.out.transaction.cleanup.interval.ms=1000", NULL};

struct setup {
    char bootstrap[64];
    char topic[200];
    char txn_id[200];
};

struct report {
    int ok;
    double t_begin;   /* tl_now() just before begin_transaction */
    double t_flushed; /* after the flush */
    int64_t offsets[NPART][NC];
    char error[256];
};

static char *value_of(const char *who, int p, int m)
{
    static char buf[8][64];
    static int next;
    char *v = buf[next++ % 8];
    snprintf(v, 64, "%s-p%d-m%d", who, p, m);
    return v;
}

static int read_full(int fd, void *p, size_t n, int timeout_ms)
{
    size_t got = 0;
    double deadline = tl_now() + timeout_ms / 1000.0;
    while (got < n) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int ms = (int)((deadline - tl_now()) * 1000);
        if (ms <= 0)
            return -1;
        if (poll(&pfd, 1, ms) <= 0)
            continue;
        ssize_t r = read(fd, (char *)p + got, n - got);
        if (r == 0 || (r < 0 && errno != EINTR))
            return -1;
        if (r > 0)
            got += (size_t)r;
    }
    return 0;
}

/* The child: waits for its setup, runs the transaction, reports, and
 * waits for its SIGKILL. Its first librdkafka handle is made here, after
 * the fork. */
static void child_main(int in, int out)
{
    struct setup s;
    struct report rep = {0};
    tl_txn_slot slots[NPART][NC];
    rd_kafka_error_t *error;

    prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (read_full(in, &s, sizeof(s), 120000) < 0)
        _exit(2);
    rd_kafka_conf_t *conf = tl_txn_conf(s.bootstrap);
    tl_conf_set(conf, "transactional.id", s.txn_id);
    tl_conf_set(conf, "transaction.timeout.ms", "3000");
    tl_conf_set(conf, "linger.ms", "5");
    tl_conf_set(conf, "client.id", "abandoned");
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    error = rd_kafka_init_transactions(rk, 30000);
    if (error) {
        snprintf(rep.error, sizeof(rep.error), "init_transactions: %s",
                 rd_kafka_error_string(error));
        goto report;
    }
    rep.t_begin = tl_now();
    error = rd_kafka_begin_transaction(rk);
    if (error) {
        snprintf(rep.error, sizeof(rep.error), "begin: %s", rd_kafka_error_string(error));
        goto report;
    }
    for (int m = 0; m < NC; m++)
        for (int p = 0; p < NPART; p++)
            tl_txn_send(rk, s.topic, p, value_of("abandoned", p, m), &slots[p][m]);
    if (rd_kafka_flush(rk, 10000) != 0) {
        snprintf(rep.error, sizeof(rep.error), "flush: %d left", rd_kafka_outq_len(rk));
        goto report;
    }
    rep.t_flushed = tl_now();
    for (int p = 0; p < NPART; p++)
        for (int m = 0; m < NC; m++) {
            if (!slots[p][m].done || slots[p][m].err) {
                snprintf(rep.error, sizeof(rep.error), "'%s': %s", value_of("abandoned", p, m),
                         rd_kafka_err2name(slots[p][m].err));
                goto report;
            }
            rep.offsets[p][m] = slots[p][m].offset;
        }
    rep.ok = 1;
report:
    if (write(out, &rep, sizeof(rep)) != (ssize_t)sizeof(rep))
        _exit(3);
    for (;;)
        pause();
}

static void check_latest(int64_t committed, int64_t uncommitted, const char *bs,
                         const char *topic, const char *what)
{
    for (int p = 0; p < NPART; p++) {
        int64_t rc, ru;
        tl_txn_latest(bs, topic, p, &rc, &ru);
        TL_ASSERT(rc == committed && ru == uncommitted, "%s: partition %d: latest %" PRId64
                  " read_committed, %" PRId64 " read_uncommitted; expected %" PRId64 ", %"
                  PRId64, what, p, rc, ru, committed, uncommitted);
    }
}

int main(void)
{
    int to_child[2], from_child[2];
    tl_broker b = {0};
    struct setup s;
    struct report rep;
    pid_t child;
    tl_txn_slot slots[NPART][NI];

    memset(&s, 0, sizeof(s));
    tl_init("0802-txn-timeout");
    TL_ASSERT(pipe(to_child) == 0 && pipe(from_child) == 0, "pipe: %s", strerror(errno));
    child = fork();
    TL_ASSERT(child >= 0, "fork: %s", strerror(errno));
    if (child == 0) {
        close(to_child[1]);
        close(from_child[0]);
        child_main(to_child[0], from_child[1]);
    }
    close(to_child[0]);
    close(from_child[1]);

    char *dir = tl_scratch_dir("0802-broker");
    tl_broker_start(&b, dir, broker_extra);
    char *topic = tl_topic_name("t0802");
    char *txn_id = tl_topic_name("txn0802");
    const char *bs = b.bootstrap;

    rd_kafka_t *adm = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    TL_ASSERT(tl_create_topic(adm, topic, NPART) >= NPART, "create %s", topic);
    rd_kafka_conf_t *conf = tl_txn_conf(bs);
    tl_conf_set(conf, "enable.idempotence", "true");
    tl_conf_set(conf, "linger.ms", "5");
    rd_kafka_t *ip = tl_new(RD_KAFKA_PRODUCER, conf);
    tl_txn_reader *rc = tl_txn_reader_new(bs, topic, NPART, TL_READ_COMMITTED);
    /* Connected, and at the end of the empty partitions. */
    TL_ASSERT(tl_txn_reader_poll(rc, NULL, 30), "read_committed consumer: no end of partition");

    snprintf(s.bootstrap, sizeof(s.bootstrap), "%s", bs);
    snprintf(s.topic, sizeof(s.topic), "%s", topic);
    snprintf(s.txn_id, sizeof(s.txn_id), "%s", txn_id);
    TL_ASSERT(write(to_child[1], &s, sizeof(s)) == (ssize_t)sizeof(s), "setup to the child");
    TL_ASSERT(read_full(from_child[0], &rep, sizeof(rep), 60000) == 0, "no report from the child");
    TL_ASSERT(rep.ok, "child: %s", rep.error);
    kill(child, SIGKILL);
    TL_ASSERT(waitpid(child, NULL, 0) == child, "waitpid: %s", strerror(errno));
    double t_kill = tl_now();
    for (int p = 0; p < NPART; p++)
        for (int m = 0; m < NC; m++)
            TL_ASSERT(rep.offsets[p][m] == m, "child: '%s' at %" PRId64,
                      value_of("abandoned", p, m), rep.offsets[p][m]);
    tl_log("child: begin, %d messages per partition flushed in %.3f s; killed %.3f s after "
           "the begin", NC, rep.t_flushed - rep.t_begin, t_kill - rep.t_begin);

    for (int m = 0; m < NI; m++)
        for (int p = 0; p < NPART; p++)
            tl_txn_send(ip, topic, p, value_of("after", p, m), &slots[p][m]);
    TL_ASSERT_EQ(rd_kafka_flush(ip, 10000), 0);
    for (int p = 0; p < NPART; p++)
        for (int m = 0; m < NI; m++)
            TL_ASSERT(slots[p][m].done && !slots[p][m].err && slots[p][m].offset == NC + m,
                      "idempotent '%s': %s at %" PRId64, value_of("after", p, m),
                      rd_kafka_err2name(slots[p][m].err), slots[p][m].offset);

    /* Still open: nothing is read_committed past the first offset. */
    double open_at = tl_now() - rep.t_begin;
    TL_ASSERT(open_at < TXN_TIMEOUT_S - 0.2, "%.3f s after the begin: too late to see the "
              "transaction open", open_at);
    check_latest(0, NC + NI, bs, topic, "transaction open");
    tl_txn_reader_poll(rc, NULL, 0.2);
    TL_ASSERT(tl_txn_reader_count(rc) == 0, "read_committed: %d messages while the transaction "
              "is open (the first at %" PRId64 ")", tl_txn_reader_count(rc),
              rc->parts[0].n ? rc->parts[0].v[0].offset : rc->parts[1].v[0].offset);
    tl_log("%.3f s after the begin: read_committed latest 0, read_uncommitted %d, nothing "
           "consumed", tl_now() - rep.t_begin, NC + NI);

    /* Until the coordinator aborts it. */
    double t_lso = 0, t_msg = 0, deadline = tl_now() + 30;
    while (!t_msg || !t_lso) {
        TL_ASSERT(tl_now() < deadline, "no abort %.1f s after the begin (latest %s)",
                  tl_now() - rep.t_begin, t_lso ? "moved" : "at 0");
        tl_txn_reader_poll(rc, NULL, 0.02);
        if (!t_msg && tl_txn_reader_count(rc) > 0)
            t_msg = tl_now();
        if (!t_lso &&
            tl_txn_list_offset(bs, topic, 0, TL_READ_COMMITTED, -1, 7) > 0)
            t_lso = tl_now();
    }
    double t_abort = t_lso < t_msg ? t_lso : t_msg;
    tl_log("aborted by the coordinator: read_committed latest moved %.3f s after the begin "
           "(%.3f s after the kill), the first message consumed after %.3f s (%.3f s)",
           t_lso - rep.t_begin, t_lso - t_kill, t_msg - rep.t_begin, t_msg - t_kill);
    TL_ASSERT(t_abort - rep.t_begin >= TXN_TIMEOUT_S - 0.05,
              "aborted %.3f s after the begin, before transaction.timeout.ms",
              t_abort - rep.t_begin);
    TL_ASSERT(t_abort - rep.t_begin < 15, "aborted %.3f s after the begin",
              t_abort - rep.t_begin);

    {
        int64_t until[NPART] = {END, END}, offs[NC + NI];
        char *vals[NC + NI];
        TL_ASSERT(tl_txn_reader_poll(rc, until, 30), "read_committed: not at %d in 30 s", END);
        tl_txn_reader_poll(rc, NULL, 0.3);
        tl_txn_reader *ru = tl_txn_reader_new(bs, topic, NPART, TL_READ_UNCOMMITTED);
        TL_ASSERT(tl_txn_reader_poll(ru, until, 30), "read_uncommitted: not at %d in 30 s", END);
        for (int p = 0; p < NPART; p++) {
            for (int m = 0; m < NI; m++) {
                offs[m] = NC + m;
                vals[m] = strdup(value_of("after", p, m));
            }
            tl_txn_reader_expect(rc, p, NI, offs, vals, "read_committed");
            TL_ASSERT_EQ(rc->parts[p].eof, END);
            for (int m = 0; m < NI; m++)
                free(vals[m]);
            for (int m = 0; m < NC + NI; m++) {
                offs[m] = m;
                vals[m] = strdup(m < NC ? value_of("abandoned", p, m)
                                        : value_of("after", p, m - NC));
            }
            tl_txn_reader_expect(ru, p, NC + NI, offs, vals, "read_uncommitted");
            TL_ASSERT_EQ(ru->parts[p].eof, END);
            for (int m = 0; m < NC + NI; m++)
                free(vals[m]);
        }
        tl_txn_reader_free(ru);
    }
    check_latest(END, END, bs, topic, "aborted");

    for (int p = 0; p < NPART; p++) {
        tl_txn_fetch f;
        int64_t next = 0, cpid = -1;
        int cepoch = -1;
        tl_txn_fetch_raw(bs, topic, p, 0, TL_READ_COMMITTED, 12, &f);
        TL_ASSERT_EQ(f.error, 0);
        TL_ASSERT_EQ(f.high_watermark, END);
        TL_ASSERT_EQ(f.last_stable_offset, END);
        for (int i = 0; i < f.nbatch; i++) {
            const tl_txn_batch *bt = &f.batches[i];
            for (int j = 0; j < bt->nrec; j++, next++) {
                TL_ASSERT_EQ(bt->offsets[j], next);
                if (next < NC) {
                    if (cpid < 0) {
                        cpid = bt->producer_id;
                        cepoch = bt->producer_epoch;
                    }
                    TL_ASSERT(bt->transactional && !bt->control && bt->producer_id == cpid &&
                                  bt->producer_epoch == cepoch,
                              "partition %d, offset %" PRId64 ": not the child's", p, next);
                } else if (next < MARKER) {
                    TL_ASSERT(!bt->transactional && !bt->control && bt->producer_id != cpid,
                              "partition %d, offset %" PRId64 ": not the idempotent "
                              "producer's (producer %" PRId64 ", attributes %#x)", p, next,
                              bt->producer_id, bt->attributes);
                } else {
                    TL_ASSERT(bt->control && bt->ctrl_type == 0 && bt->producer_id == cpid,
                              "partition %d: offset %" PRId64 " is not the child's ABORT marker "
                              "(control %d, type %d, producer %" PRId64 ")", p, next,
                              bt->control, bt->ctrl_type, bt->producer_id);
                    TL_ASSERT(bt->producer_epoch == cepoch + 1, "partition %d: the marker's "
                              "epoch %d, the child's %d", p, bt->producer_epoch, cepoch);
                }
            }
        }
        TL_ASSERT_EQ(next, END);
        TL_ASSERT(f.n_aborted == 1 && f.aborted_pid[0] == cpid && f.aborted_first[0] == 0,
                  "partition %d: %d aborted transactions, the first (%" PRId64 ", %" PRId64
                  "), expected (%" PRId64 ", 0)", p, f.n_aborted,
                  f.n_aborted > 0 ? f.aborted_pid[0] : -1,
                  f.n_aborted > 0 ? f.aborted_first[0] : -1, cpid);
        if (p == 0)
            tl_log("Fetch: child producer %" PRId64 " epoch %d, its ABORT marker at %d with "
                   "epoch %d", cpid, cepoch, MARKER, cepoch + 1);
        tl_txn_fetch_free(&f);
    }

    tl_txn_reader_free(rc);
    rd_kafka_destroy(ip);
    rd_kafka_destroy(adm);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(topic);
    free(txn_id);
    free(dir);
    return tl_done();
}
