/* 0500-fuzz-requests: the socket fuzzer (tests/fuzz/) against an own
 * broker, which must survive it without losing or corrupting data:
 *
 *   1. a protected topic (2 partitions, retention off) gets 300 known
 *      messages (keys, values, headers; the second half gzip'd)
 *   2. the fuzzer runs for FUZZ_SECONDS (default 20) with seed FUZZ_SEED
 *      (default 500): valid and mutated requests of every advertised
 *      API but those in FUZZ_SKIP (default 64, UnregisterBroker); it never
 *      names the protected topic. It fails on an answer
 *      that does not decode or answers another request, and on a broker
 *      that stops answering (the crash file then holds the last requests)
 *   3. the protected topic reads back byte for byte (offsets, keys,
 *      values, headers, timestamps) and its .log files are unchanged
 *   4. every topic on disk is one the broker announced to the fuzzer in
 *      a CreateTopics or Metadata answer (or an internal one), with a
 *      legal name: bad input created nothing behind the clients' backs
 *   5. SIGTERM: exit status 0; a restart on the fuzzed data dir works and
 *      the protected topic still reads back the same; SIGTERM again.
 *
 * Strand only: the fuzzer's predictions are Kafka's rules, but checking
 * Apache Kafka with it is not this test's job (skipped with KAFKA_REF). */
#include "testlib/testlib.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "fuzz/fuzz_run.h"

#define NMSG 300
#define NPART 2

typedef struct {
    int32_t partition;
    int64_t offset, timestamp;
} sent_t;

static sent_t sent[NMSG];
static int ndelivered;
static const char *topic;

static void gen_msg(int i, char *key, int *klen, char *val, int *vlen)
{
    *klen = i % 17 == 0 ? -1 : sprintf(key, "key-%d", i);
    *vlen = i % 29 == 0 ? -1 : sprintf(val, "value %d of 0500 %0*d", i, i % 50, 0);
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *m, void *opaque)
{
    int i = (int)(intptr_t)m->_private;
    (void)rk;
    (void)opaque;
    TL_ASSERT(!m->err, "delivery of message %d: %s", i, rd_kafka_err2name(m->err));
    sent[i].partition = m->partition;
    sent[i].offset = m->offset;
    sent[i].timestamp = rd_kafka_message_timestamp(m, NULL);
    ndelivered++;
}

static void create_protected(const char *bs)
{
    const char *cfg[][2] = { { "retention.ms", "-1" }, { "retention.bytes", "-1" },
                             { "cleanup.policy", "delete" } };
    char err[256];
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, NPART, 1, err, sizeof(err));
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    TL_ASSERT(nt, "NewTopic: %s", err);
    for (size_t i = 0; i < sizeof(cfg) / sizeof(cfg[0]); i++)
        rd_kafka_NewTopic_set_config(nt, cfg[i][0], cfg[i][1]);
    rd_kafka_CreateTopics(rk, &nt, 1, NULL, q);
    rd_kafka_event_t *ev = rd_kafka_queue_poll(q, 30000);
    TL_ASSERT(ev && !rd_kafka_event_error(ev), "CreateTopics %s failed", topic);
    size_t cnt;
    const rd_kafka_topic_result_t **res =
        rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
    TL_ASSERT(cnt == 1 && !rd_kafka_topic_result_error(res[0]), "CreateTopics %s: %s", topic,
              cnt ? rd_kafka_err2name(rd_kafka_topic_result_error(res[0])) : "no result");
    rd_kafka_event_destroy(ev);
    rd_kafka_queue_destroy(q);
    rd_kafka_NewTopic_destroy(nt);
    TL_ASSERT_EQ(tl_wait_topic(rk, topic, 30000), NPART);
    rd_kafka_destroy(rk);
}

/* Two producers, the second with gzip, so both kinds of batch are kept. */
static void produce_known(const char *bs)
{
    for (int half = 0; half < 2; half++) {
        rd_kafka_conf_t *conf = tl_conf(bs);
        tl_conf_set(conf, "compression.codec", half ? "gzip" : "none");
        tl_conf_set(conf, "linger.ms", "5");
        rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
        rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
        for (int i = half * NMSG / 2; i < (half + 1) * NMSG / 2; i++) {
            char key[32], val[128];
            int klen, vlen;
            gen_msg(i, key, &klen, val, &vlen);
            void *kp = klen < 0 ? NULL : key, *vp = vlen < 0 ? NULL : val;
            size_t kl = klen < 0 ? 0 : (size_t)klen, vl = vlen < 0 ? 0 : (size_t)vlen;
            rd_kafka_headers_t *h = rd_kafka_headers_new(1);
            rd_kafka_header_add(h, "i", 1, &i, sizeof(i));
            rd_kafka_resp_err_t err = rd_kafka_producev(
                rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(i % NPART), RD_KAFKA_V_KEY(kp, kl),
                RD_KAFKA_V_VALUE(vp, vl), RD_KAFKA_V_HEADERS(h), RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                RD_KAFKA_V_OPAQUE((void *)(intptr_t)i), RD_KAFKA_V_END);
            TL_ASSERT_EQ(err, 0);
        }
        TL_ASSERT_EQ(rd_kafka_flush(rk, 30000), 0);
        rd_kafka_destroy(rk);
    }
    TL_ASSERT_EQ(ndelivered, NMSG);
}

/* Message i must be what was sent, where it was sent. */
static void check_msg(const rd_kafka_message_t *m, int *seen)
{
    const void *hv;
    size_t hl;
    rd_kafka_headers_t *h = NULL;
    TL_ASSERT(rd_kafka_message_headers(m, &h) == 0 && h, "message at %d/%" PRId64 " has no headers",
              m->partition, m->offset);
    TL_ASSERT(rd_kafka_header_get_last(h, "i", &hv, &hl) == 0 && hl == sizeof(int),
              "no header i at %d/%" PRId64, m->partition, m->offset);
    int i;
    memcpy(&i, hv, sizeof(i));
    TL_ASSERT(i >= 0 && i < NMSG && !seen[i], "header i=%d at %d/%" PRId64, i, m->partition, m->offset);
    seen[i] = 1;
    char key[32], val[128];
    int klen, vlen;
    gen_msg(i, key, &klen, val, &vlen);
    TL_ASSERT(m->partition == sent[i].partition && m->offset == sent[i].offset,
              "message %d at %d/%" PRId64 ", was written at %d/%" PRId64, i, m->partition, m->offset,
              sent[i].partition, sent[i].offset);
    TL_ASSERT(klen < 0 ? m->key == NULL : (m->key_len == (size_t)klen && !memcmp(m->key, key, (size_t)klen)),
              "message %d: key differs", i);
    TL_ASSERT(vlen < 0 ? m->payload == NULL
                       : (m->len == (size_t)vlen && !memcmp(m->payload, val, (size_t)vlen)),
              "message %d: value differs", i);
    TL_ASSERT_EQ(rd_kafka_message_timestamp(m, NULL), sent[i].timestamp);
}

/* Reads both partitions from the start to their end. */
static void read_back(const char *bs, const char *when)
{
    static int seen[NMSG];
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "group.id", "0500-reader");
    tl_conf_set(conf, "enable.partition.eof", "true");
    tl_conf_set(conf, "enable.auto.commit", "false");
    rd_kafka_t *rk = tl_new(RD_KAFKA_CONSUMER, conf);
    rd_kafka_topic_partition_list_t *tp = rd_kafka_topic_partition_list_new(NPART);
    for (int p = 0; p < NPART; p++)
        rd_kafka_topic_partition_list_add(tp, topic, p)->offset = RD_KAFKA_OFFSET_BEGINNING;
    TL_ASSERT_EQ(rd_kafka_assign(rk, tp), 0);
    memset(seen, 0, sizeof(seen));
    int eofs = 0, n = 0;
    double deadline = tl_now() + 60;
    while (eofs < NPART && tl_now() < deadline) {
        rd_kafka_message_t *m = rd_kafka_consumer_poll(rk, 500);
        if (!m)
            continue;
        if (m->err == RD_KAFKA_RESP_ERR__PARTITION_EOF)
            eofs++;
        else if (m->err)
            tl_fail("%s: consume: %s", when, rd_kafka_message_errstr(m));
        else {
            check_msg(m, seen);
            n++;
        }
        rd_kafka_message_destroy(m);
    }
    TL_ASSERT(eofs == NPART && n == NMSG, "%s: read %d of %d messages", when, n, NMSG);
    rd_kafka_topic_partition_list_destroy(tp);
    rd_kafka_consumer_close(rk);
    rd_kafka_destroy(rk);
    tl_log("%s: %d messages read back unchanged", when, n);
}

/* A digest of the protected topic's .log files. */
static uint64_t segments_digest(const char *data)
{
    uint64_t h = 0;
    for (int p = 0; p < NPART; p++) {
        char dir[1024];
        snprintf(dir, sizeof(dir), "%s/%s-%d", data, topic, p);
        DIR *d = opendir(dir);
        struct dirent *e;
        TL_ASSERT(d, "no directory %s", dir);
        while ((e = readdir(d))) {
            size_t l = strlen(e->d_name);
            if (l > 4 && !strcmp(e->d_name + l - 4, ".log")) {
                char path[2048];
                snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
                h += tl_dir_digest(path); /* a file digests as itself; order-free sum */
            }
        }
        closedir(d);
    }
    return h;
}

/* ---- topics on disk ---- */

static char **announced;
static int nannounced;

/* The fuzzer's topics file: one name a line, \xHH for odd bytes. */
static void load_announced(const char *path)
{
    FILE *f = fopen(path, "r");
    char line[4096];
    TL_ASSERT(f, "no topics file %s", path);
    while (fgets(line, sizeof(line), f)) {
        char *w = line;
        for (const char *r = line; *r && *r != '\n'; r++) {
            unsigned v;
            if (r[0] == '\\' && r[1] == 'x' && sscanf(r + 2, "%2x", &v) == 1) {
                *w++ = (char)v;
                r += 3;
            } else {
                *w++ = *r;
            }
        }
        *w = 0;
        announced = realloc(announced, (size_t)(nannounced + 1) * sizeof(*announced));
        announced[nannounced++] = strdup(line);
    }
    fclose(f);
}

static int legal_topic(const char *t, size_t len)
{
    if (len == 0 || len > 249 || (len == 1 && t[0] == '.') || (len == 2 && !strncmp(t, "..", 2)))
        return 0;
    for (size_t i = 0; i < len; i++)
        if (!strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789._-", t[i]))
            return 0;
    return 1;
}

/* prefix: t may be cut short (deleted partitions' directory names are
 * cut to 255 bytes, as Kafka's). */
static int known_topic(const char *t, size_t len, int prefix)
{
    static const char *const internal[] = { "__consumer_offsets", "__transaction_state",
                                            "__cluster_metadata" };
    if (strlen(topic) == len && !strncmp(topic, t, len))
        return 1;
    for (size_t i = 0; i < sizeof(internal) / sizeof(internal[0]); i++)
        if (strlen(internal[i]) == len && !strncmp(internal[i], t, len))
            return 1;
    for (int i = 0; i < nannounced; i++)
        if ((strlen(announced[i]) == len || (prefix && strlen(announced[i]) > len)) &&
            !strncmp(announced[i], t, len))
            return 1;
    return 0;
}

/* Partition directories are TOPIC-N, or TOPIC-N.<32 hex>-delete once
 * deleted (Kafka's names); the files beside them are the log manager's. */
static void check_data_dir(const char *data)
{
    DIR *d = opendir(data);
    struct dirent *e;
    int ndirs = 0;
    TL_ASSERT(d, "no data directory %s", data);
    while ((e = readdir(d))) {
        char path[2048];
        struct stat st;
        snprintf(path, sizeof(path), "%s/%s", data, e->d_name);
        if (e->d_name[0] == '.' || stat(path, &st) < 0 || !S_ISDIR(st.st_mode))
            continue;
        const char *name = e->d_name, *end = name + strlen(name);
        const char *del = strstr(name, "-delete");
        int deleted = del && del + 7 == end && del - name > 33 && del[-33] == '.';
        if (deleted)
            end = del - 33;
        const char *dash = end;
        while (dash > name && dash[-1] >= '0' && dash[-1] <= '9')
            dash--;
        TL_ASSERT(dash < end && dash > name + 1 && dash[-1] == '-', "odd directory %s", path);
        size_t tlen = (size_t)(dash - 1 - name);
        TL_ASSERT(legal_topic(name, tlen), "directory %s is not a legal topic's", path);
        TL_ASSERT(known_topic(name, tlen, deleted && strlen(name) == 255), "topic %.*s on disk was never announced to a client",
                  (int)tlen, name);
        ndirs++;
    }
    closedir(d);
    tl_log("%d partition directories, all of announced topics", ndirs);
}

/* ---- the run ---- */

static void run_fuzzer(const char *bs, const char *dir)
{
    const char *secs = getenv("FUZZ_SECONDS"), *seed = getenv("FUZZ_SEED");
    const char *skip = getenv("FUZZ_SKIP");
    char topics_out[1024], crash_out[1024];
    fuzz_opts_t o = { 0 };
    fuzz_stats_t st;
    snprintf(topics_out, sizeof(topics_out), "%s/fuzz-topics.txt", dir);
    snprintf(crash_out, sizeof(crash_out), "%s/fuzz-crash.txt", dir);
    o.bootstrap = bs;
    o.seed = seed ? strtoull(seed, NULL, 0) : 500;
    o.seconds = secs ? atof(secs) : 20;
    o.batch = 100;
    o.valid_pct = 20;
    o.protect = topic;
    /* FUZZ_SKIP="8,9" leaves APIs out. By default every one is fuzzed
     * but UnregisterBroker (64): of this node's own id it does what
     * Kafka's does, the broker leaves every leadership until it restarts
     * (an admin's act on a live broker, not bad input), and the
     * protected topic could no longer be read back. */
    o.skip = skip ? skip : "64";
    o.topics_out = topics_out;
    o.crash_out = crash_out;
    tl_log("fuzzing %s for %.0f s with seed %" PRIu64, bs, o.seconds, o.seed);
    int rc = fuzz_run(&o, &st);
    TL_ASSERT(rc != 2, "the broker died or hung: the last requests are in %s, its log in %s/strand.log",
              crash_out, dir);
    TL_ASSERT(rc == 0, "fuzzer findings (exit %d): bad answers %ld, wrong correlation ids %ld", rc,
              st.findings[FUZZ_F_BAD_ANSWER], st.findings[FUZZ_F_WRONG_CORR]);
    TL_ASSERT(st.sent > 100 && st.probes > 1, "only %ld requests sent", st.sent);
    load_announced(topics_out);
}

int main(void)
{
    static const char *const extra[] = {
        "log.retention.check.interval.ms=200", /* retention runs on fuzzed configs */
        "group.initial.rebalance.delay.ms=0", "offsets.topic.num.partitions=3", NULL,
    };
    tl_broker b = { 0 };
    char data[1024];
    tl_init("0500-fuzz-requests");
    if (tl_is_kafka())
        tl_skip("the fuzzer's run is a check of strand");
    if (!getenv("STRAND_BIN") || !*getenv("STRAND_BIN"))
        tl_skip("STRAND_BIN is not set (the test needs its own broker)");
    char *dir = tl_scratch_dir("0500-broker");
    tl_broker_start(&b, dir, extra);
    snprintf(data, sizeof(data), "%s/data", dir);
    topic = tl_topic_name("keep0500");

    create_protected(b.bootstrap);
    produce_known(b.bootstrap);
    read_back(b.bootstrap, "before fuzzing");
    uint64_t segs = segments_digest(data);

    run_fuzzer(b.bootstrap, dir);
    read_back(b.bootstrap, "after fuzzing");
    TL_ASSERT(segments_digest(data) == segs, "the protected topic's segment files changed");
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    check_data_dir(data);

    tl_broker_start(&b, dir, extra);
    read_back(b.bootstrap, "after a restart");
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    for (int i = 0; i < nannounced; i++)
        free(announced[i]);
    free(announced);
    free((char *)topic);
    free(dir);
    return tl_done();
}
