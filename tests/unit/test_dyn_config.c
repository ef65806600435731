/* Dynamic broker configs in the cluster layer, without a broker: the
 * layers of a broker's config and DescribeConfigs' view of them (values,
 * sources and synonyms as Kafka 4.4 answers them, checked against a Kafka
 * 4.4 broker given the same configs), the topic defaults they make, the
 * checks of a change with Kafka's messages, Java's rendering of doubles,
 * and the loggers that BROKER_LOGGER resources change. */
#include <stdio.h>
#include <string.h>

#include "cluster/cfg_broker.h"
#include "cluster/cfg_topic.h"
#include "cluster/cfg_val.h"
#include "cluster/meta_image.h"
#include "tests/unit/unit.h"
#include "util/logging.h"

static meta_str_t S(const char *s)
{
    meta_str_t m = {s, s ? (int32_t)strlen(s) : -1};
    return m;
}

static void put(meta_image_t *img, const char *res, const char *key, const char *value)
{
    meta_rec_t r;
    char err[128];
    meta_rec_init(&r, META_REC_CONFIG);
    r.u.config.resource_type = META_RES_BROKER;
    r.u.config.resource_name = S(res);
    r.u.config.name = S(key);
    r.u.config.value = S(value);
    CU_ASSERT_EQUAL(meta_image_apply(img, &r, err, sizeof(err)), 0);
}

/* The configs of the Kafka run the expected answers come from: static
 * log.retention.hours=2 and message.max.bytes=99999, the default
 * log.retention.ms=100000 and log.cleanup.policy=compact , delete, the
 * node's log.retention.ms=200000 and message.max.bytes= 3000000 . */
static void setup(meta_image_t *img, props_t *props, cfg_bview_t *bv)
{
    const char *text = "log.retention.hours=2\nmessage.max.bytes=99999\n";

    meta_image_init(img);
    put(img, "", "log.retention.ms", "100000");
    put(img, "", "log.cleanup.policy", "compact , delete");
    put(img, "", "zzz.unknown", "5");
    put(img, "1", "log.retention.ms", "200000");
    put(img, "1", "message.max.bytes", " 3000000 ");
    put(img, "1", "listener.name.plaintext.max.connections", "5");
    props_init(props);
    CU_ASSERT_EQUAL_FATAL(props_parse(props, text, strlen(text), NULL), 0);
    cfg_bview_init(bv, img, "1", props);
}

static void syn_is(const cfg_resolved_t *r, int i, const char *name, const char *value,
                   int8_t source)
{
    CU_ASSERT_FATAL(i < r->nsyn);
    CU_ASSERT_STRING_EQUAL(r->syn[i].name, name);
    if (value) {
        CU_ASSERT_STRING_EQUAL(r->syn[i].value, value);
    } else {
        CU_ASSERT_PTR_NULL(r->syn[i].value);
    }
    CU_ASSERT_EQUAL(r->syn[i].source, source);
}

static void test_layers(void)
{
    meta_image_t img;
    props_t props;
    cfg_bview_t bv;
    cfg_resolved_t r;
    int8_t src = 0;

    setup(&img, &props, &bv);
    CU_ASSERT_STRING_EQUAL(cfg_bview_set(&bv, "log.retention.ms", &src), "200000");
    CU_ASSERT_EQUAL(src, CFG_SRC_DYNAMIC_BROKER);
    CU_ASSERT_STRING_EQUAL(cfg_bview_set(&bv, "log.cleanup.policy", &src), "compact , delete");
    CU_ASSERT_EQUAL(src, CFG_SRC_DYNAMIC_DEFAULT_BROKER);
    CU_ASSERT_STRING_EQUAL(cfg_bview_get(&bv, "num.io.threads"), "8");

    /* the node: every layer of every synonym */
    cfg_broker_resolve("log.retention.ms", &bv, true, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "200000");
    CU_ASSERT_EQUAL(r.source, CFG_SRC_DYNAMIC_BROKER);
    CU_ASSERT_EQUAL_FATAL(r.nsyn, 4);
    syn_is(&r, 0, "log.retention.ms", "200000", CFG_SRC_DYNAMIC_BROKER);
    syn_is(&r, 1, "log.retention.ms", "100000", CFG_SRC_DYNAMIC_DEFAULT_BROKER);
    syn_is(&r, 2, "log.retention.hours", "2", CFG_SRC_STATIC_BROKER);
    syn_is(&r, 3, "log.retention.hours", "168", CFG_SRC_DEFAULT);
    CU_ASSERT(!(r.flags & CFG_RO));
    /* what comes before the key's own first entry is dropped */
    cfg_broker_resolve("log.retention.hours", &bv, true, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "2");
    CU_ASSERT_EQUAL(r.source, CFG_SRC_STATIC_BROKER);
    CU_ASSERT_EQUAL(r.nsyn, 2);
    CU_ASSERT(r.flags & CFG_RO);
    /* values as the broker parsed them, synonyms as stored */
    cfg_broker_resolve("message.max.bytes", &bv, true, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "3000000");
    syn_is(&r, 0, "message.max.bytes", " 3000000 ", CFG_SRC_DYNAMIC_BROKER);
    syn_is(&r, 1, "message.max.bytes", "99999", CFG_SRC_STATIC_BROKER);
    cfg_broker_resolve("log.cleanup.policy", &bv, true, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "compact,delete");

    /* the cluster-wide default: its own value, no node layer */
    cfg_broker_resolve("log.retention.ms", &bv, false, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "100000");
    CU_ASSERT_EQUAL(r.source, CFG_SRC_DYNAMIC_DEFAULT_BROKER);
    CU_ASSERT_EQUAL(r.nsyn, 1); /* the default resource shows its own layer only */
    cfg_broker_resolve("log.cleanup.policy", &bv, false, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "compact , delete");

    /* keys outside the table: sensitive and read-only when unknown, typed
     * as the key a listener override overrides */
    cfg_broker_resolve("zzz.unknown", &bv, true, &r);
    CU_ASSERT_PTR_NULL(r.value);
    CU_ASSERT_EQUAL(r.type, CFG_T_UNKNOWN);
    CU_ASSERT((r.flags & CFG_SENS) && (r.flags & CFG_RO));
    syn_is(&r, 0, "zzz.unknown", NULL, CFG_SRC_DYNAMIC_DEFAULT_BROKER);
    cfg_broker_resolve("listener.name.plaintext.max.connections", &bv, true, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "5");
    CU_ASSERT_EQUAL(r.type, CFG_T_INT);
    CU_ASSERT(r.flags & CFG_RO);
    CU_ASSERT_EQUAL_FATAL(r.nsyn, 2);
    syn_is(&r, 1, "max.connections", "2147483647", CFG_SRC_DEFAULT);
    props_free(&props);
    meta_image_free(&img);
}

static void test_topic_view(void)
{
    meta_image_t img;
    props_t props;
    cfg_bview_t bv;
    cfg_resolved_t r;
    topic_cfg_t t;

    setup(&img, &props, &bv);
    cfg_topic_resolve(cfg_topic_find("retention.ms", 12), NULL, &bv, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "200000");
    CU_ASSERT_EQUAL(r.source, CFG_SRC_DYNAMIC_BROKER);
    CU_ASSERT_EQUAL(r.nsyn, 4);
    cfg_topic_resolve(cfg_topic_find("max.message.bytes", 17), NULL, &bv, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "3000000");
    CU_ASSERT_EQUAL(r.nsyn, 3);
    cfg_topic_resolve(cfg_topic_find("segment.ms", 10), NULL, &bv, &r);
    CU_ASSERT_STRING_EQUAL(r.value, "604800000");
    CU_ASSERT_EQUAL(r.nsyn, 0);
    /* the defaults a topic gets */
    cfg_topic_defaults(&t);
    cfg_topic_apply_broker(&t, &bv);
    CU_ASSERT_EQUAL(t.log.retention_ms, 200000);
    CU_ASSERT_EQUAL(t.max_message_bytes, 3000000);
    CU_ASSERT(t.compacted && t.cleanup_delete);
    put(&img, "1", "producer.id.expiration.ms", "5000");
    cfg_bview_init(&bv, &img, "1", &props);
    cfg_topic_apply_broker(&t, &bv);
    CU_ASSERT_EQUAL(t.log.producer_id_expiration_ms, 5000);
    props_free(&props);
    meta_image_free(&img);
}

static int16_t check1(const char *key, const char *value, bool per_broker, char *err)
{
    mi_kv_t kv = {(char *)key, (char *)value};
    return cfg_broker_dyn_check(&kv, 1, per_broker, err, 512);
}

static void test_dyn_check(void)
{
    char err[512];

    CU_ASSERT_EQUAL(check1("message.max.bytes", "2000000", false, err), 0);
    CU_ASSERT_EQUAL(check1("log.retention.hours", "10", true, err), KERR_INVALID_REQUEST);
    CU_ASSERT_STRING_EQUAL(err, "Cannot update these configs dynamically: [log.retention.hours]");
    CU_ASSERT_EQUAL(check1("ssl.keystore.location", "/x", true, err), KERR_INVALID_REQUEST);
    CU_ASSERT_STRING_EQUAL(err, "These security configs can be dynamically updated only "
                                "per-listener using the listener prefix: "
                                "[ssl.keystore.location]");
    CU_ASSERT_EQUAL(check1("message.max.bytes", "abc", false, err), KERR_INVALID_REQUEST);
    CU_ASSERT_STRING_EQUAL(err, "Invalid value abc for configuration message.max.bytes: Not a "
                                "number of type INT");
    CU_ASSERT_EQUAL(check1("log.segment.bytes", " 100 ", false, err), KERR_INVALID_REQUEST);
    CU_ASSERT_STRING_EQUAL(err, "Invalid value 100 for configuration log.segment.bytes: Value "
                                "must be at least 1048576");
    CU_ASSERT_EQUAL(check1("log.cleaner.min.cleanable.ratio", "2", false, err),
                    KERR_INVALID_REQUEST);
    CU_ASSERT_STRING_EQUAL(err, "Invalid value 2.0 for configuration "
                                "log.cleaner.min.cleanable.ratio: Value must be no more than 1");
    CU_ASSERT_EQUAL(check1("listeners", "PLAINTEXT://:9093", false, err), KERR_INVALID_REQUEST);
    CU_ASSERT_STRING_EQUAL(err, "Cannot update these configs at default cluster level, broker "
                                "id must be specified: [listeners]");
    CU_ASSERT_EQUAL(check1("listeners", "PLAINTEXT://:9093", true, err), 0);
    /* listener overrides: checked as the key, cluster-wide for a few */
    CU_ASSERT_EQUAL(check1("listener.name.plaintext.max.connections", "5", false, err), 0);
    CU_ASSERT_EQUAL(check1("listener.name.plaintext.max.connections", "x", true, err),
                    KERR_INVALID_REQUEST);
    CU_ASSERT_EQUAL(check1("listener.name.plaintext.connections.max.idle.ms", "5", false, err),
                    KERR_INVALID_REQUEST);
    CU_ASSERT_EQUAL(check1("no.such.key", "1", false, err), 0);
    CU_ASSERT_EQUAL(check1("leader.replication.throttled.rate", "-1", false, err),
                    KERR_INVALID_REQUEST);
}

/* Kafka 4.4's keys that may change at run time, and whether only per
 * broker (1) or cluster-wide too (0): DynamicBrokerConfig's
 * dynamicConfigUpdateModes() of its kafka-server 4.4.0 jar. */
static const struct {
    const char *name;
    int per_broker;
} kafka_dynamic[] = {
    {"background.threads", 0},
    {"compression.gzip.level", 0},
    {"compression.lz4.level", 0},
    {"compression.type", 0},
    {"compression.zstd.level", 0},
    {"config.providers", 0},
    {"cordoned.log.dirs", 1},
    {"errors.deadletterqueue.auto.create.topics.enable", 0},
    {"errors.deadletterqueue.topic.name.prefix", 0},
    {"follower.fetch.last.tiered.offset.enable", 0},
    {"follower.replication.throttled.rate", 0},
    {"group.consumer.assignment.interval.ms", 0},
    {"group.consumer.assignor.offload.enable", 0},
    {"group.coordinator.cached.buffer.max.bytes", 0},
    {"group.share.assignment.interval.ms", 0},
    {"group.share.assignor.offload.enable", 0},
    {"group.streams.assignment.interval.ms", 0},
    {"group.streams.assignor.offload.enable", 0},
    {"leader.replication.throttled.rate", 0},
    {"listener.security.protocol.map", 1},
    {"listeners", 1},
    {"log.cleaner.backoff.ms", 0},
    {"log.cleaner.dedupe.buffer.size", 0},
    {"log.cleaner.delete.retention.ms", 0},
    {"log.cleaner.io.buffer.load.factor", 0},
    {"log.cleaner.io.buffer.size", 0},
    {"log.cleaner.io.max.bytes.per.second", 0},
    {"log.cleaner.max.compaction.lag.ms", 0},
    {"log.cleaner.min.cleanable.ratio", 0},
    {"log.cleaner.min.compaction.lag.ms", 0},
    {"log.cleaner.threads", 0},
    {"log.cleanup.policy", 0},
    {"log.flush.interval.messages", 0},
    {"log.flush.interval.ms", 0},
    {"log.index.interval.bytes", 0},
    {"log.index.size.max.bytes", 0},
    {"log.local.retention.bytes", 0},
    {"log.local.retention.ms", 0},
    {"log.message.timestamp.after.max.ms", 0},
    {"log.message.timestamp.before.max.ms", 0},
    {"log.message.timestamp.type", 0},
    {"log.preallocate", 0},
    {"log.remote.copy.lag.bytes", 0},
    {"log.remote.copy.lag.ms", 0},
    {"log.retention.bytes", 0},
    {"log.retention.ms", 0},
    {"log.roll.jitter.ms", 0},
    {"log.roll.ms", 0},
    {"log.segment.bytes", 0},
    {"log.segment.delete.delay.ms", 0},
    {"max.connection.creation.rate", 0},
    {"max.connections", 0},
    {"max.connections.per.ip", 0},
    {"max.connections.per.ip.overrides", 0},
    {"max.decompressed.message.bytes", 0},
    {"message.max.bytes", 0},
    {"metric.reporters", 0},
    {"min.insync.replicas", 0},
    {"num.io.threads", 0},
    {"num.network.threads", 0},
    {"num.recovery.threads.per.data.dir", 0},
    {"num.replica.fetchers", 0},
    {"principal.builder.class", 1},
    {"producer.id.expiration.ms", 0},
    {"remote.fetch.max.wait.ms", 0},
    {"remote.list.offsets.request.timeout.ms", 0},
    {"remote.log.index.file.cache.total.size.bytes", 0},
    {"remote.log.manager.copier.thread.pool.size", 0},
    {"remote.log.manager.copy.max.bytes.per.second", 0},
    {"remote.log.manager.expiration.thread.pool.size", 0},
    {"remote.log.manager.fetch.max.bytes.per.second", 0},
    {"remote.log.manager.follower.thread.pool.size", 0},
    {"remote.log.reader.threads", 0},
    {"replica.alter.log.dirs.io.max.bytes.per.second", 0},
    {"sasl.enabled.mechanisms", 1},
    {"sasl.jaas.config", 1},
    {"sasl.kerberos.kinit.cmd", 1},
    {"sasl.kerberos.min.time.before.relogin", 1},
    {"sasl.kerberos.principal.to.local.rules", 1},
    {"sasl.kerberos.service.name", 1},
    {"sasl.kerberos.ticket.renew.jitter", 1},
    {"sasl.kerberos.ticket.renew.window.factor", 1},
    {"sasl.login.refresh.buffer.seconds", 1},
    {"sasl.login.refresh.min.period.seconds", 1},
    {"sasl.login.refresh.window.factor", 1},
    {"sasl.login.refresh.window.jitter", 1},
    {"sasl.mechanism.inter.broker.protocol", 1},
    {"share.coordinator.cached.buffer.max.bytes", 0},
    {"ssl.cipher.suites", 1},
    {"ssl.client.auth", 1},
    {"ssl.enabled.protocols", 1},
    {"ssl.endpoint.identification.algorithm", 1},
    {"ssl.engine.factory.class", 1},
    {"ssl.key.password", 1},
    {"ssl.keymanager.algorithm", 1},
    {"ssl.keystore.certificate.chain", 1},
    {"ssl.keystore.key", 1},
    {"ssl.keystore.location", 1},
    {"ssl.keystore.password", 1},
    {"ssl.keystore.type", 1},
    {"ssl.protocol", 1},
    {"ssl.provider", 1},
    {"ssl.secure.random.implementation", 1},
    {"ssl.trustmanager.algorithm", 1},
    {"ssl.truststore.certificates", 1},
    {"ssl.truststore.location", 1},
    {"ssl.truststore.password", 1},
    {"ssl.truststore.type", 1},
    {"transaction.partition.verification.enable", 0},
    {"unclean.leader.election.enable", 0},
};

/* The key table agrees with Kafka's list, key by key. */
static void test_update_modes(void)
{
    int n, nk = (int)(sizeof(kafka_dynamic) / sizeof(kafka_dynamic[0]));
    const cfg_broker_key_t *keys = cfg_broker_keys(&n);

    for (int i = 0; i < n; i++) {
        int j = 0;
        while (j < nk && strcmp(kafka_dynamic[j].name, keys[i].name))
            j++;
        int mode = keys[i].flags & (CFG_RO | CFG_PER_BROKER | CFG_CLUSTER_WIDE);
        int want = j == nk ? CFG_RO : kafka_dynamic[j].per_broker ? CFG_PER_BROKER
                                                                   : CFG_CLUSTER_WIDE;
        if (mode != want)
            fprintf(stderr, "%s: mode %d, Kafka's %d\n", keys[i].name, mode, want);
        CU_ASSERT_EQUAL(mode, want);
    }
    for (int j = 0; j < nk; j++)
        CU_ASSERT_PTR_NOT_NULL(cfg_broker_find(kafka_dynamic[j].name));
}

static void test_java_double(void)
{
    static const struct {
        double d;
        const char *s;
    } cases[] = {{2, "2.0"},         {0.5, "0.5"},     {0.05, "0.05"}, {1e7, "1.0E7"},
                 {123.25, "123.25"}, {1e-4, "1.0E-4"}, {-3, "-3.0"},   {1.7976931348623157e308,
                                                                        "1.7976931348623157E308"}};
    char buf[40];
    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        cfg_val_java_double(cases[i].d, buf, sizeof(buf));
        CU_ASSERT_STRING_EQUAL(buf, cases[i].s);
    }
}

static void test_loggers(void)
{
    int net = lg_logger_find("strand.net");

    CU_ASSERT_EQUAL(lg_logger_find("root"), 0);
    CU_ASSERT(net > 0);
    CU_ASSERT_EQUAL(lg_logger_find("kafka"), -1);
    CU_ASSERT_EQUAL(lg_level_parse("TRACE"), LG_TRACE);
    CU_ASSERT_EQUAL(lg_level_parse("debug"), -2);
    lg_set_level(LG_WARN);
    CU_ASSERT_EQUAL(lg_logger_level(net), LG_WARN); /* root's */
    lg_logger_set(net, true, LG_DEBUG);
    CU_ASSERT_EQUAL(lg_logger_level(net), LG_DEBUG);
    lg_logger_set(0, true, LG_ERROR);
    CU_ASSERT_EQUAL(lg_logger_level(net), LG_DEBUG);
    lg_logger_set(net, false, LG_INFO);
    CU_ASSERT_EQUAL(lg_logger_level(net), LG_ERROR);
    lg_logger_set(0, false, LG_INFO); /* root cannot be unset */
    CU_ASSERT_EQUAL(lg_logger_level(0), LG_ERROR);
    CU_ASSERT_STRING_EQUAL(lg_level_name(LG_FATAL), "FATAL");
}

int main(void)
{
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("dyn_config", NULL, NULL);
    CU_add_test(s, "layers, values and synonyms", test_layers);
    CU_add_test(s, "topic view and defaults", test_topic_view);
    CU_add_test(s, "checks of a change", test_dyn_check);
    CU_add_test(s, "update modes as Kafka 4.4's", test_update_modes);
    CU_add_test(s, "Java doubles", test_java_double);
    CU_add_test(s, "loggers", test_loggers);
    return unit_run();
}
