/* Producer state snapshots, as Kafka's ProducerStateManager writes them
 * (protocol/FORMATS.md §7.5; Kafka's ProducerSnapshot version 1). File
 * <20-digit offset>.snapshot in the partition directory, the offset being
 * the log end offset the state covers. Big-endian:
 *
 *   0  int16  version = 1
 *   2  uint32 CRC-32C of bytes [6, end)
 *   6  int32  N, then N entries of 46 bytes:
 *        int64 producerId, int16 epoch, int32 lastSequence (-1 none),
 *        int64 lastOffset (-1 none), int32 offsetDelta (lastOffset - first
 *        offset of the last batch), int64 timestamp, int32 coordinatorEpoch,
 *        int64 currentTxnFirstOffset (-1 none)
 *
 * Only the last batch of each producer is kept in a snapshot, so after a
 * restart a retry of an older one of the last 5 is answered with
 * OUT_OF_ORDER_SEQUENCE_NUMBER, as in Kafka. We write entries sorted by
 * producer id (Kafka's order is its hash map's) and replace the file
 * atomically. */
#include "log/log_pstate.h"

#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log_ckpt.h"
#include "log/log_segment.h"
#include "util/buf.h"
#include "util/crc32c.h"
#include "util/fault.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"
#include "util/rd.h"

#define PSTATE_VERSION 1
#define PSTATE_ENTRY_SIZE 46
#define PSTATE_ENTRIES_OFFSET 6

int32_t log_pstate_seq_add(int32_t seq, int32_t n)
{
    if (seq > INT32_MAX - n)
        return n - (INT32_MAX - seq) - 1;
    return seq + n;
}

static int32_t pstate_seq_sub(int32_t seq, int32_t n)
{
    if (seq < n)
        return INT32_MAX - (n - seq) + 1;
    return seq - n;
}

static int cmp_i64(const void *a, const void *b)
{
    int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
    return x < y ? -1 : x > y;
}

static void pstate_add_snap(log_pstate_t *ps, int64_t off)
{
    for (int i = 0; i < ps->nsnaps; i++)
        if (ps->snaps[i] == off)
            return;
    ps->snaps = xrealloc(ps->snaps, sizeof(*ps->snaps) * (size_t)(ps->nsnaps + 1));
    ps->snaps[ps->nsnaps++] = off;
    qsort(ps->snaps, (size_t)ps->nsnaps, sizeof(*ps->snaps), cmp_i64);
}

/* Deletes snapshot i. A file that cannot be removed stays listed, so the
 * list always says what is on disk. Returns 0 or -1 with errno. */
static int pstate_del_snap(log_pstate_t *ps, int i)
{
    char *path = log_segment_file(ps->dir, ps->snaps[i], ".snapshot");
    int rc = fault_unlink(path);

    if (rc < 0 && errno == ENOENT)
        rc = 0;
    if (rc < 0)
        lg_warn("log %s: cannot delete %s: %s", ps->dir, path, strerror(errno));
    free(path);
    if (rc < 0)
        return -1;
    memmove(ps->snaps + i, ps->snaps + i + 1, sizeof(*ps->snaps) * (size_t)(ps->nsnaps - i - 1));
    ps->nsnaps--;
    return 0;
}

int log_pstate_init(log_pstate_t *ps, const char *dir)
{
    struct dirent *de;
    DIR *d;

    memset(ps, 0, sizeof(*ps));
    ps->dir = xstrdup(dir);
    smap_init(&ps->producers);
    d = fault_opendir(dir);
    if (!d)
        return -1;
    while ((de = readdir(d)) != NULL) {
        int64_t off;
        if (log_segment_parse_name(de->d_name, ".snapshot", &off))
            pstate_add_snap(ps, off);
    }
    closedir(d);
    return 0;
}

static void pstate_clear(log_pstate_t *ps)
{
    size_t pos = 0, klen;
    const void *key;
    void *val;

    while (smap_next(&ps->producers, &pos, &key, &klen, &val))
        free(val);
    smap_free(&ps->producers);
    smap_init(&ps->producers);
    ps->ongoing.n = ps->unrepl.n = 0;
}

void log_pstate_free(log_pstate_t *ps)
{
    pstate_clear(ps);
    smap_free(&ps->producers);
    free(ps->ongoing.v);
    free(ps->unrepl.v);
    free(ps->snaps);
    free(ps->dir);
    memset(ps, 0, sizeof(*ps));
}

log_pstate_entry_t *log_pstate_get(const log_pstate_t *ps, int64_t producer_id)
{
    return smap_get(&ps->producers, &producer_id, sizeof(producer_id));
}

static log_pstate_entry_t *pstate_get_or_add(log_pstate_t *ps, int64_t pid)
{
    log_pstate_entry_t *e = log_pstate_get(ps, pid);

    if (!e) {
        e = xcalloc(1, sizeof(*e));
        e->producer_id = pid;
        e->epoch = -1;
        e->coordinator_epoch = -1;
        e->last_timestamp = -1;
        e->current_txn_first_offset = -1;
        smap_put(&ps->producers, &pid, sizeof(pid), e);
    }
    return e;
}

static int32_t hdr_last_seq(const log_batch_hdr_t *h)
{
    if (h->base_sequence < 0)
        return -1;
    return log_pstate_seq_add(h->base_sequence, h->last_offset_delta);
}

/* ---- validation (ProducerAppendInfo, client origin) ---- */

int16_t log_pstate_check(log_pstate_t *ps, const log_batch_hdr_t *h, int coordinator,
                         const log_pstate_batch_t **dup)
{
    const log_pstate_entry_t *e = log_pstate_get(ps, h->producer_id);
    int16_t cur_epoch = e ? e->epoch : -1;
    int32_t last_seq;

    *dup = NULL;
    if (coordinator)
        return h->producer_epoch < cur_epoch ? KERR_INVALID_PRODUCER_EPOCH : KERR_NONE;
    if (e && h->producer_epoch == e->epoch) {
        int32_t ls = hdr_last_seq(h);
        for (int i = 0; i < e->nbatches; i++)
            if (e->batches[i].first_seq == h->base_sequence && e->batches[i].last_seq == ls) {
                *dup = &e->batches[i];
                return 0;
            }
    }
    if (h->producer_epoch < cur_epoch)
        return KERR_INVALID_PRODUCER_EPOCH;
    if (h->producer_epoch != cur_epoch) {
        /* a new epoch starts at 0; an unknown producer (evicted, or its
         * records deleted) may continue where it was */
        if (h->base_sequence != 0 && cur_epoch != -1)
            return 45;
    } else {
        last_seq = e && e->nbatches ? e->batches[e->nbatches - 1].last_seq : -1;
        if (cur_epoch != -1 &&
            !(h->base_sequence == (int64_t)last_seq + 1 ||
              (h->base_sequence == 0 && last_seq == INT32_MAX)))
            return KERR_OUT_OF_ORDER_SEQUENCE_NUMBER;
    }
    if (e && e->current_txn_first_offset >= 0 &&
        !LOG_BATCH_ATTR_IS_TRANSACTIONAL(h->attributes))
        return KERR_INVALID_TXN_STATE;
    return 0;
}

/* The marker's control type and coordinator epoch: 0, or -1 when its
 * one record cannot be read. */
static int pstate_read_marker(const uint8_t *batch, size_t len, int *type, int32_t *cepoch)
{
    log_batch_iter_t *it = batch ? log_batch_iter_new(batch, len) : NULL;
    log_record_t rec;
    int rc = -1;

    if (it && log_batch_iter_next(it, &rec) == 1 && rec.key && rec.key_len >= 4 && rec.value &&
        rec.value_len >= 6) {
        rd_t rd;
        rd_init(&rd, rec.key, (size_t)rec.key_len);
        rd_i16(&rd);
        *type = rd_i16(&rd);
        rd_init(&rd, rec.value, (size_t)rec.value_len);
        rd_i16(&rd);
        *cepoch = rd_i32(&rd);
        rc = *type == 0 || *type == 1 ? 0 : -1;
    }
    log_batch_iter_free(it);
    return rc;
}

int16_t log_pstate_check_marker(const log_pstate_t *ps, const log_batch_hdr_t *h,
                                const uint8_t *batch, size_t len)
{
    const log_pstate_entry_t *e = log_pstate_get(ps, h->producer_id);
    int32_t cepoch;
    int type;

    if (h->records_count != 1 || pstate_read_marker(batch, len, &type, &cepoch) < 0)
        return KERR_CORRUPT_MESSAGE;
    if (e && h->producer_epoch < e->epoch)
        return KERR_INVALID_PRODUCER_EPOCH;
    if (e && e->coordinator_epoch > cepoch)
        return KERR_TRANSACTION_COORDINATOR_FENCED;
    return KERR_NONE;
}

/* ---- update ---- */

static void pstate_set_epoch(log_pstate_entry_t *e, int16_t epoch)
{
    if (e->epoch != epoch) {
        e->epoch = epoch;
        e->nbatches = 0;
    }
}

static void pstate_add_batch(log_pstate_entry_t *e, const log_pstate_batch_t *b)
{
    if (e->nbatches == LOG_PSTATE_BATCHES) {
        memmove(e->batches, e->batches + 1, sizeof(e->batches[0]) * (LOG_PSTATE_BATCHES - 1));
        e->nbatches--;
    }
    e->batches[e->nbatches++] = *b;
}

/* ---- transactions: the first unstable offset ---- */

static void txn_add(log_txn_list_t *l, const log_txn_t *t)
{
    if (l->n == l->cap) {
        l->cap = l->cap ? l->cap * 2 : 4;
        l->v = xrealloc(l->v, sizeof(*l->v) * (size_t)l->cap);
    }
    l->v[l->n++] = *t;
}

static void txn_del(log_txn_list_t *l, int64_t producer_id)
{
    for (int i = 0; i < l->n; i++)
        if (l->v[i].producer_id == producer_id) {
            memmove(l->v + i, l->v + i + 1, sizeof(*l->v) * (size_t)(l->n - i - 1));
            l->n--;
            return;
        }
}

static int cmp_txn(const void *a, const void *b)
{
    return cmp_i64(&((const log_txn_t *)a)->first_offset, &((const log_txn_t *)b)->first_offset);
}

/* After a snapshot load: the open transactions are its producers'. */
static void txn_rebuild(log_pstate_t *ps)
{
    size_t pos = 0, klen;
    const void *key;
    void *val;

    ps->ongoing.n = ps->unrepl.n = 0;
    while (smap_next(&ps->producers, &pos, &key, &klen, &val)) {
        const log_pstate_entry_t *e = val;
        if (e->current_txn_first_offset >= 0)
            txn_add(&ps->ongoing, &(log_txn_t){e->producer_id, e->current_txn_first_offset, -1});
    }
    if (ps->ongoing.n > 1)
        qsort(ps->ongoing.v, (size_t)ps->ongoing.n, sizeof(*ps->ongoing.v), cmp_txn);
}

int64_t log_pstate_first_unstable(const log_pstate_t *ps)
{
    int64_t first = ps->ongoing.n ? ps->ongoing.v[0].first_offset : -1;

    for (int i = 0; i < ps->unrepl.n; i++)
        if (first < 0 || ps->unrepl.v[i].first_offset < first)
            first = ps->unrepl.v[i].first_offset;
    return first;
}

void log_pstate_hw_moved(log_pstate_t *ps, int64_t hw)
{
    int n = 0;

    while (n < ps->unrepl.n && ps->unrepl.v[n].last_offset < hw)
        n++;
    if (n == 0)
        return;
    memmove(ps->unrepl.v, ps->unrepl.v + n, sizeof(*ps->unrepl.v) * (size_t)(ps->unrepl.n - n));
    ps->unrepl.n -= n;
}

/* A transaction ends at its marker (offset marker): it is no longer open
 * but stays unstable until the high watermark passes the marker. An
 * aborted one's index entry carries the last stable offset with it
 * ended: the oldest other open transaction's start, else past the marker
 * (Kafka's lastStableOffset(completedTxn)). A marker with no transaction
 * open (nothing was written in it) ends an empty one at the marker. */
static int txn_end(log_pstate_t *ps, log_pstate_entry_t *e, int64_t marker, int aborted,
                   log_aborted_t *ab)
{
    log_txn_t t = {e->producer_id, e->current_txn_first_offset, marker};

    if (t.first_offset < 0)
        t.first_offset = marker;
    txn_del(&ps->ongoing, e->producer_id);
    txn_add(&ps->unrepl, &t);
    e->current_txn_first_offset = -1;
    if (!aborted)
        return 0;
    ab->producer_id = t.producer_id;
    ab->first_offset = t.first_offset;
    ab->last_offset = marker;
    ab->last_stable_offset = ps->ongoing.n ? ps->ongoing.v[0].first_offset : marker + 1;
    return 1;
}

/* An end-transaction marker: control record key (version, type), value
 * (version, coordinator epoch). Returns the type (0 ABORT, 1 COMMIT), -1
 * when the record cannot be read (taken as a commit: an unreadable marker
 * hides nothing). */
static int pstate_apply_marker(log_pstate_entry_t *e, const log_batch_hdr_t *h,
                               const uint8_t *batch, size_t len)
{
    log_batch_iter_t *it = batch ? log_batch_iter_new(batch, len) : NULL;
    log_record_t rec;
    int type = -1;

    pstate_set_epoch(e, h->producer_epoch);
    e->last_timestamp = h->max_timestamp;
    if (it && log_batch_iter_next(it, &rec) == 1) {
        rd_t rd;
        if (rec.key && rec.key_len >= 4) {
            rd_init(&rd, rec.key, (size_t)rec.key_len);
            rd_i16(&rd);
            type = rd_i16(&rd);
        }
        if (rec.value && rec.value_len >= 6) {
            rd_init(&rd, rec.value, (size_t)rec.value_len);
            rd_i16(&rd);
            e->coordinator_epoch = rd_i32(&rd);
        }
    }
    log_batch_iter_free(it);
    return type;
}

int log_pstate_update(log_pstate_t *ps, const log_batch_hdr_t *h, const uint8_t *batch,
                      size_t len, log_aborted_t *ab)
{
    int64_t last = h->base_offset + h->last_offset_delta;
    log_pstate_entry_t *e;
    int aborted = 0;

    if (h->producer_id >= 0) {
        e = pstate_get_or_add(ps, h->producer_id);
        if (LOG_BATCH_ATTR_IS_CONTROL(h->attributes)) {
            if (h->records_count > 0) {
                int type = pstate_apply_marker(e, h, batch, len);
                aborted = txn_end(ps, e, h->base_offset, type == 0, ab);
            }
        } else {
            log_pstate_batch_t b = {
                .first_seq = h->base_sequence,
                .last_seq = hdr_last_seq(h),
                .first_offset = h->base_offset,
                .last_offset = last,
                .timestamp = h->max_timestamp,
            };
            pstate_set_epoch(e, h->producer_epoch);
            pstate_add_batch(e, &b);
            e->last_timestamp = h->max_timestamp;
            if (LOG_BATCH_ATTR_IS_TRANSACTIONAL(h->attributes) && e->current_txn_first_offset < 0) {
                e->current_txn_first_offset = h->base_offset;
                txn_add(&ps->ongoing, &(log_txn_t){e->producer_id, h->base_offset, -1});
            }
        }
    }
    if (last + 1 > ps->map_end_offset)
        ps->map_end_offset = last + 1;
    return aborted;
}

void log_pstate_set_end(log_pstate_t *ps, int64_t offset)
{
    ps->map_end_offset = offset;
}

static int pstate_expired(const log_pstate_entry_t *e, int64_t now_ms, int64_t expiration_ms)
{
    return e->current_txn_first_offset < 0 && now_ms - e->last_timestamp >= expiration_ms;
}

int log_pstate_expire(log_pstate_t *ps, int64_t now_ms, int64_t expiration_ms)
{
    size_t pos = 0, klen;
    const void *key;
    void *val;
    int64_t *dead = NULL;
    int n = 0;

    while (smap_next(&ps->producers, &pos, &key, &klen, &val)) {
        if (pstate_expired(val, now_ms, expiration_ms)) {
            dead = xrealloc(dead, sizeof(*dead) * (size_t)(n + 1));
            dead[n++] = ((log_pstate_entry_t *)val)->producer_id;
        }
    }
    for (int i = 0; i < n; i++)
        free(smap_del(&ps->producers, &dead[i], sizeof(dead[i])));
    free(dead);
    return n;
}

/* ---- snapshots ---- */

static int cmp_entry(const void *a, const void *b)
{
    const log_pstate_entry_t *x = *(log_pstate_entry_t *const *)a;
    const log_pstate_entry_t *y = *(log_pstate_entry_t *const *)b;
    return x->producer_id < y->producer_id ? -1 : x->producer_id > y->producer_id;
}

static void pstate_encode(log_pstate_t *ps, buf_t *b)
{
    size_t pos = 0, klen, n = 0;
    log_pstate_entry_t **v = xmalloc(sizeof(*v) * (ps->producers.count + 1));
    const void *key;
    void *val;
    uint32_t crc;

    while (smap_next(&ps->producers, &pos, &key, &klen, &val))
        v[n++] = val;
    qsort(v, n, sizeof(*v), cmp_entry);
    buf_put_i16(b, PSTATE_VERSION);
    buf_put_u32(b, 0);
    buf_put_i32(b, (int32_t)n);
    for (size_t i = 0; i < n; i++) {
        const log_pstate_entry_t *e = v[i];
        const log_pstate_batch_t *last = e->nbatches ? &e->batches[e->nbatches - 1] : NULL;
        buf_put_i64(b, e->producer_id);
        buf_put_i16(b, e->epoch);
        buf_put_i32(b, last ? last->last_seq : -1);
        buf_put_i64(b, last ? last->last_offset : -1);
        buf_put_i32(b, last ? (int32_t)(last->last_offset - last->first_offset) : 0);
        buf_put_i64(b, e->last_timestamp);
        buf_put_i32(b, e->coordinator_epoch);
        buf_put_i64(b, e->current_txn_first_offset);
    }
    free(v);
    crc = crc32c(0, b->p + PSTATE_ENTRIES_OFFSET, b->len - PSTATE_ENTRIES_OFFSET);
    b->p[2] = (uint8_t)(crc >> 24);
    b->p[3] = (uint8_t)(crc >> 16);
    b->p[4] = (uint8_t)(crc >> 8);
    b->p[5] = (uint8_t)crc;
}

int log_pstate_snapshot_render(log_pstate_t *ps, log_snap_t *snap)
{
    memset(snap, 0, sizeof(*snap));
    if (ps->map_end_offset <= ps->last_snap_offset)
        return 0;
    buf_init(&snap->data);
    pstate_encode(ps, &snap->data);
    snap->path = log_segment_file(ps->dir, ps->map_end_offset, ".snapshot");
    snap->offset = ps->map_end_offset;
    /* Rendered once: a second render of the same state would only write
     * the same file again. */
    ps->last_snap_offset = ps->map_end_offset;
    return 1;
}

void log_snap_write(log_snap_t *snap)
{
    snap->rc = log_ckpt_write_file(snap->path, snap->data.p, snap->data.len);
    snap->err = errno;
}

void log_snap_free(log_snap_t *snap)
{
    free(snap->path);
    buf_free(&snap->data);
    memset(snap, 0, sizeof(*snap));
}

int log_pstate_snapshot_done(log_pstate_t *ps, log_snap_t *snap)
{
    int rc = snap->rc;
    if (rc != -1 && snap->offset > ps->map_end_offset) {
        /* The log was truncated below it while it was written. */
        fault_unlink(snap->path);
        log_snap_free(snap);
        return 0;
    }
    /* also at -2: the file exists and must be listed, to be deleted if the
     * log is truncated below it */
    if (rc != -1)
        pstate_add_snap(ps, snap->offset);
    else if (ps->last_snap_offset == snap->offset)
        ps->last_snap_offset = -1; /* not written: the next one is due */
    errno = snap->err;
    log_snap_free(snap);
    return rc < 0 ? -1 : 0;
}

int log_pstate_snapshot(log_pstate_t *ps)
{
    log_snap_t snap;
    if (!log_pstate_snapshot_render(ps, &snap))
        return 0;
    log_snap_write(&snap);
    return log_pstate_snapshot_done(ps, &snap);
}

/* Decodes one snapshot file into the map. -1 if corrupt. */
static int pstate_load_file(log_pstate_t *ps, const uint8_t *p, size_t len, int64_t now_ms,
                            int64_t expiration_ms)
{
    rd_t rd;
    int32_t n;

    rd_init(&rd, p, len);
    if (rd_i16(&rd) != PSTATE_VERSION || len < PSTATE_ENTRIES_OFFSET + 4)
        return -1;
    if (rd_u32(&rd) != crc32c(0, p + PSTATE_ENTRIES_OFFSET, len - PSTATE_ENTRIES_OFFSET))
        return -1;
    n = rd_i32(&rd);
    if (n < 0 || (size_t)n * PSTATE_ENTRY_SIZE != rd_remain(&rd))
        return -1;
    for (int32_t i = 0; i < n; i++) {
        log_pstate_entry_t t = {0}, *e;
        int32_t last_seq, delta;
        int64_t last_off;
        t.producer_id = rd_i64(&rd);
        t.epoch = rd_i16(&rd);
        last_seq = rd_i32(&rd);
        last_off = rd_i64(&rd);
        delta = rd_i32(&rd);
        t.last_timestamp = rd_i64(&rd);
        t.coordinator_epoch = rd_i32(&rd);
        t.current_txn_first_offset = rd_i64(&rd);
        if (t.current_txn_first_offset < 0)
            t.current_txn_first_offset = -1;
        if (last_off >= 0) {
            t.batches[0] = (log_pstate_batch_t){pstate_seq_sub(last_seq, delta), last_seq,
                                                last_off - delta, last_off, t.last_timestamp};
            t.nbatches = 1;
        }
        if (pstate_expired(&t, now_ms, expiration_ms))
            continue;
        e = pstate_get_or_add(ps, t.producer_id);
        *e = t;
    }
    return rd.err ? -1 : 0;
}

/* Loads the snapshot at off: 1 loaded, 0 missing or corrupt, -1 I/O error. */
static int pstate_load_snap(log_pstate_t *ps, int64_t off, int64_t now_ms, int64_t expiration_ms)
{
    char *path = log_segment_file(ps->dir, off, ".snapshot");
    size_t len;
    char *data = log_ckpt_read_file(path, &len);
    int r;

    if (!data)
        r = errno == ENOENT ? 0 : -1;
    else
        r = pstate_load_file(ps, (uint8_t *)data, len, now_ms, expiration_ms) == 0;
    free(data);
    free(path);
    return r;
}

/* A snapshot above the log end describes offsets the log no longer has
 * (after a truncation): if it cannot be deleted it must fail the reload,
 * otherwise the log could grow past it and a later open would load it.
 * Snapshots at or below the log start are deleted for space only. */
int log_pstate_reload(log_pstate_t *ps, int64_t log_start, int64_t leo, int64_t now_ms,
                      int64_t expiration_ms)
{
    int rc = 0;

    pstate_clear(ps);
    ps->map_end_offset = ps->last_snap_offset = log_start;
    for (int i = ps->nsnaps - 1; i >= 0; i--) {
        int64_t off = ps->snaps[i];
        if (off > leo && pstate_del_snap(ps, i) < 0)
            rc = -1;
        else if (off <= log_start)
            pstate_del_snap(ps, i);
    }
    if (rc < 0)
        return -1;
    for (int i = ps->nsnaps - 1; i >= 0; i--) {
        int64_t off = ps->snaps[i];
        int r;
        if (off > leo || off <= log_start)
            continue;
        r = pstate_load_snap(ps, off, now_ms, expiration_ms);
        if (r < 0) {
            pstate_clear(ps);
            return -1;
        }
        if (r == 1) {
            ps->map_end_offset = ps->last_snap_offset = off;
            txn_rebuild(ps);
            return 0;
        }
        lg_warn("log %s: producer snapshot at offset %lld is corrupt, deleting it", ps->dir,
                (long long)off);
        pstate_clear(ps);
        pstate_del_snap(ps, i); /* if it stays, it is skipped again next time */
    }
    return 0;
}

void log_pstate_delete_before(log_pstate_t *ps, int64_t offset)
{
    /* a file that cannot be deleted stays listed and is retried next time */
    for (int i = 0; i < ps->nsnaps && ps->snaps[i] < offset;)
        if (pstate_del_snap(ps, i) < 0)
            i++;
}

int log_pstate_reset(log_pstate_t *ps, int64_t offset)
{
    int rc = 0;

    pstate_clear(ps);
    for (int i = ps->nsnaps - 1; i >= 0; i--)
        if (pstate_del_snap(ps, i) < 0)
            rc = -1;
    ps->map_end_offset = offset;
    ps->last_snap_offset = 0;
    return rc;
}
