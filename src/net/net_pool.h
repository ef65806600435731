/* Worker threads for CPU-bound work that touches no shared state (checking
 * and decompressing produced batches), with completions handed back to the
 * owning event loop through an eventfd. The loop keeps the ownership of
 * every piece of broker state: a job is data the loop gives away whole and
 * gets back whole, so nothing on either side takes a lock except the two
 * queue hand-offs. */
#ifndef STRAND_NET_POOL_H
#define STRAND_NET_POOL_H

#include "net/net_loop.h"

typedef struct net_pool_s net_pool_t;
typedef struct net_job_s net_job_t;
typedef void net_job_fn(net_job_t *job);

/* Embedded first in its owner's struct; the pool never allocates or frees
 * it. */
struct net_job_s {
    net_job_fn *work; /* on a worker thread: touches only what the job owns */
    net_job_fn *done; /* then on the loop's thread, in completion order */
    net_job_t *next;  /* the pool's queue link */
};

/* Starts nthreads workers (>= 1) that call thread_exit (may be NULL)
 * before they end, to free their thread-local caches. Signals are left
 * blocked in the workers as in the caller. Returns a pool owned by the
 * caller (net_pool_free), or NULL with errno. */
net_pool_t *net_pool_new(net_loop_t *loop, int nthreads, void (*thread_exit)(void));
/* Queues job; its done callback will run on the loop. */
void net_pool_submit(net_pool_t *pool, net_job_t *job);
/* Queues job on pool; with pool NULL (one CPU, or shutting down) runs its
 * work and then its done here, in the call. */
void net_pool_run(net_pool_t *pool, net_job_t *job);
/* Queues job ahead of every job not yet started (a stage that others
 * wait for). */
void net_pool_submit_first(net_pool_t *pool, net_job_t *job);
/* Lets queued jobs finish, runs their done callbacks on the caller's
 * thread, joins the workers and frees the pool. NULL is ignored. */
void net_pool_free(net_pool_t *pool);
/* Worker threads (not retired). */
int net_pool_threads(const net_pool_t *pool);
/* Threads not yet joined: the active ones and the retired ones that have
 * not left their loop by the last resize. */
int net_pool_held(const net_pool_t *pool);
/* Grows the pool to nthreads (>= 1) workers at once, or shrinks it: the
 * newest workers end after the job each is running (they are joined when
 * the pool is freed), the loop never waits for them. 0, or -1 with errno
 * when a thread cannot be started (the pool keeps the ones it has). */
int net_pool_resize(net_pool_t *pool, int nthreads);
/* Jobs submitted and not yet done. */
int net_pool_pending(const net_pool_t *pool);

#endif
