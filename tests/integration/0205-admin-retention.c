/* 0205-admin-retention: config changes reach the live log without a
 * restart. With the test's own broker checking retention every second,
 * segment.ms lowered by IncrementalAlterConfigs makes the next appends
 * roll new segments, and retention.ms lowered by AlterConfigs then
 * deletes the rolled segments: the log start offset moves past them. */
#include "0200-admin.h"

static void produce(rd_kafka_t *rk, const char *topic, int n)
{
    for (int i = 0; i < n; i++)
        TL_ASSERT(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC(topic), RD_KAFKA_V_PARTITION(0),
                                    RD_KAFKA_V_VALUE("retained?", 9), RD_KAFKA_V_END) == 0,
                  "produce");
    TL_ASSERT(rd_kafka_flush(rk, 30000) == 0, "flush");
}

int main(void)
{
    tl_init("0205-admin-retention");
    char *dir = tl_scratch_dir("0205");
    const char *const extra[] = {"log.retention.check.interval.ms=1000", NULL};
    const char *const roll_fast[] = {"set", "segment.ms", "100", NULL};
    const char *const keep_little[] = {"segment.ms", "100", "retention.ms", "1", NULL};
    tl_broker b = {0};
    int64_t lo = -1, hi = -1;

    tl_broker_start(&b, dir, extra);
    rd_kafka_t *rk = adm_client(b.bootstrap);
    TL_ASSERT_EQ(adm_create(rk, "ret", 1, 1, NULL, 0, NULL, 0), 0);
    tl_wait_topic(rk, "ret", 30000);
    produce(rk, "ret", 5);
    TL_ASSERT_EQ(adm_incremental(b.bootstrap, "ret", roll_fast, 0), 0);
    usleep(300 * 1000);
    produce(rk, "ret", 5); /* rolls: the active segment is older than 100 ms */
    usleep(300 * 1000);
    produce(rk, "ret", 1); /* rolls again */
    sleep(2);
    TL_ASSERT(!rd_kafka_query_watermark_offsets(rk, "ret", 0, &lo, &hi, 10000), "watermarks");
    TL_ASSERT_EQ(lo, 0); /* a week of retention: nothing deleted */
    TL_ASSERT_EQ(hi, 11);

    TL_ASSERT_EQ(adm_alter_legacy(rk, "ret", keep_little, 0), 0);
    /* Kafka's retention job first runs 30 s after start-up. */
    double end = tl_now() + (b.kafka ? 60 : 20);
    while (tl_now() < end) {
        TL_ASSERT(!rd_kafka_query_watermark_offsets(rk, "ret", 0, &lo, &hi, 10000), "watermarks");
        if (lo >= 10)
            break;
        usleep(200 * 1000);
    }
    tl_log("log start offset %lld, end %lld", (long long)lo, (long long)hi);
    TL_ASSERT(lo >= 10, "retention.ms=1 did not delete the rolled segments: start %lld",
              (long long)lo);
    TL_ASSERT_EQ(hi, 11);
    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(dir);
    return tl_done();
}
