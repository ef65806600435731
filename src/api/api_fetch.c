/* Fetch (key 1) for consumers: record bytes go from segment files to the
 * socket with sendfile (the response only names file regions), and a
 * fetch that finds fewer than min_bytes waits up to max_wait_ms for
 * produce to wake it (long polling). Fetch sessions (KIP-227) are kept in
 * api_fsess.c: a request is first turned into a list of items (the
 * request's partitions, or a session's), then answered from that list. */
#include <string.h>
#include <unistd.h>

#include "api/api_fsess.h"
#include "api/api_util.h"


typedef struct api_fitem_s {
    proto_str_t name;      /* as the client names the topic (v < 13) */
    proto_uuid_t id;       /* v13+ */
    int32_t partition;
    int64_t fetch_offset;
    int32_t max_bytes;
    int32_t current_leader_epoch;
    int32_t last_fetched_epoch;
    int sp;                /* index in the session's partitions, or -1 */
} api_fitem_t;

typedef struct api_fetch_s {
    api_req_t *req;
    proto_fetch_req_t r;
    api_fitem_t *items;
    int nitems;
    int32_t session_id;    /* answered to the client; 0 = none */
    int32_t session_epoch; /* the session's epoch after this request */
    int incremental;       /* answer only partitions with news */
    part_watch_t *watches;
    int nwatch;
    net_timer_id_t timer;
    int woken;
    int done;
} api_fetch_t;

/* What one partition's answer would be; kept apart from the response so
 * that an incremental answer can leave the partition out. */
typedef struct api_fpart_s {
    proto_fetch_resp_partition_data_t pd;
    int news;
} api_fpart_t;

static topic_t *api_fetch_topic(api_fetch_t *f, const api_fitem_t *it)
{
    broker_t *b = f->req->b;
    if (f->req->hdr.api_version >= 13)
        return part_topic_by_id(b->reg, it->id.b);
    return it->name.len >= 0 ? part_topic_get(b->reg, it->name.p, (size_t)it->name.len) : NULL;
}

static fsess_t *api_fetch_session(api_fetch_t *f)
{
    if (!f->session_id)
        return NULL;
    fsess_t *s = fsess_get(f->req->b->fsess, f->session_id);
    return s && s->epoch == f->session_epoch ? s : NULL;
}

/* A partition in error carries no offsets, as Kafka answers it. */
static void api_fetch_error(proto_fetch_resp_partition_data_t *pd, int16_t err)
{
    pd->error_code = err;
    pd->high_watermark = -1;
    pd->last_stable_offset = -1;
    pd->log_start_offset = -1;
}

/* Reads one partition; *budget is what max_bytes still allows. */
static void api_fetch_read(api_fetch_t *f, part_t *part, const api_fitem_t *it,
                           proto_fetch_resp_partition_data_t *pd, int64_t *budget, size_t *bytes)
{
    int16_t err = api_check_epoch(part, it->current_leader_epoch);
    int64_t hwm = part_hwm(part);

    pd->high_watermark = hwm;
    pd->last_stable_offset = hwm;
    pd->log_start_offset = log_start_offset(part->log);
    if (err) {
        api_fetch_error(pd, err);
        return;
    }
    if (it->last_fetched_epoch >= 0) {
        int64_t end;
        int32_t epoch;
        log_epoch_end_offset(part->log, it->last_fetched_epoch, &end, &epoch);
        if (epoch != it->last_fetched_epoch || end < it->fetch_offset) {
            pd->diverging_epoch.epoch = epoch;
            pd->diverging_epoch.end_offset = end;
            return;
        }
    }
    int64_t max = it->max_bytes < *budget ? it->max_bytes : *budget;
    log_read_result_t rd;
    err = log_read(part->log, it->fetch_offset, (int32_t)(max < 0 ? 0 : max), *bytes == 0, hwm,
                   &rd);
    if (err) {
        api_fetch_error(pd, err);
        return;
    }
    if (rd.len > 0) {
        pd->records.fd = rd.fd;
        pd->records.file_pos = rd.file_pos;
        pd->records.len = rd.len;
        *bytes += (size_t)rd.len;
        *budget -= rd.len;
    }
}

static void api_fetch_one(api_fetch_t *f, const api_fitem_t *it, api_fpart_t *fp,
                          int64_t *budget, size_t *bytes)
{
    topic_t *topic = api_fetch_topic(f, it);
    part_t *part;
    int16_t err = api_part_online(topic, it->partition, &part);
    proto_fetch_resp_partition_data_t *pd = &fp->pd;

    proto_fetch_resp_partition_data_init(pd);
    pd->partition_index = it->partition;
    pd->records.len = 0;
    pd->records.p = (const uint8_t *)"";
    /* Aborted transactions: a list only for read_committed, else null. */
    if (f->r.isolation_level != 1) {
        pd->aborted_transactions.n = -1;
        pd->aborted_transactions.v = NULL;
    }
    if (!topic && f->req->hdr.api_version >= 13) {
        api_fetch_error(pd, KERR_UNKNOWN_TOPIC_ID);
    } else if (err) {
        api_fetch_error(pd, err);
    } else {
        api_fetch_read(f, part, it, pd, budget, bytes);
    }
    fp->news = !f->incremental || pd->records.len > 0 || pd->error_code ||
               pd->diverging_epoch.epoch >= 0;
    fsess_t *s = f->incremental ? api_fetch_session(f) : NULL;
    if (s && it->sp >= 0) {
        const fsess_part_t *sp = &s->parts[it->sp];
        fp->news |= sp->sent_hwm != pd->high_watermark || sp->sent_lso != pd->last_stable_offset ||
                    sp->sent_lstart != pd->log_start_offset;
    }
}

/* Groups the answered partitions under their topics, in item order. */
static void api_fetch_assemble(api_fetch_t *f, api_fpart_t *fps, proto_fetch_resp_t *resp)
{
    arena_t *a = f->req->arena;
    resp->responses.v = arena_calloc(a, (size_t)f->nitems + 1, sizeof(*resp->responses.v));
    resp->responses.n = 0;
    proto_fetch_resp_fetchable_topic_response_t *tr = NULL;
    for (int i = 0; i < f->nitems; i++) {
        const api_fitem_t *it = &f->items[i];
        if (!fps[i].news)
            continue;
        int same = tr && i > 0 &&
                   (f->req->hdr.api_version >= 13
                        ? !memcmp(tr->topic_id.b, it->id.b, 16)
                        : tr->topic.len == it->name.len &&
                              !memcmp(tr->topic.p, it->name.p, (size_t)it->name.len));
        if (!same) {
            tr = &resp->responses.v[resp->responses.n++];
            proto_fetch_resp_fetchable_topic_response_init(tr);
            tr->topic = it->name;
            tr->topic_id = it->id;
            tr->partitions.v = arena_calloc(a, (size_t)(f->nitems - i) + 1, sizeof(*tr->partitions.v));
            tr->partitions.n = 0;
        }
        tr->partitions.v[tr->partitions.n++] = fps[i].pd;
    }
}

/* Builds the answer; returns the record bytes it holds and sets *err_seen
 * when a partition has an error (which completes a fetch at once). */
static size_t api_fetch_build(api_fetch_t *f, proto_fetch_resp_t *resp, api_fpart_t **fps_out,
                              int *err_seen)
{
    int64_t budget = f->r.max_bytes;
    size_t bytes = 0;
    api_fpart_t *fps = arena_calloc(f->req->arena, (size_t)f->nitems + 1, sizeof(*fps));

    proto_fetch_resp_init(resp);
    resp->session_id = f->session_id;
    for (int i = 0; i < f->nitems; i++) {
        api_fetch_one(f, &f->items[i], &fps[i], &budget, &bytes);
        if (fps[i].pd.error_code || fps[i].pd.diverging_epoch.epoch >= 0)
            *err_seen = 1;
    }
    api_fetch_assemble(f, fps, resp);
    *fps_out = fps;
    return bytes;
}

static void api_fetch_close_fds(api_fetch_t *f, api_fpart_t *fps)
{
    for (int i = 0; i < f->nitems; i++)
        if (fps[i].pd.records.fd >= 0) {
            close(fps[i].pd.records.fd);
            fps[i].pd.records.fd = -1;
        }
}

/* The answer goes out: remember what the session's client now knows. */
static void api_fetch_commit(api_fetch_t *f, const api_fpart_t *fps)
{
    fsess_t *s = api_fetch_session(f);
    if (!s)
        return;
    s->last_used_ms = f->req->now_ms;
    for (int i = 0; i < f->nitems; i++) {
        if (f->items[i].sp < 0 || !fps[i].news)
            continue;
        fsess_part_t *sp = &s->parts[f->items[i].sp];
        sp->sent_hwm = fps[i].pd.high_watermark;
        sp->sent_lso = fps[i].pd.last_stable_offset;
        sp->sent_lstart = fps[i].pd.log_start_offset;
    }
}

static void api_fetch_unwatch(api_fetch_t *f)
{
    for (int i = 0; i < f->nwatch; i++)
        part_watch_del(&f->watches[i]);
    f->nwatch = 0;
    if (f->timer)
        net_timer_cancel(f->req->b->loop, f->timer);
    f->timer = 0;
    api_conn_t *ac = f->req->conn->udata;
    if (ac && ac->pending == f)
        ac->pending = NULL;
}

static void api_fetch_wake(part_watch_t *w);

static void api_fetch_watch(api_fetch_t *f)
{
    if (!f->watches)
        f->watches = arena_calloc(f->req->arena, (size_t)f->nitems + 1, sizeof(*f->watches));
    f->nwatch = 0;
    for (int i = 0; i < f->nitems; i++) {
        topic_t *topic = api_fetch_topic(f, &f->items[i]);
        part_t *part = topic ? part_get(topic, f->items[i].partition) : NULL;
        if (!part)
            continue;
        part_watch_t *w = &f->watches[f->nwatch++];
        w->cb = api_fetch_wake;
        w->data = f;
        part_watch_add(part, w);
    }
}

/* Answers if the fetch is satisfied (or final); returns 1 if answered. */
static int api_fetch_try(api_fetch_t *f, int final)
{
    proto_fetch_resp_t resp;
    api_fpart_t *fps;
    int err_seen = 0;
    size_t bytes = api_fetch_build(f, &resp, &fps, &err_seen);

    if (!final && !err_seen && (int64_t)bytes < f->r.min_bytes) {
        api_fetch_close_fds(f, fps);
        return 0;
    }
    f->done = 1;
    api_fetch_unwatch(f);
    api_fetch_commit(f, fps);
    API_REPLY(f->req, fetch, &resp);
    return 1;
}

static void api_fetch_cancel(void *pending);

/* Looks the parked fetch up through the connection, not through a pointer
 * kept since the wake-up: by now the fetch may have been answered and its
 * arena reused. */
static void api_fetch_recheck(net_loop_t *loop, void *data)
{
    net_conn_t *conn = data;
    api_conn_t *ac = conn->udata;
    (void)loop;
    if (!conn->closing && ac && ac->pending && ac->cancel == api_fetch_cancel) {
        api_fetch_t *f = ac->pending;
        f->woken = 0;
        if (!api_fetch_try(f, 0)) {
            /* Not enough yet: wait again on every partition. */
            for (int i = 0; i < f->nwatch; i++)
                part_watch_del(&f->watches[i]);
            api_fetch_watch(f);
        }
    }
    net_conn_release(conn);
}

/* Runs inside the producer's request: re-check after it has answered. */
static void api_fetch_wake(part_watch_t *w)
{
    api_fetch_t *f = w->data;
    if (f->woken || f->done)
        return;
    f->woken = 1;
    net_conn_hold(f->req->conn);
    net_loop_defer(f->req->b->loop, api_fetch_recheck, f->req->conn);
}

static void api_fetch_timeout(net_loop_t *loop, void *data)
{
    api_fetch_t *f = data;
    (void)loop;
    f->timer = 0;
    if (!f->done)
        api_fetch_try(f, 1);
}

static void api_fetch_cancel(void *pending)
{
    api_fetch_t *f = pending;
    f->done = 1;
    api_fetch_unwatch(f);
}

static void api_fetch_finish(void *pending)
{
    api_fetch_t *f = pending;
    if (!f->done)
        api_fetch_try(f, 1);
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
    if (id == 0)
        return KERR_INVALID_FETCH_SESSION_EPOCH;
    return api_fetch_incremental(f);
}

void api_fetch(api_req_t *req)
{
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
    if (api_fetch_try(f, f->r.max_wait_ms <= 0))
        return;
    api_conn_t *ac = req->conn->udata;
    ac->pending = f;
    ac->cancel = api_fetch_cancel;
    ac->finish = api_fetch_finish;
    api_fetch_watch(f);
    f->timer = net_timer_add(req->b->loop, f->r.max_wait_ms, api_fetch_timeout, f);
}
