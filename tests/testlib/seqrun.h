/* seqrun: numbered messages produced round-robin over the partitions of
 * one topic while the broker is killed and restarted under them (the
 * kill -9 tests, 0005 and 0401), each message's delivery report, and the
 * check that reads the topic back: every acknowledged message is there
 * exactly once, at the offset its report gave, in produce order within
 * its partition; a message whose report failed is there at most once; and
 * the whole topic reads back with CRC checks on and no error.
 *
 * Message seq goes to partition seq % nparts with the value
 * "<tag> <seq as %08d> of partition <p> ....", so a value read back tells
 * which message it is. */
#ifndef STRAND_TESTLIB_SEQRUN_H
#define STRAND_TESTLIB_SEQRUN_H

#include "testlib/testlib.h"

enum { TL_SEQ_PENDING, TL_SEQ_OK, TL_SEQ_FAILED };

typedef struct tl_seqrun {
    const char *topic; /* the caller's; must outlive the run */
    const char *tag;   /* value prefix, the caller's */
    int nparts;
    int max;           /* room for this many messages */
    int n_sent;        /* produced so far: seq 0 .. n_sent-1 */
    struct tl_seq_msg {
        uint8_t status; /* TL_SEQ_* */
        int64_t offset; /* as the delivery report gave it */
    } *msgs;
} tl_seqrun;

/* What tl_seqrun_check() found. */
typedef struct tl_seqrun_result {
    int64_t in_log;  /* messages in the topic */
    int ok;          /* acknowledged (all of them in the log) */
    int failed;      /* with a failed report */
    int failed_seen; /* of those, in the log anyway */
} tl_seqrun_result;

/* Room for max messages; free with tl_seqrun_free. */
void tl_seqrun_init(tl_seqrun *run, const char *topic, int nparts, const char *tag, int max);
void tl_seqrun_free(tl_seqrun *run);
/* A producer for bs whose delivery reports go to run, and which
 * reconnects fast (20 ms, at most 200 ms) to a broker that comes back.
 * kv: further settings as key, value, ..., NULL. */
rd_kafka_t *tl_seqrun_producer(tl_seqrun *run, const char *bs, const char *const *kv);
/* Produces for secs seconds at a bounded pace: up to burst messages, then
 * a poll of poll_ms; a full queue just waits for the next poll. */
void tl_seqrun_produce_for(tl_seqrun *run, rd_kafka_t *rk, double secs, int burst, int poll_ms);
/* Every message must have its report. Then reads the topic from bs to its
 * end within timeout_s seconds (the test fails on any of the breaches
 * above, naming `what`, e.g. "round 2") and fills *res. */
void tl_seqrun_check(tl_seqrun *run, const char *bs, double timeout_s, const char *what,
                     tl_seqrun_result *res);

/* The kill -9 scenario (0005, 0013): the test's own broker is started,
 * a topic of nparts partitions created, and `kills` times the producer
 * runs for round_min + a random part of round_span seconds (burst
 * messages per 1 ms poll) before the broker is killed with SIGKILL and
 * restarted on the same data; then every acknowledged message must be in
 * the log as tl_seqrun_check demands, more than half of them must have
 * been acknowledged, and the broker must stop cleanly on SIGTERM. */
typedef struct tl_kill9_plan {
    const char *name;                 /* scratch dir and topic prefix */
    const char *tag;                  /* value prefix */
    const char *const *producer_conf; /* key, value, ..., NULL */
    int nparts, max, kills, burst;
    double round_min, round_span;
} tl_kill9_plan;

void tl_seqrun_kill9(const tl_kill9_plan *plan);

#endif
