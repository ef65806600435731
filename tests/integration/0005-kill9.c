/* 0005-kill9: a producer with acks=all produces in a loop while the test's
 * own broker is killed with SIGKILL and restarted on the same data, twice.
 * At the end every message whose delivery report succeeded is in the log
 * exactly once, at the offset reported, in produce order; a message whose
 * report failed is there at most once; and the whole log reads back with
 * CRC checks on and no error (no torn batch survived recovery).
 *
 * The producer does not retry (retries=0): a retry of a request whose
 * answer was lost to the kill would legitimately duplicate, and this test
 * is about durability of acknowledged writes, not deduplication (0004). */
#include "testlib/seqrun.h"

/* No retries (see above); acks=all, as durability is the point. */
static const char *const producer_conf[] = {
    "acks", "all", "retries", "0", "linger.ms", "1", "message.timeout.ms", "60000", NULL};

int main(void)
{
    tl_kill9_plan plan = {"0005-kill9", "kill9 message", producer_conf, 2, 1000000, 2, 200,
                          1.0, 1.0};
    tl_init("0005-kill9");
    tl_seqrun_kill9(&plan);
    return tl_done();
}
