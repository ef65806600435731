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

void meta_snap_recs_init(meta_snap_recs_t *recs)
{
    memset(recs, 0, sizeof(*recs));
    buf_init(&recs->vals);
}

void meta_snap_recs_free(meta_snap_recs_t *recs)
{
    buf_free(&recs->vals);
    free(recs->ends);
    memset(recs, 0, sizeof(*recs));
}

static void ms_recs_end(meta_snap_recs_t *recs)
{
    if (recs->n == recs->cap) {
        recs->cap = recs->cap ? 2 * recs->cap : 256;
        recs->ends = xrealloc(recs->ends, (size_t)recs->cap * sizeof(*recs->ends));
    }
    recs->ends[recs->n++] = recs->vals.len;
}

static void ms_on_rec(void *arg, const meta_rec_t *rec)
{
    meta_snap_recs_t *recs = arg;
    meta_rec_encode(rec, &recs->vals);
    ms_recs_end(recs);
}

void meta_snap_collect(meta_snap_recs_t *recs, const meta_image_t *img)
{
    meta_image_records(img, ms_on_rec, recs);
}

/* Appends records [from, to) of vals/ends as one batch at offset base:
 * control records get the key (version 0, type types[i]). */
static void ms_batch_out(buf_t *out, meta_snap_id_t id, int64_t base, const uint8_t *vals,
                         const size_t *ends, const int16_t *types, int from, int to,
                         int64_t now_ms)
{
    int n = to - from;
    log_record_t *lr = xcalloc((size_t)n, sizeof(*lr));
    uint8_t(*keys)[4] = types ? xcalloc((size_t)n, sizeof(*keys)) : NULL;
    log_batch_build_t opt;

    for (int i = 0; i < n; i++) {
        size_t start = from + i ? ends[from + i - 1] : 0;
        lr[i].offset = i;
        lr[i].timestamp = now_ms;
        lr[i].key_len = -1;
        if (keys) {
            keys[i][2] = (uint8_t)((uint16_t)types[from + i] >> 8);
            keys[i][3] = (uint8_t)types[from + i];
            lr[i].key = keys[i];
            lr[i].key_len = 4;
        }
        lr[i].value = vals + start;
        lr[i].value_len = (int32_t)(ends[from + i] - start);
    }
    log_batch_build_init(&opt);
    opt.base_offset = base;
    opt.leader_epoch = id.epoch;
    opt.attributes = types ? LOG_BATCH_ATTR_CONTROL : 0;
    (void)log_batch_build(out, &opt, lr, n); /* uncompressed: cannot fail */
    free(keys);
    free(lr);
}

/* The header batch: SnapshotHeaderRecord, then ctl[0..nctl). */
static void ms_header(buf_t *out, meta_snap_id_t id, int64_t last_ts, const meta_snap_ctl_t *ctl,
                      int nctl, int64_t now_ms)
{
    proto_rec_snapshot_header_record_t h;
    buf_t vals;
    size_t *ends = xmalloc((size_t)(nctl + 1) * sizeof(*ends));
    int16_t *types = xmalloc((size_t)(nctl + 1) * sizeof(*types));

    buf_init(&vals);
    proto_rec_snapshot_header_record_init(&h);
    h.last_contained_log_timestamp = last_ts;
    proto_rec_snapshot_header_record_write(&h, 0, &vals);
    ends[0] = vals.len;
    types[0] = PROTO_REC_SNAPSHOT_HEADER_RECORD;
    for (int i = 0; i < nctl; i++) {
        buf_put(&vals, ctl[i].value, ctl[i].len);
        ends[i + 1] = vals.len;
        types[i + 1] = ctl[i].type;
    }
    ms_batch_out(out, id, 0, vals.p, ends, types, 0, nctl + 1, now_ms);
    buf_free(&vals);
    free(types);
    free(ends);
}

static void ms_footer(buf_t *out, meta_snap_id_t id, int64_t base, int64_t now_ms)
{
    proto_rec_snapshot_footer_record_t f;
    int16_t type = PROTO_REC_SNAPSHOT_FOOTER_RECORD;
    buf_t vals;
    size_t end;

    buf_init(&vals);
    proto_rec_snapshot_footer_record_init(&f);
    proto_rec_snapshot_footer_record_write(&f, 0, &vals);
    end = vals.len;
    ms_batch_out(out, id, base, vals.p, &end, &type, 0, 1, now_ms);
    buf_free(&vals);
}

void meta_snap_frame(buf_t *out, meta_snap_id_t id, const meta_snap_recs_t *recs,
                     int64_t last_ts, const meta_snap_ctl_t *ctl, int nctl, int64_t now_ms)
{
    int64_t base = nctl + 1;

    ms_header(out, id, last_ts, ctl, nctl, now_ms);
    for (int from = 0; from < recs->n; from += META_SNAP_BATCH_RECORDS) {
        int to = recs->n - from > META_SNAP_BATCH_RECORDS ? from + META_SNAP_BATCH_RECORDS
                                                           : recs->n;
        ms_batch_out(out, id, base, recs->vals.p, recs->ends, NULL, from, to, now_ms);
        base += to - from;
    }
    ms_footer(out, id, base, now_ms);
}

void meta_snap_build(buf_t *out, meta_snap_id_t id, const meta_image_t *img, int64_t last_ts,
                     const meta_snap_ctl_t *ctl, int nctl, int64_t now_ms)
{
    meta_snap_recs_t recs;
    meta_snap_recs_init(&recs);
    meta_snap_collect(&recs, img);
    meta_snap_frame(out, id, &recs, last_ts, ctl, nctl, now_ms);
    meta_snap_recs_free(&recs);
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

int meta_snap_header_ctl_of(const uint8_t *p, size_t len, meta_snap_info_t *info)
{
    log_batch_iter_t *it;
    log_record_t rec;
    int64_t ts;

    if (meta_snap_header_ts_of(p, len, &ts) < 0)
        return -1;
    info->last_ts = ts;
    it = log_batch_iter_new(p, (size_t)log_batch_total_size(p, len));
    if (!it)
        return -1;
    if (log_batch_iter_next(it, &rec) == 1) /* the header */
        while (log_batch_iter_next(it, &rec) == 1)
            if (info->on_ctl && rec.value_len >= 0)
                info->on_ctl(info->arg, ms_ctl_type(&rec), rec.value, (size_t)rec.value_len);
    log_batch_iter_free(it);
    return 0;
}
