/* 0208-admin-partition-cap: requests that would create too many partitions
 * at once are refused whole, before anything is made.
 *
 *   1. Kafka's controller caps one operation at 10,000 records: CreateTopics
 *      asking for more than 10,000 partitions in all (one topic, or several
 *      together) is answered POLICY_VIOLATION "Excessively large number of
 *      partitions per request." for every topic; one whose records (a topic
 *      record, one per partition, one per config) exceed 10,000 "Unable to
 *      perform excessively large batch operation."; 9,999 partitions pass.
 *      CreatePartitions adding more than 10,000 in all: "Excessively large
 *      number of additional partitions per request."; 10,000 pass. Nothing
 *      of a refused request exists afterwards. (The boundaries that pass
 *      are asked with validate_only: nothing is created.)
 *   2. The broker's descriptor budget (Strand only: Kafka has no such
 *      check): the test's own broker is given a limit of 400 open files
 *      (prlimit), and a CreateTopics or CreatePartitions whose partitions
 *      would not fit, with room kept for connections, is refused
 *      POLICY_VIOLATION with a message saying so, creating nothing; a small
 *      one still works. */
#include "0200-admin.h"

#include <errno.h>
#include <sys/resource.h>

#define PV RD_KAFKA_RESP_ERR_POLICY_VIOLATION

static const char MANY_PARTS[] = "Excessively large number of partitions per request.";
static const char BATCH[] = "Unable to perform excessively large batch operation.";
static const char MANY_ADDED[] = "Excessively large number of additional partitions per request.";

/* Each topic's error and message from an admin result, by name. */
static void results(const rd_kafka_topic_result_t **res, size_t cnt, int n, char **names, int *errs,
                    char msgs[][256])
{
    TL_ASSERT_EQ(cnt, n);
    for (size_t r = 0; r < cnt; r++)
        for (int i = 0; i < n; i++)
            if (!strcmp(rd_kafka_topic_result_name(res[r]), names[i])) {
                const char *s = rd_kafka_topic_result_error_string(res[r]);
                errs[i] = rd_kafka_topic_result_error(res[r]);
                snprintf(msgs[i], 256, "%s", s ? s : "");
            }
}

/* CreateTopics of n topics (names[i], parts[i]) in one request; each
 * topic's error in errs[i], its message in msgs[i]. */
static void create_many(rd_kafka_t *rk, int n, char **names, const int *parts,
                        const char *const *configs, int validate_only, int *errs,
                        char msgs[][256])
{
    char err[256];
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_NewTopic_t *nt[8];
    rd_kafka_AdminOptions_t *o = adm_opts(rk, RD_KAFKA_ADMIN_OP_CREATETOPICS, validate_only);
    const rd_kafka_topic_result_t **res;
    rd_kafka_event_t *ev;
    size_t cnt;

    for (int i = 0; i < n; i++) {
        nt[i] = rd_kafka_NewTopic_new(names[i], parts[i], 1, err, sizeof(err));
        TL_ASSERT(nt[i], "NewTopic: %s", err);
        for (const char *const *c = configs; c && c[0]; c += 2)
            rd_kafka_NewTopic_set_config(nt[i], c[0], c[1]);
    }
    rd_kafka_CreateTopics(rk, nt, (size_t)n, o, q);
    ev = adm_wait(q, "CreateTopics");
    res = rd_kafka_CreateTopics_result_topics(rd_kafka_event_CreateTopics_result(ev), &cnt);
    results(res, cnt, n, names, errs, msgs);
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    for (int i = 0; i < n; i++)
        rd_kafka_NewTopic_destroy(nt[i]);
    rd_kafka_queue_destroy(q);
}

/* CreatePartitions raising n topics to totals[i], as create_many. */
static void add_many(rd_kafka_t *rk, int n, char **names, const int *totals, int validate_only,
                     int *errs, char msgs[][256])
{
    char err[256];
    rd_kafka_queue_t *q = rd_kafka_queue_new(rk);
    rd_kafka_NewPartitions_t *np[8];
    rd_kafka_AdminOptions_t *o = adm_opts(rk, RD_KAFKA_ADMIN_OP_CREATEPARTITIONS, validate_only);
    const rd_kafka_topic_result_t **res;
    rd_kafka_event_t *ev;
    size_t cnt;

    for (int i = 0; i < n; i++) {
        np[i] = rd_kafka_NewPartitions_new(names[i], (size_t)totals[i], err, sizeof(err));
        TL_ASSERT(np[i], "NewPartitions: %s", err);
    }
    rd_kafka_CreatePartitions(rk, np, (size_t)n, o, q);
    ev = adm_wait(q, "CreatePartitions");
    res = rd_kafka_CreatePartitions_result_topics(rd_kafka_event_CreatePartitions_result(ev),
                                                  &cnt);
    results(res, cnt, n, names, errs, msgs);
    rd_kafka_event_destroy(ev);
    rd_kafka_AdminOptions_destroy(o);
    for (int i = 0; i < n; i++)
        rd_kafka_NewPartitions_destroy(np[i]);
    rd_kafka_queue_destroy(q);
}

static void expect_all(int n, char **names, const int *errs, char msgs[][256], int err,
                       const char *msg, const char *what)
{
    for (int i = 0; i < n; i++) {
        TL_ASSERT(errs[i] == err, "%s: %s: %s, expected %s", what, names[i],
                  rd_kafka_err2name(errs[i]), rd_kafka_err2name(err));
        TL_ASSERT(!msg || strstr(msgs[i], msg), "%s: %s: message '%s', expected '%s'", what,
                  names[i], msgs[i], msg);
    }
}

/* 1. Kafka's cap on one operation. */
static void check_cap(rd_kafka_t *rk)
{
    char *t[4] = {tl_topic_name("t0207a"), tl_topic_name("t0207b"), tl_topic_name("t0207c"),
                  tl_topic_name("t0207d")};
    static const char *const cfg[] = {"retention.ms", "100000", NULL};
    int errs[4], parts[4];
    char msgs[4][256];

    parts[0] = 10001;
    create_many(rk, 1, t, parts, NULL, 0, errs, msgs);
    expect_all(1, t, errs, msgs, PV, MANY_PARTS, "10001 partitions");
    TL_ASSERT_EQ(adm_nparts(rk, t[0]), 0);
    parts[0] = parts[1] = 6000, parts[2] = 5;
    create_many(rk, 3, t, parts, NULL, 1, errs, msgs);
    expect_all(3, t, errs, msgs, PV, MANY_PARTS, "6000 + 6000 + 5 partitions");
    parts[0] = 10000;
    create_many(rk, 1, t, parts, NULL, 1, errs, msgs);
    expect_all(1, t, errs, msgs, PV, BATCH, "10000 partitions");
    parts[0] = 9999;
    create_many(rk, 1, t, parts, cfg, 1, errs, msgs);
    expect_all(1, t, errs, msgs, PV, BATCH, "9999 partitions and a config");
    create_many(rk, 1, t, parts, NULL, 1, errs, msgs);
    expect_all(1, t, errs, msgs, 0, NULL, "9999 partitions");

    TL_ASSERT_EQ(adm_create(rk, t[2], 1, 1, NULL, 0, NULL, 0), 0);
    TL_ASSERT_EQ(adm_create(rk, t[3], 1, 1, NULL, 0, NULL, 0), 0);
    parts[0] = 10002;
    add_many(rk, 1, t + 2, parts, 0, errs, msgs);
    expect_all(1, t + 2, errs, msgs, PV, MANY_ADDED, "adding 10001 partitions");
    TL_ASSERT_EQ(adm_nparts(rk, t[2]), 1);
    parts[0] = parts[1] = 6001;
    add_many(rk, 2, t + 2, parts, 1, errs, msgs);
    expect_all(2, t + 2, errs, msgs, PV, MANY_ADDED, "adding 6000 + 6000 partitions");
    parts[0] = 10001;
    add_many(rk, 1, t + 2, parts, 1, errs, msgs);
    expect_all(1, t + 2, errs, msgs, 0, NULL, "adding 10000 partitions");
    TL_ASSERT_EQ(adm_delete(rk, t[2]), 0);
    TL_ASSERT_EQ(adm_delete(rk, t[3]), 0);
    for (int i = 0; i < 4; i++)
        free(t[i]);
}

/* 2. The descriptor budget of the test's own broker. */
static void check_fd_budget(void)
{
    tl_broker b = {0};
    char *dir = tl_scratch_dir("0207"), *t[1] = {tl_topic_name("t0207fd")};
    struct rlimit rl = {400, 400};
    int errs[1], parts[1];
    char msgs[1][256];
    rd_kafka_t *rk;

    tl_broker_start(&b, dir, NULL);
    TL_ASSERT(prlimit(b.pid, RLIMIT_NOFILE, &rl, NULL) == 0, "prlimit: %s", strerror(errno));
    rk = adm_client(b.bootstrap);
    parts[0] = 200;
    create_many(rk, 1, t, parts, NULL, 0, errs, msgs);
    expect_all(1, t, errs, msgs, PV, "Not enough file descriptors", "200 partitions, 400 files");
    TL_ASSERT_EQ(adm_nparts(rk, t[0]), 0);
    TL_ASSERT_EQ(adm_create(rk, t[0], 10, 1, NULL, 0, NULL, 0), 0);
    parts[0] = 300;
    add_many(rk, 1, t, parts, 0, errs, msgs);
    expect_all(1, t, errs, msgs, PV, "Not enough file descriptors", "adding 290 partitions");
    TL_ASSERT_EQ(adm_nparts(rk, t[0]), 10);
    tl_log("refused: %s", msgs[0]);
    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);
    free(t[0]);
    free(dir);
}

int main(void)
{
    rd_kafka_t *rk;

    tl_init("0208-admin-partition-cap");
    rk = adm_client(tl_bootstrap());
    check_cap(rk);
    rd_kafka_destroy(rk);
    if (!tl_is_kafka())
        check_fd_budget();
    else
        tl_log("the descriptor budget is Strand's own check: not run against Kafka");
    return tl_done();
}
