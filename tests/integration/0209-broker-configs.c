/* 0209-broker-configs: dynamic broker configs through the protocol, as
 * Kafka 4.4 answers them (the same assertions pass against Kafka,
 * KAFKA_REF=1). IncrementalAlterConfigs and AlterConfigs on the
 * cluster-wide default ("") and on the node: refusals with Kafka's codes
 * and messages (read-only keys, per-broker keys at the default, keystore
 * keys without a listener prefix, bad values, a thread count beyond
 * double, unknown brokers, null values, duplicate keys, APPEND to a
 * non-list), validate_only, SET and DELETE through the layers
 * (DescribeConfigs sources DYNAMIC_BROKER_CONFIG and
 * DYNAMIC_DEFAULT_BROKER_CONFIG, and Kafka's synonym lists, on the broker
 * and on a topic), APPEND and SUBTRACT, AlterConfigs replacing the node's
 * set, a key Kafka does not define, librdkafka's admin API on the node;
 * BROKER_LOGGER describe and its refusals. The broker is shared with the other tests: only keys without
 * effect on them are set (the cleaner's, config.providers,
 * log.retention.ms at its default), and everything is deleted again. */
#include "0200-admin.h"
#include "0209-bcfg.h"

static arena_t arena;
static int fd;
static char node[16];
static char bc_msg[1024];

#define M bc_msg, sizeof(bc_msg)

static void refusals(void)
{
    char other[16], dbl[96], half[300];
    bc_op dup[] = {{BC_SET, "log.cleaner.backoff.ms", "1"}, {BC_SET, "log.cleaner.backoff.ms", "2"}};
    bc_op app = {BC_APPEND, "log.cleaner.backoff.ms", "1"}, sub = {BC_SUBTRACT, "num.io.threads", "1"};
    bc_op bad_op = {9, "log.cleaner.backoff.ms", "1"}, null_set = {BC_SET, "log.cleaner.backoff.ms", NULL};

    snprintf(other, sizeof(other), "%d", atoi(node) + 1000);
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, "", "log.retention.hours", "10", M), 42,
              "Cannot update these configs dynamically: [log.retention.hours]");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, node, "log.retention.hours", "10", M), 42,
              "Cannot update these configs dynamically: [log.retention.hours]");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, "", "listeners", "PLAINTEXT://127.0.0.1:1", M), 42,
              "Cannot update these configs at default cluster level, broker id must be "
              "specified: [listeners]");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, node, "ssl.keystore.location", "/x", M), 42,
              "These security configs can be dynamically updated only per-listener using the "
              "listener prefix: [ssl.keystore.location]");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, "", "message.max.bytes", "abc", M), 42,
              "Invalid value abc for configuration message.max.bytes: Not a number of type INT");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, "", "log.segment.bytes", "100", M), 42,
              "Invalid value 100 for configuration log.segment.bytes: Value must be at least "
              "1048576");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, "", "log.cleaner.min.cleanable.ratio", "2", M), 42,
              "Invalid value 2.0 for configuration log.cleaner.min.cleanable.ratio: Value must "
              "be no more than 1");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, "", "log.cleanup.policy", "bogus", M), 42,
              "Invalid value bogus for configuration log.cleanup.policy: String must be one of: "
              "compact, delete");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, other, "log.cleaner.backoff.ms", "1", M), 42, NULL);
    snprintf(half, sizeof(half), "Unexpected broker id, expected %s, but received %s", node,
             other);
    TL_ASSERT(!strcmp(bc_msg, half), "%s", bc_msg);
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, "abc", "log.cleaner.backoff.ms", "1", M), 42,
              "Node id must be an integer, but it is: abc");
    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, "", &null_set, 1, 1, M), 42,
              "Null value not supported for : log.cleaner.backoff.ms");
    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, "", dup, 2, 1, M), 42,
              "Error due to duplicate config keys");
    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, "", &app, 1, 1, M), 40,
              "Config value append is not allowed for config key: log.cleaner.backoff.ms");
    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, node, &sub, 1, 1, M), 40,
              "Config value subtract is not allowed for config key: num.io.threads");
    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, "", &bad_op, 1, 1, M), 42,
              "Unknown operations type 9");
    /* thread pools move by half to double at a time */
    const char *io[] = {"num.io.threads", NULL};
    const bc_entry *e = bc_find(bc_describe(fd, &arena, BC_BROKER, node, io), "num.io.threads");
    TL_ASSERT(e, "num.io.threads listed");
    int cur = atoi(bc_str(e->value));
    snprintf(dbl, sizeof(dbl), "%d", cur * 2 + 1);
    snprintf(half, sizeof(half), "Invalid value org.apache.kafka.common.config.ConfigException: "
             "Dynamic thread count update validation failed for num.io.threads=%d, value "
             "should not be greater than double the current value %d for configuration "
             "Invalid dynamic configuration", cur * 2 + 1, cur);
    bc_op grow = {BC_SET, "num.io.threads", dbl};
    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, node, &grow, 1, 1, M), 42, half);
    /* nothing of it was stored */
    bc_res *d = bc_describe(fd, &arena, BC_BROKER, "", NULL);
    TL_ASSERT(!bc_find(d, "log.retention.hours") && !bc_find(d, "message.max.bytes"),
              "refused changes are not stored");
}

/* value and source of key on the node, and its synonyms exactly. */
static void node_is(const char *key, const char *value, int source, const char *syns)
{
    const bc_entry *e = bc_wait(fd, &arena, BC_BROKER, node, key, value, source);
    TL_ASSERT(!strcmp(bc_syns(e), syns), "%s synonyms: %s, expected %s", key, bc_syns(e), syns);
}

static void layers(void)
{
    bc_op vo = {BC_SET, "log.cleaner.backoff.ms", "20000"};

    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, "", &vo, 1, 1, M), 0, "");
    usleep(300 * 1000);
    TL_ASSERT(!bc_find(bc_describe(fd, &arena, BC_BROKER, "", NULL), "log.cleaner.backoff.ms"),
              "validate_only stores nothing");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, "", "log.cleaner.backoff.ms", "20000", M), 0, "");
    const bc_entry *e = bc_wait(fd, &arena, BC_BROKER, "", "log.cleaner.backoff.ms", "20000",
                                BC_SRC_DEFAULT_BROKER);
    TL_ASSERT(!strcmp(bc_syns(e), "log.cleaner.backoff.ms=20000/3"), "%s", bc_syns(e));
    TL_ASSERT(!e->read_only && !e->is_sensitive && e->config_type == 5, "flags");
    node_is("log.cleaner.backoff.ms", "20000", BC_SRC_DEFAULT_BROKER,
            "log.cleaner.backoff.ms=20000/3,log.cleaner.backoff.ms=15000/5");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, node, "log.cleaner.backoff.ms", "30000", M), 0, "");
    node_is("log.cleaner.backoff.ms", "30000", BC_SRC_BROKER,
            "log.cleaner.backoff.ms=30000/2,log.cleaner.backoff.ms=20000/3,"
            "log.cleaner.backoff.ms=15000/5");
    bc_wait(fd, &arena, BC_BROKER, "", "log.cleaner.backoff.ms", "20000", BC_SRC_DEFAULT_BROKER);
    /* DELETE: back to the layer below */
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, node, "log.cleaner.backoff.ms", NULL, M), 0, "");
    node_is("log.cleaner.backoff.ms", "20000", BC_SRC_DEFAULT_BROKER,
            "log.cleaner.backoff.ms=20000/3,log.cleaner.backoff.ms=15000/5");
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, "", "log.cleaner.backoff.ms", NULL, M), 0, "");
    node_is("log.cleaner.backoff.ms", "15000", BC_SRC_DEFAULT, "log.cleaner.backoff.ms=15000/5");
    bc_wait(fd, &arena, BC_BROKER, "", "log.cleaner.backoff.ms", NULL, -2);
}

/* A key with unit synonyms, and the topic key it sets the default of. */
static void synonyms(rd_kafka_t *rk)
{
    char *topic = tl_topic_name("bcfg");

    TL_ASSERT_EQ(adm_create(rk, topic, 1, 1, NULL, 0, NULL, 0), 0);
    tl_wait_topic(rk, topic, 30000);
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, "", "log.retention.ms", "604800000", M), 0, "");
    node_is("log.retention.ms", "604800000", BC_SRC_DEFAULT_BROKER,
            "log.retention.ms=604800000/3,log.retention.hours=168/5");
    node_is("log.retention.hours", "168", BC_SRC_DEFAULT, "log.retention.hours=168/5");
    const bc_entry *e = bc_wait(fd, &arena, BC_TOPIC, topic, "retention.ms", "604800000",
                                BC_SRC_DEFAULT_BROKER);
    TL_ASSERT(!strcmp(bc_syns(e), "log.retention.ms=604800000/3,log.retention.hours=168/5"),
              "%s", bc_syns(e));
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, "", "log.retention.ms", NULL, M), 0, "");
    e = bc_wait(fd, &arena, BC_TOPIC, topic, "retention.ms", "604800000", BC_SRC_DEFAULT);
    TL_ASSERT(e->synonyms.n == 0, "%s", bc_syns(e));
    TL_ASSERT_EQ(adm_delete(rk, topic), 0);
    free(topic);
}

static void lists_and_unknown(void)
{
    bc_op app = {BC_APPEND, "config.providers", "a"}, app2 = {BC_APPEND, "config.providers", "b,a"};
    bc_op sub = {BC_SUBTRACT, "config.providers", "a"};

    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, node, &app, 1, 0, M), 0, "");
    node_is("config.providers", "a", BC_SRC_BROKER, "config.providers=a/2,config.providers=/5");
    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, node, &app2, 1, 0, M), 0, "");
    bc_wait(fd, &arena, BC_BROKER, node, "config.providers", "a,b", BC_SRC_BROKER);
    BC_EXPECT(bc_iac(fd, &arena, BC_BROKER, node, &sub, 1, 0, M), 0, "");
    bc_wait(fd, &arena, BC_BROKER, node, "config.providers", "b", BC_SRC_BROKER);
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, node, "config.providers", NULL, M), 0, "");
    bc_wait(fd, &arena, BC_BROKER, node, "config.providers", "", BC_SRC_DEFAULT);
    /* a key Kafka does not define is kept, and shown as a secret */
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, node, "strand.test.unknown", "5", M), 0, "");
    const bc_entry *e = bc_wait(fd, &arena, BC_BROKER, node, "strand.test.unknown", NULL,
                                BC_SRC_BROKER);
    TL_ASSERT(e->is_sensitive && e->read_only && e->config_type == 0, "unknown key flags");
    TL_ASSERT(!strcmp(bc_syns(e), "strand.test.unknown=<null>/2"), "%s", bc_syns(e));
    BC_EXPECT(bc_set(fd, &arena, BC_BROKER, node, "strand.test.unknown", NULL, M), 0, "");
    bc_wait(fd, &arena, BC_BROKER, node, "strand.test.unknown", NULL, -2);
}

/* AlterConfigs replaces the node's whole set. */
static void legacy(void)
{
    const char *first[] = {"log.cleaner.backoff.ms", "40000", "log.cleaner.io.buffer.size",
                           "600000", NULL};
    const char *second[] = {"log.cleaner.io.buffer.size", "700000", NULL};
    const char *bad[] = {"log.retention.hours", "1", NULL};
    const char *null_value[] = {"log.cleaner.backoff.ms", NULL, NULL};

    BC_EXPECT(bc_ac(fd, &arena, BC_BROKER, node, bad, 0, M), 42,
              "Cannot update these configs dynamically: [log.retention.hours]");
    BC_EXPECT(bc_ac(fd, &arena, BC_BROKER, node, null_value, 0, M), 42,
              "Null value not supported for : log.cleaner.backoff.ms");
    BC_EXPECT(bc_ac(fd, &arena, BC_BROKER, node, first, 1, M), 0, "");
    BC_EXPECT(bc_ac(fd, &arena, BC_BROKER, node, first, 0, M), 0, "");
    bc_wait(fd, &arena, BC_BROKER, node, "log.cleaner.io.buffer.size", "600000", BC_SRC_BROKER);
    bc_wait(fd, &arena, BC_BROKER, node, "log.cleaner.backoff.ms", "40000", BC_SRC_BROKER);
    BC_EXPECT(bc_ac(fd, &arena, BC_BROKER, node, second, 0, M), 0, "");
    bc_wait(fd, &arena, BC_BROKER, node, "log.cleaner.io.buffer.size", "700000", BC_SRC_BROKER);
    bc_wait(fd, &arena, BC_BROKER, node, "log.cleaner.backoff.ms", "15000", BC_SRC_DEFAULT);
    BC_EXPECT(bc_ac(fd, &arena, BC_BROKER, node, NULL, 0, M), 0, "");
    bc_wait(fd, &arena, BC_BROKER, node, "log.cleaner.io.buffer.size", "524288", BC_SRC_DEFAULT);
}

/* librdkafka's admin API on the node: AlterConfigs (the whole set),
 * DescribeConfigs with the DYNAMIC_BROKER_CONFIG source, a refusal with
 * Kafka's words. */
static int rk_alter(rd_kafka_t *rk, const char *const *pairs, char *msg, size_t cap)
{
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_ConfigResource_t *cr = rd_kafka_ConfigResource_new(RD_KAFKA_RESOURCE_BROKER, node);
    rd_kafka_AdminOptions_t *o = adm_opts(rk, RD_KAFKA_ADMIN_OP_ALTERCONFIGS, 0);
    const rd_kafka_ConfigResource_t **rs;
    size_t cnt;

    for (; pairs && pairs[0]; pairs += 2)
        rd_kafka_ConfigResource_set_config(cr, pairs[0], pairs[1]);
    rd_kafka_AlterConfigs(rk, &cr, 1, o, q);
    rd_kafka_event_t *ev = adm_wait(q, "AlterConfigs");
    rs = rd_kafka_AlterConfigs_result_resources(rd_kafka_event_AlterConfigs_result(ev), &cnt);
    TL_ASSERT(cnt == 1, "AlterConfigs: %zu results", cnt);
    int code = rd_kafka_ConfigResource_error(rs[0]);
    const char *m = rd_kafka_ConfigResource_error_string(rs[0]);
    snprintf(msg, cap, "%s", m ? m : "");
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    rd_kafka_ConfigResource_destroy(cr);
    rd_kafka_queue_destroy(q);
    return code;
}

static void with_librdkafka(rd_kafka_t *rk)
{
    static adm_cfg cfg;
    const char *set[] = {"log.cleaner.io.buffer.size", "600000", NULL};
    const char *ro[] = {"log.retention.hours", "1", NULL};
    double until = tl_now() + 15;

    TL_ASSERT_EQ(rk_alter(rk, ro, M), RD_KAFKA_RESP_ERR_INVALID_REQUEST);
    TL_ASSERT(!strcmp(bc_msg, "Cannot update these configs dynamically: [log.retention.hours]"),
              "%s", bc_msg);
    TL_ASSERT_EQ(rk_alter(rk, set, M), 0);
    for (;;) {
        adm_describe(rk, RD_KAFKA_RESOURCE_BROKER, node, &cfg);
        int i = adm_find(&cfg, "log.cleaner.io.buffer.size");
        if (i >= 0 && !strcmp(cfg.e[i].value, "600000"))
            break;
        TL_ASSERT(tl_now() < until, "librdkafka does not see the change");
        usleep(100 * 1000);
    }
    adm_expect(&cfg, "log.cleaner.io.buffer.size", "600000",
               RD_KAFKA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG);
    int i = adm_find(&cfg, "log.cleaner.io.buffer.size");
    TL_ASSERT(cfg.e[i].nsyn == 2 &&
                  cfg.e[i].syn0_source == RD_KAFKA_CONFIG_SOURCE_DYNAMIC_BROKER_CONFIG,
              "synonyms");
    TL_ASSERT_EQ(rk_alter(rk, NULL, M), 0);
    bc_wait(fd, &arena, BC_BROKER, node, "log.cleaner.io.buffer.size", "524288", BC_SRC_DEFAULT);
}

static void loggers(void)
{
    const char *root[] = {"root", "no.such.logger", NULL};
    bc_res *res = bc_describe(fd, &arena, BC_LOGGER, node, root);
    const bc_entry *e = bc_find(res, "root");
    char level[16], want[300];
    bc_op set = {BC_SET, "root", level}, loud = {BC_SET, "root", "LOUD"};
    bc_op none = {BC_SET, "no.such.logger", "INFO"}, del = {BC_DELETE, "root", NULL};
    bc_op app = {BC_APPEND, "root", "INFO"};
    const char *kv[] = {"root", "INFO", NULL};

    TL_ASSERT(res->error_code == 0 && res->configs.n == 1 && e, "root logger alone");
    TL_ASSERT(e->config_source == BC_SRC_LOGGER && !e->read_only && !e->is_sensitive,
              "logger flags");
    snprintf(level, sizeof(level), "%s", bc_str(e->value));
    TL_ASSERT(bc_describe(fd, &arena, BC_LOGGER, node, NULL)->configs.n > 1, "several loggers");
    BC_EXPECT(bc_iac(fd, &arena, BC_LOGGER, node, &set, 1, 0, M), 0, ""); /* unchanged */
    BC_EXPECT(bc_iac(fd, &arena, BC_LOGGER, node, &loud, 1, 0, M), 40,
              "Cannot set the log level of root to LOUD as it is not a supported log level. "
              "Valid log levels are DEBUG, ERROR, FATAL, INFO, TRACE, WARN");
    BC_EXPECT(bc_iac(fd, &arena, BC_LOGGER, node, &none, 1, 0, M), 40,
              "Logger no.such.logger does not exist!");
    BC_EXPECT(bc_iac(fd, &arena, BC_LOGGER, node, &del, 1, 0, M), 42,
              "Removing the log level of the root logger is not allowed");
    BC_EXPECT(bc_iac(fd, &arena, BC_LOGGER, node, &app, 1, 0, M), 42,
              "APPEND operation is not allowed for the BROKER_LOGGER resource");
    BC_EXPECT(bc_iac(fd, &arena, BC_LOGGER, "", &set, 1, 0, M), 42,
              "Node id must be an integer, but it is: ");
    BC_EXPECT(bc_ac(fd, &arena, BC_LOGGER, node, kv, 0, M), 42, "Unknown resource type 8");
    res = bc_describe(fd, &arena, BC_LOGGER, "", NULL);
    TL_ASSERT(res->error_code == 42 && !strcmp(bc_str(res->error_message),
                                               "Broker id must not be empty"),
              "logger of ''");
    snprintf(want, sizeof(want), "Unexpected broker id, expected %s or empty string, but "
             "received 999999", node);
    res = bc_describe(fd, &arena, BC_BROKER, "999999", NULL);
    TL_ASSERT(res->error_code == 42 && !strcmp(bc_str(res->error_message), want), "%s",
              bc_str(res->error_message));
}

int main(void)
{
    tl_init("0209-broker-configs");
    const char *bs = tl_bootstrap();
    rd_kafka_t *rk = adm_client(bs);
    const struct rd_kafka_metadata *md;

    TL_ASSERT(!rd_kafka_metadata(rk, 0, NULL, &md, 10000), "metadata");
    snprintf(node, sizeof(node), "%d", md->brokers[0].id);
    rd_kafka_metadata_destroy(md);
    arena_init(&arena, 1 << 16);
    fd = tl_connect(bs, 20000);
    TL_ASSERT(fd >= 0, "connect");
    bc_res *all = bc_describe(fd, &arena, BC_BROKER, node, NULL);
    TL_ASSERT(all->error_code == 0 && all->configs.n > 300, "%d broker keys", all->configs.n);
    refusals();
    layers();
    synonyms(rk);
    lists_and_unknown();
    legacy();
    with_librdkafka(rk);
    loggers();
    close(fd);
    arena_destroy(&arena);
    rd_kafka_destroy(rk);
    return tl_done();
}
