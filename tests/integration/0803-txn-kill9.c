/* 0803-txn-kill9: the broker killed with SIGKILL in each phase of a
 * transaction, round after round: all or nothing for every transaction,
 * nothing lost (issue 14).
 *
 * The test's own broker; 2 topics x 3 partitions; one transactional.id
 * for the whole run and a consumer group G. The broker is, as
 * TXN_KILL_TOPOLOGY says: "combined", one node that is broker and
 * controller (testlib's tl_broker), the default on Strand; or "split", a broker with
 * a controller of its own that is never killed (testlib/cluster.h,
 * broker.session.timeout.ms 2 s; the broker restarted once its session
 * expired, so that it comes back fenced), the default with KAFKA_REF=1.
 * Kafka 4.4 on a combined node loses markers in this test: restarted
 * after kill -9 it first replays its own stale metadata, leads every
 * partition, loads __transaction_state and resends the markers of a
 * transaction in PrepareCommit/PrepareAbort (to itself, not listening
 * yet); then its new registration fences it (the partitions leaderless
 * for a moment), and the marker sender takes the partitions without a
 * leader for deleted ones (KAFKA-5202): it writes CompleteAbort or
 * CompleteCommit without their markers, and G's offsets of that
 * transaction stay UNSTABLE_OFFSET_COMMIT (seen in phase d).
 *
 * Every transaction K writes M=5 messages to each of the 6 partitions
 * (values "kK-tT-pP-mM", one message per partition and wave, waves
 * flushed one by one) and, unless it is killed before, sends G's offsets
 * 1000(K+1)+10T+P with metadata "kK" (send_offsets_to_transaction).
 * R rounds (6, 5 on Kafka, or TXN_KILL_ROUNDS); round r runs a committed
 * transaction, in odd rounds an aborted one, then kills the broker in
 * phase r mod 5:
 *   a  while the messages are produced: some waves acknowledged, the
 *      next ones sent and in flight or queued (the transaction is never
 *      ended by the client);
 *   b  during commit_transaction (all messages acknowledged and G's
 *      offsets sent): a thread kills the broker 0 .. 1.2x the round's
 *      last commit time (short delays likelier) after the producer wrote its EndTxn request
 *      (an on_request_sent interceptor tells), or, every other time,
 *      after the call (the client may see success or an error: the
 *      outcome is unknown unless it saw success);
 *   c  right after commit_transaction returned success;
 *   d  during abort_transaction, as in b;
 *   e  between transactions, once every marker is written.
 * The broker is restarted on the same data and port, the old producer
 * destroyed, and a new one with the same transactional.id must pass
 * init_transactions (retried while its errors are retriable). Then,
 * each round: every partition's last stable offset reaches its high
 * watermark (no transaction left hanging) and G's offsets with
 * RequireStable stop being unstable; which transaction's offsets they
 * are is recorded. After the rounds one more committed transaction.
 *
 * Checked at the end, and again after one more kill -9 and restart:
 *   - every partition: ListOffsets latest read_committed = read_uncommitted;
 *   - read_uncommitted (everything that reached the log): every message
 *     the test sent at most once, each partition's messages of a
 *     transaction a prefix m0, m1, .. in order, transactions in order;
 *     every message with a successful delivery report there at its
 *     offset, so every transaction the client ended (or was killed
 *     ending) has all its M messages on each partition;
 *   - read_committed: exactly the read_uncommitted messages of the
 *     visible transactions, at the same offsets, in order, each once;
 *     a transaction is visible on all its partitions with all its
 *     messages or on none (never partial); every transaction whose
 *     commit_transaction returned success is visible; every aborted one
 *     (abort_transaction called, phase d and the odd rounds') and every
 *     one killed before it was ended (phase a) is invisible; one killed
 *     during commit_transaction may be either;
 *   - a raw read_committed Fetch of each partition from 0 (v12; repeated
 *     from where it stopped if the log is larger than one answer): its
 *     AbortedTransactions have exactly one entry (producer id, first
 *     offset) for each invisible transaction, at its first offset in the
 *     partition with the producer id of its batches; any other entry is
 *     at an ABORT marker (Kafka indexes an aborted transaction that
 *     wrote nothing to the partition at its marker), never at a visible
 *     transaction's message; every data batch transactional; each
 *     transaction's messages closed by a marker before the next
 *     transaction's messages start, the first marker after them COMMIT
 *     for a visible transaction and ABORT for an invisible one, of the
 *     same producer id; the last stable offset the high watermark;
 *   - G's committed offsets (OffsetFetch v7 RequireStable) are those of
 *     the last visible transaction, with its metadata; and after each
 *     round's restart they were those of the last transaction visible
 *     among the ones begun by then.
 * Logged: each round's kill (phase, delay, what the client saw), the
 * restart, init_transactions and settle times, each unknown outcome, and
 * the markers found with no message of theirs before them (a marker
 * written again by the coordinator after a restart).
 *
 * TXN_KILL_ROUNDS=N for a long run (by default 6 on Strand, about 2 s a
 * round; 5 with KAFKA_REF=1, 10-20 s a round), TL_SEED to repeat the random choices (the
 * waves acknowledged before a kill in phase a, the kill delays). */
#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/txn.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <semaphore.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NT 2
#define NP 3
#define M 5
#define NPHASE 5
#define TL_STR_(x) #x
#define TL_STR(x) TL_STR_(x)

enum { ST_OPEN, ST_COMMITTED, ST_ABORTED, ST_UNENDED, ST_UNKNOWN };
static const char *const st_name[] = {"open", "committed", "aborted", "never ended",
                                      "unknown (killed in commit)"};

typedef struct txn {
    int round;
    char phase; /* the kill phase of its round, or '-' for the round's plain ones */
    int state;
    int offsets_sent;
    tl_txn_slot slots[NT][NP][M];
    /* what the last check found */
    int ucnt[NT][NP], ccnt[NT][NP];
    int64_t ufirst[NT][NP];
    int64_t uoff[NT][NP][M];
    int visible;
} txn_t;

static txn_t *txns;
static int ntxn, max_txn;
static const char *bs;
/* The broker (see TXN_KILL_TOPOLOGY above): a combined node of testlib's
 * tl_broker, or the broker node of a cluster with a controller of its own. */
static int combined;
static tl_broker broker;
static char *dir;
static tl_cluster *cl;
static tl_node *bnode;
static double t_killed;
static char *topics[NT];
static char *txn_id;
static char group[256];
static double last_commit_s = 0.002;

/* After round r: how many transactions had begun, and whose offsets G had. */
static int *txns_by_round, *observed;

static const char *value_of(int k, int t, int p, int m)
{
    static char buf[8][64];
    static int next;
    char *v = buf[next++ % 8];
    snprintf(v, 64, "k%d-t%d-p%d-m%d", k, t, p, m);
    return v;
}

static int64_t group_offset(int k, int t, int p)
{
    return 1000 * (int64_t)(k + 1) + 10 * t + p;
}

/* ---- the producer ---- */

static rd_kafka_resp_err_t on_new(rd_kafka_t *rk, const rd_kafka_conf_t *conf, void *opaque,
                                  char *errstr, size_t errstr_size);

static rd_kafka_t *new_producer(void)
{
    rd_kafka_conf_t *conf = tl_txn_conf(bs);
    TL_ASSERT(rd_kafka_conf_interceptor_add_on_new(conf, "0803-kill", on_new, NULL) == 0,
              "interceptor");
    tl_conf_set(conf, "transactional.id", txn_id);
    tl_conf_set(conf, "linger.ms", "1");
    tl_conf_set(conf, "reconnect.backoff.ms", "20");
    tl_conf_set(conf, "reconnect.backoff.max.ms", "200");
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

/* init_transactions, retried while its error is retriable (60 s at most). */
static rd_kafka_t *start_producer(double *took)
{
    rd_kafka_t *rk = new_producer();
    double t0 = tl_now();
    for (int attempt = 1;; attempt++) {
        rd_kafka_error_t *error = rd_kafka_init_transactions(rk, 20000);
        if (!error)
            break;
        tl_log("init_transactions, attempt %d after %.3f s: %s (%s%s)", attempt, tl_now() - t0,
               rd_kafka_error_string(error), rd_kafka_error_is_retriable(error) ? "retriable" : "",
               rd_kafka_error_is_fatal(error) ? "fatal" : "");
        TL_ASSERT(rd_kafka_error_is_retriable(error) && tl_now() - t0 < 60,
                  "init_transactions of %s: %s", txn_id, rd_kafka_error_string(error));
        rd_kafka_error_destroy(error);
    }
    *took = tl_now() - t0;
    return rk;
}

static txn_t *begin_txn(rd_kafka_t *rk, int round, char phase)
{
    TL_ASSERT(ntxn < max_txn, "%d transactions", ntxn);
    txn_t *x = &txns[ntxn++];
    memset(x, 0, sizeof(*x));
    x->round = round;
    x->phase = phase;
    x->state = ST_OPEN;
    rd_kafka_error_t *error = rd_kafka_begin_transaction(rk);
    TL_ASSERT(!error, "begin transaction %d: %s", (int)(x - txns), rd_kafka_error_string(error));
    return x;
}

static int txn_k(const txn_t *x)
{
    return (int)(x - txns);
}

static void send_wave(rd_kafka_t *rk, txn_t *x, int m)
{
    for (int t = 0; t < NT; t++)
        for (int p = 0; p < NP; p++)
            tl_txn_send(rk, topics[t], p, value_of(txn_k(x), t, p, m), &x->slots[t][p][m]);
}

/* Waves from..to-1, each flushed: every report must be a success. */
static void send_waves_flushed(rd_kafka_t *rk, txn_t *x, int from, int to)
{
    for (int m = from; m < to; m++) {
        send_wave(rk, x, m);
        TL_ASSERT(rd_kafka_flush(rk, 30000) == 0, "transaction %d, wave %d: %d messages "
                  "unflushed after 30 s", txn_k(x), m, rd_kafka_outq_len(rk));
        for (int t = 0; t < NT; t++)
            for (int p = 0; p < NP; p++) {
                const tl_txn_slot *s = &x->slots[t][p][m];
                TL_ASSERT(s->done && !s->err, "transaction %d: '%s': %s", txn_k(x),
                          value_of(txn_k(x), t, p, m), rd_kafka_err2name(s->err));
            }
    }
}

static void send_offsets(rd_kafka_t *rk, txn_t *x)
{
    rd_kafka_topic_partition_list_t *offs = rd_kafka_topic_partition_list_new(NT * NP);
    char md[16];
    snprintf(md, sizeof(md), "k%d", txn_k(x));
    for (int t = 0; t < NT; t++)
        for (int p = 0; p < NP; p++) {
            rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(offs, topics[t], p);
            tp->offset = group_offset(txn_k(x), t, p);
            tp->metadata = strdup(md);
            tp->metadata_size = strlen(md);
        }
    rd_kafka_consumer_group_metadata_t *gm = rd_kafka_consumer_group_metadata_new(group);
    rd_kafka_error_t *error = rd_kafka_send_offsets_to_transaction(rk, offs, gm, 30000);
    TL_ASSERT(!error, "send_offsets_to_transaction %d: %s", txn_k(x),
              rd_kafka_error_string(error));
    rd_kafka_consumer_group_metadata_destroy(gm);
    rd_kafka_topic_partition_list_destroy(offs);
    x->offsets_sent = 1;
}

/* A whole transaction, committed or aborted, that must succeed. */
static txn_t *plain_txn(rd_kafka_t *rk, int round, int commit)
{
    txn_t *x = begin_txn(rk, round, '-');
    send_waves_flushed(rk, x, 0, M);
    send_offsets(rk, x);
    double t0 = tl_now();
    rd_kafka_error_t *error = commit ? rd_kafka_commit_transaction(rk, 30000)
                                     : rd_kafka_abort_transaction(rk, 30000);
    TL_ASSERT(!error, "%s %d: %s", commit ? "commit" : "abort", txn_k(x),
              rd_kafka_error_string(error));
    if (commit)
        last_commit_s = tl_now() - t0;
    x->state = commit ? ST_COMMITTED : ST_ABORTED;
    return x;
}

/* ---- the kill ---- */

/* The kill of phases b and d, by a thread of its own: delay_s after it
 * starts (from_call: the call of commit or abort_transaction), or after
 * the producer wrote its EndTxn request to the socket (an interceptor of
 * on_request_sent wakes it). */
struct killer {
    pthread_t th;
    pid_t pid;
    double delay_s;
    int on_endtxn;
    sem_t sem;
    double t_start, t_sent, t_kill; /* t_sent 0: no EndTxn seen */
    int cancelled, fired;
};

static struct killer *armed; /* for the interceptor */

static rd_kafka_resp_err_t on_request_sent(rd_kafka_t *rk, int sockfd, const char *brokername,
                                           int32_t brokerid, int16_t api_key,
                                           int16_t api_version, int32_t corr_id, size_t size,
                                           void *opaque)
{
    (void)rk, (void)sockfd, (void)brokername, (void)brokerid, (void)api_version;
    (void)corr_id, (void)size, (void)opaque;
    if (api_key == 26) { /* EndTxn */
        struct killer *k = __atomic_exchange_n(&armed, NULL, __ATOMIC_SEQ_CST);
        if (k) {
            k->t_sent = tl_now();
            /* A short delay here, in librdkafka's broker thread: the
             * killer thread would take longer than that to wake up (a
             * commit's EndTxn takes Strand some tens of microseconds). */
            if (k->delay_s < 0.0002) {
                while (tl_now() < k->t_sent + k->delay_s)
                    ;
                kill(k->pid, SIGKILL);
                k->t_kill = tl_now();
                k->fired = 1;
                k->cancelled = 1;
            }
            sem_post(&k->sem);
        }
    }
    return RD_KAFKA_RESP_ERR_NO_ERROR;
}

static rd_kafka_resp_err_t on_new(rd_kafka_t *rk, const rd_kafka_conf_t *conf, void *opaque,
                                  char *errstr, size_t errstr_size)
{
    (void)conf, (void)opaque, (void)errstr, (void)errstr_size;
    return rd_kafka_interceptor_add_on_request_sent(rk, "0803-kill", on_request_sent, NULL);
}

static void *killer_main(void *arg)
{
    struct killer *k = arg;
    double t0 = k->t_start;
    if (k->on_endtxn) {
        while (sem_wait(&k->sem) < 0 && errno == EINTR)
            ;
        if (k->cancelled)
            return NULL;
        t0 = k->t_sent;
    }
    /* Sleep most of the delay, spin the rest: usleep alone is too coarse
     * for the fraction of a millisecond a commit takes on Strand. */
    if (k->delay_s > 0.002)
        usleep((useconds_t)((k->delay_s - 0.001) * 1e6));
    while (tl_now() < t0 + k->delay_s)
        ;
    kill(k->pid, SIGKILL);
    k->t_kill = tl_now();
    k->fired = 1;
    return NULL;
}

static void killer_start(struct killer *k, double delay_s, int on_endtxn)
{
    memset(k, 0, sizeof(*k));
    k->pid = combined ? broker.pid : bnode->pid;
    k->delay_s = delay_s;
    k->on_endtxn = on_endtxn;
    TL_ASSERT(sem_init(&k->sem, 0, 0) == 0, "sem_init: %s", strerror(errno));
    k->t_start = tl_now();
    if (on_endtxn)
        __atomic_store_n(&armed, k, __ATOMIC_SEQ_CST);
    TL_ASSERT(pthread_create(&k->th, NULL, killer_main, k) == 0, "pthread_create");
}

/* After the call returned: the thread done (no kill if the producer never
 * sent EndTxn). */
static void killer_join(struct killer *k)
{
    if (k->on_endtxn && __atomic_exchange_n(&armed, NULL, __ATOMIC_SEQ_CST) == k) {
        k->cancelled = 1;
        sem_post(&k->sem);
    }
    pthread_join(k->th, NULL);
    sem_destroy(&k->sem);
}

/* 0 .. 1.2x the last commit's time, in seconds, the short ones likelier
 * (the square of a uniform draw): on Strand the broker's part of a commit
 * is a small part of the client's. */
static double kill_delay(void)
{
    double u = (tl_rand() % 100000) / 100000.0;
    return u * u * 1.2 * last_commit_s;
}

/* Until every partition's last stable offset is its high watermark and
 * G's offsets are stable: returns the transaction whose offsets G has
 * (-1: none). */
static int settle(const char *what, double *took)
{
    double t0 = tl_now(), deadline = t0 + 30;
    int last = -2;

    for (int t = 0; t < NT; t++)
        for (int p = 0; p < NP; p++)
            for (;;) {
                int64_t rc, ru;
                tl_txn_latest(bs, topics[t], p, &rc, &ru);
                if (rc == ru)
                    break;
                TL_ASSERT(tl_now() < deadline, "%s: %s-%d: latest read_committed %" PRId64
                          ", read_uncommitted %" PRId64 " for 30 s: a transaction left open",
                          what, topics[t], p, rc, ru);
                usleep(20 * 1000);
            }
    for (int t = 0; t < NT; t++) {
        int64_t off[NP];
        int16_t err[NP];
        char *md[NP];
        for (;;) {
            int unstable = 0;
            tl_txn_offset_fetch(bs, group, topics[t], NP, 1, off, err, md);
            for (int p = 0; p < NP; p++)
                unstable += err[p] == TL_ERR_UNSTABLE_OFFSET_COMMIT;
            if (!unstable)
                break;
            for (int p = 0; p < NP; p++)
                free(md[p]);
            TL_ASSERT(tl_now() < deadline, "%s: OffsetFetch RequireStable of %s: still "
                      "UNSTABLE_OFFSET_COMMIT after 30 s", what, topics[t]);
            usleep(20 * 1000);
        }
        for (int p = 0; p < NP; p++) {
            int k = -1;
            TL_ASSERT(err[p] == 0, "%s: OffsetFetch %s-%d: error %d", what, topics[t], p, err[p]);
            if (off[p] >= 0) {
                k = (int)((off[p] - 10 * t - p) / 1000) - 1;
                TL_ASSERT(k >= 0 && k < ntxn && off[p] == group_offset(k, t, p),
                          "%s: G's offset of %s-%d is %" PRId64 ": no transaction's", what,
                          topics[t], p, off[p]);
                char want[16];
                snprintf(want, sizeof(want), "k%d", k);
                TL_ASSERT(md[p] && strcmp(md[p], want) == 0, "%s: G's %s-%d: offset of "
                          "transaction %d with metadata '%s'", what, topics[t], p, k,
                          md[p] ? md[p] : "(null)");
            }
            TL_ASSERT(last == -2 || k == last, "%s: G's %s-%d has transaction %d's offset, "
                      "another partition transaction %d's", what, topics[t], p, k, last);
            last = k;
            free(md[p]);
        }
    }
    *took = tl_now() - t0;
    return last;
}

#define SESSION_TIMEOUT_MS 2000

static void broker_kill9(void)
{
    if (combined)
        tl_broker_kill9(&broker);
    else
        tl_node_kill9(bnode);
    t_killed = tl_now();
}

/* The broker up again on its data, partitions led, unfenced. On a
 * cluster, only once the controller fenced the killed broker (its session
 * timed out): see the comment in main. */
static void broker_start(double *took)
{
    double t0 = tl_now();
    if (combined) {
        tl_broker_start(&broker, dir, NULL);
    } else {
        double wait = t_killed + (SESSION_TIMEOUT_MS + 500) / 1000.0 - tl_now();
        if (wait > 0)
            usleep((useconds_t)(wait * 1e6));
        t0 = tl_now();
        tl_node_start(bnode);
        tl_kraft_wait_fenced(bnode, bnode->id, 0, 60);
    }
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    for (int t = 0; t < NT; t++)
        TL_ASSERT(tl_wait_topic(rk, topics[t], 60000) >= NP, "%s: no leaders", topics[t]);
    rd_kafka_destroy(rk);
    *took = tl_now() - t0;
}

/* ---- the final check ---- */

typedef struct {
    int64_t pid, first;
} aborted_t;

/* "kK-tT-pP-mM" of topic t, partition p: K and M, or the test fails. */
static void parse_value(const char *v, int t, int p, int64_t off, const char *what, int *k,
                        int *m)
{
    int vt, vp, n = -1;
    TL_ASSERT(v && sscanf(v, "k%d-t%d-p%d-m%d%n", k, &vt, &vp, m, &n) == 4 &&
                  n == (int)strlen(v) && vt == t && vp == p && *k >= 0 && *k < ntxn &&
                  *m >= 0 && *m < M,
              "%s: %s-%d at %" PRId64 ": '%s' is no message the test sent there", what,
              topics[t], p, off, v ? v : "(null)");
}

/* The read_uncommitted view of topic t, partition p. */
static void check_uncommitted(const tl_txn_reader *ru, int t, int p, const char *what)
{
    const tl_txn_part *part = &ru->parts[p];
    int prev_k = -1, prev_m = -1;

    for (int i = 0; i < part->n; i++) {
        int k, m;
        parse_value(part->v[i].value, t, p, part->v[i].offset, what, &k, &m);
        TL_ASSERT(k > prev_k || (k == prev_k && m == prev_m + 1),
                  "%s: read_uncommitted %s-%d at %" PRId64 ": '%s' after '%s' (each "
                  "transaction's messages once, in order, transactions in order)", what,
                  topics[t], p, part->v[i].offset, part->v[i].value, part->v[i - 1].value);
        TL_ASSERT(k > prev_k ? m == 0 : 1, "%s: read_uncommitted %s-%d at %" PRId64
                  ": '%s' is the first of its transaction there (m0 missing)", what,
                  topics[t], p, part->v[i].offset, part->v[i].value);
        txn_t *x = &txns[k];
        if (m == 0)
            x->ufirst[t][p] = part->v[i].offset;
        x->uoff[t][p][m] = part->v[i].offset;
        x->ucnt[t][p]++;
        prev_k = k;
        prev_m = m;
    }
    /* Every acknowledged message at its offset. */
    for (int k = 0; k < ntxn; k++)
        for (int m = 0; m < M; m++) {
            const tl_txn_slot *s = &txns[k].slots[t][p][m];
            if (s->done && !s->err)
                TL_ASSERT(txns[k].uoff[t][p][m] == s->offset, "%s: '%s' acknowledged at %"
                          PRId64 ", read_uncommitted has it at %" PRId64 " (-1: not at all)",
                          what, value_of(k, t, p, m), s->offset, txns[k].uoff[t][p][m]);
        }
}

/* A raw read_committed Fetch of topic t, partition p from 0 to hw: its
 * aborted transactions and markers. */
static char empty_list[512];

static void check_fetch(int t, int p, int64_t hw, const char *what, int64_t *pid_seen,
                        int *empty_markers)
{
    int closed_k = -1;
    int64_t next = 0;
    int n_ab = 0, cap_ab = 0;
    aborted_t *ab = NULL;
    /* per offset: the transaction of a message, -1 an ABORT marker, -2 a
     * COMMIT marker; and its batch's producer id */
    int *kind = malloc((size_t)(hw + 1) * sizeof(*kind));
    int64_t *pid_at = malloc((size_t)(hw + 1) * sizeof(*pid_at));
    int open_k = -1;
    int64_t open_pid = -1, open_at = -1;

    TL_ASSERT(kind && pid_at, "out of memory");
    while (next < hw) {
        tl_txn_fetch f;
        int64_t from = next;
        tl_txn_fetch_raw(bs, topics[t], p, from, TL_READ_COMMITTED, 12, &f);
        TL_ASSERT(f.error == 0, "%s: Fetch %s-%d from %" PRId64 ": error %d", what, topics[t], p,
                  from, f.error);
        TL_ASSERT(f.high_watermark == hw && f.last_stable_offset == hw,
                  "%s: Fetch %s-%d: high watermark %" PRId64 ", last stable offset %" PRId64
                  ", expected both %" PRId64, what, topics[t], p, f.high_watermark,
                  f.last_stable_offset, hw);
        TL_ASSERT(f.nbatch > 0, "%s: Fetch %s-%d from %" PRId64 " below %" PRId64
                  ": no batch", what, topics[t], p, from, hw);
        for (int i = 0; i < f.n_aborted; i++) {
            int dup = 0;
            for (int j = 0; j < n_ab; j++)
                dup |= ab[j].pid == f.aborted_pid[i] && ab[j].first == f.aborted_first[i];
            if (dup)
                continue;
            if (n_ab == cap_ab) {
                cap_ab = cap_ab ? 2 * cap_ab : 16;
                ab = realloc(ab, (size_t)cap_ab * sizeof(*ab));
                TL_ASSERT(ab, "out of memory");
            }
            ab[n_ab].pid = f.aborted_pid[i];
            ab[n_ab++].first = f.aborted_first[i];
        }
        for (int i = 0; i < f.nbatch; i++) {
            const tl_txn_batch *b = &f.batches[i];
            if (b->base_offset + b->last_offset_delta < next)
                continue; /* a batch before the fetch offset */
            TL_ASSERT(b->transactional, "%s: %s-%d: batch at %" PRId64 " not transactional "
                      "(attributes %#x)", what, topics[t], p, b->base_offset, b->attributes);
            for (int j = 0; j < b->nrec; j++) {
                int64_t o = b->offsets[j];
                if (o < next)
                    continue;
                TL_ASSERT(o == next && o < hw, "%s: Fetch %s-%d: record at %" PRId64
                          ", expected %" PRId64, what, topics[t], p, o, next);
                pid_at[o] = b->producer_id;
                if (b->control) {
                    TL_ASSERT(b->nrec == 1 && (b->ctrl_type == 0 || b->ctrl_type == 1),
                              "%s: %s-%d at %" PRId64 ": control batch of %d records, type %d",
                              what, topics[t], p, o, b->nrec, b->ctrl_type);
                    kind[o] = b->ctrl_type == 1 ? -2 : -1;
                    if (open_k >= 0) {
                        TL_ASSERT(b->ctrl_type == (txns[open_k].visible ? 1 : 0),
                                  "%s: %s-%d: the marker at %" PRId64 " after transaction %d's "
                                  "messages (from %" PRId64 ") is %s; read_committed shows it %s",
                                  what, topics[t], p, o, open_k, open_at,
                                  b->ctrl_type ? "COMMIT" : "ABORT",
                                  txns[open_k].visible ? "visible" : "invisible");
                        TL_ASSERT(b->producer_id == open_pid, "%s: %s-%d: the marker at %"
                                  PRId64 " of producer %" PRId64 ", transaction %d's messages "
                                  "of %" PRId64, what, topics[t], p, o, b->producer_id, open_k,
                                  open_pid);
                        closed_k = open_k;
                        open_k = -1;
                    } else {
                        size_t l = strlen(empty_list);
                        if (l < sizeof(empty_list) - 64)
                            snprintf(empty_list + l, sizeof(empty_list) - l,
                                     " %s-%d@%" PRId64 ":%s(after %d's)", t ? "B" : "A", p, o,
                                     b->ctrl_type ? "COMMIT" : "ABORT", closed_k);
                        (*empty_markers)++;
                    }
                } else {
                    int k, m;
                    parse_value(b->values[j], t, p, o, what, &k, &m);
                    TL_ASSERT(txns[k].uoff[t][p][m] == o, "%s: Fetch %s-%d: '%s' at %" PRId64
                              ", read_uncommitted had it at %" PRId64, what, topics[t], p,
                              b->values[j], o, txns[k].uoff[t][p][m]);
                    TL_ASSERT(open_k < 0 || open_k == k, "%s: %s-%d: transaction %d's message "
                              "at %" PRId64 " before a marker closed transaction %d's (from %"
                              PRId64 ")", what, topics[t], p, k, o, open_k, open_at);
                    if (open_k < 0) {
                        open_k = k;
                        open_pid = b->producer_id;
                        open_at = o;
                    }
                    TL_ASSERT(b->producer_id == open_pid, "%s: %s-%d at %" PRId64 ": producer %"
                              PRId64 " in transaction %d begun by %" PRId64, what, topics[t], p,
                              o, b->producer_id, k, open_pid);
                    kind[o] = k;
                    if (*pid_seen < 0)
                        *pid_seen = b->producer_id;
                }
                next++;
            }
        }
        tl_txn_fetch_free(&f);
    }
    TL_ASSERT(open_k < 0, "%s: %s-%d: transaction %d's messages (from %" PRId64 ") have no "
              "marker below the last stable offset %" PRId64, what, topics[t], p, open_k,
              open_at, hw);

    /* The aborted transactions: each invisible one once at its first
     * offset, anything else only at an ABORT marker. */
    for (int i = 0; i < n_ab; i++) {
        int64_t o = ab[i].first;
        TL_ASSERT(o >= 0 && o < hw, "%s: Fetch %s-%d: aborted transaction (%" PRId64 ", %"
                  PRId64 ") outside the log [0, %" PRId64 ")", what, topics[t], p, ab[i].pid, o,
                  hw);
        TL_ASSERT(ab[i].pid == pid_at[o], "%s: Fetch %s-%d: aborted transaction (%" PRId64
                  ", %" PRId64 "): the batch there is producer %" PRId64 "'s", what, topics[t],
                  p, ab[i].pid, o, pid_at[o]);
        if (kind[o] >= 0) {
            const txn_t *x = &txns[kind[o]];
            TL_ASSERT(!x->visible && x->ufirst[t][p] == o, "%s: Fetch %s-%d: aborted "
                      "transaction at %" PRId64 " is transaction %d's message '%s' (%s, its "
                      "first there at %" PRId64 ")", what, topics[t], p, o, kind[o],
                      value_of(kind[o], t, p, (int)(o - x->ufirst[t][p])),
                      x->visible ? "visible" : "invisible", x->ufirst[t][p]);
        } else {
            TL_ASSERT(kind[o] == -1, "%s: Fetch %s-%d: aborted transaction at %" PRId64
                      ", a COMMIT marker", what, topics[t], p, o);
        }
    }
    for (int k = 0; k < ntxn; k++) {
        const txn_t *x = &txns[k];
        if (x->visible || x->ucnt[t][p] == 0)
            continue;
        int found = 0;
        for (int i = 0; i < n_ab; i++)
            found += ab[i].first == x->ufirst[t][p];
        TL_ASSERT(found == 1, "%s: Fetch %s-%d: invisible transaction %d (%s, round %d) from %"
                  PRId64 ": %d aborted transactions there, expected 1 (%d in the list)", what,
                  topics[t], p, k, st_name[x->state], x->round, x->ufirst[t][p], found, n_ab);
    }
    free(ab);
    free(kind);
    free(pid_at);
}

static void check_offsets(int last_visible, const char *what)
{
    for (int t = 0; t < NT; t++) {
        int64_t off[NP];
        int16_t err[NP];
        char *md[NP];
        double deadline = tl_now() + 30;
        for (;;) {
            int unstable = 0;
            tl_txn_offset_fetch(bs, group, topics[t], NP, 1, off, err, md);
            for (int p = 0; p < NP; p++)
                unstable += err[p] == TL_ERR_UNSTABLE_OFFSET_COMMIT;
            if (!unstable)
                break;
            for (int p = 0; p < NP; p++)
                free(md[p]);
            TL_ASSERT(tl_now() < deadline, "%s: G's offsets of %s unstable for 30 s", what,
                      topics[t]);
            usleep(20 * 1000);
        }
        for (int p = 0; p < NP; p++) {
            char want[16];
            snprintf(want, sizeof(want), "k%d", last_visible);
            TL_ASSERT(err[p] == 0, "%s: OffsetFetch %s-%d: error %d", what, topics[t], p, err[p]);
            TL_ASSERT(off[p] == (last_visible < 0 ? -1 : group_offset(last_visible, t, p)),
                      "%s: G's offset of %s-%d is %" PRId64 " (transaction %d's), expected %"
                      PRId64 ", the last visible transaction %d's", what, topics[t], p, off[p],
                      off[p] >= 0 ? (int)((off[p] - 10 * t - p) / 1000) - 1 : -1,
                      last_visible < 0 ? -1 : group_offset(last_visible, t, p), last_visible);
            TL_ASSERT(last_visible < 0 || (md[p] && strcmp(md[p], want) == 0),
                      "%s: G's %s-%d: metadata '%s', expected '%s'", what, topics[t], p,
                      md[p] ? md[p] : "(null)", want);
            free(md[p]);
        }
    }
}

static void check_all(const char *what, int check_rounds)
{
    tl_txn_reader *rc[NT], *ru[NT];
    int64_t hw[NT][NP];
    double t0 = tl_now();

    for (int k = 0; k < ntxn; k++) {
        txn_t *x = &txns[k];
        memset(x->ucnt, 0, sizeof(x->ucnt));
        memset(x->ccnt, 0, sizeof(x->ccnt));
        for (int t = 0; t < NT; t++)
            for (int p = 0; p < NP; p++) {
                x->ufirst[t][p] = -1;
                for (int m = 0; m < M; m++)
                    x->uoff[t][p][m] = -1;
            }
        x->visible = 0;
    }
    for (int t = 0; t < NT; t++) {
        for (int p = 0; p < NP; p++) {
            int64_t c, u;
            tl_txn_latest(bs, topics[t], p, &c, &u);
            TL_ASSERT(c == u, "%s: %s-%d: latest read_committed %" PRId64 ", read_uncommitted %"
                      PRId64, what, topics[t], p, c, u);
            hw[t][p] = u;
        }
        rc[t] = tl_txn_reader_new(bs, topics[t], NP, TL_READ_COMMITTED);
        ru[t] = tl_txn_reader_new(bs, topics[t], NP, TL_READ_UNCOMMITTED);
        TL_ASSERT(tl_txn_reader_poll(ru[t], hw[t], 60), "%s: read_uncommitted: %s not read to "
                  "its end in 60 s", what, topics[t]);
        TL_ASSERT(tl_txn_reader_poll(rc[t], hw[t], 60), "%s: read_committed: %s not read to "
                  "its end in 60 s", what, topics[t]);
        tl_txn_reader_poll(ru[t], NULL, 0.3);
        tl_txn_reader_poll(rc[t], NULL, 0.3);
        for (int p = 0; p < NP; p++) {
            TL_ASSERT(ru[t]->parts[p].eof == hw[t][p] && rc[t]->parts[p].eof == hw[t][p],
                      "%s: %s-%d: ends at %" PRId64 " read_uncommitted, %" PRId64
                      " read_committed, expected %" PRId64, what, topics[t], p,
                      ru[t]->parts[p].eof, rc[t]->parts[p].eof, hw[t][p]);
            check_uncommitted(ru[t], t, p, what);
        }
    }

    /* read_committed: only messages of read_uncommitted, where it had them. */
    for (int t = 0; t < NT; t++)
        for (int p = 0; p < NP; p++) {
            const tl_txn_part *part = &rc[t]->parts[p];
            for (int i = 0; i < part->n; i++) {
                int k, m;
                parse_value(part->v[i].value, t, p, part->v[i].offset, what, &k, &m);
                TL_ASSERT(txns[k].uoff[t][p][m] == part->v[i].offset, "%s: read_committed %s-%d:"
                          " '%s' at %" PRId64 ", read_uncommitted had it at %" PRId64, what,
                          topics[t], p, part->v[i].value, part->v[i].offset,
                          txns[k].uoff[t][p][m]);
                txns[k].ccnt[t][p]++;
            }
        }

    /* All or nothing, and as the client saw it. */
    int last_visible = -1, n_visible = 0, n_unknown_vis = 0, n_unknown = 0;
    for (int k = 0; k < ntxn; k++) {
        txn_t *x = &txns[k];
        int cn = 0, un = 0;
        char where[256] = "";
        for (int t = 0; t < NT; t++)
            for (int p = 0; p < NP; p++) {
                cn += x->ccnt[t][p];
                un += x->ucnt[t][p];
                size_t l = strlen(where);
                snprintf(where + l, sizeof(where) - l, " %s-%d:%d/%d", t ? "B" : "A", p,
                         x->ccnt[t][p], x->ucnt[t][p]);
            }
        TL_ASSERT(cn == 0 || cn == un, "%s: transaction %d (round %d, phase %c, %s) partly "
                  "visible: %d of its %d messages in the log read_committed (read_committed/"
                  "in the log per partition, topics A B:%s)", what, k, x->round, x->phase,
                  st_name[x->state], cn, un, where);
        x->visible = cn > 0;
        if (x->state == ST_COMMITTED || x->state == ST_UNKNOWN || x->phase == 'd' ||
            x->phase == '-')
            TL_ASSERT(un == NT * NP * M, "%s: transaction %d (round %d, phase %c, %s): %d of "
                      "its %d messages in the log (read_committed/in the log:%s)", what, k,
                      x->round, x->phase, st_name[x->state], un, NT * NP * M, where);
        if (x->state == ST_COMMITTED)
            TL_ASSERT(x->visible, "%s: transaction %d (round %d, phase %c) committed "
                      "(commit_transaction returned success) but invisible: read_committed/in "
                      "the log:%s", what, k, x->round, x->phase, where);
        else if (x->state == ST_ABORTED || x->state == ST_UNENDED)
            TL_ASSERT(!x->visible, "%s: transaction %d (round %d, phase %c, %s) visible: "
                      "read_committed/in the log:%s", what, k, x->round, x->phase,
                      st_name[x->state], where);
        else
            TL_ASSERT(x->state == ST_UNKNOWN, "transaction %d: state %d", k, x->state);
        if (x->state == ST_UNKNOWN) {
            n_unknown++;
            n_unknown_vis += x->visible;
        }
        if (x->visible) {
            n_visible++;
            last_visible = k;
        }
    }

    /* Exactly the visible transactions' messages, once, in order. */
    for (int t = 0; t < NT; t++)
        for (int p = 0; p < NP; p++) {
            const tl_txn_part *cp = &rc[t]->parts[p], *up = &ru[t]->parts[p];
            int i = 0;
            for (int j = 0; j < up->n; j++) {
                int k, m;
                parse_value(up->v[j].value, t, p, up->v[j].offset, what, &k, &m);
                if (!txns[k].visible)
                    continue;
                TL_ASSERT(i < cp->n && cp->v[i].offset == up->v[j].offset,
                          "%s: read_committed %s-%d: message %d at %" PRId64 ", expected '%s' "
                          "at %" PRId64, what, topics[t], p, i, i < cp->n ? cp->v[i].offset : -1,
                          up->v[j].value, up->v[j].offset);
                TL_ASSERT(strcmp(cp->v[i].value, up->v[j].value) == 0, "%s: read_committed "
                          "%s-%d at %" PRId64 ": '%s', read_uncommitted '%s'", what, topics[t], p,
                          cp->v[i].offset, cp->v[i].value, up->v[j].value);
                i++;
            }
            TL_ASSERT(i == cp->n, "%s: read_committed %s-%d: %d messages, expected %d", what,
                      topics[t], p, cp->n, i);
        }

    /* The raw Fetch: aborted transactions and markers. */
    int64_t pid = -1;
    int empty_markers = 0;
    empty_list[0] = '\0';
    for (int t = 0; t < NT; t++)
        for (int p = 0; p < NP; p++)
            check_fetch(t, p, hw[t][p], what, &pid, &empty_markers);

    /* G's offsets. */
    check_offsets(last_visible, what);
    if (check_rounds) {
        int nr = 0;
        for (int r = 0; txns_by_round[r] >= 0; r++, nr++) {
            int want = -1;
            for (int k = 0; k < txns_by_round[r]; k++)
                if (txns[k].visible)
                    want = k;
            TL_ASSERT(observed[r] == want, "%s: after round %d's restart G's offsets were "
                      "transaction %d's; the last visible of the %d begun by then is %d", what,
                      r, observed[r], txns_by_round[r], want);
        }
    }

    int64_t total = 0;
    for (int t = 0; t < NT; t++)
        for (int p = 0; p < NP; p++)
            total += hw[t][p];
    tl_log("%s: %d transactions, %d visible (%d of %d unknown ones), the last visible %d; "
           "%" PRId64 " offsets in the 6 partitions, %d markers without messages before them%s%s; "
           "producer %" PRId64 "; checked in %.2f s", what, ntxn, n_visible, n_unknown_vis,
           n_unknown, last_visible, total, empty_markers, empty_markers ? ":" : "", empty_list,
           pid, tl_now() - t0);
    for (int t = 0; t < NT; t++) {
        tl_txn_reader_free(rc[t]);
        tl_txn_reader_free(ru[t]);
    }
}

/* ---- the rounds ---- */

int main(void)
{
    const char *env = getenv("TXN_KILL_ROUNDS");
    /* Every phase once, and phase a again on Strand; a Kafka restart
     * takes seconds. */
    int rounds = env && *env ? atoi(env) : tl_is_kafka() ? NPHASE : NPHASE + 1;
    double t_start = tl_now(), t_restart, t_init, t_settle;
    rd_kafka_t *rk;

    tl_init("0803-txn-kill9");
    TL_ASSERT(rounds >= 1, "TXN_KILL_ROUNDS=%s", env);
    max_txn = 3 * rounds + 2;
    txns = calloc((size_t)max_txn, sizeof(*txns));
    txns_by_round = malloc((size_t)(rounds + 1) * sizeof(int));
    observed = malloc((size_t)(rounds + 1) * sizeof(int));
    TL_ASSERT(txns && txns_by_round && observed, "out of memory");
    for (int r = 0; r <= rounds; r++)
        txns_by_round[r] = observed[r] = -1;

    env = getenv("TXN_KILL_TOPOLOGY");
    combined = env && *env ? strcmp(env, "combined") == 0 : !tl_is_kafka();
    TL_ASSERT(combined || !env || !*env || strcmp(env, "split") == 0,
              "TXN_KILL_TOPOLOGY=%s: combined or split", env);
    if (combined) {
        dir = tl_scratch_dir("0803-broker");
        tl_broker_start(&broker, dir, NULL);
        bs = broker.bootstrap;
    } else {
        cl = tl_cluster_new("0803-txn-kill9", TL_QUORUM_SHARED);
        tl_cluster_set(cl, "broker.session.timeout.ms=" TL_STR(SESSION_TIMEOUT_MS));
        tl_cluster_set(cl, "broker.heartbeat.interval.ms=500");
        tl_cluster_set(cl, "offsets.topic.replication.factor=1");
        tl_cluster_set(cl, "transaction.state.log.replication.factor=1");
        tl_cluster_set(cl, "transaction.state.log.min.isr=1");
        tl_cluster_add(cl, TL_ROLE_CONTROLLER, NULL);
        bnode = tl_cluster_add(cl, TL_ROLE_BROKER, NULL);
        tl_cluster_start(cl);
        bs = bnode->bootstrap;
    }
    for (int t = 0; t < NT; t++)
        topics[t] = tl_topic_name(t ? "t0803b" : "t0803a");
    txn_id = tl_topic_name("txn0803");
    snprintf(group, sizeof(group), "%s-G", txn_id);
    {
        rd_kafka_t *adm = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
        for (int t = 0; t < NT; t++)
            TL_ASSERT(tl_create_topic(adm, topics[t], NP) >= NP, "create %s", topics[t]);
        rd_kafka_destroy(adm);
    }
    rk = start_producer(&t_init);
    tl_log("%d rounds; topics %s %s (A, B), transactional id %s, group %s; init_transactions "
           "in %.3f s", rounds, topics[0], topics[1], txn_id, group, t_init);

    for (int r = 0; r < rounds; r++) {
        char phase = (char)('a' + r % NPHASE), what[64], saw[200] = "";
        txn_t *x = NULL;
        struct killer killer;

        plain_txn(rk, r, 1);
        if (r % 2 == 1)
            plain_txn(rk, r, 0);
        switch (phase) {
        case 'a': {
            int h = 1 + (int)(tl_rand() % (M - 1)); /* waves acknowledged first */
            useconds_t d = (useconds_t)(tl_rand() % 3000);
            x = begin_txn(rk, r, phase);
            send_waves_flushed(rk, x, 0, h);
            for (int m = h; m < M; m++)
                send_wave(rk, x, m);
            rd_kafka_poll(rk, 0);
            usleep(d);
            broker_kill9();
            x->state = ST_UNENDED;
            snprintf(saw, sizeof(saw), "killed %.1f ms after sending waves %d-%d (%d flushed "
                     "before)", d / 1000.0, h, M - 1, h);
            break;
        }
        case 'b':
        case 'd': {
            /* Every other time from the EndTxn request on (see killer). */
            int commit = phase == 'b', on_endtxn = (r / NPHASE) % 2 == 0;
            double d = kill_delay();
            x = begin_txn(rk, r, phase);
            send_waves_flushed(rk, x, 0, M);
            send_offsets(rk, x);
            double t0 = tl_now();
            killer_start(&killer, d, on_endtxn);
            rd_kafka_error_t *error = commit ? rd_kafka_commit_transaction(rk, 3000)
                                             : rd_kafka_abort_transaction(rk, 3000);
            double took = tl_now() - t0;
            killer_join(&killer);
            if (commit)
                x->state = error ? ST_UNKNOWN : ST_COMMITTED;
            else
                x->state = ST_ABORTED;
            if (killer.fired)
                snprintf(saw, sizeof(saw), "killed %.3f ms after %s (%.3f ms into %s_"
                         "transaction; the last commit took %.3f ms), which returned after "
                         "%.3f s: %s", d * 1000, on_endtxn ? "EndTxn was sent" : "the call",
                         (killer.t_kill - t0) * 1000, commit ? "commit" : "abort",
                         last_commit_s * 1000, took,
                         error ? rd_kafka_error_string(error) : "success");
            else
                snprintf(saw, sizeof(saw), "%s_transaction returned after %.3f s (%s) "
                         "without an EndTxn request: killed after it",
                         commit ? "commit" : "abort", took,
                         error ? rd_kafka_error_string(error) : "success");
            if (error)
                rd_kafka_error_destroy(error);
            broker_kill9(); /* (again, and) reaps it */
            break;
        }
        case 'c':
            x = plain_txn(rk, r, 1);
            x->phase = phase;
            broker_kill9();
            snprintf(saw, sizeof(saw), "killed right after commit_transaction returned "
                     "success (in %.2f ms)", last_commit_s * 1000);
            break;
        case 'e':
            snprintf(what, sizeof(what), "round %d, before the kill", r);
            settle(what, &t_settle);
            broker_kill9();
            snprintf(saw, sizeof(saw), "killed between transactions, every marker written");
            break;
        }
        double t0 = tl_now();
        rd_kafka_destroy(rk);
        double t_destroy = tl_now() - t0;
        snprintf(what, sizeof(what), "round %d (phase %c)", r, phase);
        broker_start(&t_restart);
        rk = start_producer(&t_init);
        txns_by_round[r] = ntxn;
        observed[r] = settle(what, &t_settle);
        tl_log("round %d, phase %c: %s%s%s; producer destroyed in %.3f s, broker restarted in "
               "%.2f s, init_transactions %.3f s, settled %.3f s; G's offsets those of "
               "transaction %d (%d begun)", r, phase, saw, x ? " -> transaction " : "",
               x ? tl_fmt("%d %s", txn_k(x), st_name[x->state]) : "", t_destroy, t_restart,
               t_init, t_settle, observed[r], ntxn);
    }
    plain_txn(rk, rounds, 1);
    rd_kafka_destroy(rk);
    tl_log("%d rounds in %.1f s", rounds, tl_now() - t_start);

    /* The markers of the last commit may still be on their way. */
    settle("after the rounds", &t_settle);
    check_all("after the rounds", 1);
    broker_kill9();
    broker_start(&t_restart);
    settle("after the last restart", &t_settle);
    tl_log("killed and restarted once more (%.2f s), settled in %.3f s", t_restart, t_settle);
    check_all("after one more kill -9 and restart", 1);

    if (combined) {
        TL_ASSERT_EQ(tl_broker_stop(&broker), 0);
    } else {
        tl_cluster_stop(cl);
        tl_cluster_free(cl);
    }
    tl_log("%.1f s in all", tl_now() - t_start);
    for (int t = 0; t < NT; t++)
        free(topics[t]);
    free(txn_id);
    free(dir);
    free(txns);
    free(txns_by_round);
    free(observed);
    return tl_done();
}
