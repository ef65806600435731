/* proxy: a fault-injecting TCP proxy for tests, one link each.
 *
 * A proxy listens on a loopback port and forwards every connection to a
 * target port; the test sets, per direction, what the link does to the
 * bytes: pass them, drop them (the connection is accepted and its bytes
 * swallowed, as a black-holed network), or delay them by N ms; it can cut
 * the link (every connection closed, new ones refused: the port no longer
 * listens) and heal it (pass again, listening again on the same port).
 *
 * It runs as a thread of the test (one poll loop per proxy) rather than a
 * helper program: a test changes a link with a function call that returns
 * once the change is in effect (no control protocol, no race with a
 * client's next request), the proxy dies with the test, and its counters
 * are read directly.
 *
 * A connection that lost bytes to a drop is closed when the link is healed:
 * TCP never delivers a stream with a hole in it, and a Kafka peer reading
 * past one would take payload bytes for a frame size. Connections that only
 * waited (a delay) keep going. */
#ifndef STRAND_TESTLIB_PROXY_H
#define STRAND_TESTLIB_PROXY_H

#include <stdint.h>

#define TL_DIR_UP 1   /* from the connecting side to the target */
#define TL_DIR_DOWN 2 /* from the target back */
#define TL_DIR_BOTH (TL_DIR_UP | TL_DIR_DOWN)

typedef struct tl_proxy tl_proxy;

typedef struct tl_proxy_stats {
    int64_t accepted;   /* connections accepted */
    int64_t open;       /* connections open now */
    int64_t bytes[2];   /* forwarded, [0] up, [1] down */
    int64_t dropped[2]; /* swallowed by a drop */
} tl_proxy_stats;

/* Starts a proxy on 127.0.0.1:port (0: a free port) to 127.0.0.1:target.
 * Fails the test on error. Caller owns it: tl_proxy_free. */
tl_proxy *tl_proxy_new(int port, int target);
/* Stops the thread, closes every connection, frees px. */
void tl_proxy_free(tl_proxy *px);

int tl_proxy_port(const tl_proxy *px);
/* "127.0.0.1:PORT" of the proxy (owned by px). */
const char *tl_proxy_addr(const tl_proxy *px);
/* Changes the target (for connections accepted from now on). */
void tl_proxy_retarget(tl_proxy *px, int target);

/* Each returns once the proxy applies the change. dirs: TL_DIR_*. */
void tl_proxy_pass(tl_proxy *px, int dirs);
void tl_proxy_drop(tl_proxy *px, int dirs);
void tl_proxy_delay(tl_proxy *px, int dirs, int ms);
/* Closes every connection of the link and stops listening. */
void tl_proxy_cut(tl_proxy *px);
/* Passes both directions and listens again (after a cut); connections that
 * lost bytes to a drop are closed (see above). */
void tl_proxy_heal(tl_proxy *px);

void tl_proxy_stats_get(tl_proxy *px, tl_proxy_stats *st);

#endif
