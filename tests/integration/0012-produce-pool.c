/* 0012-produce-pool: Produce requests whose record bytes reach 32 KB have
 * their batches validated on the broker's worker threads (net_pool, see
 * src/api/api_produce.c), smaller ones on the event loop; both must leave
 * the log a client expects. Four scenarios on a broker of the test's own
 * (num.io.threads=2: two workers wherever there are two CPUs or more):
 *
 *   A. librdkafka, once with lz4 and once uncompressed: an idempotent
 *      producer (linger.ms=50) writes 20,000 1 KB messages, in large
 *      pooled requests, while a linger.ms=0 producer writes 2,000 small
 *      ones, in inline requests, to the same 4 partitions from another
 *      thread. Every delivery report is clean, offsets increase per
 *      producer and partition; a consumer then reads offsets 0..n-1 of
 *      every partition, each message as sent and at the offset its report
 *      gave, each producer's messages in the order sent, and small ones
 *      among the large ones. Raw fetches show stored batches of 32 KB and
 *      more in the codec asked for, so their requests went to a worker.
 *   B. one raw Produce v9 with a ~40 KB batch for each of two partitions,
 *      the second with a damaged byte (its CRC no longer matches): error 0
 *      at base offset 0, and CORRUPT_MESSAGE at -1. The first batch was
 *      sent with a stale maxTimestamp: it is stored with its largest
 *      record timestamp and a recomputed CRC (Kafka's fix-up), every other
 *      byte as sent but the leader epoch; the second partition stays empty.
 *   C. 20 Produce requests sent back to back on one connection before any
 *      answer is read: large ones (250 KB and 70 KB alternately: were the
 *      connection read while a job is out, a later one could be done
 *      first), each followed by a one-record inline one (which would then
 *      be appended at once). The answers come in request order with
 *      contiguous base offsets, and the log holds the records in order.
 *   D. 50 connections each send a 100 KB Produce and close at once (every
 *      other one with a reset). A request may be stored or not (a reset
 *      can drop it unread; a connection waiting for its job is off epoll,
 *      so the broker learns of the close only when it answers), but the
 *      broker still answers Metadata, the partition holds whole requests
 *      only, each at most once, with valid CRCs and offsets contiguous
 *      from 0, and one more produce lands right after them. The broker's
 *      clean exit at the end (ASan's leak check included) shows those
 *      connections were released. */
#include "testlib/testlib.h"
#include "testlib/wire.h"

#include <inttypes.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "log/log_batch.h"
#include "util/mem.h"

#define NPART 4
#define N_BIG 20000
#define N_SMALL 2000
#define BIG_LEN 1024
#define POOL_BYTES (32 * 1024) /* api_produce.c's API_PRODUCE_POOL_BYTES */
#define E_CORRUPT_MESSAGE 2

static arena_t arena;
static const char *bs;


static int64_t wall_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

#define S tl_wire_str

static int wire_connect(void)
{
    int fd = tl_connect(bs, 20000);
    TL_ASSERT(fd >= 0, "connect %s", bs);
    return fd;
}

/* ---- A. librdkafka ---- */

static const char *const words[32] = {
    "alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel",
    "india", "juliet", "kilo", "lima", "mike", "november", "oscar", "papa",
    "quebec", "romeo", "sierra", "tango", "uniform", "victor", "whiskey", "xray",
    "yankee", "zulu", "strand", "kafka", "batch", "worker", "record", "offset"};

/* Value of large message i: its name, then words drawn from seed i (so lz4
 * finds matches, and every value differs). */
static void big_value(int round, int i, char *v)
{
    uint32_t h = tl_mix32((uint32_t)i * 2654435761u + (uint32_t)round);
    int len = snprintf(v, BIG_LEN, "k%d of round %d:", i, round);
    while (len < BIG_LEN) {
        h = tl_mix32(h + 1);
        const char *w = words[h % 32];
        v[len++] = ' ';
        for (; *w && len < BIG_LEN; w++)
            v[len++] = *w;
    }
}

static int small_value(int round, int j, char *v)
{
    return sprintf(v, "small %d of round %d for partition %d (linger.ms=0 producer)", j, round,
                   j % NPART);
}

typedef struct sent_s {
    int64_t *off; /* per message: the offset of its report, -1 before */
    int n, errors;
    atomic_int reported; /* for the other producer's thread */
    char first_error[256];
} sent_t;

static sent_t big, small;

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    sent_t *s = opaque;
    int i = (int)(intptr_t)msg->_private;
    (void)rk;
    TL_ASSERT(i >= 0 && i < s->n, "report for message %d", i);
    if (msg->err) {
        if (!s->errors++)
            snprintf(s->first_error, sizeof(s->first_error), "message %d: %s", i,
                     rd_kafka_err2str(msg->err));
        return;
    }
    TL_ASSERT(s->off[i] == -1, "two reports for message %d", i);
    s->off[i] = msg->offset;
    atomic_fetch_add(&s->reported, 1);
}

/* A producer that knows topic's partitions already: librdkafka would
 * otherwise hold the first messages until its next metadata refresh (up
 * to a second), which could let one producer finish before the other
 * starts. */
static rd_kafka_t *producer(sent_t *s, const char *topic, const char *const *kv)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    for (; *kv; kv += 2)
        tl_conf_set(conf, kv[0], kv[1]);
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_conf_set_opaque(conf, s);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    TL_ASSERT_EQ(tl_wait_topic(rk, topic, 20000), NPART);
    return rk;
}

static void produce_one(rd_kafka_t *rk, const char *topic, int p, const char *key, void *v,
                        size_t vlen, int i)
{
    rd_kafka_resp_err_t err;
    while ((err = rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(p),
                                    RD_KAFKA_V_KEY(key, strlen(key)), RD_KAFKA_V_VALUE(v, vlen),
                                    RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY),
                                    RD_KAFKA_V_OPAQUE((void *)(intptr_t)i), RD_KAFKA_V_END)) ==
           RD_KAFKA_RESP_ERR__QUEUE_FULL)
        rd_kafka_poll(rk, 10);
    TL_ASSERT(!err, "produce %s: %s", key, rd_kafka_err2name(err));
}

typedef struct small_arg_s {
    const char *topic;
    int round;
} small_arg_t;

/* The small producer: 4 messages (one per partition) about every ms, so
 * that its requests stay small. It starts once the first large messages
 * are in the log (the idempotent producer may take a while to get its
 * producer id), so that its requests go on while the large ones are sent. */
static void *small_run(void *arg)
{
    const small_arg_t *a = arg;
    static const char *const kv[] = {"linger.ms", "0", NULL};
    rd_kafka_t *rk = producer(&small, a->topic, kv);
    char key[32], v[128];
    double deadline = tl_now() + 30;
    while (!atomic_load(&big.reported)) {
        TL_ASSERT(tl_now() < deadline, "no large message reported in 30 s");
        usleep(1000);
    }
    tl_log("small producer starts, %d large messages reported", atomic_load(&big.reported));
    for (int j = 0; j < N_SMALL; j++) {
        snprintf(key, sizeof(key), "s%d", j);
        produce_one(rk, a->topic, j % NPART, key, v, (size_t)small_value(a->round, j, v), j);
        if (j % NPART == NPART - 1) {
            rd_kafka_poll(rk, 0);
            usleep(1000);
        }
    }
    TL_ASSERT(rd_kafka_flush(rk, 60000) == 0, "small producer: flush");
    rd_kafka_destroy(rk);
    return NULL;
}

/* The large producer in 10 chunks, each produced once the previous one
 * is reported: every chunk waits out linger.ms, so the large requests
 * span half a second or more, during which the small producer goes on. */
static void produce_big(const char *topic, int round, const char *codec)
{
    const char *const kv[] = {"enable.idempotence", "true", "linger.ms", "50",
                              "batch.size", "1000000", "compression.codec", codec, NULL};
    rd_kafka_t *rk = producer(&big, topic, kv);
    char key[32], v[BIG_LEN];
    for (int i = 0; i < N_BIG; i++) {
        snprintf(key, sizeof(key), "k%d", i);
        big_value(round, i, v);
        produce_one(rk, topic, i % NPART, key, v, BIG_LEN, i);
        double deadline = tl_now() + 30;
        while (i % 2000 == 1999 && atomic_load(&big.reported) + big.errors <= i) {
            TL_ASSERT(tl_now() < deadline, "large producer: %d reports in 30 s",
                      atomic_load(&big.reported));
            rd_kafka_poll(rk, 5);
        }
    }
    TL_ASSERT(rd_kafka_flush(rk, 60000) == 0, "large producer: flush");
    rd_kafka_destroy(rk);
}

/* Every message reported without error; each producer's offsets increase
 * within a partition in the order of sending. */
static void check_reports(const sent_t *s, const char *who)
{
    int64_t last[NPART] = {-1, -1, -1, -1};
    TL_ASSERT(s->errors == 0, "%s: %d failed reports, first %s", who, s->errors, s->first_error);
    for (int i = 0; i < s->n; i++) {
        TL_ASSERT(s->off[i] >= 0, "%s: no report for message %d", who, i);
        TL_ASSERT(s->off[i] > last[i % NPART],
                  "%s: message %d at offset %" PRId64 " after %" PRId64, who, i, s->off[i],
                  last[i % NPART]);
        last[i % NPART] = s->off[i];
    }
}

/* One consumed message: which one it is by its key, then its value, its
 * offset against its report, and its place in its producer's order. */
static void check_message(const rd_kafka_message_t *msg, int round, int *next_big,
                          int *next_small)
{
    int p = msg->partition, i, len;
    char key[32], v[BIG_LEN];
    const char *k = msg->key;
    TL_ASSERT(msg->key_len > 1 && msg->key_len < sizeof(key),
              "offset %" PRId64 ": key of %zu bytes", msg->offset, msg->key_len);
    memcpy(key, k, msg->key_len);
    key[msg->key_len] = 0;
    i = atoi(key + 1);
    if (key[0] == 'k') {
        TL_ASSERT(i == p + NPART * next_big[p] && i < N_BIG,
                  "partition %d offset %" PRId64 ": %s, expected k%d", p, msg->offset, key,
                  p + NPART * next_big[p]);
        TL_ASSERT_EQ(msg->offset, big.off[i]);
        big_value(round, i, v);
        TL_ASSERT(msg->len == BIG_LEN && !memcmp(msg->payload, v, BIG_LEN), "%s: value differs",
                  key);
        next_big[p]++;
    } else {
        TL_ASSERT(key[0] == 's', "partition %d offset %" PRId64 ": key %s", p, msg->offset, key);
        TL_ASSERT(i == p + NPART * next_small[p] && i < N_SMALL,
                  "partition %d offset %" PRId64 ": %s, expected s%d", p, msg->offset, key,
                  p + NPART * next_small[p]);
        TL_ASSERT_EQ(msg->offset, small.off[i]);
        len = small_value(round, i, v);
        TL_ASSERT(msg->len == (size_t)len && !memcmp(msg->payload, v, (size_t)len),
                  "%s: value differs", key);
        next_small[p]++;
    }
}

/* What check_message needs across messages. */
typedef struct consume_state {
    int round;
    int next_big[NPART], next_small[NPART];
} consume_state;

static void check_one(const rd_kafka_message_t *msg, void *arg)
{
    consume_state *st = arg;
    check_message(msg, st->round, st->next_big, st->next_small);
}

static void consume_all(const char *topic, int round)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    consume_state st = {round, {0}, {0}};
    int64_t lo, hi;

    tl_conf_set(conf, "check.crcs", "true");
    rd_kafka_t *rk = tl_consume_from_start(conf, topic, NPART, N_BIG + N_SMALL, 60, check_one, &st);
    for (int p = 0; p < NPART; p++) {
        TL_ASSERT(!rd_kafka_query_watermark_offsets(rk, topic, p, &lo, &hi, 10000), "watermarks");
        TL_ASSERT(lo == 0 && hi == (N_BIG + N_SMALL) / NPART,
                  "partition %d: offsets %" PRId64 "..%" PRId64, p, lo, hi);
    }
    rd_kafka_destroy(rk);
}

/* Small messages with large ones of the same partition before and after
 * them: the two kinds of request did interleave. */
static int interleaved(void)
{
    int64_t first[NPART], last[NPART];
    int n = 0;
    for (int p = 0; p < NPART; p++) {
        first[p] = big.off[p];
        last[p] = big.off[N_BIG - NPART + p];
    }
    for (int j = 0; j < N_SMALL; j++)
        n += small.off[j] > first[j % NPART] && small.off[j] < last[j % NPART];
    return n;
}

/* Fetch v12 of partitions parts[0..n) of topic from offsets[]; their
 * answers in out[], records in the arena. */
static void fetch(int fd, const char *topic, const int32_t *parts, const int64_t *offsets, int n,
                  int32_t max_bytes, const proto_fetch_resp_partition_data_t **out)
{
    proto_fetch_req_t r;
    proto_fetch_resp_t resp;
    proto_fetch_req_fetch_topic_t t;
    proto_fetch_req_fetch_partition_t fp[NPART];

    TL_ASSERT(n <= NPART, "fetch of %d partitions", n);
    proto_fetch_req_init(&r);
    proto_fetch_req_fetch_topic_init(&t);
    r.max_wait_ms = 0;
    r.min_bytes = 1;
    r.max_bytes = 64 << 20;
    r.rack_id = S("");
    r.forgotten_topics_data.n = 0;
    for (int i = 0; i < n; i++) {
        proto_fetch_req_fetch_partition_init(&fp[i]);
        fp[i].partition = parts[i];
        fp[i].fetch_offset = offsets[i];
        fp[i].partition_max_bytes = max_bytes;
    }
    t.topic = S(topic);
    t.partitions.n = n;
    t.partitions.v = fp;
    r.topics.n = 1;
    r.topics.v = &t;
    TL_WIRE_CALL(fd, &arena, fetch, 1, 12, &r, &resp);
    TL_ASSERT(resp.error_code == 0 && resp.responses.n == 1 &&
                  resp.responses.v[0].partitions.n == n,
              "Fetch: error %d, %d topics", resp.error_code, resp.responses.n);
    for (int i = 0; i < n; i++) {
        out[i] = &resp.responses.v[0].partitions.v[i];
        TL_ASSERT(out[i]->partition_index == parts[i] && out[i]->error_code == 0,
                  "Fetch %s-%d: partition %d, error %d", topic, parts[i],
                  out[i]->partition_index, out[i]->error_code);
    }
}

/* The batches stored from the start of every partition (the first 4 MB):
 * the large producer's (those with a producer id) are in its codec, and
 * some are at least POOL_BYTES long, so their requests were validated on
 * a worker. */
static void check_stored_batches(const char *topic, int codec)
{
    int32_t parts[NPART] = {0, 1, 2, 3};
    int64_t offsets[NPART] = {0};
    const proto_fetch_resp_partition_data_t *d[NPART];
    int fd = wire_connect();
    log_batch_hdr_t h;

    arena_reset(&arena);
    fetch(fd, topic, parts, offsets, NPART, 4 << 20, d);
    for (int p = 0; p < NPART; p++) {
        TL_ASSERT(d[p]->records.len > 0, "partition %d: nothing fetched", p);
        const uint8_t *b = d[p]->records.p, *end = b + d[p]->records.len;
        int pooled = 0, nbig = 0, nsmall = 0;
        int64_t size;
        while ((size = log_batch_total_size(b, (size_t)(end - b))) > 0 && size <= end - b) {
            TL_ASSERT(log_batch_hdr_parse(b, (size_t)size, &h) == 0, "batch header");
            if (h.producer_id >= 0) {
                TL_ASSERT_EQ(LOG_BATCH_ATTR_CODEC(h.attributes), codec);
                pooled += size >= POOL_BYTES;
                nbig++;
            } else {
                nsmall++;
            }
            b += size;
        }
        tl_log("partition %d: %d batches of the large producer (%d of >= 32 KB), %d of the small",
               p, nbig, pooled, nsmall);
        TL_ASSERT(pooled > 0, "partition %d: no stored batch of 32 KB or more", p);
    }
    close(fd);
}

static void scenario_a(const char *topic, int round, const char *codec, int codec_id)
{
    pthread_t thr;
    small_arg_t sa = {topic, round};
    double t0 = tl_now();

    tl_log("A%d: %d x 1 KB (%s, linger.ms=50) and %d small (linger.ms=0) to %s", round, N_BIG,
           codec, N_SMALL, topic);
    for (int i = 0; i < N_BIG; i++)
        big.off[i] = -1;
    for (int j = 0; j < N_SMALL; j++)
        small.off[j] = -1;
    big.errors = small.errors = 0;
    atomic_store(&big.reported, 0);
    atomic_store(&small.reported, 0);
    pthread_create(&thr, NULL, small_run, &sa);
    produce_big(topic, round, codec);
    pthread_join(thr, NULL);
    check_reports(&big, "large producer");
    check_reports(&small, "small producer");
    int between = interleaved();
    tl_log("A%d: produced in %.2f s; %d small messages landed among large ones", round,
           tl_now() - t0, between);
    TL_ASSERT(between > 0, "the small producer's messages all came before or after the large");
    consume_all(topic, round);
    check_stored_batches(topic, codec_id);
    tl_log("A%d: read back exact in %.2f s in all", round, tl_now() - t0);
}

/* ---- raw batches ---- */

/* Appends one batch to out: n records keyed "<tag><req>-<k>", with vlen
 * pseudo-random bytes as values (seeded by tag, req, k) and timestamps
 * ts0 + k. */
static void build_batch(buf_t *out, char tag, int req, int n, int vlen, int64_t ts0)
{
    log_record_t *recs = xcalloc((size_t)n, sizeof(*recs));
    char(*keys)[24] = xcalloc((size_t)n, sizeof(*keys));
    uint8_t *vals = xmalloc((size_t)n * (size_t)vlen);
    log_batch_build_t opt;

    for (int k = 0; k < n; k++) {
        uint32_t h = tl_mix32(((uint32_t)tag << 24) ^ ((uint32_t)req << 12) ^ (uint32_t)k);
        for (int x = 0; x < vlen; x++) {
            h = tl_mix32(h + (uint32_t)x);
            vals[(size_t)k * (size_t)vlen + (size_t)x] = (uint8_t)h;
        }
        recs[k].key_len = snprintf(keys[k], sizeof(keys[k]), "%c%d-%d", tag, req, k);
        recs[k].key = (const uint8_t *)keys[k];
        recs[k].value = vals + (size_t)k * (size_t)vlen;
        recs[k].value_len = vlen;
        recs[k].timestamp = ts0 + k;
    }
    log_batch_build_init(&opt);
    TL_ASSERT(log_batch_build(out, &opt, recs, n) == 0, "log_batch_build");
    free(recs);
    free(keys);
    free(vals);
}

/* Checks that the stored batch at b (len bytes) holds exactly the records
 * build_batch(tag, req, n, vlen) made, at offsets base..base+n-1. */
static void check_records(const uint8_t *b, size_t len, char tag, int req, int n, int vlen,
                          int64_t base)
{
    buf_t want;
    log_batch_hdr_t h;
    log_record_t rec, wrec;
    buf_init(&want);
    build_batch(&want, tag, req, n, vlen, 0);
    log_batch_iter_t *wit = log_batch_iter_new(want.p, want.len);
    log_batch_iter_t *it = log_batch_iter_new(b, len);
    TL_ASSERT(it && wit && log_batch_crc_ok(b, len), "%c%d: bad stored batch", tag, req);
    TL_ASSERT(log_batch_hdr_parse(b, len, &h) == 0 && h.base_offset == base &&
                  h.records_count == n,
              "%c%d: batch at %" PRId64 " of %d records, expected %" PRId64 " and %d", tag, req,
              h.base_offset, h.records_count, base, n);
    for (int k = 0; k < n; k++) {
        TL_ASSERT(log_batch_iter_next(it, &rec) == 1 && log_batch_iter_next(wit, &wrec) == 1,
                  "%c%d: record %d missing", tag, req, k);
        TL_ASSERT(rec.offset == base + k && rec.key_len == wrec.key_len &&
                      !memcmp(rec.key, wrec.key, (size_t)rec.key_len) &&
                      rec.value_len == wrec.value_len &&
                      !memcmp(rec.value, wrec.value, (size_t)rec.value_len),
                  "%c%d: record %d (offset %" PRId64 ") differs", tag, req, k, rec.offset);
    }
    TL_ASSERT(log_batch_iter_next(it, &rec) == 0, "%c%d: more than %d records", tag, req, n);
    log_batch_iter_free(it);
    log_batch_iter_free(wit);
    buf_free(&want);
}

/* Sends a Produce v9 (acks -1) of batches[i] to partition parts[i] of
 * topic; returns its correlation id. */
static int32_t send_produce(int fd, const char *topic, const int32_t *parts, const buf_t *batches,
                            int n)
{
    proto_produce_req_t r;
    proto_produce_req_topic_produce_data_t t;
    proto_produce_req_partition_produce_data_t pd[2];
    buf_t body;

    TL_ASSERT(n <= 2, "produce to %d partitions", n);
    proto_produce_req_init(&r);
    proto_produce_req_topic_produce_data_init(&t);
    for (int i = 0; i < n; i++) {
        proto_produce_req_partition_produce_data_init(&pd[i]);
        pd[i].index = parts[i];
        pd[i].records.p = batches[i].p;
        pd[i].records.len = (int32_t)batches[i].len;
    }
    r.acks = -1;
    r.timeout_ms = 10000;
    t.name = S(topic);
    t.partition_data.n = n;
    t.partition_data.v = pd;
    r.topic_data.n = 1;
    r.topic_data.v = &t;
    buf_init(&body);
    proto_produce_req_encode(&r, 9, &body);
    int32_t corr = tl_wire_send(fd, 0, 9, &body);
    buf_free(&body);
    return corr;
}

/* The answer to request corr: its partitions' answers (in the arena). */
static const proto_produce_resp_partition_produce_response_t *recv_produce(int fd, int32_t corr,
                                                                          int n)
{
    proto_produce_resp_t resp;
    size_t len;
    const uint8_t *b = tl_wire_recv(fd, 0, 9, corr, &arena, &len);
    proto_produce_resp_init(&resp);
    TL_ASSERT(proto_produce_resp_decode(&resp, 9, b, len, &arena) == 0, "Produce v9: undecodable");
    TL_ASSERT(resp.responses.n == 1 && resp.responses.v[0].partition_responses.n == n,
              "Produce v9: %d topics", resp.responses.n);
    return resp.responses.v[0].partition_responses.v;
}

/* ---- B. one good and one corrupt batch in one pooled request ---- */

#define B_RECS 40
#define B_VLEN 1000

static void scenario_b(const char *topic)
{
    int32_t parts[2] = {0, 1};
    int64_t offsets[2] = {0, 0}, ts0 = wall_ms();
    buf_t batch[2];
    const proto_fetch_resp_partition_data_t *d[2];
    int fd = wire_connect();

    for (int i = 0; i < 2; i++) {
        buf_init(&batch[i]);
        build_batch(&batch[i], 'b', i, B_RECS, B_VLEN, ts0);
    }
    TL_ASSERT(batch[0].len + batch[1].len >= POOL_BYTES, "B: %zu bytes",
              batch[0].len + batch[1].len);
    /* A stale maxTimestamp (the first record's) under a valid CRC. */
    uint8_t *b0 = batch[0].p;
    for (int k = 0; k < 8; k++)
        b0[LOG_BATCH_OFF_MAX_TIMESTAMP + k] = b0[LOG_BATCH_OFF_BASE_TIMESTAMP + k];
    log_batch_update_crc(b0, batch[0].len);
    /* One value byte of the last record changed after the CRC was set. */
    batch[1].p[batch[1].len - 10] ^= 0x40;
    TL_ASSERT(!log_batch_crc_ok(batch[1].p, batch[1].len), "B: the CRC still matches");

    arena_reset(&arena);
    const proto_produce_resp_partition_produce_response_t *pr =
        recv_produce(fd, send_produce(fd, topic, parts, batch, 2), 2);
    TL_ASSERT(pr[0].index == 0 && pr[1].index == 1, "B: answers for %d and %d", pr[0].index,
              pr[1].index);
    TL_ASSERT(pr[0].error_code == 0 && pr[0].base_offset == 0,
              "B: partition 0: error %d at %" PRId64, pr[0].error_code, pr[0].base_offset);
    TL_ASSERT(pr[1].error_code == E_CORRUPT_MESSAGE && pr[1].base_offset == -1,
              "B: partition 1: error %d at %" PRId64, pr[1].error_code, pr[1].base_offset);

    fetch(fd, topic, parts, offsets, 2, 1 << 20, d);
    TL_ASSERT(d[1]->high_watermark == 0 && d[1]->records.len <= 0,
              "B: partition 1: high watermark %" PRId64 ", %d bytes", d[1]->high_watermark,
              d[1]->records.len);
    TL_ASSERT(d[0]->high_watermark == B_RECS && (size_t)d[0]->records.len == batch[0].len,
              "B: partition 0: high watermark %" PRId64 ", %d bytes of %zu", d[0]->high_watermark,
              d[0]->records.len, batch[0].len);
    const uint8_t *got = d[0]->records.p;
    const size_t hdr_tail = LOG_BATCH_OFF_PRODUCER_ID;
    TL_ASSERT(!memcmp(got, b0, LOG_BATCH_OFF_LEADER_EPOCH), "B: base offset or length differs");
    TL_ASSERT(got[LOG_BATCH_OFF_MAGIC] == 2 && log_batch_crc_ok(got, batch[0].len),
              "B: stored batch fails its CRC");
    TL_ASSERT(!memcmp(got + LOG_BATCH_OFF_ATTRIBUTES, b0 + LOG_BATCH_OFF_ATTRIBUTES,
                      LOG_BATCH_OFF_MAX_TIMESTAMP - LOG_BATCH_OFF_ATTRIBUTES),
              "B: attributes, last offset delta or base timestamp differ");
    TL_ASSERT(!memcmp(got + hdr_tail, b0 + hdr_tail, batch[0].len - hdr_tail),
              "B: producer fields or record bytes differ");
    log_batch_hdr_t h;
    TL_ASSERT(log_batch_hdr_parse(got, batch[0].len, &h) == 0, "B: header");
    TL_ASSERT(h.max_timestamp == ts0 + B_RECS - 1, "B: maxTimestamp %" PRId64 ", expected %" PRId64,
              h.max_timestamp, ts0 + B_RECS - 1);
    TL_ASSERT(h.leader_epoch >= 0, "B: leader epoch %d", h.leader_epoch);
    check_records(got, batch[0].len, 'b', 0, B_RECS, B_VLEN, 0);
    tl_log("B: partition 0 stored exact (maxTimestamp fixed), partition 1 refused and empty");
    buf_free(&batch[0]);
    buf_free(&batch[1]);
    close(fd);
}

/* ---- C. pipelined requests on one connection ---- */

#define C_LARGE 10

/* Request r of C: the large ones are even (about 250 or 70 records of
 * 1 KB in turn), the one-record inline ones odd. */
static int c_records(int r)
{
    if (r % 2)
        return 1;
    return (r / 2) % 2 ? 64 + r : 240 + r;
}

/* Walks the batches of partition 0 of topic from offset 0 up to hwm
 * expected, calling check(b, len, base, arg) on each; returns the count.
 * Fails on a gap, a bad CRC or a partial last batch. */
static int walk_partition(int fd, const char *topic, int64_t hwm,
                          void (*check)(const uint8_t *, size_t, int64_t, void *), void *arg)
{
    int32_t part = 0;
    int64_t next = 0;
    int nbatches = 0;
    const proto_fetch_resp_partition_data_t *d;
    while (next < hwm) {
        arena_reset(&arena);
        fetch(fd, topic, &part, &next, 1, 1 << 20, &d);
        TL_ASSERT(d->high_watermark == hwm, "%s: high watermark %" PRId64 ", expected %" PRId64,
                  topic, d->high_watermark, hwm);
        TL_ASSERT(d->records.len > 0, "%s: nothing at %" PRId64, topic, next);
        const uint8_t *b = d->records.p, *end = b + d->records.len;
        int64_t size;
        while ((size = log_batch_total_size(b, (size_t)(end - b))) > 0 && size <= end - b) {
            log_batch_hdr_t h;
            TL_ASSERT(log_batch_hdr_parse(b, (size_t)size, &h) == 0 &&
                          log_batch_crc_ok(b, (size_t)size),
                      "%s: bad batch at %" PRId64, topic, next);
            TL_ASSERT(h.base_offset == next, "%s: batch at %" PRId64 ", expected %" PRId64, topic,
                      h.base_offset, next);
            check(b, (size_t)size, h.base_offset, arg);
            next += h.last_offset_delta + 1;
            nbatches++;
            b += size;
        }
    }
    TL_ASSERT(next == hwm, "%s: batches end at %" PRId64 ", high watermark %" PRId64, topic, next,
              hwm);
    return nbatches;
}

static void c_check(const uint8_t *b, size_t len, int64_t base, void *arg)
{
    int *r = arg;
    check_records(b, len, 'c', *r, c_records(*r), 1024, base);
    (*r)++;
}

static void scenario_c(const char *topic)
{
    int32_t part = 0, corr[2 * C_LARGE];
    int64_t ts0 = wall_ms(), expect = 0;
    int fd = wire_connect(), r = 0;

    for (int i = 0; i < 2 * C_LARGE; i++) {
        buf_t batch;
        buf_init(&batch);
        build_batch(&batch, 'c', i, c_records(i), 1024, ts0);
        TL_ASSERT(i % 2 || batch.len >= 64 * 1024, "C: request %d of %zu bytes", i, batch.len);
        corr[i] = send_produce(fd, topic, &part, &batch, 1);
        buf_free(&batch);
    }
    /* tl_wire_recv fails unless the next answer is to corr[i]. */
    for (int i = 0; i < 2 * C_LARGE; i++) {
        arena_reset(&arena);
        const proto_produce_resp_partition_produce_response_t *pr = recv_produce(fd, corr[i], 1);
        TL_ASSERT(pr->error_code == 0 && pr->base_offset == expect,
                  "C: request %d: error %d at %" PRId64 ", expected %" PRId64, i, pr->error_code,
                  pr->base_offset, expect);
        expect += c_records(i);
    }
    TL_ASSERT_EQ(walk_partition(fd, topic, expect, c_check, &r), 2 * C_LARGE);
    tl_log("C: %d pipelined requests answered in order, %" PRId64 " records in order", 2 * C_LARGE,
           expect);
    close(fd);
}

/* ---- D. connections closed right after their request ---- */

#define D_CONNS 50
#define D_RECS 100

typedef struct d_seen_s {
    char seen[D_CONNS + 1];
    int n;
} d_seen_t;

static void d_check(const uint8_t *b, size_t len, int64_t base, void *arg)
{
    d_seen_t *s = arg;
    log_batch_iter_t *it = log_batch_iter_new(b, len);
    log_record_t rec;
    char key[24];
    int req = -1;
    TL_ASSERT(it && log_batch_iter_next(it, &rec) == 1 && rec.key_len > 0 &&
                  rec.key_len < (int32_t)sizeof(key),
              "D: batch at %" PRId64 " unreadable", base);
    memcpy(key, rec.key, (size_t)rec.key_len);
    key[rec.key_len] = 0;
    TL_ASSERT(sscanf(key, "d%d-0", &req) == 1 && req >= 0 && req <= D_CONNS,
              "D: batch at %" PRId64 " starts with key %s", base, key);
    log_batch_iter_free(it);
    TL_ASSERT(!s->seen[req], "D: request %d stored twice (again at %" PRId64 ")", req, base);
    s->seen[req] = 1;
    s->n++;
    check_records(b, len, 'd', req, D_RECS, 1024, base);
}

static int64_t log_end(int fd, const char *topic)
{
    int32_t part = 0;
    int64_t off = 0;
    const proto_fetch_resp_partition_data_t *d;
    arena_reset(&arena);
    fetch(fd, topic, &part, &off, 1, 1, &d);
    return d->high_watermark;
}

/* Waits until the partition's end stays put for 300 ms (jobs of the
 * closed connections may still be on a worker); returns it. */
static int64_t settled_end(int fd, const char *topic)
{
    int64_t end = log_end(fd, topic);
    double deadline = tl_now() + 10;
    for (int same = 0; same < 3;) {
        TL_ASSERT(tl_now() < deadline, "D: the log end still moves after 10 s");
        usleep(100 * 1000);
        int64_t now = log_end(fd, topic);
        same = now == end ? same + 1 : 0;
        end = now;
    }
    return end;
}

static void metadata_answers(const char *topic)
{
    proto_metadata_resp_t resp;
    int fd = wire_connect();
    arena_reset(&arena);
    tl_wire_metadata(fd, &arena, 12, topic, 0, &resp);
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].error_code == 0 &&
                  resp.topics.v[0].partitions.n == 1 &&
                  resp.topics.v[0].partitions.v[0].leader_id >= 0,
              "D: Metadata of %s", topic);
    close(fd);
}

static void scenario_d(const char *topic)
{
    int32_t part = 0;
    int64_t ts0 = wall_ms();
    d_seen_t seen = {{0}, 0};

    for (int k = 0; k < D_CONNS; k++) {
        buf_t batch;
        int fd = wire_connect();
        buf_init(&batch);
        build_batch(&batch, 'd', k, D_RECS, 1024, ts0);
        send_produce(fd, topic, &part, &batch, 1);
        if (k % 2) {
            struct linger lg = {1, 0}; /* close with a reset */
            setsockopt(fd, SOL_SOCKET, SO_LINGER, &lg, sizeof(lg));
        }
        close(fd);
        buf_free(&batch);
    }
    metadata_answers(topic);
    int fd = wire_connect();
    int64_t end = settled_end(fd, topic);
    TL_ASSERT(end % D_RECS == 0, "D: log end %" PRId64 " is not whole requests", end);
    TL_ASSERT_EQ(walk_partition(fd, topic, end, d_check, &seen), end / D_RECS);
    tl_log("D: %d of %d requests closed early were stored (whole), the others not at all", seen.n,
           D_CONNS);

    buf_t batch;
    buf_init(&batch);
    build_batch(&batch, 'd', D_CONNS, D_RECS, 1024, ts0);
    arena_reset(&arena);
    const proto_produce_resp_partition_produce_response_t *pr =
        recv_produce(fd, send_produce(fd, topic, &part, &batch, 1), 1);
    buf_free(&batch);
    TL_ASSERT(pr->error_code == 0 && pr->base_offset == end,
              "D: last produce: error %d at %" PRId64 ", expected %" PRId64, pr->error_code,
              pr->base_offset, end);
    memset(&seen, 0, sizeof(seen));
    TL_ASSERT_EQ(walk_partition(fd, topic, end + D_RECS, d_check, &seen), end / D_RECS + 1);
    TL_ASSERT(seen.seen[D_CONNS], "D: the last request is not in the log");
    close(fd);
}

int main(void)
{
    static const char *const extra[] = {"num.io.threads=2", NULL};
    tl_broker b = {0};
    char *dir, *topic[5];
    static const char *const prefix[5] = {"t0012-lz4", "t0012-none", "t0012-b", "t0012-c",
                                          "t0012-d"};
    static const int nparts[5] = {NPART, NPART, 2, 1, 1};

    tl_init("0012-produce-pool");
    if (!tl_is_kafka() && sysconf(_SC_NPROCESSORS_ONLN) < 2)
        tl_skip("one CPU: the broker starts no validation workers");
    dir = tl_scratch_dir("0012");
    tl_broker_start(&b, dir, extra);
    bs = b.bootstrap;
    arena_init(&arena, 1 << 16);
    tl_wire_set_client_id("t0012");
    big.n = N_BIG;
    big.off = xmalloc(N_BIG * sizeof(*big.off));
    small.n = N_SMALL;
    small.off = xmalloc(N_SMALL * sizeof(*small.off));

    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    for (int i = 0; i < 5; i++) {
        topic[i] = tl_topic_name(prefix[i]);
        TL_ASSERT_EQ(tl_create_topic(rk, topic[i], nparts[i]), nparts[i]);
    }
    rd_kafka_destroy(rk);

    scenario_a(topic[0], 0, "lz4", LOG_BATCH_CODEC_LZ4);
    scenario_a(topic[1], 1, "none", LOG_BATCH_CODEC_NONE);
    scenario_b(topic[2]);
    scenario_c(topic[3]);
    scenario_d(topic[4]);

    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    for (int i = 0; i < 5; i++)
        free(topic[i]);
    free(big.off);
    free(small.off);
    arena_destroy(&arena);
    free(dir);
    return tl_done();
}
