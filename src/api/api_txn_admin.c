/* DescribeTransactions (65) and ListTransactions (66), as Kafka's
 * transaction coordinator answers them from its entries (what
 * kafka-transactions.sh describe and list show). ListTransactions v2's
 * TransactionalIdPattern is a Java regular expression in Kafka; here it is
 * matched, whole, as a POSIX extended one, which agrees for the patterns
 * tools use (literals, ., *, +, ?, classes, alternation, groups). */
#include "api/api_txn.h"
#include "api/api_util.h"

#include <regex.h>
#include <stdlib.h>
#include <string.h>

#include "coord/txn.h"
#include "net/net_loop.h"
#include "util/kerr.h"

typedef proto_describe_transactions_resp_transaction_state_t api_dt_state_t;

static proto_str_t api_txn_str(const char *s)
{
    return (proto_str_t){s, (int32_t)strlen(s)};
}

/* The entry's partitions grouped by topic, in their order. */
static void api_dt_topics(api_req_t *req, const txn_t *t, api_dt_state_t *st)
{
    st->topics.v = arena_calloc(req->arena, (size_t)t->ntps + 1, sizeof(*st->topics.v));
    for (int i = 0; i < t->ntps; i++) {
        int32_t k = 0;
        while (k < st->topics.n && strcmp(st->topics.v[k].topic.p, t->tps[i].topic) != 0)
            k++;
        if (k == st->topics.n) {
            proto_describe_transactions_resp_topic_data_init(&st->topics.v[k]);
            st->topics.v[k].topic = api_txn_str(t->tps[i].topic);
            st->topics.v[k].partitions.v =
                arena_calloc(req->arena, (size_t)t->ntps, sizeof(int32_t));
            st->topics.n++;
        }
        st->topics.v[k].partitions.v[st->topics.v[k].partitions.n++] = t->tps[i].partition;
    }
}

static void api_dt_one(api_req_t *req, struct txn_coord_s *c, proto_str_t id, api_dt_state_t *st)
{
    const txn_t *t = NULL;
    int16_t err = KERR_NONE;

    proto_describe_transactions_resp_transaction_state_init(st);
    st->transactional_id = id;
    if (!c)
        err = KERR_COORDINATOR_NOT_AVAILABLE;
    else if (id.len <= 0)
        err = KERR_TRANSACTIONAL_ID_NOT_FOUND;
    else if (!(t = txn_lookup(c, id.p, (size_t)id.len, &err)) && !err)
        err = KERR_TRANSACTIONAL_ID_NOT_FOUND;
    st->error_code = err;
    if (err || !t)
        return;
    st->transaction_state = api_txn_str(txn_state_name(t->state));
    st->transaction_timeout_ms = t->timeout_ms;
    st->transaction_start_time_ms = t->start_ms;
    st->producer_id = t->producer_id;
    st->producer_epoch = t->epoch;
    api_dt_topics(req, t, st);
}

void api_describe_transactions(api_req_t *req)
{
    proto_describe_transactions_req_t r;
    proto_describe_transactions_resp_t resp;

    proto_describe_transactions_req_init(&r);
    if (proto_describe_transactions_req_decode(&r, req->hdr.api_version, req->body,
                                               req->body_len, req->arena) < 0) {
        api_close(req, "malformed DescribeTransactions request");
        return;
    }
    struct txn_coord_s *c = api_txn_coord(req->b);
    proto_describe_transactions_resp_init(&resp);
    int32_t n = r.transactional_ids.n < 0 ? 0 : r.transactional_ids.n;
    resp.transaction_states.n = n;
    resp.transaction_states.v =
        arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp.transaction_states.v));
    for (int32_t i = 0; i < n; i++)
        api_dt_one(req, c, r.transactional_ids.v[i], &resp.transaction_states.v[i]);
    API_REPLY(req, describe_transactions, &resp);
}

/* ---- ListTransactions ---- */

typedef struct api_lt_s {
    api_req_t *req;
    const proto_list_transactions_req_t *r;
    bool *states; /* the states asked for (none asked: all) */
    bool any_state;
    regex_t re;
    bool has_re;
    int64_t now;
    proto_list_transactions_resp_t *resp;
    int32_t cap;
} api_lt_t;

static bool api_lt_match(const api_lt_t *lt, const txn_t *t)
{
    const proto_list_transactions_req_t *r = lt->r;
    bool pid_ok = r->producer_id_filters.n <= 0;

    for (int32_t i = 0; !pid_ok && i < r->producer_id_filters.n; i++)
        pid_ok = r->producer_id_filters.v[i] == t->producer_id;
    if (!pid_ok || (lt->any_state && !lt->states[t->state]))
        return false;
    if (r->duration_filter >= 0 && lt->now - t->start_ms <= r->duration_filter)
        return false;
    return !lt->has_re || regexec(&lt->re, t->id, 0, NULL, 0) == 0;
}

static void api_lt_each(void *arg, const txn_t *t)
{
    api_lt_t *lt = arg;
    proto_list_transactions_resp_t *resp = lt->resp;

    if (!api_lt_match(lt, t))
        return;
    if (resp->transaction_states.n == lt->cap) {
        lt->cap = lt->cap ? lt->cap * 2 : 16;
        proto_list_transactions_resp_transaction_state_t *v =
            arena_calloc(lt->req->arena, (size_t)lt->cap, sizeof(*v));
        if (resp->transaction_states.n)
            memcpy(v, resp->transaction_states.v, sizeof(*v) * (size_t)resp->transaction_states.n);
        resp->transaction_states.v = v;
    }
    proto_list_transactions_resp_transaction_state_t *s =
        &resp->transaction_states.v[resp->transaction_states.n++];
    proto_list_transactions_resp_transaction_state_init(s);
    s->transactional_id = (proto_str_t){t->id, (int32_t)t->id_len};
    s->producer_id = t->producer_id;
    s->transaction_state = api_txn_str(txn_state_name(t->state));
}

/* The state filters: known ones into lt->states, the others listed. */
static void api_lt_states(api_lt_t *lt, proto_list_transactions_resp_t *resp)
{
    const proto_str_array_t *f = &lt->r->state_filters;
    int32_t n = f->n < 0 ? 0 : f->n;

    resp->unknown_state_filters.v = arena_calloc(lt->req->arena, (size_t)n + 1, sizeof(proto_str_t));
    for (int32_t i = 0; i < n; i++) {
        txn_state_t s = f->v[i].len > 0 ? txn_state_by_name(f->v[i].p, (size_t)f->v[i].len)
                                        : TXN_NONE;
        if (s == TXN_NONE) {
            resp->unknown_state_filters.v[resp->unknown_state_filters.n++] = f->v[i];
            continue;
        }
        lt->states[s] = true;
        lt->any_state = true;
    }
}

/* A whole-id match of the pattern; 0, or -1 when it does not compile. */
static int api_lt_pattern(api_lt_t *lt)
{
    proto_str_t p = lt->r->transactional_id_pattern;
    if (p.len <= 0)
        return 0;
    char *anchored = arena_alloc(lt->req->arena, (size_t)p.len + 5);
    memcpy(anchored, "^(", 2);
    memcpy(anchored + 2, p.p, (size_t)p.len);
    memcpy(anchored + 2 + p.len, ")$", 3);
    if (regcomp(&lt->re, anchored, REG_EXTENDED | REG_NOSUB) != 0)
        return -1;
    lt->has_re = true;
    return 0;
}

void api_list_transactions(api_req_t *req)
{
    proto_list_transactions_req_t r;
    proto_list_transactions_resp_t resp;
    bool states[TXN_PREPARE_EPOCH_FENCE + 1] = {false};
    api_lt_t lt = {req, &r, states, false, {0}, false, net_now_wall_ms(), &resp, 0};

    proto_list_transactions_req_init(&r);
    if (proto_list_transactions_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                           req->arena) < 0) {
        api_close(req, "malformed ListTransactions request");
        return;
    }
    struct txn_coord_s *c = api_txn_coord(req->b);
    proto_list_transactions_resp_init(&resp);
    api_lt_states(&lt, &resp);
    if (!c)
        resp.error_code = KERR_COORDINATOR_NOT_AVAILABLE;
    else if (api_lt_pattern(&lt) < 0)
        resp.error_code = KERR_INVALID_REQUEST;
    else if (!(resp.error_code = txn_loading(c)))
        txn_each(c, api_lt_each, &lt);
    if (lt.has_re)
        regfree(&lt.re);
    API_REPLY(req, list_transactions, &resp);
}
