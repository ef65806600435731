/* Produce-time validation of a record batch, reproducing the checks and
 * error codes of Kafka's ProduceRequest.validateRecords, UnifiedLog.
 * analyzeAndValidateRecords and LogValidator, in that order (see the
 * header for the list). It runs on every produced batch, so uncompressed
 * records are walked in place with no allocation, and compressed ones are
 * decompressed into one buffer per thread that is reused across batches
 * (and released when it grew large, to keep the resident size small). */
#include "log/log_batch.h"

#include <string.h>

#include "util/compress.h"
#include "util/kerr.h"

/* Legacy v0 record overhead: the smallest batchLength any magic allows. */
#define LB_MIN_BATCH_LENGTH 14
#define LB_HDR_UP_TO_MAGIC 17
/* Decompression buffer capacity kept between batches. */
#define LB_KEEP_CAP ((size_t)4 << 20)

static __thread buf_t lb_scratch;

typedef struct lb_ctx_s {
    const log_batch_limits_t *lim;
    log_batch_hdr_t *h;
    log_batch_vinfo_t *info;
    log_record_error_fn *fn; /* NULL, or told every rejected record */
    void *arg;
    int32_t nrejected; /* records rejected, when that failed the batch */
} lb_ctx_t;

static int16_t lb_fail(lb_ctx_t *c, int16_t err, int32_t index, const char *msg)
{
    c->info->error_index = index;
    c->info->error_message = msg;
    return err;
}

static int32_t lb_i32(const uint8_t *p)
{
    return (int32_t)(((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3]);
}

/* ProduceRequest.validateRecords: what the request handler checks while
 * looking for exactly one v2 batch. */
static int16_t lb_check_frame(lb_ctx_t *c, const uint8_t *p, size_t len)
{
    if (len < LB_HDR_UP_TO_MAGIC) {
        if (len >= LOG_BATCH_LOG_OVERHEAD && lb_i32(p + LOG_BATCH_OFF_LENGTH) < LB_MIN_BATCH_LENGTH)
            return lb_fail(c, KERR_CORRUPT_MESSAGE, -1, "Record size is less than the minimum record overhead");
        return lb_fail(c, KERR_INVALID_RECORD, -1, "Produce requests must have at least one record batch");
    }
    int32_t blen = lb_i32(p + LOG_BATCH_OFF_LENGTH);
    int8_t magic = (int8_t)p[LOG_BATCH_OFF_MAGIC];
    if (blen < LB_MIN_BATCH_LENGTH)
        return lb_fail(c, KERR_CORRUPT_MESSAGE, -1, "Record size is less than the minimum record overhead");
    if (magic < 0 || magic > 2)
        return lb_fail(c, KERR_CORRUPT_MESSAGE, -1, "Invalid magic found in record");
    size_t total = (size_t)blen + LOG_BATCH_LOG_OVERHEAD;
    if (total > len)
        return lb_fail(c, KERR_INVALID_RECORD, -1, "Produce requests must have at least one record batch");
    if (magic != 2)
        return lb_fail(c, KERR_INVALID_RECORD, -1,
                       "Produce requests are only allowed to contain record batches with magic version 2");
    /* Kafka would read the attributes past the end of such a runt; it
     * fails the CRC check below anyway. */
    if (total < LOG_BATCH_HDR_SIZE)
        return lb_fail(c, KERR_CORRUPT_MESSAGE, -1, "Record batch is smaller than the minimum overhead");
    int codec = LOG_BATCH_ATTR_CODEC(p[22]);
    if (codec > LOG_BATCH_CODEC_ZSTD)
        return lb_fail(c, KERR_UNSUPPORTED_COMPRESSION_TYPE, -1, "Unknown compression type id");
    if (codec == LOG_BATCH_CODEC_ZSTD && c->lim->produce_version > 0 && c->lim->produce_version < 7)
        return lb_fail(c, KERR_UNSUPPORTED_COMPRESSION_TYPE, -1,
                       "Produce requests with version < 7 are not allowed to use ZStandard compression");
    /* A second batch: only a complete one counts, a partial tail is
     * trimmed as Kafka's trimInvalidBytes does. */
    const uint8_t *q = p + total;
    size_t rest = len - total;
    if (rest >= LOG_BATCH_LOG_OVERHEAD) {
        int32_t blen2 = lb_i32(q + LOG_BATCH_OFF_LENGTH);
        if (blen2 < LB_MIN_BATCH_LENGTH)
            return lb_fail(c, KERR_CORRUPT_MESSAGE, -1, "Record size is less than the minimum record overhead");
        if (rest >= LB_HDR_UP_TO_MAGIC) {
            int8_t magic2 = (int8_t)q[LOG_BATCH_OFF_MAGIC];
            if (magic2 < 0 || magic2 > 2)
                return lb_fail(c, KERR_CORRUPT_MESSAGE, -1, "Invalid magic found in record");
            if ((size_t)blen2 + LOG_BATCH_LOG_OVERHEAD <= rest)
                return lb_fail(c, KERR_INVALID_RECORD, -1,
                               "Produce requests are only allowed to contain exactly one record batch");
        }
    }
    return 0;
}

/* UnifiedLog.analyzeAndValidateRecords, then LogValidator.validateBatch
 * for a client append. */
static int16_t lb_check_batch(lb_ctx_t *c, const uint8_t *p, size_t total)
{
    const log_batch_hdr_t *h = c->h;
    if (h->base_offset != 0)
        return lb_fail(c, KERR_INVALID_RECORD, -1, "The baseOffset of the record batch should be 0");
    if (c->lim->max_message_bytes > 0 && total > (size_t)c->lim->max_message_bytes)
        return lb_fail(c, KERR_MESSAGE_TOO_LARGE, -1,
                       "The record batch size exceeds the maximum configured value");
    if (!log_batch_crc_ok(p, total))
        return lb_fail(c, KERR_CORRUPT_MESSAGE, -1, "Record is corrupt (CRC mismatch)");
    if ((int64_t)h->last_offset_delta + 1 <= 0)
        return lb_fail(c, KERR_INVALID_RECORD, -1, "Batch has an invalid offset range");
    if (h->records_count <= 0)
        return lb_fail(c, KERR_INVALID_RECORD, -1, "Invalid reported count for record batch");
    if ((int64_t)h->last_offset_delta + 1 != h->records_count)
        return lb_fail(c, KERR_INVALID_RECORD, -1, "Inconsistent batch offset range and count of records");
    if (LOG_BATCH_ATTR_IS_CONTROL(h->attributes) && !c->lim->allow_control)
        return lb_fail(c, KERR_INVALID_RECORD, -1, "Clients are not allowed to write control records");
    if (h->producer_id >= 0 && h->base_sequence < 0 && !LOG_BATCH_ATTR_IS_CONTROL(h->attributes))
        return lb_fail(c, KERR_INVALID_RECORD, -1, "Invalid sequence number in record batch with producerId");
    return 0;
}

/* LogValidator.validateTimestamp: 1 if the record's timestamp is
 * rejected. The differences wrap as Java's long arithmetic does. */
static int lb_bad_timestamp(const lb_ctx_t *c, int64_t ts)
{
    const log_batch_limits_t *lim = c->lim;
    if (!lim->timestamp_log_append && ts != -1) {
        int64_t diff = (int64_t)((uint64_t)lim->now_ms - (uint64_t)ts);
        int64_t neg = (int64_t)(0 - (uint64_t)diff);
        return diff > lim->ts_before_max_ms || neg > lim->ts_after_max_ms;
    }
    return LOG_BATCH_ATTR_IS_LOG_APPEND_TIME(c->h->attributes);
}

/* The per-record checks of LogValidator.validateRecord: a missing key on
 * a compacted topic, else the timestamp. Returns the error (0 if none) and
 * tells c->fn about it. */
static int16_t lb_check_record(lb_ctx_t *c, const log_record_t *rec, int32_t i)
{
    log_record_error_t e;
    if (c->lim->compacted && rec->key_len < 0)
        e.err = KERR_INVALID_RECORD;
    else if (lb_bad_timestamp(c, rec->timestamp))
        e.err = KERR_INVALID_TIMESTAMP;
    else
        return 0;
    if (c->fn) {
        e.batch_index = i;
        e.log_append_time = LOG_BATCH_ATTR_IS_LOG_APPEND_TIME(c->h->attributes);
        e.rec = rec;
        c->fn(c->arg, &e);
    }
    return e.err;
}

/* Walks the records of [pos, end): framing errors stop the walk (Kafka
 * throws), key and timestamp errors are collected (Kafka lists them all
 * and answers INVALID_TIMESTAMP if any timestamp failed). */
static int16_t lb_check_records(lb_ctx_t *c, const uint8_t *pos, const uint8_t *end)
{
    const log_batch_hdr_t *h = c->h;
    int32_t first_ts_err = -1, first_key_err = -1, nrejected = 0;
    for (int32_t i = 0; i < h->records_count; i++) {
        log_record_t rec;
        if (log_record_parse(&pos, end, h, &rec) < 0)
            return lb_fail(c, KERR_INVALID_RECORD, i, "Found invalid record structure");
        if (rec.offset - h->base_offset != i)
            return lb_fail(c, KERR_INVALID_RECORD, i, "Record offset delta out of sequence");
        int16_t err = lb_check_record(c, &rec, i);
        nrejected += err != 0;
        if (err == KERR_INVALID_RECORD && first_key_err < 0)
            first_key_err = i;
        if (err == KERR_INVALID_TIMESTAMP && first_ts_err < 0)
            first_ts_err = i;
        if (rec.timestamp > c->info->max_timestamp) {
            c->info->max_timestamp = rec.timestamp;
            c->info->max_timestamp_delta = i;
        }
    }
    if (pos != end)
        return lb_fail(c, KERR_INVALID_RECORD, h->records_count - 1,
                       "Incorrect declared batch size, records still remaining in file");
    if (first_ts_err >= 0 || first_key_err >= 0)
        c->nrejected = nrejected;
    if (first_ts_err >= 0)
        return lb_fail(c, KERR_INVALID_TIMESTAMP, first_ts_err,
                       "One or more records have been rejected due to invalid timestamp");
    if (first_key_err >= 0)
        return lb_fail(c, KERR_INVALID_RECORD, first_key_err,
                       "Compacted topic cannot accept message without key");
    return 0;
}

size_t log_batch_max_decompressed(const log_batch_limits_t *lim)
{
    size_t lo = (size_t)64 << 20, hi = (size_t)1 << 30;
    if (lim->max_message_bytes <= 0)
        return hi;
    size_t n = (size_t)lim->max_message_bytes * 64;
    return n < lo ? lo : n > hi ? hi : n;
}

static int16_t lb_check_compressed(lb_ctx_t *c, const uint8_t *recs, size_t recs_len)
{
    buf_t *b = &lb_scratch;
    b->len = 0;
    int codec = LOG_BATCH_ATTR_CODEC(c->h->attributes);
    size_t max_out = log_batch_max_decompressed(c->lim);
    int16_t err;
    int over;
    if (compress_decompress_ex(codec, recs, recs_len, b, max_out, &over) < 0) {
        if (over)
            err = lb_fail(c, KERR_MESSAGE_TOO_LARGE, -1, "Decompressed record batch is too large");
        else
            err = lb_fail(c, KERR_UNKNOWN_SERVER_ERROR, -1, "Failed to decompress record stream");
    } else {
        static const uint8_t none[1];
        const uint8_t *q = b->p ? b->p : none;
        err = lb_check_records(c, q, q + b->len);
    }
    if (b->cap > LB_KEEP_CAP)
        buf_free(b);
    return err;
}

static int16_t lb_validate(lb_ctx_t *c, const uint8_t *p, size_t len)
{
    log_batch_hdr_t *h = c->h;
    c->info->max_timestamp = -1;
    c->info->max_timestamp_delta = -1;
    c->info->error_index = -1;
    c->info->error_message = NULL;
    int16_t err = lb_check_frame(c, p, len);
    if (err)
        return err;
    log_batch_hdr_parse(p, len, h);
    size_t total = (size_t)h->batch_length + LOG_BATCH_LOG_OVERHEAD;
    if ((err = lb_check_batch(c, p, total)))
        return err;
    const uint8_t *recs = p + LOG_BATCH_HDR_SIZE;
    size_t recs_len = total - LOG_BATCH_HDR_SIZE;
    if (LOG_BATCH_ATTR_CODEC(h->attributes) == LOG_BATCH_CODEC_NONE)
        return lb_check_records(c, recs, recs + recs_len);
    return lb_check_compressed(c, recs, recs_len);
}

int16_t log_batch_validate_ex(const uint8_t *p, size_t len, const log_batch_limits_t *lim,
                              log_batch_hdr_t *h, log_batch_vinfo_t *info)
{
    log_batch_vinfo_t dummy;
    lb_ctx_t c = {lim, h, info ? info : &dummy, NULL, NULL, 0};
    return lb_validate(&c, p, len);
}

int32_t log_batch_record_errors(const uint8_t *p, size_t len, const log_batch_limits_t *lim,
                                log_record_error_fn *fn, void *arg)
{
    log_batch_vinfo_t info;
    log_batch_hdr_t h;
    lb_ctx_t c = {lim, &h, &info, fn, arg, 0};
    lb_validate(&c, p, len);
    return c.nrejected;
}

int16_t log_batch_validate(const uint8_t *p, size_t len, const log_batch_limits_t *lim,
                           log_batch_hdr_t *h)
{
    return log_batch_validate_ex(p, len, lim, h, NULL);
}

void log_batch_thread_cleanup(void)
{
    buf_free(&lb_scratch);
    compress_thread_cleanup();
}
