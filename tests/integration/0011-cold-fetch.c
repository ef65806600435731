/* 0011-cold-fetch: data that has left the page cache is read back exact.
 * Three partitions of 1 KB messages (about 24 MB) are written, their
 * segment files dropped from the page cache, and read from the start by a
 * librdkafka consumer with large fetches (several MB per response, read
 * from the disk while they are sent): every offset in order, every value
 * byte. Meanwhile another client's
 * Metadata requests keep being answered. Then the same once more, the
 * files now cold again, by raw Fetch requests of 16 MB. */
#include "testlib/testlib.h"

#include <dirent.h>
#include <fcntl.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define NPART 3
#define PER_PART 8000
#define VLEN 1024

static char data_dir[600];

static void gen_value(int part, int64_t off, char *v)
{
    uint32_t x = (uint32_t)(part * 7919 + off * 2654435761u);
    for (int i = 0; i < VLEN; i++) {
        x = x * 1103515245u + 12345u;
        v[i] = (char)('a' + (x >> 16) % 26);
    }
    snprintf(v, 32, "p%d-o%" PRId64 "-", part, off);
}

static void produce_all(const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    char v[VLEN];
    tl_conf_set(conf, "linger.ms", "20");
    tl_conf_set(conf, "acks", "all");
    tl_conf_set(conf, "queue.buffering.max.messages", "100000");
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    TL_ASSERT(tl_create_topic(rk, "cold", NPART) == NPART, "partitions");
    for (int64_t off = 0; off < PER_PART; off++)
        for (int p = 0; p < NPART; p++) {
            gen_value(p, off, v);
            while (rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("cold"), RD_KAFKA_V_PARTITION(p),
                                     RD_KAFKA_V_VALUE(v, VLEN), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                     RD_KAFKA_V_END) == RD_KAFKA_RESP_ERR__QUEUE_FULL)
                rd_kafka_poll(rk, 10);
        }
    TL_ASSERT(rd_kafka_flush(rk, 60000) == 0, "flush");
    rd_kafka_destroy(rk);
}

/* Drops every segment file of the topic from the page cache (after
 * writing it out: only clean pages can go). Returns the files dropped. */
static int evict(void)
{
    char path[1200];
    int n = 0;
    for (int p = 0; p < NPART; p++) {
        snprintf(path, sizeof(path), "%s/cold-%d", data_dir, p);
        DIR *d = opendir(path);
        struct dirent *e;
        TL_ASSERT(d != NULL, "opendir %s", path);
        while ((e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof(path), "%s/cold-%d/%s", data_dir, p, e->d_name);
            int fd = open(path, O_RDONLY | O_CLOEXEC);
            if (fd < 0)
                continue;
            fdatasync(fd);
            posix_fadvise(fd, 0, 0, POSIX_FADV_DONTNEED);
            close(fd);
            n++;
        }
        closedir(d);
        snprintf(path, sizeof(path), "%s/cold-%d", data_dir, p);
    }
    return n;
}

/* Metadata round trips on their own connection while the consumer reads. */
typedef struct meta_s {
    const char *bs;
    atomic_int stop;
    int answered;
} meta_t;

static void *meta_run(void *arg)
{
    meta_t *m = arg;
    int fd = tl_connect(m->bs, 10000);
    TL_ASSERT(fd >= 0, "connect");
    while (!atomic_load(&m->stop)) {
        tl_req r;
        uint8_t *resp = NULL;
        tl_req_header(&r, 3, 1, 77, "meta");
        tl_req_i32(&r, 0);
        tl_req_finish(&r);
        TL_ASSERT(tl_send_all(fd, r.data, r.len) == 0, "send");
        TL_ASSERT(tl_recv_frame(fd, &resp, 10000) > 0, "no Metadata answer in 10 s");
        TL_ASSERT_EQ(tl_get_i32(resp), 77);
        free(resp);
        m->answered++;
        usleep(2000);
    }
    close(fd);
    return NULL;
}

static void check_cold(const rd_kafka_message_t *msg, void *arg)
{
    char v[VLEN];
    (void)arg;
    gen_value(msg->partition, msg->offset, v);
    TL_ASSERT(msg->len == VLEN && memcmp(msg->payload, v, VLEN) == 0,
              "partition %d offset %" PRId64 ": value differs", msg->partition, msg->offset);
}

static void consume_all(const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "max.partition.fetch.bytes", "8388608");
    tl_conf_set(conf, "fetch.max.bytes", "26214400");
    rd_kafka_destroy(tl_consume_from_start(conf, "cold", NPART, (int64_t)NPART * PER_PART, 120,
                                           check_cold, NULL));
}

/* Fetch v4 of one partition from offset 0 with 16 MB allowed: walks the
 * batches of the answer and returns the next offset after the last one,
 * checking they follow each other. */
static int64_t raw_fetch(const char *bs, int part)
{
    tl_req r;
    uint8_t *resp = NULL;
    int fd = tl_connect(bs, 10000);
    tl_req_header(&r, 1, 4, 5, "raw");
    tl_req_i32(&r, -1);
    tl_req_i32(&r, 100);
    tl_req_i32(&r, 1);
    tl_req_i32(&r, 16 << 20);
    tl_req_i8(&r, 0);
    tl_req_i32(&r, 1);
    tl_req_i16(&r, 4);
    tl_req_bytes(&r, "cold", 4);
    tl_req_i32(&r, 1);
    tl_req_i32(&r, part);
    tl_req_i32(&r, 0);
    tl_req_i32(&r, 0); /* fetch offset 0 (int64) */
    tl_req_i32(&r, 16 << 20);
    tl_req_finish(&r);
    TL_ASSERT(fd >= 0 && tl_send_all(fd, r.data, r.len) == 0, "raw fetch send");
    int len = tl_recv_frame(fd, &resp, 30000);
    TL_ASSERT(len > 0, "raw fetch: no answer");
    /* corr, throttle, topics, name, partitions, partition, error, hwm, lso, aborted, records */
    const uint8_t *p = resp + 4 + 4 + 4 + 2 + 4 + 4 + 4;
    TL_ASSERT_EQ(tl_get_i16(p), 0);
    p += 2 + 8 + 8;
    p += 4;
    int32_t rlen = tl_get_i32(p);
    p += 4;
    TL_ASSERT(rlen > 0 && p + rlen <= resp + len, "records of %d bytes", rlen);
    int64_t next = 0;
    for (const uint8_t *b = p; b + 61 <= p + rlen;) {
        int64_t base = (int64_t)tl_get_i32(b) << 32 | (uint32_t)tl_get_i32(b + 4);
        int32_t blen = tl_get_i32(b + 8);
        if (b + 12 + blen > p + rlen)
            break; /* the last may be cut short */
        TL_ASSERT(base == next, "partition %d: batch at %" PRId64 ", expected %" PRId64, part,
                  base, next);
        next = base + tl_get_i32(b + 23) + 1;
        b += 12 + blen;
    }
    free(resp);
    close(fd);
    return next;
}

int main(void)
{
    tl_init("0011-cold-fetch");
    char *dir = tl_scratch_dir("0011");
    tl_broker b = {0};
    meta_t m = {0};
    pthread_t thr;

    tl_broker_start(&b, dir, NULL);
    snprintf(data_dir, sizeof(data_dir), "%s/data", b.dir);
    produce_all(b.bootstrap);
    TL_ASSERT(evict() >= NPART, "no segment files found");
    m.bs = b.bootstrap;
    pthread_create(&thr, NULL, meta_run, &m);
    double t0 = tl_now();
    consume_all(b.bootstrap);
    atomic_store(&m.stop, 1);
    pthread_join(thr, NULL);
    tl_log("read %d cold messages in %.2f s; %d Metadata answers meanwhile", NPART * PER_PART,
           tl_now() - t0, m.answered);
    TL_ASSERT(m.answered > 0, "no Metadata answer while the consumer read");

    evict();
    for (int p = 0; p < NPART; p++) {
        int64_t next = raw_fetch(b.bootstrap, p);
        TL_ASSERT(next > PER_PART / 2, "partition %d: only up to %" PRId64, p, next);
    }
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(dir);
    return tl_done();
}
