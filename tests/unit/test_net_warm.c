/* Cold file regions read off the loop (net/net_warm.h), and a connection
 * that sends a cold file region through them: the bytes that arrive are
 * the file's, in order, whatever was cold. */
#include <CUnit/CUnit.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "net/net_conn.h"
#include "net/net_loop.h"
#include "net/net_warm.h"
#include "unit.h"
#include "util/logging.h"

#define FILE_BYTES ((9u << 20) + 1234u) /* three warm chunks, the last short */

static char path[256];
static uint8_t *content;

/* Drops the file's pages from the page cache; 0 if this file system keeps
 * them (tmpfs), in which case the cold cases have nothing to show. */
static int evict(int fd)
{
    fdatasync(fd);
    posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
    return !net_warm_cached(fd, 0, FILE_BYTES);
}

static int open_file(void)
{
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    CU_ASSERT_FATAL(fd >= 0);
    return fd;
}

static int done_count;

static void stop_cb(net_loop_t *loop, void *data)
{
    (void)data;
    net_loop_stop(loop);
}

static void on_done(void *data)
{
    done_count++;
    if (data)
        net_loop_stop(data);
}

static void test_warm_reads_in(void)
{
    net_loop_t *loop = net_loop_new();
    int fd = open_file();
    if (!evict(fd)) {
        printf("(the page cache keeps this file: cold case not shown) ");
        close(fd);
        net_loop_free(loop);
        return;
    }
    CU_ASSERT_EQUAL(net_warm_cached(fd, 4096, 8192), 0);
    net_warm_t *w = net_warm_new(loop, 2);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w);
    done_count = 0;
    CU_ASSERT_EQUAL(net_warm_submit(w, fd, 1000, 3 << 20, on_done, loop), 0);
    close(fd); /* the job has its own descriptor */
    net_loop_run(loop);
    CU_ASSERT_EQUAL(done_count, 1);
    fd = open_file();
    CU_ASSERT_EQUAL(net_warm_cached(fd, 1000, 3 << 20), 1);
    close(fd);
    net_warm_free(w);
    net_loop_free(loop);
}

static void test_free_runs_callbacks(void)
{
    net_loop_t *loop = net_loop_new();
    net_warm_t *w = net_warm_new(loop, 1);
    int fd = open_file();
    done_count = 0;
    for (int i = 0; i < 5; i++)
        CU_ASSERT_EQUAL(net_warm_submit(w, fd, (int64_t)i << 20, 1 << 20, on_done, NULL), 0);
    CU_ASSERT_EQUAL(net_warm_submit(w, fd, 0, 1 << 20, NULL, NULL), 0); /* read ahead */
    close(fd);
    net_warm_free(w); /* whatever ran or not, every callback runs once */
    CU_ASSERT_EQUAL(done_count, 5);
    net_loop_free(loop);
}

static void test_bad_fd_refused(void)
{
    net_loop_t *loop = net_loop_new();
    net_warm_t *w = net_warm_new(loop, 1);
    errno = 0;
    CU_ASSERT_EQUAL(net_warm_submit(w, -1, 0, 10, on_done, NULL), -1);
    CU_ASSERT_EQUAL(errno, EBADF);
    net_warm_free(w);
    net_loop_free(loop);
}

/* ---- a connection sending a cold region ---- */

typedef struct reader_s {
    int fd;
    uint8_t *got;
    size_t len, want;
    atomic_int done;
} reader_t;

static void *reader_run(void *arg)
{
    reader_t *r = arg;
    while (r->len < r->want) {
        ssize_t n = recv(r->fd, r->got + r->len, r->want - r->len, 0);
        if (n <= 0)
            break;
        r->len += (size_t)n;
    }
    atomic_store(&r->done, 1);
    return NULL;
}

static void on_request(net_conn_t *conn, uint8_t *frame, size_t len)
{
    buf_t b;
    (void)frame;
    (void)len;
    buf_init(&b);
    buf_put(&b, "HDR", 3);
    buf_put_file(&b, open_file(), 0, FILE_BYTES);
    buf_put(&b, "END", 3);
    net_conn_reply(conn, &b);
}

static const net_conn_ops_t ops = {on_request, NULL};

static void poll_reader(net_loop_t *loop, void *data)
{
    reader_t *r = data;
    if (atomic_load(&r->done))
        net_loop_stop(loop);
    else
        net_timer_add(loop, 5, poll_reader, r);
}

static void test_conn_sends_cold_file(void)
{
    int sv[2];
    reader_t r = {0};
    pthread_t thr;
    net_loop_t *loop = net_loop_new();
    int fd = open_file();
    int cold = evict(fd);
    close(fd);
    CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
    int flags = fcntl(sv[1], F_GETFL);
    fcntl(sv[1], F_SETFL, flags & ~O_NONBLOCK);
    net_conn_t *conn = net_conn_new(loop, sv[0], &ops, 1 << 20, 0);
    net_conn_hold(conn);
    CU_ASSERT_EQUAL_FATAL(write(sv[1], "\0\0\0\1x", 5), 5); /* one frame of one byte */
    r.fd = sv[1];
    r.want = FILE_BYTES + 6;
    r.got = malloc(r.want);
    pthread_create(&thr, NULL, reader_run, &r);
    net_timer_add(loop, 5, poll_reader, &r);
    net_loop_run(loop);
    pthread_join(thr, NULL);
    CU_ASSERT_EQUAL(r.len, r.want);
    CU_ASSERT(memcmp(r.got, "HDR", 3) == 0);
    CU_ASSERT(memcmp(r.got + 3, content, FILE_BYTES) == 0);
    CU_ASSERT(memcmp(r.got + 3 + FILE_BYTES, "END", 3) == 0);
    CU_ASSERT_EQUAL(conn->warming, 0);
    if (cold)
        CU_ASSERT_PTR_NOT_NULL(net_loop_warm(loop)); /* the cold path was taken */
    net_conn_close(conn, NULL);
    net_conn_release(conn);
    net_timer_add(loop, 0, stop_cb, NULL);
    net_loop_run(loop);
    close(sv[1]);
    free(r.got);
    net_loop_free(loop);
}

/* A connection that goes while its region is being read: the worker's
 * answer finds it closed and only lets it go. */
static void test_conn_closed_while_warming(void)
{
    int sv[2];
    net_loop_t *loop = net_loop_new();
    int fd = open_file();
    int cold = evict(fd);
    close(fd);
    if (!cold)
        return;
    CU_ASSERT_FATAL(socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) == 0);
    net_conn_t *conn = net_conn_new(loop, sv[0], &ops, 1 << 20, 0);
    CU_ASSERT_EQUAL_FATAL(write(sv[1], "\0\0\0\1x", 5), 5);
    /* a turn or two: the frame is read and answered, the region warmed */
    net_timer_add(loop, 1, stop_cb, NULL);
    net_loop_run(loop);
    net_conn_close(conn, "test");
    close(sv[1]);
    net_timer_add(loop, 0, stop_cb, NULL);
    net_loop_run(loop);   /* the close's deferred release */
    net_loop_free(loop); /* the owed callback runs in here, freeing the connection */
}

int main(void)
{
    snprintf(path, sizeof(path), "/tmp/strand-test-net-warm-%d", (int)getpid());
    lg_set_level(LG_ERROR);
    signal(SIGPIPE, SIG_IGN); /* as the broker does */
    content = malloc(FILE_BYTES);
    for (size_t i = 0; i < FILE_BYTES; i++)
        content[i] = (uint8_t)(i * 2654435761u >> 13);
    int fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
    if (fd < 0 || write(fd, content, FILE_BYTES) != (ssize_t)FILE_BYTES)
        return 1;
    close(fd);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("net_warm", NULL, NULL);
    CU_add_test(s, "a cold range is read in off the loop", test_warm_reads_in);
    CU_add_test(s, "free runs every owed callback", test_free_runs_callbacks);
    CU_add_test(s, "a bad descriptor is refused", test_bad_fd_refused);
    CU_add_test(s, "a connection sends a cold file region", test_conn_sends_cold_file);
    CU_add_test(s, "a connection closed while warming", test_conn_closed_while_warming);
    int rc = unit_run();
    unlink(path);
    free(content);
    return rc;
}
