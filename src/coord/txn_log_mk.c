/* The markers of a transaction's end (txn_log_int.h), as Kafka's
 * TransactionMarkerChannelManager writes them: to each partition's
 * leader, appended here (txn_marker_append) when this node leads it, else
 * by a WriteTxnMarkers v1 to the leader's broker, one request per broker
 * and round. A partition whose answer may change (no leader yet, a
 * leader change, not enough replicas, a timeout, a lost connection) is
 * written again after TXN_LOG_RETRY_MS, to the leader known then; a
 * partition whose topic is gone leaves the transaction, as Kafka drops
 * it; other errors are logged and end that partition's marker. */
#include "coord/txn_log_int.h"

#include <stdlib.h>
#include <string.h>

#include "cluster/meta_image.h"
#include "proto/proto.h"
#include "util/logging.h"
#include "util/mem.h"

#define TXN_LOG_RETRY_MS 100
#define TXN_LOG_WTM_VERSION 1

/* One transaction end's markers: each partition's state (0 to write, 1
 * out, 2 done). */
typedef struct txn_log_mk_s {
    txn_log_t *h;
    txn_markers_t *m;
    uint8_t *st;
    int out;
    net_timer_id_t retry;
    struct txn_log_mk_s *next;
} txn_log_mk_t;

typedef struct txn_log_mk1_s {
    txn_log_mk_t *k;
    int i;
} txn_log_mk1_t;

/* A WriteTxnMarkers out: the partitions it carries. */
typedef struct txn_log_wtm_s {
    txn_log_mk_t *k;
    int *idx;
    int n;
} txn_log_wtm_t;

static void txn_log_mk_send(txn_log_mk_t *k);

static bool txn_log_retriable(int16_t err)
{
    switch (err) {
    case KERR_UNKNOWN_TOPIC_OR_PARTITION:
    case KERR_NOT_LEADER_OR_FOLLOWER:
    case KERR_NOT_ENOUGH_REPLICAS:
    case KERR_NOT_ENOUGH_REPLICAS_AFTER_APPEND:
    case KERR_REQUEST_TIMED_OUT:
    case KERR_KAFKA_STORAGE_ERROR:
    case KERR_NETWORK_EXCEPTION:
    case KERR_BROKER_NOT_AVAILABLE:
    case KERR_COORDINATOR_LOAD_IN_PROGRESS:
        return true;
    default:
        return false;
    }
}

static void txn_log_mk_unlink(txn_log_mk_t *k)
{
    for (txn_log_mk_t **pp = &k->h->rounds; *pp; pp = &(*pp)->next)
        if (*pp == k) {
            *pp = k->next;
            return;
        }
}

/* The round is over: answered, or (closing) dropped. */
static void txn_log_mk_end(txn_log_mk_t *k, bool answer)
{
    txn_log_t *h = k->h;
    txn_markers_t *m = k->m;

    txn_log_mk_unlink(k);
    free(k->st);
    free(k);
    if (answer)
        txn_markers_done(m);
    else
        txn_markers_free(m);
    if (h->closing)
        txn_log_free(h);
}

static void txn_log_mk_retry(net_loop_t *loop, void *data)
{
    txn_log_mk_t *k = data;
    (void)loop;
    k->retry = 0;
    txn_log_mk_send(k);
}

/* Every write of the round answered: again for those that may succeed
 * later, or the end. */
static void txn_log_mk_round(txn_log_mk_t *k)
{
    if (k->h->closing) {
        txn_log_mk_end(k, false);
        return;
    }
    for (int i = 0; i < k->m->n; i++)
        if (k->st[i] == 0) {
            k->retry = net_timer_add(k->h->loop, TXN_LOG_RETRY_MS, txn_log_mk_retry, k);
            return;
        }
    txn_log_mk_end(k, true);
}

/* Whether the topic of partition i still exists (a quorum's: in the
 * image). */
static bool txn_log_mk_exists(const txn_log_mk_t *k, int i)
{
    const txn_tp_t *tp = &k->m->tps[i];
    if (k->h->cfg.img) {
        const mi_topic_t *mt = meta_image_topic(k->h->cfg.img, tp->topic, strlen(tp->topic));
        return mt && tp->partition < mt->nparts;
    }
    topic_t *t = part_topic_get(k->h->reg, tp->topic, strlen(tp->topic));
    return t && tp->partition < t->nparts;
}

/* Partition i's marker answered err (its leader's). */
static void txn_log_mk_result(txn_log_mk_t *k, int i, int16_t err, bool local)
{
    txn_log_t *h = k->h;
    const txn_tp_t *tp = &k->m->tps[i];

    if (err && txn_log_retriable(err) && txn_log_mk_exists(k, i)) {
        k->st[i] = 0;
        return;
    }
    if (err && err != KERR_UNKNOWN_TOPIC_OR_PARTITION)
        lg_warn("transaction marker for producer %lld on %s-%d: %s",
                (long long)k->m->producer_id, tp->topic, tp->partition, kerr_name(err));
    k->st[i] = 2;
    if (!err && local && h->cfg.on_marker && !h->closing)
        h->cfg.on_marker(h->cfg.marker_ctx, tp->topic, tp->partition, k->m->producer_id,
                         k->m->commit);
}

static void txn_log_mk_done(void *arg, int16_t err)
{
    txn_log_mk1_t *one = arg;
    txn_log_mk_t *k = one->k;

    k->out--;
    txn_log_mk_result(k, one->i, err, true);
    free(one);
    if (k->out == 0)
        txn_log_mk_round(k);
}

/* ---- WriteTxnMarkers to another broker ---- */

/* The error the answer gives partition i, or NETWORK_EXCEPTION when it
 * has none for it. */
static int16_t txn_log_wtm_err(const proto_write_txn_markers_resp_t *r, const txn_tp_t *tp)
{
    for (int32_t a = 0; a < r->markers.n; a++)
        for (int32_t b = 0; b < r->markers.v[a].topics.n; b++) {
            const proto_write_txn_markers_resp_writable_txn_marker_topic_result_t *t =
                &r->markers.v[a].topics.v[b];
            if (t->name.len != (int32_t)strlen(tp->topic) ||
                memcmp(t->name.p, tp->topic, (size_t)t->name.len))
                continue;
            for (int32_t c = 0; c < t->partitions.n; c++)
                if (t->partitions.v[c].partition_index == tp->partition)
                    return t->partitions.v[c].error_code;
        }
    return KERR_NETWORK_EXCEPTION;
}

static void txn_log_wtm_resp(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    txn_log_wtm_t *w = arg;
    txn_log_mk_t *k = w->k;
    proto_write_txn_markers_resp_t r;
    arena_t arena;
    bool ok;

    (void)out;
    arena_init(&arena, 1024);
    proto_write_txn_markers_resp_init(&r);
    ok = !resp->err && proto_write_txn_markers_resp_decode(&r, resp->api_version, resp->body,
                                                           resp->len, &arena) == 0;
    for (int j = 0; j < w->n; j++)
        txn_log_mk_result(k, w->idx[j],
                          ok ? txn_log_wtm_err(&r, &k->m->tps[w->idx[j]])
                             : KERR_NETWORK_EXCEPTION,
                          false);
    arena_destroy(&arena);
    free(w->idx);
    free(w);
    if (--k->out == 0)
        txn_log_mk_round(k);
}

/* The partitions idx[0..n) led by broker leader, in one request. */
static void txn_log_wtm_send(txn_log_mk_t *k, int32_t leader, int *idx, int n)
{
    txn_markers_t *m = k->m;
    net_out_t *out = k->h->peers ? part_peer_out(k->h->peers, leader) : NULL;
    proto_write_txn_markers_req_t r;
    proto_write_txn_markers_req_writable_txn_marker_t mk;
    arena_t arena;
    buf_t body;

    if (!out) {
        for (int j = 0; j < n; j++)
            k->st[idx[j]] = 0; /* no endpoint yet: the next round */
        free(idx);
        return;
    }
    arena_init(&arena, 1024);
    proto_write_txn_markers_req_init(&r);
    proto_write_txn_markers_req_writable_txn_marker_init(&mk);
    mk.producer_id = m->producer_id;
    mk.producer_epoch = m->epoch;
    mk.transaction_result = m->commit;
    mk.coordinator_epoch = m->coordinator_epoch;
    mk.topics.v = arena_calloc(&arena, (size_t)n, sizeof(*mk.topics.v));
    for (int j = 0; j < n; j++) {
        proto_write_txn_markers_req_writable_txn_marker_topic_t *t = &mk.topics.v[mk.topics.n++];
        proto_write_txn_markers_req_writable_txn_marker_topic_init(t);
        t->name = (proto_str_t){m->tps[idx[j]].topic, (int32_t)strlen(m->tps[idx[j]].topic)};
        t->partition_indexes.n = 1;
        t->partition_indexes.v = &m->tps[idx[j]].partition;
    }
    r.markers.n = 1;
    r.markers.v = &mk;
    buf_init(&body);
    proto_write_txn_markers_req_encode(&r, TXN_LOG_WTM_VERSION, &body);
    arena_destroy(&arena);
    txn_log_wtm_t *w = xcalloc(1, sizeof(*w));
    w->k = k;
    w->idx = idx;
    w->n = n;
    k->out++;
    if (net_out_send(out, PROTO_API_WRITE_TXN_MARKERS, TXN_LOG_WTM_VERSION, &body,
                     part_peer_timeout(out, k->h->cfg.timeout_ms), txn_log_wtm_resp, w) < 0) {
        k->out--;
        for (int j = 0; j < n; j++)
            k->st[idx[j]] = 0;
        free(idx);
        free(w);
        buf_free(&body);
    }
}

/* ---- a round ---- */

/* The leader of partition i: this node (-2 on a single node), another
 * broker, or -1 for none known. */
static int32_t txn_log_mk_leader(const txn_log_mk_t *k, int i)
{
    const txn_tp_t *tp = &k->m->tps[i];
    const mi_topic_t *mt;

    if (!k->h->cfg.img)
        return -2;
    mt = meta_image_topic(k->h->cfg.img, tp->topic, strlen(tp->topic));
    if (!mt || tp->partition < 0 || tp->partition >= mt->nparts || !mt->parts[tp->partition].present)
        return -1;
    return mt->parts[tp->partition].leader == k->h->cfg.node_id ? -2
                                                               : mt->parts[tp->partition].leader;
}

static void txn_log_mk_local(txn_log_mk_t *k, int i)
{
    txn_markers_t *m = k->m;
    txn_log_mk1_t *one = xcalloc(1, sizeof(*one));

    one->k = k;
    one->i = i;
    k->out++;
    txn_marker_append(k->h->reg, m->tps[i].topic, strlen(m->tps[i].topic), m->tps[i].partition,
                      m->producer_id, m->epoch, m->commit, m->coordinator_epoch,
                      k->h->cfg.timeout_ms, txn_log_mk_done, one);
}

/* The partitions still to write led by the same broker as partition i. */
static void txn_log_mk_remote(txn_log_mk_t *k, int i, int32_t leader)
{
    int *idx = xcalloc((size_t)k->m->n, sizeof(*idx));
    int n = 0;

    for (int j = i; j < k->m->n; j++)
        if (k->st[j] == 0 && (j == i || txn_log_mk_leader(k, j) == leader)) {
            k->st[j] = 1;
            idx[n++] = j;
        }
    txn_log_wtm_send(k, leader, idx, n);
}

static void txn_log_mk_send(txn_log_mk_t *k)
{
    txn_markers_t *m = k->m;

    k->out++; /* held over the loop: answers in the call do not end the round */
    for (int i = 0; i < m->n; i++) {
        if (k->st[i] != 0)
            continue;
        int32_t leader = txn_log_mk_leader(k, i);
        if (leader == -2) {
            k->st[i] = 1;
            txn_log_mk_local(k, i);
        } else if (leader == -1) {
            if (!txn_log_mk_exists(k, i))
                k->st[i] = 2; /* deleted: it leaves the transaction */
        } else {
            txn_log_mk_remote(k, i, leader);
        }
    }
    if (--k->out == 0)
        txn_log_mk_round(k);
}

void txn_log_markers(void *ctx, txn_markers_t *m)
{
    txn_log_t *h = ctx;
    txn_log_mk_t *k;

    if (h->closing) {
        txn_markers_free(m);
        return;
    }
    k = xcalloc(1, sizeof(*k));
    k->h = h;
    k->m = m;
    k->st = xcalloc((size_t)m->n + 1, 1);
    k->next = h->rounds;
    h->rounds = k;
    txn_log_mk_send(k);
}

void txn_log_mk_close(txn_log_t *h)
{
    /* rounds waiting to retry end now; those with writes out when they
     * are answered */
    for (txn_log_mk_t *k = h->rounds, *next; k; k = next) {
        next = k->next;
        if (k->retry && !k->out) {
            net_timer_cancel(h->loop, k->retry);
            k->retry = 0;
            txn_log_mk_end(k, false);
        }
    }
}
