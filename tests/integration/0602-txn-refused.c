/* 0602-txn-refused: until Strand has a transaction coordinator, a
 * transactional producer fails at once with a clear error instead of
 * waiting forever (FindCoordinator and InitProducerId answered
 * COORDINATOR_NOT_AVAILABLE, which clients retry without end). Strand
 * answers transactional ids as Kafka answers a client that may not use
 * them: TRANSACTIONAL_ID_AUTHORIZATION_FAILED, the one answer on which both
 * librdkafka and the Java producer give up at once (compat/client-bugs-
 * java.sh shows the Java side), with a message naming the reason.
 *
 *   1. librdkafka: init_transactions() fails within 5 s with a fatal
 *      TRANSACTIONAL_ID_AUTHORIZATION_FAILED (on Strand its text says
 *      there is no transaction coordinator).
 *   2. raw FindCoordinator v3 and v4 with key type 1 answer 53 with no
 *      node; InitProducerId v4 with a transactional id answers 53.
 *   3. idempotent producers (no transactional id) work as before.
 *
 * Kafka serves transactions, so with KAFKA_REF the test starts a Kafka
 * that refuses this test's transactional ids through its StandardAuthorizer
 * (a DENY ACL on the prefix, created here with CreateAcls; every other
 * resource has no ACL and is open to all): the answers checked are then
 * Kafka's own for a transactional id it will not serve. */
#include "testlib/testlib.h"
#include "testlib/wire.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define E_NONE 0
#define E_TXN_ID_AUTH 53
#define N_IDEMP 100

static arena_t arena;
static char prefix[128];

#define S tl_wire_str

/* Kafka only: DENY everything on transactional ids starting with prefix
 * (CreateAcls v3, raw: librdkafka 2.0.2 knows no TRANSACTIONAL_ID
 * resources). Resource type 5 TRANSACTIONAL_ID, pattern 4 PREFIXED,
 * operation 2 ALL, permission 2 DENY. */
static void kafka_deny(const char *bs)
{
    proto_create_acls_req_t r;
    proto_create_acls_resp_t resp;
    proto_create_acls_req_acl_creation_t c;
    int fd = tl_connect(bs, 20000);
    TL_ASSERT(fd >= 0, "connect %s", bs);
    proto_create_acls_req_init(&r);
    proto_create_acls_req_acl_creation_init(&c);
    c.resource_type = 5;
    c.resource_name = S(prefix);
    c.resource_pattern_type = 4;
    c.principal = S("User:ANONYMOUS");
    c.host = S("*");
    c.operation = 2;
    c.permission_type = 2;
    r.creations.n = 1;
    r.creations.v = &c;
    TL_WIRE_CALL(fd, &arena, create_acls, 30, 3, &r, &resp);
    TL_ASSERT(resp.results.n == 1 && resp.results.v[0].error_code == E_NONE, "CreateAcls");
    close(fd);
}

static void txn_producer(const char *bs)
{
    char txn_id[160];
    snprintf(txn_id, sizeof(txn_id), "%s-producer", prefix);
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "transactional.id", txn_id);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    double t0 = tl_now();
    rd_kafka_error_t *error = rd_kafka_init_transactions(rk, 30000);
    double took = tl_now() - t0;
    TL_ASSERT(error, "init_transactions succeeded");
    tl_log("init_transactions failed after %.2f s: %s (%s, fatal %d)", took,
           rd_kafka_error_string(error), rd_kafka_error_name(error),
           rd_kafka_error_is_fatal(error));
    TL_ASSERT(took < 5, "init_transactions took %.1f s to fail", took);
    TL_ASSERT_EQ(rd_kafka_error_code(error), RD_KAFKA_RESP_ERR_TRANSACTIONAL_ID_AUTHORIZATION_FAILED);
    TL_ASSERT(rd_kafka_error_is_fatal(error), "the error is not fatal");
    if (!tl_is_kafka())
        TL_ASSERT(strstr(rd_kafka_error_string(error), "no transaction coordinator"),
                  "no reason in '%s'", rd_kafka_error_string(error));
    rd_kafka_error_destroy(error);
    rd_kafka_destroy(rk);
}

static void raw_checks(const char *bs)
{
    char txn_id[160];
    int fd = tl_connect(bs, 20000);
    TL_ASSERT(fd >= 0, "connect %s", bs);
    snprintf(txn_id, sizeof(txn_id), "%s-raw", prefix);

    proto_find_coordinator_req_t fr;
    proto_find_coordinator_resp_t fresp;
    proto_find_coordinator_req_init(&fr);
    fr.key = S(txn_id);
    fr.key_type = 1;
    TL_WIRE_CALL(fd, &arena, find_coordinator, 10, 3, &fr, &fresp);
    TL_ASSERT_EQ(fresp.error_code, E_TXN_ID_AUTH);
    TL_ASSERT_EQ(fresp.node_id, -1);
    TL_ASSERT_EQ(fresp.port, -1);

    proto_str_t key = S(txn_id);
    fr.coordinator_keys.n = 1;
    fr.coordinator_keys.v = &key;
    TL_WIRE_CALL(fd, &arena, find_coordinator, 10, 4, &fr, &fresp);
    TL_ASSERT_EQ(fresp.coordinators.n, 1);
    TL_ASSERT_EQ(fresp.coordinators.v[0].error_code, E_TXN_ID_AUTH);
    TL_ASSERT_EQ(fresp.coordinators.v[0].node_id, -1);
    tl_log("FindCoordinator v4: '%.*s'", (int)fresp.coordinators.v[0].error_message.len,
           fresp.coordinators.v[0].error_message.p);

    proto_init_producer_id_req_t ir;
    proto_init_producer_id_resp_t iresp;
    proto_init_producer_id_req_init(&ir);
    ir.transactional_id = S(txn_id);
    ir.transaction_timeout_ms = 60000;
    TL_WIRE_CALL(fd, &arena, init_producer_id, 22, 4, &ir, &iresp);
    TL_ASSERT_EQ(iresp.error_code, E_TXN_ID_AUTH);
    TL_ASSERT_EQ(iresp.producer_id, -1);
    TL_ASSERT_EQ(iresp.producer_epoch, -1);
    close(fd);
}

static int delivered;

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    (void)rk;
    (void)opaque;
    TL_ASSERT(!msg->err, "idempotent delivery: %s", rd_kafka_err2str(msg->err));
    delivered++;
}

static void idempotent_producer(const char *bs)
{
    char *topic = tl_topic_name("t0602");
    rd_kafka_conf_t *conf = tl_conf(bs);
    tl_conf_set(conf, "enable.idempotence", "true");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, conf);
    TL_ASSERT(tl_create_topic(rk, topic, 1) >= 1, "create %s", topic);
    for (int i = 0; i < N_IDEMP; i++)
        TL_ASSERT_EQ(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                       RD_KAFKA_V_VALUE("v", 1),
                                       RD_KAFKA_V_MSGFLAGS(RD_KAFKA_MSG_F_COPY), RD_KAFKA_V_END),
                     0);
    TL_ASSERT_EQ(rd_kafka_flush(rk, 30000), 0);
    TL_ASSERT_EQ(delivered, N_IDEMP);
    rd_kafka_destroy(rk);
    free(topic);
}

int main(void)
{
    static const char *const kafka_extra[] = {
        "authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer",
        "allow.everyone.if.no.acl.found=true", NULL};
    tl_broker b = {0};

    tl_init("0602-txn-refused");
    arena_init(&arena, 1 << 16);
    char *p = tl_topic_name("txn0602");
    snprintf(prefix, sizeof(prefix), "%s", p);
    free(p);
    char *dir = tl_scratch_dir("0602-broker");
    tl_broker_start(&b, dir, tl_is_kafka() ? kafka_extra : NULL);
    if (tl_is_kafka())
        kafka_deny(b.bootstrap);

    txn_producer(b.bootstrap);
    raw_checks(b.bootstrap);
    idempotent_producer(b.bootstrap);

    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(dir);
    arena_destroy(&arena);
    return tl_done();
}
