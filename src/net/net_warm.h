/* Cold file regions are read into the page cache off the event loop.
 *
 * A fetch answer names file regions that go out with sendfile. If a region
 * is not in the page cache, sendfile reads it from the disk inside the
 * loop's thread, and every other client waits for that disk (tens of
 * milliseconds for a consumer catching up from the start of a topic). So a
 * connection about to send a region first asks whether it is cached, and if
 * not, hands it to one of a few worker threads that read it into the cache
 * and then wake the loop, which sends it from memory. The workers own
 * nothing of the broker's: they get a duplicate of the file descriptor and
 * a range, and their results come back to the loop thread through an
 * eventfd, so the loop's state stays single-threaded and the only lock is
 * on the queue of this cold path. */
#ifndef STRAND_NET_WARM_H
#define STRAND_NET_WARM_H

#include <stdint.h>

#include "net/net_loop.h"

typedef struct net_warm_s net_warm_t;

/* Runs on the loop's thread once the range has been read. */
typedef void net_warm_cb(void *data);

/* Starts nthreads workers reporting to loop. Returns a pool owned by the
 * caller (net_warm_free), or NULL with errno. */
net_warm_t *net_warm_new(net_loop_t *loop, int nthreads);
/* Stops the workers after their current read; the callbacks of every job
 * not yet reported run now, on the calling (loop) thread. */
void net_warm_free(net_warm_t *w);
/* 1 if every page of [off, off + len) of fd is in the page cache, or if
 * that cannot be told (then sending is what is left to do); 0 if not. */
int net_warm_cached(int fd, int64_t off, int64_t len);
/* Reads [off, off + len) of fd into the page cache on a worker, then runs
 * cb(data) on the loop's thread (cb may be NULL: read ahead, no answer).
 * fd is duplicated: the caller may close its own at once. Returns 0, or -1
 * with errno (nothing queued, cb will not run). */
int net_warm_submit(net_warm_t *w, int fd, int64_t off, int64_t len, net_warm_cb *cb, void *data);

#endif
