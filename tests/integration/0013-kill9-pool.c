/* 0013-kill9-pool: 0005-kill9 with requests large enough (linger.ms=10 at
 * up to 150,000 messages/s: about 90 KB per request, above the 32 KB from
 * which the broker checks and writes batches on its worker threads) that
 * appends take the worker path: placed on the loop, written by a worker,
 * committed and only then answered. A producer with acks=all produces in
 * a loop while the test's own broker is killed with SIGKILL and restarted
 * on the same data, five times.
 * At the end every message whose delivery report succeeded is in the log
 * exactly once, at the offset reported, in produce order; a message whose
 * report failed is there at most once; and the whole log reads back with
 * CRC checks on and no error (no torn batch survived recovery).
 *
 * The producer does not retry (retries=0): a retry of a request whose
 * answer was lost to the kill would legitimately duplicate, and this test
 * is about durability of acknowledged writes, not deduplication (0004). */
#include "testlib/seqrun.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#define NPART 2
#define MAX_MSGS 1500000
#define KILLS 5

/* No retries (see above); acks=all, as durability is the point. */
static const char *const producer_conf[] = {
    "acks", "all", "retries", "0", "linger.ms", "10", "batch.size", "1000000",
    "batch.num.messages", "100000", "queue.buffering.max.messages", "1000000",
    "message.timeout.ms", "60000", NULL};

int main(void)
{
    tl_broker b = {0};
    tl_seqrun run;
    tl_seqrun_result res;
    char *dir, *topic;
    rd_kafka_t *rk;
    int rc;

    tl_init("0013-kill9-pool");
    dir = tl_scratch_dir("0013-broker");
    topic = tl_topic_name("t0013");
    tl_seqrun_init(&run, topic, NPART, "kill9 pooled message", MAX_MSGS);
    tl_broker_start(&b, dir, NULL);

    rk = tl_seqrun_producer(&run, b.bootstrap, producer_conf);
    TL_ASSERT(tl_create_topic(rk, topic, NPART) >= NPART, "partitions");
    for (int k = 0; k < KILLS; k++) {
        tl_seqrun_produce_for(&run, rk, 0.5 + (tl_rand() % 500) / 1000.0, 150, 1);
        tl_log("kill -9 after %d messages", run.n_sent);
        tl_broker_kill9(&b);
        tl_seqrun_produce_for(&run, rk, 0.2, 150, 1);
        tl_broker_start(&b, dir, NULL);
    }
    tl_seqrun_produce_for(&run, rk, 1.0, 150, 1);
    if (rd_kafka_flush(rk, 90000))
        tl_fail("flush: %d messages left", rd_kafka_outq_len(rk));
    rd_kafka_destroy(rk);

    tl_seqrun_check(&run, b.bootstrap, 60, "after the kills", &res);
    tl_log("%d produced: %d acknowledged, %d failed (%d of those in the log anyway); "
           "%" PRId64 " in the log", run.n_sent, res.ok, res.failed, res.failed_seen, res.in_log);
    TL_ASSERT(res.ok > run.n_sent / 2, "only %d of %d acknowledged", res.ok, run.n_sent);
    TL_ASSERT_EQ(res.in_log, res.ok + res.failed_seen);
    rc = tl_broker_stop(&b);
    TL_ASSERT(rc == 0, "broker exit status %d on SIGTERM", rc);
    tl_seqrun_free(&run);
    free(dir);
    free(topic);
    return tl_done();
}
