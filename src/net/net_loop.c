#include "net/net_loop.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <time.h>
#include <unistd.h>

#include "util/logging.h"
#include "util/mem.h"
#include "util/slab.h"

typedef struct net_timer_s {
    int64_t due;
    net_timer_id_t id;
    net_timer_cb *cb;
    void *data;
} net_timer_t;

typedef struct net_defer_s {
    net_defer_cb *cb;
    void *data;
} net_defer_t;

struct net_loop_s {
    int epfd;
    slab_t conns; /* obj 0 until the first connection */
    net_defer_t *defer;
    int ndefer, capdefer;
    int stop;
    int64_t now;
    net_timer_t *heap; /* binary min-heap on (due, id) */
    int nheap, capheap;
    net_timer_id_t next_id;
};

int64_t net_now_mono_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t net_now_wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

int64_t net_loop_now_mono(net_loop_t *loop)
{
    return loop->now;
}

net_loop_t *net_loop_new(void)
{
    net_loop_t *loop = xcalloc(1, sizeof(*loop));
    loop->epfd = epoll_create1(EPOLL_CLOEXEC);
    if (loop->epfd < 0) {
        free(loop);
        return NULL;
    }
    loop->now = net_now_mono_ms();
    loop->next_id = 1;
    return loop;
}

void net_loop_free(net_loop_t *loop)
{
    if (!loop)
        return;
    close(loop->epfd);
    slab_destroy(&loop->conns);
    free(loop->heap);
    free(loop->defer);
    free(loop);
}

int net_io_set(net_loop_t *loop, net_io_t *io, int events)
{
    struct epoll_event ev = {0};
    int op;

    if (events == io->events)
        return 0;
    ev.data.ptr = io;
    ev.events = (events & NET_READ ? EPOLLIN : 0) | (events & NET_WRITE ? EPOLLOUT : 0);
    if (!io->events)
        op = EPOLL_CTL_ADD;
    else if (!events)
        op = EPOLL_CTL_DEL;
    else
        op = EPOLL_CTL_MOD;
    if (epoll_ctl(loop->epfd, op, io->fd, &ev) < 0)
        return -1;
    io->events = events;
    return 0;
}

void net_io_del(net_loop_t *loop, net_io_t *io)
{
    if (io->events)
        epoll_ctl(loop->epfd, EPOLL_CTL_DEL, io->fd, NULL);
    io->events = 0;
}

static int net_timer_less(const net_timer_t *a, const net_timer_t *b)
{
    return a->due < b->due || (a->due == b->due && a->id < b->id);
}

static void net_heap_swap(net_loop_t *loop, int i, int j)
{
    net_timer_t t = loop->heap[i];
    loop->heap[i] = loop->heap[j];
    loop->heap[j] = t;
}

static void net_heap_up(net_loop_t *loop, int i)
{
    while (i > 0 && net_timer_less(&loop->heap[i], &loop->heap[(i - 1) / 2])) {
        net_heap_swap(loop, i, (i - 1) / 2);
        i = (i - 1) / 2;
    }
}

static void net_heap_down(net_loop_t *loop, int i)
{
    for (;;) {
        int l = 2 * i + 1, r = l + 1, m = i;
        if (l < loop->nheap && net_timer_less(&loop->heap[l], &loop->heap[m]))
            m = l;
        if (r < loop->nheap && net_timer_less(&loop->heap[r], &loop->heap[m]))
            m = r;
        if (m == i)
            return;
        net_heap_swap(loop, i, m);
        i = m;
    }
}

net_timer_id_t net_timer_add(net_loop_t *loop, int64_t ms, net_timer_cb *cb, void *data)
{
    if (loop->nheap == loop->capheap) {
        loop->capheap = loop->capheap ? loop->capheap * 2 : 64;
        loop->heap = xrealloc(loop->heap, (size_t)loop->capheap * sizeof(*loop->heap));
    }
    net_timer_t *t = &loop->heap[loop->nheap];
    net_timer_id_t id = loop->next_id++;
    t->due = net_now_mono_ms() + (ms < 0 ? 0 : ms);
    t->id = id;
    t->cb = cb;
    t->data = data;
    /* Sifting up moves entries: t no longer names this timer after it. */
    net_heap_up(loop, loop->nheap++);
    return id;
}

/* Cancelling is a linear search: timers are few (one per delayed request
 * and a handful of periodic jobs), and cancels are rarer than expiries. */
void net_timer_cancel(net_loop_t *loop, net_timer_id_t id)
{
    for (int i = 0; i < loop->nheap; i++) {
        if (loop->heap[i].id != id)
            continue;
        loop->heap[i] = loop->heap[--loop->nheap];
        if (i < loop->nheap) {
            net_heap_up(loop, i);
            net_heap_down(loop, i);
        }
        return;
    }
}

static void net_run_timers(net_loop_t *loop)
{
    while (loop->nheap && loop->heap[0].due <= loop->now) {
        net_timer_t t = loop->heap[0];
        loop->heap[0] = loop->heap[--loop->nheap];
        net_heap_down(loop, 0);
        t.cb(loop, t.data);
    }
}

void net_loop_defer(net_loop_t *loop, net_defer_cb *cb, void *data)
{
    if (loop->ndefer == loop->capdefer) {
        loop->capdefer = loop->capdefer ? loop->capdefer * 2 : 64;
        loop->defer = xrealloc(loop->defer, (size_t)loop->capdefer * sizeof(*loop->defer));
    }
    loop->defer[loop->ndefer].cb = cb;
    loop->defer[loop->ndefer].data = data;
    loop->ndefer++;
}

/* Deferred callbacks may defer more; those run in the same pass. */
static void net_run_deferred(net_loop_t *loop)
{
    for (int i = 0; i < loop->ndefer; i++)
        loop->defer[i].cb(loop, loop->defer[i].data);
    loop->ndefer = 0;
}

void *net_loop_conn_alloc(net_loop_t *loop, size_t size)
{
    if (!loop->conns.obj)
        slab_init(&loop->conns, size, 64);
    if (((size + 15) & ~(size_t)15) != loop->conns.obj)
        return xcalloc(1, size); /* another size: not pooled */
    return slab_alloc(&loop->conns);
}

void net_loop_conn_free(net_loop_t *loop, void *p, size_t size)
{
    if (((size + 15) & ~(size_t)15) == loop->conns.obj)
        slab_free(&loop->conns, p);
    else
        free(p);
}

void net_loop_stop(net_loop_t *loop)
{
    loop->stop = 1;
}

void net_loop_run(net_loop_t *loop)
{
    struct epoll_event evs[256];

    loop->stop = 0;
    while (!loop->stop) {
        int timeout = loop->ndefer ? 0 : -1;
        loop->now = net_now_mono_ms();
        if (loop->nheap) {
            int64_t d = loop->heap[0].due - loop->now;
            if (timeout < 0)
                timeout = d < 0 ? 0 : d > 1000000 ? 1000000 : (int)d;
        }
        int n = epoll_wait(loop->epfd, evs, 256, timeout);
        if (n < 0 && errno != EINTR) {
            lg_error("epoll_wait: %s", strerror(errno));
            return;
        }
        loop->now = net_now_mono_ms();
        for (int i = 0; i < n; i++) {
            net_io_t *io = evs[i].data.ptr;
            int e = 0;
            if (evs[i].events & (EPOLLIN | EPOLLHUP | EPOLLRDHUP))
                e |= NET_READ;
            if (evs[i].events & EPOLLOUT)
                e |= NET_WRITE;
            if (evs[i].events & EPOLLERR)
                e |= NET_ERROR | NET_READ;
            io->cb(loop, io, e);
        }
        net_run_deferred(loop);
        net_run_timers(loop);
        net_run_deferred(loop);
    }
}
