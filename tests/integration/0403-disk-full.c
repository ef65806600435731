/* 0403-disk-full: the broker's log dir on a real, small file system (a
 * 64 MB ext4 on a loop device, or a 64 MB tmpfs where there is no loop
 * device or mkfs.ext4), filled until the kernel says ENOSPC. No fault
 * injection: this is what a full disk does to the broker.
 *
 *   1. Topic T (3 partitions) and topic P (1 partition, an index entry
 *      for every batch). T-1 and T-2 get messages; P one message: its
 *      .log then has a page, its index files none.
 *   2. A librdkafka producer fills the disk through T-0 until the broker
 *      refuses (KAFKA_STORAGE_ERROR); a filler file of the test's then
 *      takes whatever is left.
 *   3. Single messages to P: the first ones still fit in the last page of
 *      P's .log, and their index entries have no disk page to go to (that
 *      store through the index map once killed the broker with SIGBUS);
 *      then P is refused too.
 *   4. The broker is alive and serves reads: every acknowledged message of
 *      T-0, T-1, T-2 and P reads back exact, at its offset, in order, and
 *      no refused message is there.
 *   5. The test deletes its filler files: T-0 and P take messages again,
 *      at the next offsets, without a restart.
 *   6. A clean stop (exit 0), a restart, and everything reads back again.
 *
 * The producer does not retry (retries=0), so each delivery report is the
 * broker's answer. Strand only: Apache Kafka halts the broker when a write
 * to its log dir fails (the log dir goes offline and, with no other log
 * dir, the broker shuts down); Strand refuses what it cannot write and
 * keeps serving everything else. Needs root (to mount); skipped
 * elsewhere. */
#include "testlib/testlib.h"

#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/wait.h>
#include <unistd.h>

#define FS_MB 64
#define MAX_MSGS 40000
#define VAL_T 1000 /* bytes of a T-0 value */

typedef struct msg_state {
    int done;
    rd_kafka_resp_err_t err;
    int64_t offset;
} msg_state;

/* One partition's messages "<tag>-<seq>" padded to vlen, and their
 * delivery reports. */
typedef struct part_run {
    const char *topic;
    int part;
    char tag[8];
    int vlen;
    int n;
    msg_state *m;
} part_run;

static char mnt[600];
static tl_broker *broker;

static void expect_alive(tl_broker *b)
{
    int status;
    TL_ASSERT(waitpid(b->pid, &status, WNOHANG) == 0,
              "the broker died on the full disk (status 0x%x: %s)", status,
              WIFSIGNALED(status) ? strsignal(WTERMSIG(status)) : "exit");
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    msg_state *st = msg->_private;
    (void)rk;
    (void)opaque;
    st->done = 1;
    st->err = msg->err;
    st->offset = msg->offset;
}

static int make_value(char *buf, const part_run *r, int seq)
{
    int n = snprintf(buf, (size_t)r->vlen + 1, "%s-%06d ", r->tag, seq);
    memset(buf + n, 'a' + seq % 26, (size_t)(r->vlen - n));
    return r->vlen;
}

static void run_init(part_run *r, const char *topic, int part, const char *tag, int vlen)
{
    r->topic = topic;
    r->part = part;
    snprintf(r->tag, sizeof(r->tag), "%s", tag);
    r->vlen = vlen;
    r->n = 0;
    r->m = calloc(MAX_MSGS, sizeof(*r->m));
}

/* Produces count messages to r and waits for their reports. Returns how
 * many were acknowledged; every other one must have been refused by the
 * broker with KAFKA_STORAGE_ERROR. */
static int produce(rd_kafka_t *rk, part_run *r, int count)
{
    char val[VAL_T + 1];
    int first = r->n, acked = 0;

    TL_ASSERT(r->n + count <= MAX_MSGS, "too many messages");
    for (int i = 0; i < count; i++) {
        int seq = r->n++, len = make_value(val, r, seq);
        rd_kafka_resp_err_t err;
        while ((err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(r->topic),
                                        RD_KAFKA_V_PARTITION(r->part),
                                        RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                        RD_KAFKA_V_VALUE(val, (size_t)len),
                                        RD_KAFKA_V_OPAQUE(&r->m[seq]), RD_KAFKA_V_END)) ==
               RD_KAFKA_RESP_ERR__QUEUE_FULL)
            rd_kafka_poll(rk, 10);
        TL_ASSERT(!err, "produce: %s", rd_kafka_err2name(err));
    }
    for (double end = tl_now() + 60; rd_kafka_outq_len(rk) > 0; rd_kafka_flush(rk, 200)) {
        expect_alive(broker);
        TL_ASSERT(tl_now() < end, "%d messages without a report after 60 s",
                  rd_kafka_outq_len(rk));
    }
    expect_alive(broker);
    for (int i = first; i < r->n; i++) {
        TL_ASSERT(r->m[i].done, "%s message %d has no report", r->tag, i);
        TL_ASSERT(!r->m[i].err || r->m[i].err == RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR,
                  "%s message %d: %s, expected success or KAFKA_STORAGE_ERROR", r->tag, i,
                  rd_kafka_err2name(r->m[i].err));
        acked += !r->m[i].err;
    }
    return acked;
}

static rd_kafka_t *new_producer(const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "acks", "1");
    tl_conf_set(conf, "retries", "0");
    tl_conf_set(conf, "enable.idempotence", "false");
    tl_conf_set(conf, "linger.ms", "5");
    tl_conf_set(conf, "message.timeout.ms", "60000");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

/* Creates a topic with one topic config (key may be NULL). */
static void create_topic(rd_kafka_t *rk, const char *name, int parts, const char *key,
                         const char *val)
{
    TL_ASSERT_EQ(tl_create_topic_cfg(rk, name, parts, key, val), parts);
}

/* Reads r's partition from offset 0 to its end: it must hold exactly the
 * acknowledged messages, each at its reported offset, byte for byte. */
static void check_part(const char *bs, const part_run *r)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    rd_kafka_topic_partition_list_t *parts = rd_kafka_topic_partition_list_new(1);
    int64_t lo, hi, next = 0;
    double deadline = tl_now() + 60;
    int acked = 0, k = 0;
    rd_kafka_t *rk;

    for (int i = 0; i < r->n; i++)
        acked += !r->m[i].err;
    tl_conf_set(conf, "group.id", "t0403");
    tl_conf_set(conf, "enable.auto.commit", "false");
    tl_conf_set(conf, "check.crcs", "true");
    tl_conf_set(conf, "fetch.wait.max.ms", "100");
    rk = tl_new(RD_KAFKA_CONSUMER, conf);
    TL_ASSERT_EQ(rd_kafka_query_watermark_offsets(rk, r->topic, r->part, &lo, &hi, 10000), 0);
    TL_ASSERT_EQ(lo, 0);
    TL_ASSERT(hi == acked, "%s: log end %" PRId64 ", %d messages acknowledged", r->tag, hi, acked);
    rd_kafka_topic_partition_list_add(parts, r->topic, r->part)->offset = RD_KAFKA_OFFSET_BEGINNING;
    TL_ASSERT_EQ(rd_kafka_assign(rk, parts), 0);
    rd_kafka_topic_partition_list_destroy(parts);
    while (next < hi) {
        rd_kafka_message_t *msg = rd_kafka_consumer_poll(rk, 500);
        char want[VAL_T + 1];
        TL_ASSERT(tl_now() < deadline, "%s: read %" PRId64 " of %" PRId64 " in 60 s", r->tag, next,
                  hi);
        if (!msg)
            continue;
        TL_ASSERT(!msg->err, "consume %s: %s", r->tag, rd_kafka_message_errstr(msg));
        while (k < r->n && r->m[k].err)
            k++; /* refused: must not be in the log */
        TL_ASSERT(k < r->n, "%s offset %" PRId64 ": more messages than acknowledged", r->tag,
                  msg->offset);
        TL_ASSERT_EQ(msg->offset, next);
        TL_ASSERT_EQ(r->m[k].offset, next);
        make_value(want, r, k);
        TL_ASSERT(msg->len == (size_t)r->vlen && !memcmp(msg->payload, want, msg->len),
                  "%s offset %" PRId64 ": not message %d", r->tag, msg->offset, k);
        next++;
        k++;
        rd_kafka_message_destroy(msg);
    }
    rd_kafka_destroy(rk);
    tl_log("%s: %d produced, %d acknowledged, all read back", r->tag, r->n, acked);
}

/* Writes path until the file system is full (or max bytes); returns the
 * bytes written. */
static int64_t write_filler(const char *path, int64_t max)
{
    static char chunk[65536];
    int fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    int64_t done = 0;
    size_t sz = sizeof(chunk);

    TL_ASSERT(fd >= 0, "%s: %s", path, strerror(errno));
    while (done < max && sz > 0) {
        ssize_t w = write(fd, chunk, (size_t)(max - done) < sz ? (size_t)(max - done) : sz);
        if (w > 0) {
            done += w;
            continue;
        }
        TL_ASSERT(w < 0 && errno == ENOSPC, "%s: %s", path, strerror(errno));
        sz /= 2; /* the last blocks, down to one byte */
    }
    close(fd);
    return done;
}

static int64_t free_bytes(void)
{
    struct statvfs sv;
    TL_ASSERT(statvfs(mnt, &sv) == 0, "statvfs %s: %s", mnt, strerror(errno));
    return (int64_t)sv.f_bavail * (int64_t)sv.f_frsize;
}

/* A child of its own session that unmounts once the test has gone,
 * however it ends (tl_fail exits at once, a time-out kills the group). */
static void unmount_when_gone(const char *img)
{
    int p[2];
    pid_t pid;

    TL_ASSERT(pipe2(p, O_CLOEXEC) == 0, "pipe: %s", strerror(errno));
    pid = fork();
    TL_ASSERT(pid >= 0, "fork: %s", strerror(errno));
    if (pid == 0) {
        char c;
        setsid();
        close(p[1]);
        for (;;) {
            ssize_t r = read(p[0], &c, 1);
            if (r == 0 || (r < 0 && errno != EINTR))
                break;
        }
        sleep(1); /* the brokers it killed let go of their files */
        umount2(mnt, MNT_DETACH);
        unlink(img);
        _exit(0);
    }
    close(p[0]); /* p[1] stays open in this process only (close-on-exec) */
}

/* A 64 MB ext4 on a loop device, or a tmpfs of that size. */
static const char *mount_small_fs(const char *dir)
{
    char img[600], cmd[2000];
    int fd;

    snprintf(mnt, sizeof(mnt), "%s/mnt", dir);
    snprintf(img, sizeof(img), "%s/disk.img", dir);
    TL_ASSERT(mkdir(mnt, 0755) == 0, "mkdir %s: %s", mnt, strerror(errno));
    fd = open(img, O_WRONLY | O_CREAT, 0644);
    TL_ASSERT(fd >= 0 && ftruncate(fd, (off_t)FS_MB << 20) == 0, "%s: %s", img, strerror(errno));
    close(fd);
    unmount_when_gone(img);
    snprintf(cmd, sizeof(cmd),
             "mkfs.ext4 -q -F -m 0 '%s' >/dev/null 2>&1 && mount -o loop '%s' '%s' 2>/dev/null",
             img, img, mnt);
    if (system(cmd) == 0)
        return "ext4 on a loop device";
    unlink(img);
    if (mount("tmpfs", mnt, "tmpfs", 0, "size=64m") == 0)
        return "tmpfs";
    tl_skip("cannot mount a small file system (%s)", strerror(errno));
}

int main(void)
{
    tl_broker b = {0};
    part_run t0, t1, t2, p;
    char *dir, logdirs[700], f1[700], f2[700];
    const char *extra[] = {logdirs, NULL};
    char *tname, *pname;
    const char *fs;
    rd_kafka_t *rk;
    int acked, probe_acked = 0;

    tl_init("0403-disk-full");
    if (tl_is_kafka())
        tl_skip("Kafka halts the broker on a failed log dir write; surviving it is Strand's");
    if (geteuid() != 0)
        tl_skip("needs root to mount a small file system");
    dir = tl_scratch_dir("0403");
    fs = mount_small_fs(dir);
    tl_log("log dir on a %d MB %s, %" PRId64 " bytes free", FS_MB, fs, free_bytes());
    snprintf(logdirs, sizeof(logdirs), "log.dirs=%s/data", mnt);
    snprintf(f1, sizeof(f1), "%s/filler-1", mnt);
    snprintf(f2, sizeof(f2), "%s/filler-2", mnt);
    broker = &b;
    tl_broker_start(&b, dir, extra);
    tname = tl_topic_name("t0403");
    pname = tl_topic_name("p0403");
    rk = new_producer(b.bootstrap);
    create_topic(rk, tname, 3, NULL, NULL);
    create_topic(rk, pname, 1, "index.interval.bytes", "0");
    run_init(&t0, tname, 0, "T0", VAL_T);
    run_init(&t1, tname, 1, "T1", 200);
    run_init(&t2, tname, 2, "T2", 200);
    run_init(&p, pname, 0, "P", 60);

    /* 1. data to read later; P's .log gets a page, its indexes none */
    TL_ASSERT_EQ(produce(rk, &t1, 300), 300);
    TL_ASSERT_EQ(produce(rk, &t2, 300), 300);
    TL_ASSERT_EQ(produce(rk, &p, 1), 1);

    /* 2. fill: all but 8 MB by the filler, the rest by produce */
    write_filler(f1, free_bytes() - (8 << 20));
    for (acked = 1; acked > 0 && t0.n + 500 <= MAX_MSGS;)
        acked = produce(rk, &t0, 500) == 500;
    TL_ASSERT(t0.n < MAX_MSGS, "the disk did not fill");
    tl_log("T0 refused after %d messages with %" PRId64 " bytes free", t0.n, free_bytes());
    tl_log("the filler took %" PRId64 " bytes more", write_filler(f2, INT64_MAX));
    expect_alive(&b);

    /* 3. P: single messages until refused */
    for (int i = 0; i < 50; i++) {
        int ok = produce(rk, &p, 1);
        expect_alive(&b);
        if (!ok)
            break;
        probe_acked++;
    }
    tl_log("P took %d messages on the full disk", probe_acked);
    TL_ASSERT(probe_acked >= 1, "no message fitted in P's last page: the case is not tested");
    TL_ASSERT(p.m[p.n - 1].err == RD_KAFKA_RESP_ERR_KAFKA_STORAGE_ERROR, "P never refused");

    /* 4. reads on the full disk */
    check_part(b.bootstrap, &t0);
    check_part(b.bootstrap, &t1);
    check_part(b.bootstrap, &t2);
    check_part(b.bootstrap, &p);
    expect_alive(&b);

    /* 5. space again: the same partitions take writes, no restart */
    TL_ASSERT(unlink(f1) == 0 && unlink(f2) == 0, "unlink: %s", strerror(errno));
    TL_ASSERT_EQ(produce(rk, &t0, 200), 200);
    TL_ASSERT_EQ(produce(rk, &p, 5), 5);
    check_part(b.bootstrap, &t0);
    check_part(b.bootstrap, &p);
    rd_kafka_destroy(rk);

    /* 6. a clean stop, a restart */
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    tl_broker_start(&b, dir, extra);
    check_part(b.bootstrap, &t0);
    check_part(b.bootstrap, &t1);
    check_part(b.bootstrap, &t2);
    check_part(b.bootstrap, &p);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    umount2(mnt, MNT_DETACH);
    free(t0.m);
    free(t1.m);
    free(t2.m);
    free(p.m);
    free(tname);
    free(pname);
    free(dir);
    return tl_done();
}
