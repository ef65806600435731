/* Record batch encoder (magic v2), for tests, control batches and
 * recompression. Writes, all integers big-endian:
 *
 *   0  baseOffset i64          8  batchLength i32 (total - 12)
 *  12  partitionLeaderEpoch i32 16 magic i8 = 2
 *  17  crc u32: CRC-32C of bytes [21, total)
 *  21  attributes i16          23 lastOffsetDelta i32
 *  27  baseTimestamp i64 (first record's, -1 if no records)
 *  35  maxTimestamp i64 (largest record timestamp, or the append time)
 *  43  producerId i64          51 producerEpoch i16
 *  53  baseSequence i32        57 recordsCount i32
 *  61  records, or their compressed form for codecs 1..4, each:
 *      length varint (bytes after it) | attributes i8 = 0 |
 *      timestampDelta varlong | offsetDelta varint |
 *      keyLength varint (-1 null) | key | valueLength varint (-1 null) |
 *      value | headersCount varint | headers (raw, as given)
 *  varint/varlong are zig-zag base-128 (protocol/FORMATS.md §2.3).
 */
#include "log/log_batch.h"

#include <string.h>

#include "util/compress.h"
#include "util/crc32c.h"

static size_t lb_uvarlong_size(uint64_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}

static size_t lb_varint_size(int32_t v)
{
    return lb_uvarlong_size((uint32_t)(((uint32_t)v << 1) ^ (uint32_t)(v >> 31)));
}

static size_t lb_varlong_size(int64_t v)
{
    return lb_uvarlong_size(((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

static size_t lb_field_size(int32_t len)
{
    return len < 0 ? 1 : lb_varint_size(len) + (size_t)len;
}

static void lb_put_field(buf_t *b, const void *p, int32_t len)
{
    if (len < 0) {
        buf_put_varint(b, -1);
        return;
    }
    buf_put_varint(b, len);
    buf_put(b, p, (size_t)len);
}

static void lb_put_record(buf_t *b, const log_record_t *rec, int32_t off_delta, int64_t ts_delta)
{
    size_t body = 1 + lb_varlong_size(ts_delta) + lb_varint_size(off_delta) +
                  lb_field_size(rec->key_len) + lb_field_size(rec->value_len) +
                  lb_varint_size(rec->headers_count) + rec->headers_len;
    buf_put_varint(b, (int32_t)body);
    buf_put_i8(b, 0);
    buf_put_varlong(b, ts_delta);
    buf_put_varint(b, off_delta);
    lb_put_field(b, rec->key, rec->key_len);
    lb_put_field(b, rec->value, rec->value_len);
    buf_put_varint(b, rec->headers_count);
    buf_put(b, rec->headers, rec->headers_len);
}

void log_batch_build_init(log_batch_build_t *opt)
{
    memset(opt, 0, sizeof(*opt));
    opt->leader_epoch = -1;
    opt->producer_id = -1;
    opt->producer_epoch = -1;
    opt->base_sequence = -1;
}

/* Writes the records (uncompressed) to b; returns the last offset delta
 * and fills the timestamp bounds. */
static int32_t lb_put_records(buf_t *b, const log_batch_build_t *opt, const log_record_t *recs,
                              int n, int64_t *base_ts, int64_t *max_ts)
{
    int log_append = LOG_BATCH_ATTR_IS_LOG_APPEND_TIME(opt->attributes);
    int32_t last_delta = n > 0 ? n - 1 : 0;
    *base_ts = -1;
    *max_ts = -1;
    for (int i = 0; i < n; i++) {
        int64_t ts = log_append ? opt->log_append_time : recs[i].timestamp;
        if (i == 0)
            *base_ts = ts;
        if (ts > *max_ts)
            *max_ts = ts;
        int32_t delta = opt->keep_offsets ? (int32_t)(recs[i].offset - opt->base_offset) : i;
        lb_put_record(b, &recs[i], delta, (int64_t)((uint64_t)ts - (uint64_t)*base_ts));
        last_delta = delta;
    }
    if (log_append)
        *max_ts = opt->log_append_time;
    return last_delta;
}

static uint8_t *lb_w(uint8_t *w, uint64_t v, int nbytes)
{
    for (int i = nbytes - 1; i >= 0; i--) {
        w[i] = (uint8_t)v;
        v >>= 8;
    }
    return w + nbytes;
}

static void lb_put_header(uint8_t *w, const log_batch_build_t *opt, size_t total, int32_t last_delta,
                          int64_t base_ts, int64_t max_ts, int n)
{
    w = lb_w(w, (uint64_t)opt->base_offset, 8);
    w = lb_w(w, (uint32_t)(total - LOG_BATCH_LOG_OVERHEAD), 4);
    w = lb_w(w, (uint32_t)opt->leader_epoch, 4);
    w = lb_w(w, 2, 1);
    w = lb_w(w, 0, 4); /* crc, computed last */
    w = lb_w(w, (uint16_t)opt->attributes, 2);
    w = lb_w(w, (uint32_t)last_delta, 4);
    w = lb_w(w, (uint64_t)base_ts, 8);
    w = lb_w(w, (uint64_t)max_ts, 8);
    w = lb_w(w, (uint64_t)opt->producer_id, 8);
    w = lb_w(w, (uint16_t)opt->producer_epoch, 2);
    w = lb_w(w, (uint32_t)opt->base_sequence, 4);
    lb_w(w, (uint32_t)n, 4);
}

int log_batch_build(buf_t *out, const log_batch_build_t *opt, const log_record_t *recs, int n)
{
    size_t start = out->len;
    int codec = LOG_BATCH_ATTR_CODEC(opt->attributes);
    int64_t base_ts, max_ts;
    int32_t last_delta;
    memset(buf_reserve(out, LOG_BATCH_HDR_SIZE), 0, LOG_BATCH_HDR_SIZE);
    out->len += LOG_BATCH_HDR_SIZE;
    if (codec == LOG_BATCH_CODEC_NONE) {
        last_delta = lb_put_records(out, opt, recs, n, &base_ts, &max_ts);
    } else {
        buf_t plain;
        buf_init(&plain);
        last_delta = lb_put_records(&plain, opt, recs, n, &base_ts, &max_ts);
        int r = compress_compress(codec, opt->level, plain.p, plain.len, out);
        buf_free(&plain);
        if (r < 0) {
            out->len = start;
            return -1;
        }
    }
    uint8_t *p = out->p + start;
    size_t total = out->len - start;
    lb_put_header(p, opt, total, last_delta, base_ts, max_ts, n);
    log_batch_update_crc(p, total);
    return 0;
}

void log_record_put_header(buf_t *out, const void *key, int32_t key_len, const void *value,
                           int32_t value_len)
{
    lb_put_field(out, key, key_len < 0 ? 0 : key_len);
    lb_put_field(out, value, value_len);
}

void log_batch_build_txn_marker(buf_t *out, int64_t producer_id, int16_t producer_epoch,
                                int commit, int32_t coordinator_epoch, int64_t timestamp)
{
    /* key: version i16 = 0, type i16; value: version i16 = 0,
     * coordinator epoch i32 (protocol/FORMATS.md §5). */
    uint8_t key[4] = {0, 0, 0, commit ? LOG_CTRL_COMMIT : LOG_CTRL_ABORT};
    uint8_t value[6] = {0, 0, (uint8_t)((uint32_t)coordinator_epoch >> 24),
                        (uint8_t)((uint32_t)coordinator_epoch >> 16),
                        (uint8_t)((uint32_t)coordinator_epoch >> 8), (uint8_t)coordinator_epoch};
    log_record_t rec;
    memset(&rec, 0, sizeof(rec));
    rec.timestamp = timestamp;
    rec.key = key;
    rec.key_len = sizeof(key);
    rec.value = value;
    rec.value_len = sizeof(value);
    log_batch_build_t opt;
    log_batch_build_init(&opt);
    opt.attributes = LOG_BATCH_ATTR_CONTROL | LOG_BATCH_ATTR_TRANSACTIONAL;
    opt.producer_id = producer_id;
    opt.producer_epoch = producer_epoch;
    log_batch_build(out, &opt, &rec, 1);
}

int log_batch_control_type(const uint8_t *batch, size_t len)
{
    log_batch_iter_t *it = log_batch_iter_new(batch, len);
    log_record_t rec;
    int type = -1;

    if (it && log_batch_iter_next(it, &rec) == 1 && rec.key && rec.key_len >= 4)
        type = (int16_t)((rec.key[2] << 8) | rec.key[3]);
    log_batch_iter_free(it);
    return type;
}
