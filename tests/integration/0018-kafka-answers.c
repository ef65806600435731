/* 0018-kafka-answers: requests Strand answered otherwise than Apache Kafka
 * 4.4 until the differential test (tests/diff/) found them, each answered
 * as Kafka answers it. Raw requests on our codecs; passes against Kafka.
 *
 *   a nullable string of length -2     is null, not a malformed request
 *   DeleteRecords of __consumer_offsets INVALID_TOPIC_EXCEPTION
 *   CreateTopics naming a topic twice   one entry, INVALID_REQUEST, none made
 *   CreateTopics/CreatePartitions/DeleteTopics with timeout 0
 *                                       REQUEST_TIMED_OUT, nothing done
 *   DeleteTopics v6 with neither name nor id    INVALID_REQUEST
 *   an incremental Fetch of session 0   FETCH_SESSION_ID_NOT_FOUND
 *   Fetch of an unknown topic           empty (not null) aborted transactions
 *   ListOffsets/OffsetForLeaderEpoch with a current leader epoch below -1
 *                                       FENCED_LEADER_EPOCH
 *   InitProducerId v3 with an id and no epoch   INVALID_REQUEST
 *   DescribeCluster for controllers / an unknown endpoint type
 *                                       MISMATCHED / UNSUPPORTED_ENDPOINT_TYPE
 *   Metadata auto-creating a topic      UNKNOWN_TOPIC_OR_PARTITION, then the topic
 *   (Incremental)AlterConfigs: a resource named twice, a key named twice,
 *   null values (all of them named), the default topic ""
 *                                       INVALID_REQUEST with Kafka's messages,
 *                                       nothing changed */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log_batch.h"
#include "testlib/testlib.h"
#include "testlib/wire.h"
#include "util/kerr.h"

static arena_t arena;
static int wfd;

static proto_str_t S(const char *s)
{
    return tl_wire_str(s);
}

/* Produce v3 whose TransactionalId length is -2: Kafka reads any negative
 * length of a nullable string as null. */
static void produce_minus_two(const char *topic)
{
    proto_produce_req_t r;
    proto_produce_req_topic_produce_data_t t;
    proto_produce_req_partition_produce_data_t p;
    proto_produce_resp_t resp;
    log_batch_build_t opt;
    log_record_t rec = {.timestamp = 1700000000000LL, .key_len = -1, .value = (const uint8_t *)"v",
                        .value_len = 1};
    buf_t batch, body;
    size_t len;
    buf_init(&batch);
    buf_init(&body);
    log_batch_build_init(&opt);
    log_batch_build(&batch, &opt, &rec, 1);
    proto_produce_req_init(&r);
    proto_produce_req_topic_produce_data_init(&t);
    proto_produce_req_partition_produce_data_init(&p);
    r.acks = 1;
    r.timeout_ms = 10000;
    t.name = S(topic);
    p.records = (proto_records_t){batch.p, (int32_t)batch.len, -1, 0};
    t.partition_data = (typeof(t.partition_data)){1, &p};
    r.topic_data = (typeof(r.topic_data)){1, &t};
    proto_produce_req_encode(&r, 3, &body);
    TL_ASSERT(body.p[0] == 0xff && body.p[1] == 0xff, "v3 starts with TransactionalId");
    body.p[1] = 0xfe;
    int32_t corr = tl_wire_send(wfd, 0, 3, &body);
    const uint8_t *a = tl_wire_recv(wfd, 0, 3, corr, &arena, &len);
    proto_produce_resp_init(&resp);
    TL_ASSERT(proto_produce_resp_decode(&resp, 3, a, len, &arena) == 0, "Produce v3 answer");
    TL_ASSERT_EQ(resp.responses.v[0].partition_responses.v[0].error_code, KERR_NONE);
    buf_free(&batch);
}

/* Kafka makes __consumer_offsets on the first FindCoordinator. */
static void delete_records_internal(void)
{
    proto_delete_records_req_t r;
    proto_delete_records_req_delete_records_topic_t t;
    proto_delete_records_req_delete_records_partition_t p;
    proto_delete_records_resp_t resp;
    proto_find_coordinator_req_t fr;
    proto_find_coordinator_resp_t fresp;
    double deadline = tl_now() + 60;
    int16_t err;
    proto_find_coordinator_req_init(&fr);
    fr.key = S("diff-0017");
    TL_WIRE_CALL(wfd, &arena, find_coordinator, 10, 3, &fr, &fresp);
    proto_delete_records_req_init(&r);
    proto_delete_records_req_delete_records_topic_init(&t);
    proto_delete_records_req_delete_records_partition_init(&p);
    t.name = S("__consumer_offsets");
    t.partitions = (typeof(t.partitions)){1, &p};
    r.topics = (typeof(r.topics)){1, &t};
    r.timeout_ms = 10000;
    do {
        TL_WIRE_CALL(wfd, &arena, delete_records, 21, 2, &r, &resp);
        err = resp.topics.v[0].partitions.v[0].error_code;
        if (err == KERR_UNKNOWN_TOPIC_OR_PARTITION)
            usleep(200 * 1000);
    } while (err == KERR_UNKNOWN_TOPIC_OR_PARTITION && tl_now() < deadline);
    TL_ASSERT(err == KERR_INVALID_TOPIC_EXCEPTION, "DeleteRecords of __consumer_offsets: %s",
              kerr_name(err));
}

static int topic_exists(const char *topic)
{
    proto_metadata_resp_t md;
    tl_wire_metadata(wfd, &arena, 12, topic, 0, &md);
    return md.topics.n == 1 && md.topics.v[0].error_code == KERR_NONE;
}

static void create_topics(const char *a, const char *b, int32_t timeout, proto_create_topics_resp_t *resp)
{
    proto_create_topics_req_t r;
    proto_create_topics_req_creatable_topic_t t[2];
    proto_create_topics_req_init(&r);
    for (int i = 0; i < 2; i++) {
        proto_create_topics_req_creatable_topic_init(&t[i]);
        t[i].name = S(i ? b : a);
        t[i].num_partitions = 1;
        t[i].replication_factor = 1;
    }
    r.topics = (typeof(r.topics)){b ? 2 : 1, t};
    r.timeout_ms = timeout;
    TL_WIRE_CALL(wfd, &arena, create_topics, 19, 7, &r, resp);
}

static void admin_refusals(const char *topic)
{
    char *dup = tl_topic_name("diff-dup"), *late = tl_topic_name("diff-late");
    proto_create_topics_resp_t ct;
    create_topics(dup, dup, 10000, &ct);
    TL_ASSERT(ct.topics.n == 1 && ct.topics.v[0].error_code == KERR_INVALID_REQUEST,
              "a duplicate name: %d entries, first %s", ct.topics.n,
              kerr_name(ct.topics.v[0].error_code));
    create_topics(late, NULL, 0, &ct);
    TL_ASSERT_EQ(ct.topics.v[0].error_code, KERR_REQUEST_TIMED_OUT);
    TL_ASSERT(!topic_exists(dup) && !topic_exists(late), "a refused topic was made");

    proto_create_partitions_req_t cp;
    proto_create_partitions_req_create_partitions_topic_t cpt;
    proto_create_partitions_resp_t cpr;
    proto_create_partitions_req_init(&cp);
    proto_create_partitions_req_create_partitions_topic_init(&cpt);
    cpt.name = S(topic);
    cpt.count = 5;
    cp.topics = (typeof(cp.topics)){1, &cpt};
    cp.timeout_ms = 0;
    TL_WIRE_CALL(wfd, &arena, create_partitions, 37, 3, &cp, &cpr);
    TL_ASSERT_EQ(cpr.results.v[0].error_code, KERR_REQUEST_TIMED_OUT);

    proto_delete_topics_req_t dt;
    proto_delete_topics_req_delete_topic_state_t dts[2];
    proto_delete_topics_resp_t dtr;
    proto_delete_topics_req_init(&dt);
    proto_delete_topics_req_delete_topic_state_init(&dts[0]);
    dts[0].name = S(topic);
    dt.topics = (typeof(dt.topics)){1, dts};
    dt.timeout_ms = 0;
    TL_WIRE_CALL(wfd, &arena, delete_topics, 20, 6, &dt, &dtr);
    TL_ASSERT_EQ(dtr.responses.v[0].error_code, KERR_REQUEST_TIMED_OUT);
    proto_delete_topics_req_delete_topic_state_init(&dts[0]); /* name null, id zero */
    dt.timeout_ms = 10000;
    TL_WIRE_CALL(wfd, &arena, delete_topics, 20, 6, &dt, &dtr);
    TL_ASSERT_EQ(dtr.responses.v[0].error_code, KERR_INVALID_REQUEST);
    TL_ASSERT(topic_exists(topic), "DeleteTopics with timeout 0 deleted the topic");
    free(dup);
    free(late);
}

static void fetch_one(const char *topic, int32_t sid, int32_t epoch, proto_fetch_resp_t *resp)
{
    proto_fetch_req_t r;
    proto_fetch_req_fetch_topic_t t;
    proto_fetch_req_fetch_partition_t p;
    proto_fetch_req_init(&r);
    proto_fetch_req_fetch_topic_init(&t);
    proto_fetch_req_fetch_partition_init(&p);
    r.max_bytes = 1 << 20;
    r.session_id = sid;
    r.session_epoch = epoch;
    p.partition_max_bytes = 1 << 20;
    t.topic = S(topic);
    t.partitions = (typeof(t.partitions)){1, &p};
    r.topics = (typeof(r.topics)){1, &t};
    TL_WIRE_CALL(wfd, &arena, fetch, 1, 12, &r, resp);
}

static void fetch_answers(void)
{
    char *unknown = tl_topic_name("diff-nosuch");
    proto_fetch_resp_t f;
    fetch_one(unknown, 0, 5, &f);
    TL_ASSERT_EQ(f.error_code, KERR_FETCH_SESSION_ID_NOT_FOUND);
    fetch_one(unknown, 0, -1, &f);
    TL_ASSERT(f.responses.n == 1 && f.responses.v[0].partitions.n == 1, "one partition answered");
    const proto_fetch_resp_partition_data_t *pd = &f.responses.v[0].partitions.v[0];
    TL_ASSERT_EQ(pd->error_code, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    TL_ASSERT(pd->aborted_transactions.n == 0, "aborted transactions %d, not the empty list",
              (int)pd->aborted_transactions.n);
    free(unknown);
}

static void fenced_epochs(const char *topic)
{
    proto_list_offsets_req_t lo;
    proto_list_offsets_req_list_offsets_topic_t lt;
    proto_list_offsets_req_list_offsets_partition_t lp;
    proto_list_offsets_resp_t lr;
    proto_list_offsets_req_init(&lo);
    proto_list_offsets_req_list_offsets_topic_init(&lt);
    proto_list_offsets_req_list_offsets_partition_init(&lp);
    lo.replica_id = -1;
    lp.timestamp = -1;
    lp.current_leader_epoch = INT32_MIN;
    lt.name = S(topic);
    lt.partitions = (typeof(lt.partitions)){1, &lp};
    lo.topics = (typeof(lo.topics)){1, &lt};
    TL_WIRE_CALL(wfd, &arena, list_offsets, 2, 4, &lo, &lr);
    TL_ASSERT_EQ(lr.topics.v[0].partitions.v[0].error_code, KERR_FENCED_LEADER_EPOCH);

    proto_offset_for_leader_epoch_req_t oe;
    proto_offset_for_leader_epoch_req_offset_for_leader_topic_t ot;
    proto_offset_for_leader_epoch_req_offset_for_leader_partition_t op;
    proto_offset_for_leader_epoch_resp_t oer;
    proto_offset_for_leader_epoch_req_init(&oe);
    proto_offset_for_leader_epoch_req_offset_for_leader_topic_init(&ot);
    proto_offset_for_leader_epoch_req_offset_for_leader_partition_init(&op);
    oe.replica_id = -1;
    op.current_leader_epoch = -5;
    ot.topic = S(topic);
    ot.partitions = (typeof(ot.partitions)){1, &op};
    oe.topics = (typeof(oe.topics)){1, &ot};
    TL_WIRE_CALL(wfd, &arena, offset_for_leader_epoch, 23, 3, &oe, &oer);
    TL_ASSERT_EQ(oer.topics.v[0].partitions.v[0].error_code, KERR_FENCED_LEADER_EPOCH);
}

static void producer_id_half_pair(void)
{
    proto_init_producer_id_req_t r;
    proto_init_producer_id_resp_t resp;
    proto_init_producer_id_req_init(&r);
    r.transactional_id = PROTO_STR_NULL;
    r.transaction_timeout_ms = 60000;
    r.producer_id = 5;
    r.producer_epoch = -1;
    TL_WIRE_CALL(wfd, &arena, init_producer_id, 22, 3, &r, &resp);
    TL_ASSERT_EQ(resp.error_code, KERR_INVALID_REQUEST);
}

static void endpoint_types(void)
{
    proto_describe_cluster_req_t r;
    proto_describe_cluster_resp_t resp;
    proto_describe_cluster_req_init(&r);
    r.endpoint_type = 2;
    TL_WIRE_CALL(wfd, &arena, describe_cluster, 60, 1, &r, &resp);
    TL_ASSERT_EQ(resp.error_code, KERR_MISMATCHED_ENDPOINT_TYPE);
    r.endpoint_type = 7;
    TL_WIRE_CALL(wfd, &arena, describe_cluster, 60, 1, &r, &resp);
    TL_ASSERT_EQ(resp.error_code, KERR_UNSUPPORTED_ENDPOINT_TYPE);
    TL_ASSERT(resp.endpoint_type == 1 && resp.cluster_id.len == 0,
              "the refusal keeps the defaults (type %d, cluster id of %d bytes)",
              resp.endpoint_type, (int)resp.cluster_id.len);
}

static void auto_create(void)
{
    char *topic = tl_topic_name("diff-auto");
    proto_metadata_resp_t md;
    double deadline = tl_now() + 30;
    tl_wire_metadata(wfd, &arena, 9, topic, 1, &md);
    TL_ASSERT_EQ(md.topics.v[0].error_code, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    while (!topic_exists(topic)) {
        TL_ASSERT(tl_now() < deadline, "%s not auto-created after 30 s", topic);
        usleep(100 * 1000);
    }
    free(topic);
}

typedef proto_incremental_alter_configs_req_alter_configs_resource_t iac_res_t;
typedef proto_incremental_alter_configs_req_alterable_config_t iac_cfg_t;

/* An IncrementalAlterConfigs v1 of the resources (type, name, configs). */
static void iac(iac_res_t *res, int n, proto_incremental_alter_configs_resp_t *resp)
{
    proto_incremental_alter_configs_req_t r;
    proto_incremental_alter_configs_req_init(&r);
    r.resources.n = n;
    r.resources.v = res;
    TL_WIRE_CALL(wfd, &arena, incremental_alter_configs, 44, 1, &r, resp);
    TL_ASSERT_EQ(resp->responses.n, n);
}

static iac_res_t iac_topic(const char *name, iac_cfg_t *cfg, int n)
{
    iac_res_t r;
    proto_incremental_alter_configs_req_alter_configs_resource_init(&r);
    r.resource_type = 2;
    r.resource_name = S(name);
    r.configs.n = n;
    r.configs.v = cfg;
    return r;
}

static void expect_refused(const proto_incremental_alter_configs_resp_t *resp, int i,
                           const char *msg)
{
    const proto_str_t *m = &resp->responses.v[i].error_message;
    TL_ASSERT_EQ(resp->responses.v[i].error_code, KERR_INVALID_REQUEST);
    TL_ASSERT(m->len == (int32_t)strlen(msg) && !memcmp(m->p, msg, strlen(msg)),
              "entry %d: message '%.*s', expected '%s'", i, (int)m->len, m->p, msg);
}

/* The checks Kafka's broker makes of every resource first: named twice
 * (every copy refused, the other resources done), a key twice, null
 * values; then the default topic. retention.ms stays as it was. */
static void alter_refusals(const char *topic)
{
    proto_incremental_alter_configs_resp_t resp;
    iac_cfg_t set = {S("retention.ms"), 0, S("1000")};
    iac_cfg_t null2[2] = {{S("retention.ms"), 0, PROTO_STR_NULL},
                          {S("cleanup.policy"), 2, PROTO_STR_NULL}};
    iac_cfg_t twice[2] = {{S("retention.ms"), 0, S("1")}, {S("retention.ms"), 1, PROTO_STR_NULL}};
    iac_cfg_t del = {S("retention.ms"), 1, PROTO_STR_NULL};
    iac_res_t dup[3] = {iac_topic(topic, &set, 1), iac_topic(topic, &set, 1),
                        iac_topic("diff-no-such-topic", &set, 1)};

    iac(dup, 3, &resp);
    expect_refused(&resp, 0, "Each resource must appear at most once.");
    expect_refused(&resp, 1, "Each resource must appear at most once.");
    TL_ASSERT_EQ(resp.responses.v[2].error_code, KERR_UNKNOWN_TOPIC_OR_PARTITION);
    iac_res_t one = iac_topic(topic, twice, 2);
    iac(&one, 1, &resp);
    expect_refused(&resp, 0, "Error due to duplicate config keys");
    one = iac_topic(topic, null2, 2);
    iac(&one, 1, &resp);
    expect_refused(&resp, 0, "Null value not supported for : retention.ms, cleanup.policy");
    one = iac_topic("", &set, 1);
    iac(&one, 1, &resp);
    expect_refused(&resp, 0, "Default topic resources are not allowed.");
    one = iac_topic(topic, &del, 1); /* DELETE needs no value */
    iac(&one, 1, &resp);
    TL_ASSERT_EQ(resp.responses.v[0].error_code, KERR_NONE);

    proto_alter_configs_req_t ac;
    proto_alter_configs_resp_t acr;
    proto_alter_configs_req_alterable_config_t acfg = {S("retention.ms"), PROTO_STR_NULL};
    proto_alter_configs_req_alter_configs_resource_t ares;
    proto_alter_configs_req_init(&ac);
    proto_alter_configs_req_alter_configs_resource_init(&ares);
    ares.resource_type = 2;
    ares.resource_name = S(topic);
    ares.configs.n = 1;
    ares.configs.v = &acfg;
    ac.resources.n = 1;
    ac.resources.v = &ares;
    TL_WIRE_CALL(wfd, &arena, alter_configs, 33, 2, &ac, &acr);
    TL_ASSERT_EQ(acr.responses.v[0].error_code, KERR_INVALID_REQUEST);
}

int main(void)
{
    tl_init("0018-kafka-answers");
    const char *bs = tl_bootstrap();
    char *topic = tl_topic_name("diff-0017");
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    TL_ASSERT_EQ(tl_create_topic(rk, topic, 1), 1);
    arena_init(&arena, 1 << 16);
    wfd = tl_connect(bs, 20000);
    TL_ASSERT(wfd >= 0, "connect to %s", bs);
    produce_minus_two(topic);
    delete_records_internal();
    admin_refusals(topic);
    fetch_answers();
    fenced_epochs(topic);
    producer_id_half_pair();
    endpoint_types();
    auto_create();
    alter_refusals(topic);
    close(wfd);
    rd_kafka_destroy(rk);
    arena_destroy(&arena);
    free(topic);
    return tl_done();
}
