/* Produce (key 0): validate each partition's batch as Kafka does, append
 * it, wake waiting fetches. With one replica, acks=1 and acks=-1 are both
 * satisfied by the local append; durability beyond the page cache comes
 * from the flush policy (log.flush.interval.*).
 *
 * A request runs in three steps: checks that need broker state (the loop),
 * validation of every batch (CRC, decompression, records: pure work on
 * bytes the request owns), then appends (the loop). Large requests do the
 * middle step on a worker thread (b->pool), so that the loop receives the
 * next requests meanwhile; the connection is muted until the answer, so
 * requests of one connection still append in order. Small ones stay on the
 * loop, where a thread hop would cost more latency than it saves. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "api/api_flush.h"
#include "api/api_util.h"
#include "net/net_pool.h"
#include "log/log_batch.h"
#include "util/logging.h"

/* Kafka's INVALID_TXN_STATE: transactional batches need a coordinator. */
#define KERR_INVALID_TXN_STATE 48

/* Requests with at least this many record bytes are validated on a
 * worker: about 30 us of CRC and record walking, well above a hop's cost. */
#define API_PRODUCE_POOL_BYTES (32 * 1024)

/* A partition of the answer that waits for the flush round. */
typedef struct api_produce_flushed_s {
    proto_produce_resp_partition_produce_response_t *pr;
    uint8_t topic_id[16];
    int32_t partition;
} api_produce_flushed_t;

/* One partition's batch through the three steps. */
typedef struct api_produce_ent_s {
    proto_str_t topic;
    proto_produce_req_partition_produce_data_t *pd;
    proto_produce_resp_partition_produce_response_t *pr;
    log_batch_limits_t lim;
    log_batch_hdr_t hdr;
    log_batch_vinfo_t info;
    int16_t err;  /* from the checks before validation */
    int16_t verr; /* from validation */
} api_produce_ent_t;

/* A Produce request in flight, in the request's arena. While its job is
 * on a worker, the worker owns ents and the batches they point to; the
 * loop touches neither until the job's done callback. */
typedef struct api_produce_s {
    api_flush_waiter_t w; /* first: the flush waiter is the request */
    net_job_t job;
    api_req_t *req;
    int16_t acks;
    int cancelled; /* the connection closed while the job was out */
    proto_produce_resp_t resp;
    api_produce_ent_t *ents;
    int nents;
    api_produce_flushed_t *ent; /* answers waiting for the flush round */
    int nent, capent;
} api_produce_t;

/* Kafka flushes in the append path when flush.messages is reached, so
 * the answer implies the fsync; here the fsync joins the group round. */
static void api_produce_flush_policy(api_req_t *req, part_t *part, api_produce_t *ap,
                                     proto_produce_resp_partition_produce_response_t *pr)
{
    const topic_cfg_t *cfg = &part->topic->cfg;
    if (log_unflushed_messages(part->log) < cfg->flush_messages)
        return;
    api_flush_add(req->b, part);
    if (ap->nent == ap->capent) {
        int cap = ap->capent ? ap->capent * 2 : 8;
        api_produce_flushed_t *v = arena_alloc(req->arena, (size_t)cap * sizeof(*v));
        if (ap->nent)
            memcpy(v, ap->ent, (size_t)ap->nent * sizeof(*v));
        ap->ent = v;
        ap->capent = cap;
    }
    api_produce_flushed_t *e = &ap->ent[ap->nent++];
    e->pr = pr;
    memcpy(e->topic_id, part->topic->id, 16);
    e->partition = part->index;
}

static void api_produce_flushed(api_flush_waiter_t *w, const api_flush_fail_t *failed,
                                int nfailed)
{
    api_produce_t *ap = (api_produce_t *)w;
    api_conn_t *ac = ap->req->conn->udata;
    for (int i = 0; i < ap->nent; i++)
        for (int j = 0; j < nfailed; j++)
            if (ap->ent[i].partition == failed[j].partition &&
                !memcmp(ap->ent[i].topic_id, failed[j].topic_id, 16)) {
                /* An error carries no offsets, as Kafka answers it. */
                ap->ent[i].pr->error_code = KERR_KAFKA_STORAGE_ERROR;
                ap->ent[i].pr->base_offset = -1;
                ap->ent[i].pr->log_append_time_ms = -1;
                ap->ent[i].pr->log_start_offset = -1;
            }
    if (ac && ac->pending == ap)
        ac->pending = NULL;
    API_REPLY(ap->req, produce, &ap->resp);
}

static void api_produce_cancel(void *pending)
{
    api_flush_unwait(pending);
}

static void api_produce_finish(void *pending)
{
    api_produce_t *ap = pending;
    api_flush_run(ap->req->b);
}

/* v8+: which record was rejected and why (Kafka lists the batch index
 * of the record inside the batch). */
static void api_produce_record_error(api_req_t *req,
                                     proto_produce_resp_partition_produce_response_t *pr,
                                     const log_batch_vinfo_t *info)
{
    if (info->error_message) {
        pr->error_message.p = info->error_message;
        pr->error_message.len = (int32_t)strlen(info->error_message);
    }
    if (info->error_index < 0)
        return;
    pr->record_errors.n = 1;
    pr->record_errors.v = arena_calloc(req->arena, 1, sizeof(*pr->record_errors.v));
    proto_produce_resp_batch_index_and_error_message_init(&pr->record_errors.v[0]);
    pr->record_errors.v[0].batch_index = info->error_index;
    if (info->error_message) {
        pr->record_errors.v[0].batch_index_error_message = pr->error_message;
    }
}

/* Step 1, on the loop: what needs broker state. Fills ent->lim from the
 * topic's config as it is now (a change arriving while the batch is on a
 * worker applies to the next request, as in Kafka). */
static int16_t api_produce_check(api_produce_t *ap, topic_t *topic, api_produce_ent_t *ent)
{
    part_t *part;
    int16_t err = api_part_online(topic, ent->pd->index, &part);
    if (err != KERR_UNKNOWN_TOPIC_OR_PARTITION && api_internal_topic(ent->topic))
        return KERR_INVALID_TOPIC_EXCEPTION; /* clients may not write there */
    if (err != KERR_UNKNOWN_TOPIC_OR_PARTITION && ap->acks != 0 && ap->acks != 1 &&
        ap->acks != -1)
        return KERR_INVALID_REQUIRED_ACKS;
    if (err)
        return err;
    const topic_cfg_t *cfg = &part->topic->cfg;
    if (ent->pd->records.len <= 0)
        return KERR_INVALID_RECORD;
    if (ap->acks == -1 && cfg->min_insync_replicas > 1)
        return KERR_NOT_ENOUGH_REPLICAS;
    log_batch_limits_t *lim = &ent->lim;
    memset(lim, 0, sizeof(*lim));
    lim->max_message_bytes = cfg->max_message_bytes;
    lim->timestamp_log_append = cfg->log.timestamp_type == 1;
    lim->ts_before_max_ms = cfg->ts_before_max_ms;
    lim->ts_after_max_ms = cfg->ts_after_max_ms;
    lim->now_ms = ap->req->now_ms;
    lim->compacted = cfg->compacted;
    lim->produce_version = ap->req->hdr.api_version;
    return KERR_NONE;
}

/* Step 2, on a worker or the loop: only the batch's own bytes. The batch
 * lives in the request frame, which the request owns and may patch. */
static void api_produce_validate(api_produce_ent_t *ent)
{
    proto_records_t *rec = &ent->pd->records;
    ent->verr = log_batch_validate_ex(rec->p, (size_t)rec->len, &ent->lim, &ent->hdr, &ent->info);
    if (!ent->verr && !ent->lim.timestamp_log_append)
        log_batch_set_max_timestamp((uint8_t *)rec->p,
                                    LOG_BATCH_LOG_OVERHEAD + (size_t)ent->hdr.batch_length, 0,
                                    ent->info.max_timestamp);
}

static void api_produce_work(net_job_t *job)
{
    api_produce_t *ap = (api_produce_t *)((char *)job - offsetof(api_produce_t, job));
    for (int i = 0; i < ap->nents; i++)
        if (!ap->ents[i].err)
            api_produce_validate(&ap->ents[i]);
}

/* Step 3, on the loop: the partition is looked up again (its topic may
 * have gone while the batch was on a worker). Bytes after the batch (an
 * incomplete tail) are ignored, as Kafka does. */
static int16_t api_produce_append(api_produce_t *ap, api_produce_ent_t *ent)
{
    api_req_t *req = ap->req;
    log_append_result_t res;
    part_t *part;

    if (ent->verr) {
        api_produce_record_error(req, ent->pr, &ent->info);
        return ent->verr;
    }
    int16_t err = api_part_online_by_name(req, ent->topic, ent->pd->index, &part);
    if (err)
        return err;
    if (LOG_BATCH_ATTR_IS_TRANSACTIONAL(ent->hdr.attributes))
        return KERR_INVALID_TXN_STATE;
    uint8_t *batch = (uint8_t *)ent->pd->records.p;
    size_t blen = LOG_BATCH_LOG_OVERHEAD + (size_t)ent->hdr.batch_length;
    /* compression.type other than "producer": store the topic's codec. */
    buf_t rebuilt;
    int rewritten = 0;
    buf_init(&rebuilt);
    err = part_recompress(part, batch, blen, &rebuilt, &rewritten);
    if (!err && rewritten)
        err = log_append(part->log, rebuilt.p, rebuilt.len, part->leader_epoch, req->now_ms, &res);
    else if (!err)
        err = log_append(part->log, batch, blen, part->leader_epoch, req->now_ms, &res);
    buf_free(&rebuilt);
    if (err) {
        /* Fetches waiting on a log that just went offline answer now, as
         * Kafka's DelayedFetch completes on an offline partition. */
        if (part_offline(part))
            part_notify(part);
        return err;
    }
    ent->pr->base_offset = res.base_offset;
    ent->pr->log_append_time_ms = res.log_append_time;
    ent->pr->log_start_offset = res.log_start_offset;
    if (!res.duplicate) {
        part_appended(part);
        api_produce_flush_policy(req, part, ap, ent->pr);
        part_notify(part);
    }
    return KERR_NONE;
}

/* Appends what passed and answers (or parks the answer for the flush
 * round). The request's arena is gone once it is answered. */
static void api_produce_complete(api_produce_t *ap)
{
    api_req_t *req = ap->req;
    int failed = 0;

    for (int i = 0; i < ap->nents; i++) {
        api_produce_ent_t *ent = &ap->ents[i];
        int16_t err = ent->err ? ent->err : api_produce_append(ap, ent);
        if (err) {
            ent->pr->error_code = err;
            ent->pr->base_offset = -1;
            failed = 1;
        }
    }
    if (ap->acks == 0) {
        /* No answer is expected; a failure can only be signalled by
         * closing the connection, as Kafka does. */
        if (failed)
            net_conn_close(req->conn, "acks=0 produce failed");
        net_conn_done(req->conn);
        return;
    }
    if (ap->nent) {
        api_conn_t *ac = req->conn->udata;
        ap->w.done = api_produce_flushed;
        ac->pending = ap;
        ac->cancel = api_produce_cancel;
        ac->finish = api_produce_finish;
        api_flush_wait(req->b, &ap->w);
        return;
    }
    API_REPLY(req, produce, &ap->resp);
}

/* The connection closed while the batches were on a worker: nothing is
 * appended (the client had no answer and will retry). */
static void api_produce_cancel_job(void *pending)
{
    ((api_produce_t *)pending)->cancelled = 1;
}

/* Shutting down: the pool's own drain brings the job back. */
static void api_produce_finish_job(void *pending)
{
    (void)pending;
}

static void api_produce_job_done(net_job_t *job)
{
    api_produce_t *ap = (api_produce_t *)((char *)job - offsetof(api_produce_t, job));
    net_conn_t *conn = ap->req->conn;
    if (!ap->cancelled) {
        api_conn_t *ac = conn->udata;
        ac->pending = NULL;
        api_produce_complete(ap);
    }
    net_conn_release(conn);
}

/* Step 1 for every partition of the request; returns the record bytes
 * that go on to validation. */
static size_t api_produce_prepare(api_produce_t *ap, proto_produce_req_t *r)
{
    api_req_t *req = ap->req;
    proto_produce_resp_t *resp = &ap->resp;
    size_t bytes = 0;

    resp->responses.n = r->topic_data.n < 0 ? 0 : r->topic_data.n;
    resp->responses.v = arena_calloc(req->arena, (size_t)resp->responses.n + 1,
                                     sizeof(*resp->responses.v));
    for (int32_t i = 0; i < resp->responses.n; i++)
        ap->nents += r->topic_data.v[i].partition_data.n < 0 ? 0 : r->topic_data.v[i].partition_data.n;
    ap->ents = arena_calloc(req->arena, (size_t)ap->nents + 1, sizeof(*ap->ents));
    api_produce_ent_t *ent = ap->ents;
    for (int32_t i = 0; i < resp->responses.n; i++) {
        proto_produce_req_topic_produce_data_t *td = &r->topic_data.v[i];
        proto_produce_resp_topic_produce_response_t *tr = &resp->responses.v[i];
        proto_produce_resp_topic_produce_response_init(tr);
        topic_t *topic = td->name.len >= 0
                             ? part_topic_get(req->b->reg, td->name.p, (size_t)td->name.len)
                             : NULL;
        tr->name = td->name;
        tr->partition_responses.n = td->partition_data.n < 0 ? 0 : td->partition_data.n;
        tr->partition_responses.v = arena_calloc(req->arena, (size_t)tr->partition_responses.n + 1,
                                                 sizeof(*tr->partition_responses.v));
        for (int32_t j = 0; j < tr->partition_responses.n; j++, ent++) {
            ent->topic = td->name;
            ent->pd = &td->partition_data.v[j];
            ent->pr = &tr->partition_responses.v[j];
            proto_produce_resp_partition_produce_response_init(ent->pr);
            ent->pr->index = ent->pd->index;
            ent->err = api_produce_check(ap, topic, ent);
            if (!ent->err)
                bytes += (size_t)ent->pd->records.len;
        }
    }
    return bytes;
}

void api_produce(api_req_t *req)
{
    proto_produce_req_t r;
    api_produce_t *ap = arena_calloc(req->arena, 1, sizeof(*ap));

    proto_produce_req_init(&r);
    if (proto_produce_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                 req->arena) < 0) {
        api_close(req, "malformed Produce request");
        return;
    }
    ap->req = req;
    ap->acks = r.acks;
    proto_produce_resp_init(&ap->resp);
    if (api_produce_prepare(ap, &r) >= API_PRODUCE_POOL_BYTES && req->b->pool) {
        api_conn_t *ac = req->conn->udata;
        net_conn_hold(req->conn); /* until the job is back, even if it closes */
        ac->pending = ap;
        ac->cancel = api_produce_cancel_job;
        ac->finish = api_produce_finish_job;
        ap->job.work = api_produce_work;
        ap->job.done = api_produce_job_done;
        net_pool_submit(req->b->pool, &ap->job);
        return;
    }
    for (int i = 0; i < ap->nents; i++)
        if (!ap->ents[i].err)
            api_produce_validate(&ap->ents[i]);
    api_produce_complete(ap);
}
