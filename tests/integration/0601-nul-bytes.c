/* 0601-nul-bytes: protocol strings that Kafka treats as opaque keep every
 * byte, NULs included, through the answers, the records in
 * __consumer_offsets and a restart that replays them (Kafka 4.4 does the
 * same; the test runs its own broker, Kafka through kafka-ref.sh with
 * KAFKA_REF). Committed offset metadata: the 12 bytes "Hello\0world!".
 *
 *   1. librdkafka commits offset 5 of T-0 for group G with that metadata;
 *      OffsetFetch v8 reads it back.
 *   2. raw OffsetCommit v2 (classic strings) and v8 (compact strings) for
 *      group G2, partitions 0 and 1, with metadata holding NULs at the
 *      start, middle and end, and an empty one; OffsetFetch v1 and v8 read
 *      every byte back.
 *   3. group ids "<g>\0x" and "<g>" are two groups: offsets 7 and 8
 *      committed to them come back apart.
 *   4. a member of group "<j>\0oin" joins (JoinGroup v5) with client id
 *      "cl\0ient": MEMBER_ID_REQUIRED gives a member id that starts with
 *      "cl\0ient-", the join with it makes it the leader of generation 1,
 *      SyncGroup hands its assignment back; DescribeGroups v5 shows the
 *      member id and client id byte for byte, ListGroups v4 the group id.
 *   5. the broker is stopped and started again: the same answers (the
 *      group comes back Stable with its member).
 * Where Kafka validates a string, a NUL makes it invalid rather than
 * ending it: CreateTopics (validate only) with retention.ms "1000\0x", or
 * with the key "retention.ms\0x", answers INVALID_CONFIG. */
#include "testlib/testlib.h"
#include "testlib/wire.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define E_NONE 0
#define E_MEMBER_ID_REQUIRED 79
#define E_INVALID_CONFIG 40
#define E_COORDINATOR_LOAD_IN_PROGRESS 14
#define E_COORDINATOR_NOT_AVAILABLE 15
#define E_NOT_COORDINATOR 16

static arena_t arena;
static char *topic, *group, *group2;
static char gnul[160], gjoin[160], member[300];
static size_t gnul_len, gjoin_len, member_len;
static const char client[7] = "cl\0ient";

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

/* ---- 3. two group ids apart after a NUL ---- */

static void commit_group(int fd, proto_str_t g, int64_t off)
{
    proto_offset_commit_req_t r;
    proto_offset_commit_resp_t resp;
    proto_offset_commit_req_offset_commit_request_topic_t t;
    proto_offset_commit_req_offset_commit_request_partition_t p;
    proto_offset_commit_req_init(&r);
    proto_offset_commit_req_offset_commit_request_topic_init(&t);
    proto_offset_commit_req_offset_commit_request_partition_init(&p);
    p.committed_offset = off;
    p.committed_metadata = S("");
    r.group_id = g;
    r.generation_id_or_member_epoch = -1;
    r.member_id = S("");
    t.name = S(topic);
    t.partitions.n = 1;
    t.partitions.v = &p;
    r.topics.n = 1;
    r.topics.v = &t;
    TL_WIRE_CALL(fd, &arena, offset_commit, 8, 8, &r, &resp);
    TL_ASSERT_EQ(resp.topics.v[0].partitions.v[0].error_code, E_NONE);
}

static int64_t fetch_group(int fd, proto_str_t g)
{
    proto_offset_fetch_req_t r;
    proto_offset_fetch_resp_t resp;
    proto_offset_fetch_req_offset_fetch_request_group_t q;
    proto_offset_fetch_req_init(&r);
    proto_offset_fetch_req_offset_fetch_request_group_init(&q);
    q.group_id = g;
    q.topics.n = -1;
    r.groups.n = 1;
    r.groups.v = &q;
    TL_WIRE_CALL(fd, &arena, offset_fetch, 9, 8, &r, &resp);
    TL_ASSERT(resp.groups.n == 1 && resp.groups.v[0].error_code == E_NONE &&
                  resp.groups.v[0].group_id.len == g.len &&
                  !memcmp(resp.groups.v[0].group_id.p, g.p, (size_t)g.len),
              "OffsetFetch v8: group");
    TL_ASSERT(resp.groups.v[0].topics.n == 1, "OffsetFetch v8: %d topics",
              resp.groups.v[0].topics.n);
    return resp.groups.v[0].topics.v[0].partitions.v[0].committed_offset;
}

static void check_groups_apart(int fd)
{
    TL_ASSERT_EQ(fetch_group(fd, bin(gnul, (int32_t)gnul_len)), 7);
    TL_ASSERT_EQ(fetch_group(fd, bin(gnul, (int32_t)strlen(gnul))), 8);
}

/* ---- 4. a member whose client id holds a NUL ---- */

static proto_join_group_resp_t join(int fd, proto_str_t member_id)
{
    proto_join_group_req_t r;
    proto_join_group_resp_t resp;
    proto_join_group_req_join_group_request_protocol_t p;
    proto_join_group_req_init(&r);
    proto_join_group_req_join_group_request_protocol_init(&p);
    p.name = S("range");
    p.metadata.p = (const uint8_t *)"meta";
    p.metadata.len = 4;
    r.group_id = bin(gjoin, (int32_t)gjoin_len);
    r.session_timeout_ms = 30000;
    r.rebalance_timeout_ms = 30000;
    r.member_id = member_id;
    r.protocol_type = S("consumer");
    r.protocols.n = 1;
    r.protocols.v = &p;
    tl_wire_set_client_id_len(client, sizeof(client));
    TL_WIRE_CALL(fd, &arena, join_group, 11, 5, &r, &resp);
    tl_wire_set_client_id("strand-test");
    return resp;
}

static void join_group(int fd)
{
    proto_join_group_resp_t resp = join(fd, S(""));
    TL_ASSERT_EQ(resp.error_code, E_MEMBER_ID_REQUIRED);
    TL_ASSERT(resp.member_id.len > 8 && !memcmp(resp.member_id.p, "cl\0ient-", 8),
              "member id of %d bytes", resp.member_id.len);
    TL_ASSERT(resp.member_id.len < (int32_t)sizeof(member), "member id too long");
    member_len = (size_t)resp.member_id.len;
    memcpy(member, resp.member_id.p, member_len);
    resp = join(fd, bin(member, (int32_t)member_len));
    TL_ASSERT_EQ(resp.error_code, E_NONE);
    TL_ASSERT_EQ(resp.generation_id, 1);
    TL_ASSERT(resp.member_id.len == (int32_t)member_len &&
                  !memcmp(resp.member_id.p, member, member_len) &&
                  resp.leader.len == (int32_t)member_len &&
                  !memcmp(resp.leader.p, member, member_len),
              "JoinGroup: member or leader id changed");
    TL_ASSERT(resp.members.n == 1 && resp.members.v[0].member_id.len == (int32_t)member_len &&
                  !memcmp(resp.members.v[0].member_id.p, member, member_len),
              "JoinGroup: the leader's member list");

    proto_sync_group_req_t sr;
    proto_sync_group_resp_t sresp;
    proto_sync_group_req_sync_group_request_assignment_t a;
    proto_sync_group_req_init(&sr);
    proto_sync_group_req_sync_group_request_assignment_init(&a);
    a.member_id = bin(member, (int32_t)member_len);
    a.assignment.p = (const uint8_t *)"assigned";
    a.assignment.len = 8;
    sr.group_id = bin(gjoin, (int32_t)gjoin_len);
    sr.generation_id = 1;
    sr.member_id = bin(member, (int32_t)member_len);
    sr.assignments.n = 1;
    sr.assignments.v = &a;
    TL_WIRE_CALL(fd, &arena, sync_group, 14, 3, &sr, &sresp);
    TL_ASSERT_EQ(sresp.error_code, E_NONE);
    TL_ASSERT(sresp.assignment.len == 8 && !memcmp(sresp.assignment.p, "assigned", 8),
              "SyncGroup: assignment");
}

/* DescribeGroups v5 and ListGroups v4 show the ids byte for byte (Kafka
 * may still be loading the group after a restart: retried). */
static void check_described(int fd)
{
    proto_describe_groups_req_t r;
    proto_describe_groups_resp_t resp;
    proto_str_t id = bin(gjoin, (int32_t)gjoin_len);
    double deadline = tl_now() + 60;
    proto_describe_groups_req_init(&r);
    r.groups.n = 1;
    r.groups.v = &id;
    for (;;) {
        TL_WIRE_CALL(fd, &arena, describe_groups, 15, 5, &r, &resp);
        int16_t err = resp.groups.n == 1 ? resp.groups.v[0].error_code : 0;
        if ((err != E_COORDINATOR_LOAD_IN_PROGRESS && err != E_COORDINATOR_NOT_AVAILABLE &&
             err != E_NOT_COORDINATOR) ||
            tl_now() > deadline)
            break;
        usleep(200000);
    }
    const proto_describe_groups_resp_described_group_t *g = &resp.groups.v[0];
    TL_ASSERT(g->error_code == E_NONE && g->members.n == 1, "DescribeGroups: error %d, %d members",
              g->error_code, g->members.n);
    TL_ASSERT(g->group_state.len == 6 && !memcmp(g->group_state.p, "Stable", 6), "state");
    const proto_describe_groups_resp_described_group_member_t *m = &g->members.v[0];
    expect_bytes(m->member_id.p, (size_t)m->member_id.len, member, member_len, "member id");
    expect_bytes(m->client_id.p, (size_t)m->client_id.len, client, sizeof(client), "client id");

    proto_list_groups_req_t lr;
    proto_list_groups_resp_t lresp;
    int found = 0;
    proto_list_groups_req_init(&lr);
    TL_WIRE_CALL(fd, &arena, list_groups, 16, 4, &lr, &lresp);
    for (int32_t i = 0; i < lresp.groups.n; i++)
        found += lresp.groups.v[i].group_id.len == (int32_t)gjoin_len &&
                 !memcmp(lresp.groups.v[i].group_id.p, gjoin, gjoin_len);
    TL_ASSERT_EQ(found, 1);
}

/* ---- validated strings ---- */

static void create_with(int fd, proto_str_t key, proto_str_t value)
{
    proto_create_topics_req_t r;
    proto_create_topics_resp_t resp;
    proto_create_topics_req_creatable_topic_t t;
    proto_create_topics_req_creatable_topic_config_t c;
    char *name = tl_topic_name("t0601-cfg");
    proto_create_topics_req_init(&r);
    proto_create_topics_req_creatable_topic_init(&t);
    proto_create_topics_req_creatable_topic_config_init(&c);
    c.name = key;
    c.value = value;
    t.name = S(name);
    t.num_partitions = 1;
    t.replication_factor = 1;
    t.configs.n = 1;
    t.configs.v = &c;
    r.topics.n = 1;
    r.topics.v = &t;
    r.validate_only = true;
    TL_WIRE_CALL(fd, &arena, create_topics, 19, 5, &r, &resp);
    TL_ASSERT(resp.topics.n == 1, "CreateTopics: %d topics", resp.topics.n);
    tl_log("CreateTopics: error %d '%.*s'", resp.topics.v[0].error_code,
           (int)resp.topics.v[0].error_message.len, resp.topics.v[0].error_message.p);
    TL_ASSERT_EQ(resp.topics.v[0].error_code, E_INVALID_CONFIG);
    free(name);
}

static void validated(int fd)
{
    create_with(fd, S("retention.ms"), bin("1000\0x", 6));
    create_with(fd, bin("retention.ms\0x", 14), S("1000"));
}

static void check_all(const char *bs)
{
    int fd = tl_connect(bs, 20000);
    TL_ASSERT(fd >= 0, "connect %s", bs);
    raw_fetch_rdk(fd);
    raw_fetch_v1(fd);
    raw_fetch_v8(fd);
    check_groups_apart(fd);
    check_described(fd);
    close(fd);
}

int main(void)
{
    static const char *const extra[] = {"group.initial.rebalance.delay.ms=0", NULL};
    tl_broker b = {0};
    char *dir;

    tl_init("0601-nul-bytes");
    arena_init(&arena, 1 << 16);
    dir = tl_scratch_dir("0601-broker");
    topic = tl_topic_name("t0601");
    group = tl_topic_name("g0601");
    group2 = tl_topic_name("g0601-raw");
    char *g = tl_topic_name("g0601-nul");
    snprintf(gnul, sizeof(gnul), "%s", g);
    gnul_len = strlen(gnul) + 2; /* "<g>\0x" */
    gnul[gnul_len - 1] = 'x';
    free(g);
    g = tl_topic_name("g0601-j");
    gjoin_len = (size_t)snprintf(gjoin, sizeof(gjoin), "%s", g) + 5;
    memcpy(gjoin + gjoin_len - 5, "\0oin", 5);
    free(g);
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
    commit_group(fd, bin(gnul, (int32_t)gnul_len), 7);
    commit_group(fd, bin(gnul, (int32_t)strlen(gnul)), 8);
    join_group(fd);
    validated(fd);
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
