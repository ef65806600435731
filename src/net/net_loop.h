/* The event loop: epoll for file descriptors plus a timer heap. One loop
 * per thread; everything a loop owns is touched only from its thread, so
 * nothing on the hot path takes a lock. */
#ifndef STRAND_NET_LOOP_H
#define STRAND_NET_LOOP_H

#include <stddef.h>
#include <stdint.h>

typedef struct net_loop_s net_loop_t;
typedef struct net_io_s net_io_t;

/* events: NET_READ | NET_WRITE */
#define NET_READ 1
#define NET_WRITE 2
#define NET_ERROR 4

typedef void net_io_cb(net_loop_t *loop, net_io_t *io, int events);

/* Embedded in its owner's struct; the loop never allocates or frees it. */
struct net_io_s {
    int fd;
    int events; /* currently registered */
    net_io_cb *cb;
    void *data;
};

typedef void net_timer_cb(net_loop_t *loop, void *data);
typedef uint64_t net_timer_id_t; /* 0 = none */

/* Returns a loop owned by the caller (net_loop_free), or NULL with errno. */
net_loop_t *net_loop_new(void);
void net_loop_free(net_loop_t *loop);
/* Registers or changes interest for io->fd. Returns 0 or -1 with errno. */
int net_io_set(net_loop_t *loop, net_io_t *io, int events);
void net_io_del(net_loop_t *loop, net_io_t *io);
/* Runs cb once, after ms milliseconds. */
net_timer_id_t net_timer_add(net_loop_t *loop, int64_t ms, net_timer_cb *cb, void *data);
void net_timer_cancel(net_loop_t *loop, net_timer_id_t id);
/* Runs cb(data) once after the current batch of events has been handled:
 * lets code release objects that later events of the batch may still
 * reference, and break call recursion. */
typedef void net_defer_cb(net_loop_t *loop, void *data);
void net_loop_defer(net_loop_t *loop, net_defer_cb *cb, void *data);
/* Connection objects of one size come from a pool the loop owns (see
 * util/slab.h for why). Zeroed; never NULL. */
void *net_loop_conn_alloc(net_loop_t *loop, size_t size);
void net_loop_conn_free(net_loop_t *loop, void *p, size_t size);
/* Runs until net_loop_stop(). */
void net_loop_run(net_loop_t *loop);
void net_loop_stop(net_loop_t *loop);
/* Milliseconds, monotonic and wall clock, cached per loop iteration. */
int64_t net_loop_now_mono(net_loop_t *loop);
int64_t net_now_wall_ms(void);
int64_t net_now_mono_ms(void);

#endif
