/* 0601-commit-metadata-bytes: committed offset metadata is opaque to the
 * broker: the 12 bytes "Hello\0world!" (a NUL inside) come back byte for
 * byte, through the commit, the fetch, the records in __consumer_offsets
 * and a restart that replays them (Kafka 4.4 does the same; the test runs
 * its own broker, Kafka through kafka-ref.sh with KAFKA_REF).
 *
 *   1. librdkafka commits offset 5 of T-0 for group G with that metadata;
 *      OffsetFetch v8 reads it back.
 *   2. raw OffsetCommit v2 (classic strings) and v8 (compact strings) for
 *      group G2, partitions 0 and 1, with metadata holding NULs at the
 *      start, middle and end, and an empty one; OffsetFetch v1 and v8 read
 *      every byte back.
 *   3. the broker is stopped and started again: the same answers. */
#include "testlib/testlib.h"
#include "testlib/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define E_NONE 0
#define E_COORDINATOR_LOAD_IN_PROGRESS 14
#define E_COORDINATOR_NOT_AVAILABLE 15
#define E_NOT_COORDINATOR 16

static arena_t arena;
static char *topic, *group, *group2;

static const char md1[12] = "Hello\0world!";
static const char md2[7] = {'\0', 'a', '\0', '\0', 'b', 'c', '\0'};

#define S tl_wire_str

static proto_str_t bin(const char *p, int32_t n)
{
    proto_str_t s = {p, n};
    return s;
}

static void expect_bytes(const void *got, size_t got_len, const void *want, size_t want_len,
                         const char *what)
{
    char hex[200];
    size_t n = 0;
    for (size_t i = 0; i < got_len && n + 4 < sizeof(hex); i++)
        n += (size_t)snprintf(hex + n, sizeof(hex) - n, "%02x ", ((const uint8_t *)got)[i]);
    hex[n] = 0;
    tl_log("%s: %s", what, hex);
    TL_ASSERT(got_len == want_len && !memcmp(got, want, want_len),
              "%s: %zu bytes back, expected %zu", what, got_len, want_len);
}

static rd_kafka_t *consumer(const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "group.id", group);
    tl_conf_set(conf, "enable.auto.commit", "false");
    return tl_new(RD_KAFKA_CONSUMER, conf);
}

/* librdkafka sends the metadata as given (it cannot read it back whole:
 * 2.0.2 copies a fetched metadata string as a C string, so the check of
 * what is stored is the raw OffsetFetch below). A new Kafka loads
 * __consumer_offsets first: NOT_COORDINATOR until then. */
static void rdk_commit(const char *bs)
{
    rd_kafka_t *rk = consumer(bs);
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(1);
    rd_kafka_topic_partition_t *p = rd_kafka_topic_partition_list_add(l, topic, 0);
    rd_kafka_resp_err_t err;
    double deadline = tl_now() + 60;
    p->metadata = (void *)md1;
    p->metadata_size = sizeof(md1);
    do {
        p->offset = 5;
        p->err = 0;
        err = rd_kafka_commit(rk, l, 0);
        if (!err)
            err = p->err;
        if (err != RD_KAFKA_RESP_ERR_NOT_COORDINATOR &&
            err != RD_KAFKA_RESP_ERR_COORDINATOR_NOT_AVAILABLE &&
            err != RD_KAFKA_RESP_ERR_COORDINATOR_LOAD_IN_PROGRESS)
            break;
        usleep(200000);
    } while (tl_now() < deadline);
    TL_ASSERT(!err, "commit: %s", rd_kafka_err2name(err));
    p->metadata = NULL; /* not ours to free */
    p->metadata_size = 0;
    rd_kafka_topic_partition_list_destroy(l);
    rd_kafka_destroy(rk);
}

/* OffsetCommit of partitions 0 (md2) and 1 ("") of group2 at version v. */
static void raw_commit(int fd, int16_t v)
{
    proto_offset_commit_req_t r;
    proto_offset_commit_resp_t resp;
    proto_offset_commit_req_offset_commit_request_topic_t t;
    proto_offset_commit_req_offset_commit_request_partition_t p[2];
    proto_offset_commit_req_init(&r);
    proto_offset_commit_req_offset_commit_request_topic_init(&t);
    for (int i = 0; i < 2; i++) {
        proto_offset_commit_req_offset_commit_request_partition_init(&p[i]);
        p[i].partition_index = i;
        p[i].committed_offset = 10 + i;
    }
    p[0].committed_metadata = bin(md2, sizeof(md2));
    p[1].committed_metadata = bin("", 0);
    r.group_id = S(group2);
    r.generation_id_or_member_epoch = -1;
    r.member_id = S("");
    t.name = S(topic);
    t.partitions.n = 2;
    t.partitions.v = p;
    r.topics.n = 1;
    r.topics.v = &t;
    TL_WIRE_CALL(fd, &arena, offset_commit, 8, v, &r, &resp);
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == 2, "OffsetCommit v%d", v);
    for (int i = 0; i < 2; i++)
        TL_ASSERT_EQ(resp.topics.v[0].partitions.v[i].error_code, E_NONE);
}

static void expect_part(int32_t idx, int64_t off, proto_str_t md, const char *what)
{
    TL_ASSERT_EQ(off, 10 + idx);
    if (idx == 0)
        expect_bytes(md.p, (size_t)md.len, md2, sizeof(md2), what);
    else
        TL_ASSERT(md.len == 0, "%s: partition 1 metadata of %d bytes", what, md.len);
}

static void raw_fetch_v1(int fd)
{
    proto_offset_fetch_req_t r;
    proto_offset_fetch_resp_t resp;
    proto_offset_fetch_req_offset_fetch_request_topic_t t;
    int32_t parts[2] = {0, 1};
    proto_offset_fetch_req_init(&r);
    proto_offset_fetch_req_offset_fetch_request_topic_init(&t);
    t.name = S(topic);
    t.partition_indexes.n = 2;
    t.partition_indexes.v = parts;
    r.group_id = S(group2);
    r.topics.n = 1;
    r.topics.v = &t;
    TL_WIRE_CALL(fd, &arena, offset_fetch, 9, 1, &r, &resp);
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == 2, "OffsetFetch v1");
    for (int i = 0; i < 2; i++) {
        const proto_offset_fetch_resp_offset_fetch_response_partition_t *p =
            &resp.topics.v[0].partitions.v[i];
        TL_ASSERT_EQ(p->error_code, E_NONE);
        expect_part(p->partition_index, p->committed_offset, p->metadata, "OffsetFetch v1");
    }
}

/* What librdkafka committed for group, read by OffsetFetch v8, once the
 * coordinator has loaded the group (Kafka answers COORDINATOR_LOAD_IN_-
 * PROGRESS for a while after a start). */
static void raw_fetch_rdk(int fd)
{
    proto_offset_fetch_req_t r;
    proto_offset_fetch_resp_t resp;
    proto_offset_fetch_req_offset_fetch_request_group_t g;
    double deadline = tl_now() + 60;
    proto_offset_fetch_req_init(&r);
    proto_offset_fetch_req_offset_fetch_request_group_init(&g);
    g.group_id = S(group);
    g.topics.n = -1;
    r.groups.n = 1;
    r.groups.v = &g;
    for (;;) {
        TL_WIRE_CALL(fd, &arena, offset_fetch, 9, 8, &r, &resp);
        int16_t err = resp.groups.n == 1 ? resp.groups.v[0].error_code : 0;
        if ((err != E_COORDINATOR_LOAD_IN_PROGRESS && err != E_COORDINATOR_NOT_AVAILABLE &&
             err != E_NOT_COORDINATOR) ||
            tl_now() > deadline)
            break;
        usleep(200000);
    }
    TL_ASSERT(resp.groups.n == 1 && resp.groups.v[0].error_code == E_NONE &&
                  resp.groups.v[0].topics.n == 1 &&
                  resp.groups.v[0].topics.v[0].partitions.n == 1,
              "OffsetFetch v8 of %s", group);
    const proto_offset_fetch_resp_offset_fetch_response_partitions_t *p =
        &resp.groups.v[0].topics.v[0].partitions.v[0];
    TL_ASSERT_EQ(p->error_code, E_NONE);
    TL_ASSERT_EQ(p->committed_offset, 5);
    expect_bytes(p->metadata.p, (size_t)p->metadata.len, md1, sizeof(md1),
                 "librdkafka's commit, OffsetFetch v8");
}

static void raw_fetch_v8(int fd)
{
    proto_offset_fetch_req_t r;
    proto_offset_fetch_resp_t resp;
    proto_offset_fetch_req_offset_fetch_request_group_t g;
    proto_offset_fetch_req_init(&r);
    proto_offset_fetch_req_offset_fetch_request_group_init(&g);
    g.group_id = S(group2);
    g.topics.n = -1; /* all */
    r.groups.n = 1;
    r.groups.v = &g;
    TL_WIRE_CALL(fd, &arena, offset_fetch, 9, 8, &r, &resp);
    TL_ASSERT(resp.groups.n == 1 && resp.groups.v[0].error_code == E_NONE, "OffsetFetch v8");
    TL_ASSERT(resp.groups.v[0].topics.n == 1 && resp.groups.v[0].topics.v[0].partitions.n == 2,
              "OffsetFetch v8: %d topics", resp.groups.v[0].topics.n);
    for (int i = 0; i < 2; i++) {
        const proto_offset_fetch_resp_offset_fetch_response_partitions_t *p =
            &resp.groups.v[0].topics.v[0].partitions.v[i];
        TL_ASSERT_EQ(p->error_code, E_NONE);
        expect_part(p->partition_index, p->committed_offset, p->metadata, "OffsetFetch v8");
    }
}

static void check_all(const char *bs)
{
    int fd = tl_connect(bs, 20000);
    TL_ASSERT(fd >= 0, "connect %s", bs);
    raw_fetch_rdk(fd);
    raw_fetch_v1(fd);
    raw_fetch_v8(fd);
    close(fd);
}

int main(void)
{
    static const char *const extra[] = {"group.initial.rebalance.delay.ms=0", NULL};
    tl_broker b = {0};
    char *dir;

    tl_init("0601-commit-metadata-bytes");
    arena_init(&arena, 1 << 16);
    dir = tl_scratch_dir("0601-broker");
    topic = tl_topic_name("t0601");
    group = tl_topic_name("g0601");
    group2 = tl_topic_name("g0601-raw");
    tl_broker_start(&b, dir, extra);

    rd_kafka_t *prod = tl_new(RD_KAFKA_PRODUCER, tl_conf(b.bootstrap));
    TL_ASSERT(tl_create_topic(prod, topic, 2) >= 2, "create %s", topic);
    rd_kafka_destroy(prod);

    rdk_commit(b.bootstrap);
    int fd = tl_connect(b.bootstrap, 20000);
    TL_ASSERT(fd >= 0, "connect %s", b.bootstrap);
    raw_commit(fd, 2);
    raw_fetch_v1(fd);
    raw_commit(fd, 8);
    close(fd);
    check_all(b.bootstrap);

    tl_log("restart");
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    tl_broker_start(&b, b.dir, extra);
    check_all(b.bootstrap);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);

    free(topic);
    free(group);
    free(group2);
    free(dir);
    arena_destroy(&arena);
    return tl_done();
}
