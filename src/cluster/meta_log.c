/* Metadata log persistence. On disk this is Kafka's layout for
 * __cluster_metadata-0 (protocol/FORMATS.md §7.7): ordinary segments whose v2
 * batches are uncompressed, have no producer id, carry the node's epoch
 * as partitionLeaderEpoch, and hold records with a null key and a
 * metadata record as value (byte layout in meta_rec.c). One metadata
 * change = one batch, so the CRC and the log's torn-tail recovery make
 * every change atomic. partition.metadata names Kafka's fixed metadata
 * topic id (AAAAAAAAAAAAAAAAAAAAAQ). Snapshots of the image
 * (meta_snap.h, taken and cleaned in meta_log_snap.c) are the log's
 * retention: the log has no retention by time or size of its own, and
 * its start moves only to a snapshot. */
#include "cluster/meta_log.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log_batch.h"
#include "net/net_loop.h"
#include "net/net_pool.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

#define META_READ_CHUNK (1 << 20)

/* Kafka's Uuid.METADATA_TOPIC_ID: 0x0...01. */
static const uint8_t meta_log_topic_id[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};

int meta_log_build_batch(buf_t *out, const meta_rec_t *recs, int n, int64_t now_ms)
{
    buf_t vals;
    size_t *ends = xmalloc((size_t)(n > 0 ? n : 1) * sizeof(size_t));
    log_record_t *lr = xcalloc((size_t)(n > 0 ? n : 1), sizeof(*lr));
    log_batch_build_t opt;
    int rc;

    buf_init(&vals);
    for (int i = 0; i < n; i++) {
        meta_rec_encode(&recs[i], &vals);
        ends[i] = vals.len;
    }
    /* Pointers only once vals has stopped growing. */
    for (int i = 0; i < n; i++) {
        size_t start = i ? ends[i - 1] : 0;
        lr[i].offset = i;
        lr[i].timestamp = now_ms;
        lr[i].key = NULL;
        lr[i].key_len = -1;
        lr[i].value = vals.p + start;
        lr[i].value_len = (int32_t)(ends[i] - start);
    }
    log_batch_build_init(&opt);
    rc = log_batch_build(out, &opt, lr, n);
    buf_free(&vals);
    free(lr);
    free(ends);
    return rc;
}

/* Replays the records of one batch. Returns records applied or -1. */
static int meta_log_replay_batch(meta_image_t *img, const uint8_t *p, size_t len,
                                 const log_batch_hdr_t *h, arena_t *arena)
{
    log_batch_iter_t *it;
    log_record_t rec;
    int n = 0, r;
    char err[256];

    if (LOG_BATCH_ATTR_IS_CONTROL(h->attributes))
        return 0;
    it = log_batch_iter_new(p, len);
    if (!it)
        return -1;
    while ((r = log_batch_iter_next(it, &rec)) == 1) {
        meta_rec_t mr;
        arena_reset(arena);
        int d = rec.value_len < 0 ? -1 : meta_rec_decode(&mr, rec.value, (size_t)rec.value_len,
                                                          arena);
        if (d < 0) {
            lg_error("metadata log: undecodable record at offset %lld", (long long)rec.offset);
            r = -1;
            break;
        }
        if (d == 1) {
            lg_debug("metadata log: skipping %s v%d at offset %lld",
                     meta_rec_type_name(mr.type), mr.version, (long long)rec.offset);
            continue;
        }
        if (meta_image_apply(img, &mr, err, sizeof(err)) < 0)
            lg_error("metadata log: offset %lld: %s: skipped", (long long)rec.offset, err);
        else
            n++;
    }
    log_batch_iter_free(it);
    return r < 0 ? -1 : n;
}

/* Where a replay is: batches ending at or below `from` are in the
 * snapshot already; the last batch applied gives the epoch and time of the
 * last record. */
typedef struct meta_replay_s {
    int64_t from;
    int64_t next;     /* offset after the last batch read */
    int32_t epoch;
    int64_t ts;
    int64_t bytes;    /* of the batches applied */
} meta_replay_t;

/* Replays whole batches. */
static int meta_log_replay_run(meta_image_t *img, const uint8_t *p, size_t len,
                               meta_replay_t *rp)
{
    arena_t arena;
    int total = 0;

    arena_init(&arena, 4096);
    while (len >= LOG_BATCH_HDR_SIZE) {
        log_batch_hdr_t h;
        int64_t size = log_batch_total_size(p, len);
        if (size < LOG_BATCH_HDR_SIZE || (size_t)size > len ||
            log_batch_hdr_parse(p, len, &h) < 0 ||
            !log_batch_crc_ok(p, (size_t)size)) {
            total = -1;
            break;
        }
        int64_t end = h.base_offset + h.last_offset_delta + 1;
        int n = !rp || end > rp->from ? meta_log_replay_batch(img, p, (size_t)size, &h, &arena)
                                      : 0;
        if (n < 0) {
            total = -1;
            break;
        }
        total += n;
        if (rp) {
            if (end > rp->from) {
                rp->epoch = h.leader_epoch;
                rp->ts = h.max_timestamp;
                rp->bytes += size;
            }
            rp->next = end;
        }
        p += size;
        len -= (size_t)size;
    }
    arena_destroy(&arena);
    return total;
}

int meta_log_replay(meta_image_t *img, const uint8_t *batches, size_t len)
{
    return meta_log_replay_run(img, batches, len, NULL);
}

/* The latest valid snapshot the log can follow on from, into the image.
 * Returns 0 (rp->from set: the snapshot's end, or the log start) or -1. */
static int meta_log_load_snapshot(meta_log_t *ml, meta_replay_t *rp)
{
    meta_snap_info_t info;
    int64_t start = log_start_offset(ml->log), leo = log_end_offset(ml->log);
    int r;

    memset(&info, 0, sizeof(info));
    memset(rp, 0, sizeof(*rp));
    rp->from = start;
    rp->epoch = -1;
    rp->ts = -1;
    r = meta_snap_recover(log_dir(ml->log), start, leo, &ml->img, &ml->snap, &info);
    if (r < 0)
        return -1;
    if (r == 0 && start > 0) {
        lg_error("metadata log %s starts at offset %lld and no snapshot covers what is before",
                 log_dir(ml->log), (long long)start);
        errno = EBADMSG;
        return -1;
    }
    if (r == 1) {
        ml->has_snap = 1;
        rp->from = ml->snap.end_offset;
        rp->epoch = ml->snap.epoch;
        rp->ts = info.last_ts;
        lg_info("metadata log: loaded snapshot %lld-%d (%lld records)",
                (long long)ml->snap.end_offset, ml->snap.epoch, (long long)info.records);
    }
    return 0;
}

static int meta_log_pread_all(int fd, uint8_t *p, size_t len, int64_t pos)
{
    while (len > 0) {
        ssize_t r = pread(fd, p, len, (off_t)pos);
        if (r <= 0) {
            if (r < 0 && errno == EINTR)
                continue;
            if (r == 0)
                errno = EIO;
            return -1;
        }
        p += r;
        len -= (size_t)r;
        pos += r;
    }
    return 0;
}

/* Reads the log from rp->from (its start when there is no snapshot) to
 * its end, a chunk of whole batches at a time, applying what is not in
 * the snapshot. Returns records applied or -1/errno. */
static int meta_log_load(meta_log_t *ml, meta_replay_t *rp)
{
    int64_t off = rp->from, leo = log_end_offset(ml->log);
    int total = 0;

    while (off < leo) {
        log_read_result_t rr;
        int16_t err = log_read(ml->log, off, META_READ_CHUNK, 1, leo, &rr);
        if (err || rr.len <= 0) {
            if (rr.fd >= 0)
                close(rr.fd);
            errno = err ? EIO : EBADMSG;
            return -1;
        }
        uint8_t *p = xmalloc((size_t)rr.len);
        int rc = meta_log_pread_all(rr.fd, p, (size_t)rr.len, rr.file_pos);
        close(rr.fd);
        rp->next = off;
        int n = rc < 0 ? -1 : meta_log_replay_run(&ml->img, p, (size_t)rr.len, rp);
        int64_t next = rp->next;
        free(p);
        if (n < 0 || next <= off) {
            if (rc == 0)
                errno = EBADMSG;
            return -1;
        }
        total += n;
        off = next;
    }
    return total;
}

meta_log_t *meta_log_open(log_mgr_t *logs, int64_t now_ms, int quorum, int *fresh)
{
    log_config_t cfg;
    meta_log_t *ml = xcalloc(1, sizeof(*ml));
    meta_replay_t rp;
    int n;
    int32_t latest;

    /* Kafka's metadata.log.segment.bytes/ms defaults; no retention by
     * time or size: only a snapshot replaces what is deleted. */
    log_config_defaults(&cfg);
    cfg.retention_ms = -1;
    cfg.retention_bytes = -1;
    ml->logs = logs;
    meta_log_policy_defaults(&ml->snap_policy);
    meta_image_init(&ml->img);
    ml->log = log_mgr_create(logs, META_LOG_TOPIC, 0, meta_log_topic_id, &cfg, now_ms);
    if (!ml->log)
        goto err;
    /* A quorum's log past its snapshot may hold what was never committed:
     * it is applied as the Raft high watermark passes it
     * (meta_log_quorum.c). */
    n = meta_log_load_snapshot(ml, &rp) < 0 ? -1 : quorum ? 0 : meta_log_load(ml, &rp);
    if (n < 0) {
        lg_error("metadata log %s: cannot replay: %s", log_dir(ml->log), strerror(errno));
        goto err;
    }
    *fresh = log_end_offset(ml->log) == 0 && !ml->has_snap;
    ml->last_epoch = rp.epoch;
    ml->last_ts = rp.ts;
    ml->snap_bytes = rp.bytes;
    ml->snap_ms = now_ms;
    latest = log_latest_epoch(ml->log);
    if (latest < rp.epoch)
        latest = rp.epoch;
    ml->epoch = latest < 1 ? 1 : latest + 1;
    /* A quorum's epochs are its leaders' (cluster/raft.h), never bumped here. */
    if (!quorum && log_epoch_assign(ml->log, ml->epoch, log_end_offset(ml->log)) < 0)
        lg_warn("metadata log: cannot write leader-epoch-checkpoint: %s", strerror(errno));
    ml->quorum = quorum;
    if (quorum) {
        ml->last_applied = rp.from - 1;
        return ml;
    }
    log_set_high_watermark(ml->log, log_end_offset(ml->log));
    ml->last_applied = log_end_offset(ml->log) - 1;
    lg_info("metadata log: replayed %d records up to offset %lld, epoch %d", n,
            (long long)log_end_offset(ml->log), ml->epoch);
    return ml;
err:
    meta_image_free(&ml->img);
    free(ml);
    return NULL;
}

void meta_log_free(meta_log_t *ml)
{
    if (!ml)
        return;
    meta_log_snap_stop(ml);
    meta_log_install_drop(ml);
    if (ml->apply_retry && ml->loop)
        net_timer_cancel(ml->loop, ml->apply_retry);
    meta_image_free(&ml->img);
    free(ml);
}

/* A committed batch: its records decoded again from the batch itself
 * (what the log holds is what is applied), applied to the image, told to
 * the listener. */
static void meta_log_applied_now(void *arg)
{
    (void)arg;
}

void meta_log_apply(meta_log_t *ml, const uint8_t *batch, size_t len, int64_t now_ms,
                    void (*applied)(void *arg), void *arg)
{
    log_batch_iter_t *it = log_batch_iter_new(batch, len);
    meta_rec_t *recs = NULL;
    log_record_t rec;
    arena_t arena;
    int n = 0, cap = 0;
    char err[256];

    arena_init(&arena, 4096);
    while (it && log_batch_iter_next(it, &rec) == 1) {
        if (n == cap) {
            cap = cap ? 2 * cap : 16;
            recs = xrealloc(recs, (size_t)cap * sizeof(*recs));
        }
        if (rec.value_len < 0 ||
            meta_rec_decode(&recs[n], rec.value, (size_t)rec.value_len, &arena) != 0)
            continue; /* we wrote it: cannot happen */
        if (meta_image_apply(&ml->img, &recs[n], err, sizeof(err)) < 0)
            lg_error("metadata log: committed %s does not fit the image: %s",
                     meta_rec_type_name(recs[n].type), err);
        else
            n++;
    }
    log_batch_iter_free(it);
    if (ml->quorum) {
        /* the batch's own offsets; the Raft node keeps the high watermark */
        log_batch_hdr_t h;
        if (log_batch_hdr_parse(batch, len, &h) == 0) {
            ml->last_applied = h.base_offset + h.last_offset_delta;
            ml->last_epoch = h.leader_epoch;
        }
    } else {
        /* One commit at a time: the batch is the log's last. */
        log_set_high_watermark(ml->log, log_end_offset(ml->log));
        ml->last_applied = log_end_offset(ml->log) - 1;
        ml->last_epoch = ml->epoch;
    }
    ml->last_ts = now_ms;
    ml->snap_bytes += (int64_t)len;
    meta_log_snap_check(ml, now_ms);
    if (ml->listener.on_commit && n)
        ml->listener.on_commit(ml->listener.ctx, recs, n, &ml->img, now_ms, applied, arg);
    else
        applied(arg);
    free(recs);
    arena_destroy(&arena);
}

/* Not durable: take it back out so that the log never holds a change
 * the client was told failed. */
static int16_t meta_log_take_back(meta_log_t *ml, int64_t base)
{
    lg_error("metadata log: fsync failed: %s", strerror(errno));
    if (log_truncate_to(ml->log, base) < 0)
        lg_error("metadata log: cannot remove the unsynced batch: %s", strerror(errno));
    return KERR_KAFKA_STORAGE_ERROR;
}

/* Builds and appends the batch (on the loop: a few hundred bytes into
 * the page cache). Returns 0 with the batch in *b and its offset, or an
 * error (b freed). */
static int16_t meta_log_append(meta_log_t *ml, const meta_rec_t *recs, int n, int64_t now_ms,
                               buf_t *b, int64_t *base)
{
    log_append_result_t res;
    int16_t kerr = KERR_KAFKA_STORAGE_ERROR;

    buf_init(b);
    if (meta_log_build_batch(b, recs, n, now_ms) == 0)
        kerr = log_append(ml->log, b->p, b->len, ml->epoch, now_ms, &res);
    if (kerr) {
        lg_error("metadata log: append failed (%s)", kerr_name(kerr));
        buf_free(b);
        return kerr;
    }
    *base = res.base_offset;
    return KERR_NONE;
}

int16_t meta_log_commit(meta_log_t *ml, const meta_rec_t *recs, int n, int64_t now_ms)
{
    buf_t b;
    int64_t base;
    int16_t kerr = meta_log_append(ml, recs, n, now_ms, &b, &base);

    if (kerr)
        return kerr;
    if (log_flush(ml->log, now_ms) < 0)
        kerr = meta_log_take_back(ml, base);
    else
        meta_log_apply(ml, b.p, b.len, now_ms, meta_log_applied_now, NULL);
    buf_free(&b);
    return kerr;
}

/* ---- commits off the loop ---- */

typedef struct meta_commit_s {
    net_job_t job; /* first */
    meta_log_t *ml;
    buf_t batch;
    int64_t base;
    int64_t now_ms;
    log_sync_t sync;
    log_snap_t snap; /* the producer snapshot a roll left, if has_snap */
    int has_snap;
    meta_commit_fn *cb;
    void *udata;
} meta_commit_t;

/* The sync, and the snapshot of a roll the append made (written here, off
 * the loop, as the partition layer writes its logs'). */
static void meta_commit_work(net_job_t *job)
{
    meta_commit_t *mc = (meta_commit_t *)job;
    log_sync_run(&mc->sync);
    if (mc->has_snap)
        log_snap_write(&mc->snap);
}

/* The layers above have made the change theirs: the requester hears. */
static void meta_commit_applied(void *arg)
{
    meta_commit_t *mc = arg;
    buf_free(&mc->batch);
    mc->cb(mc->udata, KERR_NONE);
    free(mc);
}

static void meta_commit_done(net_job_t *job)
{
    meta_commit_t *mc = (meta_commit_t *)job;
    meta_log_t *ml = mc->ml;

    ml->out = NULL;
    if (mc->has_snap)
        log_snapshot_done(ml->log, &mc->snap);
    if (log_sync_end(ml->log, &mc->sync, mc->now_ms) < 0) {
        int16_t kerr = meta_log_take_back(ml, mc->base);
        buf_free(&mc->batch);
        mc->cb(mc->udata, kerr);
        free(mc);
        return;
    }
    /* mc may be gone once this returns (meta_commit_applied). */
    meta_log_apply(ml, mc->batch.p, mc->batch.len, mc->now_ms, meta_commit_applied, mc);
}

void meta_log_attach(meta_log_t *ml, net_loop_t *loop, net_pool_t *pool)
{
    ml->loop = loop;
    ml->pool = pool;
    /* The log replayed after the latest snapshot may call for one (not
     * when detached for shutdown: it would be written in the call). */
    if (pool)
        meta_log_snap_check(ml, net_now_wall_ms());
}

void meta_log_submit(meta_log_t *ml, const meta_rec_t *recs, int n, int64_t now_ms,
                     meta_commit_fn *cb, void *udata)
{
    if (ml->quorum) {
        meta_log_quorum_submit(ml, recs, n, now_ms, cb, udata);
        return;
    }
    meta_commit_t *mc = xcalloc(1, sizeof(*mc));
    int16_t kerr = meta_log_append(ml, recs, n, now_ms, &mc->batch, &mc->base);

    if (!kerr && log_sync_begin(ml->log, 0, &mc->sync) < 0)
        kerr = meta_log_take_back(ml, mc->base);
    if (kerr) {
        buf_free(&mc->batch);
        free(mc);
        cb(udata, kerr);
        return;
    }
    mc->ml = ml;
    mc->now_ms = now_ms;
    mc->cb = cb;
    mc->udata = udata;
    mc->has_snap = log_snapshot_take(ml->log, &mc->snap);
    mc->job.work = meta_commit_work;
    mc->job.done = meta_commit_done;
    ml->out = mc;
    net_pool_run(ml->pool, &mc->job);
}

int64_t meta_log_end_offset(const meta_log_t *ml)
{
    return log_end_offset(ml->log);
}

int64_t meta_log_high_watermark(const meta_log_t *ml)
{
    return log_high_watermark(ml->log);
}
