/* 0200-admin-create-topics: CreateTopics through librdkafka's admin API.
 * A topic created with configs has its partitions and exactly those
 * configs (read back with DescribeConfigs: value and DYNAMIC_TOPIC_CONFIG
 * source, the rest at their defaults); validate_only creates nothing; and
 * bad input gets Kafka's error codes and creates nothing: invalid names,
 * an internal name, zero and negative partition counts, a replication
 * factor above the broker count, unknown config keys, invalid and null
 * values, an existing name and a '.'/'_' collision. */
#include "0200-admin.h"

static adm_cfg cfg;

static void check_created(rd_kafka_t *rk, const char *topic)
{
    adm_describe(rk, RD_KAFKA_RESOURCE_TOPIC, topic, &cfg);
    TL_ASSERT_EQ(cfg.err, 0);
    TL_ASSERT(cfg.n >= 30, "only %d topic configs described", cfg.n);
    adm_expect(&cfg, "retention.ms", "123456", RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    adm_expect(&cfg, "cleanup.policy", "compact,delete",
               RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    adm_expect(&cfg, "max.message.bytes", "2000000", RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    adm_expect(&cfg, "segment.bytes", "1073741824", RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
    adm_expect(&cfg, "compression.type", "producer", RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
    adm_expect(&cfg, "message.timestamp.type", "CreateTime", -1);
    int i = adm_find(&cfg, "retention.ms");
    TL_ASSERT(cfg.e[i].nsyn >= 1 && !strcmp(cfg.e[i].syn0, "retention.ms"),
              "retention.ms synonyms: %d, first %s", cfg.e[i].nsyn, cfg.e[i].syn0);
    TL_ASSERT(!cfg.e[i].read_only && !cfg.e[i].sensitive, "retention.ms flags");
}

/* Explicit replica assignments: every partition on our broker works; a
 * broker that does not exist is INVALID_REPLICA_ASSIGNMENT. */
static int create_assigned(rd_kafka_t *rk, const char *topic, int32_t broker, int nparts)
{
    char err[256];
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    /* librdkafka wants the count here and sends -1 with the assignment */
    rd_kafka_NewTopic_t *nt = rd_kafka_NewTopic_new(topic, nparts, -1, err, sizeof(err));
    rd_kafka_AdminOptions_t *o = adm_opts(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS, 0);
    const rd_kafka_topic_result_t **res;
    size_t cnt;
    TL_ASSERT(nt, "NewTopic: %s", err);
    for (int p = 0; p < nparts; p++)
        TL_ASSERT(!rd_kafka_NewTopic_set_replica_assignment(nt, p, &broker, 1, err, sizeof(err)),
                  "assignment: %s", err);
    rd_kafka_CreateTopics(rk, &nt, 1, o, q);
    rd_kafka_event_t *ev = adm_wait(q, "CreateTopics");
    res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
    int code = cnt == 1 ? rd_kafka_topic_result_error(res[0]) : -1;
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_NewTopic_destroy(nt);
    rd_kafka_queue_destroy(q);
    return code;
}

static void expect_refused(rd_kafka_t *rk, const char *topic, int nparts, int rf,
                           const char *const *configs, int want)
{
    char msg[512];
    int code = adm_create(rk, topic, nparts, rf, configs, 0, msg, sizeof(msg));
    TL_ASSERT(code == want, "create %s: %s (%s), expected %s", topic, rd_kafka_err2name(code),
              msg, rd_kafka_err2name(want));
    tl_log("create '%s' refused: %s: %s", topic, rd_kafka_err2name(code), msg);
    TL_ASSERT_EQ(adm_nparts(rk, topic), 0);
}

int main(void)
{
    tl_init("0200-admin-create-topics");
    const char *bs = tl_bootstrap();
    rd_kafka_t *rk = adm_client(bs);
    char *topic = tl_topic_name("created"), *vo = tl_topic_name("validated");
    char *dotted = tl_topic_name("dot.ted"), *under = strdup(dotted);
    const char *const configs[] = {"retention.ms", "123456", "cleanup.policy", "compact,delete",
                                   "max.message.bytes", "2000000", NULL};
    char msg[512];

    TL_ASSERT_EQ(adm_create(rk, topic, 3, 1, configs, 0, msg, sizeof(msg)), 0);
    TL_ASSERT_EQ(tl_wait_topic(rk, topic, 30000), 3);
    check_created(rk, topic);

    TL_ASSERT_EQ(adm_create(rk, vo, 2, 1, configs, 1, msg, sizeof(msg)), 0);
    sleep(1);
    TL_ASSERT_EQ(adm_nparts(rk, vo), 0);

    /* Bad input, each with Kafka's code. */
    const char *const unknown[] = {"retention.ms", "-5", "no.such.config", "1", NULL};
    const char *const bad_long[] = {"retention.ms", "abc", NULL};
    const char *const too_small[] = {"segment.bytes", "1000", NULL};
    const char *const bad_enum[] = {"cleanup.policy", "shred", NULL};
    const char *const bad_bool[] = {"preallocate", "yes", NULL};
    const char *const null_value[] = {"retention.ms", NULL, NULL};
    const char *const lag[] = {"min.compaction.lag.ms", "10", "max.compaction.lag.ms", "5", NULL};
    expect_refused(rk, "bad name", 1, 1, NULL, RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION);
    expect_refused(rk, "..", 1, 1, NULL, RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION);
    expect_refused(rk, "caf\xc3\xa9", 1, 1, NULL, RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION);
    expect_refused(rk, "__cluster_metadata", 1, 1, NULL, RD_KAFKA_RESP_ERR_INVALID_REQUEST);
    expect_refused(rk, "zero-partitions", 0, 1, NULL, RD_KAFKA_RESP_ERR_INVALID_PARTITIONS);
    expect_refused(rk, "rf-two", 1, 2, NULL, RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR);
    expect_refused(rk, "rf-zero", 1, 0, NULL, RD_KAFKA_RESP_ERR_INVALID_REPLICATION_FACTOR);
    expect_refused(rk, "unknown-key", 1, 1, unknown, RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    expect_refused(rk, "bad-long", 1, 1, bad_long, RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    expect_refused(rk, "too-small", 1, 1, too_small, RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    expect_refused(rk, "bad-enum", 1, 1, bad_enum, RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    expect_refused(rk, "bad-bool", 1, 1, bad_bool, RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    expect_refused(rk, "null-value", 1, 1, null_value, RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    expect_refused(rk, "lag-conflict", 1, 1, lag, RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    TL_ASSERT_EQ(adm_create_raw(bs, "negative-partitions", -5, 1),
                 RD_KAFKA_RESP_ERR_INVALID_PARTITIONS);
    TL_ASSERT_EQ(adm_nparts(rk, "negative-partitions"), 0);

    /* Explicit assignments. */
    const struct rd_kafka_metadata *md;
    TL_ASSERT(!rd_kafka_metadata(rk, 0, NULL, &md, 10000), "metadata");
    int32_t self = md->brokers[0].id;
    rd_kafka_metadata_destroy(md);
    char *assigned = tl_topic_name("assigned");
    TL_ASSERT_EQ(create_assigned(rk, assigned, self, 2), 0);
    TL_ASSERT_EQ(tl_wait_topic(rk, assigned, 30000), 2);
    free(assigned);
    assigned = tl_topic_name("misassigned");
    TL_ASSERT_EQ(create_assigned(rk, assigned, self + 100, 1),
                 RD_KAFKA_RESP_ERR_INVALID_REPLICA_ASSIGNMENT);
    TL_ASSERT_EQ(adm_nparts(rk, assigned), 0);
    free(assigned);

    /* An existing name, and one that differs only by '.' vs '_'. */
    TL_ASSERT_EQ(adm_create(rk, topic, 1, 1, NULL, 0, msg, sizeof(msg)),
                 RD_KAFKA_RESP_ERR_TOPIC_ALREADY_EXISTS);
    TL_ASSERT_EQ(tl_wait_topic(rk, topic, 30000), 3);
    TL_ASSERT_EQ(adm_create(rk, dotted, 1, -1, NULL, 0, msg, sizeof(msg)), 0);
    for (char *p = under; *p; p++)
        if (*p == '.')
            *p = '_';
    expect_refused(rk, under, 1, 1, NULL, RD_KAFKA_RESP_ERR_TOPIC_EXCEPTION);

    rd_kafka_destroy(rk);
    free(topic);
    free(vo);
    free(dotted);
    free(under);
    return tl_done();
}
