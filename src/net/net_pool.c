/* Two FIFO lists under one mutex each: jobs to do, and jobs done. A worker
 * writes the eventfd only when the done list goes from empty to not
 * empty, so a loop busy with many completions is woken once for them. */
#include "net/net_pool.h"

#include <errno.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <unistd.h>

typedef struct net_jobq_s {
    net_job_t *head, *tail;
} net_jobq_t;

/* One worker thread; retire (under todo_mu) makes it end after its
 * current job. */
typedef struct net_worker_s {
    struct net_pool_s *pool;
    pthread_t tid;
    int retire;
    int exited; /* retired and out of its loop: to be joined (todo_mu) */
} net_worker_t;

struct net_pool_s {
    net_loop_t *loop;
    net_io_t io; /* the eventfd */
    void (*thread_exit)(void);
    pthread_mutex_t todo_mu;
    pthread_cond_t todo_cv;
    net_jobq_t todo;
    int stop;
    pthread_mutex_t done_mu;
    net_jobq_t done;
    int pending; /* loop thread only */
    net_worker_t **workers; /* every worker started, retired ones too (joined
                               at the end) */
    int nworkers;
    int active;  /* workers not retired */
};

static void net_jobq_push(net_jobq_t *q, net_job_t *job)
{
    job->next = NULL;
    if (q->tail)
        q->tail->next = job;
    else
        q->head = job;
    q->tail = job;
}

static void *net_pool_worker(void *arg)
{
    net_worker_t *w = arg;
    net_pool_t *pool = w->pool;
    for (;;) {
        pthread_mutex_lock(&pool->todo_mu);
        while (!pool->todo.head && !pool->stop && !w->retire)
            pthread_cond_wait(&pool->todo_cv, &pool->todo_mu);
        net_job_t *job = w->retire ? NULL : pool->todo.head;
        if (job) {
            pool->todo.head = job->next;
            if (!pool->todo.head)
                pool->todo.tail = NULL;
        } else if (w->retire) {
            w->exited = 1;
        }
        pthread_mutex_unlock(&pool->todo_mu);
        if (!job)
            break; /* stopping and nothing left, or retired */
        job->work(job);
        pthread_mutex_lock(&pool->done_mu);
        int wake = pool->done.head == NULL;
        net_jobq_push(&pool->done, job);
        pthread_mutex_unlock(&pool->done_mu);
        if (wake) {
            uint64_t one = 1;
            while (write(pool->io.fd, &one, sizeof(one)) < 0 && errno == EINTR)
                ;
        }
    }
    if (pool->thread_exit)
        pool->thread_exit();
    return NULL;
}

/* Runs the done callbacks of every finished job, oldest first. */
static void net_pool_reap(net_pool_t *pool)
{
    pthread_mutex_lock(&pool->done_mu);
    net_job_t *job = pool->done.head;
    pool->done.head = pool->done.tail = NULL;
    pthread_mutex_unlock(&pool->done_mu);
    while (job) {
        net_job_t *next = job->next;
        pool->pending--;
        job->done(job);
        job = next;
    }
}

static void net_pool_on_event(net_loop_t *loop, net_io_t *io, int events)
{
    uint64_t n;
    (void)loop;
    (void)events;
    while (read(io->fd, &n, sizeof(n)) < 0 && errno == EINTR)
        ;
    net_pool_reap(io->data);
}

static void net_pool_stop_threads(net_pool_t *pool)
{
    pthread_mutex_lock(&pool->todo_mu);
    pool->stop = 1;
    pthread_cond_broadcast(&pool->todo_cv);
    pthread_mutex_unlock(&pool->todo_mu);
    for (int i = 0; i < pool->nworkers; i++) {
        pthread_join(pool->workers[i]->tid, NULL);
        free(pool->workers[i]);
    }
    pool->nworkers = pool->active = 0;
}

/* Starts one more worker; 0 or -1 with errno. */
static int net_pool_spawn(net_pool_t *pool)
{
    net_worker_t *w = calloc(1, sizeof(*w));
    net_worker_t **ws = realloc(pool->workers, (size_t)(pool->nworkers + 1) * sizeof(*ws));
    int e;

    if (ws)
        pool->workers = ws;
    if (!w || !ws) {
        free(w);
        errno = ENOMEM;
        return -1;
    }
    w->pool = pool;
    if ((e = pthread_create(&w->tid, NULL, net_pool_worker, w))) {
        free(w);
        errno = e;
        return -1;
    }
    pool->workers[pool->nworkers++] = w;
    pool->active++;
    return 0;
}

net_pool_t *net_pool_new(net_loop_t *loop, int nthreads, void (*thread_exit)(void))
{
    net_pool_t *pool = calloc(1, sizeof(*pool));
    int e;

    if (!pool)
        return NULL;
    pool->loop = loop;
    pool->thread_exit = thread_exit;
    pthread_mutex_init(&pool->todo_mu, NULL);
    pthread_cond_init(&pool->todo_cv, NULL);
    pthread_mutex_init(&pool->done_mu, NULL);
    pool->io.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    pool->io.cb = net_pool_on_event;
    pool->io.data = pool;
    if (pool->io.fd < 0 || net_io_set(loop, &pool->io, NET_READ) < 0)
        goto err;
    for (int i = 0; i < nthreads; i++)
        if (net_pool_spawn(pool) < 0)
            goto err;
    return pool;
err:
    e = errno;
    net_pool_free(pool);
    errno = e;
    return NULL;
}

void net_pool_submit(net_pool_t *pool, net_job_t *job)
{
    pool->pending++;
    pthread_mutex_lock(&pool->todo_mu);
    net_jobq_push(&pool->todo, job);
    pthread_cond_signal(&pool->todo_cv);
    pthread_mutex_unlock(&pool->todo_mu);
}

void net_pool_submit_first(net_pool_t *pool, net_job_t *job)
{
    pool->pending++;
    pthread_mutex_lock(&pool->todo_mu);
    job->next = pool->todo.head;
    pool->todo.head = job;
    if (!pool->todo.tail)
        pool->todo.tail = job;
    pthread_cond_signal(&pool->todo_cv);
    pthread_mutex_unlock(&pool->todo_mu);
}

int net_pool_threads(const net_pool_t *pool)
{
    return pool->active;
}

int net_pool_held(const net_pool_t *pool)
{
    return pool->nworkers;
}

/* Joins the retired workers that have left their loop (their stacks stay
 * until joined), so that resizing again and again holds nothing. */
static void net_pool_join_retired(net_pool_t *pool)
{
    for (int i = 0; i < pool->nworkers;) {
        pthread_mutex_lock(&pool->todo_mu);
        int exited = pool->workers[i]->exited;
        pthread_mutex_unlock(&pool->todo_mu);
        if (!exited) {
            i++;
            continue;
        }
        pthread_join(pool->workers[i]->tid, NULL);
        free(pool->workers[i]);
        memmove(&pool->workers[i], &pool->workers[i + 1],
                (size_t)(pool->nworkers - i - 1) * sizeof(*pool->workers));
        pool->nworkers--;
    }
}

int net_pool_resize(net_pool_t *pool, int nthreads)
{
    net_pool_join_retired(pool);
    while (pool->active < nthreads)
        if (net_pool_spawn(pool) < 0)
            return -1;
    if (pool->active <= nthreads || nthreads < 1)
        return 0;
    /* The newest go first; each ends after the job it is running. */
    pthread_mutex_lock(&pool->todo_mu);
    for (int i = pool->nworkers - 1; i >= 0 && pool->active > nthreads; i--)
        if (!pool->workers[i]->retire) {
            pool->workers[i]->retire = 1;
            pool->active--;
        }
    pthread_cond_broadcast(&pool->todo_cv);
    pthread_mutex_unlock(&pool->todo_mu);
    return 0;
}

int net_pool_pending(const net_pool_t *pool)
{
    return pool->pending;
}

void net_pool_free(net_pool_t *pool)
{
    if (!pool)
        return;
    /* Workers finish the queue before they see stop. */
    net_pool_stop_threads(pool);
    net_pool_reap(pool);
    if (pool->io.fd >= 0) {
        if (pool->io.events)
            net_io_del(pool->loop, &pool->io);
        close(pool->io.fd);
    }
    pthread_mutex_destroy(&pool->todo_mu);
    pthread_cond_destroy(&pool->todo_cv);
    pthread_mutex_destroy(&pool->done_mu);
    free(pool->workers);
    free(pool);
}

void net_pool_run(net_pool_t *pool, net_job_t *job)
{
    if (pool) {
        net_pool_submit(pool, job);
        return;
    }
    job->work(job);
    job->done(job);
}
