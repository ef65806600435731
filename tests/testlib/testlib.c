/* testlib: see testlib.h. Everything here fails the test on error rather
 * than returning codes, because a test has nothing better to do. */
#include "testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <limits.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static const char *tl_name = "test";
static uint32_t tl_seed;

static void tl_vlog(const char *tag, const char *fmt, va_list ap)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    fprintf(stderr, "[%s %ld.%03ld] %s", tl_name, (long)ts.tv_sec % 1000,
            ts.tv_nsec / 1000000, tag);
    vfprintf(stderr, fmt, ap);
    fputc('\n', stderr);
}

void tl_log(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tl_vlog("", fmt, ap);
    va_end(ap);
}

/* What tl_fail and tl_skip run before the test exits (the cluster
 * harness's log dump and kill). A fixed table: a test registers a few. */
#define TL_MAX_AT_END 8
static struct {
    void (*fn)(void *arg, int failed);
    void *arg;
} tl_at_end[TL_MAX_AT_END];

void tl_on_end(void (*fn)(void *arg, int failed), void *arg)
{
    for (int i = 0; i < TL_MAX_AT_END; i++)
        if (!tl_at_end[i].fn) {
            tl_at_end[i].fn = fn;
            tl_at_end[i].arg = arg;
            return;
        }
    tl_fail("tl_on_end: more than %d handlers", TL_MAX_AT_END);
}

void tl_on_end_remove(void (*fn)(void *arg, int failed), void *arg)
{
    for (int i = 0; i < TL_MAX_AT_END; i++)
        if (tl_at_end[i].fn == fn && tl_at_end[i].arg == arg)
            tl_at_end[i].fn = NULL;
}

/* Each handler runs once, even when it fails the test itself. */
static void tl_run_at_end(int failed)
{
    for (int i = TL_MAX_AT_END - 1; i >= 0; i--) {
        void (*fn)(void *, int) = tl_at_end[i].fn;
        tl_at_end[i].fn = NULL;
        if (fn)
            fn(tl_at_end[i].arg, failed);
    }
    tl_broker_kill_all();
}

/* The FAIL line is printed where it happens and again after the handlers
 * (which print node logs), so that it is also the last line of the test's
 * output, where run-tests.sh's tail shows it. */
void tl_fail(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tl_vlog("FAIL: ", fmt, ap);
    va_end(ap);
    tl_run_at_end(1);
    va_start(ap, fmt);
    tl_vlog("FAIL: ", fmt, ap);
    va_end(ap);
    fflush(NULL);
    _exit(1);
}

void tl_skip(const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    tl_vlog("SKIP: ", fmt, ap);
    va_end(ap);
    tl_run_at_end(0);
    fflush(NULL);
    exit(TL_EXIT_SKIP);
}

const char *tl_fmt(const char *fmt, ...)
{
    static char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof(buf), fmt, ap);
    va_end(ap);
    return buf;
}

void tl_init(const char *name)
{
    const char *seed = getenv("TL_SEED");
    tl_name = name;
    setvbuf(stdout, NULL, _IOLBF, 0);
    /* Raw-socket tests write to connections the broker closes. */
    signal(SIGPIPE, SIG_IGN);
    tl_seed = seed ? (uint32_t)strtoul(seed, NULL, 0) : (uint32_t)getpid();
    if (!tl_seed)
        tl_seed = 1;
    tl_log("seed %u (set TL_SEED to repeat)", tl_seed);
}

int tl_done(void)
{
    tl_log("passed");
    return 0;
}

/* xorshift32: reproducible from the logged seed. */
uint32_t tl_rand(void)
{
    tl_seed ^= tl_seed << 13;
    tl_seed ^= tl_seed >> 17;
    tl_seed ^= tl_seed << 5;
    return tl_seed;
}

double tl_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec / 1e9;
}

const char *tl_bootstrap(void)
{
    const char *bs = getenv("STRAND_BOOTSTRAP");
    if (!bs || !*bs)
        tl_skip("STRAND_BOOTSTRAP is not set");
    return bs;
}

int tl_is_kafka(void)
{
    const char *k = getenv("KAFKA_REF");
    return k && *k && strcmp(k, "0") != 0;
}

char *tl_scratch_dir(const char *what)
{
    const char *base = getenv("STRAND_TEST_DIR");
    char path[PATH_MAX];
    if (!base || !*base)
        base = "/tmp";
    if (mkdir(base, 0755) < 0 && errno != EEXIST)
        tl_fail("mkdir %s: %s", base, strerror(errno));
    snprintf(path, sizeof(path), "%s/%s-%d-XXXXXX", base, what, (int)getpid());
    if (!mkdtemp(path))
        tl_fail("mkdtemp %s: %s", path, strerror(errno));
    return strdup(path);
}

char *tl_topic_name(const char *prefix)
{
    char name[200];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(name, sizeof(name), "%s-%lx-%d-%04x", prefix, (long)ts.tv_sec,
             (int)getpid(), (unsigned)(tl_rand() & 0xffff));
    return strdup(name);
}

static void tl_error_cb(rd_kafka_t *rk, int err, const char *reason, void *opaque)
{
    tl_log("librdkafka %s: %s: %s", rd_kafka_name(rk),
           rd_kafka_err2name((rd_kafka_resp_err_t)err), reason);
}

rd_kafka_conf_t *tl_conf(const char *bootstrap)
{
    rd_kafka_conf_t *conf = rd_kafka_conf_new();
    tl_conf_set(conf, "bootstrap.servers", bootstrap);
    rd_kafka_conf_set_error_cb(conf, tl_error_cb);
    return conf;
}

void tl_conf_set(rd_kafka_conf_t *conf, const char *key, const char *val)
{
    char err[256];
    if (rd_kafka_conf_set(conf, key, val, err, sizeof(err)) != RD_KAFKA_CONF_OK)
        tl_fail("config %s=%s: %s", key, val, err);
}

rd_kafka_t *tl_new(rd_kafka_type_t type, rd_kafka_conf_t *conf)
{
    char err[256];
    rd_kafka_t *rk = rd_kafka_new(type, conf, err, sizeof(err));
    if (!rk)
        tl_fail("rd_kafka_new: %s", err);
    return rk;
}

int tl_wait_topic(rd_kafka_t *rk, const char *topic, int timeout_ms)
{
    double deadline = tl_now() + timeout_ms / 1000.0;
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, topic, NULL);
    char last[256] = "no answer";
    for (;;) {
        const struct rd_kafka_metadata *md = NULL;
        rd_kafka_resp_err_t err = rd_kafka_metadata(rk, 0, rkt, &md, 5000);
        int n = -1;
        if (err)
            snprintf(last, sizeof(last), "metadata: %s", rd_kafka_err2name(err));
        else if (md->topic_cnt != 1 || md->topics[0].err)
            snprintf(last, sizeof(last), "topic error %s",
                     md->topic_cnt ? rd_kafka_err2name(md->topics[0].err) : "none");
        else {
            n = md->topics[0].partition_cnt;
            for (int i = 0; i < md->topics[0].partition_cnt; i++) {
                const rd_kafka_metadata_partition_t *p = &md->topics[0].partitions[i];
                if (p->err || p->leader < 0) {
                    snprintf(last, sizeof(last), "partition %d: %s leader %d",
                             p->id, rd_kafka_err2name(p->err), p->leader);
                    n = -1;
                }
            }
            if (n == 0)
                n = -1;
        }
        if (md)
            rd_kafka_metadata_destroy(md);
        /* Metadata can name a leader before that broker serves the
         * partition (Kafka answers NOT_LEADER_OR_FOLLOWER for a moment after
         * CreateTopics), and a produce retried for that reorders messages:
         * wait until every partition answers ListOffsets. */
        for (int p = 0; p < n; p++) {
            int64_t lo, hi;
            err = rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 5000);
            if (err) {
                snprintf(last, sizeof(last), "partition %d: ListOffsets: %s", p,
                         rd_kafka_err2name(err));
                n = -1;
            }
        }
        if (n > 0) {
            rd_kafka_topic_destroy(rkt);
            return n;
        }
        if (tl_now() > deadline)
            tl_fail("topic %s not ready: %s", topic, last);
        usleep(100 * 1000);
    }
}

void tl_produce_seq(rd_kafka_t *rk, const char *topic, int32_t partition, const char *prefix,
                    int n)
{
    for (int i = 0; i < n; i++) {
        char v[128];
        snprintf(v, sizeof(v), "%s-%d", prefix, i);
        TL_ASSERT(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(partition),
                                    RD_KAFKA_V_VALUE(v, strlen(v)),
                                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                    RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR_NO_ERROR,
                  "produce to %s-%d", topic, (int)partition);
    }
    TL_ASSERT(rd_kafka_flush(rk, 30000) == RD_KAFKA_RESP_ERR_NO_ERROR, "flush");
}

int tl_create_topic(rd_kafka_t *rk, const char *topic, int partitions)
{
    return tl_create_topic_cfg(rk, topic, partitions, NULL, NULL);
}

int tl_create_topic_cfg(rd_kafka_t *rk, const char *topic, int partitions, const char *key,
                        const char *val)
{
    char err[256];
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, partitions, 1, err, sizeof(err));
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_event_t *ev;
    const rd_kafka_topic_result_t **res;
    size_t cnt;
    int n;

    if (!nt)
        tl_fail("NewTopic: %s", err);
    if (key && rd_kafka_NewTopic_set_config(nt, key, val))
        tl_fail("NewTopic %s: set_config %s", topic, key);
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    ev = rd_kafka_queue_poll(q, 30000);
    if (!ev)
        tl_fail("CreateTopics %s: no result in 30 s", topic);
    if (rd_kafka_event_error(ev) == RD_KAFKA_RESP_ERR__UNSUPPORTED_FEATURE) {
        /* A broker without CreateTopics (strand before its admin APIs):
         * let a metadata request auto-create the topic, with the broker's
         * num.partitions (run-tests.sh and tl_broker_start ask for 4). */
        tl_log("CreateTopics unsupported by the broker: auto-creating %s", topic);
        rd_kafka_event_destroy(ev);
        rd_kafka_queue_destroy(q);
        rd_kafka_NewTopic_destroy(nt);
        n = tl_wait_topic(rk, topic, 30000);
        if (n < partitions)
            tl_fail("auto-created %s has %d partitions, the test needs %d", topic, n, partitions);
        return n;
    }
    if (rd_kafka_event_error(ev))
        tl_fail("CreateTopics %s: %s", topic, rd_kafka_event_error_string(ev));
    res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
    if (cnt != 1 || rd_kafka_topic_result_error(res[0]))
        tl_fail("CreateTopics %s: %s", topic,
                cnt ? rd_kafka_err2name(rd_kafka_topic_result_error(res[0])) : "no result");
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    n = tl_wait_topic(rk, topic, 30000);
    if (n != partitions)
        tl_fail("created %s with %d partitions, metadata shows %d", topic, partitions, n);
    return n;
}

int tl_connect(const char *hostport, int timeout_ms)
{
    char host[256];
    const char *colon = strrchr(hostport, ':');
    struct addrinfo hints = {0}, *ai = NULL;
    struct timeval tv = {timeout_ms / 1000, (timeout_ms % 1000) * 1000};
    int fd, one = 1;

    if (!colon || (size_t)(colon - hostport) >= sizeof(host))
        return -1;
    memcpy(host, hostport, colon - hostport);
    host[colon - hostport] = '\0';
    hints.ai_socktype = SOCK_STREAM;
    if (getaddrinfo(host, colon + 1, &hints, &ai) != 0)
        return -1;
    fd = socket(ai->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd >= 0 && connect(fd, ai->ai_addr, ai->ai_addrlen) < 0) {
        close(fd);
        fd = -1;
    }
    freeaddrinfo(ai);
    if (fd < 0)
        return -1;
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
    setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
    return fd;
}

int tl_send_all(int fd, const void *buf, size_t len)
{
    const uint8_t *p = buf;
    while (len > 0) {
        ssize_t n = send(fd, p, len, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0)
            return -1;
        p += n;
        len -= (size_t)n;
    }
    return 0;
}

/* Reads exactly len bytes before the deadline: 1 done, 0 EOF, -1 error. */
static int tl_recv_exact(int fd, uint8_t *p, size_t len, double deadline)
{
    while (len > 0) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int ms = (int)((deadline - tl_now()) * 1000);
        ssize_t n;
        if (ms <= 0) {
            errno = EAGAIN;
            return -1;
        }
        if (poll(&pfd, 1, ms) == 0)
            continue;
        n = recv(fd, p, len, 0);
        if (n == 0)
            return 0;
        if (n < 0) {
            if (errno == EINTR || errno == EAGAIN)
                continue;
            return -1;
        }
        p += n;
        len -= (size_t)n;
    }
    return 1;
}

int tl_recv_frame(int fd, uint8_t **out, int timeout_ms)
{
    double deadline = tl_now() + timeout_ms / 1000.0;
    uint8_t hdr[4];
    int32_t size;
    int rc = tl_recv_exact(fd, hdr, 4, deadline);
    *out = NULL;
    if (rc <= 0)
        return rc;
    size = tl_get_i32(hdr);
    if (size <= 0 || size > (64 << 20)) {
        errno = EPROTO;
        return -1;
    }
    *out = malloc((size_t)size);
    if (!*out)
        tl_fail("out of memory");
    rc = tl_recv_exact(fd, *out, (size_t)size, deadline);
    if (rc <= 0) {
        free(*out);
        *out = NULL;
        if (rc == 0) {
            errno = EPROTO;
            rc = -1;
        }
        return rc;
    }
    return size;
}

int tl_wait_closed(int fd, int timeout_ms, size_t *got)
{
    double deadline = tl_now() + timeout_ms / 1000.0;
    uint8_t buf[4096];
    *got = 0;
    for (;;) {
        struct pollfd pfd = {fd, POLLIN, 0};
        int ms = (int)((deadline - tl_now()) * 1000);
        ssize_t n;
        if (ms <= 0)
            return *got ? 0 : -1;
        if (poll(&pfd, 1, ms) <= 0)
            continue;
        n = recv(fd, buf, sizeof(buf), 0);
        if (n == 0 || (n < 0 && errno == ECONNRESET))
            return *got ? 0 : 1;
        if (n < 0 && (errno == EINTR || errno == EAGAIN))
            continue;
        if (n < 0)
            return -1;
        *got += (size_t)n;
    }
}

int tl_free_port(void)
{
    struct sockaddr_in sa = {0};
    socklen_t len = sizeof(sa);
    int fd = socket(AF_INET, SOCK_STREAM, 0), port;
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
        getsockname(fd, (struct sockaddr *)&sa, &len) < 0)
        tl_fail("free port: %s", strerror(errno));
    port = ntohs(sa.sin_port);
    close(fd);
    return port;
}

int16_t tl_get_i16(const uint8_t *p)
{
    return (int16_t)((p[0] << 8) | p[1]);
}

int32_t tl_get_i32(const uint8_t *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) |
                     ((uint32_t)p[2] << 8) | p[3]);
}

static void tl_req_need(tl_req *r, size_t n)
{
    if (r->len + n > sizeof(r->data))
        tl_fail("raw request too large");
}

void tl_req_i8(tl_req *r, int8_t v)
{
    tl_req_need(r, 1);
    r->data[r->len++] = (uint8_t)v;
}

void tl_req_i16(tl_req *r, int16_t v)
{
    tl_req_need(r, 2);
    r->data[r->len++] = (uint8_t)((uint16_t)v >> 8);
    r->data[r->len++] = (uint8_t)v;
}

void tl_req_i32(tl_req *r, int32_t v)
{
    tl_req_need(r, 4);
    for (int shift = 24; shift >= 0; shift -= 8)
        r->data[r->len++] = (uint8_t)((uint32_t)v >> shift);
}

void tl_req_bytes(tl_req *r, const void *p, size_t n)
{
    tl_req_need(r, n);
    memcpy(r->data + r->len, p, n);
    r->len += n;
}

/* Request header v1 (key, version, correlation id, nullable client id);
 * a flexible request appends its empty tag buffer itself. */
void tl_req_header(tl_req *r, int16_t key, int16_t version, int32_t corr,
                   const char *client_id)
{
    r->len = 0;
    tl_req_i32(r, 0); /* size, set by tl_req_finish */
    tl_req_i16(r, key);
    tl_req_i16(r, version);
    tl_req_i32(r, corr);
    if (!client_id) {
        tl_req_i16(r, -1);
    } else {
        tl_req_i16(r, (int16_t)strlen(client_id));
        tl_req_bytes(r, client_id, strlen(client_id));
    }
}

void tl_req_finish(tl_req *r)
{
    size_t len = r->len;
    r->len = 0;
    tl_req_i32(r, (int32_t)(len - 4));
    r->len = len;
}

uint32_t tl_mix32(uint32_t x)
{
    x ^= x >> 16;
    x *= 0x7feb352dU;
    x ^= x >> 15;
    x *= 0x846ca68bU;
    x ^= x >> 16;
    return x;
}

rd_kafka_t *tl_consume_from_start(rd_kafka_conf_t *conf, const char *topic, int nparts,
                                  int64_t n, double timeout_s,
                                  void (*check)(const rd_kafka_message_t *msg, void *arg),
                                  void *arg)
{
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(nparts);
    int64_t *next = calloc((size_t)nparts, sizeof(*next)), got = 0;
    double deadline = tl_now() + timeout_s;

    tl_conf_set(conf, "group.id", topic);
    tl_conf_set(conf, "enable.auto.commit", "false");
    rd_kafka_t *rk = tl_new(RD_KAFKA_CONSUMER, conf);
    for (int p = 0; p < nparts; p++)
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    TL_ASSERT_EQ(rd_kafka_assign(rk, parts), 0);
    rd_kafka_topic_partition_list_destroy(parts);
    while (got < n) {
        TL_ASSERT(tl_now() < deadline, "consumed %lld of %lld in %.0f s", (long long)got,
                  (long long)n, timeout_s);
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 500);
        if (!msg)
            continue;
        TL_ASSERT(!msg->err, "consume: %s", rd_kafka_message_errstr(msg));
        int p = msg->partition;
        TL_ASSERT(p >= 0 && p < nparts, "partition %d", p);
        TL_ASSERT(msg->offset == next[p], "partition %d: offset %lld, expected %lld", p,
                  (long long)msg->offset, (long long)next[p]);
        check(msg, arg);
        next[p]++;
        got++;
        rd_kafka_message_destroy(msg);
    }
    free(next);
    return rk;
}
