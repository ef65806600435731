/* Record batch access: header decoding, CRC, in-place header patches and
 * record iteration. The byte layout is in log_batch.h; the records are
 * (protocol/FORMATS.md §4.3, lengths are zig-zag varints):
 *   length varint | attributes i8 | timestampDelta varlong |
 *   offsetDelta varint | keyLength varint (-1 null) | key |
 *   valueLength varint (-1 null) | value | headersCount varint |
 *   headers: [keyLength varint (>= 0) | key | valueLength varint | value]
 */
#include "log/log_batch.h"

#include <stdlib.h>
#include <string.h>

#include "util/compress.h"
#include "util/crc32c.h"
#include "util/mem.h"
#include "util/rd.h"

static inline int64_t lb_get_i64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 0; i < 8; i++)
        v = (v << 8) | p[i];
    return (int64_t)v;
}

static inline uint32_t lb_get_u32(const uint8_t *p)
{
    return ((uint32_t)p[0] << 24) | ((uint32_t)p[1] << 16) | ((uint32_t)p[2] << 8) | p[3];
}

static inline void lb_put_i64(uint8_t *p, int64_t v)
{
    uint64_t u = (uint64_t)v;
    for (int i = 7; i >= 0; i--) {
        p[i] = (uint8_t)u;
        u >>= 8;
    }
}

static inline void lb_put_u32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

int log_batch_hdr_parse(const uint8_t *p, size_t len, log_batch_hdr_t *h)
{
    if (len < LOG_BATCH_HDR_SIZE || p[LOG_BATCH_OFF_MAGIC] != 2)
        return -1;
    h->base_offset = lb_get_i64(p);
    h->batch_length = (int32_t)lb_get_u32(p + LOG_BATCH_OFF_LENGTH);
    h->leader_epoch = (int32_t)lb_get_u32(p + LOG_BATCH_OFF_LEADER_EPOCH);
    h->magic = (int8_t)p[LOG_BATCH_OFF_MAGIC];
    h->crc = lb_get_u32(p + LOG_BATCH_OFF_CRC);
    h->attributes = (int16_t)((p[21] << 8) | p[22]);
    h->last_offset_delta = (int32_t)lb_get_u32(p + LOG_BATCH_OFF_LAST_OFFSET_DELTA);
    h->base_timestamp = lb_get_i64(p + LOG_BATCH_OFF_BASE_TIMESTAMP);
    h->max_timestamp = lb_get_i64(p + LOG_BATCH_OFF_MAX_TIMESTAMP);
    h->producer_id = lb_get_i64(p + LOG_BATCH_OFF_PRODUCER_ID);
    h->producer_epoch = (int16_t)((p[51] << 8) | p[52]);
    h->base_sequence = (int32_t)lb_get_u32(p + LOG_BATCH_OFF_BASE_SEQUENCE);
    h->records_count = (int32_t)lb_get_u32(p + LOG_BATCH_OFF_RECORDS_COUNT);
    return 0;
}

int64_t log_batch_total_size(const uint8_t *p, size_t len)
{
    if (len < LOG_BATCH_LOG_OVERHEAD)
        return -1;
    int32_t blen = (int32_t)lb_get_u32(p + LOG_BATCH_OFF_LENGTH);
    if (blen < 0)
        return -1;
    return (int64_t)blen + LOG_BATCH_LOG_OVERHEAD;
}

/* CRC over [21, total); total must be checked by the caller. */
static uint32_t lb_crc(const uint8_t *p, size_t total)
{
    return crc32c(0, p + LOG_BATCH_OFF_ATTRIBUTES, total - LOG_BATCH_OFF_ATTRIBUTES);
}

int log_batch_crc_ok(const uint8_t *p, size_t len)
{
    int64_t total = log_batch_total_size(p, len);
    if (total < LOG_BATCH_HDR_SIZE || (uint64_t)total > len)
        return 0;
    return lb_crc(p, (size_t)total) == lb_get_u32(p + LOG_BATCH_OFF_CRC);
}

void log_batch_update_crc(uint8_t *p, size_t len)
{
    int64_t total = log_batch_total_size(p, len);
    if (total < LOG_BATCH_HDR_SIZE || (uint64_t)total > len)
        return;
    lb_put_u32(p + LOG_BATCH_OFF_CRC, lb_crc(p, (size_t)total));
}

void log_batch_set_base_offset(uint8_t *p, int64_t base_offset)
{
    lb_put_i64(p + LOG_BATCH_OFF_BASE_OFFSET, base_offset);
}

void log_batch_set_leader_epoch(uint8_t *p, int32_t epoch)
{
    lb_put_u32(p + LOG_BATCH_OFF_LEADER_EPOCH, (uint32_t)epoch);
}

void log_batch_set_max_timestamp(uint8_t *p, size_t len, int log_append, int64_t ts)
{
    int cur_append = (p[22] & LOG_BATCH_ATTR_TIMESTAMP_TYPE) != 0;
    if (cur_append == (log_append != 0) && lb_get_i64(p + LOG_BATCH_OFF_MAX_TIMESTAMP) == ts)
        return;
    if (log_append)
        p[22] |= LOG_BATCH_ATTR_TIMESTAMP_TYPE;
    else
        p[22] &= (uint8_t)~LOG_BATCH_ATTR_TIMESTAMP_TYPE;
    lb_put_i64(p + LOG_BATCH_OFF_MAX_TIMESTAMP, ts);
    log_batch_update_crc(p, len);
}

void log_batch_set_log_append_time(uint8_t *p, size_t len, int64_t ts)
{
    log_batch_set_max_timestamp(p, len, 1, ts);
}

/* A length-prefixed field: len -1 is null, other negatives corrupt. */
static int lb_take_field(rd_t *rd, const uint8_t **ptr, int32_t *len)
{
    int32_t n = rd_varint(rd);
    *len = n;
    *ptr = NULL;
    if (n < -1)
        return -1;
    if (n >= 0)
        *ptr = rd_take(rd, (size_t)n);
    return rd->err ? -1 : 0;
}

int log_record_parse(const uint8_t **pos, const uint8_t *end, const log_batch_hdr_t *h,
                     log_record_t *rec)
{
    rd_t rd;
    rd_init(&rd, *pos, (size_t)(end - *pos));
    int32_t size = rd_varint(&rd);
    if (rd.err || size < 0 || (size_t)size > rd_remain(&rd))
        return -1;
    const uint8_t *body_end = rd.p + size;
    rd.end = body_end;
    rec->attributes = rd_i8(&rd);
    int64_t ts_delta = rd_varlong(&rd);
    int32_t off_delta = rd_varint(&rd);
    /* Java long arithmetic wraps; so does this. */
    rec->timestamp = LOG_BATCH_ATTR_IS_LOG_APPEND_TIME(h->attributes)
                         ? h->max_timestamp
                         : (int64_t)((uint64_t)h->base_timestamp + (uint64_t)ts_delta);
    rec->offset = (int64_t)((uint64_t)h->base_offset + (uint64_t)(int64_t)off_delta);
    if (lb_take_field(&rd, &rec->key, &rec->key_len) < 0 ||
        lb_take_field(&rd, &rec->value, &rec->value_len) < 0)
        return -1;
    int32_t nhdr = rd_varint(&rd);
    if (rd.err || nhdr < 0 || (size_t)nhdr > rd_remain(&rd))
        return -1;
    rec->headers_count = nhdr;
    rec->headers = rd.p;
    for (int32_t i = 0; i < nhdr; i++) {
        int32_t klen = rd_varint(&rd);
        if (klen < 0)
            return -1;
        rd_take(&rd, (size_t)klen);
        const uint8_t *v;
        int32_t vlen;
        if (lb_take_field(&rd, &v, &vlen) < 0)
            return -1;
    }
    if (rd.err || rd.p != body_end)
        return -1;
    rec->headers_len = (size_t)(rd.p - rec->headers);
    *pos = body_end;
    return 1;
}

int log_record_header_next(const uint8_t **pos, const uint8_t *end, log_header_t *hdr)
{
    if (*pos >= end)
        return 0;
    rd_t rd;
    rd_init(&rd, *pos, (size_t)(end - *pos));
    hdr->key_len = rd_varint(&rd);
    if (rd.err || hdr->key_len < 0)
        return -1;
    hdr->key = rd_take(&rd, (size_t)hdr->key_len);
    if (lb_take_field(&rd, &hdr->value, &hdr->value_len) < 0)
        return -1;
    *pos = rd.p;
    return 1;
}

struct log_batch_iter_s {
    log_batch_hdr_t hdr;
    const uint8_t *pos;
    const uint8_t *end;
    int32_t read;
    buf_t buf; /* decompressed records of a compressed batch */
};

log_batch_iter_t *log_batch_iter_new(const uint8_t *batch, size_t len)
{
    log_batch_iter_t *it = xcalloc(1, sizeof(*it));
    buf_init(&it->buf);
    if (log_batch_hdr_parse(batch, len, &it->hdr) < 0)
        goto err;
    size_t total = (size_t)it->hdr.batch_length + LOG_BATCH_LOG_OVERHEAD;
    if (it->hdr.batch_length < LOG_BATCH_HDR_SIZE - LOG_BATCH_LOG_OVERHEAD || total > len ||
        it->hdr.records_count < 0)
        goto err;
    const uint8_t *recs = batch + LOG_BATCH_HDR_SIZE;
    size_t recs_len = total - LOG_BATCH_HDR_SIZE;
    int codec = LOG_BATCH_ATTR_CODEC(it->hdr.attributes);
    if (codec == LOG_BATCH_CODEC_NONE || it->hdr.records_count == 0) {
        it->pos = recs;
        it->end = recs + recs_len;
    } else {
        if (compress_decompress(codec, recs, recs_len, &it->buf, LOG_BATCH_ITER_MAX_DECOMPRESSED) < 0)
            goto err;
        it->pos = it->buf.p;
        it->end = it->buf.p + it->buf.len;
    }
    return it;
err:
    buf_free(&it->buf);
    free(it);
    return NULL;
}

int log_batch_iter_next(log_batch_iter_t *it, log_record_t *rec)
{
    if (it->read >= it->hdr.records_count)
        return 0;
    if (log_record_parse(&it->pos, it->end, &it->hdr, rec) < 0)
        return -1;
    it->read++;
    /* As Kafka: after the declared count nothing may be left over. An
     * empty batch (count 0, e.g. left by compaction) is not checked. */
    if (it->read == it->hdr.records_count && it->pos != it->end)
        return -1;
    return 1;
}

void log_batch_iter_free(log_batch_iter_t *it)
{
    if (!it)
        return;
    buf_free(&it->buf);
    free(it);
}
