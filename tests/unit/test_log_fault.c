/* Fault injection in the partition log (util/fault.h), SQLite's way: each
 * scenario (appends with rolls and a new leader epoch, explicit rolls,
 * flushes, epoch assignment, retention, DeleteRecords, truncation, close,
 * open with recovery) is run once to count its I/O calls, then again for
 * N = 1, 2, ... with the Nth call failing, until a run injects nothing.
 * Each run checks:
 *   - the error each operation returned (KAFKA_STORAGE_ERROR 56 or -1),
 *     and that a failed operation left the log as it was: LEO, every batch
 *     byte for byte, segment files no longer than their batches, every
 *     offset and time index entry, the epoch cache against its file, the
 *     snapshot files against the producer state;
 *   - that the log works again once the disk does (an append succeeds), or
 *     that it is offline and refuses appends, reads, rolls and flushes;
 *   - that after a reopen (clean close, or a crash: the log freed without
 *     writing anything) the log holds exactly the batches that were
 *     acknowledged, in order, whole, with consistent indexes, epochs and
 *     producer state (the producer's next batch is accepted).
 * The loops run with EIO, ENOSPC, short writes, bursts of three failures
 * (the undo fails too, then the disk recovers) and a dying disk (every call
 * fails from the Nth on). The log manager's start, checkpoints, close,
 * create and delete get the same treatment, and a few regression tests pin
 * single guarantees (fsyncgate, a roll's leftover segment, index syncs).
 * ASan checks for leaks and bad accesses along every failure path. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "log/log_int.h"
#include "log/log_mgr.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_log.h"
#include "util/buf.h"
#include "util/fault.h"
#include "util/logging.h"

#define NOW 1700000000000LL
#define PID 4242
#define MAX_BATCHES 64
#define MAX_RUNS 2000 /* a scenario making more calls than this is a bug */

static char tmpdir[256];

/* ---- batches ---- */

/* Record k's value: "b<id>r<k>" padded with dots to 40 bytes. */
static void mk_value(buf_t *out, int k, const void *arg)
{
    char val[48];
    int n = snprintf(val, sizeof(val), "b%dr%d", *(const int *)arg, k);
    memset(val + n, '.', sizeof(val) - (size_t)n);
    buf_put(out, val, 40);
}

/* A v2 batch of nrec records (values "b<id>r<k>" padded to 40 bytes,
 * timestamps ts, ts+1, ...), base offset 0, optionally of producer PID.
 * Caller frees. */
static uint8_t *mkbatch(int id, int nrec, int64_t ts, int32_t seq, size_t *len)
{
    unit_batch_t b = {nrec, NULL, ts, 1, seq >= 0 ? PID : -1, (int16_t)(seq >= 0 ? 0 : -1),
                      seq, mk_value, &id};
    return unit_batch(&b, len);
}

/* ---- the model: what was acknowledged ---- */

typedef struct mbatch_s {
    int64_t base, last;
    int64_t first_ts;
    int32_t epoch;
    int32_t last_seq; /* -1: not a producer batch */
    uint8_t *bytes;   /* as stored, base offset and epoch set */
    size_t len;
} mbatch_t;

typedef struct world_s {
    char dir[320];
    log_config_t cfg;
    log_t *log;
    mbatch_t m[MAX_BATCHES];
    int n;
    int64_t lso;      /* expected log start offset */
    int64_t leo;      /* expected log end offset */
    int next_id;
    int64_t next_ts;
    int32_t next_seq; /* of producer PID */
} world_t;

static void w_free_model(world_t *w)
{
    for (int i = 0; i < w->n; i++)
        free(w->m[i].bytes);
    w->n = 0;
}

/* Drops the model's batches wholly below lso or at or above end. */
static void w_model_trim(world_t *w, int64_t lso, int64_t end)
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

static log_config_t small_cfg(void)
{
    log_config_t c;

    log_config_defaults(&c);
    c.segment_index_bytes = 4096;
    c.segment_bytes = 700;       /* about three batches a segment */
    c.index_interval_bytes = 100; /* an index entry for nearly every batch */
    c.retention_ms = -1;
    return c;
}

static log_open_args_t open_args(int64_t rp, int64_t lso, int clean)
{
    log_open_args_t a = {"t", 0, rp, lso, -1, clean, NOW};
    return a;
}

static void w_init(world_t *w)
{
    static int seq;
    log_open_args_t a = open_args(0, -1, 1);

    memset(w, 0, sizeof(*w));
    snprintf(w->dir, sizeof(w->dir), "%s/w-%d", tmpdir, seq++);
    w->cfg = small_cfg();
    w->next_ts = NOW - 1000000; /* recent: producers must not expire */
    w->log = log_open(w->dir, &w->cfg, &a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->log);
}

static void w_done(world_t *w)
{
    if (w->log)
        log_free(w->log);
    w->log = NULL;
    w_free_model(w);
    unit_rm_rf(w->dir);
}

/* ---- checks ---- */

static uint8_t *read_region(const log_read_result_t *r)
{
    uint8_t *p = malloc((size_t)r->len + 1);
    ssize_t n = pread(r->fd, p, (size_t)r->len, r->file_pos);
    CU_ASSERT_EQUAL(n, (ssize_t)r->len);
    return p;
}

/* The batch containing offset reads back as model batch b, byte for byte. */
static void check_read(world_t *w, int64_t offset, const mbatch_t *b)
{
    log_read_result_t rr;
    uint8_t *p;

    CU_ASSERT_EQUAL_FATAL(log_read(w->log, offset, 1, 1, INT64_MAX, &rr), 0);
    CU_ASSERT_EQUAL(rr.first_offset, b->base);
    CU_ASSERT_EQUAL_FATAL(rr.len, (int32_t)b->len);
    p = read_region(&rr);
    CU_ASSERT(memcmp(p, b->bytes, b->len) == 0);
    free(p);
    close(rr.fd);
}

/* Every entry of both indexes points where it says: an offset entry at the
 * batch whose last offset it names, a time entry at the batch with that
 * max timestamp. */
static void check_indexes(log_t *log)
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
static void check_epoch_file(log_t *log)
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
static void check_snapshots(log_t *log)
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
static void check_log(world_t *w)
{
    log_read_result_t rr;

    fault_pause();
    CU_ASSERT_EQUAL_FATAL(log_end_offset(w->log), w->leo);
    CU_ASSERT_EQUAL(log_start_offset(w->log), w->lso);
    for (int i = 0; i < w->n; i++) {
        const mbatch_t *b = &w->m[i];
        log_ts_offset_t to;
        check_read(w, b->base > w->lso ? b->base : w->lso, b);
        check_read(w, b->last, b);
        if (b->base >= w->lso) {
            CU_ASSERT_EQUAL(log_offset_for_timestamp(w->log, b->first_ts, &to), 0);
            CU_ASSERT_EQUAL(to.offset, b->base);
        }
    }
    CU_ASSERT_EQUAL(log_read(w->log, w->leo, 1000, 1, INT64_MAX, &rr), 0);
    CU_ASSERT_EQUAL(rr.len, 0);
    check_indexes(w->log);
    check_epoch_file(w->log);
    check_snapshots(w->log);
    fault_resume();
}

/* Epochs and producer state after a reopen agree with the model. */
static void check_state(world_t *w)
{
    int32_t last_epoch = -1;
    int64_t last_seq = -1, last_off = -1;
    log_producer_info_t pi;

    fault_pause();
    for (int i = 0; i < w->n; i++) {
        const mbatch_t *b = &w->m[i];
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
        CU_ASSERT_EQUAL(log_producer_lookup(w->log, PID, &pi), 1);
        CU_ASSERT_EQUAL(pi.last_sequence, last_seq);
        CU_ASSERT_EQUAL(pi.last_offset, last_off);
    }
    fault_resume();
}

/* The producer's next sequence after the model's batches. */
static void w_resync_seq(world_t *w)
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
static int16_t w_append(world_t *w, int nrec, int32_t epoch, int prod)
{
    size_t len;
    int id = w->next_id++;
    uint8_t *b = mkbatch(id, nrec, w->next_ts, prod ? w->next_seq : -1, &len);
    log_append_result_t res;
    int16_t err = log_append(w->log, b, len, epoch, NOW, &res);

    w->next_ts += nrec;
    if (err == 0) {
        mbatch_t *m = &w->m[w->n++];
        CU_ASSERT_FATAL(w->n <= MAX_BATCHES);
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
static int32_t w_epoch(const world_t *w)
{
    int32_t e = log_latest_epoch(w->log);
    return e < 0 ? 0 : e;
}

/* After the fault is gone: a log that is not offline must take appends
 * again; an offline one must refuse everything. */
static void w_check_alive(world_t *w)
{
    log_read_result_t rr;

    if (!log_offline(w->log)) {
        check_log(w);
        CU_ASSERT_EQUAL(w_append(w, 2, w_epoch(w), 1), 0);
        check_log(w);
        return;
    }
    {
        size_t len;
        uint8_t *b = mkbatch(999, 1, 1, -1, &len);
        log_append_result_t res;
        CU_ASSERT_EQUAL(log_append(w->log, b, len, 0, NOW, &res), 56);
        free(b);
    }
    CU_ASSERT_EQUAL(log_read(w->log, w->lso, 100, 1, INT64_MAX, &rr), 56);
    CU_ASSERT_EQUAL(log_flush(w->log, NOW), -1);
    CU_ASSERT_EQUAL(log_roll(w->log, NOW), 56);
    CU_ASSERT_EQUAL(log_end_offset(w->log), w->leo);
}

/* Reopens the log as the log manager would after a clean close, or after
 * a crash (nothing written; the checkpointed offsets as they were), and
 * checks it holds exactly what was acknowledged. */
static void w_reopen(world_t *w, int crash)
{
    int64_t rp = log_recovery_point(w->log), lso = log_start_offset(w->log);
    log_open_args_t a;
    int clean = 0;

    if (crash)
        log_free(w->log);
    else
        clean = log_close(w->log) == 0;
    w->log = NULL;
    a = open_args(rp, lso, clean);
    w->log = log_open(w->dir, &w->cfg, &a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->log);
    log_set_high_watermark(w->log, log_end_offset(w->log));
    check_log(w);
    check_state(w);
    /* the producer's next batch is in sequence */
    CU_ASSERT_EQUAL(w_append(w, 1, w_epoch(w), 1), 0);
    check_log(w);
}

/* ---- the fault loop ---- */

typedef struct scenario_s {
    const char *name;
    void (*setup)(world_t *w);  /* runs unarmed */
    void (*run)(world_t *w);    /* runs armed; checks each operation */
} scenario_t;

typedef enum {
    MODE_NTH_EIO,
    MODE_NTH_ENOSPC,
    MODE_SHORT_WRITE,
    MODE_BURST,
    MODE_DYING
} fault_mode_t;

static const char *const mode_names[] = {"fail Nth call (EIO)", "fail Nth call (ENOSPC)",
                                         "short Nth write", "calls N to N+2 (burst)",
                                         "every call from the Nth"};

static void arm(fault_mode_t mode, int64_t n)
{
    switch (mode) {
    case MODE_NTH_EIO:
        fault_fail_nth(FAULT_ANY, n, EIO);
        break;
    case MODE_NTH_ENOSPC:
        fault_fail_nth(FAULT_ANY, n, ENOSPC);
        break;
    case MODE_SHORT_WRITE:
        fault_short_write_nth(n, ENOSPC);
        break;
    case MODE_BURST: {
        /* the failure, the undo failing too, then the disk recovers */
        fault_rule_t r = {.op = FAULT_ANY, .nth = n, .count = 3, .err = EIO};
        fault_add(&r);
        break;
    }
    case MODE_DYING:
        fault_fail_after(FAULT_ANY, n - 1, EIO);
        break;
    }
}

/* Runs the scenario for N = 1.. until a run injects no fault; returns the
 * number of I/O calls of a clean run (> 0, or the scenario tested nothing). */
static int64_t run_faults(const scenario_t *sc, fault_mode_t mode)
{
    unsigned before = CU_get_number_of_failures();
    world_t w;
    int64_t calls, n;

    w_init(&w);
    sc->setup(&w);
    fault_count_calls();
    sc->run(&w);
    calls = mode == MODE_SHORT_WRITE ? fault_calls(FAULT_WRITE) : fault_calls(FAULT_ANY);
    fault_reset();
    w_done(&w);
    for (n = 1; n <= MAX_RUNS; n++) {
        int64_t hit;
        w_init(&w);
        sc->setup(&w);
        arm(mode, n);
        sc->run(&w);
        hit = fault_injected();
        fault_reset();
        if (hit) {
            w_check_alive(&w);
            w_reopen(&w, (int)(n % 2));
        }
        w_done(&w);
        if (CU_get_number_of_failures() > before) {
            fprintf(stderr, "\n  %s: %s: first failure at N = %lld of %lld\n", sc->name,
                    mode_names[mode], (long long)n, (long long)calls);
            break;
        }
        if (!hit)
            break;
    }
    CU_ASSERT(calls > 0);
    CU_ASSERT(n <= MAX_RUNS);
    if (getenv("FAULT_VERBOSE"))
        fprintf(stderr, "\n    %s, %s: %lld calls, %lld runs", sc->name, mode_names[mode],
                (long long)calls, (long long)n);
    return calls;
}

/* ---- scenarios ---- */

static void setup_none(world_t *w)
{
    (void)w;
}

static void setup_some(world_t *w)
{
    for (int i = 0; i < 12; i++)
        CU_ASSERT_EQUAL_FATAL(w_append(w, 2, 0, i % 2), 0);
    CU_ASSERT_EQUAL_FATAL(log_flush(w->log, NOW), 0);
}

/* Appends that roll (segment, snapshot and index files), with a new
 * leader epoch half way (epoch checkpoint), producer and plain batches. */
static void run_appends(world_t *w)
{
    for (int i = 0; i < 10; i++)
        if (w_append(w, 1 + i % 3, i < 5 ? 0 : 1, i % 2) == 0 && !log_offline(w->log))
            check_log(w);
}

static void run_rolls(world_t *w)
{
    for (int i = 0; i < 3; i++) {
        int16_t err = log_roll(w->log, NOW);
        CU_ASSERT(err == 0 || err == 56);
        if (log_offline(w->log))
            return;
        check_log(w);
        w_append(w, 1, 0, 1);
    }
}

static void run_flush(world_t *w)
{
    for (int i = 0; i < 3; i++) {
        int64_t rp = log_recovery_point(w->log);
        w_append(w, 2, 0, 1);
        if (log_flush(w->log, NOW) < 0) {
            /* fsyncgate: never success later, nothing claimed durable */
            CU_ASSERT(log_offline(w->log));
            CU_ASSERT_EQUAL(log_recovery_point(w->log), rp);
            CU_ASSERT_EQUAL(log_flush(w->log, NOW), -1);
            return;
        }
        CU_ASSERT_EQUAL(log_recovery_point(w->log), w->leo);
        if (log_flush_rolled(w->log) < 0) {
            CU_ASSERT(log_offline(w->log));
            return;
        }
    }
}

static void run_epochs(world_t *w)
{
    for (int32_t e = 1; e <= 3; e++) {
        int32_t before = log_latest_epoch(w->log);
        int rc = log_epoch_assign(w->log, e, w->leo);
        int32_t now = log_latest_epoch(w->log);
        /* failed: as before, or (only the directory fsync failed) as the
         * file already says; the file check below tells which */
        CU_ASSERT(rc == 0 ? now == e : now == before || now == e);
        fault_pause();
        check_epoch_file(w->log);
        fault_resume();
        if (rc == 0)
            w_append(w, 1, e, 0);
    }
}

static void setup_retention(world_t *w)
{
    setup_some(w);
    log_set_high_watermark(w->log, w->leo);
}

static void run_retention(world_t *w)
{
    int segs = log_segment_count(w->log);
    int n;

    w->log->cfg.retention_bytes = 0;
    n = log_retention(w->log, NOW);
    CU_ASSERT(n == -1 || n == segs - 1);
    /* whatever was deleted, the log starts at its first segment */
    CU_ASSERT_EQUAL(log_start_offset(w->log), w->log->segs[0]->base_offset);
    w_model_trim(w, log_start_offset(w->log), w->leo);
    check_log(w);
    if (n == -1) {
        fault_disarm();
        n = log_retention(w->log, NOW);
        CU_ASSERT(n >= 1);
        w_model_trim(w, log_start_offset(w->log), w->leo);
    }
    CU_ASSERT_EQUAL(log_segment_count(w->log), 1);
}

static void run_delete_records(world_t *w)
{
    int64_t to = w->m[w->n / 2].base + 1; /* inside a batch of a later segment */

    CU_ASSERT_EQUAL(log_delete_records(w->log, to), 0);
    CU_ASSERT_EQUAL(log_start_offset(w->log), to);
    w_model_trim(w, to, w->leo);
    check_log(w);
}

/* Truncation cannot be undone half way: either it is whole, or the log is
 * offline and reopens as some prefix of the model, at least as long as
 * asked for. */
static void truncate_to(world_t *w, int64_t to)
{
    int64_t old_leo = w->leo, rp, lso, leo;
    log_open_args_t a;
    int rc = log_truncate_to(w->log, to), boundary = to == w->lso;

    if (rc == 0) {
        w_model_trim(w, w->lso, to);
        w_resync_seq(w);
        check_log(w);
        return;
    }
    CU_ASSERT(log_offline(w->log));
    /* how far did it get? reopen as after a crash */
    rp = log_recovery_point(w->log);
    lso = log_start_offset(w->log);
    a = open_args(rp, lso, 0);
    fault_disarm();
    log_free(w->log);
    w->log = log_open(w->dir, &w->cfg, &a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->log);
    leo = log_end_offset(w->log);
    CU_ASSERT(leo >= to && leo <= old_leo);
    for (int i = 0; i < w->n; i++)
        boundary |= w->m[i].last + 1 == leo;
    CU_ASSERT(boundary);
    w_model_trim(w, w->lso, leo);
    w_resync_seq(w);
    log_set_high_watermark(w->log, leo);
    check_log(w);
    check_state(w);
}

static void run_truncate(world_t *w)
{
    truncate_to(w, w->m[w->n / 2].base);
}

static void run_truncate_all(world_t *w)
{
    truncate_to(w, w->lso);
}

/* A clean close that fails must leave a log the next open recovers. */
static void run_close(world_t *w)
{
    int rc = log_close(w->log);
    log_open_args_t a = open_args(0, w->lso, rc == 0);

    w->log = NULL;
    fault_disarm();
    w->log = log_open(w->dir, &w->cfg, &a);
    CU_ASSERT_PTR_NOT_NULL_FATAL(w->log);
    check_log(w);
    check_state(w);
}

/* Opening a log that needs recovery (a torn tail after a crash): a failed
 * open must leave the files so that the next open still recovers every
 * whole batch. */
static void setup_torn(world_t *w)
{
    char path[400];
    int fd;
    int64_t active;

    setup_some(w);
    w_append(w, 3, 0, 1);
    active = log_active(w->log)->base_offset;
    log_free(w->log);
    w->log = NULL;
    snprintf(path, sizeof(path), "%s/%020lld.log", w->dir, (long long)active);
    fd = open(path, O_WRONLY | O_APPEND);
    CU_ASSERT_FATAL(fd >= 0);
    CU_ASSERT_EQUAL(write(fd, w->m[0].bytes, 30), 30); /* a torn batch */
    close(fd);
}

static void run_open(world_t *w)
{
    log_open_args_t a = open_args(0, 0, 0);

    w->log = log_open(w->dir, &w->cfg, &a);
    if (!w->log) {
        fault_disarm();
        w->log = log_open(w->dir, &w->cfg, &a);
        CU_ASSERT_PTR_NOT_NULL_FATAL(w->log);
    }
    log_set_high_watermark(w->log, log_end_offset(w->log));
    check_log(w);
    check_state(w);
}

static const scenario_t scenarios[] = {
    {"append and roll", setup_none, run_appends},
    {"append to a log with data", setup_some, run_appends},
    {"roll", setup_some, run_rolls},
    {"flush", setup_none, run_flush},
    {"leader epochs", setup_some, run_epochs},
    {"retention", setup_retention, run_retention},
    {"delete records", setup_retention, run_delete_records},
    {"truncate", setup_some, run_truncate},
    {"truncate everything", setup_some, run_truncate_all},
    {"close", setup_some, run_close},
    {"open with recovery", setup_torn, run_open},
};

#define NSCENARIOS ((int)(sizeof(scenarios) / sizeof(scenarios[0])))

static void run_all(fault_mode_t mode)
{
    unsigned before = CU_get_number_of_failures();

    for (int i = 0; i < NSCENARIOS; i++) {
        if (mode == MODE_SHORT_WRITE && scenarios[i].run != run_appends &&
            scenarios[i].run != run_flush)
            continue;
        run_faults(&scenarios[i], mode);
        if (CU_get_number_of_failures() > before)
            return;
    }
}

static void test_nth_eio(void)
{
    run_all(MODE_NTH_EIO);
}

static void test_nth_enospc(void)
{
    run_all(MODE_NTH_ENOSPC);
}

static void test_short_write(void)
{
    run_all(MODE_SHORT_WRITE);
}

static void test_burst(void)
{
    run_all(MODE_BURST);
}

static void test_dying_disk(void)
{
    run_all(MODE_DYING);
}

/* Regression: a roll whose new segment could not be created nor removed
 * leaves an empty <LEO>.log on disk. Appending on to the old segment would
 * put batches behind that file's base, which the next open would lose: the
 * log must go offline instead. */
static void test_roll_leftover(void)
{
    world_t w;
    char path[400];

    w_init(&w);
    CU_ASSERT_EQUAL(w_append(&w, 2, 0, 1), 0);
    /* truncate calls: the two index trims of the seal, then the new
     * segment's index; unlink calls: .index, .timeindex, .log */
    fault_fail_nth(FAULT_TRUNCATE, 3, EIO);
    fault_fail_nth(FAULT_UNLINK, 3, EIO);
    CU_ASSERT_EQUAL(log_roll(w.log, NOW), 56);
    CU_ASSERT_EQUAL(fault_injected(), 2);
    fault_reset();
    snprintf(path, sizeof(path), "%s/%020lld.log", w.dir, (long long)w.leo);
    CU_ASSERT_EQUAL(access(path, F_OK), 0);
    CU_ASSERT(log_offline(w.log));
    w_check_alive(&w);
    w_reopen(&w, 1);
    w_done(&w);
}

/* ---- the log manager: checkpoint files and close ---- */

static const char *const ckpt_names[] = {"recovery-point-offset-checkpoint",
                                         "log-start-offset-checkpoint",
                                         "replication-offset-checkpoint"};

typedef struct mworld_s {
    char dir[320];
    const char *dirs[1];
    log_mgr_config_t mc;
    log_mgr_t *mgr;
    int64_t leo[2];
} mworld_t;

static void mw_open(mworld_t *mw)
{
    char err[256];

    mw->mgr = log_mgr_open(&mw->mc, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mw->mgr);
}

/* Two partitions with data, one of them flushed, checkpoints written. */
static void mw_init(mworld_t *mw)
{
    static int seq;
    uint8_t id[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

    memset(mw, 0, sizeof(*mw));
    snprintf(mw->dir, sizeof(mw->dir), "%s/m-%d", tmpdir, seq++);
    mw->dirs[0] = mw->dir;
    mw->mc.dirs = mw->dirs;
    mw->mc.ndirs = 1;
    mw->mc.node_id = 1;
    mw->mc.defaults = small_cfg();
    mw_open(mw);
    for (int p = 0; p < 2; p++) {
        log_t *log = log_mgr_create(mw->mgr, "t", p, id, NULL, NOW);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        for (int i = 0; i < 4 + p; i++) {
            size_t len;
            uint8_t *b = mkbatch(i, 2, 1000 + 10 * i, -1, &len);
            log_append_result_t res;
            CU_ASSERT_EQUAL(log_append(log, b, len, 0, NOW, &res), 0);
            free(b);
        }
        log_set_high_watermark(log, log_end_offset(log));
        mw->leo[p] = log_end_offset(log);
    }
    CU_ASSERT_EQUAL(log_mgr_checkpoint(mw->mgr), 0);
    CU_ASSERT_EQUAL(log_flush(log_mgr_get(mw->mgr, "t", 1), NOW), 0);
}

/* After a reopen each partition has its data, every batch whole. */
static void mw_check_reopen(mworld_t *mw)
{
    mw_open(mw);
    for (int p = 0; p < 2; p++) {
        log_t *log = log_mgr_get(mw->mgr, "t", p);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        CU_ASSERT_EQUAL(log_end_offset(log), mw->leo[p]);
        for (int64_t off = 0; off < mw->leo[p];) {
            log_read_result_t rr;
            uint8_t *b;
            CU_ASSERT_EQUAL_FATAL(log_read(log, off, 1, 1, INT64_MAX, &rr), 0);
            CU_ASSERT_EQUAL_FATAL(rr.first_offset, off);
            b = read_region(&rr);
            CU_ASSERT(log_batch_crc_ok(b, (size_t)rr.len));
            off += 2;
            free(b);
            close(rr.fd);
        }
    }
    CU_ASSERT_EQUAL(log_mgr_close(mw->mgr, 7), 0);
    mw->mgr = NULL;
}

/* Each checkpoint file holds its previous contents or all of the new ones
 * whatever call fails, and a checkpoint that failed is written by the
 * next one. */
static void test_mgr_checkpoint(void)
{
    unsigned before = CU_get_number_of_failures();

    for (int64_t n = 1; n < MAX_RUNS; n++) {
        mworld_t mw;
        char *old[3], *mid[3], *now[3], path[400];
        int64_t hit;
        int rc;

        mw_init(&mw);
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof(path), "%s/%s", mw.dir, ckpt_names[i]);
            old[i] = unit_slurp(path);
            CU_ASSERT_PTR_NOT_NULL(old[i]);
        }
        fault_fail_nth(FAULT_ANY, n, EIO);
        rc = log_mgr_checkpoint(mw.mgr);
        hit = fault_injected();
        fault_reset();
        CU_ASSERT_EQUAL(rc, hit ? -1 : 0);
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof(path), "%s/%s", mw.dir, ckpt_names[i]);
            mid[i] = unit_slurp(path);
        }
        CU_ASSERT_EQUAL(log_mgr_checkpoint(mw.mgr), 0);
        for (int i = 0; i < 3; i++) {
            snprintf(path, sizeof(path), "%s/%s", mw.dir, ckpt_names[i]);
            now[i] = unit_slurp(path);
            CU_ASSERT_PTR_NOT_NULL_FATAL(mid[i]);
            CU_ASSERT(strcmp(mid[i], old[i]) == 0 || strcmp(mid[i], now[i]) == 0);
            free(old[i]);
            free(mid[i]);
            free(now[i]);
        }
        /* the flushed partition's recovery point is in the new file */
        snprintf(path, sizeof(path), "%s/%s", mw.dir, ckpt_names[0]);
        now[0] = unit_slurp(path);
        CU_ASSERT_PTR_NOT_NULL_FATAL(now[0]);
        CU_ASSERT(strstr(now[0], "t 1 10\n") != NULL);
        free(now[0]);
        log_mgr_free(mw.mgr);
        unit_rm_rf(mw.dir);
        if (CU_get_number_of_failures() > before) {
            fprintf(stderr, "\n  checkpoint: first failure at N = %lld\n", (long long)n);
            break;
        }
        if (!hit)
            break;
    }
}

/* A close that fails leaves the log dir unclean (no marker), and the next
 * open recovers every partition whole. */
static void test_mgr_close(void)
{
    unsigned before = CU_get_number_of_failures();

    for (int mode = 0; mode < 2; mode++) {
        for (int64_t n = 1; n < MAX_RUNS; n++) {
            mworld_t mw;
            char path[400];
            int64_t hit;
            int rc;

            mw_init(&mw);
            if (mode == 0)
                fault_fail_nth(FAULT_ANY, n, EIO);
            else
                fault_fail_after(FAULT_ANY, n - 1, EIO);
            rc = log_mgr_close(mw.mgr, 7);
            mw.mgr = NULL;
            hit = fault_injected();
            fault_reset();
            snprintf(path, sizeof(path), "%s/.kafka_cleanshutdown", mw.dir);
            if (rc == 0)
                CU_ASSERT_EQUAL(access(path, F_OK), 0);
            mw_check_reopen(&mw);
            unit_rm_rf(mw.dir);
            if (CU_get_number_of_failures() > before) {
                fprintf(stderr, "\n  close (%s): first failure at N = %lld\n",
                        mode ? "dying" : "nth", (long long)n);
                return;
            }
            if (!hit)
                break;
        }
    }
}

/* A start that fails (reading checkpoints and markers, opening logs,
 * removing the marker) leaves the log dirs for the next start to open
 * whole. */
static void test_mgr_open(void)
{
    unsigned before = CU_get_number_of_failures();

    for (int mode = 0; mode < 2; mode++) {
        for (int64_t n = 1; n < MAX_RUNS; n++) {
            mworld_t mw;
            char err[256];
            log_mgr_t *mgr;
            int64_t hit;

            mw_init(&mw);
            CU_ASSERT_EQUAL(log_mgr_close(mw.mgr, 7), 0);
            if (mode == 0)
                fault_fail_nth(FAULT_ANY, n, EIO);
            else
                fault_fail_after(FAULT_ANY, n - 1, EIO);
            mgr = log_mgr_open(&mw.mc, NOW, err, sizeof(err));
            hit = fault_injected();
            fault_reset();
            if (mgr)
                log_mgr_free(mgr); /* a crash right after the start */
            mw_check_reopen(&mw);
            unit_rm_rf(mw.dir);
            if (CU_get_number_of_failures() > before) {
                fprintf(stderr, "\n  open (%s): first failure at N = %lld\n",
                        mode ? "dying" : "nth", (long long)n);
                return;
            }
            if (!hit)
                break;
        }
    }
}

/* Creating a partition either works (and the partition is there after a
 * restart) or fails leaving no directory behind, so a retry works;
 * deleting one either works or leaves it as it was, usable. */
static void test_mgr_create_delete(void)
{
    uint8_t id[16] = {9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9, 9};
    unsigned before = CU_get_number_of_failures();

    for (int64_t n = 1; n < MAX_RUNS; n++) {
        mworld_t mw;
        char path[400];
        log_t *log;
        log_append_result_t res;
        int64_t hit;
        int rc;

        mw_init(&mw);
        fault_fail_nth(FAULT_ANY, n, EIO);
        log = log_mgr_create(mw.mgr, "u", 0, id, NULL, NOW);
        rc = log_mgr_delete(mw.mgr, "t", 1, NOW);
        hit = fault_injected();
        fault_reset();
        snprintf(path, sizeof(path), "%s/u-0", mw.dir);
        if (!log) {
            CU_ASSERT_EQUAL(access(path, F_OK), -1);
            log = log_mgr_create(mw.mgr, "u", 0, id, NULL, NOW);
            CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        }
        {
            size_t len;
            uint8_t *b = mkbatch(1, 2, NOW, -1, &len);
            CU_ASSERT_EQUAL(log_append(log, b, len, 0, NOW, &res), 0);
            if (rc < 0)
                CU_ASSERT_EQUAL(log_append(log_mgr_get(mw.mgr, "t", 1), b, len, 0, NOW, &res),
                                0);
            free(b);
        }
        snprintf(path, sizeof(path), "%s/t-1", mw.dir);
        CU_ASSERT_EQUAL(access(path, F_OK), rc == 0 ? -1 : 0);
        CU_ASSERT_EQUAL(log_mgr_get(mw.mgr, "t", 1) == NULL, rc == 0);
        CU_ASSERT_EQUAL(log_mgr_close(mw.mgr, 7), 0);
        mw_open(&mw);
        log = log_mgr_get(mw.mgr, "u", 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(log);
        CU_ASSERT_EQUAL(log_end_offset(log), 2);
        CU_ASSERT_EQUAL(log_mgr_topic_id(mw.mgr, "u", 0, id), 1);
        log = log_mgr_get(mw.mgr, "t", 1);
        CU_ASSERT_EQUAL(log == NULL, rc == 0);
        if (log)
            CU_ASSERT_EQUAL(log_end_offset(log), mw.leo[1] + 2);
        log_mgr_free(mw.mgr);
        unit_rm_rf(mw.dir);
        if (CU_get_number_of_failures() > before) {
            fprintf(stderr, "\n  create/delete: first failure at N = %lld\n", (long long)n);
            return;
        }
        if (!hit)
            break;
    }
}

/* A new partition whose directory entry cannot be made durable (the fsync
 * of the log dir) is not created: a crash could lose it after producers
 * were told it exists. */
static void test_mgr_create_unsynced(void)
{
    uint8_t id[16] = {7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7, 7};
    mworld_t mw;
    char path[400];
    int64_t syncs;

    mw_init(&mw);
    /* the fsyncs of a creation: partition.metadata's tmp file, its
     * directory, then the log dir; fail the last */
    fault_count_calls();
    CU_ASSERT_PTR_NOT_NULL(log_mgr_create(mw.mgr, "v", 0, id, NULL, NOW));
    syncs = fault_calls(FAULT_SYNC);
    fault_reset();
    CU_ASSERT_EQUAL(syncs, 3);
    fault_fail_nth(FAULT_SYNC, syncs, EIO);
    CU_ASSERT_PTR_NULL(log_mgr_create(mw.mgr, "v", 1, id, NULL, NOW));
    CU_ASSERT_EQUAL(fault_injected(), 1);
    fault_reset();
    snprintf(path, sizeof(path), "%s/v-1", mw.dir);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    CU_ASSERT_PTR_NULL(log_mgr_get(mw.mgr, "v", 1));
    log_mgr_free(mw.mgr);
    unit_rm_rf(mw.dir);
}

/* A log taken offline by a failed fsync leaves its log dir without the
 * clean-shutdown marker, so the next start recovers it. */
static void test_mgr_offline_log(void)
{
    mworld_t mw;
    char path[400];
    log_t *log;
    log_append_result_t res;
    size_t len;
    uint8_t *b;

    mw_init(&mw);
    log = log_mgr_get(mw.mgr, "t", 0);
    b = mkbatch(77, 2, NOW, -1, &len);
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, NOW, &res), 0);
    free(b);
    mw.leo[0] += 2;
    fault_fail_nth(FAULT_SYNC, 1, EIO);
    CU_ASSERT_EQUAL(log_flush(log, NOW), -1);
    fault_reset();
    CU_ASSERT(log_offline(log));
    CU_ASSERT_EQUAL(log_mgr_close(mw.mgr, 7), -1);
    snprintf(path, sizeof(path), "%s/.kafka_cleanshutdown", mw.dir);
    CU_ASSERT_EQUAL(access(path, F_OK), -1);
    mw_check_reopen(&mw);
    unit_rm_rf(mw.dir);
}

/* ---- the fault module itself ---- */

/* Worker threads write produced batches through the wrappers while the
 * loop arms rules: every call is counted once and every rule fires exactly
 * as often as it says, however the threads interleave (unguarded counters
 * lose increments here), and a short write's follow-up failure hits the
 * thread whose write was cut, not whichever writes next. */
#define FT_THREADS 4
#define FT_WRITES 4000
#define FT_READS 1000

typedef struct ft_worker_s {
    pthread_t th;
    int wfd, rfd;
    int write_fails, read_fails, shorts;
    int short_at, fail_at; /* index of the short write, of the first failed one */
} ft_worker_t;

static void *ft_run(void *arg)
{
    ft_worker_t *w = arg;
    char buf[16] = "0123456789abcdef";
    w->short_at = w->fail_at = -1;
    for (int i = 0; i < FT_WRITES; i++) {
        ssize_t n = fault_write(w->wfd, buf, sizeof(buf));
        if (n < 0) {
            w->write_fails++;
            if (w->fail_at < 0)
                w->fail_at = i;
        } else if (n != (ssize_t)sizeof(buf)) {
            w->shorts++;
            w->short_at = i;
        }
        if (i < FT_READS && fault_read(w->rfd, buf, 1) < 0)
            w->read_fails++;
    }
    return NULL;
}

static void ft_start(ft_worker_t *w)
{
    for (int i = 0; i < FT_THREADS; i++) {
        memset(&w[i], 0, sizeof(w[i]));
        w[i].wfd = open("/dev/null", O_WRONLY);
        w[i].rfd = open("/dev/zero", O_RDONLY);
        CU_ASSERT_FATAL(w[i].wfd >= 0 && w[i].rfd >= 0);
    }
    for (int i = 0; i < FT_THREADS; i++)
        CU_ASSERT_FATAL(pthread_create(&w[i].th, NULL, ft_run, &w[i]) == 0);
    for (int i = 0; i < FT_THREADS; i++) {
        pthread_join(w[i].th, NULL);
        close(w[i].wfd);
        close(w[i].rfd);
    }
}

static void test_fault_threads(void)
{
    ft_worker_t w[FT_THREADS];
    fault_rule_t burst = {.op = FAULT_WRITE, .after = 3000, .count = 500, .err = ENOSPC};
    int wf = 0, rf = 0;

    fault_reset();
    CU_ASSERT_EQUAL(fault_add(&burst), 0);
    CU_ASSERT_EQUAL(fault_fail_nth(FAULT_READ, 777, EIO), 0);
    ft_start(w);
    for (int i = 0; i < FT_THREADS; i++) {
        wf += w[i].write_fails;
        rf += w[i].read_fails;
    }
    CU_ASSERT_EQUAL(wf, 500);
    CU_ASSERT_EQUAL(rf, 1);
    CU_ASSERT_EQUAL(fault_calls(FAULT_WRITE), FT_THREADS * FT_WRITES);
    CU_ASSERT_EQUAL(fault_calls(FAULT_READ), FT_THREADS * FT_READS);
    CU_ASSERT_EQUAL(fault_injected(), 501);

    fault_reset();
    CU_ASSERT_EQUAL(fault_short_write_nth(2000, ENOSPC), 0);
    ft_start(w);
    int shorts = 0, fails = 0;
    for (int i = 0; i < FT_THREADS; i++) {
        shorts += w[i].shorts;
        fails += w[i].write_fails;
        if (w[i].shorts)
            CU_ASSERT_EQUAL(w[i].fail_at, w[i].short_at + 1);
    }
    CU_ASSERT_EQUAL(shorts, 1);
    CU_ASSERT_EQUAL(fails, 1);
    CU_ASSERT_EQUAL(fault_injected(), 2);
    fault_reset();
}

static void test_fault_rules(void)
{
    char path[300], trigger[300], err[200];
    int fd;

    snprintf(path, sizeof(path), "%s/rules", tmpdir);
    snprintf(trigger, sizeof(trigger), "%s/trigger", tmpdir);
    fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
    CU_ASSERT_FATAL(fd >= 0);

    /* unarmed: the system call, nothing counted */
    CU_ASSERT_EQUAL(fault_armed, 0);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcd", 4, 0), 4);
    CU_ASSERT_EQUAL(fault_calls(FAULT_ANY), 0);

    /* nth, counted per rule from arming; other kinds pass */
    CU_ASSERT_EQUAL(fault_parse("pwrite:nth=2:errno=ENOSPC", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcd", 4, 0), 4);
    CU_ASSERT_EQUAL(fault_fsync(fd), 0);
    errno = 0;
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcd", 4, 0), -1);
    CU_ASSERT_EQUAL(errno, ENOSPC);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcd", 4, 0), 4);
    CU_ASSERT_EQUAL(fault_calls(FAULT_WRITE), 3);
    CU_ASSERT_EQUAL(fault_calls(FAULT_SYNC), 1);
    CU_ASSERT_EQUAL(fault_calls(FAULT_ANY), 4);
    CU_ASSERT_EQUAL(fault_injected(), 1);
    fault_reset();
    CU_ASSERT_EQUAL(fault_armed, 0);

    /* after: a dying disk, every kind */
    CU_ASSERT_EQUAL(fault_parse("any:after=1", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_fdatasync(fd), 0);
    CU_ASSERT_EQUAL(fault_fdatasync(fd), -1);
    CU_ASSERT_EQUAL(errno, EIO);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 0), -1);
    CU_ASSERT_EQUAL(fault_injected(), 2);
    fault_pause();
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), 0);
    fault_resume();
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), -1);
    fault_reset();

    /* count: a burst of failures, then calls pass again */
    CU_ASSERT_EQUAL(fault_parse("truncate:nth=2:count=2", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), 0);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), -1);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), -1);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), 0);
    fault_reset();
    CU_ASSERT_EQUAL(fault_parse("truncate:after=1:count=1;any:nth=3:errno=EROFS", err, sizeof(err)),
                    0);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), 0);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), -1);
    CU_ASSERT_EQUAL(errno, EIO);
    /* every rule counts the calls it matches: this is the second rule's 3rd */
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), -1);
    CU_ASSERT_EQUAL(errno, EROFS);
    CU_ASSERT_EQUAL(fault_ftruncate(fd, 4), 0);
    fault_reset();

    /* short write: half, then the next write fails */
    CU_ASSERT_EQUAL(fault_parse("write:nth=1:short=1:errno=EDQUOT", err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcdefgh", 8, 0), 4);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "efgh", 4, 4), -1);
    CU_ASSERT_EQUAL(errno, EDQUOT);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "efgh", 4, 4), 4);
    fault_reset();

    /* while: only while the trigger file exists */
    {
        char spec[400];
        snprintf(spec, sizeof(spec), "sync:errno=EROFS:while=%s", trigger);
        CU_ASSERT_EQUAL(fault_parse(spec, err, sizeof(err)), 0);
    }
    CU_ASSERT_EQUAL(fault_fsync(fd), 0);
    close(open(trigger, O_WRONLY | O_CREAT, 0644));
    CU_ASSERT_EQUAL(fault_fsync(fd), -1);
    CU_ASSERT_EQUAL(errno, EROFS);
    unlink(trigger);
    CU_ASSERT_EQUAL(fault_fsync(fd), 0);
    fault_reset();

    /* bad specs arm nothing */
    CU_ASSERT_EQUAL(fault_parse("frobnicate", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "unknown kind of call 'frobnicate'");
    CU_ASSERT_EQUAL(fault_parse("write:nth=1;sync:when=3", err, sizeof(err)), -1);
    CU_ASSERT_STRING_EQUAL(err, "bad setting 'when=3' for sync");
    CU_ASSERT_EQUAL(fault_parse("sync:short=1", err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(fault_parse("write:errno=EWHAT", err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(fault_parse("write:nth=0", err, sizeof(err)), -1);
    CU_ASSERT_EQUAL(fault_armed, 0);
    CU_ASSERT_EQUAL(fault_pwrite(fd, "abcd", 4, 0), 4);

    /* the environment is read once */
    setenv("STRAND_FAULT", "mkdir:nth=1:errno=EACCES", 1);
    CU_ASSERT_EQUAL(fault_env_load(err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_mkdir(trigger, 0755), -1);
    CU_ASSERT_EQUAL(errno, EACCES);
    fault_reset();
    CU_ASSERT_EQUAL(fault_env_load(err, sizeof(err)), 0);
    CU_ASSERT_EQUAL(fault_armed, 0);
    unsetenv("STRAND_FAULT");
    close(fd);
    unlink(path);
}

/* A failed append regression: a write that fails half way is cut off, and
 * the log goes on at the same offset with the same bytes on disk. */
static void test_short_append_exact(void)
{
    world_t w;
    char path[400];
    size_t before, after;
    char *a, *b;

    w_init(&w);
    CU_ASSERT_EQUAL(w_append(&w, 2, 0, 0), 0);
    snprintf(path, sizeof(path), "%s/00000000000000000000.log", w.dir);
    a = unit_slurp(path);
    before = w.m[0].len;
    fault_short_write_nth(1, ENOSPC);
    CU_ASSERT_EQUAL(w_append(&w, 2, 0, 0), 56);
    CU_ASSERT_EQUAL(fault_injected(), 2);
    fault_reset();
    {
        struct stat st;
        CU_ASSERT_EQUAL(stat(path, &st), 0);
        after = (size_t)st.st_size;
    }
    CU_ASSERT_EQUAL(after, before);
    b = unit_slurp(path);
    CU_ASSERT(memcmp(a, b, before) == 0);
    CU_ASSERT_FALSE(log_offline(w.log));
    CU_ASSERT_EQUAL(w_append(&w, 2, 0, 0), 0);
    CU_ASSERT_EQUAL(w.m[1].base, 2);
    check_log(&w);
    free(a);
    free(b);
    w_done(&w);
}

/* fsyncgate regression: after a failed fsync, a second flush must not
 * report success (the kernel would happily say so) and nothing becomes
 * durable until the log is reopened and recovered. */
static void test_fsync_never_retried(void)
{
    world_t w;
    int64_t rp;

    w_init(&w);
    CU_ASSERT_EQUAL(w_append(&w, 2, 0, 0), 0);
    CU_ASSERT_EQUAL(log_flush(w.log, NOW), 0);
    CU_ASSERT_EQUAL(w_append(&w, 2, 0, 0), 0);
    rp = log_recovery_point(w.log);
    fault_fail_nth(FAULT_SYNC, 1, EIO);
    CU_ASSERT_EQUAL(log_flush(w.log, NOW), -1);
    fault_reset();
    CU_ASSERT(log_offline(w.log));
    CU_ASSERT_EQUAL(log_flush(w.log, NOW), -1);
    CU_ASSERT_EQUAL(errno, EIO);
    CU_ASSERT_EQUAL(log_recovery_point(w.log), rp);
    CU_ASSERT_EQUAL(log_unflushed_messages(w.log), 0);
    /* an offline log is closed without touching its files */
    fault_count_calls();
    CU_ASSERT_EQUAL(log_close(w.log), -1);
    CU_ASSERT_EQUAL(fault_calls(FAULT_ANY), 0);
    fault_reset();
    w.log = NULL;
    {
        log_open_args_t a = open_args(rp, 0, 0);
        w.log = log_open(w.dir, &w.cfg, &a);
    }
    CU_ASSERT_PTR_NOT_NULL_FATAL(w.log);
    CU_ASSERT_FALSE(log_offline(w.log));
    check_log(&w);
    CU_ASSERT_EQUAL(log_flush(w.log, NOW), 0);
    CU_ASSERT_EQUAL(log_recovery_point(w.log), w.leo);
    w_done(&w);
}

/* The flush of a rolled segment makes its trimmed index files durable
 * too: they were written through a map, then cut, and only an fsync of the
 * files writes those pages. */
static void test_rolled_indexes_synced(void)
{
    world_t w;

    w_init(&w);
    CU_ASSERT_EQUAL(w_append(&w, 2, 0, 0), 0);
    CU_ASSERT_EQUAL(log_roll(w.log, NOW), 0);
    fault_count_calls();
    CU_ASSERT_EQUAL(log_flush_rolled(w.log), 0);
    /* .log, .index, .timeindex, the epoch checkpoint epoch 0 began, the
     * directory */
    CU_ASSERT_EQUAL(fault_calls(FAULT_SYNC), 5);
    fault_reset();
    fault_count_calls();
    CU_ASSERT_EQUAL(log_flush(w.log, NOW), 0); /* nothing left of that segment */
    CU_ASSERT_EQUAL(fault_calls(FAULT_SYNC), 1);
    CU_ASSERT_EQUAL(fault_calls(FAULT_MSYNC), 0); /* the active indexes are empty */
    fault_reset();
    w_done(&w);
}

int main(void)
{
    /* thousands of small logs, each fsynced: tmpfs spares the disk */
    snprintf(tmpdir, sizeof(tmpdir), "/dev/shm/strand-test-log-fault-XXXXXX");
    if (!mkdtemp(tmpdir)) {
        snprintf(tmpdir, sizeof(tmpdir), "/tmp/strand-test-log-fault-XXXXXX");
        if (!mkdtemp(tmpdir))
            return 1;
    }
    lg_set_level(LG_ERROR + 1);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("log faults", NULL, NULL);
    CU_add_test(s, "fault rules and specs", test_fault_rules);
    CU_add_test(s, "fault rules under worker threads", test_fault_threads);
    CU_add_test(s, "short append cut off exactly", test_short_append_exact);
    CU_add_test(s, "failed fsync is never success", test_fsync_never_retried);
    CU_add_test(s, "fail the Nth call (EIO)", test_nth_eio);
    CU_add_test(s, "fail the Nth call (ENOSPC)", test_nth_enospc);
    CU_add_test(s, "short Nth write", test_short_write);
    CU_add_test(s, "burst of failures from the Nth call", test_burst);
    CU_add_test(s, "dying disk from the Nth call", test_dying_disk);
    CU_add_test(s, "roll that leaves an empty segment", test_roll_leftover);
    CU_add_test(s, "rolled segment's indexes are synced", test_rolled_indexes_synced);
    CU_add_test(s, "log manager checkpoints", test_mgr_checkpoint);
    CU_add_test(s, "log manager close", test_mgr_close);
    CU_add_test(s, "log manager with an offline log", test_mgr_offline_log);
    CU_add_test(s, "log manager start", test_mgr_open);
    CU_add_test(s, "log manager create and delete", test_mgr_create_delete);
    CU_add_test(s, "log manager create, log dir not synced", test_mgr_create_unsynced);
    int rc = unit_run();
    unit_rm_rf(tmpdir);
    return rc;
}
