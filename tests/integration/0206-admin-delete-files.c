/* 0206-admin-delete-files: the files of a deleted topic stay on disk for
 * log.segment.delete.delay.ms (renamed "<topic>-<p>.<id>-delete", so that
 * readers can finish) and are gone soon after it, as in Kafka, not at the
 * next retention check minutes later. */
#include "0200-admin.h"

#include <dirent.h>

/* How many entries of the data directory belong to topic. */
static int topic_dirs(const char *data, const char *topic)
{
    DIR *d = opendir(data);
    struct dirent *e;
    size_t tl = strlen(topic);
    int n = 0;
    TL_ASSERT(d != NULL, "opendir %s", data);
    while ((e = readdir(d)))
        n += !strncmp(e->d_name, topic, tl) && e->d_name[tl] == '-';
    closedir(d);
    return n;
}

int main(void)
{
    tl_init("0206-admin-delete-files");
    char *dir = tl_scratch_dir("0206");
    /* log.initial.task.delay.ms: Kafka's deleting task first runs 30 s
     * after start-up by default */
    const char *const extra[] = {"log.segment.delete.delay.ms=2000",
                                 "log.retention.check.interval.ms=3600000",
                                 "log.initial.task.delay.ms=0", NULL};
    tl_broker b = {0};
    char data[600];

    tl_broker_start(&b, dir, extra);
    snprintf(data, sizeof(data), "%s/data", b.dir);
    rd_kafka_t *rk = adm_client(b.bootstrap);
    TL_ASSERT_EQ(adm_create(rk, "files", 2, 1, NULL, 0, NULL, 0), 0);
    TL_ASSERT_EQ(tl_wait_topic(rk, "files", 30000), 2);
    TL_ASSERT(rd_kafka_producev(rk, RD_KAFKA_V_TOPIC("files"), RD_KAFKA_V_PARTITION(1),
                                RD_KAFKA_V_VALUE("x", 1), RD_KAFKA_V_END) == 0, "produce");
    TL_ASSERT(rd_kafka_flush(rk, 30000) == 0, "flush");
    TL_ASSERT_EQ(topic_dirs(data, "files"), 2);

    double t0 = tl_now();
    TL_ASSERT_EQ(adm_delete(rk, "files"), 0);
    usleep(300 * 1000);
    TL_ASSERT_EQ(topic_dirs(data, "files"), 2); /* the delay has not passed */
    while (topic_dirs(data, "files") && tl_now() - t0 < 30)
        usleep(50 * 1000);
    double gone = tl_now() - t0;
    TL_ASSERT_EQ(topic_dirs(data, "files"), 0);
    TL_ASSERT(gone >= 1.9, "files gone after %.2f s, before the delay of 2 s", gone);
    TL_ASSERT(gone < 6, "files gone only after %.2f s", gone);
    tl_log("the deleted topic's files went after %.2f s", gone);

    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(dir);
    return tl_done();
}
