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
#include "testlib/seqrun.h"

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

static const char *const producer_conf[] = {
    "enable.idempotence", "true", "linger.ms", "2", "message.timeout.ms", "30000", NULL};

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

int main(void)
{
    tl_broker b = {0};
    tl_seqrun run;
    tl_seqrun_result res;
    char *dir, *topic, what[32];
    rd_kafka_t *rk;
    double start = tl_now();
    int64_t torn;

    tl_init("0401-kill9-idempotent");
    dir = tl_scratch_dir("0401-broker");
    topic = tl_topic_name("t0401");
    tl_seqrun_init(&run, topic, NPART, "kill9-idem", MAX_MSGS);
    tl_broker_start(&b, dir, NULL);
    rk = tl_seqrun_producer(&run, b.bootstrap, producer_conf);
    TL_ASSERT(tl_create_topic(rk, topic, NPART) >= NPART, "partitions");
    for (int round = 1; round <= ROUNDS; round++) {
        tl_seqrun_produce_for(&run, rk, 0.3 + (tl_rand() % 900) / 1000.0, 50, 2);
        tl_log("round %d: kill -9 after %d messages", round, run.n_sent);
        tl_broker_kill9(&b);
        if (!tl_is_kafka()) {
            torn = scan_topic(dir, topic);
            tl_log("round %d: %" PRId64 " torn bytes at the segment ends", round, torn);
        }
        tl_seqrun_produce_for(&run, rk, 0.1, 50, 2); /* queued while the broker is down */
        tl_broker_start(&b, dir, NULL);
        TL_ASSERT(rd_kafka_flush(rk, 40000) == 0, "round %d: %d messages without a report",
                  round, rd_kafka_outq_len(rk));
        snprintf(what, sizeof(what), "round %d", round);
        tl_seqrun_check(&run, b.bootstrap, 30, what, &res);
        tl_log("round %d: %d produced, %d acknowledged, %" PRId64 " in the log (%d not "
               "acknowledged)", round, run.n_sent, res.ok, res.in_log, res.failed_seen);
    }
    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    if (!tl_is_kafka())
        TL_ASSERT_EQ(scan_topic(dir, topic), 0);
    tl_log("%d rounds in %.1f s", ROUNDS, tl_now() - start);
    tl_seqrun_free(&run);
    free(dir);
    free(topic);
    return tl_done();
}
