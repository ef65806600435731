/* 0013-kill9-pool: 0005-kill9 with requests large enough (linger.ms=10 at
 * up to 150,000 messages/s: about 90 KB per request, above the 32 KB from
 * which the broker checks and writes batches on its worker threads) that
 * appends take the worker path: placed on the loop, written by a worker,
 * committed and only then answered. The broker is killed five times; the
 * checks are 0005's (testlib/seqrun.h, tl_seqrun_kill9). */
#include "testlib/seqrun.h"

/* No retries, as 0005; acks=all, as durability is the point. */
static const char *const producer_conf[] = {
    "acks", "all", "retries", "0", "linger.ms", "10", "batch.size", "1000000",
    "batch.num.messages", "100000", "queue.buffering.max.messages", "1000000",
    "message.timeout.ms", "60000", NULL};

int main(void)
{
    tl_kill9_plan plan = {"0013-kill9-pool", "kill9 pooled message", producer_conf, 2, 1500000,
                          5, 150, 0.5, 0.5};
    tl_init("0013-kill9-pool");
    tl_seqrun_kill9(&plan);
    return tl_done();
}
