/* The broker's configuration: the one table of broker keys
 * (cluster/cfg_broker_table.c) and the server.properties parser that takes
 * its defaults and checks from it (broker/broker_config.c).
 *   - The table: sorted, one update mode per key, passwords sensitive,
 *     every default passing its own key's check (a table whose default
 *     Kafka would refuse is a typo), Kafka 4.4's update modes and
 *     documentation for a sample of keys.
 *   - Checks with Kafka's messages, as a Kafka 4.4 broker refuses the same
 *     values at start-up (checked with its KafkaConfig).
 *   - The parser: Kafka's defaults from the table, values from the file,
 *     refusals of values Kafka refuses; security settings Strand does not
 *     implement yet refused by name unless they have Kafka's default. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "broker/broker_config.h"
#include "broker/broker_storage.h"
#include "cluster/cfg_broker.h"
#include "tests/unit/unit.h"
#include "util/logging.h"

/* ---- the table ---- */

static void test_table_shape(void)
{
    int n, modes;
    const cfg_broker_key_t *t = cfg_broker_keys(&n);
    char err[512];

    CU_ASSERT(n > 300);
    for (int i = 0; i < n; i++) {
        const cfg_broker_key_t *k = &t[i];
        if (i > 0)
            CU_ASSERT(strcmp(t[i - 1].name, k->name) < 0);
        CU_ASSERT_PTR_EQUAL(cfg_broker_find(k->name), k);
        modes = !!(k->flags & CFG_RO) + !!(k->flags & CFG_PER_BROKER) +
                !!(k->flags & CFG_CLUSTER_WIDE);
        CU_ASSERT_EQUAL(modes, 1);
        CU_ASSERT_EQUAL(k->type == CFG_T_PASSWORD, (k->flags & CFG_SENS) != 0);
        if (k->flags & CFG_REQ)
            CU_ASSERT_PTR_NULL(k->dflt);
        if (k->check == CFG_CK_CHOICE || k->check == CFG_CK_CHOICE_CI)
            CU_ASSERT_PTR_NOT_NULL(k->choices);
        if (k->dflt && cfg_broker_check(k, k->dflt, err, sizeof(err)) != 0)
            CU_FAIL(err);
    }
    CU_ASSERT_PTR_NULL(cfg_broker_find("no.such.key"));
    CU_ASSERT_PTR_NULL(cfg_broker_find("retention.ms")); /* a topic key */
}

/* Kafka 4.4's classification of a few keys of each kind. */
static void test_table_facts(void)
{
    static const struct {
        const char *name;
        uint8_t mode;
    } want[] = {
        {"num.partitions", CFG_RO},        {"node.id", CFG_RO},
        {"listeners", CFG_PER_BROKER},     {"ssl.keystore.location", CFG_PER_BROKER},
        {"log.retention.ms", CFG_CLUSTER_WIDE}, {"num.io.threads", CFG_CLUSTER_WIDE},
        {"message.max.bytes", CFG_CLUSTER_WIDE}, {"log.retention.hours", CFG_RO},
    };
    const cfg_broker_key_t *k;

    for (size_t i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
        k = cfg_broker_find(want[i].name);
        CU_ASSERT_PTR_NOT_NULL_FATAL(k);
        CU_ASSERT_EQUAL(k->flags & (CFG_RO | CFG_PER_BROKER | CFG_CLUSTER_WIDE), want[i].mode);
    }
    k = cfg_broker_find("node.id");
    CU_ASSERT(k->flags & CFG_REQ);
    k = cfg_broker_find("ssl.keystore.password");
    CU_ASSERT(k->flags & CFG_SENS);
    k = cfg_broker_find("log.segment.bytes");
    CU_ASSERT_STRING_EQUAL(k->dflt, "1073741824");
    CU_ASSERT_PTR_NOT_NULL(k->doc);
    CU_ASSERT_PTR_NOT_NULL(cfg_broker_find("listeners")->doc);
    CU_ASSERT_PTR_NULL(cfg_broker_find("log.cleaner.threads")->doc); /* not acted on */
}

/* cfg_broker_check(name, value) == want (NULL: accepted). */
static void expect_check(const char *name, const char *value, const char *want)
{
    const cfg_broker_key_t *k = cfg_broker_find(name);
    char err[512] = "";
    int16_t rc;

    CU_ASSERT_PTR_NOT_NULL_FATAL(k);
    rc = cfg_broker_check(k, value, err, sizeof(err));
    if (!want) {
        CU_ASSERT_EQUAL(rc, 0);
        if (rc)
            printf("\n  %s=%s refused: %s\n", name, value, err);
        return;
    }
    CU_ASSERT_EQUAL(rc, 40);
    CU_ASSERT_STRING_EQUAL(err, want);
    if (strcmp(err, want))
        printf("\n  %s=%s: got '%s'\n", name, value, err);
}

static void test_checks(void)
{
    expect_check("num.partitions", " 3 ", NULL);
    expect_check("num.partitions", "0",
                 "Invalid value 0 for configuration num.partitions: Value must be at least 1");
    expect_check("num.partitions", "three",
                 "Invalid value three for configuration num.partitions: Not a number of type INT");
    expect_check("num.partitions", "2147483648",
                 "Invalid value 2147483648 for configuration num.partitions: Not a number of "
                 "type INT");
    expect_check("log.retention.ms", "-1", NULL);
    expect_check("log.segment.bytes", "1000",
                 "Invalid value 1000 for configuration log.segment.bytes: Value must be at "
                 "least 1048576");
    expect_check("offsets.topic.replication.factor", "40000",
                 "Invalid value 40000 for configuration offsets.topic.replication.factor: Not "
                 "a number of type SHORT");
    expect_check("auto.create.topics.enable", "TRUE", NULL);
    expect_check("auto.create.topics.enable", "yes",
                 "Invalid value yes for configuration auto.create.topics.enable: Expected value "
                 "to be either true or false");
    expect_check("compression.gzip.level", "-1", NULL);
    expect_check("compression.gzip.level", "0",
                 "Invalid value 0 for configuration compression.gzip.level: Value must be "
                 "between 1 and 9 or equal to -1");
    expect_check("compression.type", "lz4", NULL);
    expect_check("compression.type", "brotli",
                 "Invalid value brotli for configuration compression.type: String must be one "
                 "of: uncompressed, zstd, lz4, snappy, gzip, producer");
    expect_check("log.cleanup.policy", "compact, delete", NULL);
    expect_check("log.cleanup.policy", "delete,archive",
                 "Invalid value archive for configuration log.cleanup.policy: String must be "
                 "one of: compact, delete");
    expect_check("process.roles", "broker,controller", NULL);
    expect_check("group.consumer.migration.policy", "disabled", NULL);
    expect_check("log.cleaner.min.cleanable.ratio", "1.5",
                 "Invalid value 1.5 for configuration log.cleaner.min.cleanable.ratio: Value "
                 "must be no more than 1");
    expect_check("controller.quorum.voters", "1@localhost:9093,2@[::1]:9093", NULL);
    expect_check("controller.quorum.voters", "localhost:9093",
                 "Invalid configuration value for controller.quorum.voters. Each entry should "
                 "be in the form `{id}@{host}:{port}`.");
    expect_check("controller.quorum.voters", "1@localhost",
                 "Failed to parse host name from entry 1@localhost for the configuration "
                 "controller.quorum.voters. Each entry should be in the form `{id}@{host}:{port}`.");
    expect_check("controller.quorum.bootstrap.servers", "localhost:9093", NULL);
    expect_check("controller.quorum.bootstrap.servers", "localhost",
                 "Failed to parse host name from localhost for the configuration controller."
                 "quorum.bootstrap.servers. Each entry should be in the form \"{host}:{port}\"");
    expect_check("log.cleanup.policy", "delete,",
                 "Configuration 'log.cleanup.policy' values must not be empty.");
    expect_check("group.consumer.migration.policy", "foo",
                 "Invalid value foo for configuration group.consumer.migration.policy: String "
                 "must be one of (case insensitive): DISABLED, DOWNGRADE, UPGRADE, BIDIRECTIONAL");
    expect_check("remote.log.storage.manager.class.name", "",
                 "Invalid value  for configuration remote.log.storage.manager.class.name: "
                 "String must be non-empty");
}

/* ---- the parser ---- */

static char props_path[256];

/* A single-node KRaft configuration, as Kafka 4.4 needs it at least. */
static const char BASE[] = "process.roles=broker,controller\n"
                           "node.id=1\n"
                           "controller.quorum.voters=1@localhost:9093\n"
                           "listeners=PLAINTEXT://:9092,CONTROLLER://:9093\n"
                           "controller.listener.names=CONTROLLER\n"
                           "log.dirs=/tmp/x\n";

/* Loads BASE (unless text replaces it: base 0) and then text as
 * server.properties; returns broker_config_load's result. */
static int load_with(broker_config_t *cfg, int base, const char *text)
{
    FILE *f = fopen(props_path, "w");
    int rc;

    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    if (base)
        fputs(BASE, f);
    fputs(text, f);
    fclose(f);
    rc = broker_config_load(cfg, props_path, NULL, 0);
    if (rc < 0)
        broker_config_free(cfg);
    return rc;
}

static int load(broker_config_t *cfg, const char *text)
{
    return load_with(cfg, 1, text);
}

static void test_parser_defaults(void)
{
    broker_config_t cfg;

    CU_ASSERT_EQUAL_FATAL(load(&cfg, ""), 0);
    CU_ASSERT_EQUAL(cfg.node_id, 1);
    CU_ASSERT(cfg.role_broker && cfg.role_controller);
    CU_ASSERT_EQUAL(cfg.nlisteners, 2);
    CU_ASSERT_STRING_EQUAL(cfg.inter_broker_listener_name, "PLAINTEXT");
    CU_ASSERT_EQUAL(cfg.num_partitions, 1);
    CU_ASSERT_EQUAL(cfg.num_io_threads, 8);
    CU_ASSERT_EQUAL(cfg.log_segment_bytes, 1073741824);
    CU_ASSERT_EQUAL(cfg.log_retention_ms, 168 * 3600000LL);
    CU_ASSERT_EQUAL(cfg.message_max_bytes, 1048588);
    CU_ASSERT_EQUAL(cfg.offsets_topic_num_partitions, 50);
    CU_ASSERT_EQUAL(cfg.log_flush_interval_messages, INT64_MAX);
    CU_ASSERT_STRING_EQUAL(cfg.compression_type, "producer");
    CU_ASSERT(cfg.auto_create_topics_enable);
    broker_config_free(&cfg);
}

static void test_parser_values(void)
{
    broker_config_t cfg;

    CU_ASSERT_EQUAL_FATAL(load(&cfg, "num.partitions = 6 \nlog.retention.minutes=5\n"
                                     "log.cleanup.policy=compact\nauto.create.topics.enable=FALSE\n"
                                     "log.message.timestamp.type= LogAppendTime\n"),
                          0);
    CU_ASSERT_EQUAL(cfg.num_partitions, 6);
    CU_ASSERT_EQUAL(cfg.log_retention_ms, 300000);
    CU_ASSERT_STRING_EQUAL(cfg.log_cleanup_policy, "compact");
    CU_ASSERT_FALSE(cfg.auto_create_topics_enable);
    CU_ASSERT(cfg.log_message_timestamp_log_append);
    broker_config_free(&cfg);
}

static void test_parser_refuses(void)
{
    static const char *const bad[] = {
        "num.partitions=0\n",         "log.segment.bytes=1000\n", "num.io.threads=x\n",
        "log.retention.hours=soon\n", "compression.type=brotli\n",
        "log.message.timestamp.type=Now\n",
        "num.network.threads=0\n", /* not acted on, checked all the same */
        "node.id=2\n",             /* not a voter */
        "broker.id=7\n",           "listeners=PLAINTEXT://:9092,PLAINTEXT://:9094,CONTROLLER://:9093\n",
        "listener.security.protocol.map=PLAINTEXT:PLAINTEXT\n",
        "inter.broker.listener.name=CONTROLLER\n",
    };
    broker_config_t cfg;

    for (size_t i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
        CU_ASSERT_EQUAL(load(&cfg, bad[i]), -1);
    CU_ASSERT_EQUAL(load_with(&cfg, 0, "node.id=1\nlog.dirs=/tmp/x\n"), -1); /* no roles */
}

/* Loads BASE + text with the log captured; returns the result, the first
 * error line in msg. */
static int load_logged(const char *text, char *msg, size_t cap)
{
    char path[300];
    broker_config_t cfg;
    int saved = dup(2), fd, rc;
    FILE *f;

    snprintf(path, sizeof(path), "%s.log", props_path);
    fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0 && saved >= 0);
    lg_set_level(LG_ERROR);
    dup2(fd, 2);
    rc = load(&cfg, text);
    fflush(stderr);
    dup2(saved, 2);
    close(saved);
    close(fd);
    lg_set_level(LG_ERROR + 1);
    if (rc == 0)
        broker_config_free(&cfg);
    msg[0] = '\0';
    if ((f = fopen(path, "r")) && fgets(msg, (int)cap, f))
        msg[strcspn(msg, "\n")] = '\0';
    if (f)
        fclose(f);
    unlink(path);
    return rc;
}

/* Security settings Strand does not implement yet refuse, naming the key,
 * unless they have Kafka's default. */
static void test_security_keys(void)
{
    static const char *const refused[][2] = {
        {"authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer\n"
         "allow.everyone.if.no.acl.found=false\n",
         "'authorizer.class.name' is an authorization setting"},
        {"ssl.keystore.location=/etc/broker.jks\n", "'ssl.keystore.location' is a TLS setting"},
        {"ssl.keystore.password=secret\n", "'ssl.keystore.password' is a TLS setting"},
        {"ssl.client.auth=required\n", "'ssl.client.auth' is a TLS setting"},
        {"sasl.enabled.mechanisms=PLAIN\n", "'sasl.enabled.mechanisms' is a SASL setting"},
        {"listener.name.plaintext.ssl.keystore.location=/x\n",
         "'listener.name.plaintext.ssl.keystore.location' is a TLS setting"},
        {"listener.name.plaintext.plain.sasl.jaas.config=x\n",
         "'listener.name.plaintext.plain.sasl.jaas.config' is a SASL setting"},
        {"super.users=User:admin\n", "'super.users' is an authorization setting"},
        {"allow.everyone.if.no.acl.found=true\n", "'allow.everyone.if.no.acl.found' is an"},
        {"principal.builder.class=com.example.Builder\n", "'principal.builder.class' is a security"},
        {"delegation.token.secret.key=k\n", "'delegation.token.secret.key' is a security"},
        {"connections.max.reauth.ms=60000\n", "'connections.max.reauth.ms' is a security"},
    };
    char msg[1024];

    for (size_t i = 0; i < sizeof(refused) / sizeof(refused[0]); i++) {
        CU_ASSERT_EQUAL(load_logged(refused[i][0], msg, sizeof(msg)), -1);
        CU_ASSERT_PTR_NOT_NULL(strstr(msg, refused[i][1]));
        if (!strstr(msg, refused[i][1]))
            printf("\n  %s: got '%s'\n", refused[i][0], msg);
    }
    /* Kafka's defaults, given explicitly; a null default left empty */
    CU_ASSERT_EQUAL(load_logged("ssl.client.auth=none\nsasl.enabled.mechanisms= GSSAPI\n"
                                "ssl.enabled.protocols=TLSv1.2, TLSv1.3\nauthorizer.class.name=\n"
                                "super.users=\nallow.everyone.if.no.acl.found=FALSE\n"
                                "ssl.keystore.location=\nconnections.max.reauth.ms=0\n"
                                "security.inter.broker.protocol=PLAINTEXT\n"
                                "ssl.allow.dn.changes=False\nlistener.name.plaintext.max.connections=5\n",
                                msg, sizeof(msg)),
                    0);
    CU_ASSERT_STRING_EQUAL(msg, "");
}

/* replica.selector.class: the rack-aware selector (spaces around it
 * trimmed) or nothing; another class is refused at start, as Kafka cannot
 * load it either. */
static void test_selector(void)
{
    char msg[1024];
    CU_ASSERT_EQUAL(load_logged("replica.selector.class= "
                                "org.apache.kafka.common.replica.RackAwareReplicaSelector \n",
                                msg, sizeof(msg)),
                    0);
    CU_ASSERT_EQUAL(load_logged("replica.selector.class=\n", msg, sizeof(msg)), 0);
    CU_ASSERT_EQUAL(load_logged("replica.selector.class=com.example.Nearest\n", msg,
                                sizeof(msg)),
                    -1);
    CU_ASSERT_PTR_NOT_NULL(strstr(msg, "class com.example.Nearest cannot be found"));
    CU_ASSERT_EQUAL(cfg_broker_selector(" " CFG_RACK_AWARE_SELECTOR), 1);
    CU_ASSERT_EQUAL(cfg_broker_selector(NULL), 0);
    CU_ASSERT_EQUAL(cfg_broker_selector("  "), 0);
    CU_ASSERT_EQUAL(cfg_broker_selector("x"), -1);
}

/* The controller listener maps to PLAINTEXT when the map is not set, and
 * names are compared in any case. */
static void test_parser_listeners(void)
{
    broker_config_t cfg;

    CU_ASSERT_EQUAL_FATAL(load(&cfg, "listeners=plaintext://127.0.0.1:9092,CONTROLLER://:9093\n"
                                     "advertised.listeners=PLAINTEXT://localhost:9092\n"),
                          0);
    CU_ASSERT_STRING_EQUAL(cfg.listeners[0].name, "PLAINTEXT");
    CU_ASSERT_STRING_EQUAL(cfg.listeners[0].host, "127.0.0.1");
    CU_ASSERT_EQUAL(cfg.listeners[0].port, 9092);
    CU_ASSERT_FALSE(cfg.listeners[0].controller);
    CU_ASSERT_STRING_EQUAL(cfg.listeners[1].protocol, "PLAINTEXT");
    CU_ASSERT(cfg.listeners[1].controller);
    CU_ASSERT_EQUAL(cfg.nadvertised, 1);
    broker_config_free(&cfg);
}

/* The quorum keys land typed in cfg.quorum: the voters with ids, hosts
 * (IPv6 without brackets) and ports, the bootstrap servers, the Raft and
 * broker timeouts with Kafka's defaults, the rack. */
static void test_parser_quorum(void)
{
    broker_config_t cfg;
    const bcfg_quorum_t *q = &cfg.quorum;

    CU_ASSERT_EQUAL_FATAL(load(&cfg, ""), 0);
    CU_ASSERT_EQUAL(q->nvoters, 1);
    CU_ASSERT_EQUAL(q->voters[0].id, 1);
    CU_ASSERT_STRING_EQUAL(q->voters[0].host, "localhost");
    CU_ASSERT_EQUAL(q->voters[0].port, 9093);
    CU_ASSERT_EQUAL(q->nbootstrap, 0);
    CU_ASSERT_EQUAL(q->election_timeout_ms, 1000);
    CU_ASSERT_EQUAL(q->fetch_timeout_ms, 2000);
    CU_ASSERT_EQUAL(q->election_backoff_max_ms, 1000);
    CU_ASSERT_EQUAL(q->request_timeout_ms, 2000);
    CU_ASSERT_EQUAL(q->retry_backoff_ms, 20);
    CU_ASSERT_EQUAL(q->heartbeat_interval_ms, 2000);
    CU_ASSERT_EQUAL(q->session_timeout_ms, 9000);
    CU_ASSERT_EQUAL(q->snapshot_max_bytes, 20971520);
    CU_ASSERT_EQUAL(q->snapshot_interval_ms, 3600000);
    CU_ASSERT_EQUAL(q->max_idle_interval_ms, 500);
    CU_ASSERT_PTR_NULL(q->rack);
    CU_ASSERT(broker_config_is_voter(&cfg, 1));
    CU_ASSERT_FALSE(broker_config_is_voter(&cfg, 2));
    CU_ASSERT(broker_storage_single_node(&cfg)); /* its own quorum: no Raft */
    broker_config_free(&cfg);

    CU_ASSERT_EQUAL_FATAL(
        load(&cfg, "controller.quorum.voters=1@localhost:9093, 2@[::1]:9095,3@h3:9097\n"
                   "controller.quorum.election.timeout.ms=300\nbroker.rack=r1\n"
                   "controller.quorum.fetch.timeout.ms=600\nbroker.session.timeout.ms=4000\n"
                   "broker.heartbeat.interval.ms=500\nmetadata.max.idle.interval.ms=50\n"
                   "metadata.log.max.record.bytes.between.snapshots=1000\n"),
        0);
    CU_ASSERT_EQUAL_FATAL(q->nvoters, 3);
    CU_ASSERT_EQUAL(q->voters[1].id, 2);
    CU_ASSERT_STRING_EQUAL(q->voters[1].host, "::1");
    CU_ASSERT_EQUAL(q->voters[1].port, 9095);
    CU_ASSERT_STRING_EQUAL(q->voters[2].host, "h3");
    CU_ASSERT_EQUAL(q->election_timeout_ms, 300);
    CU_ASSERT_EQUAL(q->fetch_timeout_ms, 600);
    CU_ASSERT_EQUAL(q->session_timeout_ms, 4000);
    CU_ASSERT_EQUAL(q->heartbeat_interval_ms, 500);
    CU_ASSERT_EQUAL(q->max_idle_interval_ms, 50);
    CU_ASSERT_EQUAL(q->snapshot_max_bytes, 1000);
    CU_ASSERT_STRING_EQUAL(q->rack, "r1");
    CU_ASSERT_FALSE(broker_storage_single_node(&cfg)); /* a voter of several */
    broker_config_free(&cfg);

    /* a broker-only node of a dynamic quorum is read and runs (an
     * observer that finds the leader through the bootstrap servers) */
    CU_ASSERT_EQUAL_FATAL(load_with(&cfg, 0, "process.roles=broker\nnode.id=4\n"
                                             "controller.quorum.bootstrap.servers=c1:9093,c2:9094\n"
                                             "listeners=PLAINTEXT://:9092\n"
                                             "controller.listener.names=CONTROLLER\n"
                                             "log.dirs=/tmp/x\n"),
                          0);
    CU_ASSERT_EQUAL(q->nvoters, 0);
    CU_ASSERT_EQUAL_FATAL(q->nbootstrap, 2);
    CU_ASSERT_STRING_EQUAL(q->bootstrap[1].host, "c2");
    CU_ASSERT_EQUAL(q->bootstrap[1].port, 9094);
    CU_ASSERT(cfg.role_broker && !cfg.role_controller);
    CU_ASSERT_FALSE(broker_storage_single_node(&cfg));
    broker_config_free(&cfg);
}

/* A node of a dynamic quorum: combined, controller-only and broker-only
 * shapes are read as Kafka reads them, and only a combined node whose one
 * bootstrap server is its own controller listener is the single node
 * (etc/server.properties: no Raft, no format step); the others run the
 * Raft node. */
static void test_parser_dynamic_shapes(void)
{
    static const char combined[] =
        "process.roles=broker,controller\nnode.id=1\n"
        "listeners=PLAINTEXT://127.0.0.1:9092,CONTROLLER://127.0.0.1:9093\n"
        "controller.listener.names=CONTROLLER\nlog.dirs=/tmp/x\n";
    static const struct {
        const char *roles, *bootstrap;
        int single;
    } cases[] = {
        {NULL, "127.0.0.1:9093", 1},            /* the README's single node */
        {NULL, "localhost:9093", 1},            /* both loopback names */
        {NULL, "127.0.0.1:9093,127.0.0.1:9094,127.0.0.1:9095", 0}, /* one of three */
        {NULL, "127.0.0.1:9094", 0},            /* another node's listener */
        {NULL, "10.0.0.1:9093", 0},             /* another host */
        {"process.roles=controller\nlisteners=CONTROLLER://127.0.0.1:9093\n", "127.0.0.1:9093", 0},
    };
    broker_config_t cfg;
    char text[1024];

    for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
        snprintf(text, sizeof(text), "%scontroller.quorum.bootstrap.servers=%s\n%s", combined,
                 cases[i].bootstrap, cases[i].roles ? cases[i].roles : "");
        CU_ASSERT_EQUAL_FATAL(load_with(&cfg, 0, text), 0);
        CU_ASSERT_EQUAL(cfg.quorum.nvoters, 0);
        CU_ASSERT_EQUAL(broker_storage_single_node(&cfg), cases[i].single);
        broker_config_free(&cfg);
    }
    /* a broker-only node needs no controller listener of its own */
    CU_ASSERT_EQUAL_FATAL(load_with(&cfg, 0, "process.roles=broker\nnode.id=4\n"
                                             "controller.quorum.bootstrap.servers=127.0.0.1:9093\n"
                                             "listeners=PLAINTEXT://127.0.0.1:9192\n"
                                             "controller.listener.names=CONTROLLER\n"
                                             "listener.security.protocol.map=CONTROLLER:PLAINTEXT,"
                                             "PLAINTEXT:PLAINTEXT\nlog.dirs=/tmp/x\n"),
                          0);
    CU_ASSERT_FALSE(broker_storage_single_node(&cfg));
    broker_config_free(&cfg);
}

int main(void)
{
    snprintf(props_path, sizeof(props_path), "/tmp/strand-test-broker-config-%d.properties",
             (int)getpid());
    lg_set_level(LG_ERROR + 1);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("broker config", NULL, NULL);
    CU_add_test(s, "the table's shape", test_table_shape);
    CU_add_test(s, "Kafka 4.4's facts in the table", test_table_facts);
    CU_add_test(s, "checks with Kafka's messages", test_checks);
    CU_add_test(s, "parser: defaults from the table", test_parser_defaults);
    CU_add_test(s, "parser: values", test_parser_values);
    CU_add_test(s, "parser: refused values", test_parser_refuses);
    CU_add_test(s, "parser: listeners", test_parser_listeners);
    CU_add_test(s, "parser: security keys", test_security_keys);
    CU_add_test(s, "parser: replica.selector.class", test_selector);
    CU_add_test(s, "parser: the quorum keys", test_parser_quorum);
    CU_add_test(s, "parser: shapes of a dynamic quorum's nodes", test_parser_dynamic_shapes);
    int rc = unit_run();
    unlink(props_path);
    return rc;
}
