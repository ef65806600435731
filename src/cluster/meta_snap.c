/* The metadata snapshot format, as Kafka 4.4 writes it (read off the
 * snapshots of a Kafka 4.4 KRaft node with DumpLogSegments; its bytes are
 * the fixtures of tests/unit/test_meta_snap). A snapshot file is a run of
 * v2 record batches, uncompressed, with no producer id, whose
 * partitionLeaderEpoch is the snapshot id's epoch, and whose offsets run
 * from 0 without gaps (they are positions in the snapshot, not log
 * offsets):
 *
 *   batch 0, control: offset 0  SnapshotHeaderRecord v0 (key: int16 0 |
 *                               int16 3; value: int16 version 0 | int64
 *                               lastContainedLogTimestamp | tagged fields)
 *                     offset 1.. optional control records: KRaftVersion
 *                               (type 5) and Voters (type 6) when
 *                               kraft.version is 1
 *   batches 1..k, data: the image's metadata records, at most 1024 per
 *                               batch (null key; value framed as in the
 *                               log, meta_rec.c), in meta_image_records'
 *                               order
 *   last batch, control: one SnapshotFooterRecord v0 (key: int16 0 |
 *                               int16 4; value: int16 version 0 | tagged
 *                               fields)
 *
 * Each batch's CreateTime is the time it was written. A reader checks
 * every CRC and that the footer ends the file: a snapshot without its
 * footer is torn. */
#include "cluster/meta_snap.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_image_recs.h"
#include "log/log_batch.h"
#include "proto/proto_gen.h"
#include "util/mem.h"

/* ---- writing ---- */

/* One batch being filled: the values back to back, their ends. */
typedef struct ms_batch_s {
    buf_t vals;
    size_t *ends;
    uint8_t (*keys)[4];
    int n, cap;
} ms_batch_t;

typedef struct ms_writer_s {
    buf_t *out;
    meta_snap_id_t id;
    int64_t next;   /* offset of the next record */
    int64_t now_ms;
    ms_batch_t b;
} ms_writer_t;

static void ms_batch_add(ms_batch_t *b, int16_t ctl_type)
{
    if (b->n == b->cap) {
        b->cap = b->cap ? 2 * b->cap : 64;
        b->ends = xrealloc(b->ends, (size_t)b->cap * sizeof(*b->ends));
        b->keys = xrealloc(b->keys, (size_t)b->cap * sizeof(*b->keys));
    }
    /* A control record's key: version 0, then its type. */
    uint8_t *k = b->keys[b->n];
    k[0] = 0;
    k[1] = 0;
    k[2] = (uint8_t)((uint16_t)ctl_type >> 8);
    k[3] = (uint8_t)ctl_type;
    b->ends[b->n++] = b->vals.len;
}

/* Appends the records collected as one batch and empties the batch. */
static void ms_flush(ms_writer_t *w, int control)
{
    ms_batch_t *b = &w->b;
    log_record_t *lr;
    log_batch_build_t opt;

    if (b->n == 0)
        return;
    lr = xcalloc((size_t)b->n, sizeof(*lr));
    for (int i = 0; i < b->n; i++) {
        size_t start = i ? b->ends[i - 1] : 0;
        lr[i].offset = i;
        lr[i].timestamp = w->now_ms;
        lr[i].key = control ? b->keys[i] : NULL;
        lr[i].key_len = control ? 4 : -1;
        lr[i].value = b->vals.p + start;
        lr[i].value_len = (int32_t)(b->ends[i] - start);
    }
    log_batch_build_init(&opt);
    opt.base_offset = w->next;
    opt.leader_epoch = w->id.epoch;
    opt.attributes = control ? LOG_BATCH_ATTR_CONTROL : 0;
    (void)log_batch_build(w->out, &opt, lr, b->n); /* uncompressed: cannot fail */
    w->next += b->n;
    free(lr);
    b->n = 0;
    b->vals.len = 0; /* keeps its memory for the next batch */
}

static void ms_on_rec(void *arg, const meta_rec_t *rec)
{
    ms_writer_t *w = arg;
    meta_rec_encode(rec, &w->b.vals);
    ms_batch_add(&w->b, -1);
    if (w->b.n == META_SNAP_BATCH_RECORDS)
        ms_flush(w, 0);
}

static void ms_header(ms_writer_t *w, int64_t last_ts, const meta_snap_ctl_t *ctl, int nctl)
{
    proto_rec_snapshot_header_record_t h;
    proto_rec_snapshot_header_record_init(&h);
    h.last_contained_log_timestamp = last_ts;
    proto_rec_snapshot_header_record_write(&h, 0, &w->b.vals);
    ms_batch_add(&w->b, PROTO_REC_SNAPSHOT_HEADER_RECORD);
    for (int i = 0; i < nctl; i++) {
        buf_put(&w->b.vals, ctl[i].value, ctl[i].len);
        ms_batch_add(&w->b, ctl[i].type);
    }
    ms_flush(w, 1);
}

void meta_snap_build(buf_t *out, meta_snap_id_t id, const meta_image_t *img, int64_t last_ts,
                     const meta_snap_ctl_t *ctl, int nctl, int64_t now_ms)
{
    ms_writer_t w;
    proto_rec_snapshot_footer_record_t f;

    memset(&w, 0, sizeof(w));
    w.out = out;
    w.id = id;
    w.now_ms = now_ms;
    buf_init(&w.b.vals);
    ms_header(&w, last_ts, ctl, nctl);
    meta_image_records(img, ms_on_rec, &w);
    ms_flush(&w, 0);
    proto_rec_snapshot_footer_record_init(&f);
    proto_rec_snapshot_footer_record_write(&f, 0, &w.b.vals);
    ms_batch_add(&w.b, PROTO_REC_SNAPSHOT_FOOTER_RECORD);
    ms_flush(&w, 1);
    buf_free(&w.b.vals);
    free(w.b.ends);
    free(w.b.keys);
}

/* ---- reading ---- */

typedef struct ms_reader_s {
    meta_image_t *img;
    meta_snap_info_t *info;
    int64_t next;     /* expected base offset of the next batch */
    int seen_header;
    int seen_footer;
    char *err;
    size_t errlen;
    arena_t arena;
} ms_reader_t;

static int ms_fail(ms_reader_t *r, const char *what)
{
    snprintf(r->err, r->errlen, "%s (at offset %lld)", what, (long long)r->next);
    return -1;
}

static int16_t ms_ctl_type(const log_record_t *rec)
{
    if (rec->key_len != 4 || rec->key[0] != 0 || rec->key[1] != 0)
        return -1;
    return (int16_t)((rec->key[2] << 8) | rec->key[3]);
}

/* A control record: the header first of all, the footer last. */
static int ms_control(ms_reader_t *r, const log_record_t *rec, int first_in_batch)
{
    int16_t type = ms_ctl_type(rec);
    proto_rec_snapshot_header_record_t h;

    if (!r->seen_header) {
        if (type != PROTO_REC_SNAPSHOT_HEADER_RECORD || rec->value_len < 0 ||
            proto_rec_snapshot_header_record_read(&h, NULL, rec->value, (size_t)rec->value_len,
                                                  &r->arena) != 0)
            return ms_fail(r, "the snapshot does not begin with a SnapshotHeaderRecord");
        r->seen_header = 1;
        if (r->info)
            r->info->last_ts = h.last_contained_log_timestamp;
        return 0;
    }
    if (type == PROTO_REC_SNAPSHOT_FOOTER_RECORD) {
        r->seen_footer = 1;
        return 0;
    }
    if (type == PROTO_REC_SNAPSHOT_HEADER_RECORD || first_in_batch)
        return ms_fail(r, "a control record out of place");
    if (r->info && r->info->on_ctl)
        r->info->on_ctl(r->info->arg, type, rec->value,
                        rec->value_len < 0 ? 0 : (size_t)rec->value_len);
    return 0;
}

static int ms_data(ms_reader_t *r, const log_record_t *rec)
{
    meta_rec_t mr;
    char why[256];
    int d;

    arena_reset(&r->arena);
    d = rec->value_len < 0 ? -1
                           : meta_rec_decode(&mr, rec->value, (size_t)rec->value_len, &r->arena);
    if (d < 0)
        return ms_fail(r, "an undecodable metadata record");
    if (d == 1)
        return 0; /* a type or version this node does not know: as in the log */
    if (meta_image_apply(r->img, &mr, why, sizeof(why)) < 0)
        return ms_fail(r, why);
    if (r->info)
        r->info->records++;
    return 0;
}

static int ms_batch(ms_reader_t *r, const uint8_t *p, size_t size, const log_batch_hdr_t *h)
{
    int control = LOG_BATCH_ATTR_IS_CONTROL(h->attributes);
    log_batch_iter_t *it;
    log_record_t rec;
    int rc = 0, k, i = 0;

    if (h->base_offset != r->next || h->records_count != h->last_offset_delta + 1)
        return ms_fail(r, "batch offsets do not follow on");
    if (!r->seen_header && !control)
        return ms_fail(r, "the snapshot does not begin with a SnapshotHeaderRecord");
    if (r->seen_footer)
        return ms_fail(r, "data after the SnapshotFooterRecord");
    it = log_batch_iter_new(p, size);
    if (!it)
        return ms_fail(r, "an unreadable batch");
    while (rc == 0 && (k = log_batch_iter_next(it, &rec)) == 1) {
        if (r->seen_footer)
            rc = ms_fail(r, "records after the SnapshotFooterRecord");
        else
            rc = control ? ms_control(r, &rec, i == 0 && r->seen_header) : ms_data(r, &rec);
        i++;
    }
    if (rc == 0 && k < 0)
        rc = ms_fail(r, "an unreadable record");
    log_batch_iter_free(it);
    r->next = h->base_offset + h->last_offset_delta + 1;
    return rc;
}

int meta_snap_parse(const uint8_t *p, size_t len, meta_image_t *img, meta_snap_info_t *info,
                    char *err, size_t errlen)
{
    ms_reader_t r;
    int rc = 0;

    memset(&r, 0, sizeof(r));
    r.img = img;
    r.info = info;
    r.err = err;
    r.errlen = errlen;
    if (info) {
        info->last_ts = -1;
        info->records = 0;
    }
    arena_init(&r.arena, 4096);
    while (rc == 0 && len > 0) {
        log_batch_hdr_t h;
        int64_t size = len >= LOG_BATCH_HDR_SIZE ? log_batch_total_size(p, len) : -1;
        if (size < LOG_BATCH_HDR_SIZE || (size_t)size > len || log_batch_hdr_parse(p, len, &h) < 0)
            rc = ms_fail(&r, "a torn batch");
        else if (!log_batch_crc_ok(p, (size_t)size))
            rc = ms_fail(&r, "a batch with a bad CRC");
        else
            rc = ms_batch(&r, p, (size_t)size, &h);
        size_t adv = size > 0 && (size_t)size <= len ? (size_t)size : len;
        p += adv;
        len -= adv;
    }
    if (rc == 0 && !r.seen_footer)
        rc = ms_fail(&r, "no SnapshotFooterRecord: the snapshot is torn");
    arena_destroy(&r.arena);
    return rc;
}

int meta_snap_header_ts_of(const uint8_t *p, size_t len, int64_t *ts)
{
    log_batch_hdr_t h;
    log_batch_iter_t *it;
    log_record_t rec;
    proto_rec_snapshot_header_record_t hr;
    arena_t arena;
    int rc = -1;
    int64_t size = len >= LOG_BATCH_HDR_SIZE ? log_batch_total_size(p, len) : -1;

    if (size < LOG_BATCH_HDR_SIZE || (size_t)size > len || log_batch_hdr_parse(p, len, &h) < 0 ||
        !LOG_BATCH_ATTR_IS_CONTROL(h.attributes) || !log_batch_crc_ok(p, (size_t)size))
        return -1;
    it = log_batch_iter_new(p, (size_t)size);
    arena_init(&arena, 256);
    if (it && log_batch_iter_next(it, &rec) == 1 && ms_ctl_type(&rec) == PROTO_REC_SNAPSHOT_HEADER_RECORD &&
        rec.value_len >= 0 &&
        proto_rec_snapshot_header_record_read(&hr, NULL, rec.value, (size_t)rec.value_len,
                                              &arena) == 0) {
        *ts = hr.last_contained_log_timestamp;
        rc = 0;
    }
    log_batch_iter_free(it);
    arena_destroy(&arena);
    return rc;
}
