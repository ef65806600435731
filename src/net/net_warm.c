#include "net/net_warm.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "util/logging.h"
#include "util/mem.h"

/* cachestat(2), Linux 6.5; older kernels answer ENOSYS and mincore is
 * used instead. Not in every libc's headers yet. */
#ifndef SYS_cachestat
#define SYS_cachestat 451
#endif

typedef struct net_warm_job_s {
    struct net_warm_job_s *next;
    int fd;           /* our duplicate */
    int64_t off, len;
    net_warm_cb *cb;
    void *data;
} net_warm_job_t;

struct net_warm_s {
    net_loop_t *loop;
    net_io_t io;      /* the eventfd the workers signal */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    net_warm_job_t *todo, *todo_tail; /* FIFO */
    net_warm_job_t *done;             /* any order */
    int stop;
    int nthreads;
    pthread_t *threads;
};

static int64_t net_warm_page(void)
{
    static int64_t pg;
    if (!pg)
        pg = (int64_t)sysconf(_SC_PAGESIZE);
    return pg;
}

/* Asks the kernel page by page through a mapping (no data is touched). */
static int net_warm_mincore(int fd, int64_t off, int64_t len)
{
    int64_t pg = net_warm_page(), start = off & ~(pg - 1);
    size_t mlen = (size_t)(off + len - start), npages = (mlen + (size_t)pg - 1) / (size_t)pg;
    unsigned char vec[1040];
    int cached = 1;
    if (npages > sizeof(vec))
        return 1;
    void *m = mmap(NULL, mlen, PROT_READ, MAP_SHARED, fd, (off_t)start);
    if (m == MAP_FAILED)
        return 1;
    if (mincore(m, mlen, vec) == 0)
        for (size_t i = 0; i < npages && cached; i++)
            cached = vec[i] & 1;
    munmap(m, mlen);
    return cached;
}

int net_warm_cached(int fd, int64_t off, int64_t len)
{
    struct {
        uint64_t off, len;
    } range = {(uint64_t)off, (uint64_t)len};
    struct {
        uint64_t nr_cache, nr_dirty, nr_writeback, nr_evicted, nr_recently_evicted;
    } cs;
    static int no_cachestat;
    int64_t pg = net_warm_page();
    if (len <= 0)
        return 1;
    if (!no_cachestat) {
        if (syscall(SYS_cachestat, fd, &range, &cs, 0) == 0)
            return (int64_t)cs.nr_cache >= (off + len - 1) / pg - off / pg + 1;
        if (errno != ENOSYS)
            return 1;
        no_cachestat = 1;
    }
    return net_warm_mincore(fd, off, len);
}

/* Brings the range into the page cache and waits for it: populating a
 * read-only mapping reads the pages without copying them anywhere. If
 * that is refused (older kernels), plain reads do it. */
static void net_warm_read(int fd, int64_t off, int64_t len)
{
    int64_t pg = net_warm_page(), start = off & ~(pg - 1);
    size_t mlen = (size_t)(off + len - start);
    void *m = mmap(NULL, mlen, PROT_READ, MAP_SHARED, fd, (off_t)start);
    if (m != MAP_FAILED) {
        int rc = madvise(m, mlen, MADV_POPULATE_READ);
        int e = errno;
        munmap(m, mlen);
        if (rc == 0 || e == EFAULT) /* EFAULT: the file is shorter now */
            return;
    }
    char buf[65536];
    for (int64_t done = 0; done < len;) {
        ssize_t r = pread(fd, buf, sizeof(buf), (off_t)(off + done));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            return;
        done += r;
    }
}

static void *net_warm_worker(void *arg)
{
    net_warm_t *w = arg;
    pthread_mutex_lock(&w->mu);
    for (;;) {
        while (!w->todo && !w->stop)
            pthread_cond_wait(&w->cv, &w->mu);
        if (w->stop)
            break;
        net_warm_job_t *j = w->todo;
        w->todo = j->next;
        if (!w->todo)
            w->todo_tail = NULL;
        pthread_mutex_unlock(&w->mu);
        net_warm_read(j->fd, j->off, j->len);
        pthread_mutex_lock(&w->mu);
        j->next = w->done;
        w->done = j;
        uint64_t one = 1;
        if (write(w->io.fd, &one, sizeof(one)) < 0 && errno != EAGAIN)
            lg_warn("warm: eventfd: %s", strerror(errno));
    }
    pthread_mutex_unlock(&w->mu);
    return NULL;
}

/* Runs the callbacks of finished jobs (and frees them) on the loop. */
static void net_warm_report(net_warm_job_t *j)
{
    while (j) {
        net_warm_job_t *next = j->next;
        close(j->fd);
        if (j->cb)
            j->cb(j->data);
        free(j);
        j = next;
    }
}

static void net_warm_io(net_loop_t *loop, net_io_t *io, int events)
{
    net_warm_t *w = io->data;
    uint64_t n;
    (void)loop;
    (void)events;
    if (read(io->fd, &n, sizeof(n)) < 0 && errno != EAGAIN)
        lg_warn("warm: eventfd: %s", strerror(errno));
    pthread_mutex_lock(&w->mu);
    net_warm_job_t *done = w->done;
    w->done = NULL;
    pthread_mutex_unlock(&w->mu);
    net_warm_report(done);
}

net_warm_t *net_warm_new(net_loop_t *loop, int nthreads)
{
    net_warm_t *w = xcalloc(1, sizeof(*w));
    w->loop = loop;
    w->io.fd = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
    w->io.cb = net_warm_io;
    w->io.data = w;
    if (w->io.fd < 0 || net_io_set(loop, &w->io, NET_READ) < 0) {
        int e = errno;
        if (w->io.fd >= 0)
            close(w->io.fd);
        free(w);
        errno = e;
        return NULL;
    }
    pthread_mutex_init(&w->mu, NULL);
    pthread_cond_init(&w->cv, NULL);
    w->threads = xcalloc((size_t)nthreads, sizeof(*w->threads));
    /* Workers take no signals: those are the loop's business. */
    sigset_t all, old;
    sigfillset(&all);
    pthread_sigmask(SIG_SETMASK, &all, &old);
    for (int i = 0; i < nthreads; i++) {
        int rc = pthread_create(&w->threads[i], NULL, net_warm_worker, w);
        if (rc) {
            lg_warn("warm: cannot start a worker: %s", strerror(rc));
            break;
        }
        w->nthreads++;
    }
    pthread_sigmask(SIG_SETMASK, &old, NULL);
    if (!w->nthreads) {
        net_warm_free(w);
        errno = EAGAIN;
        return NULL;
    }
    return w;
}

void net_warm_free(net_warm_t *w)
{
    if (!w)
        return;
    pthread_mutex_lock(&w->mu);
    w->stop = 1;
    pthread_cond_broadcast(&w->cv);
    pthread_mutex_unlock(&w->mu);
    for (int i = 0; i < w->nthreads; i++)
        pthread_join(w->threads[i], NULL);
    net_io_del(w->loop, &w->io);
    close(w->io.fd);
    net_warm_report(w->done);
    net_warm_report(w->todo);
    pthread_cond_destroy(&w->cv);
    pthread_mutex_destroy(&w->mu);
    free(w->threads);
    free(w);
}

int net_warm_submit(net_warm_t *w, int fd, int64_t off, int64_t len, net_warm_cb *cb, void *data)
{
    int dfd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
    if (dfd < 0)
        return -1;
    net_warm_job_t *j = xcalloc(1, sizeof(*j));
    j->fd = dfd;
    j->off = off;
    j->len = len;
    j->cb = cb;
    j->data = data;
    pthread_mutex_lock(&w->mu);
    if (w->todo_tail)
        w->todo_tail->next = j;
    else
        w->todo = j;
    w->todo_tail = j;
    pthread_cond_signal(&w->cv);
    pthread_mutex_unlock(&w->mu);
    return 0;
}
