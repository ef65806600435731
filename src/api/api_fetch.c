/* Fetch (key 1) for consumers: record bytes go from segment files to the
 * socket with sendfile (the response only names file regions), and a
 * fetch that finds fewer than min_bytes waits up to max_wait_ms for
 * produce to wake it (long polling).
 *
 * Fetch sessions (KIP-227): we answer every full fetch with session id 0,
 * which tells the client that no session was created; it then keeps
 * sending full fetches, exactly as with a Kafka broker whose session
 * cache is full. Incremental fetches name a session we never created and
 * get FETCH_SESSION_ID_NOT_FOUND. */
#include <string.h>
#include <unistd.h>

#include "api/api_util.h"

typedef struct api_fetch_s {
    api_req_t *req;
    proto_fetch_req_t r;
    part_watch_t *watches;
    int nwatch;
    net_timer_id_t timer;
    int woken;     /* a deferred re-check is scheduled */
    int done;
} api_fetch_t;

static topic_t *api_fetch_topic(api_fetch_t *f, proto_fetch_req_fetch_topic_t *ft)
{
    broker_t *b = f->req->b;
    if (f->req->hdr.api_version >= 13)
        return part_topic_by_id(b->reg, ft->topic_id.b);
    return ft->topic.len >= 0 ? part_topic_get(b->reg, ft->topic.p, (size_t)ft->topic.len) : NULL;
}

/* Fills one partition's answer; *budget is what max_bytes still allows. */
static void api_fetch_part(api_fetch_t *f, part_t *part, proto_fetch_req_fetch_partition_t *fp,
                           proto_fetch_resp_partition_data_t *pd, int64_t *budget, size_t *bytes)
{
    int16_t err = api_check_epoch(part, fp->current_leader_epoch);
    int64_t hwm = part_hwm(part);

    pd->high_watermark = hwm;
    pd->last_stable_offset = hwm;
    pd->log_start_offset = log_start_offset(part->log);
    if (f->r.isolation_level == 1) {
        pd->aborted_transactions.n = 0;
        pd->aborted_transactions.v = NULL;
    }
    if (err) {
        pd->error_code = err;
        return;
    }
    if (fp->last_fetched_epoch >= 0) {
        int64_t end;
        int32_t epoch;
        log_epoch_end_offset(part->log, fp->last_fetched_epoch, &end, &epoch);
        if (epoch != fp->last_fetched_epoch || end < fp->fetch_offset) {
            pd->diverging_epoch.epoch = epoch;
            pd->diverging_epoch.end_offset = end;
            return;
        }
    }
    int64_t max = fp->partition_max_bytes < *budget ? fp->partition_max_bytes : *budget;
    if (max < 0)
        max = 0;
    log_read_result_t rd;
    err = log_read(part->log, fp->fetch_offset, (int32_t)max, *bytes == 0, hwm, &rd);
    if (err) {
        pd->error_code = err;
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

/* Builds the answer; returns the record bytes it holds, *err_seen when a
 * partition has an error (which completes a fetch at once, as Kafka). */
static size_t api_fetch_build(api_fetch_t *f, proto_fetch_resp_t *resp, int *err_seen)
{
    api_req_t *req = f->req;
    int64_t budget = f->r.max_bytes;
    size_t bytes = 0;

    proto_fetch_resp_init(resp);
    resp->responses.n = f->r.topics.n < 0 ? 0 : f->r.topics.n;
    resp->responses.v = arena_calloc(req->arena, (size_t)resp->responses.n + 1,
                                     sizeof(*resp->responses.v));
    for (int32_t i = 0; i < resp->responses.n; i++) {
        proto_fetch_req_fetch_topic_t *ft = &f->r.topics.v[i];
        proto_fetch_resp_fetchable_topic_response_t *tr = &resp->responses.v[i];
        topic_t *topic = api_fetch_topic(f, ft);
        proto_fetch_resp_fetchable_topic_response_init(tr);
        tr->topic = ft->topic;
        tr->topic_id = ft->topic_id;
        tr->partitions.n = ft->partitions.n < 0 ? 0 : ft->partitions.n;
        tr->partitions.v = arena_calloc(req->arena, (size_t)tr->partitions.n + 1,
                                        sizeof(*tr->partitions.v));
        for (int32_t j = 0; j < tr->partitions.n; j++) {
            proto_fetch_req_fetch_partition_t *fp = &ft->partitions.v[j];
            proto_fetch_resp_partition_data_t *pd = &tr->partitions.v[j];
            part_t *part = topic ? part_get(topic, fp->partition) : NULL;
            proto_fetch_resp_partition_data_init(pd);
            pd->partition_index = fp->partition;
            pd->records.len = 0;
            pd->records.p = (const uint8_t *)"";
            if (!part) {
                pd->error_code = topic || req->hdr.api_version < 13 ? KERR_UNKNOWN_TOPIC_OR_PARTITION
                                                                    : KERR_UNKNOWN_TOPIC_ID;
                pd->high_watermark = -1;
            } else {
                api_fetch_part(f, part, fp, pd, &budget, &bytes);
            }
            if (pd->error_code || pd->diverging_epoch.epoch >= 0)
                *err_seen = 1;
        }
    }
    return bytes;
}

static void api_fetch_close_fds(proto_fetch_resp_t *resp)
{
    for (int32_t i = 0; i < resp->responses.n; i++)
        for (int32_t j = 0; j < resp->responses.v[i].partitions.n; j++) {
            proto_records_t *rec = &resp->responses.v[i].partitions.v[j].records;
            if (rec->fd >= 0)
                close(rec->fd);
            rec->fd = -1;
        }
}

static void api_fetch_unwatch(api_fetch_t *f)
{
    for (int i = 0; i < f->nwatch; i++)
        part_watch_del(&f->watches[i]);
    if (f->timer)
        net_timer_cancel(f->req->b->loop, f->timer);
    f->timer = 0;
    api_conn_t *ac = f->req->conn->udata;
    if (ac->pending == f)
        ac->pending = NULL;
}

static void api_fetch_wake(part_watch_t *w);

static void api_fetch_watch(api_fetch_t *f)
{
    int n = 0;
    for (int32_t i = 0; i < f->r.topics.n; i++)
        n += f->r.topics.v[i].partitions.n > 0 ? f->r.topics.v[i].partitions.n : 0;
    if (!f->watches)
        f->watches = arena_calloc(f->req->arena, (size_t)n + 1, sizeof(*f->watches));
    for (int32_t i = 0; i < f->r.topics.n; i++) {
        topic_t *topic = api_fetch_topic(f, &f->r.topics.v[i]);
        for (int32_t j = 0; topic && j < f->r.topics.v[i].partitions.n; j++) {
            part_t *part = part_get(topic, f->r.topics.v[i].partitions.v[j].partition);
            if (!part)
                continue;
            part_watch_t *w = &f->watches[f->nwatch++];
            w->cb = api_fetch_wake;
            w->data = f;
            part_watch_add(part, w);
        }
    }
}

/* Answers if the fetch is satisfied (or final); returns 1 if answered. */
static int api_fetch_try(api_fetch_t *f, int final)
{
    proto_fetch_resp_t resp;
    int err_seen = 0;
    size_t bytes = api_fetch_build(f, &resp, &err_seen);

    if (!final && !err_seen && (int64_t)bytes < f->r.min_bytes) {
        api_fetch_close_fds(&resp);
        return 0;
    }
    f->done = 1;
    api_fetch_unwatch(f);
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
            f->nwatch = 0;
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

static int16_t api_fetch_session_check(const proto_fetch_req_t *r)
{
    if (r->session_id != 0)
        return KERR_FETCH_SESSION_ID_NOT_FOUND;
    if (r->session_epoch != 0 && r->session_epoch != -1)
        return KERR_INVALID_FETCH_SESSION_EPOCH;
    return KERR_NONE;
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
    int16_t err = api_fetch_session_check(&f->r);
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
    api_fetch_watch(f);
    f->timer = net_timer_add(req->b->loop, f->r.max_wait_ms, api_fetch_timeout, f);
}
