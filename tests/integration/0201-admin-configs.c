/* 0201-admin-configs: topic configs changed and read back.
 * DescribeConfigs lists every topic key with its default and source;
 * legacy AlterConfigs replaces the whole dynamic set (keys it does not
 * name go back to their defaults); IncrementalAlterConfigs (raw, which
 * librdkafka 2.0.2 cannot send) sets, deletes, appends to and subtracts
 * from single keys; bad input (unknown keys, invalid values, APPEND to a
 * non-list, duplicate keys, an unknown topic) gets Kafka's codes and
 * changes nothing; validate_only changes nothing. The broker resource is
 * described too, with the keys of the broker's properties file as
 * STATIC_BROKER_CONFIG. */
#include "0200-admin.h"

static adm_cfg cfg;

static void describe(rd_kafka_t *rk, const char *topic)
{
    adm_describe(rk, RD_KAFKA_RESOURCE_TOPIC, topic, &cfg);
    TL_ASSERT_EQ(cfg.err, 0);
}

static void check_defaults(rd_kafka_t *rk, const char *topic)
{
    static const char *const keys[] = {
        "cleanup.policy", "compression.type", "delete.retention.ms", "file.delete.delay.ms",
        "flush.messages", "flush.ms", "index.interval.bytes", "max.compaction.lag.ms",
        "max.message.bytes", "message.timestamp.after.max.ms",
        "message.timestamp.before.max.ms", "message.timestamp.type", "min.cleanable.dirty.ratio",
        "min.compaction.lag.ms", "min.insync.replicas", "preallocate", "retention.bytes",
        "retention.ms", "segment.bytes", "segment.index.bytes", "segment.jitter.ms",
        "segment.ms", "unclean.leader.election.enable", NULL};
    describe(rk, topic);
    for (int i = 0; keys[i]; i++)
        TL_ASSERT(adm_find(&cfg, keys[i]) >= 0, "DescribeConfigs lacks %s", keys[i]);
    adm_expect(&cfg, "retention.ms", "604800000", RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
    adm_expect(&cfg, "cleanup.policy", "delete", RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
    adm_expect(&cfg, "segment.ms", "604800000", RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
    adm_expect(&cfg, "message.timestamp.type", "CreateTime", RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
    int i = adm_find(&cfg, "cleanup.policy");
    TL_ASSERT(cfg.e[i].nsyn == 1 && !strcmp(cfg.e[i].syn0, "log.cleanup.policy") &&
                  cfg.e[i].syn0_source == RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG,
              "cleanup.policy synonyms: %d %s", cfg.e[i].nsyn, cfg.e[i].syn0);
}

static void check_legacy(rd_kafka_t *rk, const char *topic)
{
    const char *const first[] = {"retention.ms", "1000", "segment.ms", "3600000", NULL};
    const char *const second[] = {"segment.ms", "7200000", NULL};
    const char *const bad[] = {"retention.ms", "soon", NULL};
    const char *const unknown[] = {"no.such.config", "1", NULL};

    TL_ASSERT_EQ(adm_alter_legacy(rk, topic, first, 0), 0);
    describe(rk, topic);
    adm_expect(&cfg, "retention.ms", "1000", RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    adm_expect(&cfg, "segment.ms", "3600000", RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    /* the whole set is replaced: retention.ms goes back to its default */
    TL_ASSERT_EQ(adm_alter_legacy(rk, topic, second, 0), 0);
    describe(rk, topic);
    adm_expect(&cfg, "retention.ms", "604800000", RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
    adm_expect(&cfg, "segment.ms", "7200000", RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    TL_ASSERT_EQ(adm_alter_legacy(rk, topic, bad, 0), RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    TL_ASSERT_EQ(adm_alter_legacy(rk, topic, unknown, 0), RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    TL_ASSERT_EQ(adm_alter_legacy(rk, topic, first, 1), 0);
    describe(rk, topic);
    adm_expect(&cfg, "retention.ms", "604800000", RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
    adm_expect(&cfg, "segment.ms", "7200000", RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
}

static void check_incremental(rd_kafka_t *rk, const char *bs, const char *topic)
{
    const char *const set[] = {"set", "retention.ms", "5000", "append", "cleanup.policy",
                               "compact", NULL};
    const char *const sub[] = {"subtract", "cleanup.policy", "delete", "delete", "segment.ms",
                               NULL, NULL};
    const char *const del_unknown[] = {"delete", "no.such.config", NULL, NULL};
    const char *const set_unknown[] = {"set", "no.such.config", "1", NULL};
    const char *const bad_value[] = {"set", "max.message.bytes", "-1", NULL};
    const char *const append_long[] = {"append", "retention.ms", "1", NULL};
    const char *const dup[] = {"set", "retention.ms", "7", "set", "retention.ms", "8", NULL};
    const char *const vo[] = {"set", "retention.ms", "9", NULL};

    TL_ASSERT_EQ(adm_incremental(bs, topic, set, 0), 0);
    describe(rk, topic);
    adm_expect(&cfg, "retention.ms", "5000", RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    adm_expect(&cfg, "cleanup.policy", "delete,compact",
               RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    TL_ASSERT_EQ(adm_incremental(bs, topic, sub, 0), 0);
    describe(rk, topic);
    adm_expect(&cfg, "cleanup.policy", "compact", RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    adm_expect(&cfg, "segment.ms", "604800000", RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
    TL_ASSERT_EQ(adm_incremental(bs, topic, del_unknown, 0), 0);
    TL_ASSERT_EQ(adm_incremental(bs, topic, set_unknown, 0), RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    TL_ASSERT_EQ(adm_incremental(bs, topic, bad_value, 0), RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    TL_ASSERT_EQ(adm_incremental(bs, topic, append_long, 0), RD_KAFKA_RESP_ERR_INVALID_CONFIG);
    TL_ASSERT_EQ(adm_incremental(bs, topic, dup, 0), RD_KAFKA_RESP_ERR_INVALID_REQUEST);
    TL_ASSERT_EQ(adm_incremental(bs, topic, vo, 1), 0);
    TL_ASSERT_EQ(adm_incremental(bs, "no-such-topic-0201", vo, 0),
                 RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
    describe(rk, topic);
    adm_expect(&cfg, "retention.ms", "5000", RD_KAFKA_CONFIG_SOURCE_DYNAMIC_TOPIC_CONFIG);
    adm_expect(&cfg, "max.message.bytes", "1048588", -1);
}

static void check_broker(rd_kafka_t *rk)
{
    const struct rd_kafka_metadata *md;
    char id[16];
    TL_ASSERT(!rd_kafka_metadata(rk, 0, NULL, &md, 10000), "metadata");
    snprintf(id, sizeof(id), "%d", md->brokers[0].id);
    rd_kafka_metadata_destroy(md);
    adm_describe(rk, RD_KAFKA_RESOURCE_BROKER, id, &cfg);
    TL_ASSERT_EQ(cfg.err, 0);
    TL_ASSERT(cfg.n > 100, "only %d broker configs", cfg.n);
    /* tl_broker_start and run-tests.sh both set num.partitions=4 */
    adm_expect(&cfg, "num.partitions", "4", RD_KAFKA_CONFIG_SOURCE_STATIC_BROKER_CONFIG);
    adm_expect(&cfg, "log.segment.bytes", "1073741824", RD_KAFKA_CONFIG_SOURCE_DEFAULT_CONFIG);
    int i = adm_find(&cfg, "ssl.keystore.password");
    TL_ASSERT(i >= 0 && cfg.e[i].sensitive && !strcmp(cfg.e[i].value, "<null>"),
              "ssl.keystore.password is sensitive and null");
}

int main(void)
{
    tl_init("0201-admin-configs");
    const char *bs = tl_bootstrap();
    rd_kafka_t *rk = adm_client(bs);
    char *topic = tl_topic_name("configs");

    TL_ASSERT_EQ(adm_create(rk, topic, 1, 1, NULL, 0, NULL, 0), 0);
    tl_wait_topic(rk, topic, 30000);
    check_defaults(rk, topic);
    check_legacy(rk, topic);
    check_incremental(rk, bs, topic);
    adm_describe(rk, RD_KAFKA_RESOURCE_TOPIC, "no-such-topic-0201", &cfg);
    TL_ASSERT_EQ(cfg.err, RD_KAFKA_RESP_ERR_UNKNOWN_TOPIC_OR_PART);
    check_broker(rk);
    rd_kafka_destroy(rk);
    free(topic);
    return tl_done();
}
