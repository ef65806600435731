/* 0004-idempotent-proxy: an idempotent producer (enable.idempotence=true)
 * talks to the broker through a TCP proxy inside this test that cuts
 * connections at random byte counts (a bounded number of times, then lets
 * traffic through). librdkafka retries what was in flight; the broker must
 * drop the duplicates by producer id and sequence. Afterwards every
 * delivery report succeeded, and each partition holds exactly the produced
 * sequence: no duplicate, no gap, in order, at the offsets reported.
 *
 * All connections of the producer are sent to the proxy by a connect
 * callback, whatever address the broker advertises. */
#include "testlib/testlib.h"

#include <arpa/inet.h>
#include <errno.h>
#include <inttypes.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#define NPART 2
#define MAX_PAIRS 64
#define BUF_SIZE (256 * 1024)

static int n_msgs = 40000;
static int max_drops = 30;

/* ---- the proxy ---- */

typedef struct pipe_dir {
    uint8_t *buf;
    size_t len;
} pipe_dir;

typedef struct proxy_pair {
    int cfd, ufd;  /* client side, upstream (broker) side */
    pipe_dir c2u, u2c;
    int64_t budget; /* bytes left before the cut; -1: never */
} proxy_pair;

static struct {
    int lfd, port, up_port;
    volatile int stop;
    int drops, conns;
    unsigned seed;
    proxy_pair pairs[MAX_PAIRS];
    int npairs;
    pthread_t thr;
} px;

static int proxy_connect_upstream(void)
{
    struct sockaddr_in sa = {0};
    int fd = socket(AF_INET, SOCK_STREAM, 0);
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)px.up_port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
        if (fd >= 0)
            close(fd);
        return -1;
    }
    return fd;
}

static void proxy_close_pair(int i, int rst)
{
    proxy_pair *pp = &px.pairs[i];
    if (rst) { /* half the cuts are resets, half orderly closes */
        struct linger lg = {1, 0};
        setsockopt(pp->cfd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        setsockopt(pp->ufd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
    }
    close(pp->cfd);
    close(pp->ufd);
    free(pp->c2u.buf);
    free(pp->u2c.buf);
    px.pairs[i] = px.pairs[--px.npairs];
}

static void proxy_accept(void)
{
    int cfd = accept(px.lfd, NULL, NULL), ufd;
    proxy_pair *pp;
    if (cfd < 0)
        return;
    ufd = proxy_connect_upstream();
    if (ufd < 0 || px.npairs == MAX_PAIRS) {
        close(cfd);
        if (ufd >= 0)
            close(ufd);
        return;
    }
    pp = &px.pairs[px.npairs++];
    memset(pp, 0, sizeof(*pp));
    pp->cfd = cfd;
    pp->ufd = ufd;
    pp->c2u.buf = malloc(BUF_SIZE);
    pp->u2c.buf = malloc(BUF_SIZE);
    /* Most cuts inside the first few hundred KB: mid-request, mid-response
     * or between them, wherever the count falls. */
    pp->budget = px.drops + px.npairs <= max_drops ? 1 + rand_r(&px.seed) % 400000 : -1;
    px.conns++;
}

/* Moves bytes src -> dir buffer -> dst; returns -1 when the pair is done. */
static int proxy_pump(proxy_pair *pp, int src, int dst, pipe_dir *d, short rev_src, short rev_dst)
{
    if ((rev_src & (POLLIN | POLLHUP | POLLERR)) && d->len < BUF_SIZE) {
        size_t want = BUF_SIZE - d->len;
        ssize_t n;
        if (pp->budget >= 0 && (int64_t)want > pp->budget)
            want = (size_t)pp->budget;
        n = want ? recv(src, d->buf + d->len, want, MSG_DONTWAIT) : -1;
        if (want && (n == 0 || (n < 0 && errno != EAGAIN)))
            return -1;
        if (n > 0) {
            d->len += (size_t)n;
            if (pp->budget >= 0)
                pp->budget -= n;
        }
    }
    if ((rev_dst & POLLOUT) && d->len > 0) {
        ssize_t n = send(dst, d->buf, d->len, MSG_NOSIGNAL | MSG_DONTWAIT);
        if (n < 0 && errno != EAGAIN)
            return -1;
        if (n > 0) {
            memmove(d->buf, d->buf + n, d->len - (size_t)n);
            d->len -= (size_t)n;
        }
    }
    return 0;
}

static void *proxy_main(void *arg)
{
    struct pollfd pfd[1 + 2 * MAX_PAIRS];
    while (!px.stop) {
        int n = 1;
        pfd[0] = (struct pollfd){px.lfd, POLLIN, 0};
        for (int i = 0; i < px.npairs; i++) {
            proxy_pair *pp = &px.pairs[i];
            pfd[n++] = (struct pollfd){pp->cfd,
                (short)((pp->c2u.len < BUF_SIZE ? POLLIN : 0) | (pp->u2c.len ? POLLOUT : 0)), 0};
            pfd[n++] = (struct pollfd){pp->ufd,
                (short)((pp->u2c.len < BUF_SIZE ? POLLIN : 0) | (pp->c2u.len ? POLLOUT : 0)), 0};
        }
        if (poll(pfd, (nfds_t)n, 50) <= 0)
            continue;
        /* Back to front, so closing (which moves the last pair into the
         * hole) never skips a pair whose events are still unread. */
        for (int i = px.npairs - 1; i >= 0; i--) {
            proxy_pair *pp = &px.pairs[i];
            short cr = pfd[1 + 2 * i].revents, ur = pfd[2 + 2 * i].revents;
            if (proxy_pump(pp, pp->cfd, pp->ufd, &pp->c2u, cr, ur) < 0 ||
                proxy_pump(pp, pp->ufd, pp->cfd, &pp->u2c, ur, cr) < 0) {
                proxy_close_pair(i, 0);
            } else if (pp->budget == 0 && pp->c2u.len == 0 && pp->u2c.len == 0) {
                px.drops++;
                proxy_close_pair(i, rand_r(&px.seed) & 1);
            }
        }
        if (pfd[0].revents & POLLIN)
            proxy_accept();
    }
    while (px.npairs > 0)
        proxy_close_pair(px.npairs - 1, 0);
    return arg;
}

static void proxy_start(int up_port)
{
    struct sockaddr_in sa = {0};
    socklen_t len = sizeof(sa);
    int one = 1;
    px.up_port = up_port;
    px.seed = tl_rand();
    px.lfd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
    sa.sin_family = AF_INET;
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    setsockopt(px.lfd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
    if (bind(px.lfd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(px.lfd, 16) < 0 ||
        getsockname(px.lfd, (struct sockaddr *)&sa, &len) < 0)
        tl_fail("proxy listen: %s", strerror(errno));
    px.port = ntohs(sa.sin_port);
    if (pthread_create(&px.thr, NULL, proxy_main, NULL) != 0)
        tl_fail("pthread_create");
}

static void proxy_stop(void)
{
    px.stop = 1;
    pthread_join(px.thr, NULL);
    close(px.lfd);
}

/* Every connection of the producer goes to the proxy. */
static int connect_cb(int fd, const struct sockaddr *addr, int addrlen, const char *id,
                      void *opaque)
{
    struct sockaddr_in sa = {0};
    sa.sin_family = AF_INET;
    sa.sin_port = htons((uint16_t)px.port);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS)
        return errno;
    return 0;
}

/* ---- the producer ---- */

static int64_t dr_ok, dr_fail, dr_bad;

static int make_value(char *buf, int part, int seq)
{
    return snprintf(buf, 256, "p%d-%08d--------------------------------------------------"
                    "--------------------------------------------------------------", part, seq);
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    int seq = (int)(intptr_t)msg->_private;
    if (msg->err) {
        if (dr_fail++ < 5)
            tl_log("delivery of %d:%d failed: %s", (int)msg->partition, seq,
                   rd_kafka_err2str(msg->err));
    } else if (msg->offset != seq) {
        if (dr_bad++ < 5)
            tl_log("%d:%d delivered at offset %" PRId64, (int)msg->partition, seq, msg->offset);
    } else {
        dr_ok++;
    }
}

static void produce_through_proxy(const char *bs, const char *topic)
{
    char err[512], proxy_bs[64], val[256];
    rd_kafka_conf_t *conf;
    rd_kafka_t *rk;
    double t0 = tl_now();

    snprintf(proxy_bs, sizeof(proxy_bs), "127.0.0.1:%d", px.port);
    conf = tl_conf(proxy_bs);
    tl_conf_set(conf, "enable.idempotence", "true");
    tl_conf_set(conf, "linger.ms", "2");
    tl_conf_set(conf, "batch.num.messages", "500");
    tl_conf_set(conf, "reconnect.backoff.ms", "10");
    tl_conf_set(conf, "reconnect.backoff.max.ms", "200");
    tl_conf_set(conf, "message.timeout.ms", "120000");
    rd_kafka_conf_set_connect_cb(conf, connect_cb);
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rk = tl_new(RD_KAFKA_PRODUCER, conf);

    for (int i = 0; i < n_msgs; i++) {
        int part = i % NPART, seq = i / NPART, len = make_value(val, part, seq);
        rd_kafka_resp_err_t e;
        while ((e = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(part),
                                      RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                      RD_KAFKA_V_VALUE(val, (size_t)len),
                                      RD_KAFKA_V_OPAQUE((void *)(intptr_t)seq),
                                      RD_KAFKA_V_END)) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
            rd_kafka_poll(rk, 10);
        TL_ASSERT(!e, "produce: %s", rd_kafka_err2name(e));
        if (i % 500 == 0)
            rd_kafka_poll(rk, 1); /* spread the traffic over the cuts */
    }
    if (rd_kafka_flush(rk, 150000))
        tl_fail("flush: %d messages left", rd_kafka_outq_len(rk));
    if (rd_kafka_fatal_error(rk, err, sizeof(err)))
        tl_fail("producer fatal error: %s", err);
    tl_log("produced %d messages in %.2f s through %d connections, %d cut", n_msgs,
           tl_now() - t0, px.conns, px.drops);
    TL_ASSERT_EQ(dr_fail, 0);
    TL_ASSERT_EQ(dr_bad, 0);
    TL_ASSERT_EQ(dr_ok, n_msgs);
    rd_kafka_destroy(rk);
}

/* Straight to the broker: each partition holds 0..n-1, once, in order. */
static void verify(const char *bs, const char *topic)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(NPART);
    int64_t next[NPART] = {0}, got = 0, per_part = n_msgs / NPART;
    double deadline = tl_now() + 60;
    rd_kafka_t *rk;

    tl_conf_set(conf, "group.id", topic);
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "fetch.wait.max.ms", "100");
    rk = tl_new(RD_KAFKA_CONSUMER, conf);
    for (int p = 0; p < NPART; p++) {
        int64_t lo, hi;
        TL_ASSERT_EQ(rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 10000), 0);
        TL_ASSERT(lo == 0 && hi == per_part, "partition %d holds offsets %" PRId64 "..%" PRId64
                  ", expected 0..%" PRId64, p, lo, hi - 1, per_part - 1);
        rd_kafka_topic_partition_list_add(parts, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    }
    TL_ASSERT_EQ(rd_kafka_assign(rk, parts), 0);
    rd_kafka_topic_partition_list_destroy(parts);
    while (got < n_msgs) {
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 500);
        char want[256];
        int p, len;
        if (tl_now() > deadline)
            tl_fail("consumed %" PRId64 " of %d in 60 s", got, n_msgs);
        if (!msg)
            continue;
        TL_ASSERT(!msg->err, "consume: %s", rd_kafka_message_errstr(msg));
        p = msg->partition;
        TL_ASSERT_EQ(msg->offset, next[p]);
        len = make_value(want, p, (int)next[p]);
        TL_ASSERT(msg->len == (size_t)len && memcmp(msg->payload, want, (size_t)len) == 0,
                  "partition %d offset %" PRId64 ": '%.*s', expected '%s'", p, msg->offset,
                  (int)msg->len, (const char *)msg->payload, want);
        next[p]++;
        got++;
        rd_kafka_message_destroy(msg);
    }
    rd_kafka_destroy(rk);
}

int main(void)
{
    const char *bs, *colon;
    char *topic;
    rd_kafka_t *admin;

    tl_init("0004-idempotent-proxy");
    bs = tl_bootstrap();
    colon = strrchr(bs, ':');
    TL_ASSERT(colon != NULL, "STRAND_BOOTSTRAP %s has no port", bs);
    topic = tl_topic_name("t0004");
    admin = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    TL_ASSERT(tl_create_topic(admin, topic, NPART) >= NPART, "partitions");
    rd_kafka_destroy(admin);

    proxy_start(atoi(colon + 1));
    produce_through_proxy(bs, topic);
    proxy_stop();
    TL_ASSERT(px.drops >= 5, "only %d connections were cut: the test tested little", px.drops);
    verify(bs, topic);
    free(topic);
    return tl_done();
}
