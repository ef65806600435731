/* 0401-kill9-idempotent: rounds of produce with an idempotent producer
 * (enable.idempotence=true, so acks=all) while the test's own broker is
 * killed with SIGKILL at a random moment and restarted on the same data.
 * After each round:
 *   - the segment files on disk are whole batches with good CRCs and
 *     contiguous offsets, except at most a torn tail of the last segment
 *     of a partition (a write the kill cut short), which recovery removes;
 *   - after the restart, every acknowledged message is in the log exactly
 *     once, at the offset reported, in produce order, and no message at
 *     all appears twice (the retries of what was in flight at the kill
 *     are deduplicated by producer id and sequence, from the producer
 *     state recovered from the log).
 * A final clean stop must leave no torn byte at all. Bounded to well under
 * a minute. */
#include "testlib/testlib.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log_batch.h"

#define NPART 2
#define ROUNDS 5
#define MAX_MSGS 400000

enum { ST_PENDING, ST_OK, ST_FAILED };

static struct {
    uint8_t status;
    int64_t offset;
} msgs[MAX_MSGS];
static int n_sent;

static int make_value(char *buf, int seq)
{
    return snprintf(buf, 128, "kill9-idem %08d of partition %d ..........................", seq,
                    seq % NPART);
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    int seq = (int)(intptr_t)msg->_private;
    (void)rk;
    (void)opaque;
    msgs[seq].status = msg->err ? ST_FAILED : ST_OK;
    msgs[seq].offset = msg->offset;
}

static rd_kafka_t *new_producer(const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "enable.idempotence", "true");
    tl_conf_set(conf, "linger.ms", "2");
    tl_conf_set(conf, "message.timeout.ms", "30000");
    tl_conf_set(conf, "reconnect.backoff.ms", "20");
    tl_conf_set(conf, "reconnect.backoff.max.ms", "200");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

/* Produces at a bounded pace for secs seconds. */
static void produce_for(rd_kafka_t *rk, const char *topic, double secs)
{
    double end = tl_now() + secs;

    while (tl_now() < end && n_sent < MAX_MSGS) {
        for (int k = 0; k < 50 && n_sent < MAX_MSGS; k++) {
            char val[128];
            int seq = n_sent, len = make_value(val, seq);
            rd_kafka_resp_err_t err = rd_kafka_producev(
                rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(seq % NPART),
                RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_VALUE(val, (size_t)len),
                RD_KAFKA_V_OPAQUE((void *)(intptr_t)seq), RD_KAFKA_V_END);
            if (err == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                break;
            TL_ASSERT(!err, "produce: %s", rd_kafka_err2name(err));
            n_sent++;
        }
        rd_kafka_poll(rk, 2);
    }
}

/* ---- the files: whole batches only ---- */

static int cmp_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Checks one partition directory's .log files in offset order: whole
 * batches with good CRCs, each starting where the last ended. Returns the
 * number of torn bytes at the end of the last segment (fails the test on
 * anything else). */
static int64_t scan_partition(const char *pdir)
{
    DIR *d = opendir(pdir);
    struct dirent *de;
    char *names[4096];
    int n = 0;
    int64_t expect = -1, torn = 0;

    TL_ASSERT(d, "%s: %s", pdir, strerror(errno));
    while ((de = readdir(d)) != NULL)
        if (strlen(de->d_name) == 24 && !strcmp(de->d_name + 20, ".log") && n < 4096)
            names[n++] = strdup(de->d_name);
    closedir(d);
    qsort(names, (size_t)n, sizeof(*names), cmp_name);
    for (int i = 0; i < n; i++) {
        char path[1200];
        struct stat st;
        uint8_t *p;
        int64_t pos = 0, base = strtoll(names[i], NULL, 10);
        int fd;

        snprintf(path, sizeof(path), "%s/%s", pdir, names[i]);
        fd = open(path, O_RDONLY);
        TL_ASSERT(fd >= 0 && fstat(fd, &st) == 0, "%s: %s", path, strerror(errno));
        p = malloc((size_t)st.st_size + 1);
        TL_ASSERT(pread(fd, p, (size_t)st.st_size, 0) == st.st_size, "%s: short read", path);
        close(fd);
        TL_ASSERT(expect < 0 || base == expect,
                  "%s: segment base %" PRId64 ", the previous ended at %" PRId64, path, base,
                  expect);
        expect = base;
        while (pos < st.st_size) {
            log_batch_hdr_t h;
            int64_t total;
            if (log_batch_hdr_parse(p + pos, (size_t)(st.st_size - pos), &h) < 0 ||
                (total = (int64_t)h.batch_length + LOG_BATCH_LOG_OVERHEAD) > st.st_size - pos ||
                !log_batch_crc_ok(p + pos, (size_t)total)) {
                TL_ASSERT(i == n - 1, "%s: bad batch at byte %" PRId64 " of a segment that is "
                          "not the last", path, pos);
                torn = st.st_size - pos;
                break;
            }
            TL_ASSERT(expect < 0 || h.base_offset == expect, "%s: batch at %" PRId64
                      " has base offset %" PRId64 ", expected %" PRId64, path, pos,
                      h.base_offset, expect);
            expect = h.base_offset + h.last_offset_delta + 1;
            pos += total;
        }
        free(p);
        free(names[i]);
    }
    return torn;
}

static int64_t scan_topic(const char *dir, const char *topic)
{
    int64_t torn = 0;

    for (int p = 0; p < NPART; p++) {
        char pdir[1100];
        snprintf(pdir, sizeof(pdir), "%s/data/%s-%d", dir, topic, p);
        torn += scan_partition(pdir);
    }
    return torn;
}

/* ---- the data: exactly once, in order ---- */

static void check_log(const char *bs, const char *topic, int round)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(NPART);
    int64_t hi[NPART], next[NPART], last_seq[NPART], total = 0, got = 0;
    double deadline = tl_now() + 30;
    uint8_t *seen = calloc(MAX_MSGS, 1);
    int ok = 0, failed_seen = 0;
    rd_kafka_t *rk;

    tl_conf_set(conf, "group.id", topic);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "check.crcs", "true");
    tl_conf_set(conf, "fetch.wait.max.ms", "100");
    rk = tl_new(RD_KAFKA_CONSUMER, conf);
    for (int p = 0; p < NPART; p++) {
        int64_t lo;
        TL_ASSERT_EQ(rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi[p], 10000), 0);
        TL_ASSERT_EQ(lo, 0);
        total += hi[p];
        next[p] = 0;
        last_seq[p] = -1;
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    TL_ASSERT_EQ(rd_kafka_assign(rk, parts), 0);
    rd_kafka_topic_partition_list_destroy(parts);
    while (got < total) {
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 500);
        char want[128];
        int p, seq, len;
        if (tl_now() > deadline)
            tl_fail("round %d: read %" PRId64 " of %" PRId64 " messages in 30 s", round, got,
                    total);
        if (!msg)
            continue;
        TL_ASSERT(!msg->err, "consume: %s", rd_kafka_message_errstr(msg));
        p = msg->partition;
        TL_ASSERT_EQ(msg->offset, next[p]);
        next[p]++;
        seq = msg->len > 11 ? atoi((const char *)msg->payload + 11) : -1;
        TL_ASSERT(seq >= 0 && seq < n_sent && seq % NPART == p,
                  "partition %d offset %" PRId64 ": unknown message", p, msg->offset);
        len = make_value(want, seq);
        TL_ASSERT(msg->len == (size_t)len && !memcmp(msg->payload, want, (size_t)len),
                  "partition %d offset %" PRId64 ": corrupt value", p, msg->offset);
        TL_ASSERT(!seen[seq], "round %d: message %d is in the log twice", round, seq);
        TL_ASSERT(seq > last_seq[p], "partition %d offset %" PRId64 ": message %d after %" PRId64,
                  p, msg->offset, seq, last_seq[p]);
        seen[seq] = 1;
        last_seq[p] = seq;
        if (msgs[seq].status == ST_OK)
            TL_ASSERT(msgs[seq].offset == msg->offset, "message %d acknowledged at %" PRId64
                      ", found at %" PRId64, seq, msgs[seq].offset, msg->offset);
        got++;
        rd_kafka_message_destroy(msg);
    }
    rd_kafka_destroy(rk);
    for (int i = 0; i < n_sent; i++) {
        if (msgs[i].status == ST_OK) {
            ok++;
            TL_ASSERT(seen[i], "round %d: message %d was acknowledged at offset %" PRId64
                      " but is not in the log", round, i, msgs[i].offset);
        } else if (seen[i]) {
            failed_seen++;
        }
    }
    tl_log("round %d: %d produced, %d acknowledged, %" PRId64 " in the log (%d not "
           "acknowledged)", round, n_sent, ok, got, failed_seen);
    free(seen);
}

int main(void)
{
    tl_broker b = {0};
    char *dir, *topic;
    rd_kafka_t *rk;
    double start = tl_now();
    int64_t torn;

    tl_init("0401-kill9-idempotent");
    dir = tl_scratch_dir("0401-broker");
    topic = tl_topic_name("t0401");
    tl_broker_start(&b, dir, NULL);
    rk = new_producer(b.bootstrap);
    TL_ASSERT(tl_create_topic(rk, topic, NPART) >= NPART, "partitions");
    for (int round = 1; round <= ROUNDS; round++) {
        produce_for(rk, topic, 0.3 + (tl_rand() % 900) / 1000.0);
        tl_log("round %d: kill -9 after %d messages", round, n_sent);
        tl_broker_kill9(&b);
        if (!tl_is_kafka()) {
            torn = scan_topic(dir, topic);
            tl_log("round %d: %" PRId64 " torn bytes at the segment ends", round, torn);
        }
        produce_for(rk, topic, 0.1); /* queued while the broker is down */
        tl_broker_start(&b, dir, NULL);
        TL_ASSERT(rd_kafka_flush(rk, 40000) == 0, "round %d: %d messages without a report",
                  round, rd_kafka_outq_len(rk));
        for (int i = 0; i < n_sent; i++)
            TL_ASSERT(msgs[i].status != ST_PENDING, "message %d has no report", i);
        check_log(b.bootstrap, topic, round);
    }
    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    if (!tl_is_kafka())
        TL_ASSERT_EQ(scan_topic(dir, topic), 0);
    tl_log("%d rounds in %.1f s", ROUNDS, tl_now() - start);
    free(dir);
    free(topic);
    return tl_done();
}
