/* Fetch (key 1) for consumers: a request is first turned into a list of
 * items (the request's partitions, or those of its fetch session, kept in
 * api_fsess.c), which the partition layer reads, waiting up to
 * max_wait_ms for min_bytes (part_fetch.h); the answer then names regions
 * of segment files, which go to the socket with sendfile. An incremental
 * answer holds only the partitions with news for the session's client. */
#include <string.h>
#include <unistd.h>

#include "api/api_fsess.h"
#include "api/api_leader.h"
#include "api/api_util.h"
#include "partition/part_fetch.h"


typedef struct api_fitem_s {
    proto_str_t name;      /* as the client names the topic (v < 13) */
    proto_uuid_t id;       /* v13+ */
    int32_t partition;
    int64_t fetch_offset;
    int32_t max_bytes;
    int32_t current_leader_epoch;
    int32_t last_fetched_epoch;
    int64_t log_start;     /* a follower's log start, -1 */
    int sp;                /* index in the session's partitions, or -1 */
} api_fitem_t;

typedef struct api_fetch_s {
    part_fetch_t pf;       /* first: the partition layer's fetch */
    api_req_t *req;
    proto_fetch_req_t r;
    api_fitem_t *items;
    int nitems;
    int32_t session_id;    /* answered to the client; 0 = none */
    int32_t session_epoch; /* the session's epoch after this request */
    int incremental;       /* answer only partitions with news */
} api_fetch_t;

static fsess_t *api_fetch_session(api_fetch_t *f)
{
    if (!f->session_id)
        return NULL;
    fsess_t *s = fsess_get(f->req->b->fsess, f->session_id);
    return s && s->epoch == f->session_epoch ? s : NULL;
}

/* Whether an incremental answer includes the partition: records, an
 * error, a divergence, or offsets the session's client has not seen. */
static int api_fetch_news(api_fetch_t *f, int i, const part_read_t *rd)
{
    if (!f->incremental || rd->len > 0 || rd->err || rd->diverging_epoch >= 0)
        return 1;
    fsess_t *s = api_fetch_session(f);
    if (!s || f->items[i].sp < 0)
        return 0;
    const fsess_part_t *sp = &s->parts[f->items[i].sp];
    return sp->sent_hwm != rd->high_watermark || sp->sent_lso != rd->last_stable_offset ||
           sp->sent_lstart != rd->log_start_offset;
}

/* v12+ (KIP-951): the current leader of a partition not led here, and
 * from v16 its endpoint once in the answer's NodeEndpoints. */
static void api_fetch_leader(api_fetch_t *f, int i, proto_fetch_resp_partition_data_t *pd,
                             proto_fetch_resp_t *resp)
{
    const api_fitem_t *it = &f->items[i];
    int16_t ver = f->req->hdr.api_version;
    api_leader_t l;

    if (ver < 12 || !api_leader_err(pd->error_code) ||
        api_leader_get(f->req, ver >= 13 ? it->id.b : NULL, it->name.p,
                       it->name.len < 0 ? 0 : (size_t)it->name.len, it->partition, &l) < 0)
        return;
    pd->current_leader.leader_id = l.leader_id;
    pd->current_leader.leader_epoch = l.leader_epoch;
    if (ver < 16 || !l.has_endpoint)
        return;
    for (int32_t j = 0; j < resp->node_endpoints.n; j++)
        if (resp->node_endpoints.v[j].node_id == l.leader_id)
            return;
    if (!resp->node_endpoints.v)
        resp->node_endpoints.v = arena_calloc(f->req->arena, (size_t)f->nitems + 1,
                                              sizeof(*resp->node_endpoints.v));
    proto_fetch_resp_node_endpoint_t *ne = &resp->node_endpoints.v[resp->node_endpoints.n++];
    proto_fetch_resp_node_endpoint_init(ne);
    ne->node_id = l.leader_id;
    ne->host = (proto_str_t){l.ep.host, (int32_t)strlen(l.ep.host)};
    ne->port = l.ep.port;
    if (l.ep.rack)
        ne->rack = (proto_str_t){l.ep.rack, (int32_t)strlen(l.ep.rack)};
}

static void api_fetch_part(api_fetch_t *f, int i, proto_fetch_resp_partition_data_t *pd,
                           proto_fetch_resp_t *resp)
{
    const part_read_t *rd = &f->pf.items[i].rd;

    proto_fetch_resp_partition_data_init(pd);
    pd->partition_index = f->items[i].partition;
    pd->error_code = rd->err;
    pd->high_watermark = rd->high_watermark;
    pd->last_stable_offset = rd->last_stable_offset;
    pd->log_start_offset = rd->log_start_offset;
    pd->diverging_epoch.epoch = rd->diverging_epoch;
    pd->diverging_epoch.end_offset = rd->diverging_end_offset;
    pd->preferred_read_replica = rd->preferred_read_replica;
    api_fetch_leader(f, i, pd, resp);
    pd->records.p = (const uint8_t *)"";
    pd->records.len = 0;
    if (rd->len > 0) {
        pd->records.fd = rd->fd;
        pd->records.file_pos = rd->file_pos;
        pd->records.len = rd->len;
    }
    /* Aborted transactions: a list only for read_committed, else null; a
     * partition Kafka does not find has the empty list of its error
     * entries (an error of the read itself keeps the null). */
    if (rd->err == KERR_UNKNOWN_TOPIC_OR_PARTITION || rd->err == KERR_UNKNOWN_TOPIC_ID) {
        pd->aborted_transactions.n = 0;
        pd->aborted_transactions.v = NULL;
    } else if (f->r.isolation_level != 1) {
        pd->aborted_transactions.n = -1;
        pd->aborted_transactions.v = NULL;
    } else if (rd->aborted.n > 0) {
        pd->aborted_transactions.n = rd->aborted.n;
        pd->aborted_transactions.v = arena_calloc(f->req->arena, (size_t)rd->aborted.n,
                                                  sizeof(*pd->aborted_transactions.v));
        for (int k = 0; k < rd->aborted.n; k++) {
            pd->aborted_transactions.v[k].producer_id = rd->aborted.v[k].producer_id;
            pd->aborted_transactions.v[k].first_offset = rd->aborted.v[k].first_offset;
        }
    }
}

static int api_fetch_same_topic(const api_fetch_t *f, const proto_fetch_resp_fetchable_topic_response_t *tr,
                                const api_fitem_t *it)
{
    if (f->req->hdr.api_version >= 13)
        return !memcmp(tr->topic_id.b, it->id.b, 16);
    return tr->topic.len == it->name.len && !memcmp(tr->topic.p, it->name.p, (size_t)it->name.len);
}

/* Groups the answered partitions under their topics, in item order;
 * news[i] says which partitions the answer holds. */
static void api_fetch_assemble(api_fetch_t *f, const char *news, proto_fetch_resp_t *resp)
{
    arena_t *a = f->req->arena;
    resp->responses.v = arena_calloc(a, (size_t)f->nitems + 1, sizeof(*resp->responses.v));
    resp->responses.n = 0;
    proto_fetch_resp_fetchable_topic_response_t *tr = NULL;
    for (int i = 0; i < f->nitems; i++) {
        const api_fitem_t *it = &f->items[i];
        if (!news[i])
            continue;
        if (!tr || !api_fetch_same_topic(f, tr, it)) {
            tr = &resp->responses.v[resp->responses.n++];
            proto_fetch_resp_fetchable_topic_response_init(tr);
            tr->topic = it->name;
            tr->topic_id = it->id;
            tr->partitions.v = arena_calloc(a, (size_t)(f->nitems - i) + 1, sizeof(*tr->partitions.v));
            tr->partitions.n = 0;
        }
        api_fetch_part(f, i, &tr->partitions.v[tr->partitions.n++], resp);
    }
}

/* The answer goes out: remember what the session's client now knows. */
static void api_fetch_commit(api_fetch_t *f, const char *news)
{
    fsess_t *s = api_fetch_session(f);
    if (!s)
        return;
    s->last_used_ms = f->req->now_ms;
    for (int i = 0; i < f->nitems; i++) {
        if (f->items[i].sp < 0 || !news[i])
            continue;
        const part_read_t *rd = &f->pf.items[i].rd;
        fsess_part_t *sp = &s->parts[f->items[i].sp];
        sp->sent_hwm = rd->high_watermark;
        sp->sent_lso = rd->last_stable_offset;
        sp->sent_lstart = rd->log_start_offset;
    }
}

/* The partition layer's fetch is complete: answer. Regions of partitions
 * an incremental answer leaves out are not sent, so their descriptors
 * are closed here. */
static void api_fetch_done(part_fetch_t *pf)
{
    api_fetch_t *f = (api_fetch_t *)pf;
    char *news = arena_calloc(f->req->arena, (size_t)f->nitems + 1, 1);
    proto_fetch_resp_t resp;

    for (int i = 0; i < f->nitems; i++) {
        part_read_t *rd = &pf->items[i].rd;
        news[i] = (char)api_fetch_news(f, i, rd);
        if (!news[i] && rd->fd >= 0) {
            close(rd->fd);
            rd->fd = -1;
        }
    }
    api_conn_t *ac = f->req->conn->udata;
    if (ac && ac->pending == f)
        ac->pending = NULL;
    proto_fetch_resp_init(&resp);
    resp.session_id = f->session_id;
    api_fetch_assemble(f, news, &resp);
    api_fetch_commit(f, news);
    /* the answer holds copies: the lists can go before it is sent */
    for (int i = 0; i < f->nitems; i++)
        log_aborted_list_free(&pf->items[i].rd.aborted);
    API_REPLY(f->req, fetch, &resp);
}

static void api_fetch_cancel(void *pending)
{
    part_fetch_cancel(&((api_fetch_t *)pending)->pf);
}

static void api_fetch_finish(void *pending)
{
    part_fetch_expire(&((api_fetch_t *)pending)->pf);
}

/* ---- turning the request into items ---- */

static int api_fetch_count(const proto_fetch_req_t *r)
{
    int n = 0;
    for (int32_t i = 0; i < r->topics.n; i++)
        n += r->topics.v[i].partitions.n > 0 ? r->topics.v[i].partitions.n : 0;
    return n;
}

static void api_fetch_item_from(api_fitem_t *it, const proto_fetch_req_fetch_topic_t *ft,
                                const proto_fetch_req_fetch_partition_t *fp)
{
    it->name = ft->topic;
    it->id = ft->topic_id;
    it->partition = fp->partition;
    it->fetch_offset = fp->fetch_offset;
    it->max_bytes = fp->partition_max_bytes;
    it->current_leader_epoch = fp->current_leader_epoch;
    it->last_fetched_epoch = fp->last_fetched_epoch;
    it->log_start = fp->log_start_offset;
    it->sp = -1;
}

/* Full fetch: the request's own partitions; with a new session when asked. */
static void api_fetch_full(api_fetch_t *f, int want_session)
{
    fsess_t *s = NULL;
    int by_id = f->req->hdr.api_version >= 13;

    if (want_session)
        s = fsess_create(f->req->b->fsess, by_id, f->req->now_ms);
    f->items = arena_calloc(f->req->arena, (size_t)api_fetch_count(&f->r) + 1, sizeof(*f->items));
    for (int32_t i = 0; i < f->r.topics.n; i++) {
        const proto_fetch_req_fetch_topic_t *ft = &f->r.topics.v[i];
        for (int32_t j = 0; j < ft->partitions.n; j++) {
            api_fitem_t *it = &f->items[f->nitems++];
            api_fetch_item_from(it, ft, &ft->partitions.v[j]);
            if (!s)
                continue;
            int added;
            fsess_part_t *sp = fsess_part(s, ft->topic.p, ft->topic.len, ft->topic_id.b,
                                          it->partition, &added);
            sp->fetch_offset = it->fetch_offset;
            sp->max_bytes = it->max_bytes;
            sp->current_leader_epoch = it->current_leader_epoch;
            sp->last_fetched_epoch = it->last_fetched_epoch;
            it->sp = (int)(sp - s->parts);
        }
    }
    if (s) {
        f->session_id = s->id;
        f->session_epoch = s->epoch;
    }
}

static void api_fetch_update_session(api_fetch_t *f, fsess_t *s)
{
    for (int32_t i = 0; i < f->r.forgotten_topics_data.n; i++) {
        const proto_fetch_req_forgotten_topic_t *ft = &f->r.forgotten_topics_data.v[i];
        for (int32_t j = 0; j < ft->partitions.n; j++)
            fsess_forget(s, ft->topic.p, ft->topic.len, ft->topic_id.b, ft->partitions.v[j]);
    }
    for (int32_t i = 0; i < f->r.topics.n; i++) {
        const proto_fetch_req_fetch_topic_t *ft = &f->r.topics.v[i];
        for (int32_t j = 0; j < ft->partitions.n; j++) {
            const proto_fetch_req_fetch_partition_t *fp = &ft->partitions.v[j];
            int added;
            fsess_part_t *sp = fsess_part(s, ft->topic.p, ft->topic.len, ft->topic_id.b,
                                          fp->partition, &added);
            sp->fetch_offset = fp->fetch_offset;
            sp->max_bytes = fp->partition_max_bytes;
            sp->current_leader_epoch = fp->current_leader_epoch;
            sp->last_fetched_epoch = fp->last_fetched_epoch;
        }
    }
}

/* Incremental fetch: the session's partitions after this request's
 * changes. Returns 0 or the session error for the whole request. */
static int16_t api_fetch_incremental(api_fetch_t *f)
{
    fsess_t *s = fsess_get(f->req->b->fsess, f->r.session_id);
    if (!s)
        return KERR_FETCH_SESSION_ID_NOT_FOUND;
    if (s->epoch != f->r.session_epoch)
        return KERR_INVALID_FETCH_SESSION_EPOCH;
    if (s->by_id != (f->req->hdr.api_version >= 13))
        return KERR_FETCH_SESSION_TOPIC_ID_ERROR;
    api_fetch_update_session(f, s);
    s->epoch = s->epoch == INT32_MAX ? 1 : s->epoch + 1;
    s->last_used_ms = f->req->now_ms;
    f->incremental = 1;
    f->session_id = s->id;
    f->session_epoch = s->epoch;
    f->items = arena_calloc(f->req->arena, (size_t)s->nparts + 1, sizeof(*f->items));
    for (int i = 0; i < s->nparts; i++) {
        fsess_part_t *sp = &s->parts[i];
        api_fitem_t *it = &f->items[f->nitems++];
        /* A copy: the session may go away while this fetch waits. */
        it->name.len = (int32_t)strlen(sp->topic);
        it->name.p = arena_strndup(f->req->arena, sp->topic, (size_t)it->name.len);
        memcpy(it->id.b, sp->topic_id, 16);
        it->partition = sp->partition;
        it->fetch_offset = sp->fetch_offset;
        it->max_bytes = sp->max_bytes;
        it->current_leader_epoch = sp->current_leader_epoch;
        it->last_fetched_epoch = sp->last_fetched_epoch;
        it->log_start = -1;
        it->sp = i;
    }
    return KERR_NONE;
}

/* KIP-227 request forms: (0, -1) sessionless; (0, 0) full, asking for a
 * session; (id, -1) closes the session, then sessionless; (id, 0) closes
 * it and starts a new one; (id, n > 0) incremental. */
static int16_t api_fetch_plan(api_fetch_t *f)
{
    int32_t id = f->r.session_id, epoch = f->r.session_epoch;
    if (epoch == -1 || epoch == 0) {
        if (id != 0)
            fsess_remove(f->req->b->fsess, id);
        /* Followers and empty requests do not get sessions. */
        api_fetch_full(f, epoch == 0 && f->r.topics.n > 0);
        return KERR_NONE;
    }
    if (id == 0) /* no session has id 0: Kafka finds none */
        return KERR_FETCH_SESSION_ID_NOT_FOUND;
    return api_fetch_incremental(f);
}

/* The items as the partition layer reads them. */
static void api_fetch_start(api_fetch_t *f)
{
    int by_id = f->req->hdr.api_version >= 13;
    f->pf.reg = f->req->b->reg;
    f->pf.max_wait_ms = f->r.max_wait_ms;
    f->pf.min_bytes = f->r.min_bytes;
    f->pf.max_bytes = f->r.max_bytes;
    f->pf.replica_id = f->req->hdr.api_version >= 15 ? f->r.replica_state.replica_id
                                                     : f->r.replica_id;
    f->pf.replica = f->pf.replica_id >= 0;
    f->pf.replica_epoch = f->req->hdr.api_version >= 15 ? f->r.replica_state.replica_epoch : -1;
    /* Kafka's fetchOnlyLeader: a consumer's fetch v11+ (its client
     * metadata, rack id included) may be served by a follower. */
    f->pf.any_replica = !f->pf.replica && f->req->hdr.api_version >= 11;
    f->pf.rack = f->r.rack_id.p;
    f->pf.rack_len = f->pf.any_replica && f->r.rack_id.len > 0 ? f->r.rack_id.len : 0;
    f->pf.done = api_fetch_done;
    f->pf.nitems = f->nitems;
    f->pf.items = arena_calloc(f->req->arena, (size_t)f->nitems + 1, sizeof(*f->pf.items));
    for (int i = 0; i < f->nitems; i++) {
        const api_fitem_t *it = &f->items[i];
        part_fetch_item_t *pi = &f->pf.items[i];
        pi->topic = it->name.p;
        pi->topic_len = it->name.len;
        memcpy(pi->topic_id, it->id.b, 16);
        pi->by_id = by_id;
        pi->partition = it->partition;
        pi->rd.fetch_offset = it->fetch_offset;
        pi->rd.max_bytes = it->max_bytes;
        pi->rd.current_leader_epoch = it->current_leader_epoch;
        pi->rd.last_fetched_epoch = it->last_fetched_epoch;
        pi->rd.replica_log_start = it->log_start;
        pi->rd.isolation = f->r.isolation_level;
    }
    part_fetch(&f->pf);
}

void api_fetch(api_req_t *req)
{
    if (req->kind & API_L_CONTROLLER) {
        /* on a controller listener, Fetch is the quorum's */
        api_raft(req);
        return;
    }
    api_fetch_t *f = arena_calloc(req->arena, 1, sizeof(*f));
    f->req = req;
    proto_fetch_req_init(&f->r);
    if (proto_fetch_req_decode(&f->r, req->hdr.api_version, req->body, req->body_len,
                               req->arena) < 0) {
        api_close(req, "malformed Fetch request");
        return;
    }
    int16_t err = api_fetch_plan(f);
    if (err) {
        proto_fetch_resp_t resp;
        proto_fetch_resp_init(&resp);
        resp.error_code = err;
        API_REPLY(req, fetch, &resp);
        return;
    }
    /* Parked before it starts: an answer given at once (in the call)
     * unparks it and ends the request, whose arena, f included, may then
     * be freed, so f is not looked at after the call. */
    api_conn_t *ac = req->conn->udata;
    ac->pending = f;
    ac->cancel = api_fetch_cancel;
    ac->finish = api_fetch_finish;
    api_fetch_start(f);
}
