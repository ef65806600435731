/* 0400-disk-faults: the test's own broker runs with fault injection armed
 * from its environment (STRAND_FAULT, src/util/fault.h), and the test
 * breaks and repairs its disk from outside by creating and removing
 * trigger files:
 *
 *   1. The disk is full (every write fails with ENOSPC): produce requests
 *      to topic A are answered KAFKA_STORAGE_ERROR; once space is back the
 *      partition takes writes again, at the next offset.
 *   2. fsync fails (EIO) under topic B, which flushes every message
 *      (flush.messages=1): the produce answers are KAFKA_STORAGE_ERROR, and
 *      they stay refused after the disk recovers (a failed fsync is never
 *      followed by a success: the log is offline until restart), while
 *      topic A goes on working. (Once the producer refreshes its metadata
 *      it finds the partition leaderless and stops sending, as with
 *      Kafka, so a later message may also time out in the client;
 *      0402-offline-log checks each API's answer.)
 *   3. After a restart, A holds exactly the acknowledged messages, once and
 *      in order; B holds its acknowledged messages, at most the unflushed
 *      ones of step 2 besides (written, not acknowledged), none of those
 *      refused while offline; B takes writes again.
 *
 * The producer does not retry (retries=0), so each delivery report carries
 * the broker's answer. Strand only (Kafka has no STRAND_FAULT). */
#include "testlib/testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_MSGS 1024

typedef struct msg_state {
    int done;
    rd_kafka_resp_err_t err;
    int64_t offset;
} msg_state;

/* Per topic: messages "<topic letter>-<seq>" and their delivery reports. */
typedef struct topic_run {
    char *name;
    char letter;
    int n;
    msg_state m[MAX_MSGS];
} topic_run;

static topic_run ta = {.letter = 'A'}, tb = {.letter = 'B'};

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    msg_state *st = msg->_private;
    (void)rk;
    (void)opaque;
    st->done = 1;
    st->err = msg->err;
    st->offset = msg->offset;
}

static int make_value(char *buf, size_t n, const topic_run *t, int seq)
{
    return snprintf(buf, n, "%c-%06d disk fault test message ....................", t->letter,
                    seq);
}

/* Produces count messages to t and waits for all their reports. Returns
 * the index of the first. */
static int produce(rd_kafka_t *rk, topic_run *t, int count)
{
    int first = t->n;

    TL_ASSERT(t->n + count <= MAX_MSGS, "too many messages");
    for (int i = 0; i < count; i++) {
        char val[128];
        int seq = t->n++, len = make_value(val, sizeof(val), t, seq);
        rd_kafka_resp_err_t err = rd_kafka_producev(
            rk, RD_KAFKA_V_TOPIC(t->name), RD_KAFKA_V_PARTITION(0),
            RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(val, (size_t)len),
            RD_KAFKA_V_OPAQUE(&t->m[seq]), RD_KAFKA_V_END);
        TL_ASSERT(!err, "produce: %s", rd_kafka_err2name(err));
    }
    TL_ASSERT(rd_kafka_flush(rk, 30000) == 0, "%d messages without a report after 30 s",
              rd_kafka_outq_len(rk));
    for (int i = first; i < t->n; i++)
        TL_ASSERT(t->m[i].done, "message %c-%d has no report", t->letter, i);
    return first;
}

static void expect(const topic_run *t, int first, rd_kafka_resp_err_t want, const char *why)
{
    for (int i = first; i < t->n; i++)
        TL_ASSERT(t->m[i].err == want, "%s: message %c-%d: %s, expected %s", why, t->letter, i,
                  rd_kafka_err2name(t->m[i].err), rd_kafka_err2name(want));
}

/* Not written: KAFKA_STORAGE_ERROR from the broker, or, once the client
 * has seen the partition without a leader, its own time-out. */
static void expect_refused(const topic_run *t, int first, const char *why)
{
    for (int i = first; i < t->n; i++)
        TL_ASSERT(t->m[i].err == RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR ||
                      t->m[i].err == RD_KAFKA_RESP_ERR__MSG_TIMED_OUT,
                  "%s: message %c-%d: %s, expected KAFKA_STORAGE_ERROR or a time-out", why,
                  t->letter, i, rd_kafka_err2name(t->m[i].err));
}

static void touch(const char *path)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    TL_ASSERT(fd >= 0, "%s: %s", path, strerror(errno));
    close(fd);
}

static rd_kafka_t *new_producer(const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "acks", "all");
    tl_conf_set(conf, "retries", "0");
    tl_conf_set(conf, "linger.ms", "5");
    tl_conf_set(conf, "message.timeout.ms", "20000");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

/* Creates a one-partition topic with one topic config (key may be NULL). */
static void create_topic(rd_kafka_t *rk, const char *name, const char *key, const char *val)
{
    TL_ASSERT_EQ(tl_create_topic_cfg(rk, name, 1, key, val), 1);
}

/* Reads partition 0 of t to its end (CRC checks on) and returns the
 * sequence numbers found, in log order; *n gets their count. */
static int *read_topic(const char *bs, const topic_run *t, int *n)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(1);
    int64_t lo, hi, next = 0;
    double deadline = tl_now() + 30;
    int *seqs, got = 0;
    rd_kafka_t *rk;

    tl_conf_set(conf, "group.id", t->name);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "check.crcs", "true");
    tl_conf_set(conf, "fetch.wait.max.ms", "100");
    rk = tl_new(RD_KAFKA_CONSUMER, conf);
    TL_ASSERT_EQ(rd_kafka_query_watermark_offsets(rk, t->name, 0, &lo, &hi, 10000), 0);
    TL_ASSERT_EQ(lo, 0);
    seqs = calloc((size_t)hi + 1, sizeof(*seqs));
    rd_kafka_topic_partition_list_add(parts, t->name, 0)->offset = RD_KAFKA_OFFSET_BEGINNING;
    TL_ASSERT_EQ(rd_kafka_assign(rk, parts), 0);
    rd_kafka_topic_partition_list_destroy(parts);
    while (got < hi) {
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 500);
        char want[128];
        int seq, len;
        if (tl_now() > deadline)
            tl_fail("%s: read %d of %" PRId64 " messages in 30 s", t->name, got, hi);
        if (!msg)
            continue;
        TL_ASSERT(!msg->err, "consume %s: %s", t->name, rd_kafka_message_errstr(msg));
        TL_ASSERT_EQ(msg->offset, next);
        next++;
        TL_ASSERT(msg->len > 2 && ((const char *)msg->payload)[0] == t->letter, "%s offset %" PRId64
                  ": foreign message", t->name, msg->offset);
        seq = atoi((const char *)msg->payload + 2);
        len = make_value(want, sizeof(want), t, seq);
        TL_ASSERT(seq >= 0 && seq < t->n && msg->len == (size_t)len &&
                      !memcmp(msg->payload, want, (size_t)len),
                  "%s offset %" PRId64 ": corrupt value", t->name, msg->offset);
        seqs[got++] = seq;
        rd_kafka_message_destroy(msg);
    }
    rd_kafka_destroy(rk);
    *n = got;
    return seqs;
}

/* Every acknowledged message exactly once, at its offset, all in produce
 * order; a message refused in [no_from, no_to) not at all. */
static void check_topic(const char *bs, const topic_run *t, int no_from, int no_to)
{
    int n, *seqs = read_topic(bs, t, &n), acked = 0, extra = 0;
    char *seen = calloc((size_t)t->n + 1, 1);

    for (int i = 0; i < n; i++) {
        int s = seqs[i];
        TL_ASSERT(i == 0 || s > seqs[i - 1], "%s offset %d: message %d after %d", t->name, i, s,
                  seqs[i - 1]);
        TL_ASSERT(!(s >= no_from && s < no_to), "%s: refused message %d is in the log", t->name,
                  s);
        seen[s] = 1;
        if (t->m[s].err)
            extra++;
        else
            TL_ASSERT_EQ(t->m[s].offset, i);
    }
    for (int s = 0; s < t->n; s++)
        if (!t->m[s].err) {
            TL_ASSERT(seen[s], "%s: acknowledged message %d is missing", t->name, s);
            acked++;
        }
    tl_log("%s: %d produced, %d acknowledged, %d in the log (%d not acknowledged)", t->name, t->n,
           acked, n, extra);
    free(seqs);
    free(seen);
}

int main(void)
{
    tl_broker b = {0};
    char *dir, full[600], syncfail[600], spec[1400];
    rd_kafka_t *rk;
    int first, st;

    tl_init("0400-disk-faults");
    if (tl_is_kafka())
        tl_skip("fault injection is strand's (STRAND_FAULT)");
    dir = tl_scratch_dir("0400");
    snprintf(full, sizeof(full), "%s/disk-full", dir);
    snprintf(syncfail, sizeof(syncfail), "%s/fsync-fails", dir);
    snprintf(spec, sizeof(spec), "write:errno=ENOSPC:while=%s;sync:errno=EIO:while=%s", full,
             syncfail);
    setenv("STRAND_FAULT", spec, 1);
    tl_broker_start(&b, dir, NULL);
    unsetenv("STRAND_FAULT");
    ta.name = tl_topic_name("t0400a");
    tb.name = tl_topic_name("t0400b");
    rk = new_producer(b.bootstrap);
    create_topic(rk, ta.name, NULL, NULL);
    create_topic(rk, tb.name, "flush.messages", "1");

    /* 1. a full disk, then space again */
    expect(&ta, produce(rk, &ta, 50), 0, "before the disk fills");
    touch(full);
    expect(&ta, produce(rk, &ta, 20), RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR, "disk full");
    unlink(full);
    expect(&ta, produce(rk, &ta, 50), 0, "space is back");

    /* 2. fsync fails: offline until restart, for B only */
    expect(&tb, produce(rk, &tb, 30), 0, "before fsync fails");
    touch(syncfail);
    expect(&tb, produce(rk, &tb, 10), RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR, "fsync fails");
    unlink(syncfail);
    first = produce(rk, &tb, 10);
    expect_refused(&tb, first, "offline after a failed fsync");
    expect(&ta, produce(rk, &ta, 10), 0, "the other topic goes on");
    rd_kafka_destroy(rk);

    /* 3. restart: recovery, then the data */
    st = tl_broker_stop(&b);
    TL_ASSERT(st == 0 || st == 1, "broker exit status %d on SIGTERM", st);
    tl_log("broker exit status %d (1: a log was offline, its dir closed unclean)", st);
    tl_broker_start(&b, dir, NULL);
    check_topic(b.bootstrap, &ta, 50, 70);
    check_topic(b.bootstrap, &tb, first, first + 10);
    rk = new_producer(b.bootstrap);
    expect(&tb, produce(rk, &tb, 10), 0, "after the restart");
    rd_kafka_destroy(rk);
    check_topic(b.bootstrap, &tb, first, first + 10);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(ta.name);
    free(tb.name);
    free(dir);
    return tl_done();
}
