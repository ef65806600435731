/* Internals shared by the socket fuzzer's files (not for the tests). */
#ifndef STRAND_FUZZ_INT_H
#define STRAND_FUZZ_INT_H

#include <stddef.h>
#include <stdint.h>

#include "fuzz/fuzz_mut.h"
#include "fuzz/fuzz_run.h"

#define FUZZ_MAX_ANSWER (512 << 20)

enum { FUZZ_RECV_FRAME = 1, FUZZ_RECV_CLOSED = 0, FUZZ_RECV_TIMEOUT = -1, FUZZ_RECV_ERROR = -2 };

/* Monotonic seconds. */
double fuzz_now(void);
/* A TCP connection to host:port, or -1. */
int fuzz_net_connect(const char *hostport, int timeout_ms);
/* Writes all of p; 0 or -1. */
int fuzz_net_send(int fd, const void *p, size_t n);
/* Reads one size-prefixed frame (without its prefix) into out:
 * FUZZ_RECV_FRAME, _CLOSED (EOF or reset before a frame), _TIMEOUT, or
 * _ERROR (EOF in mid-frame, an absurd size, a socket error). */
int fuzz_net_recv(int fd, fuzz_bytes_t *out, int timeout_ms);

/* Makes the fuzzer's own topics for seed, as a run does before its
 * first request (replays need them). 0 or -1. */
int fuzz_prepare(const char *bootstrap, uint64_t seed);

/* What the codec predicts a broker does with a request frame. */
enum fuzz_expect {
    FUZZ_E_ANSWER, /* it decodes: an answer (an error code at worst) */
    FUZZ_E_CLOSE,  /* it does not: the connection is closed unanswered */
    FUZZ_E_NONE,   /* Produce acks=0: no answer; a close if it failed */
    FUZZ_E_ANY,    /* the stream itself lies (frame size): anything */
};

#endif
