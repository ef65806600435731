/* 0402-offline-log: what the protocol shows of a log that went offline (a
 * failed fsync, see "When the disk fails" in src/log/log.h), API by API.
 * The expected answers are Apache Kafka 4.4's for a replica in an offline
 * log dir, measured on a Kafka whose second log dir was a small tmpfs
 * filled up (ENOSPC takes a Kafka log dir offline), since Kafka has no
 * STRAND_FAULT. The test's own broker flushes every append
 * (log.flush.interval.messages=1) and fails every fsync while a trigger
 * file exists, so what the test writes meanwhile chooses the log:
 *
 *   1. partition 0 of topic B. Produce answers KAFKA_STORAGE_ERROR, and
 *      a fetch waiting on it is answered at once. Then Metadata shows B-0
 *      leaderless (LEADER_NOT_AVAILABLE, leader -1, the next leader
 *      epoch, empty ISR, offline_replicas [1]); ListOffsets, Fetch,
 *      OffsetForLeaderEpoch, DeleteRecords and Produce answer
 *      KAFKA_STORAGE_ERROR with -1 offsets; DescribeLogDirs leaves it out;
 *      librdkafka finds no leader and cannot deliver to it. B-1 and topic
 *      A are served as before.
 *   2. the __consumer_offsets partition of group G: the commit fails with
 *      NOT_COORDINATOR. Then FindCoordinator answers COORDINATOR_NOT_-
 *      AVAILABLE for G, the other group APIs NOT_COORDINATOR, ListGroups
 *      leaves G out, and group H (another partition) works.
 *   3. the metadata log: a config change fails. Then every topic,
 *      partition and config change answers KAFKA_STORAGE_ERROR with the
 *      reason and creates nothing (a feature change FEATURE_UPDATE_FAILED,
 *      with the reason), while A is produced to and read.
 *   4. after a restart everything is back: B-0 leads again and takes
 *      writes, G's offsets from before the failure are there, topics can
 *      be created.
 *
 * Strand only (Kafka has no STRAND_FAULT). */
#include "testlib/testlib.h"
#include "testlib/wire.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util/kerr.h"

#include "log/log_batch.h"

#define NODE 1
#define E_NONE 0
#define E_LEADER_NOT_AVAILABLE 5
#define E_COORDINATOR_NOT_AVAILABLE 15
#define E_NOT_COORDINATOR 16
#define E_STORAGE 56

static arena_t arena;
static int wfd = -1;
static char *ta, *tb, *gg, *gh;
static char datadir[600];

/* ---- requests ---- */

#define S tl_wire_str

static int eq(proto_str_t a, const char *b)
{
    return a.len == (int32_t)strlen(b) && !memcmp(a.p, b, (size_t)a.len);
}

static const proto_metadata_resp_metadata_response_partition_t *md_part(const char *topic,
                                                                         int32_t p, int16_t v)
{
    proto_metadata_resp_t resp;
    tl_wire_metadata(wfd, &arena, v, topic, 0, &resp);
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].error_code == 0, "Metadata v%d %s", v, topic);
    for (int32_t i = 0; i < resp.topics.v[0].partitions.n; i++)
        if (resp.topics.v[0].partitions.v[i].partition_index == p)
            return &resp.topics.v[0].partitions.v[i];
    tl_fail("Metadata v%d: no partition %s-%d", v, topic, p);
}

/* Kafka's answer for a replica in an offline log dir, once the controller
 * has moved leadership (4.4, eligible leader replicas on). */
static void expect_md_offline(const char *topic, int32_t p, int32_t epoch_before)
{
    const proto_metadata_resp_metadata_response_partition_t *m = md_part(topic, p, 12);
    TL_ASSERT_EQ(m->error_code, E_LEADER_NOT_AVAILABLE);
    TL_ASSERT_EQ(m->leader_id, -1);
    TL_ASSERT_EQ(m->leader_epoch, epoch_before + 1);
    TL_ASSERT(m->replica_nodes.n == 1 && m->replica_nodes.v[0] == NODE, "replicas");
    TL_ASSERT_EQ(m->isr_nodes.n, 0);
    TL_ASSERT(m->offline_replicas.n == 1 && m->offline_replicas.v[0] == NODE, "offline replicas");
    m = md_part(topic, p, 1);
    TL_ASSERT_EQ(m->error_code, E_LEADER_NOT_AVAILABLE);
    TL_ASSERT_EQ(m->leader_id, -1);
    TL_ASSERT_EQ(m->isr_nodes.n, 0);
}

static void expect_md_online(const char *topic, int32_t p)
{
    const proto_metadata_resp_metadata_response_partition_t *m = md_part(topic, p, 12);
    TL_ASSERT_EQ(m->error_code, E_NONE);
    TL_ASSERT_EQ(m->leader_id, NODE);
    TL_ASSERT(m->isr_nodes.n == 1 && m->isr_nodes.v[0] == NODE, "isr");
    TL_ASSERT_EQ(m->offline_replicas.n, 0);
}

static const proto_list_offsets_resp_list_offsets_partition_response_t *
list_offsets(const char *topic, int32_t p, int64_t ts)
{
    proto_list_offsets_req_t r;
    proto_list_offsets_resp_t resp;
    proto_list_offsets_req_list_offsets_topic_t t;
    proto_list_offsets_req_list_offsets_partition_t rp;
    proto_list_offsets_req_init(&r);
    proto_list_offsets_req_list_offsets_topic_init(&t);
    proto_list_offsets_req_list_offsets_partition_init(&rp);
    r.replica_id = -1;
    rp.partition_index = p;
    rp.timestamp = ts;
    t.name = S(topic);
    t.partitions.n = 1;
    t.partitions.v = &rp;
    r.topics.n = 1;
    r.topics.v = &t;
    TL_WIRE_CALL(wfd, &arena, list_offsets, 2, 8, &r, &resp);
    return &resp.topics.v[0].partitions.v[0];
}

static void fetch_req(proto_fetch_req_t *r, proto_fetch_req_fetch_topic_t *t,
                      proto_fetch_req_fetch_partition_t *fp, const char *topic, int32_t p,
                      int64_t offset, int32_t max_wait)
{
    proto_fetch_req_init(r);
    proto_fetch_req_fetch_topic_init(t);
    proto_fetch_req_fetch_partition_init(fp);
    r->max_wait_ms = max_wait;
    r->min_bytes = 1;
    r->rack_id = S("");
    r->forgotten_topics_data.n = 0;
    fp->partition = p;
    fp->fetch_offset = offset;
    fp->partition_max_bytes = 1 << 20;
    t->topic = S(topic);
    t->partitions.n = 1;
    t->partitions.v = fp;
    r->topics.n = 1;
    r->topics.v = t;
}

static const proto_fetch_resp_partition_data_t *fetch_answer(const proto_fetch_resp_t *resp)
{
    TL_ASSERT(resp->error_code == 0 && resp->responses.n == 1 &&
                  resp->responses.v[0].partitions.n == 1,
              "Fetch: error %d, %d topics", resp->error_code, resp->responses.n);
    return &resp->responses.v[0].partitions.v[0];
}

static void expect_fetch_error(const proto_fetch_resp_partition_data_t *d, int16_t err)
{
    TL_ASSERT_EQ(d->error_code, err);
    TL_ASSERT_EQ(d->high_watermark, -1);
    TL_ASSERT_EQ(d->last_stable_offset, -1);
    TL_ASSERT_EQ(d->log_start_offset, -1);
    TL_ASSERT(d->records.len <= 0, "records with an error");
}

static const proto_produce_resp_partition_produce_response_t *produce(const char *topic,
                                                                      int32_t p)
{
    proto_produce_req_t r;
    proto_produce_resp_t resp;
    proto_produce_req_topic_produce_data_t t;
    proto_produce_req_partition_produce_data_t pd;
    log_batch_build_t opt;
    log_record_t rec;
    buf_t batch;

    memset(&rec, 0, sizeof(rec));
    rec.timestamp = (int64_t)time(NULL) * 1000;
    rec.key_len = -1;
    rec.value = (const uint8_t *)"0402";
    rec.value_len = 4;
    buf_init(&batch);
    log_batch_build_init(&opt);
    TL_ASSERT(log_batch_build(&batch, &opt, &rec, 1) == 0, "batch");
    proto_produce_req_init(&r);
    proto_produce_req_topic_produce_data_init(&t);
    proto_produce_req_partition_produce_data_init(&pd);
    r.acks = -1;
    r.timeout_ms = 10000;
    pd.index = p;
    pd.records.p = batch.p;
    pd.records.len = (int32_t)batch.len;
    t.name = S(topic);
    t.partition_data.n = 1;
    t.partition_data.v = &pd;
    r.topic_data.n = 1;
    r.topic_data.v = &t;
    TL_WIRE_CALL(wfd, &arena, produce, 0, 9, &r, &resp);
    buf_free(&batch);
    return &resp.responses.v[0].partition_responses.v[0];
}

static const proto_offset_for_leader_epoch_resp_epoch_end_offset_t *ofle(const char *topic,
                                                                        int32_t p)
{
    proto_offset_for_leader_epoch_req_t r;
    proto_offset_for_leader_epoch_resp_t resp;
    proto_offset_for_leader_epoch_req_offset_for_leader_topic_t t;
    proto_offset_for_leader_epoch_req_offset_for_leader_partition_t rp;
    proto_offset_for_leader_epoch_req_init(&r);
    proto_offset_for_leader_epoch_req_offset_for_leader_topic_init(&t);
    proto_offset_for_leader_epoch_req_offset_for_leader_partition_init(&rp);
    r.replica_id = -1;
    rp.partition = p;
    rp.leader_epoch = 0;
    t.topic = S(topic);
    t.partitions.n = 1;
    t.partitions.v = &rp;
    r.topics.n = 1;
    r.topics.v = &t;
    TL_WIRE_CALL(wfd, &arena, offset_for_leader_epoch, 23, 4, &r, &resp);
    return &resp.topics.v[0].partitions.v[0];
}

static const proto_delete_records_resp_delete_records_partition_result_t *
delete_records(const char *topic, int32_t p, int64_t offset)
{
    proto_delete_records_req_t r;
    proto_delete_records_resp_t resp;
    proto_delete_records_req_delete_records_topic_t t;
    proto_delete_records_req_delete_records_partition_t rp;
    proto_delete_records_req_init(&r);
    proto_delete_records_req_delete_records_topic_init(&t);
    proto_delete_records_req_delete_records_partition_init(&rp);
    rp.partition_index = p;
    rp.offset = offset;
    r.timeout_ms = 10000;
    t.name = S(topic);
    t.partitions.n = 1;
    t.partitions.v = &rp;
    r.topics.n = 1;
    r.topics.v = &t;
    TL_WIRE_CALL(wfd, &arena, delete_records, 21, 2, &r, &resp);
    return &resp.topics.v[0].partitions.v[0];
}

/* Whether DescribeLogDirs lists the partition; its one dir must be fine. */
static int log_dirs_lists(const char *topic, int32_t p)
{
    proto_describe_log_dirs_req_t r;
    proto_describe_log_dirs_resp_t resp;
    int found = 0;
    proto_describe_log_dirs_req_init(&r);
    r.topics.n = -1;
    TL_WIRE_CALL(wfd, &arena, describe_log_dirs, 35, 4, &r, &resp);
    TL_ASSERT(resp.error_code == 0 && resp.results.n == 1, "DescribeLogDirs: %d dirs",
              resp.results.n);
    const proto_describe_log_dirs_resp_describe_log_dirs_result_t *d = &resp.results.v[0];
    TL_ASSERT(d->error_code == 0 && d->total_bytes > 0, "log dir error %d", d->error_code);
    for (int32_t i = 0; i < d->topics.n; i++)
        for (int32_t j = 0; eq(d->topics.v[i].name, topic) && j < d->topics.v[i].partitions.n; j++)
            found |= d->topics.v[i].partitions.v[j].partition_index == p;
    return found;
}

/* ---- group requests ---- */

/* A commit of offset `offset` for A-0 outside group management. */
static int16_t commit(const char *group, int64_t offset)
{
    proto_offset_commit_req_t r;
    proto_offset_commit_resp_t resp;
    proto_offset_commit_req_offset_commit_request_topic_t t;
    proto_offset_commit_req_offset_commit_request_partition_t rp;
    proto_offset_commit_req_init(&r);
    proto_offset_commit_req_offset_commit_request_topic_init(&t);
    proto_offset_commit_req_offset_commit_request_partition_init(&rp);
    r.group_id = S(group);
    r.generation_id_or_member_epoch = -1;
    r.member_id = S("");
    rp.partition_index = 0;
    rp.committed_offset = offset;
    rp.committed_metadata = S("");
    t.name = S(ta);
    t.partitions.n = 1;
    t.partitions.v = &rp;
    r.topics.n = 1;
    r.topics.v = &t;
    TL_WIRE_CALL(wfd, &arena, offset_commit, 8, 8, &r, &resp);
    return resp.topics.v[0].partitions.v[0].error_code;
}

/* OffsetFetch v8 of every offset of a group: the group's error, and in
 * *offset the committed offset of A-0 (-1: none). */
static int16_t committed(const char *group, int64_t *offset)
{
    proto_offset_fetch_req_t r;
    proto_offset_fetch_resp_t resp;
    proto_offset_fetch_req_offset_fetch_request_group_t g;
    proto_offset_fetch_req_init(&r);
    proto_offset_fetch_req_offset_fetch_request_group_init(&g);
    g.group_id = S(group);
    g.topics.n = -1;
    r.groups.n = 1;
    r.groups.v = &g;
    TL_WIRE_CALL(wfd, &arena, offset_fetch, 9, 8, &r, &resp);
    const proto_offset_fetch_resp_offset_fetch_response_group_t *rg = &resp.groups.v[0];
    *offset = -1;
    for (int32_t i = 0; i < rg->topics.n; i++)
        if (eq(rg->topics.v[i].name, ta) && rg->topics.v[i].partitions.n == 1)
            *offset = rg->topics.v[i].partitions.v[0].committed_offset;
    return rg->error_code;
}

/* FindCoordinator v3 and v4 agree; an error comes with no node. */
static int16_t find_coordinator(const char *group)
{
    proto_find_coordinator_req_t r;
    proto_find_coordinator_resp_t r3, r4;
    proto_str_t key = S(group);
    proto_find_coordinator_req_init(&r);
    r.key = key;
    TL_WIRE_CALL(wfd, &arena, find_coordinator, 10, 3, &r, &r3);
    r.coordinator_keys.n = 1;
    r.coordinator_keys.v = &key;
    TL_WIRE_CALL(wfd, &arena, find_coordinator, 10, 4, &r, &r4);
    const proto_find_coordinator_resp_coordinator_t *c = &r4.coordinators.v[0];
    TL_ASSERT(r4.coordinators.n == 1 && c->error_code == r3.error_code, "v3 %d, v4 %d",
              r3.error_code, c->error_code);
    if (c->error_code) {
        TL_ASSERT(r3.node_id == -1 && r3.port == -1 && r3.host.len == 0, "v3 node");
        TL_ASSERT(c->node_id == -1 && c->port == -1 && c->host.len == 0, "v4 node");
        TL_ASSERT(eq(r3.error_message, "The coordinator is not available.") &&
                      eq(c->error_message, ""),
                  "messages");
    }
    return c->error_code;
}

/* ---- the trigger and the broker ---- */

static char syncfail[600];

static void disk(int failing)
{
    if (failing) {
        int fd = open(syncfail, O_WRONLY | O_CREAT, 0644);
        TL_ASSERT(fd >= 0, "%s: %s", syncfail, strerror(errno));
        close(fd);
    } else {
        TL_ASSERT(unlink(syncfail) == 0, "%s: %s", syncfail, strerror(errno));
    }
}

static void wire_open(const char *bs)
{
    if (wfd >= 0)
        close(wfd);
    wfd = tl_connect(bs, 20000);
    TL_ASSERT(wfd >= 0, "connect %s", bs);
}

/* Kafka's partition of a group in __consumer_offsets (50 partitions):
 * abs(String.hashCode) % 50, for ASCII ids. */
static int32_t offsets_partition(const char *group)
{
    uint32_t h = 0;
    for (const char *s = group; *s; s++)
        h = h * 31u + (uint8_t)*s;
    int32_t v = (int32_t)h;
    return (v == INT32_MIN ? 0 : v < 0 ? -v : v) % 50;
}

/* ---- 1. a partition ---- */

static int32_t epoch_b0, epoch_g;

/* Topics A (1 partition) and B (2), a record in each partition, and a
 * commit of groups G and H (which creates __consumer_offsets). */
static void step_setup(const char *bs)
{
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    TL_ASSERT_EQ(tl_create_topic(rk, ta, 1), 1);
    TL_ASSERT_EQ(tl_create_topic(rk, tb, 2), 2);
    rd_kafka_destroy(rk);
    TL_ASSERT_EQ(produce(ta, 0)->error_code, 0);
    TL_ASSERT_EQ(produce(tb, 0)->error_code, 0);
    TL_ASSERT_EQ(produce(tb, 1)->error_code, 0);
    double deadline = tl_now() + 30;
    /* The coordinator may still be loading its new partitions. */
    while (commit(gg, 5) != 0 || commit(gh, 5) != 0) {
        TL_ASSERT(tl_now() < deadline, "no commit in 30 s");
        usleep(100000);
    }
    epoch_b0 = md_part(tb, 0, 12)->leader_epoch;
    epoch_g = md_part("__consumer_offsets", offsets_partition(gg), 12)->leader_epoch;
    expect_md_online(tb, 0);
}

/* B-0 goes offline under a produce while a fetch waits on it: the
 * produce is refused, and the fetch answered at once (Kafka's
 * DelayedFetch completes for a partition in an offline log dir). */
static void step_partition_fails(const char *bs)
{
    proto_fetch_req_t r;
    proto_fetch_req_fetch_topic_t t;
    proto_fetch_req_fetch_partition_t fp;
    proto_fetch_resp_t resp;
    buf_t body;
    size_t len;
    int fd = tl_connect(bs, 20000);

    TL_ASSERT(fd >= 0, "connect");
    tl_log("1. %s-0 goes offline", tb);
    fetch_req(&r, &t, &fp, tb, 0, list_offsets(tb, 0, -1)->offset, 15000);
    buf_init(&body);
    proto_fetch_req_encode(&r, 12, &body);
    int32_t c = tl_wire_send(fd, 1, 12, &body);
    usleep(300000);
    double t0 = tl_now();
    disk(1);
    const proto_produce_resp_partition_produce_response_t *pr = produce(tb, 0);
    disk(0);
    TL_ASSERT_EQ(pr->error_code, E_STORAGE);
    TL_ASSERT_EQ(pr->base_offset, -1);
    TL_ASSERT_EQ(pr->log_append_time_ms, -1);
    TL_ASSERT_EQ(pr->log_start_offset, -1);
    const uint8_t *p = tl_wire_recv(fd, 1, 12, c, &arena, &len);
    TL_ASSERT(tl_now() - t0 < 5, "the waiting fetch took %.1f s", tl_now() - t0);
    proto_fetch_resp_init(&resp);
    TL_ASSERT(proto_fetch_resp_decode(&resp, 12, p, len, &arena) == 0, "Fetch answer");
    expect_fetch_error(fetch_answer(&resp), E_STORAGE);
    close(fd);
    buf_free(&body);
}

/* Every API on the offline B-0, as Kafka answers for it; B-1 beside it. */
static void step_partition_apis(void)
{
    proto_fetch_req_t r;
    proto_fetch_req_fetch_topic_t t;
    proto_fetch_req_fetch_partition_t fp;
    proto_fetch_resp_t resp;

    expect_md_offline(tb, 0, epoch_b0);
    expect_md_online(tb, 1);
    for (int64_t ts = -1; ts >= -3; ts--) { /* latest, earliest, max timestamp */
        const proto_list_offsets_resp_list_offsets_partition_response_t *lo =
            list_offsets(tb, 0, ts);
        TL_ASSERT_EQ(lo->error_code, E_STORAGE);
        TL_ASSERT(lo->offset == -1 && lo->timestamp == -1 && lo->leader_epoch == -1,
                  "ListOffsets %lld: offset %lld", (long long)ts, (long long)lo->offset);
    }
    TL_ASSERT_EQ(list_offsets(tb, 1, -1)->offset, 1);
    fetch_req(&r, &t, &fp, tb, 0, 0, 0);
    TL_WIRE_CALL(wfd, &arena, fetch, 1, 12, &r, &resp);
    expect_fetch_error(fetch_answer(&resp), E_STORAGE);
    fetch_req(&r, &t, &fp, tb, 1, 0, 0);
    TL_WIRE_CALL(wfd, &arena, fetch, 1, 12, &r, &resp);
    TL_ASSERT(fetch_answer(&resp)->error_code == 0 && fetch_answer(&resp)->records.len > 0,
              "B-1 fetch");
    const proto_offset_for_leader_epoch_resp_epoch_end_offset_t *eo = ofle(tb, 0);
    TL_ASSERT_EQ(eo->error_code, E_STORAGE);
    TL_ASSERT(eo->leader_epoch == -1 && eo->end_offset == -1, "OffsetForLeaderEpoch offsets");
    for (int64_t off = 0; off <= 1000; off += 1000) {
        const proto_delete_records_resp_delete_records_partition_result_t *dr =
            delete_records(tb, 0, off);
        TL_ASSERT_EQ(dr->error_code, E_STORAGE);
        TL_ASSERT_EQ(dr->low_watermark, -1);
    }
    TL_ASSERT_EQ(log_dirs_lists(tb, 0), 0);
    TL_ASSERT_EQ(log_dirs_lists(tb, 1), 1);
    /* The disk works again, but the log stays offline until restart. */
    TL_ASSERT_EQ(produce(tb, 0)->error_code, E_STORAGE);
    TL_ASSERT_EQ(produce(tb, 1)->error_code, 0);
    TL_ASSERT_EQ(produce(ta, 0)->error_code, 0);
}

static void dr_cb(rd_kafka_t *rk, const rd_kafka_message_t *msg, void *opaque)
{
    (void)rk;
    (void)opaque;
    *(rd_kafka_resp_err_t *)msg->_private = msg->err;
}

/* What a librdkafka client makes of it: B-0 has no leader (so nothing is
 * sent there and a message times out), B-1 has. */
static void step_partition_client(const char *bs)
{
    rd_kafka_conf_t *conf = tl_conf(bs);
    const rd_kafka_metadata_t *md;
    rd_kafka_resp_err_t err[2] = {-1, -1};
    rd_kafka_t *rk;

    tl_conf_set(conf, "message.timeout.ms", "3000");
    rd_kafka_conf_set_dr_msg_cb(conf, dr_cb);
    rk = tl_new(RD_KAFKA_PRODUCER, conf);
    rd_kafka_topic_t *rkt = rd_kafka_topic_new(rk, tb, NULL);
    TL_ASSERT_EQ(rd_kafka_metadata(rk, 0, rkt, &md, 10000), 0);
    TL_ASSERT(md->topic_cnt == 1 && md->topics[0].partition_cnt == 2, "metadata of %s", tb);
    for (int i = 0; i < 2; i++) {
        const rd_kafka_metadata_partition_t *mp = &md->topics[0].partitions[i];
        int p = mp->id;
        TL_ASSERT_EQ(mp->err, p == 0 ? RD_KAFKA_RESP_ERR_LEADER_NOT_AVAILABLE : 0);
        TL_ASSERT_EQ(mp->leader, p == 0 ? -1 : NODE);
        TL_ASSERT_EQ(mp->isr_cnt, p == 0 ? 0 : 1);
    }
    rd_kafka_metadata_destroy(md);
    for (int p = 0; p < 2; p++)
        TL_ASSERT(!rd_kafka_producev(rk, RD_KAFKA_V_RKT(rkt), RD_KAFKA_V_PARTITION(p),
                                     RD_KAFKA_V_VALUE("x", 1), RD_KAFKA_V_OPAQUE(&err[p]),
                                     RD_KAFKA_V_END),
                  "produce");
    rd_kafka_flush(rk, 10000);
    TL_ASSERT_EQ(err[0], RD_KAFKA_RESP_ERR__MSG_TIMED_OUT);
    TL_ASSERT_EQ(err[1], 0);
    rd_kafka_topic_destroy(rkt);
    rd_kafka_destroy(rk);
}

/* ---- 2. a __consumer_offsets partition ---- */

/* Heartbeat, JoinGroup, SyncGroup and LeaveGroup of a group: each must
 * answer err. */
static void expect_member_apis(const char *group, int16_t err)
{
    proto_heartbeat_req_t hb;
    proto_heartbeat_resp_t hbr;
    proto_join_group_req_t jg;
    proto_join_group_resp_t jgr;
    proto_join_group_req_join_group_request_protocol_t proto = {{"range", 5}, {NULL, 0}};
    proto_sync_group_req_t sg;
    proto_sync_group_resp_t sgr;
    proto_leave_group_req_t lg;
    proto_leave_group_resp_t lgr;
    proto_leave_group_req_member_identity_t who;
    proto_str_t id = S(group);

    proto_heartbeat_req_init(&hb);
    hb.group_id = id;
    hb.generation_id = 1;
    hb.member_id = S("m");
    TL_WIRE_CALL(wfd, &arena, heartbeat, 12, 4, &hb, &hbr);
    TL_ASSERT_EQ(hbr.error_code, err);
    proto_join_group_req_init(&jg);
    jg.group_id = id;
    jg.session_timeout_ms = jg.rebalance_timeout_ms = 10000;
    jg.member_id = S("");
    jg.protocol_type = S("consumer");
    jg.protocols.n = 1;
    jg.protocols.v = &proto;
    TL_WIRE_CALL(wfd, &arena, join_group, 11, 9, &jg, &jgr);
    TL_ASSERT(jgr.error_code == err && jgr.generation_id == -1 && jgr.member_id.len == 0,
              "JoinGroup: error %d", jgr.error_code);
    proto_sync_group_req_init(&sg);
    sg.group_id = id;
    sg.generation_id = 1;
    sg.member_id = S("m");
    sg.protocol_type = S("consumer");
    sg.protocol_name = S("range");
    sg.assignments.n = 0;
    TL_WIRE_CALL(wfd, &arena, sync_group, 14, 5, &sg, &sgr);
    TL_ASSERT_EQ(sgr.error_code, err);
    proto_leave_group_req_init(&lg);
    proto_leave_group_req_member_identity_init(&who);
    who.member_id = S("m");
    lg.group_id = id;
    lg.members.n = 1;
    lg.members.v = &who;
    TL_WIRE_CALL(wfd, &arena, leave_group, 13, 5, &lg, &lgr);
    TL_ASSERT_EQ(lgr.error_code, err);
}

/* DescribeGroups and DeleteGroups of a group: both must answer err. */
static void expect_admin_apis(const char *group, int16_t err)
{
    proto_describe_groups_req_t dg;
    proto_describe_groups_resp_t dgr;
    proto_delete_groups_req_t del;
    proto_delete_groups_resp_t delr;
    proto_str_t id = S(group);

    proto_describe_groups_req_init(&dg);
    dg.groups.n = 1;
    dg.groups.v = &id;
    TL_WIRE_CALL(wfd, &arena, describe_groups, 15, 5, &dg, &dgr);
    TL_ASSERT(dgr.groups.v[0].error_code == err && eq(dgr.groups.v[0].group_state, ""),
              "DescribeGroups: error %d", dgr.groups.v[0].error_code);
    proto_delete_groups_req_init(&del);
    del.groups_names.n = 1;
    del.groups_names.v = &id;
    TL_WIRE_CALL(wfd, &arena, delete_groups, 42, 2, &del, &delr);
    TL_ASSERT_EQ(delr.results.v[0].error_code, err);
}

/* Whether ListGroups (v5) lists the group. */
static int listed(const char *group)
{
    proto_list_groups_req_t r;
    proto_list_groups_resp_t resp;
    int found = 0;
    proto_list_groups_req_init(&r);
    r.states_filter.n = r.types_filter.n = 0;
    TL_WIRE_CALL(wfd, &arena, list_groups, 16, 5, &r, &resp);
    TL_ASSERT_EQ(resp.error_code, 0);
    for (int32_t i = 0; i < resp.groups.n; i++)
        found |= eq(resp.groups.v[i].group_id, group);
    return found;
}

/* G's partition goes offline under its commit; H's does not. */
static void step_group(void)
{
    int64_t off;
    int32_t pg = offsets_partition(gg);

    tl_log("2. __consumer_offsets-%d (group %s) goes offline", pg, gg);
    disk(1);
    TL_ASSERT_EQ(commit(gg, 6), E_NOT_COORDINATOR);
    disk(0);
    expect_md_offline("__consumer_offsets", pg, epoch_g);
    expect_md_online("__consumer_offsets", offsets_partition(gh));
    TL_ASSERT_EQ(find_coordinator(gg), E_COORDINATOR_NOT_AVAILABLE);
    TL_ASSERT_EQ(find_coordinator(gh), 0);
    TL_ASSERT_EQ(commit(gg, 7), E_NOT_COORDINATOR);
    TL_ASSERT_EQ(committed(gg, &off), E_NOT_COORDINATOR);
    TL_ASSERT_EQ(off, -1);
    expect_member_apis(gg, E_NOT_COORDINATOR);
    expect_admin_apis(gg, E_NOT_COORDINATOR);
    TL_ASSERT(!listed(gg) && listed(gh), "ListGroups");
    TL_ASSERT_EQ(commit(gh, 8), 0);
    TL_ASSERT_EQ(committed(gh, &off), 0);
    TL_ASSERT_EQ(off, 8);
}

/* ---- 3. the metadata log ---- */

#define META_OFFLINE "The metadata log is offline"

static int starts(proto_str_t s, const char *prefix)
{
    return s.len >= (int32_t)strlen(prefix) && !memcmp(s.p, prefix, strlen(prefix));
}

/* Whether the data dir has a partition directory of topic. */
static int has_dir(const char *topic)
{
    DIR *d = opendir(datadir);
    struct dirent *e;
    int found = 0;
    TL_ASSERT(d, "%s: %s", datadir, strerror(errno));
    while ((e = readdir(d)))
        found |= !strncmp(e->d_name, topic, strlen(topic)) && e->d_name[strlen(topic)] == '-';
    closedir(d);
    return found;
}

/* IncrementalAlterConfigs SET retention.ms on topic A: the resource's
 * error, its message in *msg. */
static int16_t alter_config(proto_str_t *msg)
{
    proto_incremental_alter_configs_req_t r;
    proto_incremental_alter_configs_resp_t resp;
    proto_incremental_alter_configs_req_alter_configs_resource_t res;
    proto_incremental_alter_configs_req_alterable_config_t kv;
    proto_incremental_alter_configs_req_init(&r);
    proto_incremental_alter_configs_req_alter_configs_resource_init(&res);
    proto_incremental_alter_configs_req_alterable_config_init(&kv);
    kv.name = S("retention.ms");
    kv.config_operation = 0;
    kv.value = S("3600000");
    res.resource_type = 2;
    res.resource_name = S(ta);
    res.configs.n = 1;
    res.configs.v = &kv;
    r.resources.n = 1;
    r.resources.v = &res;
    TL_WIRE_CALL(wfd, &arena, incremental_alter_configs, 44, 1, &r, &resp);
    *msg = resp.responses.v[0].error_message;
    return resp.responses.v[0].error_code;
}

static int16_t create_topic(const char *name, proto_str_t *msg)
{
    proto_create_topics_req_t r;
    proto_create_topics_resp_t resp;
    proto_create_topics_req_creatable_topic_t t;
    proto_create_topics_req_init(&r);
    proto_create_topics_req_creatable_topic_init(&t);
    t.name = S(name);
    t.num_partitions = 1;
    t.replication_factor = 1;
    t.assignments.n = t.configs.n = 0;
    r.topics.n = 1;
    r.topics.v = &t;
    TL_WIRE_CALL(wfd, &arena, create_topics, 19, 7, &r, &resp);
    *msg = resp.topics.v[0].error_message;
    return resp.topics.v[0].error_code;
}

/* CreatePartitions (A to 2) and DeleteTopics (A): both must fail with the
 * reason and change nothing. */
static void expect_topic_changes_fail(void)
{
    proto_create_partitions_req_t cp;
    proto_create_partitions_resp_t cpr;
    proto_create_partitions_req_create_partitions_topic_t cpt;
    proto_delete_topics_req_t dt;
    proto_delete_topics_resp_t dtr;
    proto_delete_topics_req_delete_topic_state_t dts;

    proto_create_partitions_req_init(&cp);
    proto_create_partitions_req_create_partitions_topic_init(&cpt);
    cpt.name = S(ta);
    cpt.count = 2;
    cpt.assignments.n = -1;
    cp.topics.n = 1;
    cp.topics.v = &cpt;
    cp.timeout_ms = 10000; /* 0 is answered REQUEST_TIMED_OUT first, as by Kafka */
    TL_WIRE_CALL(wfd, &arena, create_partitions, 37, 3, &cp, &cpr);
    TL_ASSERT(cpr.results.v[0].error_code == E_STORAGE &&
                  starts(cpr.results.v[0].error_message, META_OFFLINE),
              "CreatePartitions: error %d", cpr.results.v[0].error_code);
    proto_delete_topics_req_init(&dt);
    proto_delete_topics_req_delete_topic_state_init(&dts);
    dts.name = S(ta);
    dt.topics.n = 1;
    dt.topics.v = &dts;
    dt.timeout_ms = 10000;
    TL_WIRE_CALL(wfd, &arena, delete_topics, 20, 6, &dt, &dtr);
    TL_ASSERT(dtr.responses.v[0].error_code == E_STORAGE &&
                  starts(dtr.responses.v[0].error_message, META_OFFLINE),
              "DeleteTopics: error %d", dtr.responses.v[0].error_code);
    TL_ASSERT_EQ(md_part(ta, 0, 12)->error_code, 0);
}

/* UpdateFeatures v1 of metadata.version to its level again: a change,
 * unless validate. The error, its message in *msg. */
static int16_t update_features(int validate, proto_str_t *msg)
{
    proto_update_features_req_t r;
    proto_update_features_resp_t resp;
    proto_update_features_req_feature_update_key_t k;
    proto_update_features_req_init(&r);
    proto_update_features_req_feature_update_key_init(&k);
    k.feature = S("metadata.version");
    k.max_version_level = 25;
    r.feature_updates.n = 1;
    r.feature_updates.v = &k;
    r.validate_only = validate;
    TL_WIRE_CALL(wfd, &arena, update_features, 57, 1, &r, &resp);
    *msg = resp.error_message;
    return resp.error_code;
}

/* Auto-creation through Metadata (v12) of a new topic: its error. */
static int16_t auto_create(const char *name)
{
    proto_metadata_resp_t resp;
    tl_wire_metadata(wfd, &arena, 12, name, 1, &resp);
    return resp.topics.v[0].error_code;
}

/* The metadata log goes offline under a config change. */
static void step_metadata_log(const char *tc)
{
    proto_str_t msg;

    tl_log("3. the metadata log goes offline");
    disk(1);
    TL_ASSERT_EQ(alter_config(&msg), E_STORAGE);
    disk(0);
    TL_ASSERT(starts(msg, META_OFFLINE), "message '%.*s'", msg.len, msg.p);
    TL_ASSERT_EQ(alter_config(&msg), E_STORAGE);
    TL_ASSERT_EQ(create_topic(tc, &msg), E_STORAGE);
    TL_ASSERT(starts(msg, META_OFFLINE), "message '%.*s'", msg.len, msg.p);
    TL_ASSERT_EQ(auto_create(tc), E_STORAGE);
    TL_ASSERT(!has_dir(tc), "a partition dir of %s was left behind", tc);
    expect_topic_changes_fail();
    /* A feature change cannot be written: the server's failure, which
     * UpdateFeatures calls FEATURE_UPDATE_FAILED; checking one writes
     * nothing and works. */
    TL_ASSERT_EQ(update_features(0, &msg), KERR_FEATURE_UPDATE_FAILED);
    TL_ASSERT(starts(msg, META_OFFLINE), "message '%.*s'", msg.len, msg.p);
    TL_ASSERT_EQ(update_features(1, &msg), 0);
    /* Data goes on. */
    const proto_produce_resp_partition_produce_response_t *pr = produce(ta, 0);
    TL_ASSERT_EQ(pr->error_code, 0);
    TL_ASSERT_EQ(list_offsets(ta, 0, -1)->offset, pr->base_offset + 1);
}

/* ---- 4. restart ---- */

static void step_restart(const char *tc)
{
    proto_str_t msg;
    int64_t off;

    tl_log("4. after the restart");
    const proto_metadata_resp_metadata_response_partition_t *m = md_part(tb, 0, 12);
    TL_ASSERT(m->error_code == 0 && m->leader_id == NODE && m->leader_epoch > epoch_b0,
              "B-0 after restart: error %d, leader %d, epoch %d", m->error_code, m->leader_id,
              m->leader_epoch);
    expect_md_online(tb, 0);
    TL_ASSERT_EQ(produce(tb, 0)->error_code, 0);
    TL_ASSERT_EQ(log_dirs_lists(tb, 0), 1);
    expect_md_online("__consumer_offsets", offsets_partition(gg));
    double deadline = tl_now() + 30;
    while (committed(gg, &off) != 0) { /* the coordinator replays its partitions */
        TL_ASSERT(tl_now() < deadline, "G not loaded after 30 s");
        usleep(100000);
    }
    TL_ASSERT_EQ(off, 5); /* the commit before the failure; not the refused ones */
    TL_ASSERT_EQ(find_coordinator(gg), 0);
    TL_ASSERT_EQ(commit(gg, 9), 0);
    TL_ASSERT_EQ(alter_config(&msg), 0);
    TL_ASSERT_EQ(create_topic(tc, &msg), 0);
    TL_ASSERT_EQ(update_features(0, &msg), 0);
}

int main(void)
{
    tl_broker b = {0};
    static const char *const extra[] = {"log.flush.interval.messages=1", NULL};
    char *dir, *tc, spec[700];
    int st;

    tl_init("0402-offline-log");
    if (tl_is_kafka())
        tl_skip("fault injection is strand's (STRAND_FAULT)");
    dir = tl_scratch_dir("0402");
    snprintf(syncfail, sizeof(syncfail), "%s/fsync-fails", dir);
    snprintf(datadir, sizeof(datadir), "%s/data", dir);
    snprintf(spec, sizeof(spec), "sync:errno=EIO:while=%s", syncfail);
    setenv("STRAND_FAULT", spec, 1);
    tl_broker_start(&b, dir, extra);
    unsetenv("STRAND_FAULT");
    arena_init(&arena, 1 << 16);
    tl_wire_set_client_id("t0402");
    wire_open(b.bootstrap);
    ta = tl_topic_name("t0402a");
    tb = tl_topic_name("t0402b");
    gg = tl_topic_name("g0402-offline");
    gh = tl_topic_name("g0402-online");
    for (int i = 0; offsets_partition(gh) == offsets_partition(gg); i++)
        gh[strlen(gh) - 1] = (char)('a' + i);

    tc = tl_topic_name("t0402c");
    step_setup(b.bootstrap);
    step_partition_fails(b.bootstrap);
    step_partition_apis();
    step_partition_client(b.bootstrap);
    step_group();
    step_metadata_log(tc);

    st = tl_broker_stop(&b);
    TL_ASSERT_EQ(st, 1); /* offline logs: the log dir was not closed clean */
    tl_broker_start(&b, dir, extra);
    wire_open(b.bootstrap);
    step_restart(tc);
    TL_ASSERT_EQ(tl_broker_stop(&b), 0);

    close(wfd);
    arena_destroy(&arena);
    free(ta);
    free(tb);
    free(gg);
    free(gh);
    free(tc);
    free(dir);
    return tl_done();
}
