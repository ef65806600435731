/* The metadata log: partition __cluster_metadata-0, an ordinary log (same
 * segments and indexes as any partition) whose batches hold the metadata
 * records of meta_rec.h. It is the truth about which topics, partitions
 * and topic configs exist: every change is appended as one batch (so a
 * crash keeps all or none of it) and fsynced before it takes effect, and
 * at start-up the log is replayed into the image.
 *
 * A single node is its own quorum, so there is no Raft here yet: the
 * batches carry the node's epoch as partitionLeaderEpoch, as KRaft's
 * would, and a later Raft layer can take the same log over. */
#ifndef STRAND_CLUSTER_META_LOG_H
#define STRAND_CLUSTER_META_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/meta_image.h"
#include "cluster/meta_rec.h"
#include "cluster/meta_snap.h"
#include "log/log_mgr.h"
#include "util/buf.h"

#define META_LOG_TOPIC "__cluster_metadata"

/* The metadata.version feature level our records correspond to (Kafka
 * 4.0's, PartitionRecord v2 with directories). */
#define META_LOG_METADATA_VERSION 25

/* Who learns of each committed change, after the image has it: the
 * layers above apply it to what they own (the partition layer creates and
 * deletes logs, changes configs), as a KRaft broker's metadata publishers
 * do. */
typedef struct meta_listener_s {
    void *ctx;
    /* recs[0..n): the records of one committed batch, in log order, all
     * applied to img already. The listener calls applied(arg) once it has
     * made the change its own (at once, or later when its work is done
     * off the loop); the change's requester is answered then. */
    void (*on_commit)(void *ctx, const meta_rec_t *recs, int n, const meta_image_t *img,
                      int64_t now_ms, void (*applied)(void *arg), void *arg);
} meta_listener_t;

/* When snapshots are taken and what is kept: Kafka's keys, defaults from
 * meta_log_policy_defaults (Kafka's). */
typedef struct meta_log_policy_s {
    int64_t max_bytes;       /* metadata.log.max.record.bytes.between.snapshots */
    int64_t interval_ms;     /* metadata.log.max.snapshot.interval.ms; 0: not by time */
    int64_t retention_bytes; /* metadata.max.retention.bytes (log + snapshots); -1: none */
    int64_t retention_ms;    /* metadata.max.retention.ms; -1: none */
} meta_log_policy_t;

void meta_log_policy_defaults(meta_log_policy_t *pol);

typedef struct meta_log_s {
    log_mgr_t *logs;
    log_t *log;          /* owned by logs */
    meta_image_t img;
    int32_t epoch;       /* partitionLeaderEpoch of our batches */
    int64_t last_applied; /* offset of the last record in the image, or -1
                             (Kafka's finalized features epoch) */
    meta_listener_t listener;
    struct net_loop_s *loop; /* meta_log_attach */
    struct net_pool_s *pool; /* fsyncs of commits, or NULL: on the caller */
    struct meta_commit_s *out; /* the commit being synced */
    /* Snapshots (meta_log_snap.c). */
    meta_log_policy_t snap_policy;
    int has_snap;
    meta_snap_id_t snap;      /* the latest snapshot, if has_snap */
    int32_t last_epoch;       /* leader epoch of the record at last_applied */
    int64_t last_ts;          /* its timestamp (the next snapshot's header) */
    int64_t snap_bytes;       /* bytes of batches committed since the latest */
    int64_t snap_ms;          /* when the latest was taken, or the log opened */
    struct meta_snap_job_s *snap_job; /* the snapshot being written */
    uint64_t snap_timer;      /* net_timer_id_t of the interval check, or 0 */
    /* A Raft quorum's log (meta_log_quorum.c). */
    int quorum;
    struct raft_node_s *raft;         /* proposes and commits, once set */
    struct meta_wait_s *waits, **waits_tail; /* submits waiting to commit */
    int64_t commit_hw;                /* the Raft high watermark */
    int applying;                     /* a committed batch is being applied */
    int pumping;                      /* in the apply loop */
    void (*on_active)(void *arg);     /* this node became the active controller */
    void *on_active_arg;
    int active;
    struct meta_install_s *install;   /* a fetched snapshot waiting to replace the image */
    uint64_t apply_retry;             /* net_timer_id_t: a failed read tried again, or 0 */
    /* A dynamic quorum's voters by offset (borrowed): its snapshots hold
     * the KRaftVersion and Voters records in force at their end. */
    const struct raft_voters_hist_s *voters;
} meta_log_t;

/* The metadata log's end offset and high watermark (DescribeQuorum). */
int64_t meta_log_end_offset(const meta_log_t *ml);
int64_t meta_log_high_watermark(const meta_log_t *ml);

/* Opens (creating if missing) the metadata log and replays it into a new
 * image: from the latest valid snapshot (meta_snap_recover: torn and
 * corrupt ones are removed) and the log after it, or the whole log when
 * there is none. A log whose start was deleted with no snapshot to cover
 * it is refused (EBADMSG). Records that do not fit the image are logged and skipped.
 * *fresh is set to 1 when the log held no record (a new node, or data
 * dirs written before the metadata log existed). quorum: the log is a
 * Raft quorum's, whose epochs are its leaders' (cluster/raft.h): the
 * node's own epoch is not bumped into it. Returns the log owned by the
 * caller (meta_log_free), or NULL with errno set. */
meta_log_t *meta_log_open(log_mgr_t *logs, int64_t now_ms, int quorum, int *fresh);
/* Frees the image; the log itself belongs to the log manager. */
void meta_log_free(meta_log_t *ml);

/* Appends recs[0..n) as one batch, fsyncs it, then applies it to the
 * image and tells the listener. Returns 0 or KAFKA_STORAGE_ERROR (56)
 * when the append or fsync failed (the image is then unchanged, and the
 * batch is not in the log). Synchronous: for start-up, before the loop
 * runs. */
int16_t meta_log_commit(meta_log_t *ml, const meta_rec_t *recs, int n, int64_t now_ms);

/* From now on commits fsync on the pool (NULL: on the caller). */
void meta_log_attach(meta_log_t *ml, struct net_loop_s *loop, struct net_pool_s *pool);
/* The same as meta_log_commit without waiting for the disk on the loop:
 * the batch is appended now, fsynced on a worker, then applied and told
 * to the listener, and then cb(udata, err) runs on the loop (in the call
 * when the append fails, or without a pool). One commit at a time: the
 * caller (the controller) waits for cb before the next. recs need not
 * outlive the call. */
typedef void meta_commit_fn(void *udata, int16_t err);
void meta_log_submit(meta_log_t *ml, const meta_rec_t *recs, int n, int64_t now_ms,
                     meta_commit_fn *cb, void *udata);

/* ---- a Raft quorum's log (meta_log_quorum.c) ----
 *
 * On a quorum the log is the Raft node's: the image holds what is
 * committed (the latest snapshot, then the batches below the high
 * watermark, applied in order as it passes them: to the image, then told
 * to the listener, as on a single node). A submit is proposed as one
 * batch on the leader and answered once that batch is applied; on a node
 * that is not the active controller it is refused (NOT_CONTROLLER), and
 * so are those waiting when the leadership is lost. The active
 * controller is the leader once it has applied everything before its
 * epoch. */

/* The Raft node that proposes and commits (NULL: none). */
void meta_log_use_raft(meta_log_t *ml, struct raft_node_s *raft, void (*on_active)(void *arg),
                       void *arg);
/* The Raft high watermark moved to hw: apply what is committed. */
void meta_log_committed(meta_log_t *ml, int64_t hw, int64_t now_ms);
/* The Raft role changed: a lost leadership fails what waits. */
void meta_log_role(meta_log_t *ml, int64_t now_ms);
/* 1 when this node is the active controller. */
int meta_log_active(const meta_log_t *ml);
/* Where the next committed batch will start: on a quorum the Raft log's
 * end, else the log's. */
int64_t meta_log_next_offset(const meta_log_t *ml);
void meta_log_quorum_submit(meta_log_t *ml, const meta_rec_t *recs, int n, int64_t now_ms,
                            meta_commit_fn *cb, void *udata);
/* A snapshot fetched from the leader replaced the Raft log (which starts
 * at id.end_offset now): its image (img, taken: moved with a struct
 * copy) replaces ours once the batch at the listener is done, and the
 * listener is told as one change: a RemoveTopicRecord for each topic that
 * went, then every record of the new image. */
void meta_log_install(meta_log_t *ml, meta_snap_id_t id, meta_image_t *img, int64_t last_ts,
                      int64_t now_ms);
/* Frees an install still waiting (meta_log_free). */
void meta_log_install_drop(meta_log_t *ml);
/* Applies one committed batch (meta_log.c): its records to the image, then
 * the listener; applied(arg) once the listener is done. */
void meta_log_apply(meta_log_t *ml, const uint8_t *batch, size_t len, int64_t now_ms,
                    void (*applied)(void *arg), void *arg);

/* ---- snapshots (meta_log_snap.c) ---- */

/* Sets when snapshots are taken and what is kept (until then: the
 * defaults). */
void meta_log_snap_policy(meta_log_t *ml, const meta_log_policy_t *pol);
/* The latest snapshot: 1 with *id, or 0 when there is none. */
int meta_log_latest_snapshot(const meta_log_t *ml, meta_snap_id_t *id);
/* Takes a snapshot of the image now, at its committed offset (id: the
 * offset after last_applied, the epoch of that record): serialized here,
 * on the loop, written on the pool (in the call without one); then the
 * snapshot becomes the latest and meta_log_retain runs. Returns 0 when
 * it is under way (or done), 1 when there is nothing new since the latest
 * or one is being written already, -1 when the write failed (without a
 * pool; errno set). The Raft layer calls this when its own policy says
 * so; on a single node meta_log_snap_check does. */
int meta_log_snapshot_take(meta_log_t *ml, int64_t now_ms);
/* After each commit: takes a snapshot when the policy says one is due (the
 * log has grown by max_bytes since the latest, or interval_ms has passed
 * since it with new records; a timer covers the interval when no commit
 * follows). */
void meta_log_snap_check(meta_log_t *ml, int64_t now_ms);
/* Kafka's cleaning of the metadata log: while there are two snapshots or
 * more and the oldest is older than retention_ms (by its last record's
 * timestamp) or the log and snapshots together exceed retention_bytes,
 * moves the log start offset to the next snapshot, deletes the whole
 * segments before it, and removes the oldest snapshot. The latest
 * snapshot is always kept, and the log after it. Returns the snapshots
 * removed, or -1 with errno. */
int meta_log_retain(meta_log_t *ml, int64_t now_ms);
/* Deletes the log before snapshot id (which must exist): the log start
 * offset moves to id.end_offset, whole segments below it are deleted and
 * the snapshots older than id removed. Returns 0 or -1 with errno. */
int meta_log_delete_before(meta_log_t *ml, meta_snap_id_t id, int64_t now_ms);

/* Cancels the interval timer and lets a snapshot being written finish
 * without the log (meta_log_free calls it). */
void meta_log_snap_stop(meta_log_t *ml);

/* Encodes recs[0..n) as one v2 batch (null keys, values framed by
 * meta_rec_encode, CreateTime now_ms) appended to out. Returns 0 or -1. */
int meta_log_build_batch(buf_t *out, const meta_rec_t *recs, int n, int64_t now_ms);

/* Replays a run of whole batches from memory into img; control batches
 * are skipped. Returns the number of records applied, or -1 when a batch
 * or record is corrupt (records before it stay applied). Records that do
 * not fit the image are logged and skipped. */
int meta_log_replay(meta_image_t *img, const uint8_t *batches, size_t len);

#endif
