/* proxy: see proxy.h. One thread per proxy runs a poll loop over its
 * listener, a wake-up pipe and both sockets of each connection. Bytes read
 * are queued per direction in chunks stamped with the time they may leave
 * (now + the direction's delay), so a delay holds bytes without holding the
 * loop; a direction whose queue is full is not read (back-pressure, as a
 * slow network's window). The test's changes go into `want` under the mutex
 * and the thread copies them at the top of its loop, then signals them
 * applied. */
#include "testlib/proxy.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "testlib/testlib.h"

#define TL_PX_CHUNK 65536
#define TL_PX_QUEUE_MAX (4u << 20)
#define TL_PX_MAX_CONNS 64

enum { TL_PX_PASS, TL_PX_DROP };

typedef struct tl_px_chunk {
    struct tl_px_chunk *next;
    double due;
    size_t len, off;
    uint8_t data[];
} tl_px_chunk;

/* One direction of a connection: from fd[i] to fd[1 - i]. */
typedef struct tl_px_flow {
    tl_px_chunk *head, *tail;
    size_t queued;
    int eof;  /* the source shut its side */
    int shut; /* the destination was shut in turn */
} tl_px_flow;

typedef struct tl_px_conn {
    int fd[2]; /* [0] accepted, [1] to the target */
    tl_px_flow flow[2];
    int lost; /* bytes were swallowed by a drop */
} tl_px_conn;

/* What a link does, as the test set it. */
typedef struct tl_px_link {
    int mode[2];
    int delay_ms[2];
    int cut;
    int heal_gen; /* bumped by heal: close the connections that lost bytes */
    int target;
    int stop;
} tl_px_link;

struct tl_proxy {
    pthread_t thr;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    tl_px_link want;      /* under mu */
    uint64_t seq, done;   /* under mu: changes asked for, applied */
    int err;              /* under mu: errno of a failed re-listen */
    tl_proxy_stats stats; /* under mu */
    int wake[2];
    int lfd; /* -1 while cut */
    int port;
    char addr[32];
    tl_px_link cur;   /* the thread's copy */
    uint64_t applied; /* the thread's: the last seq it took */
    tl_px_conn conns[TL_PX_MAX_CONNS];
    int nconns;
};

/* Listening socket on 127.0.0.1:port (0: any); -1 with errno. */
static int tl_px_listen(int port, int *bound)
{
    struct sockaddr_in sa = {0};
    socklen_t len = sizeof(sa);
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 64) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0) {
        int e = errno;
        close(fd);
        errno = e;
        return -1;
    }
    *bound = ntohs(sa.sin_port);
    return fd;
}

/* A connection to the target, non-blocking once connected; -1 when the
 * target does not answer (a node that is down). */
static int tl_px_dial(int port)
{
    struct sockaddr_in sa = {0};
    int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0)
        return -1;
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        close(fd);
        return -1;
    }
    fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

static void tl_px_count(tl_proxy *px, int64_t *counter, int64_t n)
{
    pthread_mutex_lock(&px->mu);
    *counter += n;
    pthread_mutex_unlock(&px->mu);
}

static void tl_px_close(tl_proxy *px, int k)
{
    tl_px_conn *conn = &px->conns[k];
    for (int i = 0; i < 2; i++) {
        close(conn->fd[i]);
        while (conn->flow[i].head) {
            tl_px_chunk *ch = conn->flow[i].head;
            conn->flow[i].head = ch->next;
            free(ch);
        }
    }
    px->conns[k] = px->conns[--px->nconns];
    tl_px_count(px, &px->stats.open, -1);
}

static void tl_px_accept(tl_proxy *px)
{
    int one = 1, ufd, cfd = accept4(px->lfd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
    tl_px_conn *conn;
    if (cfd < 0)
        return;
    ufd = px->nconns < TL_PX_MAX_CONNS ? tl_px_dial(px->cur.target) : -1;
    if (ufd < 0) { /* the target is down: the client sees it closed */
        close(cfd);
        return;
    }
    setsockopt(cfd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    conn = &px->conns[px->nconns++];
    memset(conn, 0, sizeof(*conn));
    conn->fd[0] = cfd;
    conn->fd[1] = ufd;
    pthread_mutex_lock(&px->mu);
    px->stats.accepted++;
    px->stats.open++;
    pthread_mutex_unlock(&px->mu);
}

/* Reads what flow i's source has; -1 when the connection is done for. */
static int tl_px_read(tl_proxy *px, tl_px_conn *conn, int i, double now)
{
    tl_px_flow *f = &conn->flow[i];
    tl_px_chunk *ch = malloc(sizeof(*ch) + TL_PX_CHUNK);
    ssize_t n;
    if (!ch)
        return -1;
    n = recv(conn->fd[i], ch->data, TL_PX_CHUNK, MSG_DONTWAIT);
    if (n <= 0 || px->cur.mode[i] == TL_PX_DROP) {
        free(ch);
        if (n == 0)
            f->eof = 1;
        if (n > 0) {
            conn->lost = 1;
            tl_px_count(px, &px->stats.dropped[i], n);
        }
        return n < 0 && errno != EAGAIN && errno != EINTR ? -1 : 0;
    }
    ch->next = NULL;
    ch->due = now + px->cur.delay_ms[i] / 1000.0;
    ch->len = (size_t)n;
    ch->off = 0;
    if (f->tail)
        f->tail->next = ch;
    else
        f->head = ch;
    f->tail = ch;
    f->queued += (size_t)n;
    return 0;
}

/* Sends flow i's chunks that are due; shuts the destination after the
 * source's end. -1 when the connection is done for. */
static int tl_px_write(tl_proxy *px, tl_px_conn *conn, int i, double now)
{
    tl_px_flow *f = &conn->flow[i];
    while (f->head && f->head->due <= now) {
        tl_px_chunk *ch = f->head;
        ssize_t n = send(conn->fd[1 - i], ch->data + ch->off, ch->len - ch->off,
                         MSG_DONTWAIT | MSG_NOSIGNAL);
        if (n < 0)
            return errno == EAGAIN || errno == EINTR ? 0 : -1;
        tl_px_count(px, &px->stats.bytes[i], n);
        ch->off += (size_t)n;
        f->queued -= (size_t)n;
        if (ch->off < ch->len)
            return 0;
        f->head = ch->next;
        if (!f->head)
            f->tail = NULL;
        free(ch);
    }
    if (!f->head && f->eof && !f->shut) {
        shutdown(conn->fd[1 - i], SHUT_WR);
        f->shut = 1;
    }
    return 0;
}

/* ---- the loop ---- */

static void tl_px_cut_all(tl_proxy *px)
{
    while (px->nconns)
        tl_px_close(px, px->nconns - 1);
    if (px->lfd >= 0)
        close(px->lfd);
    px->lfd = -1;
}

/* Takes the test's changes: copied under mu, acted on outside it (closing
 * a connection counts under mu), then signalled applied. */
static void tl_px_apply(tl_proxy *px)
{
    tl_px_link want;
    uint64_t seq;
    int err = 0, bound;
    pthread_mutex_lock(&px->mu);
    seq = px->seq;
    want = px->want;
    pthread_mutex_unlock(&px->mu);
    if (seq == px->applied)
        return;
    if (want.heal_gen != px->cur.heal_gen)
        for (int k = px->nconns - 1; k >= 0; k--)
            if (px->conns[k].lost)
                tl_px_close(px, k);
    if (want.cut && px->lfd >= 0)
        tl_px_cut_all(px);
    if (!want.cut && px->lfd < 0 && !want.stop) {
        px->lfd = tl_px_listen(px->port, &bound);
        if (px->lfd < 0)
            err = errno;
    }
    px->cur = want;
    px->applied = seq;
    pthread_mutex_lock(&px->mu);
    px->done = seq;
    px->err = err;
    pthread_cond_broadcast(&px->cv);
    pthread_mutex_unlock(&px->mu);
}

/* Poll events for conn's two sockets; the earliest due time not yet
 * reached lowers *wait_ms. */
static void tl_px_events(tl_px_conn *conn, struct pollfd *pfd, double now, int *wait_ms)
{
    for (int j = 0; j < 2; j++) {
        pfd[j].fd = conn->fd[j];
        pfd[j].events = 0;
    }
    for (int i = 0; i < 2; i++) {
        tl_px_flow *f = &conn->flow[i];
        if (!f->eof && f->queued < TL_PX_QUEUE_MAX)
            pfd[i].events |= POLLIN;
        if (f->head && f->head->due <= now) {
            pfd[1 - i].events |= POLLOUT;
        } else if (f->head) {
            int ms = (int)((f->head->due - now) * 1000) + 1;
            if (*wait_ms < 0 || ms < *wait_ms)
                *wait_ms = ms;
        }
    }
}

/* Moves conn's bytes after poll; -1 when it is done (closed both ways,
 * an error, or its peer gone with bytes still to deliver). */
static int tl_px_serve(tl_proxy *px, tl_px_conn *conn, const struct pollfd *pfd)
{
    double now = tl_now();
    for (int i = 0; i < 2; i++) {
        if (pfd[i].revents & POLLERR)
            return -1;
        if ((pfd[i].revents & POLLHUP) && conn->flow[1 - i].head)
            return -1;
        if ((pfd[i].revents & (POLLIN | POLLHUP)) && tl_px_read(px, conn, i, now) < 0)
            return -1;
    }
    for (int i = 0; i < 2; i++)
        if (tl_px_write(px, conn, i, now) < 0)
            return -1;
    return conn->flow[0].shut && conn->flow[1].shut ? -1 : 0;
}

static void *tl_px_main(void *arg)
{
    tl_proxy *px = arg;
    struct pollfd pfd[2 + 2 * TL_PX_MAX_CONNS];
    for (;;) {
        int wait_ms = -1, n;
        double now = tl_now();
        tl_px_apply(px);
        if (px->cur.stop)
            break;
        pfd[0] = (struct pollfd){.fd = px->wake[0], .events = POLLIN};
        pfd[1] = (struct pollfd){.fd = px->lfd, .events = POLLIN};
        for (int k = 0; k < px->nconns; k++)
            tl_px_events(&px->conns[k], &pfd[2 + 2 * k], now, &wait_ms);
        n = poll(pfd, 2 + 2 * (nfds_t)px->nconns, wait_ms);
        if (n < 0 && errno != EINTR)
            break;
        if (pfd[0].revents & POLLIN) {
            char buf[64];
            while (read(px->wake[0], buf, sizeof(buf)) > 0)
                ;
        }
        for (int k = px->nconns - 1; k >= 0; k--)
            if (tl_px_serve(px, &px->conns[k], &pfd[2 + 2 * k]) < 0)
                tl_px_close(px, k);
        if (px->lfd >= 0 && (pfd[1].revents & POLLIN))
            tl_px_accept(px);
    }
    tl_px_cut_all(px);
    return NULL;
}

/* ---- the test's side ---- */

/* Wakes the thread and waits until it applied what the caller changed in
 * want (the caller holds mu; released here). */
static void tl_px_commit(tl_proxy *px)
{
    uint64_t seq = ++px->seq;
    int err;
    char b = 1;
    if (write(px->wake[1], &b, 1) < 0 && errno != EAGAIN)
        tl_fail("proxy: wake: %s", strerror(errno));
    while (px->done < seq)
        pthread_cond_wait(&px->cv, &px->mu);
    err = px->err;
    px->err = 0;
    pthread_mutex_unlock(&px->mu);
    if (err)
        tl_fail("proxy %s: listening again: %s", px->addr, strerror(err));
}

tl_proxy *tl_proxy_new(int port, int target)
{
    tl_proxy *px = calloc(1, sizeof(*px));
    if (!px)
        tl_fail("out of memory");
    px->lfd = tl_px_listen(port, &px->port);
    if (px->lfd < 0)
        tl_fail("proxy: listen on port %d: %s", port, strerror(errno));
    if (pipe2(px->wake, O_NONBLOCK | O_CLOEXEC) < 0)
        tl_fail("proxy: pipe: %s", strerror(errno));
    snprintf(px->addr, sizeof(px->addr), "127.0.0.1:%d", px->port);
    px->want.target = target;
    px->cur = px->want;
    pthread_mutex_init(&px->mu, NULL);
    pthread_cond_init(&px->cv, NULL);
    if (pthread_create(&px->thr, NULL, tl_px_main, px) != 0)
        tl_fail("proxy: pthread_create failed");
    tl_log("proxy %s -> 127.0.0.1:%d", px->addr, target);
    return px;
}

void tl_proxy_free(tl_proxy *px)
{
    if (!px)
        return;
    pthread_mutex_lock(&px->mu);
    px->want.stop = 1;
    tl_px_commit(px);
    pthread_join(px->thr, NULL);
    close(px->wake[0]);
    close(px->wake[1]);
    pthread_cond_destroy(&px->cv);
    pthread_mutex_destroy(&px->mu);
    free(px);
}

int tl_proxy_port(const tl_proxy *px)
{
    return px->port;
}

const char *tl_proxy_addr(const tl_proxy *px)
{
    return px->addr;
}

void tl_proxy_retarget(tl_proxy *px, int target)
{
    pthread_mutex_lock(&px->mu);
    px->want.target = target;
    tl_px_commit(px);
}

static void tl_px_set(tl_proxy *px, int dirs, int mode, int ms)
{
    pthread_mutex_lock(&px->mu);
    for (int i = 0; i < 2; i++)
        if (dirs & (1 << i)) {
            px->want.mode[i] = mode;
            px->want.delay_ms[i] = ms;
        }
    tl_px_commit(px);
}

void tl_proxy_pass(tl_proxy *px, int dirs)
{
    tl_px_set(px, dirs, TL_PX_PASS, 0);
}

void tl_proxy_drop(tl_proxy *px, int dirs)
{
    tl_px_set(px, dirs, TL_PX_DROP, 0);
}

void tl_proxy_delay(tl_proxy *px, int dirs, int ms)
{
    tl_px_set(px, dirs, TL_PX_PASS, ms);
}

void tl_proxy_cut(tl_proxy *px)
{
    pthread_mutex_lock(&px->mu);
    px->want.cut = 1;
    tl_px_commit(px);
}

void tl_proxy_heal(tl_proxy *px)
{
    pthread_mutex_lock(&px->mu);
    for (int i = 0; i < 2; i++) {
        px->want.mode[i] = TL_PX_PASS;
        px->want.delay_ms[i] = 0;
    }
    px->want.cut = 0;
    px->want.heal_gen++;
    tl_px_commit(px);
}

void tl_proxy_stats_get(tl_proxy *px, tl_proxy_stats *st)
{
    pthread_mutex_lock(&px->mu);
    *st = px->stats;
    pthread_mutex_unlock(&px->mu);
}
