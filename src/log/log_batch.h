/* Record batches, magic v2: header access, record iteration, produce-time
 * validation (Kafka's LogValidator rules) and an encoder.
 *
 * Batches are kept in their wire form everywhere (on disk and on the wire),
 * so this module reads and patches them in place instead of decoding them
 * into structs; the only copy made is the decompressed form of a compressed
 * batch. Byte layout of the 61-byte header (all big-endian):
 *
 *   0 baseOffset i64 | 8 batchLength i32 (bytes after this field)
 *  12 partitionLeaderEpoch i32 | 16 magic i8 (=2) | 17 crc u32
 *  21 attributes i16 | 23 lastOffsetDelta i32 | 27 baseTimestamp i64
 *  35 maxTimestamp i64 | 43 producerId i64 | 51 producerEpoch i16
 *  53 baseSequence i32 | 57 recordsCount i32 | 61 records...
 *
 * The CRC-32C covers [21, 12 + batchLength): baseOffset and leader epoch
 * can be set without recomputing it, maxTimestamp cannot. */
#ifndef STRAND_LOG_BATCH_H
#define STRAND_LOG_BATCH_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define LOG_BATCH_HDR_SIZE 61
/* baseOffset + batchLength: the part not counted by batchLength. */
#define LOG_BATCH_LOG_OVERHEAD 12

/* Byte offsets of the header fields. */
#define LOG_BATCH_OFF_BASE_OFFSET 0
#define LOG_BATCH_OFF_LENGTH 8
#define LOG_BATCH_OFF_LEADER_EPOCH 12
#define LOG_BATCH_OFF_MAGIC 16
#define LOG_BATCH_OFF_CRC 17
#define LOG_BATCH_OFF_ATTRIBUTES 21
#define LOG_BATCH_OFF_LAST_OFFSET_DELTA 23
#define LOG_BATCH_OFF_BASE_TIMESTAMP 27
#define LOG_BATCH_OFF_MAX_TIMESTAMP 35
#define LOG_BATCH_OFF_PRODUCER_ID 43
#define LOG_BATCH_OFF_PRODUCER_EPOCH 51
#define LOG_BATCH_OFF_BASE_SEQUENCE 53
#define LOG_BATCH_OFF_RECORDS_COUNT 57

typedef struct log_batch_hdr_s {
    int64_t base_offset;
    int32_t batch_length;
    int32_t leader_epoch;
    int8_t magic;
    uint32_t crc;
    int16_t attributes;
    int32_t last_offset_delta;
    int64_t base_timestamp;
    int64_t max_timestamp;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t base_sequence;
    int32_t records_count;
} log_batch_hdr_t;

/* Attribute bits. */
#define LOG_BATCH_ATTR_CODEC_MASK 0x07
#define LOG_BATCH_ATTR_TIMESTAMP_TYPE 0x08 /* set = LogAppendTime */
#define LOG_BATCH_ATTR_TRANSACTIONAL 0x10
#define LOG_BATCH_ATTR_CONTROL 0x20
#define LOG_BATCH_ATTR_DELETE_HORIZON 0x40

#define LOG_BATCH_ATTR_CODEC(a) ((a) & LOG_BATCH_ATTR_CODEC_MASK)
#define LOG_BATCH_ATTR_IS_LOG_APPEND_TIME(a) (((a) & LOG_BATCH_ATTR_TIMESTAMP_TYPE) != 0)
#define LOG_BATCH_ATTR_IS_TRANSACTIONAL(a) (((a) & LOG_BATCH_ATTR_TRANSACTIONAL) != 0)
#define LOG_BATCH_ATTR_IS_CONTROL(a) (((a) & LOG_BATCH_ATTR_CONTROL) != 0)
#define LOG_BATCH_ATTR_HAS_DELETE_HORIZON(a) (((a) & LOG_BATCH_ATTR_DELETE_HORIZON) != 0)

/* Codec ids as in the attributes (same numbers as util/compress.h). */
#define LOG_BATCH_CODEC_NONE 0
#define LOG_BATCH_CODEC_GZIP 1
#define LOG_BATCH_CODEC_SNAPPY 2
#define LOG_BATCH_CODEC_LZ4 3
#define LOG_BATCH_CODEC_ZSTD 4

/* Control record types (key = version i16, type i16). */
#define LOG_CTRL_ABORT 0
#define LOG_CTRL_COMMIT 1

/* Decodes the header. Returns 0, or -1 if len < 61 or magic != 2. Checks
 * neither the CRC nor batch_length against len. */
int log_batch_hdr_parse(const uint8_t *p, size_t len, log_batch_hdr_t *h);

/* Total size of the batch at p (12 + batchLength), or -1 if len < 12 or
 * batchLength is negative. For walking a run of batches. */
int64_t log_batch_total_size(const uint8_t *p, size_t len);

/* 1 if the stored CRC matches CRC-32C over [21, 12+batch_length), 0 if not
 * or if the batch does not fit in len. */
int log_batch_crc_ok(const uint8_t *p, size_t len);
/* Recomputes and stores the CRC; p must hold the whole batch. */
void log_batch_update_crc(uint8_t *p, size_t len);

/* Neither touches the CRC (those fields are not covered by it). */
void log_batch_set_base_offset(uint8_t *p, int64_t base_offset);
void log_batch_set_leader_epoch(uint8_t *p, int32_t epoch);
/* Sets the timestamp type to LogAppendTime and maxTimestamp to ts,
 * recomputing the CRC. */
void log_batch_set_log_append_time(uint8_t *p, size_t len, int64_t ts);
/* Sets the timestamp type (log_append: 1 LogAppendTime, 0 CreateTime) and
 * maxTimestamp, recomputing the CRC only if either changes (Kafka's
 * setMaxTimestamp). */
void log_batch_set_max_timestamp(uint8_t *p, size_t len, int log_append, int64_t ts);

typedef struct log_record_s {
    int64_t offset;        /* absolute: baseOffset + offsetDelta */
    int64_t timestamp;     /* effective: maxTimestamp for LogAppendTime */
    int8_t attributes;
    const uint8_t *key;
    int32_t key_len;       /* -1 = null */
    const uint8_t *value;
    int32_t value_len;     /* -1 = null */
    int32_t headers_count;
    const uint8_t *headers; /* raw header bytes, see log_record_header_next */
    size_t headers_len;
} log_record_t;

typedef struct log_header_s {
    const uint8_t *key;
    int32_t key_len;
    const uint8_t *value;
    int32_t value_len;     /* -1 = null */
} log_header_t;

/* Reads the next header from the raw bytes [*pos, end) of a record's
 * headers and advances *pos. Returns 1 = header, 0 = end, -1 = corrupt. */
int log_record_header_next(const uint8_t **pos, const uint8_t *end, log_header_t *hdr);

/* Reads one record from [*pos, end) and advances *pos past it, in the
 * context of the batch header h (for absolute offsets and timestamps).
 * Pointers in rec point into [*pos, end). Returns 1 = record, -1 = corrupt
 * (bad varint, lengths inconsistent with the record's length field, a
 * negative header count or header key length, a length below -1). */
int log_record_parse(const uint8_t **pos, const uint8_t *end, const log_batch_hdr_t *h,
                     log_record_t *rec);

typedef struct log_batch_iter_s log_batch_iter_t;
/* Iterates the records of one batch, decompressing into memory the
 * iterator owns. Record pointers stay valid until log_batch_iter_free.
 * Returns NULL if the batch header is unusable or decompression fails.
 * The batch bytes must stay valid and unchanged while iterating. The
 * caller owns the iterator. */
log_batch_iter_t *log_batch_iter_new(const uint8_t *batch, size_t len);
/* 1 = record, 0 = end, -1 = corrupt. */
int log_batch_iter_next(log_batch_iter_t *it, log_record_t *rec);
void log_batch_iter_free(log_batch_iter_t *it);

typedef struct log_batch_limits_s {
    int32_t max_message_bytes;  /* max.message.bytes: limit on the whole batch incl. 12-byte log overhead */
    int timestamp_log_append;   /* message.timestamp.type = LogAppendTime */
    int64_t ts_before_max_ms;   /* message.timestamp.before.max.ms */
    int64_t ts_after_max_ms;    /* message.timestamp.after.max.ms */
    int64_t now_ms;
    int compacted;              /* cleanup.policy contains compact: every record needs a key */
    int16_t produce_version;    /* zstd needs v7+ */
    int allow_control;          /* a coordinator's transaction marker */
} log_batch_limits_t;

/* What validation learnt beyond the header, for the append that follows. */
typedef struct log_batch_vinfo_s {
    int64_t max_timestamp;        /* largest record timestamp (-1 if none), as Kafka recomputes it */
    int32_t max_timestamp_delta;  /* offset delta of the first record with it */
    int32_t error_index;          /* batch index of the first rejected record, -1 if none */
    const char *error_message;    /* static text for the Produce response, NULL on success */
} log_batch_vinfo_t;

/* Validates one produced batch as Kafka's broker does before appending
 * (LogValidator): exactly one whole batch, magic 2, CRC, record count and
 * offset deltas, record framing and varints (decompressing a compressed
 * batch, bounded), timestamps for CreateTime, keys for compacted topics.
 * Returns 0 or a Kafka error code: UNKNOWN_SERVER_ERROR -1 (undecodable
 * compressed payload), CORRUPT_MESSAGE 2, MESSAGE_TOO_LARGE 10,
 * INVALID_TIMESTAMP 32, UNSUPPORTED_COMPRESSION_TYPE 76, INVALID_RECORD 87
 * (Kafka's UNSUPPORTED_FOR_MESSAGE_FORMAT 43 only concerns formats below
 * v2, which produce never reaches). Fills *h once the frame is sound.
 * Does not modify the batch: the caller then sets the base offset, leader
 * epoch and, for LogAppendTime topics, log_batch_set_log_append_time(). */
int16_t log_batch_validate(const uint8_t *p, size_t len, const log_batch_limits_t *lim,
                           log_batch_hdr_t *h);
/* The same, also filling *info (may be NULL) on success and on failure.
 *
 * Details of the Kafka behaviour reproduced (UnifiedLog/LogValidator/
 * ProduceRequest.validateRecords, Kafka 4.x):
 *  - len < 17 or a batch longer than len: INVALID_RECORD (no batch);
 *    batchLength < 14 or magic outside 0..2: CORRUPT_MESSAGE; magic 0/1:
 *    INVALID_RECORD; a second complete batch after the first:
 *    INVALID_RECORD; an incomplete tail after the batch is ignored, so the
 *    caller must append only LOG_BATCH_LOG_OVERHEAD + h->batch_length bytes.
 *  - baseOffset != 0: INVALID_RECORD; size > max_message_bytes:
 *    MESSAGE_TOO_LARGE; size < 61 or CRC mismatch: CORRUPT_MESSAGE.
 *  - lastOffsetDelta/recordsCount inconsistent or <= 0, control batch,
 *    producer id without base sequence: INVALID_RECORD.
 *  - record framing errors, record count mismatch, bytes left over, and
 *    (stricter than Kafka, which rewrites such batches) offset deltas
 *    other than 0..n-1: INVALID_RECORD.
 *  - per-record errors are collected as Kafka does: any bad timestamp
 *    gives INVALID_TIMESTAMP, otherwise a missing key on a compacted
 *    topic gives INVALID_RECORD. A timestamp is bad when, on a
 *    CreateTime topic, it is not -1 and lies outside [now - before_max,
 *    now + after_max]; or when the batch claims LogAppendTime (on a
 *    LogAppendTime topic, or with timestamp -1). A record with a key
 *    error is not checked for its timestamp.
 *  - a compressed payload the codec cannot decode: UNKNOWN_SERVER_ERROR
 *    (-1), which is what Kafka's generic exception path answers; one
 *    that would decompress beyond log_batch_max_decompressed(lim):
 *    MESSAGE_TOO_LARGE (Kafka streams and has no such limit).
 *  - an unknown codec id (5..7): UNSUPPORTED_COMPRESSION_TYPE; zstd with
 *    0 < produce_version < 7: UNSUPPORTED_COMPRESSION_TYPE.
 *  - max_message_bytes <= 0 means no limit; produce_version <= 0 means
 *    no version restriction (for internal appends).
 * After success, the append sets, as Kafka does: the base offset and
 * leader epoch; for a LogAppendTime topic log_batch_set_log_append_time(
 * now); else log_batch_set_max_timestamp(p, len, 0, info->max_timestamp). */
int16_t log_batch_validate_ex(const uint8_t *p, size_t len, const log_batch_limits_t *lim,
                              log_batch_hdr_t *h, log_batch_vinfo_t *info);

/* One record that the per-record checks rejected, as Kafka's LogValidator
 * lists them in a Produce answer's record_errors. */
typedef struct log_record_error_s {
    int32_t batch_index;        /* the record's index in its batch */
    int16_t err;                /* KERR_INVALID_RECORD: no key on a compacted topic;
                                 * KERR_INVALID_TIMESTAMP: out of range, or LogAppendTime */
    int log_append_time;        /* the timestamp error is the batch's LogAppendTime type */
    const log_record_t *rec;    /* valid during the call only */
} log_record_error_t;
typedef void log_record_error_fn(void *arg, const log_record_error_t *e);

/* Validates as log_batch_validate_ex does and calls fn for every record
 * the per-record checks reject, in batch order. For the answer to a batch
 * that validation rejected: validation itself keeps only the first, so
 * that the common path allocates nothing. Returns how many records were
 * rejected when they are what failed the batch, else 0 (the batch is
 * sound, or a framing error stopped the walk, as Kafka throws there:
 * ignore what fn was told). */
int32_t log_batch_record_errors(const uint8_t *p, size_t len, const log_batch_limits_t *lim,
                                log_record_error_fn *fn, void *arg);

/* Bound on the decompressed size of a produced batch: 64 x the batch size
 * limit, at least 64 MiB, at most 1 GiB (1 GiB with no limit). Kafka
 * decompresses as a stream and needs none; we decompress whole batches. */
size_t log_batch_max_decompressed(const log_batch_limits_t *lim);
/* Bound used by log_batch_iter_new() for stored batches. */
#define LOG_BATCH_ITER_MAX_DECOMPRESSED ((size_t)1 << 30)

/* Frees this thread's reusable decompression buffer and codec contexts. */
void log_batch_thread_cleanup(void);

/* Options of log_batch_build(). */
typedef struct log_batch_build_s {
    int64_t base_offset;
    int32_t leader_epoch;       /* -1 = unknown */
    int16_t attributes;         /* codec, timestamp type, transactional, control */
    int level;                  /* codec level; 0 = the codec's default */
    int64_t producer_id;        /* -1 = none */
    int16_t producer_epoch;     /* -1 = none */
    int32_t base_sequence;      /* -1 = none */
    int keep_offsets;           /* 0: offset deltas 0..n-1; 1: rec.offset - base_offset */
    int64_t log_append_time;    /* maxTimestamp when attributes say LogAppendTime */
} log_batch_build_t;

/* Sets the options to a plain producer batch: offset 0, epoch -1, no
 * compression, CreateTime, no producer id. */
void log_batch_build_init(log_batch_build_t *opt);

/* Appends one v2 batch holding recs[0..n) to out (the caller's buffer;
 * the batch starts at the out->len of the call). Uses each record's key,
 * value, timestamp, headers (raw bytes) and, with keep_offsets, offset.
 * baseTimestamp is the first record's timestamp, maxTimestamp the largest.
 * Returns 0, or -1 if compression fails (out is then left as it was). */
int log_batch_build(buf_t *out, const log_batch_build_t *opt, const log_record_t *recs, int n);

/* Appends one header in record-header encoding to out (raw header bytes
 * for log_record_t.headers). value_len -1 = null value. */
void log_record_put_header(buf_t *out, const void *key, int32_t key_len, const void *value,
                           int32_t value_len);

/* The control record type of a control batch's first record (0 ABORT,
 * 1 COMMIT, 2 LEADER_CHANGE, ...: protocol/FORMATS.md §5), or -1 when it
 * cannot be read. */
int log_batch_control_type(const uint8_t *batch, size_t len);

/* Appends a transaction marker batch (control, transactional, one record,
 * baseSequence -1, no compression) to out. commit: 1 COMMIT, 0 ABORT. */
void log_batch_build_txn_marker(buf_t *out, int64_t producer_id, int16_t producer_epoch,
                                int commit, int32_t coordinator_epoch, int64_t timestamp);

#endif
