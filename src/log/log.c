/* A partition log: open and recovery, append, read. The files of the
 * partition directory and their layouts:
 *
 *   <base>.log, <base>.index, <base>.timeindex   segments, log_segment.c
 *                                                and log_index.c
 *   <offset>.snapshot                            producer state, log_pstate.c
 *   leader-epoch-checkpoint                      epoch cache, log_ecache.c
 *   partition.metadata                           topic id, log_mgr.c
 *
 * Opening follows Kafka's LogLoader in outline: leftover temporary files
 * are removed, segments opened, and after an unclean shutdown every
 * segment from the one holding the recovery point on is checked batch by
 * batch (CRC included), the log cut at the first bad batch; indexes that
 * fail a sanity check are rebuilt wherever they are. Then the leader
 * epoch cache is trimmed to the log, and producer state is loaded from the
 * newest snapshot and replayed from the log up to its end. */
#include "log/log_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/fault.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"


/* Tells a log from a later one at the same place (log_uid). */
/* Logs are opened on worker threads too (log_mgr_new_build). */
static _Atomic uint64_t log_next_uid = 1;

void log_config_defaults(log_config_t *cfg)
{
    memset(cfg, 0, sizeof(*cfg));
    cfg->segment_bytes = 1073741824;
    cfg->segment_ms = 7LL * 24 * 3600 * 1000;
    cfg->retention_ms = 7LL * 24 * 3600 * 1000;
    cfg->retention_bytes = -1;
    cfg->index_interval_bytes = 4096;
    cfg->segment_index_bytes = 10485760;
    cfg->file_delete_delay_ms = 60000;
    cfg->flush_messages = INT64_MAX;
    cfg->flush_ms = INT64_MAX;
    cfg->producer_id_expiration_ms = 86400000;
    cfg->timestamp_type = 0;
}

/* ---- segment array ---- */

int log_seg_floor(const log_t *log, int64_t offset)
{
    int lo = 0, hi = log->nsegs - 1, found = 0;

    while (lo <= hi) {
        int mid = lo + (hi - lo) / 2;
        if (log->segs[mid]->base_offset <= offset) {
            found = mid;
            lo = mid + 1;
        } else {
            hi = mid - 1;
        }
    }
    return found;
}

void log_seg_push(log_t *log, log_segment_t *seg)
{
    if (log->nsegs == log->capsegs) {
        log->capsegs = log->capsegs ? log->capsegs * 2 : 8;
        log->segs = xrealloc(log->segs, sizeof(*log->segs) * (size_t)log->capsegs);
    }
    log->segs[log->nsegs++] = seg;
}

void log_seg_shift(log_t *log, int n)
{
    memmove(log->segs, log->segs + n, sizeof(*log->segs) * (size_t)(log->nsegs - n));
    log->nsegs -= n;
}

/* ---- open ---- */

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int in_list(const int64_t *v, int n, int64_t x)
{
    return n > 0 && bsearch(&x, v, (size_t)n, sizeof(*v), cmp_i64) != NULL;
}

static void unlink_in(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = xmalloc(n);

    snprintf(p, n, "%s/%s", dir, name);
    if (fault_unlink(p) < 0 && errno != ENOENT)
        lg_warn("log %s: cannot remove leftover %s: %s", dir, name, strerror(errno));
    free(p);
}

/* Lists the segment base offsets (sorted, caller frees) and removes
 * leftovers: files of interrupted deletions or checkpoint writes, and
 * index files whose .log is gone. Returns the count, or -1 with errno. */
static int log_scan_dir(const char *dir, int64_t **bases_out)
{
    int64_t *bases = NULL, base;
    int n = 0, cap = 0;
    struct dirent *de;
    DIR *d = fault_opendir(dir);

    if (!d)
        return -1;
    while ((de = readdir(d)) != NULL) {
        if (has_suffix(de->d_name, ".deleted") || has_suffix(de->d_name, ".cleaned") ||
            has_suffix(de->d_name, ".swap") || has_suffix(de->d_name, ".tmp")) {
            unlink_in(dir, de->d_name);
        } else if (log_segment_parse_name(de->d_name, ".log", &base)) {
            if (n == cap) {
                cap = cap ? cap * 2 : 16;
                bases = xrealloc(bases, sizeof(*bases) * (size_t)cap);
            }
            bases[n++] = base;
        }
    }
    if (n > 0)
        qsort(bases, (size_t)n, sizeof(*bases), cmp_i64);
    rewinddir(d);
    while ((de = readdir(d)) != NULL) {
        if ((log_segment_parse_name(de->d_name, ".index", &base) ||
             log_segment_parse_name(de->d_name, ".timeindex", &base) ||
             log_segment_parse_name(de->d_name, ".txnindex", &base)) &&
            !in_list(bases, n, base))
            unlink_in(dir, de->d_name);
    }
    closedir(d);
    *bases_out = bases;
    return n;
}

static int log_open_segments(log_t *log, int64_t now_ms)
{
    int64_t *bases = NULL;
    int n = log_scan_dir(log->dir, &bases);

    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++) {
        log_segment_t *seg = log_segment_open(log->dir, bases[i], i == n - 1, &log->cfg, now_ms);
        if (!seg) {
            int e = errno;
            lg_error("log %s: cannot open segment %lld: %s", log->dir, (long long)bases[i],
                     strerror(e));
            free(bases);
            errno = e;
            return -1;
        }
        log_seg_push(log, seg);
    }
    free(bases);
    return 0;
}

/* Batches found during recovery feed the epoch cache, as in Kafka. */
static void log_recover_visit(void *opaque, const uint8_t *batch, size_t len,
                              const log_batch_hdr_t *h)
{
    log_t *log = opaque;

    (void)batch;
    (void)len;
    if (h->leader_epoch >= 0 && h->leader_epoch > log_ecache_latest(&log->epochs) &&
        log_ecache_assign(&log->epochs, h->leader_epoch, h->base_offset))
        log->epochs_recovered = 1;
}

static int log_index_ok(log_t *log, int i)
{
    log_segment_t *seg = log->segs[i];
    int64_t end = i + 1 < log->nsegs ? log->segs[i + 1]->base_offset : INT64_MAX;

    return !seg->missing_index && log_index_sane(&seg->oidx, end, seg->size) &&
           log_index_sane(&seg->tidx, end, seg->size);
}

/* Drops the segments after i (a crash cut the log inside segment i). */
static int log_drop_after(log_t *log, int i)
{
    while (log->nsegs > i + 1) {
        log_segment_t *seg = log->segs[log->nsegs - 1];
        lg_warn("log %s: deleting segment %lld after the recovered end", log->dir,
                (long long)seg->base_offset);
        if (log_segment_delete(seg) < 0)
            return -1;
        log->nsegs--;
    }
    return 0;
}

/* Rebuilds segment i from its .log. The last segment stays writable. */
static int log_recover_segment(log_t *log, int i, int64_t expect)
{
    log_segment_t *seg = log->segs[i];
    int64_t cut = log_segment_recover(seg, log->cfg.index_interval_bytes, expect,
                                      log_recover_visit, log);

    if (cut < 0)
        return -1;
    /* its transaction index was emptied: the replay refills it */
    if (seg->base_offset < log->txn_rebuild_from)
        log->txn_rebuild_from = seg->base_offset;
    if (cut > 0) {
        lg_warn("log %s: cut %lld bytes of torn or corrupt data from segment %lld", log->dir,
                (long long)cut, (long long)seg->base_offset);
        if (log_drop_after(log, i) < 0)
            return -1;
    }
    if (i < log->nsegs - 1)
        return log_segment_seal(seg);
    return 0;
}

static int log_load(log_t *log, const log_open_args_t *args)
{
    int first_unclean = log->nsegs; /* no segment needs a full check */

    if (!args->clean_shutdown)
        first_unclean = log_seg_floor(log, args->recovery_point > 0 ? args->recovery_point : 0);
    /* A malformed epoch checkpoint (one cut short by a crash before the
     * flush that syncs it, or damaged) is rebuilt from every batch. */
    if (log->epochs.broken)
        first_unclean = 0;
    for (int i = 0; i < log->nsegs; i++) {
        log_segment_t *seg = log->segs[i];
        int last = i == log->nsegs - 1;
        if (i >= first_unclean) {
            if (log_recover_segment(log, i, seg->base_offset) < 0)
                return -1;
        } else if (!log_index_ok(log, i)) {
            lg_warn("log %s: rebuilding the indexes of segment %lld", log->dir,
                    (long long)seg->base_offset);
            if (log_recover_segment(log, i, seg->base_offset) < 0)
                return -1;
        } else if (last && log_segment_load_tail(seg) < 0) {
            lg_warn("log %s: active segment %lld has a bad tail, recovering it", log->dir,
                    (long long)seg->base_offset);
            if (log_recover_segment(log, i, seg->base_offset) < 0)
                return -1;
        }
    }
    return 0;
}

int log_restart_at(log_t *log, int64_t base, int64_t now_ms)
{
    log_segment_t *seg;
    int leftover;

    while (log->nsegs > 0) {
        if (log_segment_delete(log->segs[log->nsegs - 1]) < 0)
            return -1;
        log->nsegs--;
    }
    seg = log_segment_create(log->dir, base, &log->cfg, now_ms, &leftover);
    if (!seg)
        return -1;
    log_seg_push(log, seg);
    log->dir_dirty = 1;
    return log_pstate_reset(&log->pstate, base);
}

/* Offsets the checkpoints gave us, brought inside the log we found. */
static int log_set_offsets(log_t *log, const log_open_args_t *args)
{
    int64_t leo = log_active(log)->next_offset;
    int64_t lso = log->segs[0]->base_offset;

    if (args->log_start_offset > lso)
        lso = args->log_start_offset;
    if (lso > leo) {
        /* everything was deleted (DeleteRecords up to the end): restart
         * the log empty at the start offset */
        if (log_restart_at(log, lso, args->now_ms) < 0)
            return -1;
        leo = lso;
    }
    log->log_start_offset = lso;
    log->recovery_point = args->clean_shutdown ? leo : args->recovery_point;
    if (log->recovery_point > leo)
        log->recovery_point = leo;
    if (log->recovery_point < lso)
        log->recovery_point = lso;
    log->hwm = args->high_watermark;
    log_set_high_watermark(log, log->hwm);
    return 0;
}

/* The snapshot written here only spares the next open a replay: a failure
 * to write it is not a failure to open. */
static int log_load_state(log_t *log, int64_t now_ms)
{
    int64_t leo = log_end_offset(log);
    int changed = log_ecache_truncate_end(&log->epochs, leo) | log->epochs_recovered;

    changed |= log_ecache_truncate_start(&log->epochs, log->log_start_offset);
    log->epochs_recovered = 0;
    log->epochs.broken = 0;
    if (changed && log_save_epochs(log) < 0)
        return -1;
    /* a replay that refills recovered transaction indexes starts at or
     * below them: snapshots past their start are dropped */
    if (log_pstate_reload(&log->pstate, log->log_start_offset,
                          leo < log->txn_rebuild_from ? leo : log->txn_rebuild_from, now_ms,
                          log->cfg.producer_id_expiration_ms) < 0 ||
        log_replay_pstate(log) < 0)
        return -1;
    log->txn_rebuild_from = INT64_MAX;
    if (log_pstate_snapshot(&log->pstate) < 0)
        lg_warn("log %s: cannot write producer snapshot: %s", log->dir, strerror(errno));
    return 0;
}

log_t *log_open(const char *dir, const log_config_t *cfg, const log_open_args_t *args)
{
    log_t *log = xcalloc(1, sizeof(*log));
    int e;

    log->dir = xstrdup(dir);
    log->topic = xstrdup(args->topic ? args->topic : "");
    log->partition = args->partition;
    log->cfg = *cfg;
    log->last_flush_ms = args->now_ms;
    log->txn_rebuild_from = INT64_MAX;
    log->uid = log_next_uid++;
    if (log_ecache_init(&log->epochs, dir) < 0)
        goto err;
    if (fault_mkdir(dir, 0755) < 0 && errno != EEXIST)
        goto err;
    if (log_pstate_init(&log->pstate, dir) < 0 || log_open_segments(log, args->now_ms) < 0)
        goto err;
    if (log->nsegs == 0) {
        int64_t base = args->log_start_offset > 0 ? args->log_start_offset : 0;
        int leftover;
        log_segment_t *seg = log_segment_create(dir, base, cfg, args->now_ms, &leftover);
        if (!seg)
            goto err;
        log_seg_push(log, seg);
        log->dir_dirty = 1;
    }
    if (log_load(log, args) < 0 || log_set_offsets(log, args) < 0 ||
        log_load_state(log, args->now_ms) < 0)
        goto err;
    return log;
err:
    e = errno;
    lg_error("log %s: cannot open: %s", dir, strerror(e));
    log_free(log);
    errno = e;
    return NULL;
}

void log_free(log_t *log)
{
    if (!log)
        return;
    for (int i = 0; i < log->nsegs; i++)
        log_segment_free(log->segs[i]);
    free(log->segs);
    log_ecache_free(&log->epochs);
    log_pstate_free(&log->pstate);
    log_snap_free(&log->snap);
    free(log->dir);
    free(log->topic);
    free(log);
}

/* An offline log writes nothing more, and a failed flush makes it offline:
 * its files are left for the recovery of the next open (log_mgr_close
 * leaves its log dir without the clean-shutdown marker, so recovery runs).
 * A snapshot or index trim that fails after a good flush only costs the
 * next open a replay or an index rebuild. */
int log_close(log_t *log)
{
    int rc = 0, e = 0;

    if (log_flush(log, log->last_flush_ms) < 0) {
        e = errno;
        log_free(log);
        errno = e;
        return -1;
    }
    if (log->snap_due) { /* a roll's, not taken */
        log->snap_due = 0;
        log_snap_write(&log->snap);
        log_snapshot_done(log, &log->snap);
    }
    log_pstate_set_end(&log->pstate, log_end_offset(log));
    if (log_pstate_snapshot(&log->pstate) < 0) {
        rc = -1;
        e = errno;
    }
    for (int i = 0; i < log->nsegs; i++) {
        if (log_segment_close(log->segs[i]) < 0 && !rc) {
            rc = -1;
            e = errno;
        }
    }
    log->nsegs = 0;
    log_free(log);
    if (rc)
        errno = e;
    return rc;
}

/* ---- accessors ---- */

void log_set_config(log_t *log, const log_config_t *cfg)
{
    log->cfg = *cfg;
}

const log_config_t *log_config(const log_t *log)
{
    return &log->cfg;
}

const char *log_dir(const log_t *log)
{
    return log->dir;
}

const char *log_topic(const log_t *log)
{
    return log->topic;
}

int32_t log_partition(const log_t *log)
{
    return log->partition;
}

uint64_t log_uid(const log_t *log)
{
    return log->uid;
}

int64_t log_end_offset(const log_t *log)
{
    return log_active(log)->next_offset;
}

int64_t log_start_offset(const log_t *log)
{
    return log->log_start_offset;
}

int64_t log_recovery_point(const log_t *log)
{
    return log->recovery_point;
}

int64_t log_high_watermark(const log_t *log)
{
    return log->hwm;
}

void log_set_high_watermark(log_t *log, int64_t hwm)
{
    int64_t leo = log_end_offset(log);

    if (hwm > leo)
        hwm = leo;
    if (hwm < log->log_start_offset)
        hwm = log->log_start_offset;
    log->hwm = hwm;
    log_pstate_hw_moved(&log->pstate, hwm);
}

int64_t log_size_bytes(const log_t *log)
{
    int64_t n = 0;

    for (int i = 0; i < log->nsegs; i++)
        n += log->segs[i]->size;
    return n;
}

int log_segment_count(const log_t *log)
{
    return log->nsegs;
}

int64_t log_unflushed_messages(const log_t *log)
{
    return log->offline ? 0 : log->unflushed;
}

int64_t log_last_flush_ms(const log_t *log)
{
    return log->last_flush_ms;
}

/* ---- producer state replay ---- */

static int log_replay_segment(log_t *log, log_segment_t *seg, int64_t from)
{
    log_batch_hdr_t h;
    int64_t pos;
    int r = log_segment_find(seg, from, &pos, &h);

    while (r == 1) {
        int64_t total = (int64_t)h.batch_length + LOG_BATCH_LOG_OVERHEAD;
        if (h.producer_id >= 0) {
            uint8_t *b = NULL;
            if (LOG_BATCH_ATTR_IS_CONTROL(h.attributes) &&
                !(b = log_segment_read_bytes(seg, pos, (size_t)total)))
                return -1;
            int rc = log_track_batch(log, seg, &h, b, (size_t)total);
            free(b);
            if (rc < 0)
                return -1;
        }
        pos += total;
        r = log_segment_read_hdr(seg, pos, &h);
    }
    return r;
}

int log_replay_pstate(log_t *log)
{
    int64_t from = log->pstate.map_end_offset, leo = log_end_offset(log);

    if (from < log->log_start_offset)
        from = log->log_start_offset;
    for (int i = log_seg_floor(log, from); from < leo && i < log->nsegs; i++)
        if (log_replay_segment(log, log->segs[i], from) < 0)
            return -1;
    log_pstate_set_end(&log->pstate, leo);
    return 0;
}

/* ---- roll ---- */

/* A roll that failed after sealing the active segment makes it active
 * again. It cannot go on if that fails, or if the new segment's empty .log
 * could not be removed: appending to the old segment past the base of a
 * segment file on disk would hide those batches from the next open. */
static int log_roll_undo(log_t *log, log_segment_t *act, int leftover)
{
    int e = errno;

    if (leftover)
        log_set_offline(log, "a failed roll left an empty segment behind");
    else if (act->size != 0 && log_segment_unseal(act) < 0)
        log_set_offline(log, "a failed roll could not make the active segment writable again");
    errno = e;
    return -1;
}

int log_roll_at(log_t *log, int64_t base, int64_t now_ms)
{
    log_segment_t *act = log_active(log), *seg;
    int64_t prev_base = act->base_offset;
    int leftover = 0;

    if (act->size == 0 && act->base_offset == base)
        return 0;
    if (act->size != 0 && log_segment_seal(act) < 0)
        return log_roll_undo(log, act, 0);
    seg = log_segment_create(log->dir, base, &log->cfg, now_ms, &leftover);
    if (!seg)
        return log_roll_undo(log, act, leftover);
    if (act->size == 0) {
        /* an empty active segment at the wrong base (a replica's gap); if
         * it cannot be deleted it stays, an empty sealed segment */
        if (log_segment_delete(act) == 0) {
            log->nsegs--;
            prev_base = log->nsegs ? log_active(log)->base_offset : base;
        } else {
            lg_warn("log %s: cannot delete empty segment %lld: %s", log->dir,
                    (long long)act->base_offset, strerror(errno));
            log_segment_seal(act);
        }
    }
    log_seg_push(log, seg);
    log->dir_dirty = 1;
    /* Kafka keeps a snapshot at each segment boundary; two are enough to
     * restart without a scan, older ones only cost space. The snapshot
     * only spares a replay, so a failure to write it fails nothing. */
    log_pstate_set_end(&log->pstate, base);
    log_snapshot_render(log);
    log_pstate_delete_before(&log->pstate, prev_base);
    return 0;
}

/* ---- producer snapshots off the loop ---- */

/* Renders the snapshot due at a roll; an older one nobody took is written
 * here, first (rarely: whoever rolls takes it). */
void log_snapshot_render(log_t *log)
{
    if (log->snap_due) {
        log_snap_write(&log->snap);
        log_snapshot_done(log, &log->snap);
    }
    log->snap_due = log_pstate_snapshot_render(&log->pstate, &log->snap);
}

int log_snapshot_take(log_t *log, log_snap_t *snap)
{
    if (!log->snap_due)
        return 0;
    *snap = log->snap;
    memset(&log->snap, 0, sizeof(log->snap));
    log->snap_due = 0;
    return 1;
}

void log_snapshot_done(log_t *log, log_snap_t *snap)
{
    /* The snapshot only spares the next open a replay: a failure to write
     * it fails nothing. */
    if (log_pstate_snapshot_done(&log->pstate, snap) < 0)
        lg_warn("log %s: cannot write producer snapshot: %s", log->dir, strerror(errno));
}

int16_t log_roll(log_t *log, int64_t now_ms)
{
    if (log_is_down(log))
        return KERR_KAFKA_STORAGE_ERROR;
    if (log_roll_at(log, log_end_offset(log), now_ms) < 0) {
        lg_error("log %s: cannot roll: %s", log->dir, strerror(errno));
        return KERR_KAFKA_STORAGE_ERROR;
    }
    return 0;
}

/* ---- append ---- */

void log_set_offline(log_t *log, const char *what)
{
    int e = errno;

    if (!log->offline)
        lg_error("log %s: offline until restart: %s (%s)", log->dir, what, strerror(e));
    log->offline = 1;
    errno = e;
}

int log_offline(const log_t *log)
{
    return log->offline;
}

int log_save_epochs(log_t *log)
{
    if (log_ecache_flush(&log->epochs) == 0)
        return 0;
    lg_error("log %s: cannot write leader-epoch-checkpoint: %s", log->dir, strerror(errno));
    return -1;
}

/* Rolls first when the batch does not belong in the active segment (full,
 * too old, offsets out of its range). As Kafka, a new leader epoch is
 * written to the epoch checkpoint before the batch: the checkpoint may
 * then name an epoch that starts at the log end (harmless, a new leader
 * does the same), never lack one the log holds. */
int16_t log_place_batch(log_t *log, size_t len, const log_batch_hdr_t *h, int64_t now_ms)
{
    int64_t last = h->base_offset + h->last_offset_delta;

    if (log_segment_should_roll(log_active(log), &log->cfg, len, h->max_timestamp, last,
                                now_ms) ||
        last - log_active(log)->base_offset > INT32_MAX) {
        int64_t base = h->base_offset > log_end_offset(log) ? h->base_offset : log_end_offset(log);
        if (log_roll_at(log, base, now_ms) < 0) {
            lg_error("log %s: cannot roll: %s", log->dir, strerror(errno));
            return KERR_KAFKA_STORAGE_ERROR;
        }
    }
    if (h->leader_epoch >= 0 &&
        log_ecache_assign_save(&log->epochs, h->leader_epoch, h->base_offset) < 0) {
        lg_error("log %s: cannot write leader-epoch-checkpoint: %s", log->dir, strerror(errno));
        return KERR_KAFKA_STORAGE_ERROR;
    }
    return 0;
}

/* Writes one batch whose header h carries its final offsets at the end of
 * the log. Every step that fails leaves the log as it was, or takes it
 * offline. */
static int16_t log_write_batch(log_t *log, const uint8_t *batch, size_t len,
                               const log_batch_hdr_t *h, int64_t now_ms)
{
    int16_t err = log_place_batch(log, len, h, now_ms);
    int r;

    if (err)
        return err;
    r = log_segment_append(log_active(log), batch, len, h, log->cfg.index_interval_bytes);
    if (r < 0) {
        lg_error("log %s: append failed: %s", log->dir, strerror(errno));
        if (r == -2)
            log_set_offline(log, "part of a failed append could not be cut off");
        return KERR_KAFKA_STORAGE_ERROR;
    }
    if (log_track_batch(log, log_active(log), h, batch, len) < 0) {
        log_set_offline(log, "an aborted transaction could not be indexed");
        return KERR_KAFKA_STORAGE_ERROR;
    }
    log->unflushed += h->records_count;
    return 0;
}

int16_t log_append_prepare(log_t *log, uint8_t *batch, size_t len, int32_t leader_epoch,
                           int64_t now_ms, int flags, log_append_result_t *res,
                           log_batch_hdr_t *h)
{
    const log_pstate_batch_t *dup = NULL;
    int16_t err;

    res->base_offset = res->last_offset = res->log_append_time = -1;
    res->log_start_offset = log->log_start_offset;
    res->duplicate = 0;
    if (log_is_down(log))
        return KERR_KAFKA_STORAGE_ERROR;
    if (log_batch_hdr_parse(batch, len, h) < 0 ||
        (int64_t)h->batch_length + LOG_BATCH_LOG_OVERHEAD != (int64_t)len ||
        h->last_offset_delta < 0)
        return KERR_CORRUPT_MESSAGE;
    if ((int64_t)len > log->cfg.segment_bytes)
        return KERR_RECORD_LIST_TOO_LARGE;
    if (h->producer_id >= 0 && LOG_BATCH_ATTR_IS_CONTROL(h->attributes)) {
        err = log_pstate_check_marker(&log->pstate, h, batch, len);
        if (err)
            return err;
    } else if (h->producer_id >= 0) {
        err = log_pstate_check(&log->pstate, h, (flags & LOG_APPEND_COORDINATOR) != 0, &dup);
        if (err)
            return err;
        if (dup) {
            res->base_offset = dup->first_offset;
            res->last_offset = dup->last_offset;
            if (log->cfg.timestamp_type == 1)
                res->log_append_time = dup->timestamp;
            res->duplicate = 1;
            return 0;
        }
    }
    h->base_offset = log->pending ? log->pend_end : log_end_offset(log);
    h->leader_epoch = leader_epoch;
    log_batch_set_base_offset(batch, h->base_offset);
    log_batch_set_leader_epoch(batch, leader_epoch);
    if (log->cfg.timestamp_type == 1) {
        log_batch_set_log_append_time(batch, len, now_ms);
        h->attributes |= LOG_BATCH_ATTR_TIMESTAMP_TYPE;
        h->max_timestamp = now_ms;
        res->log_append_time = now_ms;
    }
    res->base_offset = h->base_offset;
    res->last_offset = h->base_offset + h->last_offset_delta;
    return 0;
}

int16_t log_append(log_t *log, uint8_t *batch, size_t len, int32_t leader_epoch, int64_t now_ms,
                   log_append_result_t *res)
{
    return log_append_flags(log, batch, len, leader_epoch, now_ms, 0, res);
}

int16_t log_append_flags(log_t *log, uint8_t *batch, size_t len, int32_t leader_epoch,
                         int64_t now_ms, int flags, log_append_result_t *res)
{
    log_batch_hdr_t h;
    int16_t err;

    if (log->pending)
        return LOG_APPEND_AGAIN;
    err = log_append_prepare(log, batch, len, leader_epoch, now_ms, flags, res, &h);
    if (err || res->duplicate)
        return err;
    err = log_write_batch(log, batch, len, &h, now_ms);
    if (err)
        res->base_offset = res->last_offset = res->log_append_time = -1;
    return err;
}

int16_t log_append_replica(log_t *log, const uint8_t *batches, size_t len, int64_t now_ms)
{
    size_t pos = 0;
    int16_t err;

    if (log_is_down(log))
        return KERR_KAFKA_STORAGE_ERROR;
    while (len - pos >= LOG_BATCH_HDR_SIZE) {
        const uint8_t *b = batches + pos;
        log_batch_hdr_t h;
        size_t total;
        if (log_batch_hdr_parse(b, len - pos, &h) < 0 ||
            h.batch_length < LOG_BATCH_HDR_SIZE - LOG_BATCH_LOG_OVERHEAD || h.last_offset_delta < 0)
            return KERR_CORRUPT_MESSAGE;
        total = (size_t)h.batch_length + LOG_BATCH_LOG_OVERHEAD;
        if (total > len - pos)
            break; /* a fetch response may end with a partial batch */
        if (!log_batch_crc_ok(b, total))
            return KERR_CORRUPT_MESSAGE;
        if (h.base_offset < log_end_offset(log))
            return KERR_OFFSET_OUT_OF_RANGE;
        if ((int64_t)total > log->cfg.segment_bytes)
            return KERR_RECORD_LIST_TOO_LARGE;
        err = log_write_batch(log, b, total, &h, now_ms);
        if (err)
            return err;
        pos += total;
    }
    return 0;
}

/* ---- read ---- */

int16_t log_read(log_t *log, int64_t offset, int32_t max_bytes, int min_one, int64_t max_offset,
                 log_read_result_t *out)
{
    int64_t leo = log_end_offset(log);

    out->fd = -1;
    out->file_pos = 0;
    out->len = 0;
    out->first_offset = -1;
    if (log_is_down(log))
        return KERR_KAFKA_STORAGE_ERROR;
    if (offset < log->log_start_offset || offset > leo)
        return KERR_OFFSET_OUT_OF_RANGE;
    if (max_offset > leo)
        max_offset = leo;
    for (int i = log_seg_floor(log, offset); offset < max_offset && i < log->nsegs; i++) {
        log_segment_t *seg = log->segs[i];
        log_batch_hdr_t h;
        int64_t pos, len;
        int r = log_segment_find(seg, offset, &pos, &h);
        if (r < 0)
            return KERR_KAFKA_STORAGE_ERROR;
        if (r == 0)
            continue;
        if (h.base_offset + h.last_offset_delta >= max_offset)
            return 0;
        if ((int64_t)h.batch_length + LOG_BATCH_LOG_OVERHEAD > max_bytes && !min_one)
            return 0;
        len = log_segment_extent(seg, pos, &h, max_bytes, max_offset);
        if (len < 0)
            return KERR_KAFKA_STORAGE_ERROR;
        out->fd = fcntl(seg->fd, F_DUPFD_CLOEXEC, 0);
        if (out->fd < 0)
            return KERR_KAFKA_STORAGE_ERROR;
        out->file_pos = pos;
        out->len = (int32_t)len;
        out->first_offset = h.base_offset;
        return 0;
    }
    return 0;
}

/* ---- timestamps ---- */

int16_t log_offset_for_timestamp(log_t *log, int64_t ts, log_ts_offset_t *out)
{
    if (log_is_down(log))
        return KERR_KAFKA_STORAGE_ERROR;
    for (int i = 0; i < log->nsegs; i++) {
        log_segment_t *seg = log->segs[i];
        int r;
        if (log_segment_max_ts(seg, NULL) < ts)
            continue;
        r = log_segment_find_ts(seg, ts, log->log_start_offset, out);
        if (r < 0)
            return errno == EBADMSG ? KERR_CORRUPT_MESSAGE : KERR_KAFKA_STORAGE_ERROR;
        if (r == 0)
            return 0;
    }
    return 1;
}

int16_t log_max_timestamp(log_t *log, log_ts_offset_t *out)
{
    log_segment_t *best = NULL;
    int r;

    if (log_is_down(log))
        return KERR_KAFKA_STORAGE_ERROR;
    for (int i = 0; i < log->nsegs; i++)
        if (!best || log_segment_max_ts(log->segs[i], NULL) > log_segment_max_ts(best, NULL))
            best = log->segs[i];
    r = log_segment_find_max_ts(best, out);
    if (r < 0)
        return errno == EBADMSG ? KERR_CORRUPT_MESSAGE : KERR_KAFKA_STORAGE_ERROR;
    return r == 0 ? 0 : 1;
}

/* ---- leader epochs ---- */

int log_epoch_assign(log_t *log, int32_t epoch, int64_t start_offset)
{
    if (log_is_down(log))
        return -1;
    if (epoch < log_ecache_latest(&log->epochs))
        return 0;
    return log_ecache_assign_save(&log->epochs, epoch, start_offset);
}

int32_t log_latest_epoch(const log_t *log)
{
    return log_ecache_latest(&log->epochs);
}

void log_epoch_end_offset(const log_t *log, int32_t epoch, int64_t *end_offset, int32_t *epoch_out)
{
    log_ecache_end_offset(&log->epochs, epoch, log_end_offset(log), end_offset, epoch_out);
}

/* ---- producers ---- */

static void log_producer_fill(const log_pstate_entry_t *e, log_producer_info_t *out)
{
    const log_pstate_batch_t *last = e->nbatches ? &e->batches[e->nbatches - 1] : NULL;
    out->producer_id = e->producer_id;
    out->epoch = e->epoch;
    out->last_sequence = last ? last->last_seq : -1;
    out->last_offset = last ? last->last_offset : -1;
    out->last_timestamp = e->last_timestamp;
    out->coordinator_epoch = e->coordinator_epoch;
    out->current_txn_first_offset = e->current_txn_first_offset;
}

int log_producer_lookup(const log_t *log, int64_t producer_id, log_producer_info_t *out)
{
    const log_pstate_entry_t *e = log_pstate_get(&log->pstate, producer_id);
    if (!e)
        return 0;
    log_producer_fill(e, out);
    return 1;
}

int log_producers(const log_t *log, log_producer_fn *fn, void *arg)
{
    size_t pos = 0;
    void *v;
    int n = 0;
    while (smap_next(&log->pstate.producers, &pos, NULL, NULL, &v)) {
        log_producer_info_t info;
        log_producer_fill(v, &info);
        fn(arg, &info);
        n++;
    }
    return n;
}

int log_expire_producers(log_t *log, int64_t now_ms)
{
    return log_pstate_expire(&log->pstate, now_ms, log->cfg.producer_id_expiration_ms);
}
