/* The socket fuzzer: random valid requests for every API a broker
 * advertises, most of them mutated, sent over TCP, with every answer
 * checked and the broker's health probed after each batch
 * (tests/fuzz/README.md). Used by tests/fuzz/strand-fuzz (the command)
 * and tests/integration/0500-fuzz-requests. */
#ifndef STRAND_FUZZ_RUN_H
#define STRAND_FUZZ_RUN_H

#include <stdint.h>

typedef struct fuzz_opts_s {
    const char *bootstrap;  /* host:port */
    uint64_t seed;
    long requests;          /* stop after this many (0: no bound) */
    double seconds;         /* stop after this long (0: no bound) */
    int batch;              /* requests between health probes (default 100) */
    int valid_pct;          /* percent sent unmutated (default 20) */
    const char *protect;    /* a topic the fuzzer never names (NULL: none) */
    const char *topics_out; /* file: every topic the broker said exists */
    const char *crash_out;  /* file: the requests of the batch that killed it */
    const char *only;       /* comma-separated API keys to fuzz (NULL: all) */
    const char *skip;       /* comma-separated API keys not to fuzz (NULL: none) */
    int strict;             /* soft findings fail the run too */
    int verbose;            /* 1: findings' bytes; 2: every request */
} fuzz_opts_t;

/* What a request got, beside what the codec predicts (see fuzz_run.c). */
enum fuzz_finding {
    FUZZ_F_BAD_ANSWER,    /* hard: an answer that does not decode */
    FUZZ_F_WRONG_CORR,    /* hard: an answer to another request */
    FUZZ_F_DEAD,          /* hard: the broker stopped answering probes */
    FUZZ_F_CLOSED_VALID,  /* soft: a decodable request closed the connection */
    FUZZ_F_ANSWERED_BAD,  /* soft: an undecodable request was answered */
    FUZZ_F_HANG,          /* soft: no answer in 5 s from an API that never waits */
    FUZZ_F_SERVER_ERROR,  /* soft: UNKNOWN_SERVER_ERROR (-1) for an unmutated request */
    FUZZ_F_N
};

typedef struct fuzz_stats_s {
    long sent, mutated, answered, closed, timeouts, probes;
    long findings[FUZZ_F_N];
    int topics_seen;
} fuzz_stats_t;

/* Runs the fuzzer against o->bootstrap until a bound is reached. Returns
 * 0 when the broker survived and no hard finding (nor, with strict, soft
 * finding) was made; 1 for findings; 2 when the broker died or hung
 * (crash_out then holds the batch that did it); 3 for a setup error. */
int fuzz_run(const fuzz_opts_t *o, fuzz_stats_t *st);

/* Sends the requests of a file written to crash_out, in order and on the
 * connections they were sent on, then probes the broker. Returns 0 if it
 * survived, 2 if not, 3 for a setup error. */
int fuzz_replay(const char *bootstrap, const char *path, int verbose);

#endif
