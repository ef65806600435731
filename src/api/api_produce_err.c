/* The record_errors of a Produce answer (v8+): when records of a batch
 * fail the per-record checks (no key on a compacted topic, a timestamp out
 * of range), Kafka lists every one of them by its index in the batch with
 * its own message, so that the client fails exactly those records with the
 * partition's error and retries none of the others in the same batch.
 *
 * Validation (log_batch_validate_ex, on a worker or the loop) keeps only
 * the first rejected record so that the common path allocates nothing;
 * this walks the rejected batch once more, on the loop, and writes the
 * list and the messages into the request's arena. The texts are Kafka
 * 4.4's (LogValidator and its RecordError), byte for byte: clients show
 * them to the user. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "api/api_produce_err.h"
#include "partition/part_read.h"
#include "util/kerr.h"

/* Kafka prints at most the first three record errors in the top-level
 * message of an INVALID_RECORD answer. */
#define API_PRODUCE_ERR_SHOWN 3

typedef struct api_perr_s {
    api_req_t *req;
    const part_append_ent_t *ent;
    proto_produce_resp_batch_index_and_error_message_t *v;
    int32_t n, cap;
    int any_timestamp; /* a timestamp error among them */
    const topic_t *topic; /* found by name or (v13+) by id, or NULL */
} api_perr_t;

static proto_str_t api_perr_str(api_req_t *req, const char *s, int n)
{
    proto_str_t r;
    r.p = arena_strndup(req->arena, s, (size_t)n);
    r.len = n;
    return r;
}

/* Kafka's DefaultRecord.toString, as its LogAppendTime message quotes it. */
static int api_perr_record(char *out, size_t cap, const log_record_t *rec)
{
    return snprintf(out, cap, "DefaultRecord(offset=%" PRId64 ", timestamp=%" PRId64
                    ", key=%d bytes, value=%d bytes)",
                    rec->offset, rec->timestamp, rec->key_len < 0 ? 0 : rec->key_len,
                    rec->value_len < 0 ? 0 : rec->value_len);
}

/* The message of one rejected record. Offsets are batch-relative here, as
 * Kafka validates before it assigns them (a client's base offset is 0). */
static int api_perr_text(const api_perr_t *pe, const log_record_error_t *e, char *out,
                         size_t cap)
{
    const part_append_ent_t *ent = pe->ent;
    const log_batch_limits_t *lim = &ent->lim;
    char rec[160];
    if (e->err == KERR_INVALID_RECORD)
        return snprintf(out, cap,
                        "Compacted topic cannot accept message without key in topic partition "
                        "%.*s-%d",
                        pe->topic ? (int)pe->topic->name_len : (int)ent->topic_len,
                        pe->topic ? pe->topic->name : ent->topic, ent->partition);
    if (e->log_append_time) {
        api_perr_record(rec, sizeof(rec), e->rec);
        return snprintf(out, cap,
                        "Invalid timestamp type in message %s. Producer should not set "
                        "timestamp type to LogAppendTime.",
                        rec);
    }
    /* Java's long arithmetic wraps; so does this. */
    int64_t lo = (int64_t)((uint64_t)lim->now_ms - (uint64_t)lim->ts_before_max_ms);
    int64_t hi = (int64_t)((uint64_t)lim->now_ms + (uint64_t)lim->ts_after_max_ms);
    return snprintf(out, cap,
                    "Timestamp %" PRId64 " of message with offset %" PRId64
                    " is out of range. The timestamp should be within [%" PRId64 ", %" PRId64 "]",
                    e->rec->timestamp, e->rec->offset, lo, hi);
}

static void api_perr_add(void *arg, const log_record_error_t *e)
{
    api_perr_t *pe = arg;
    char text[512];
    if (pe->n == pe->cap) {
        int32_t cap = pe->cap ? pe->cap * 2 : 8;
        void *v = arena_alloc(pe->req->arena, (size_t)cap * sizeof(*pe->v));
        if (pe->n)
            memcpy(v, pe->v, (size_t)pe->n * sizeof(*pe->v));
        pe->v = v;
        pe->cap = cap;
    }
    proto_produce_resp_batch_index_and_error_message_t *be = &pe->v[pe->n++];
    proto_produce_resp_batch_index_and_error_message_init(be);
    be->batch_index = e->batch_index;
    int n = api_perr_text(pe, e, text, sizeof(text));
    be->batch_index_error_message = api_perr_str(pe->req, text, n < (int)sizeof(text) ? n :
                                                 (int)sizeof(text) - 1);
    pe->any_timestamp |= e->err == KERR_INVALID_TIMESTAMP;
}

/* Kafka's top-level message: a fixed one when any timestamp failed, else
 * the count and the first three as RecordError.toString prints them. */
static proto_str_t api_perr_summary(api_perr_t *pe)
{
    static const char ts[] = "One or more records have been rejected due to invalid timestamp";
    buf_t b;
    char head[160];
    if (pe->any_timestamp)
        return api_perr_str(pe->req, ts, (int)strlen(ts));
    buf_init(&b);
    int n = snprintf(head, sizeof(head),
                     "One or more records have been rejected due to %d record errors in total, "
                     "and only showing the first three errors at most: [",
                     pe->n);
    buf_put(&b, head, (size_t)n);
    for (int32_t i = 0; i < pe->n && i < API_PRODUCE_ERR_SHOWN; i++) {
        proto_str_t m = pe->v[i].batch_index_error_message;
        n = snprintf(head, sizeof(head), "%sRecordError(batchIndex=%d, message='", i ? ", " : "",
                     pe->v[i].batch_index);
        buf_put(&b, head, (size_t)n);
        buf_put(&b, m.p, (size_t)m.len);
        buf_put(&b, "')", 2);
    }
    buf_put(&b, "]", 1);
    proto_str_t r = api_perr_str(pe->req, (const char *)b.p, (int)b.len);
    buf_free(&b);
    return r;
}

int api_produce_record_errors(api_req_t *req, const part_append_ent_t *ent,
                              proto_produce_resp_partition_produce_response_t *pr)
{
    /* v13 names topics by id only: the name comes from the registry */
    topic_t *topic = ent->by_id ? part_topic_by_id(req->b->reg, ent->id)
                                : part_topic_get(req->b->reg, ent->topic, ent->topic_len);
    api_perr_t pe = {req, ent, NULL, 0, 0, 0, topic};
    if (!ent->records || ent->len <= 0 ||
        (ent->verr != KERR_INVALID_RECORD && ent->verr != KERR_INVALID_TIMESTAMP))
        return 0;
    if (!log_batch_record_errors(ent->records, (size_t)ent->len, &ent->lim, api_perr_add, &pe))
        return 0;
    pr->record_errors.n = pe.n;
    pr->record_errors.v = pe.v;
    pr->error_message = api_perr_summary(&pe);
    /* Kafka answers such a rejection with the partition's log start
     * offset (and no other offset). */
    part_t *part;
    if (topic && !part_find(topic, ent->partition, &part))
        pr->log_start_offset = part_log_start(part);
    return 1;
}
