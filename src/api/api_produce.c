/* Produce (key 0): validate each partition's batch as Kafka does, append
 * it, wake waiting fetches. With one replica, acks=1 and acks=-1 are both
 * satisfied by the local append; durability beyond the page cache comes
 * from the flush policy (log.flush.interval.*).
 *
 * A request runs in steps: checks that need broker state (the loop),
 * validation of every batch (CRC, decompression, records: pure work on
 * bytes the request owns), then the append. Large requests are validated
 * on a worker thread (b->pool) and their batches written into the page
 * cache by the write queue (api_wq.c), so that the loop, which keeps every
 * decision, receives the next requests meanwhile. The connection is muted
 * until the answer, so requests of one connection still append in order.
 * Small requests do it all on the loop when no write is queued: a thread
 * hop would cost them more latency than it saves. */
#include <errno.h>
#include <stddef.h>
#include <string.h>

#include "api/api_produce.h"
#include "api/api_util.h"
#include "log/log_batch.h"
#include "util/logging.h"

/* Kafka's INVALID_TXN_STATE: transactional batches need a coordinator. */

/* Requests with at least this many record bytes go to the pool: their
 * CRC and record walk (tens of us) and copy are well above a hop's cost. */
#define API_PRODUCE_POOL_BYTES (32 * 1024)

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

/* The partition again (its topic may have gone while the batch was on a
 * worker), and what its batch becomes: the request's bytes, or the batch
 * recompressed to the topic's compression.type. Bytes after the batch (an
 * incomplete tail) are ignored, as Kafka does. */
static int16_t api_produce_target(api_produce_t *ap, api_produce_ent_t *ent, part_t **part,
                                  uint8_t **batch, size_t *blen)
{
    int rewritten = 0;
    topic_t *topic = part_topic_by_id(ap->req->b->reg, ent->topic_id);
    int16_t err = api_part_online(topic, ent->pd->index, part);
    if (err)
        return err;
    if (LOG_BATCH_ATTR_IS_TRANSACTIONAL(ent->hdr.attributes))
        return KERR_INVALID_TXN_STATE;
    *batch = (uint8_t *)ent->pd->records.p;
    *blen = LOG_BATCH_LOG_OVERHEAD + (size_t)ent->hdr.batch_length;
    err = part_recompress(*part, *batch, *blen, &ent->rebuilt, &rewritten);
    if (!err && rewritten) {
        *batch = ent->rebuilt.p;
        *blen = ent->rebuilt.len;
    }
    return err;
}

/* After an append: the answer's offsets, the high watermark, the flush
 * policy and waiting fetches. */
static void api_produce_appended(api_produce_t *ap, api_produce_ent_t *ent, part_t *part,
                                 const log_append_result_t *res)
{
    ent->pr->base_offset = res->base_offset;
    ent->pr->log_append_time_ms = res->log_append_time;
    ent->pr->log_start_offset = res->log_start_offset;
    if (!res->duplicate) {
        part_appended(part);
        api_produce_flush_policy(ap->req, part, ap, ent->pr);
        part_notify(part);
    }
}

/* Fetches waiting on a log that just went offline answer now, as Kafka's
 * DelayedFetch completes on an offline partition. */
static int16_t api_produce_failed(part_t *part, int16_t err)
{
    if (part_offline(part))
        part_notify(part);
    return err;
}

/* Step 3 on the loop: the whole append at once. */
static int16_t api_produce_append(api_produce_t *ap, api_produce_ent_t *ent)
{
    log_append_result_t res;
    part_t *part;
    uint8_t *batch;
    size_t blen;

    int16_t err = api_produce_target(ap, ent, &part, &batch, &blen);
    if (!err)
        err = log_append(part->log, batch, blen, part->leader_epoch, ap->req->now_ms, &res);
    buf_free(&ent->rebuilt);
    if (err)
        return part ? api_produce_failed(part, err) : err;
    api_produce_appended(ap, ent, part, &res);
    return KERR_NONE;
}

int api_produce_place(api_produce_t *ap, api_produce_ent_t *ent)
{
    log_append_result_t res;
    part_t *part = NULL;
    uint8_t *batch;
    size_t blen;

    ent->wr.fd = -1;
    if (ent->err)
        return 0;
    int16_t err = api_produce_target(ap, ent, &part, &batch, &blen);
    if (!err)
        err = log_append_place(part->log, batch, blen, part->leader_epoch, ap->req->now_ms, &res,
                               &ent->wr);
    if (err == LOG_APPEND_AGAIN)
        return LOG_APPEND_AGAIN;
    if (err) {
        buf_free(&ent->rebuilt);
        ent->err = part ? api_produce_failed(part, err) : err;
        return 0;
    }
    /* The answer's offsets now; the rest when the bytes are in. */
    ent->pr->base_offset = res.base_offset;
    ent->pr->log_append_time_ms = res.log_append_time;
    ent->pr->log_start_offset = res.log_start_offset;
    ent->log_uid = log_uid(part->log);
    return 0;
}

void api_produce_commit(api_produce_t *ap, api_produce_ent_t *ent)
{
    topic_t *topic = part_topic_by_id(ap->req->b->reg, ent->topic_id);
    part_t *part = topic && ent->pd->index < topic->nparts ? topic->parts[ent->pd->index] : NULL;
    log_append_result_t res;

    buf_free(&ent->rebuilt);
    if (!part || !part->log || log_uid(part->log) != ent->log_uid) {
        ent->err = KERR_UNKNOWN_TOPIC_OR_PARTITION; /* deleted meanwhile */
        return;
    }
    int16_t err = log_append_commit(part->log, &ent->wr);
    if (err) {
        ent->err = api_produce_failed(part, err);
        return;
    }
    res.base_offset = ent->pr->base_offset;
    res.log_append_time = ent->pr->log_append_time_ms;
    res.log_start_offset = ent->pr->log_start_offset;
    res.duplicate = 0;
    api_produce_appended(ap, ent, part, &res);
}

void api_produce_answer(api_produce_t *ap)
{
    api_req_t *req = ap->req;
    net_conn_t *conn = req->conn;
    int held = ap->held, failed = 0;

    if (ap->cancelled)
        goto out;
    api_conn_t *ac = conn->udata;
    if (ac->pending == ap)
        ac->pending = NULL;
    for (int i = 0; i < ap->nents; i++) {
        api_produce_ent_t *ent = &ap->ents[i];
        if (ent->err == ent->verr && ent->verr)
            api_produce_record_error(req, ent->pr, &ent->info);
        if (ent->err) {
            ent->pr->error_code = ent->err;
            ent->pr->base_offset = -1;
            ent->pr->log_append_time_ms = -1;
            failed = 1;
        }
    }
    if (ap->acks == 0) {
        /* No answer is expected; a failure can only be signalled by
         * closing the connection, as Kafka does. */
        if (failed)
            net_conn_close(conn, "acks=0 produce failed");
        net_conn_done(conn);
    } else if (ap->nent) {
        ap->w.done = api_produce_flushed;
        ac->pending = ap;
        ac->cancel = api_produce_cancel;
        ac->finish = api_produce_finish;
        api_flush_wait(req->b, &ap->w);
    } else {
        API_REPLY(req, produce, &ap->resp);
    }
out:
    if (held)
        net_conn_release(conn);
}

/* The connection closed while a job held the request. */
static void api_produce_cancel_job(void *pending)
{
    ((api_produce_t *)pending)->cancelled = 1;
}

/* Shutting down: the pool's drain and the write queue bring it back. */
static void api_produce_finish_job(void *pending)
{
    (void)pending;
}

/* Parks the request in a job until it comes back. */
static void api_produce_hold(api_produce_t *ap)
{
    api_conn_t *ac = ap->req->conn->udata;
    if (!ap->held)
        net_conn_hold(ap->req->conn); /* until the answer, even if it closes */
    ap->held = 1;
    ac->pending = ap;
    ac->cancel = api_produce_cancel_job;
    ac->finish = api_produce_finish_job;
}

/* After step 2: validation errors become the partitions' answers, then
 * the appends, on the loop or through the write queue. */
static void api_produce_validated(api_produce_t *ap, size_t bytes)
{
    broker_t *b = ap->req->b;

    for (int i = 0; i < ap->nents; i++)
        if (!ap->ents[i].err)
            ap->ents[i].err = ap->ents[i].verr;
    if (b->pool && (bytes >= API_PRODUCE_POOL_BYTES || !api_wq_idle(b))) {
        api_produce_hold(ap);
        api_wq_add(b, ap);
        return;
    }
    for (int i = 0; i < ap->nents; i++)
        if (!ap->ents[i].err)
            ap->ents[i].err = api_produce_append(ap, &ap->ents[i]);
    api_produce_answer(ap);
}

static void api_produce_job_done(net_job_t *job)
{
    api_produce_t *ap = (api_produce_t *)((char *)job - offsetof(api_produce_t, job));
    if (ap->cancelled) {
        /* Nothing appended: the client had no answer and will retry. */
        net_conn_release(ap->req->conn);
        return;
    }
    api_produce_validated(ap, API_PRODUCE_POOL_BYTES);
}

/* The topic of a request's entry: by name, or by id from v13, where the
 * answer names it by id too and an unknown id is UNKNOWN_TOPIC_ID for
 * each of its partitions (as Kafka resolves ids before anything else). */
static topic_t *api_produce_topic(api_req_t *req, proto_produce_req_topic_produce_data_t *td,
                                  proto_produce_resp_topic_produce_response_t *tr)
{
    if (req->hdr.api_version < 13) {
        tr->name = td->name;
        return td->name.len >= 0 ? part_topic_get(req->b->reg, td->name.p, (size_t)td->name.len)
                                 : NULL;
    }
    tr->topic_id = td->topic_id;
    topic_t *topic = part_topic_by_id(req->b->reg, td->topic_id.b);
    if (topic) /* for the checks by name (internal topics) */
        td->name = (proto_str_t){topic->name, (int32_t)topic->name_len};
    return topic;
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
        topic_t *topic = api_produce_topic(req, td, tr);
        tr->partition_responses.n = td->partition_data.n < 0 ? 0 : td->partition_data.n;
        tr->partition_responses.v = arena_calloc(req->arena, (size_t)tr->partition_responses.n + 1,
                                                 sizeof(*tr->partition_responses.v));
        for (int32_t j = 0; j < tr->partition_responses.n; j++, ent++) {
            ent->topic = td->name;
            ent->pd = &td->partition_data.v[j];
            ent->pr = &tr->partition_responses.v[j];
            ent->wr.fd = -1;
            buf_init(&ent->rebuilt);
            proto_produce_resp_partition_produce_response_init(ent->pr);
            ent->pr->index = ent->pd->index;
            if (topic)
                memcpy(ent->topic_id, topic->id, 16);
            ent->err = !topic && req->hdr.api_version >= 13 ? KERR_UNKNOWN_TOPIC_ID
                                                            : api_produce_check(ap, topic, ent);
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
    size_t bytes = api_produce_prepare(ap, &r);
    if (bytes >= API_PRODUCE_POOL_BYTES && req->b->pool) {
        api_produce_hold(ap);
        ap->job.work = api_produce_work;
        ap->job.done = api_produce_job_done;
        net_pool_submit(req->b->pool, &ap->job);
        return;
    }
    for (int i = 0; i < ap->nents; i++)
        if (!ap->ents[i].err)
            api_produce_validate(&ap->ents[i]);
    api_produce_validated(ap, bytes);
}
