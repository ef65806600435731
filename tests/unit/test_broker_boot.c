/* The bootstrap checkpoint of `strand format` (src/broker/broker_boot.h)
 * against the ones Kafka 4.4's kafka-storage format wrote
 * (broker_boot_kafka.h): given the same voters and times, the header
 * batch (SnapshotHeaderRecord, KRaftVersionRecord, VotersRecord) is the
 * same bytes, and so are the metadata.version FeatureLevelRecord and the
 * footer record (Kafka's data batch also finalizes features Strand has
 * at level 0, so that batch and the footer's offset differ); and what a
 * node reads back at start. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/broker_boot.h"
#include "cluster/meta_snap.h"
#include "log/log_batch.h"
#include "proto/proto_gen.h"
#include "tests/unit/broker_boot_kafka.h"
#include "unit.h"
#include "util/uuid.h"

/* The i-th batch of a snapshot's bytes: its position and size. */
static size_t nth_batch(const uint8_t *p, size_t len, int i, size_t *size)
{
    size_t off = 0;
    for (;; i--) {
        *size = (size_t)log_batch_total_size(p + off, len - off);
        if (i == 0)
            return off;
        off += *size;
    }
}

static int64_t batch_time(const uint8_t *p)
{
    log_batch_hdr_t h;
    log_batch_hdr_parse(p, LOG_BATCH_HDR_SIZE, &h);
    return h.base_timestamp;
}

static int nbatches(const uint8_t *p, size_t len)
{
    int n = 0;
    for (size_t off = 0, size; off < len; off += size, n++)
        size = (size_t)log_batch_total_size(p + off, len - off);
    return n;
}

/* Record j of batch b: its key and value. */
static void nth_record(const uint8_t *p, size_t len, int b, int j, buf_t *key, buf_t *val)
{
    size_t size, off = nth_batch(p, len, b, &size);
    log_batch_iter_t *it = log_batch_iter_new(p + off, size);
    log_record_t rec;

    CU_ASSERT_PTR_NOT_NULL_FATAL(it);
    for (int i = 0; i <= j; i++)
        CU_ASSERT_EQUAL_FATAL(log_batch_iter_next(it, &rec), 1);
    buf_put(key, rec.key, rec.key_len > 0 ? (size_t)rec.key_len : 0);
    buf_put(val, rec.value, rec.value_len > 0 ? (size_t)rec.value_len : 0);
    log_batch_iter_free(it);
}

static void voter(broker_boot_voter_t *v, int32_t id, const char *host, int port, const char *dir)
{
    memset(v, 0, sizeof(*v));
    v->id = id;
    snprintf(v->host, sizeof(v->host), "%s", host);
    v->port = port;
    snprintf(v->listener, sizeof(v->listener), "CONTROLLER");
    CU_ASSERT_EQUAL_FATAL(uuid_from_base64(dir, v->dir_id), 0);
}

/* Ours with Kafka's times: batch 0 byte for byte; the first record of
 * batch 1 and the footer's record the same key and value. */
static void check_like_kafka(const broker_boot_t *boot, const uint8_t *k, size_t klen, int data)
{
    size_t ksize, size, koff = nth_batch(k, klen, 0, &ksize), off;
    int64_t last_ts;
    buf_t b, kk, kv, ok, ov;

    CU_ASSERT_EQUAL_FATAL(meta_snap_header_ts_of(k, klen, &last_ts), 0);
    buf_init(&b);
    broker_boot_build(boot, last_ts, batch_time(k + koff), &b);
    off = nth_batch(b.p, b.len, 0, &size);
    CU_ASSERT_EQUAL(size, ksize);
    CU_ASSERT(size == ksize && !memcmp(b.p + off, k + koff, ksize));
    CU_ASSERT_EQUAL(nbatches(b.p, b.len), 3);
    for (int i = data ? 1 : 2; i <= 2; i++) {
        buf_init(&kk), buf_init(&kv), buf_init(&ok), buf_init(&ov);
        nth_record(k, klen, i == 2 ? nbatches(k, klen) - 1 : 1, 0, &kk, &kv);
        nth_record(b.p, b.len, i, 0, &ok, &ov);
        /* a data record's key is null: nothing to compare */
        CU_ASSERT(kk.len == ok.len && (!kk.len || !memcmp(kk.p, ok.p, kk.len)));
        CU_ASSERT(kv.len == ov.len && kv.len > 0 && !memcmp(kv.p, ov.p, kv.len));
        buf_free(&kk), buf_free(&kv), buf_free(&ok), buf_free(&ov);
    }
    buf_free(&b);
}

static void test_initial_controllers(void)
{
    broker_boot_voter_t vs[2];
    broker_boot_t boot = {25, 1, vs, 2, 0};

    voter(&vs[0], 1, "127.0.0.1", 19093, "YNfMZFLSS42Wdi0NEJr5TQ");
    voter(&vs[1], 3, "localhost", 19095, "AAAAAAAAAAAAAAAAAAAAAQ");
    check_like_kafka(&boot, kafka_boot_initial, sizeof(kafka_boot_initial), 1);
}

/* --no-initial-controllers: KRaftVersionRecord alone; a static quorum:
 * the header alone (Kafka's level there is 4.4-IV2, which Strand does not
 * support: the header batch and the footer are compared). */
static void test_no_voters(void)
{
    broker_boot_t none = {25, 1, NULL, 0, 0}, stat = {25, 0, NULL, 0, 0};

    check_like_kafka(&none, kafka_boot_none, sizeof(kafka_boot_none), 0);
    check_like_kafka(&stat, kafka_boot_static, sizeof(kafka_boot_static), 0);
}

/* Written into a dir, read back as a node does at start; Kafka's own
 * checkpoint reads the same. */
static void test_write_read(void)
{
    char dir[] = "/tmp/strand-boot-XXXXXX", path[256], err[256] = "";
    broker_boot_voter_t vs[2];
    broker_boot_t boot = {27, 1, vs, 2, 1}; /* eligible leader replicas on */
    broker_boot_state_t st;

    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    voter(&vs[0], 1, "127.0.0.1", 19093, "YNfMZFLSS42Wdi0NEJr5TQ");
    voter(&vs[1], 3, "localhost", 19095, "AAAAAAAAAAAAAAAAAAAAAQ");
    CU_ASSERT_EQUAL(broker_boot_read(dir, &st, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(st.present, 0);
    CU_ASSERT_EQUAL_FATAL(broker_boot_write(dir, &boot, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL_FATAL(broker_boot_read(dir, &st, err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(st.present, 1);
    CU_ASSERT_EQUAL(st.metadata_version, 27);
    CU_ASSERT_EQUAL(st.kraft_version, 1);
    CU_ASSERT_EQUAL(st.elr_version, 1);
    CU_ASSERT_EQUAL_FATAL(st.has_voters, 1);
    CU_ASSERT_EQUAL_FATAL(st.voters.n, 2);
    CU_ASSERT_EQUAL(st.voters.v[1].id, 3);
    CU_ASSERT_STRING_EQUAL(st.voters.v[1].eps[0].host, "localhost");
    CU_ASSERT_EQUAL(st.voters.v[1].eps[0].port, 19095);
    CU_ASSERT_EQUAL(st.voters.v[1].kv_max, 1);
    CU_ASSERT_EQUAL(memcmp(st.voters.v[0].dir_id, vs[0].dir_id, 16), 0);
    broker_boot_state_free(&st);
    snprintf(path, sizeof(path), "%s/__cluster_metadata-0/%s", dir, BROKER_BOOT_FILE);
    CU_ASSERT_EQUAL(unlink(path), 0);
    snprintf(path, sizeof(path), "%s/__cluster_metadata-0", dir);
    CU_ASSERT_EQUAL(rmdir(path), 0);
    CU_ASSERT_EQUAL(rmdir(dir), 0);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("broker_boot", NULL, NULL);
    CU_add_test(s, "--initial-controllers: Kafka's bytes", test_initial_controllers);
    CU_add_test(s, "--no-initial-controllers and a static quorum: Kafka's bytes",
                test_no_voters);
    CU_add_test(s, "written, then read at start", test_write_read);
    return unit_run();
}
