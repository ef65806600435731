/* Produce (key 0): validate each partition's batch as Kafka does, append
 * it, wake waiting fetches. With one replica, acks=1 and acks=-1 are both
 * satisfied by the local append; durability beyond the page cache comes
 * from the flush policy (log.flush.interval.*). */
#include <errno.h>
#include <string.h>

#include "api/api_flush.h"
#include "api/api_util.h"
#include "log/log_batch.h"
#include "util/logging.h"

/* Kafka's INVALID_TXN_STATE: transactional batches need a coordinator. */
#define KERR_INVALID_TXN_STATE 48

/* A partition of the answer that waits for the flush round. */
typedef struct api_produce_flushed_s {
    proto_produce_resp_partition_produce_response_t *pr;
    uint8_t topic_id[16];
    int32_t partition;
} api_produce_flushed_t;

/* A produce answer parked until its partitions are on disk. */
typedef struct api_produce_wait_s {
    api_flush_waiter_t w; /* first: the waiter is the wait */
    api_req_t *req;
    proto_produce_resp_t resp;
    api_produce_flushed_t *ent;
    int nent, capent;
} api_produce_wait_t;

/* Kafka flushes in the append path when flush.messages is reached, so
 * the answer implies the fsync; here the fsync joins the group round. */
static void api_produce_flush_policy(api_req_t *req, part_t *part, api_produce_wait_t *pw,
                                     proto_produce_resp_partition_produce_response_t *pr)
{
    const topic_cfg_t *cfg = &part->topic->cfg;
    if (log_unflushed_messages(part->log) < cfg->flush_messages)
        return;
    api_flush_add(req->b, part);
    if (pw->nent == pw->capent) {
        int cap = pw->capent ? pw->capent * 2 : 8;
        api_produce_flushed_t *v = arena_alloc(req->arena, (size_t)cap * sizeof(*v));
        if (pw->nent)
            memcpy(v, pw->ent, (size_t)pw->nent * sizeof(*v));
        pw->ent = v;
        pw->capent = cap;
    }
    api_produce_flushed_t *e = &pw->ent[pw->nent++];
    e->pr = pr;
    memcpy(e->topic_id, part->topic->id, 16);
    e->partition = part->index;
}

static void api_produce_flushed(api_flush_waiter_t *w, const api_flush_fail_t *failed,
                                int nfailed)
{
    api_produce_wait_t *pw = (api_produce_wait_t *)w;
    api_conn_t *ac = pw->req->conn->udata;
    for (int i = 0; i < pw->nent; i++)
        for (int j = 0; j < nfailed; j++)
            if (pw->ent[i].partition == failed[j].partition &&
                !memcmp(pw->ent[i].topic_id, failed[j].topic_id, 16)) {
                /* An error carries no offsets, as Kafka answers it. */
                pw->ent[i].pr->error_code = KERR_KAFKA_STORAGE_ERROR;
                pw->ent[i].pr->base_offset = -1;
                pw->ent[i].pr->log_append_time_ms = -1;
                pw->ent[i].pr->log_start_offset = -1;
            }
    if (ac && ac->pending == pw)
        ac->pending = NULL;
    API_REPLY(pw->req, produce, &pw->resp);
}

static void api_produce_cancel(void *pending)
{
    api_flush_unwait(pending);
}

static void api_produce_finish(void *pending)
{
    api_produce_wait_t *pw = pending;
    api_flush_run(pw->req->b);
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

static int16_t api_produce_one(api_req_t *req, int16_t acks, part_t *part, proto_records_t *rec,
                               proto_produce_resp_partition_produce_response_t *pr,
                               api_produce_wait_t *pw)
{
    const topic_cfg_t *cfg = &part->topic->cfg;
    log_batch_limits_t lim;
    log_batch_hdr_t hdr;
    log_batch_vinfo_t info;
    log_append_result_t res;

    if (rec->len <= 0)
        return KERR_INVALID_RECORD;
    if (acks == -1 && cfg->min_insync_replicas > 1)
        return KERR_NOT_ENOUGH_REPLICAS;
    memset(&lim, 0, sizeof(lim));
    lim.max_message_bytes = cfg->max_message_bytes;
    lim.timestamp_log_append = cfg->log.timestamp_type == 1;
    lim.ts_before_max_ms = cfg->ts_before_max_ms;
    lim.ts_after_max_ms = cfg->ts_after_max_ms;
    lim.now_ms = req->now_ms;
    lim.compacted = cfg->compacted;
    lim.produce_version = req->hdr.api_version;
    int16_t err = log_batch_validate_ex(rec->p, (size_t)rec->len, &lim, &hdr, &info);
    if (err) {
        api_produce_record_error(req, pr, &info);
        return err;
    }
    if (LOG_BATCH_ATTR_IS_TRANSACTIONAL(hdr.attributes))
        return KERR_INVALID_TXN_STATE;
    /* The batch lives in the request frame, which we own and may patch.
     * Bytes after the batch (an incomplete tail) are ignored, as Kafka. */
    uint8_t *batch = (uint8_t *)rec->p;
    size_t blen = LOG_BATCH_LOG_OVERHEAD + (size_t)hdr.batch_length;
    if (!lim.timestamp_log_append)
        log_batch_set_max_timestamp(batch, blen, 0, info.max_timestamp);
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
    pr->base_offset = res.base_offset;
    pr->log_append_time_ms = res.log_append_time;
    pr->log_start_offset = res.log_start_offset;
    if (!res.duplicate) {
        part_appended(part);
        api_produce_flush_policy(req, part, pw, pr);
        part_notify(part);
    }
    return KERR_NONE;
}

static void api_produce_topic(api_req_t *req, int16_t acks,
                              proto_produce_req_topic_produce_data_t *td,
                              proto_produce_resp_topic_produce_response_t *tr, int *failed,
                              api_produce_wait_t *pw)
{
    topic_t *topic = td->name.len >= 0
                         ? part_topic_get(req->b->reg, td->name.p, (size_t)td->name.len)
                         : NULL;
    tr->name = td->name;
    tr->partition_responses.n = td->partition_data.n < 0 ? 0 : td->partition_data.n;
    tr->partition_responses.v = arena_calloc(req->arena, (size_t)tr->partition_responses.n + 1,
                                             sizeof(*tr->partition_responses.v));
    for (int32_t j = 0; j < tr->partition_responses.n; j++) {
        proto_produce_req_partition_produce_data_t *pd = &td->partition_data.v[j];
        proto_produce_resp_partition_produce_response_t *pr = &tr->partition_responses.v[j];
        proto_produce_resp_partition_produce_response_init(pr);
        pr->index = pd->index;
        part_t *part;
        int16_t err = api_part_online(topic, pd->index, &part);
        if (err != KERR_UNKNOWN_TOPIC_OR_PARTITION && api_internal_topic(td->name))
            err = KERR_INVALID_TOPIC_EXCEPTION; /* clients may not write there */
        else if (err != KERR_UNKNOWN_TOPIC_OR_PARTITION && acks != 0 && acks != 1 && acks != -1)
            err = KERR_INVALID_REQUIRED_ACKS;
        else if (part)
            err = api_produce_one(req, acks, part, &pd->records, pr, pw);
        if (err) {
            pr->error_code = err;
            pr->base_offset = -1;
            *failed = 1;
        }
    }
}

void api_produce(api_req_t *req)
{
    proto_produce_req_t r;
    api_produce_wait_t *pw = arena_calloc(req->arena, 1, sizeof(*pw));
    proto_produce_resp_t *resp = &pw->resp;
    int failed = 0;

    proto_produce_req_init(&r);
    if (proto_produce_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                 req->arena) < 0) {
        api_close(req, "malformed Produce request");
        return;
    }
    proto_produce_resp_init(resp);
    resp->responses.n = r.topic_data.n < 0 ? 0 : r.topic_data.n;
    resp->responses.v = arena_calloc(req->arena, (size_t)resp->responses.n + 1,
                                     sizeof(*resp->responses.v));
    for (int32_t i = 0; i < resp->responses.n; i++) {
        proto_produce_resp_topic_produce_response_init(&resp->responses.v[i]);
        api_produce_topic(req, r.acks, &r.topic_data.v[i], &resp->responses.v[i], &failed, pw);
    }
    if (r.acks == 0) {
        /* No answer is expected; a failure can only be signalled by
         * closing the connection, as Kafka does. */
        if (failed)
            net_conn_close(req->conn, "acks=0 produce failed");
        net_conn_done(req->conn);
        return;
    }
    if (pw->nent) {
        api_conn_t *ac = req->conn->udata;
        pw->req = req;
        pw->w.done = api_produce_flushed;
        ac->pending = pw;
        ac->cancel = api_produce_cancel;
        ac->finish = api_produce_finish;
        api_flush_wait(req->b, &pw->w);
        return;
    }
    API_REPLY(req, produce, resp);
}
