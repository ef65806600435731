/* unit_fworld: see unit_fworld.h. */
#include "tests/unit/unit_fworld.h"

#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log_batch.h"
#include "log/log_int.h"
#include "tests/unit/unit_log.h"
#include "util/buf.h"
#include "util/fault.h"

static char fw_root_dir[256];

/* ---- the scratch root ---- */

int fw_root_init(const char *name)
{
    snprintf(fw_root_dir, sizeof(fw_root_dir), "/dev/shm/strand-%s-XXXXXX", name);
    if (mkdtemp(fw_root_dir))
        return 0;
    snprintf(fw_root_dir, sizeof(fw_root_dir), "/tmp/strand-%s-XXXXXX", name);
    return mkdtemp(fw_root_dir) ? 0 : -1;
}

const char *fw_root(void)
{
    return fw_root_dir;
}

void fw_root_remove(void)
{
    unit_rm_rf(fw_root_dir);
}

/* ---- batches ---- */

/* Record k's value: "b<id>r<k>" padded with dots to 40 bytes. */
static void fw_mk_value(buf_t *out, int k, const void *arg)
{
    char val[48];
    int n = snprintf(val, sizeof(val), "b%dr%d", *(const int *)arg, k);
    memset(val + n, '.', sizeof(val) - (size_t)n);
    buf_put(out, val, 40);
}

/* A v2 batch of nrec records (values "b<id>r<k>" padded to 40 bytes,
 * timestamps ts, ts+1, ...), base offset 0, optionally of producer FW_PID.
 * Caller frees. */
uint8_t *fw_mkbatch(int id, int nrec, int64_t ts, int32_t seq, size_t *len)
{
    unit_batch_t b = {nrec, NULL, ts, 1, seq >= 0 ? FW_PID : -1, (int16_t)(seq >= 0 ? 0 : -1),
                      seq, fw_mk_value, &id};
    return unit_batch(&b, len);
}

/* ---- the model: what was acknowledged ---- */

static void fw_free_model(fw_world_t *w)
{
    for (int i = 0; i < w->n; i++)
        free(w->m[i].bytes);
    w->n = 0;
}

/* Drops the model's batches wholly below lso or at or above end. */
void fw_model_trim(fw_world_t *w, int64_t lso, int64_t end)
{
    int j = 0;

    for (int i = 0; i < w->n; i++) {
        if (w->m[i].last < lso || w->m[i].base >= end) {
            free(w->m[i].bytes);
            continue;
        }
        w->m[j++] = w->m[i];
    }
    w->n = j;
    w->lso = lso;
    w->leo = end;
}

log_config_t fw_small_cfg(void)
{
    log_config_t c;

    log_config_defaults(&c);
    c.segment_index_bytes = 4096;
    c.segment_bytes = 700;       /* about three batches a segment */
    c.index_interval_bytes = 100; /* an index entry for nearly every batch */
    c.retention_ms = -1;
    return c;
}

log_open_args_t fw_open_args(int64_t rp, int64_t lso, int clean)
{
    log_open_args_t a = {"t", 0, rp, lso, -1, clean, FW_NOW};
    return a;
}

void fw_init(fw_world_t *w)
{
    static int seq;
    log_open_args_t a = fw_open_args(0, -1, 1);

    memset(w, 0, sizeof(*w));
    snprintf(w->dir, sizeof(w->dir), "%s/w-%d", fw_root(), seq++);
    w->cfg = fw_small_cfg();
    w->next_ts = FW_NOW - 1000000; /* recent: producers must not expire */
    w->log = log_open(w->dir, &w->cfg, &a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->log);
}

void fw_done(fw_world_t *w)
{
    if (w->log)
        log_free(w->log);
    w->log = NULL;
    fw_free_model(w);
    unit_rm_rf(w->dir);
}

/* ---- checks ---- */

uint8_t *fw_read_region(const log_read_result_t *r)
{
    uint8_t *p = malloc((size_t)r->len + 1);
    ssize_t n = pread(r->fd, p, (size_t)r->len, r->file_pos);
    CU_ASSERT_EQUAL(n, (ssize_t)r->len);
    return p;
}

/* The batch containing offset reads back as model batch b, byte for byte. */
static void fw_check_read(fw_world_t *w, int64_t offset, const fw_mbatch_t *b)
{
    log_read_result_t rr;
    uint8_t *p;

    CU_ASSERT_EQUAL_FATAL(log_read(w->log, offset, 1, 1, INT64_MAX, &rr), 0);
    CU_ASSERT_EQUAL(rr.first_offset, b->base);
    CU_ASSERT_EQUAL_FATAL(rr.len, (int32_t)b->len);
    p = fw_read_region(&rr);
    CU_ASSERT(memcmp(p, b->bytes, b->len) == 0);
    free(p);
    close(rr.fd);
}

/* Every entry of both indexes points where it says: an offset entry at the
 * batch whose last offset it names, a time entry at the batch with that
 * max timestamp. */
static void fw_check_indexes(log_t *log)
{
    for (int i = 0; i < log->nsegs; i++) {
        log_segment_t *seg = log->segs[i];
        int64_t end = i + 1 < log->nsegs ? log->segs[i + 1]->base_offset : log_end_offset(log);
        struct stat st;
        /* no partial batch on disk either */
        CU_ASSERT_EQUAL(fstat(seg->fd, &st), 0);
        CU_ASSERT_EQUAL(st.st_size, seg->size);
        CU_ASSERT(log_index_sane(&seg->oidx, end, seg->size));
        CU_ASSERT(log_index_sane(&seg->tidx, end, seg->size));
        /* the active segment can take index entries */
        if (i == log->nsegs - 1)
            CU_ASSERT(seg->oidx.writable && seg->tidx.writable);
        for (int32_t j = 0; j < seg->oidx.entries; j++) {
            int64_t off;
            int32_t pos;
            log_batch_hdr_t h;
            log_oidx_entry(&seg->oidx, j, &off, &pos);
            CU_ASSERT_EQUAL_FATAL(log_segment_read_hdr(seg, pos, &h), 1);
            CU_ASSERT_EQUAL(h.base_offset + h.last_offset_delta, off);
        }
        for (int32_t j = 0; j < seg->tidx.entries; j++) {
            int64_t ts, off, pos;
            log_batch_hdr_t h;
            log_tidx_entry(&seg->tidx, j, &ts, &off);
            CU_ASSERT_EQUAL_FATAL(log_segment_find(seg, off, &pos, &h), 1);
            CU_ASSERT_EQUAL(h.base_offset + h.last_offset_delta, off);
            CU_ASSERT_EQUAL(h.max_timestamp, ts);
        }
    }
}

/* The leader-epoch-checkpoint file says what the cache says, once the
 * entries below the log start are trimmed from it as the next open does
 * (retention only rewrites the file for that on a best-effort basis). */
void fw_check_epoch_file(log_t *log)
{
    char path[400];
    log_ecache_t fc;

    snprintf(path, sizeof(path), "%s", log->dir);
    CU_ASSERT_EQUAL_FATAL(log_ecache_init(&fc, path), 0);
    log_ecache_truncate_start(&fc, log->log_start_offset);
    CU_ASSERT_EQUAL(fc.n, log->epochs.n);
    for (int i = 0; i < fc.n && i < log->epochs.n; i++) {
        CU_ASSERT_EQUAL(fc.v[i].epoch, log->epochs.v[i].epoch);
        CU_ASSERT_EQUAL(fc.v[i].start_offset, log->epochs.v[i].start_offset);
    }
    log_ecache_free(&fc);
}

/* The snapshot files on disk are those the producer state lists, none
 * above the log end (it would describe offsets the log no longer has). */
static void fw_check_snapshots(log_t *log)
{
    DIR *d = opendir(log->dir);
    struct dirent *de;
    int n = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    while ((de = readdir(d)) != NULL) {
        int64_t off;
        int listed = 0;
        if (!log_segment_parse_name(de->d_name, ".snapshot", &off))
            continue;
        n++;
        for (int i = 0; i < log->pstate.nsnaps; i++)
            listed |= log->pstate.snaps[i] == off;
        CU_ASSERT(listed);
        CU_ASSERT(off <= log_end_offset(log));
    }
    closedir(d);
    CU_ASSERT_EQUAL(n, log->pstate.nsnaps);
}

/* The log holds exactly the model: offsets, bytes, timestamps, indexes. */
void fw_check_log(fw_world_t *w)
{
    log_read_result_t rr;

    fault_pause();
    CU_ASSERT_EQUAL_FATAL(log_end_offset(w->log), w->leo);
    CU_ASSERT_EQUAL(log_start_offset(w->log), w->lso);
    for (int i = 0; i < w->n; i++) {
        const fw_mbatch_t *b = &w->m[i];
        log_ts_offset_t to;
        fw_check_read(w, b->base > w->lso ? b->base : w->lso, b);
        fw_check_read(w, b->last, b);
        if (b->base >= w->lso) {
            CU_ASSERT_EQUAL(log_offset_for_timestamp(w->log, b->first_ts, &to), 0);
            CU_ASSERT_EQUAL(to.offset, b->base);
        }
    }
    CU_ASSERT_EQUAL(log_read(w->log, w->leo, 1000, 1, INT64_MAX, &rr), 0);
    CU_ASSERT_EQUAL(rr.len, 0);
    fw_check_indexes(w->log);
    fw_check_epoch_file(w->log);
    fw_check_snapshots(w->log);
    fault_resume();
}

/* Epochs and producer state after a reopen agree with the model. */
void fw_check_state(fw_world_t *w)
{
    int32_t last_epoch = -1;
    int64_t last_seq = -1, last_off = -1;
    log_producer_info_t pi;

    fault_pause();
    for (int i = 0; i < w->n; i++) {
        const fw_mbatch_t *b = &w->m[i];
        if (b->epoch >= 0 && b->epoch != last_epoch) {
            int64_t end;
            int32_t e;
            if (last_epoch >= 0) {
                log_epoch_end_offset(w->log, last_epoch, &end, &e);
                CU_ASSERT_EQUAL(e, last_epoch);
                CU_ASSERT_EQUAL(end, b->base > w->lso ? b->base : w->lso);
            }
            last_epoch = b->epoch;
        }
        if (b->last_seq >= 0) {
            last_seq = b->last_seq;
            last_off = b->last;
        }
    }
    CU_ASSERT_EQUAL(log_latest_epoch(w->log), last_epoch);
    if (last_seq >= 0) {
        CU_ASSERT_EQUAL(log_producer_lookup(w->log, FW_PID, &pi), 1);
        CU_ASSERT_EQUAL(pi.last_sequence, last_seq);
        CU_ASSERT_EQUAL(pi.last_offset, last_off);
    }
    fault_resume();
}

/* The producer's next sequence after the model's batches. */
void fw_resync_seq(fw_world_t *w)
{
    w->next_seq = 0;
    for (int i = 0; i < w->n; i++)
        if (w->m[i].last_seq >= 0)
            w->next_seq = w->m[i].last_seq + 1;
}

/* ---- operations on the world ---- */

/* Appends a batch of nrec records at epoch (producer batch if prod). On
 * success the model gains it; on failure the error must be 56 and the log
 * unchanged (or offline). Returns the error. */
int16_t fw_append(fw_world_t *w, int nrec, int32_t epoch, int prod)
{
    size_t len;
    int id = w->next_id++;
    uint8_t *b = fw_mkbatch(id, nrec, w->next_ts, prod ? w->next_seq : -1, &len);
    log_append_result_t res;
    int16_t err = log_append(w->log, b, len, epoch, FW_NOW, &res);

    w->next_ts += nrec;
    if (err == 0) {
        fw_mbatch_t *m = &w->m[w->n++];
        CU_ASSERT_FATAL(w->n <= FW_MAX_BATCHES);
        CU_ASSERT_EQUAL(res.base_offset, w->leo);
        CU_ASSERT_EQUAL(res.duplicate, 0);
        m->base = res.base_offset;
        m->last = res.last_offset;
        m->first_ts = w->next_ts - nrec;
        m->epoch = epoch;
        m->last_seq = prod ? w->next_seq + nrec - 1 : -1;
        m->bytes = b;
        m->len = len;
        w->leo = m->last + 1;
        if (prod)
            w->next_seq += nrec;
        return 0;
    }
    free(b);
    CU_ASSERT_EQUAL(err, 56);
    CU_ASSERT_EQUAL(log_end_offset(w->log), w->leo);
    return err;
}

/* The epoch a leader appends with: the latest known, or 0. */
static int32_t fw_epoch(const fw_world_t *w)
{
    int32_t e = log_latest_epoch(w->log);
    return e < 0 ? 0 : e;
}

/* After the fault is gone: a log that is not offline must take appends
 * again; an offline one must refuse everything. */
void fw_check_alive(fw_world_t *w)
{
    log_read_result_t rr;

    if (!log_offline(w->log)) {
        fw_check_log(w);
        CU_ASSERT_EQUAL(fw_append(w, 2, fw_epoch(w), 1), 0);
        fw_check_log(w);
        return;
    }
    {
        size_t len;
        uint8_t *b = fw_mkbatch(999, 1, 1, -1, &len);
        log_append_result_t res;
        CU_ASSERT_EQUAL(log_append(w->log, b, len, 0, FW_NOW, &res), 56);
        free(b);
    }
    CU_ASSERT_EQUAL(log_read(w->log, w->lso, 100, 1, INT64_MAX, &rr), 56);
    CU_ASSERT_EQUAL(log_flush(w->log, FW_NOW), -1);
    CU_ASSERT_EQUAL(log_roll(w->log, FW_NOW), 56);
    CU_ASSERT_EQUAL(log_end_offset(w->log), w->leo);
}

/* Reopens the log as the log manager would after a clean close, or after
 * a crash (nothing written; the checkpointed offsets as they were), and
 * checks it holds exactly what was acknowledged. */
void fw_reopen(fw_world_t *w, int crash)
{
    int64_t rp = log_recovery_point(w->log), lso = log_start_offset(w->log);
    log_open_args_t a;
    int clean = 0;

    if (crash)
        log_free(w->log);
    else
        clean = log_close(w->log) == 0;
    w->log = NULL;
    a = fw_open_args(rp, lso, clean);
    w->log = log_open(w->dir, &w->cfg, &a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->log);
    log_set_high_watermark(w->log, log_end_offset(w->log));
    fw_check_log(w);
    fw_check_state(w);
    /* the producer's next batch is in sequence */
    CU_ASSERT_EQUAL(fw_append(w, 1, fw_epoch(w), 1), 0);
    fw_check_log(w);
}