/* testlib: shared helpers for the integration tests (tests/integration/).
 *
 * Each integration test is one scenario in one program. It talks to the
 * broker named by STRAND_BOOTSTRAP (host:port), or starts brokers of its own
 * (kill -9, restart) from STRAND_BIN, or, when KAFKA_REF is set, through
 * scripts/kafka-ref.sh (STRAND_SRCDIR tells where the checkout is) so that
 * the same scenario can be checked against Apache Kafka.
 *
 * Exit status of a test program: 0 passed, 77 skipped, anything else failed.
 * Every helper that cannot do its job fails the test itself (tl_fail), so
 * tests read as straight-line scenarios.
 *
 * Beside this header: testlib/wire.h sends raw requests encoded with the
 * generated codecs (for exact answer fields), testlib/seqrun.h runs the
 * numbered-message producer and read-back check of the kill -9 tests. */
#ifndef STRAND_TESTLIB_H
#define STRAND_TESTLIB_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <librdkafka/rdkafka.h>

#define TL_EXIT_SKIP 77

/* ---- reporting ---- */

void tl_init(const char *name);
void tl_fail(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void tl_skip(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
void tl_log(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
int tl_done(void);
/* Registers fn(arg, failed) to run when tl_fail or tl_skip ends the test
 * (failed 1 or 0), newest first, each once; tl_on_end_remove takes it back.
 * The cluster harness (testlib/cluster.h) uses it to print node logs and
 * kill its nodes. */
void tl_on_end(void (*fn)(void *arg, int failed), void *arg);
void tl_on_end_remove(void (*fn)(void *arg, int failed), void *arg);

#define TL_ASSERT(cond, ...)                                                  \
    do {                                                                      \
        if (!(cond))                                                          \
            tl_fail("%s:%d: assertion '%s' failed: %s", __FILE__, __LINE__,   \
                    #cond, tl_fmt(__VA_ARGS__));                              \
    } while (0)

#define TL_ASSERT_EQ(a, b)                                                    \
    do {                                                                      \
        long long tl_a_ = (long long)(a), tl_b_ = (long long)(b);             \
        if (tl_a_ != tl_b_)                                                   \
            tl_fail("%s:%d: %s == %lld, expected %s == %lld", __FILE__,       \
                    __LINE__, #a, tl_a_, #b, tl_b_);                          \
    } while (0)

/* Formats into a static buffer (for TL_ASSERT messages only). */
const char *tl_fmt(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* ---- environment ---- */

/* STRAND_BOOTSTRAP; skips the test when it is not set. */
const char *tl_bootstrap(void);
/* 1 when KAFKA_REF is set (the broker under test is Apache Kafka). */
int tl_is_kafka(void);
/* A fresh directory under STRAND_TEST_DIR (or /tmp); caller owns the string. */
char *tl_scratch_dir(const char *what);
/* A topic name unique to this run; caller owns the string. */
char *tl_topic_name(const char *prefix);
/* Monotonic seconds. */
double tl_now(void);
/* Test-reproducible pseudo random numbers (seeded by TL_SEED or the pid). */
uint32_t tl_rand(void);
/* A fixed 32-bit mix (a pure function: test data derived from numbers can
 * be rebuilt from them to check what comes back). */
uint32_t tl_mix32(uint32_t x);

/* ---- librdkafka ---- */

/* A config with bootstrap.servers set, errors logged through tl_log. Caller
 * owns it (or passes it to rd_kafka_new, which takes ownership). */
rd_kafka_conf_t *tl_conf(const char *bootstrap);
void tl_conf_set(rd_kafka_conf_t *conf, const char *key, const char *val);
/* Reads partitions 0..nparts-1 of topic from their start with a consumer
 * made from conf (taken over; group.id and enable.auto.commit=false are set
 * here) until n messages have come, within timeout_s: every message must
 * come without error, and each partition's offsets must run 0, 1, 2, ...;
 * check(msg, arg) then looks at its contents. Returns the consumer, still
 * open, for more questions (the caller destroys it). */
rd_kafka_t *tl_consume_from_start(rd_kafka_conf_t *conf, const char *topic, int nparts,
                                  int64_t n, double timeout_s,
                                  void (*check)(const rd_kafka_message_t *msg, void *arg),
                                  void *arg);
/* rd_kafka_new that fails the test on error; takes ownership of conf. */
rd_kafka_t *tl_new(rd_kafka_type_t type, rd_kafka_conf_t *conf);
/* Produces the values PREFIX-0 .. PREFIX-(n-1) to partition of topic and
 * flushes (30 s at most): the test fails on any error. */
void tl_produce_seq(rd_kafka_t *rk, const char *topic, int32_t partition, const char *prefix,
                    int n);
/* Creates topic with the given partition count (replication factor 1)
 * through CreateTopics and waits until every partition has a leader and
 * answers ListOffsets. Returns the partition count the topic has: the one
 * asked for, or more when the broker has no CreateTopics and the topic was
 * auto-created instead; tests then use the first `partitions` only. */
int tl_create_topic(rd_kafka_t *rk, const char *topic, int partitions);
/* The same with one topic config (key NULL: none). */
int tl_create_topic_cfg(rd_kafka_t *rk, const char *topic, int partitions, const char *key,
                        const char *val);
/* Waits until metadata shows topic with leaders; returns its partition count. */
int tl_wait_topic(rd_kafka_t *rk, const char *topic, int timeout_ms);

/* ---- raw sockets ---- */

/* Connects to host:port with send/receive timeouts of timeout_ms; -1 on error. */
int tl_connect(const char *hostport, int timeout_ms);
/* Writes all of buf; -1 on error. */
int tl_send_all(int fd, const void *buf, size_t len);
/* Reads one size-prefixed frame. Returns the frame size and sets *out (caller
 * frees), 0 on a clean close, -1 on error/timeout (errno EAGAIN: timeout). */
int tl_recv_frame(int fd, uint8_t **out, int timeout_ms);
/* Waits for the peer to close: 1 if it closed (EOF or reset) within
 * timeout_ms, 0 if data arrived instead (then *got says how much), -1 on
 * timeout. */
int tl_wait_closed(int fd, int timeout_ms, size_t *got);
/* A free TCP port on 127.0.0.1. */
int tl_free_port(void);

/* ---- brokers owned by a test ---- */

typedef struct tl_broker {
    int port;
    pid_t pid;
    int kafka; /* started through kafka-ref.sh */
    char dir[512];
    char bootstrap[64];
} tl_broker;

/* Starts a broker with its data under dir (created if needed, kept if it
 * exists) on a free port (b->port 0) or b->port, and waits until it accepts
 * connections. Fails the test on error. extra: NULL or KEY=VALUE lines. */
void tl_broker_start(tl_broker *b, const char *dir, const char *const *extra);
/* The same, Apache Kafka (kafka-ref.sh) when kafka is 1, strand when 0,
 * whatever KAFKA_REF says (tests that compare the two). */
void tl_broker_start_kind(tl_broker *b, const char *dir, const char *const *extra, int kafka);
/* SIGKILL and reap. */
void tl_broker_kill9(tl_broker *b);
/* SIGTERM, wait; returns the exit status (0 = clean), -1 if killed. */
int tl_broker_stop(tl_broker *b);
/* SIGKILL every broker this process started and did not stop: tl_fail and
 * tl_skip call it, so a failing test leaves no broker behind. */
void tl_broker_kill_all(void);

/* A digest of every file (relative path, size, contents) under dir, to show
 * that a test left the data untouched. */
uint64_t tl_dir_digest(const char *dir);

/* ---- little endian-free byte helpers for raw requests ---- */

typedef struct tl_req {
    uint8_t data[4096];
    size_t len;
} tl_req;

void tl_req_header(tl_req *r, int16_t key, int16_t version, int32_t corr,
                   const char *client_id);
void tl_req_i8(tl_req *r, int8_t v);
void tl_req_i16(tl_req *r, int16_t v);
void tl_req_i32(tl_req *r, int32_t v);
void tl_req_bytes(tl_req *r, const void *p, size_t n);
/* Fills in the size prefix. */
void tl_req_finish(tl_req *r);

int16_t tl_get_i16(const uint8_t *p);
int32_t tl_get_i32(const uint8_t *p);

#endif
