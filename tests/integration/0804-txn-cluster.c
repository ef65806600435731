/* 0804-txn-cluster: transactions on a cluster of three combined nodes,
 * through the failure of the transaction coordinator and of a partition
 * leader. One quorum of the three; a topic of 6 partitions, replication
 * factor 3, min.insync.replicas 2 (a topic config), led by the three
 * nodes; __transaction_state of 5 partitions, replication factor 3,
 * min.isr 2 (transaction.state.log.*: kafka-ref.sh's own lines say 1,
 * overridden here); __consumer_offsets of 3 partitions, replication 3.
 * Transaction K writes NMSG messages "txnK-pP-mM" to every partition and
 * sends offsets 1000 (K + 1) + P (metadata "txnK") of group G, so that
 * in every partition K takes offsets SPAN K .. SPAN K + NMSG - 1 and its
 * marker SPAN K + NMSG. Asserted:
 *   1. FindCoordinator (key type 1; v1 with KeyType, v4 with the keys
 *      list) of the transactional id at every node names the same node,
 *      at its advertised address: the leader of the id's partition of
 *      __transaction_state (Kafka's: the id's Java hash code made
 *      positive, modulo the partition count; tl_kraft_group_partition),
 *      as every node's Metadata has it. __transaction_state is created
 *      on that first use with 5 partitions of 3 replicas, its
 *      min.insync.replicas 2 (DescribeConfigs); the topic's partitions
 *      are led by all three nodes.
 *   2. A librdkafka transactional producer runs transactions 0-5, the
 *      even ones committed, the odd ones aborted, each with
 *      send_offsets_to_transaction for G. Each delivery report at its
 *      offset; while K is open, every partition's leader answers
 *      ListOffsets latest read_committed at K's first offset and
 *      read_uncommitted past K's messages, and OffsetFetch RequireStable
 *      at G's coordinator answers UNSTABLE_OFFSET_COMMIT; once K ended
 *      both latest offsets are past its marker at every leader (the
 *      markers reached partitions led by other nodes) and G's committed
 *      offsets (rd_kafka_committed) are the last committed transaction's
 *      with its metadata. Then a read_committed consumer reads exactly
 *      transactions 0, 2, 4 in order at their offsets in every
 *      partition, and a raw read_committed Fetch at each leader lists
 *      the aborted transactions 1, 3, 5 (the producer's id, their first
 *      offsets) and holds markers of the right type at their offsets.
 *   3. Transaction 6 is produced (flushed, every report in) and its
 *      offsets sent; the coordinator's node is killed with kill -9 and
 *      commit_transaction given 1 s (it may fail, time out, or be
 *      accepted by the next coordinator); the producer is destroyed.
 *      Once FindCoordinator at the other two names the new leader of the
 *      id's partition (the time logged), a new producer of the same
 *      transactional id, bootstrapped on them, calls init_transactions
 *      until it succeeds (10 s a call, 60 s in all; the coordinator must
 *      not move again meanwhile). Transaction 6 is resolved whole:
 *      every partition has one marker at its end, all COMMIT or all
 *      ABORT (ABORT unless commit_transaction succeeded), G's offsets
 *      are 6's if committed else 4's. The new producer commits
 *      transaction 7; read_committed reads 0, 2, 4, (6), 7 everywhere.
 *      The killed node is started again; once every ISR (the topic's,
 *      __transaction_state's) is whole again a new read_committed
 *      consumer reads the same, and the id's __transaction_state
 *      partition's segment files are the same bytes on the three nodes.
 *   4. Transaction 8 is produced and its offsets sent; a thread calls
 *      commit_transaction and 100 ms later the leader V of a partition
 *      (a node that does not coordinate the id; not the active
 *      controller when there is a choice) is killed with kill -9. Every
 *      node's broker listener has a proxy in front of it (the nodes
 *      advertise it, so clients and the other brokers go through it):
 *      V's is slowed by DELAY_MS each way just before the commit, so
 *      that the markers sent to V are still unanswered at the kill, and
 *      cut (connections closed, new ones refused) as it is killed. The
 *      commit succeeds; within WAIT_S (20 s; Kafka takes about 4) of the
 *      kill every partition (V's at its new leader) has transaction 8's
 *      COMMIT marker at its end, at both isolation levels, G's offsets
 *      are 8's, and read_committed reads 0, 2, 4, (6), 7, 8. The node
 *      is started again, the ISRs become whole, the topic's segment
 *      files are the same bytes on the three nodes and read_committed
 *      reads the same.
 * With KAFKA_REF=1 the same runs against three Apache Kafka 4.4 combined
 * nodes. */
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/cluster.h"
#include "testlib/kraft.h"
#include "testlib/logfiles.h"
#include "testlib/testlib.h"
#include "testlib/txn.h"
#include "testlib/wire.h"
#include "util/kerr.h"

#define N 3
#define TOPIC "t0804"
#define NPART 6
#define TXN_ID "txn0804"
#define GROUP "txn0804-G"
#define TSTATE "__transaction_state"
#define NTSP 5 /* transaction.state.log.num.partitions */
#define NOFF 3 /* offsets.topic.num.partitions */
#define NMSG 4
#define SPAN (NMSG + 1)
#define NTXN 9 /* 0-5 step 2, 6-7 step 3, 8 step 4 */
#define WAIT_S 20 /* for a marker or a last stable offset */
#define DELAY_MS 300 /* each way, in front of step 4's leader before the kill */
#define CTRL_ABORT 0
#define CTRL_COMMIT 1

static tl_cluster *c;
static tl_proxy *front[N + 1]; /* in front of each node's broker listener */
static char bs_all[1024];
static int committed_txn[NTXN]; /* 1 when transaction k committed */
static int64_t pid0 = -1;       /* the first producer's id */

static int64_t first_offset(int k)
{
    return (int64_t)k * SPAN;
}

static char *value_of(int k, int p, int m)
{
    static char buf[8][64];
    static int next;
    char *v = buf[next++ % 8];
    snprintf(v, 64, "txn%d-p%d-m%d", k, p, m);
    return v;
}

static int64_t group_offset(int k, int p)
{
    return 1000 * (k + 1) + p;
}

/* ---- who leads and coordinates ---- */

/* The running leader of topic-p, waiting (30 s at most) until a running
 * node names one that runs. */
static tl_node *leader_node(const char *topic, int32_t p)
{
    double until = tl_now() + 30;
    for (;;) {
        int32_t id = tl_kraft_leader_of(c, topic, p);
        if (id > 0 && id <= N && tl_node_running(tl_cluster_node(c, id)))
            return tl_cluster_node(c, id);
        TL_ASSERT(tl_now() < until, "%s-%d has no running leader (%d) after 30 s", topic,
                  (int)p, (int)id);
        usleep(100 * 1000);
    }
}

typedef struct coord {
    int16_t err;
    int32_t node_id;
    char addr[128];
} coord;

/* FindCoordinator of key (key_type 0 group, 1 transaction) at node,
 * version ver (v1-3: Key and KeyType; v4+: CoordinatorKeys). */
static void find_coordinator(tl_node *node, int16_t ver, const char *key, int8_t key_type,
                             coord *out)
{
    proto_find_coordinator_req_t req;
    proto_find_coordinator_resp_t resp;
    proto_str_t k = tl_wire_str(key);
    arena_t arena;
    int fd = tl_connect(node->bootstrap, 5000);
    TL_ASSERT(fd >= 0, "node %d does not answer", node->id);
    arena_init(&arena, 4096);
    proto_find_coordinator_req_init(&req);
    req.key_type = key_type;
    if (ver >= 4) {
        req.coordinator_keys.n = 1;
        req.coordinator_keys.v = &k;
    } else {
        req.key = k;
    }
    TL_WIRE_CALL(fd, &arena, find_coordinator, 10, ver, &req, &resp);
    close(fd);
    if (ver >= 4) {
        TL_ASSERT(resp.coordinators.n == 1, "FindCoordinator v%d: %d coordinators", ver,
                  resp.coordinators.n);
        const proto_find_coordinator_resp_coordinator_t *co = &resp.coordinators.v[0];
        TL_ASSERT(co->key.len == (int32_t)strlen(key) && !memcmp(co->key.p, key, strlen(key)),
                  "FindCoordinator v%d answers another key", ver);
        out->err = co->error_code;
        out->node_id = co->node_id;
        snprintf(out->addr, sizeof(out->addr), "%.*s:%d", (int)co->host.len, co->host.p,
                 (int)co->port);
    } else {
        out->err = resp.error_code;
        out->node_id = resp.node_id;
        snprintf(out->addr, sizeof(out->addr), "%.*s:%d", (int)resp.host.len, resp.host.p,
                 (int)resp.port);
    }
    arena_destroy(&arena);
}

/* The leader of the transactional id's partition of __transaction_state
 * as every running node's Metadata has it (they agree, within 30 s), each
 * partition with N replicas. */
static int32_t tstate_leader(int skip)
{
    int32_t p = tl_kraft_group_partition(TXN_ID, NTSP);
    double until = tl_now() + 30;
    for (;;) {
        int32_t leader = -2;
        int ok = 1;
        for (int id = 1; id <= N && ok; id++) {
            tl_kraft_topic t;
            if (id == skip || !tl_node_running(tl_cluster_node(c, id)))
                continue;
            ok = tl_kraft_metadata(tl_cluster_node(c, id), TSTATE, &t) == 0 && t.npart == NTSP &&
                 t.leader[p] > 0 && t.leader[p] != skip && (leader == -2 || t.leader[p] == leader);
            if (ok) {
                for (int q = 0; q < NTSP; q++)
                    TL_ASSERT(t.nrep[q] == N, "node %d: %s-%d has %d replicas, want %d", id,
                              TSTATE, q, t.nrep[q], N);
                leader = t.leader[p];
            }
        }
        if (ok && leader > 0)
            return leader;
        TL_ASSERT(tl_now() < until, "the nodes do not agree on a leader of %s-%d (but %d)",
                  TSTATE, (int)p, skip);
        usleep(100 * 1000);
    }
}

/* The transaction coordinator every running node but skip names, at
 * both request forms, once they agree and it is the leader of the id's
 * partition (timeout_s at most; the first calls wait for the creation
 * of __transaction_state). */
static int txn_coordinator(int skip, double timeout_s)
{
    double until = tl_now() + timeout_s;
    char why[256] = "";
    for (;;) {
        int32_t id = -2;
        int ok = 1;
        for (int n = 1; n <= N && ok; n++) {
            tl_node *node = tl_cluster_node(c, n);
            if (n == skip || !tl_node_running(node))
                continue;
            for (int16_t ver = 1; ver <= 4 && ok; ver += 3) {
                coord co;
                find_coordinator(node, ver, TXN_ID, 1, &co);
                if (co.err) {
                    snprintf(why, sizeof(why), "node %d: FindCoordinator v%d: %s", n, ver,
                             kerr_name(co.err));
                    ok = 0;
                } else if (co.node_id == skip || (id != -2 && co.node_id != id)) {
                    snprintf(why, sizeof(why), "node %d (v%d) names %d, another %d", n, ver,
                             (int)co.node_id, (int)id);
                    ok = 0;
                } else {
                    TL_ASSERT(co.node_id >= 1 && co.node_id <= N, "node %d names node %d", n,
                              (int)co.node_id);
                    TL_ASSERT(!strcmp(co.addr, tl_cluster_node(c, co.node_id)->bootstrap),
                              "node %d gives %s for node %d, want %s", n, co.addr,
                              (int)co.node_id, tl_cluster_node(c, co.node_id)->bootstrap);
                    id = co.node_id;
                }
            }
        }
        if (ok) {
            int32_t leader = tstate_leader(skip);
            if (leader == id)
                return id;
            snprintf(why, sizeof(why), "FindCoordinator names %d, %s-%d is led by %d", (int)id,
                     TSTATE, (int)tl_kraft_group_partition(TXN_ID, NTSP), (int)leader);
        }
        TL_ASSERT(tl_now() < until, "no transaction coordinator agreed on in %.0f s: %s",
                  timeout_s, why);
        usleep(100 * 1000);
    }
}

/* The group's coordinator: the leader of its __consumer_offsets partition. */
static tl_node *group_coordinator(void)
{
    return leader_node("__consumer_offsets", tl_kraft_group_partition(GROUP, NOFF));
}

/* min.insync.replicas of topic as node's DescribeConfigs v4 gives it. */
static void describe_min_isr(tl_node *node, const char *topic, char *out, size_t cap)
{
    int16_t err = tl_kraft_describe_config(node->bootstrap, 2, topic, "min.insync.replicas", out,
                                           cap);
    TL_ASSERT(!err, "DescribeConfigs %s: %s", topic, kerr_name(err));
    if (!*out)
        snprintf(out, cap, "(none)");
}

/* CreateTopics v7 of TOPIC with min.insync.replicas=2 at node. */
static void create_topic(tl_node *node)
{
    proto_create_topics_req_t req;
    proto_create_topics_req_creatable_topic_t t;
    proto_create_topics_req_creatable_topic_config_t cfg;
    proto_create_topics_resp_t resp;
    arena_t arena;
    int fd = tl_connect(node->bootstrap, 5000);
    TL_ASSERT(fd >= 0, "node %d does not answer", node->id);
    arena_init(&arena, 1 << 14);
    proto_create_topics_req_init(&req);
    proto_create_topics_req_creatable_topic_init(&t);
    proto_create_topics_req_creatable_topic_config_init(&cfg);
    cfg.name = tl_wire_str("min.insync.replicas");
    cfg.value = tl_wire_str("2");
    t.name = tl_wire_str(TOPIC);
    t.num_partitions = NPART;
    t.replication_factor = N;
    t.configs.n = 1;
    t.configs.v = &cfg;
    req.topics.n = 1;
    req.topics.v = &t;
    req.timeout_ms = 10000;
    TL_WIRE_CALL(fd, &arena, create_topics, 19, 7, &req, &resp);
    close(fd);
    TL_ASSERT_EQ(resp.topics.n, 1);
    TL_ASSERT(!resp.topics.v[0].error_code, "CreateTopics %s: %s", TOPIC,
              kerr_name(resp.topics.v[0].error_code));
    arena_destroy(&arena);
}

/* ---- offsets at an isolation level, at whichever node leads ---- */

/* ListOffsets v7 latest of TOPIC-p at node: the error code (-1: no
 * answer). */
static int16_t latest_at(tl_node *node, int32_t p, int iso, int64_t *off)
{
    proto_list_offsets_req_t r;
    proto_list_offsets_req_list_offsets_topic_t t;
    proto_list_offsets_req_list_offsets_partition_t part;
    proto_list_offsets_resp_t resp;
    arena_t arena;
    int16_t err;
    int fd = tl_connect(node->bootstrap, 5000);
    if (fd < 0)
        return -1;
    arena_init(&arena, 1 << 14);
    proto_list_offsets_req_init(&r);
    proto_list_offsets_req_list_offsets_topic_init(&t);
    proto_list_offsets_req_list_offsets_partition_init(&part);
    part.partition_index = p;
    part.timestamp = -1;
    t.name = tl_wire_str(TOPIC);
    t.partitions.n = 1;
    t.partitions.v = &part;
    r.replica_id = -1;
    r.isolation_level = (int8_t)iso;
    r.topics.n = 1;
    r.topics.v = &t;
    r.timeout_ms = 10000;
    TL_WIRE_CALL(fd, &arena, list_offsets, 2, 7, &r, &resp);
    close(fd);
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == 1,
              "ListOffsets: %d topics in the answer", resp.topics.n);
    err = resp.topics.v[0].partitions.v[0].error_code;
    *off = resp.topics.v[0].partitions.v[0].offset;
    arena_destroy(&arena);
    return err;
}

/* Both latest offsets of TOPIC-p at its leader. 0, or the error. */
static int16_t latest(int32_t p, int64_t *rc, int64_t *ru, int *leader)
{
    tl_node *l = leader_node(TOPIC, p);
    int16_t err = latest_at(l, p, TL_READ_COMMITTED, rc);
    if (!err)
        err = latest_at(l, p, TL_READ_UNCOMMITTED, ru);
    *leader = l->id;
    return err;
}

/* Waits (30 s at most) until every partition's leader answers want at
 * both isolation levels. */
static void wait_latest_all(int64_t want, const char *what)
{
    double t0 = tl_now();
    for (int32_t p = 0; p < NPART; p++) {
        double until = tl_now() + WAIT_S;
        int64_t rc = -1, ru = -1;
        int16_t err;
        int leader;
        while ((err = latest(p, &rc, &ru, &leader)) || rc != want || ru != want) {
            TL_ASSERT(tl_now() < until, "%s: %s-%d at node %d: latest read_committed %" PRId64
                      ", read_uncommitted %" PRId64 " (error %d) after %d s, want %" PRId64,
                      what, TOPIC, (int)p, leader, rc, ru, (int)err, WAIT_S, want);
            usleep(50 * 1000);
        }
    }
    if (tl_now() - t0 > 1)
        tl_log("%s: every partition's last stable offset at %" PRId64 " after %.2f s", what,
               want, tl_now() - t0);
}

/* ---- the transactions ---- */

static rd_kafka_t *producer(const char *bs)
{
    rd_kafka_conf_t *conf = tl_txn_conf(bs);
    tl_conf_set(conf, "transactional.id", TXN_ID);
    tl_conf_set(conf, "linger.ms", "5");
    tl_conf_set(conf, "transaction.timeout.ms", "60000");
    return tl_new(RD_KAFKA_PRODUCER, conf);
}

/* Begins transaction k, produces its messages to every partition,
 * flushes: every report at its offset. */
static void produce_txn(rd_kafka_t *rk, int k)
{
    static tl_txn_slot slots[NPART][NMSG];
    rd_kafka_error_t *error = rd_kafka_begin_transaction(rk);
    TL_ASSERT(!error, "begin %d: %s", k, rd_kafka_error_string(error));
    for (int m = 0; m < NMSG; m++)
        for (int p = 0; p < NPART; p++)
            tl_txn_send(rk, TOPIC, p, value_of(k, p, m), &slots[p][m]);
    TL_ASSERT_EQ(rd_kafka_flush(rk, 30000), 0);
    for (int p = 0; p < NPART; p++)
        for (int m = 0; m < NMSG; m++) {
            const tl_txn_slot *s = &slots[p][m];
            TL_ASSERT(s->done && !s->err, "transaction %d: '%s': %s", k, value_of(k, p, m),
                      rd_kafka_err2name(s->err));
            TL_ASSERT(s->offset == first_offset(k) + m,
                      "transaction %d: '%s' delivered at %" PRId64 ", expected %" PRId64, k,
                      value_of(k, p, m), s->offset, first_offset(k) + m);
        }
}

static void send_offsets(rd_kafka_t *rk, int k)
{
    rd_kafka_topic_partition_list_t *offs = rd_kafka_topic_partition_list_new(NPART);
    for (int p = 0; p < NPART; p++) {
        rd_kafka_topic_partition_t *tp = rd_kafka_topic_partition_list_add(offs, TOPIC, p);
        char md[16];
        snprintf(md, sizeof(md), "txn%d", k);
        tp->offset = group_offset(k, p);
        tp->metadata = strdup(md);
        tp->metadata_size = strlen(md);
    }
    rd_kafka_consumer_group_metadata_t *gm = rd_kafka_consumer_group_metadata_new(GROUP);
    rd_kafka_error_t *error = rd_kafka_send_offsets_to_transaction(rk, offs, gm, 30000);
    TL_ASSERT(!error, "send_offsets %d: %s", k, rd_kafka_error_string(error));
    rd_kafka_consumer_group_metadata_destroy(gm);
    rd_kafka_topic_partition_list_destroy(offs);
}

/* While k is open: every leader's read_committed latest at k's first
 * offset, read_uncommitted past its messages. */
static void check_open(int k)
{
    for (int32_t p = 0; p < NPART; p++) {
        int64_t rc = -1, ru = -1;
        int leader;
        int16_t err = latest(p, &rc, &ru, &leader);
        TL_ASSERT(!err && rc == first_offset(k) && ru == first_offset(k) + NMSG,
                  "transaction %d open: %s-%d at node %d: latest read_committed %" PRId64
                  " (want %" PRId64 "), read_uncommitted %" PRId64 " (want %" PRId64
                  "), error %d", k, TOPIC, (int)p, leader, rc, first_offset(k), ru,
                  first_offset(k) + NMSG, (int)err);
    }
}

/* While k's offsets are pending: RequireStable answers
 * UNSTABLE_OFFSET_COMMIT at G's coordinator. */
static void check_pending_offsets(int k)
{
    int64_t off[NPART];
    int16_t err[NPART];
    tl_txn_offset_fetch(group_coordinator()->bootstrap, GROUP, TOPIC, NPART, 1, off, err, NULL);
    for (int p = 0; p < NPART; p++)
        TL_ASSERT(err[p] == TL_ERR_UNSTABLE_OFFSET_COMMIT,
                  "transaction %d open: OffsetFetch RequireStable %s-%d: error %d, offset %"
                  PRId64, k, TOPIC, p, err[p], off[p]);
}

/* G's committed offsets as rd_kafka_committed reads them (RequireStable,
 * retried by librdkafka while unstable or while the coordinator moves):
 * those of transaction last. */
static void check_group(rd_kafka_t *cg, int last, const char *what)
{
    rd_kafka_topic_partition_list_t *l = rd_kafka_topic_partition_list_new(NPART);
    char md[16];
    snprintf(md, sizeof(md), "txn%d", last);
    for (int p = 0; p < NPART; p++)
        rd_kafka_topic_partition_list_add(l, TOPIC, p);
    rd_kafka_resp_err_t err = rd_kafka_committed(cg, l, 30000);
    TL_ASSERT(err == 0, "%s: committed: %s", what, rd_kafka_err2name(err));
    for (int i = 0; i < l->cnt; i++) {
        const rd_kafka_topic_partition_t *tp = &l->elems[i];
        TL_ASSERT(!tp->err, "%s: committed %s-%d: %s", what, tp->topic, (int)tp->partition,
                  rd_kafka_err2name(tp->err));
        TL_ASSERT(tp->offset == group_offset(last, tp->partition),
                  "%s: %s's committed offset of %s-%d: %" PRId64 ", transaction %d's is %" PRId64,
                  what, GROUP, tp->topic, (int)tp->partition, tp->offset, last,
                  group_offset(last, tp->partition));
        TL_ASSERT(tp->metadata_size == strlen(md) && !memcmp(tp->metadata, md, strlen(md)),
                  "%s: %s-%d: metadata '%.*s', want '%s'", what, tp->topic, (int)tp->partition,
                  (int)tp->metadata_size, (const char *)tp->metadata, md);
    }
    rd_kafka_topic_partition_list_destroy(l);
}

static int last_committed(int upto)
{
    int last = -1;
    for (int k = 0; k <= upto; k++)
        if (committed_txn[k])
            last = k;
    return last;
}

/* The marker of transaction k in every partition, at its leader (a raw
 * Fetch read_uncommitted from the marker's offset): all of one type, which
 * is returned. */
static int marker_type(int k, const char *what)
{
    int type = -1;
    for (int32_t p = 0; p < NPART; p++) {
        double until = tl_now() + 30;
        tl_txn_fetch f;
        for (;;) {
            tl_node *l = leader_node(TOPIC, p);
            tl_txn_fetch_raw(l->bootstrap, TOPIC, p, first_offset(k) + NMSG, TL_READ_UNCOMMITTED,
                             12, &f);
            if (!f.error && f.nbatch > 0)
                break;
            TL_ASSERT(tl_now() < until, "%s: %s-%d at node %d: no marker of transaction %d at %"
                      PRId64 " after 30 s (error %d)", what, TOPIC, (int)p, l->id, k,
                      first_offset(k) + NMSG, f.error);
            tl_txn_fetch_free(&f);
            usleep(100 * 1000);
        }
        const tl_txn_batch *b = &f.batches[0];
        TL_ASSERT(b->base_offset == first_offset(k) + NMSG && b->control && b->nrec == 1,
                  "%s: %s-%d: at %" PRId64 " a batch at %" PRId64 " (control %d, %d records), "
                  "want transaction %d's marker", what, TOPIC, (int)p, first_offset(k) + NMSG,
                  b->base_offset, b->control, b->nrec, k);
        TL_ASSERT(type < 0 || b->ctrl_type == type, "%s: %s-%d: transaction %d's marker is %s, "
                  "on the partitions before %s", what, TOPIC, (int)p, k,
                  b->ctrl_type ? "COMMIT" : "ABORT", type ? "COMMIT" : "ABORT");
        type = b->ctrl_type;
        tl_txn_fetch_free(&f);
    }
    return type;
}

/* A read_committed consumer over every node reads, in every partition,
 * exactly the committed transactions of 0..upto, in order, at their
 * offsets, and ends at the end of upto. */
static void check_read_committed(int upto, const char *what)
{
    tl_txn_reader *r = tl_txn_reader_new(bs_all, TOPIC, NPART, TL_READ_COMMITTED);
    int64_t until[NPART], offs[NTXN * NMSG];
    char *vals[NTXN * NMSG];
    int total = 0;
    double t0 = tl_now();

    for (int p = 0; p < NPART; p++)
        until[p] = first_offset(upto + 1);
    TL_ASSERT(tl_txn_reader_poll(r, until, 40), "%s: read_committed: %s not read to %" PRId64
              " in 40 s", what, TOPIC, first_offset(upto + 1));
    for (int p = 0; p < NPART; p++) {
        int n = 0;
        for (int k = 0; k <= upto; k++)
            for (int m = 0; committed_txn[k] && m < NMSG; m++) {
                offs[n] = first_offset(k) + m;
                vals[n++] = strdup(value_of(k, p, m));
            }
        tl_txn_reader_expect(r, p, n, offs, vals, what);
        TL_ASSERT(r->parts[p].eof == first_offset(upto + 1), "%s: %s-%d: end at %" PRId64
                  ", want %" PRId64, what, TOPIC, p, r->parts[p].eof, first_offset(upto + 1));
        for (int i = 0; i < n; i++)
            free(vals[i]);
        total += n;
    }
    tl_txn_reader_poll(r, NULL, 0.3); /* nothing more comes */
    TL_ASSERT(tl_txn_reader_count(r) == total, "%s: read_committed: %d messages, want %d", what,
              tl_txn_reader_count(r), total);
    tl_txn_reader_free(r);
    tl_log("%s: read_committed reads the %d committed messages of transactions 0-%d in order "
           "(%.2f s)", what, total, upto, tl_now() - t0);
}

/* The aborted transactions of 0..5 as each leader's read_committed Fetch
 * from 0 lists them, and every marker in its place. */
static void check_fetch_aborted(void)
{
    for (int32_t p = 0; p < NPART; p++) {
        tl_node *l = leader_node(TOPIC, p);
        tl_txn_fetch f;
        int n = 0;
        int64_t next = 0;
        tl_txn_fetch_raw(l->bootstrap, TOPIC, p, 0, TL_READ_COMMITTED, 12, &f);
        TL_ASSERT(!f.error, "Fetch %s-%d at node %d: error %d", TOPIC, (int)p, l->id, f.error);
        TL_ASSERT_EQ(f.last_stable_offset, first_offset(6));
        TL_ASSERT_EQ(f.high_watermark, first_offset(6));
        for (int i = 0; i < f.nbatch; i++) {
            const tl_txn_batch *b = &f.batches[i];
            if (pid0 < 0)
                pid0 = b->producer_id;
            TL_ASSERT(b->producer_id == pid0 && b->transactional,
                      "%s-%d at %" PRId64 ": producer %" PRId64 " (want %" PRId64
                      "), transactional %d", TOPIC, (int)p, b->base_offset, b->producer_id, pid0,
                      b->transactional);
            for (int j = 0; j < b->nrec; j++, next++) {
                int k = (int)(next / SPAN), m = (int)(next % SPAN);
                TL_ASSERT(b->offsets[j] == next, "%s-%d: record at %" PRId64 ", want %" PRId64,
                          TOPIC, (int)p, b->offsets[j], next);
                if (m == NMSG)
                    TL_ASSERT(b->control && b->nrec == 1 &&
                                  b->ctrl_type == (committed_txn[k] ? CTRL_COMMIT : CTRL_ABORT),
                              "%s-%d at %" PRId64 ": want transaction %d's %s marker (control %d,"
                              " type %d)", TOPIC, (int)p, next, k,
                              committed_txn[k] ? "COMMIT" : "ABORT", b->control, b->ctrl_type);
                else
                    TL_ASSERT(!b->control && b->values[j] &&
                                  !strcmp(b->values[j], value_of(k, p, m)),
                              "%s-%d at %" PRId64 ": '%s', want '%s'", TOPIC, (int)p, next,
                              b->values[j] ? b->values[j] : "(null)", value_of(k, p, m));
            }
        }
        TL_ASSERT(next == first_offset(6), "%s-%d: records up to %" PRId64 ", want %" PRId64,
                  TOPIC, (int)p, next, first_offset(6));
        for (int k = 1; k < 6; k += 2) {
            TL_ASSERT(n < f.n_aborted && f.aborted_pid[n] == pid0 &&
                          f.aborted_first[n] == first_offset(k),
                      "%s-%d at node %d: aborted transaction %d: (%" PRId64 ", %" PRId64
                      ") of %d, want (%" PRId64 ", %" PRId64 ")", TOPIC, (int)p, l->id, n,
                      n < f.n_aborted ? f.aborted_pid[n] : -1,
                      n < f.n_aborted ? f.aborted_first[n] : -1, f.n_aborted, pid0,
                      first_offset(k));
            n++;
        }
        TL_ASSERT(f.n_aborted == n, "%s-%d: %d aborted transactions, want %d", TOPIC, (int)p,
                  f.n_aborted, n);
        tl_txn_fetch_free(&f);
    }
    tl_log("each leader's read_committed Fetch: transactions 1, 3, 5 of producer %" PRId64
           " aborted, every marker in its place", pid0);
}

/* Whether every running node's Metadata shows every partition of topic
 * with a leader and an ISR of N (a node just started may still show its
 * state from before its kill). */
static int isr_whole_everywhere(const char *topic, int nparts)
{
    for (int id = 1; id <= N; id++) {
        tl_kraft_topic t;
        if (!tl_node_running(tl_cluster_node(c, id)))
            return 0;
        if (tl_kraft_metadata(tl_cluster_node(c, id), topic, &t) || t.npart != nparts)
            return 0;
        for (int p = 0; p < nparts; p++)
            if (t.leader[p] < 0 || t.nisr[p] != N)
                return 0;
    }
    return 1;
}

static void wait_isrs(double timeout_s, const char *what)
{
    double t0 = tl_now();
    while (!isr_whole_everywhere(TOPIC, NPART) || !isr_whole_everywhere(TSTATE, NTSP) ||
           !isr_whole_everywhere("__consumer_offsets", NOFF)) {
        TL_ASSERT(tl_now() < t0 + timeout_s, "%s: the ISRs are not whole after %.0f s", what,
                  timeout_s);
        usleep(100 * 1000);
    }
    tl_log("%s: every ISR whole (%.2f s)", what, tl_now() - t0);
}

/* ---- step 1 ---- */

static int step1(void)
{
    tl_kraft_topic t;
    char v[64];
    double t0 = tl_now();
    int led[N + 1] = {0};

    int coord_id = txn_coordinator(-1, 60);
    int32_t tp = tl_kraft_group_partition(TXN_ID, NTSP);
    tl_log("step 1: every node names node %d the coordinator of %s (%s-%d) in %.2f s", coord_id,
           TXN_ID, TSTATE, (int)tp, tl_now() - t0);
    for (int id = 1; id <= N; id++) {
        describe_min_isr(tl_cluster_node(c, id), TSTATE, v, sizeof(v));
        TL_ASSERT(!strcmp(v, "2"), "node %d: %s's min.insync.replicas %s, want 2", id, TSTATE, v);
        describe_min_isr(tl_cluster_node(c, id), TOPIC, v, sizeof(v));
        TL_ASSERT(!strcmp(v, "2"), "node %d: %s's min.insync.replicas %s, want 2", id, TOPIC, v);
    }
    TL_ASSERT_EQ(tl_kraft_metadata(tl_cluster_node(c, 1), TOPIC, &t), 0);
    TL_ASSERT_EQ(t.npart, NPART);
    for (int p = 0; p < NPART; p++) {
        TL_ASSERT(t.nrep[p] == N && t.leader[p] >= 1 && t.leader[p] <= N,
                  "%s-%d: %d replicas, leader %d", TOPIC, p, t.nrep[p], (int)t.leader[p]);
        led[t.leader[p]]++;
    }
    TL_ASSERT(led[1] && led[2] && led[3], "%s's partitions led by nodes 1, 2, 3: %d, %d, %d",
              TOPIC, led[1], led[2], led[3]);
    tl_log("step 1: %s of %d partitions of %d replicas, min.insync.replicas 2 (also %s's); "
           "%s led by nodes 1, 2, 3: %d, %d, %d partitions", TSTATE, NTSP, N, TSTATE, TOPIC,
           led[1], led[2], led[3]);
    return coord_id;
}

/* ---- step 2 ---- */

static void step2(rd_kafka_t *rk, rd_kafka_t *cg)
{
    double t0 = tl_now();
    for (int k = 0; k < 6; k++) {
        int commit = k % 2 == 0;
        char what[64];
        produce_txn(rk, k);
        check_open(k);
        send_offsets(rk, k);
        check_pending_offsets(k);
        double t1 = tl_now();
        rd_kafka_error_t *error = commit ? rd_kafka_commit_transaction(rk, 30000)
                                         : rd_kafka_abort_transaction(rk, 30000);
        TL_ASSERT(!error, "%s %d: %s", commit ? "commit" : "abort", k,
                  rd_kafka_error_string(error));
        committed_txn[k] = commit;
        snprintf(what, sizeof(what), "after %s %d", commit ? "commit" : "abort", k);
        wait_latest_all(first_offset(k + 1), what);
        check_group(cg, last_committed(k), what);
        tl_log("step 2: transaction %d %s in %.3f s, its markers at every leader, %s's offsets "
               "those of %d", k, commit ? "committed" : "aborted", tl_now() - t1, GROUP,
               last_committed(k));
    }
    check_read_committed(5, "step 2");
    check_fetch_aborted();
    tl_log("step 2 in %.2f s", tl_now() - t0);
}

/* ---- step 3 ---- */

/* Transactions 5 to 7 in partition 0, read uncommitted at its leader:
 * every batch of the one producer id; transaction 7 (the new producer's)
 * at a higher epoch than 6 (the first producer's), 6's marker at an
 * epoch between them and of a higher coordinator epoch than 5's (the new
 * coordinator's). */
static void check_epochs(void)
{
    tl_txn_fetch f;
    int e6 = -1, e7 = -1, em = -1, ce5 = -1, ce6 = -1;
    tl_txn_fetch_raw(leader_node(TOPIC, 0)->bootstrap, TOPIC, 0, first_offset(5),
                     TL_READ_UNCOMMITTED, 12, &f);
    TL_ASSERT(!f.error, "Fetch %s-0: error %d", TOPIC, f.error);
    for (int i = 0; i < f.nbatch; i++) {
        const tl_txn_batch *b = &f.batches[i];
        int k = (int)(b->base_offset / SPAN);
        TL_ASSERT(b->producer_id == pid0, "%s-0 at %" PRId64 ": producer %" PRId64 ", want %"
                  PRId64, TOPIC, b->base_offset, b->producer_id, pid0);
        if (b->control && k == 5)
            ce5 = b->ctrl_coordinator_epoch;
        else if (b->control && k == 6) {
            ce6 = b->ctrl_coordinator_epoch;
            em = b->producer_epoch;
        } else if (!b->control && k == 6)
            e6 = b->producer_epoch;
        else if (!b->control && k == 7)
            e7 = b->producer_epoch;
    }
    tl_txn_fetch_free(&f);
    TL_ASSERT(e6 >= 0 && e7 > e6 && em >= e6 && em <= e7,
              "producer epochs: transaction 6 %d, its marker %d, transaction 7 %d", e6, em, e7);
    TL_ASSERT(ce5 >= 0 && ce6 > ce5, "coordinator epochs of the markers: transaction 5 %d, 6 %d",
              ce5, ce6);
    tl_log("step 3: producer %" PRId64 " at epoch %d in transaction 6, %d in its marker, %d in "
           "transaction 7; markers of coordinator epoch %d, then %d", pid0, e6, em, e7, ce5, ce6);
}

static rd_kafka_t *step3(rd_kafka_t *rk, rd_kafka_t *cg, int coord_id)
{
    double t0 = tl_now();
    char bs[256] = "";
    rd_kafka_error_t *error;

    wait_isrs(60, "step 3");
    coord_id = txn_coordinator(-1, 30);
    produce_txn(rk, 6);
    send_offsets(rk, 6);
    tl_log("step 3: transaction 6 open (produced, flushed, offsets sent); kill -9 of node %d, "
           "its coordinator%s", coord_id,
           tl_kraft_active_controller(c) == coord_id ? " and the active controller" : "");
    double killed = tl_now();
    tl_node_kill9(tl_cluster_node(c, coord_id));
    error = rd_kafka_commit_transaction(rk, 1000);
    int accepted = !error;
    tl_log("step 3: commit_transaction of 6 after the kill: %s",
           error ? rd_kafka_error_string(error) : "succeeded");
    if (error)
        rd_kafka_error_destroy(error);
    rd_kafka_destroy(rk);

    int new_coord = txn_coordinator(coord_id, 30);
    double moved = tl_now() - killed;
    tl_log("step 3: the other nodes name node %d the coordinator %.2f s after the kill",
           new_coord, moved);
    for (int id = 1; id <= N; id++)
        if (id != coord_id)
            snprintf(bs + strlen(bs), sizeof(bs) - strlen(bs), "%s%s", *bs ? "," : "",
                     tl_cluster_node(c, id)->bootstrap);
    rk = producer(bs);
    int tries = 0;
    for (;;) {
        tries++;
        error = rd_kafka_init_transactions(rk, 10000);
        if (!error)
            break;
        tl_log("step 3: init_transactions of the new producer (try %d, %.1f s after the kill): "
               "%s%s", tries, tl_now() - killed, rd_kafka_error_string(error),
               rd_kafka_error_is_fatal(error) ? " (fatal: a new producer)" : "");
        TL_ASSERT(tl_now() < killed + 60, "init_transactions did not succeed in 60 s: %s",
                  rd_kafka_error_string(error));
        if (rd_kafka_error_is_fatal(error)) {
            rd_kafka_destroy(rk);
            rk = producer(bs);
        }
        rd_kafka_error_destroy(error);
        usleep(200 * 1000);
    }
    double inited = tl_now() - killed;
    TL_ASSERT(txn_coordinator(coord_id, 30) == new_coord, "the coordinator moved again");
    tl_log("step 3: the new producer's init_transactions succeeded %.2f s after the kill (%d "
           "tries); node %d coordinates now", inited, tries, new_coord);

    /* Transaction 6 resolved whole. */
    wait_latest_all(first_offset(7), "transaction 6 resolved");
    int type = marker_type(6, "step 3");
    committed_txn[6] = type == CTRL_COMMIT;
    TL_ASSERT(!accepted || committed_txn[6], "commit_transaction of 6 succeeded, its markers are "
              "ABORT");
    check_group(cg, last_committed(6), "transaction 6 resolved");
    tl_log("step 3: transaction 6 %s whole on the %d partitions; %s's offsets those of %d",
           committed_txn[6] ? "COMMITTED (its commit was accepted by the new coordinator)"
                            : "ABORTED (fenced by the new producer)",
           NPART, GROUP, last_committed(6));

    /* The new producer's transaction. */
    produce_txn(rk, 7);
    send_offsets(rk, 7);
    error = rd_kafka_commit_transaction(rk, 30000);
    TL_ASSERT(!error, "commit 7: %s", rd_kafka_error_string(error));
    committed_txn[7] = 1;
    wait_latest_all(first_offset(8), "after commit 7");
    TL_ASSERT_EQ(marker_type(7, "after commit 7"), CTRL_COMMIT);
    check_epochs();
    check_group(cg, 7, "after commit 7");
    check_read_committed(7, "step 3, node down");

    /* The killed node back. */
    double t1 = tl_now();
    tl_node_start(tl_cluster_node(c, coord_id));
    wait_isrs(60, "step 3, node back");
    int32_t tp = tl_kraft_group_partition(TXN_ID, NTSP);
    char why[512] = "";
    while (!tl_logfiles_same(c, TSTATE, tp, why, sizeof(why))) {
        TL_ASSERT(tl_now() < t1 + 60, "%s-%d differs between the nodes: %s", TSTATE, (int)tp, why);
        usleep(200 * 1000);
    }
    check_read_committed(7, "step 3, node back");
    tl_log("step 3: node %d back, %s-%d the same bytes on every node (%.2f s); step 3 in %.2f s",
           coord_id, TSTATE, (int)tp, tl_now() - t1, tl_now() - t0);
    return rk;
}

/* ---- step 4 ---- */

typedef struct commit_arg {
    rd_kafka_t *rk;
    rd_kafka_error_t *error;
    double took;
    int done; /* set (atomically) once the call returned */
} commit_arg;

static void *commit_thread(void *arg)
{
    commit_arg *a = arg;
    double t0 = tl_now();
    a->error = rd_kafka_commit_transaction(a->rk, 60000);
    a->took = tl_now() - t0;
    __atomic_store_n(&a->done, 1, __ATOMIC_SEQ_CST);
    return NULL;
}

static void step4(rd_kafka_t *rk, rd_kafka_t *cg)
{
    double t0 = tl_now();
    int coord_id = txn_coordinator(-1, 30), ctl = tl_kraft_active_controller(c);
    int victim = -1;
    int32_t vp = -1;
    for (int32_t p = 0; p < NPART; p++) {
        int32_t l = tl_kraft_leader_of(c, TOPIC, p);
        if (l > 0 && l != coord_id && (victim < 0 || (victim == ctl && l != ctl))) {
            victim = l;
            vp = p;
        }
    }
    TL_ASSERT(victim > 0, "every partition of %s led by the coordinator %d", TOPIC, coord_id);

    produce_txn(rk, 8);
    send_offsets(rk, 8);
    /* The victim's answers and its followers' fetches slowed down, so that
     * the markers written to it are still unanswered at the kill (else
     * its leader may have answered them all within a millisecond). */
    tl_proxy_delay(front[victim], TL_DIR_BOTH, DELAY_MS);
    commit_arg a = {rk, NULL, 0, 0};
    pthread_t th;
    TL_ASSERT_EQ(pthread_create(&th, NULL, commit_thread, &a), 0);
    usleep(100 * 1000);
    int returned = __atomic_load_n(&a.done, __ATOMIC_SEQ_CST);
    double killed = tl_now();
    tl_proxy_cut(front[victim]); /* its connections closed at once, new ones refused */
    tl_node_kill9(tl_cluster_node(c, victim));
    tl_log("step 4: commit_transaction of 8 started; 100 ms later (%s) node %d, leader of %s-%d%s, "
           "cut off and killed; node %d coordinates", returned ? "it had returned" : "still in it",
           victim, TOPIC, (int)vp, victim == ctl ? " and the active controller" : "", coord_id);
    TL_ASSERT_EQ(pthread_join(th, NULL), 0);
    TL_ASSERT(!a.error, "commit 8 with node %d killed: %s", victim,
              rd_kafka_error_string(a.error));
    committed_txn[8] = 1;
    tl_log("step 4: commit_transaction of 8 succeeded in %.2f s", a.took);
    wait_latest_all(first_offset(9), "after commit 8");
    tl_log("step 4: transaction 8's markers in every partition %.2f s after the kill; %s-%d led "
           "by node %d now", tl_now() - killed, TOPIC, (int)vp, leader_node(TOPIC, vp)->id);
    TL_ASSERT_EQ(marker_type(8, "after commit 8"), CTRL_COMMIT);
    check_group(cg, 8, "after commit 8");
    check_read_committed(8, "step 4, node down");

    double t1 = tl_now();
    tl_proxy_heal(front[victim]);
    tl_node_start(tl_cluster_node(c, victim));
    wait_isrs(60, "step 4, node back");
    tl_logfiles_wait_same(c, TOPIC, NPART, 60);
    check_read_committed(8, "step 4, node back");
    tl_log("step 4: node %d back (%.2f s); step 4 in %.2f s", victim, tl_now() - t1,
           tl_now() - t0);
}

int main(void)
{
    tl_init("0804-txn-cluster");
    double t0 = tl_now();
    c = tl_cluster_new("0804-txn", TL_QUORUM_SHARED);
    tl_cluster_set(c, "broker.session.timeout.ms=4000");
    tl_cluster_set(c, "broker.heartbeat.interval.ms=500");
    tl_cluster_set(c, "offsets.topic.num.partitions=3");
    tl_cluster_set(c, "offsets.topic.replication.factor=3"); /* kafka-ref.sh sets 1 */
    tl_cluster_set(c, "transaction.state.log.num.partitions=5");
    tl_cluster_set(c, "transaction.state.log.replication.factor=3"); /* the same */
    tl_cluster_set(c, "transaction.state.log.min.isr=2");
    tl_cluster_add_n(c, N, TL_ROLE_COMBINED, NULL);
    for (int id = 1; id <= N; id++)
        front[id] = tl_node_front(tl_cluster_node(c, id));
    tl_kraft_view v;
    tl_kraft_start(c, &v);
    for (int id = 1; id <= N; id++)
        tl_kraft_wait_fenced(tl_cluster_node(c, 1), id, 0, 120);
    create_topic(tl_cluster_node(c, 1));
    snprintf(bs_all, sizeof(bs_all), "%s", tl_cluster_bootstrap(c));
    while (!tl_kraft_isr_whole(c, TOPIC, NPART, N)) {
        TL_ASSERT(tl_now() < t0 + 120, "%s's ISRs not whole", TOPIC);
        usleep(100 * 1000);
    }
    tl_log("cluster of %d combined nodes and %s up in %.2f s", N, TOPIC, tl_now() - t0);

    int coord_id = step1();

    rd_kafka_t *rk = producer(bs_all);
    double t1 = tl_now();
    rd_kafka_error_t *error = rd_kafka_init_transactions(rk, 30000);
    TL_ASSERT(!error, "init_transactions: %s", rd_kafka_error_string(error));
    tl_log("init_transactions of %s in %.3f s", TXN_ID, tl_now() - t1);
    rd_kafka_conf_t *conf = tl_conf(bs_all);
    tl_conf_set(conf, "group.id", GROUP);
    tl_conf_set(conf, "enable.auto.commit", "false");
    rd_kafka_t *cg = tl_new(RD_KAFKA_CONSUMER, conf);

    step2(rk, cg);
    rk = step3(rk, cg, coord_id);
    step4(rk, cg);

    rd_kafka_destroy(rk);
    rd_kafka_consumer_close(cg);
    rd_kafka_destroy(cg);
    tl_cluster_stop(c);
    tl_cluster_free(c);
    tl_log("0804 in %.1f s", tl_now() - t0);
    return tl_done();
}
