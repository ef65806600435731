/* The log manager: every partition log of this node, over one or more log
 * directories (log.dirs), as Kafka's LogManager lays them out:
 *
 *   <logdir>/meta.properties                  version, cluster.id, node.id,
 *                                             directory.id
 *   <logdir>/recovery-point-offset-checkpoint  "topic partition offset"
 *   <logdir>/log-start-offset-checkpoint
 *   <logdir>/replication-offset-checkpoint     (high watermarks)
 *   <logdir>/.kafka_cleanshutdown               after a clean close
 *   <logdir>/<topic>-<partition>/               one log_t each, with its
 *                                               partition.metadata
 *   <logdir>/<topic>-<p>.<uuidhex>-delete/      deleted, purged later
 *   <logdir>/<topic>-<p>.<uuidhex>-stray/       set aside, kept
 *
 * No threads: deleted directories are removed when the caller drives
 * log_mgr_purge() from its timer. */
#ifndef STRAND_LOG_LOG_MGR_H
#define STRAND_LOG_LOG_MGR_H

#include <stddef.h>
#include <stdint.h>

#include "log/log.h"
#include "util/buf.h"

typedef struct log_mgr_s log_mgr_t;

typedef struct log_mgr_config_s {
    const char *const *dirs; /* log.dirs */
    int ndirs;
    int32_t node_id;         /* node.id */
    /* The cluster id this node must belong to, or NULL to take the one in
     * meta.properties (or generate one on a first start). */
    const char *cluster_id;
    log_config_t defaults;   /* config of logs found at startup */
} log_mgr_config_t;

/* Opens the log dirs: creates missing ones, writes meta.properties on a
 * first start (generating cluster.id and directory.id), checks node.id and
 * cluster.id on later starts, removes leftover "-delete" dirs, and opens
 * (recovering if the last shutdown was not clean) every partition log.
 * Returns a manager owned by the caller (log_mgr_close()), or NULL with a
 * human-readable reason in err (e.g. a node.id mismatch). */
log_mgr_t *log_mgr_open(const log_mgr_config_t *cfg, int64_t now_ms,
                        char *err, size_t errlen);

/* Clean close: closes every log (flush, snapshot), writes the checkpoint
 * files and .kafka_cleanshutdown with broker_epoch (-1 if none), and
 * frees the manager. Returns 0, or -1 if some step failed. */
int log_mgr_close(log_mgr_t *mgr, int64_t broker_epoch);

/* Frees without flushing or writing anything (tests, fatal errors). */
void log_mgr_free(log_mgr_t *mgr);

/* The cluster id (22-char base64 string), owned by the manager. */
const char *log_mgr_cluster_id(const log_mgr_t *mgr);
/* The broker epoch found in .kafka_cleanshutdown at open, or -1 if the
 * previous shutdown was not clean. */
int64_t log_mgr_prev_broker_epoch(const log_mgr_t *mgr);
int log_mgr_ndirs(const log_mgr_t *mgr);
const char *log_mgr_dir_path(const log_mgr_t *mgr, int i);
void log_mgr_dir_id(const log_mgr_t *mgr, int i, uint8_t out[16]);

/* The open log of a partition, owned by the manager, or NULL. */
log_t *log_mgr_get(log_mgr_t *mgr, const char *topic, int32_t partition);
/* Which log dir (index) holds the partition, or -1. */
int log_mgr_dir_of(const log_mgr_t *mgr, const char *topic,
                   int32_t partition);

/* The topic id in the partition's partition.metadata; 0 if none. */
int log_mgr_topic_id(const log_mgr_t *mgr, const char *topic,
                     int32_t partition, uint8_t out[16]);

/* Returns the partition's log, creating it (in the log dir with the fewest
 * partitions) if needed, with cfg (NULL = the defaults) and writing
 * partition.metadata with topic_id (may be NULL). For an existing log the
 * config is replaced by cfg when given. The log is owned by the manager.
 * Returns NULL with errno set on failure; EEXIST if the existing log has
 * another topic id (INCONSISTENT_TOPIC_ID). */
log_t *log_mgr_create(log_mgr_t *mgr, const char *topic, int32_t partition,
                      const uint8_t topic_id[16], const log_config_t *cfg,
                      int64_t now_ms);

/* log_mgr_create in log dir `dir` (index), or the least loaded when dir
 * is -1 or not a log dir. */
log_t *log_mgr_create_in(log_mgr_t *mgr, int dir, const char *topic, int32_t partition,
                         const uint8_t topic_id[16], const log_config_t *cfg, int64_t now_ms);
/* Partitions in log dir i, and the index of the log dir with this
 * directory.id (-1 if none). */
int log_mgr_dir_nparts(const log_mgr_t *mgr, int i);
int log_mgr_dir_index(const log_mgr_t *mgr, const uint8_t id[16]);

/* A partition log made in three steps, so that the files are created and
 * fsynced on a worker thread: log_mgr_new_prepare (loop) picks the log
 * dir (dir, or the least loaded when -1) and the names; log_mgr_new_build
 * (any thread: it touches only n and the new directory) creates and opens
 * the log, writes partition.metadata and fsyncs the log dir;
 * log_mgr_new_adopt (loop) makes the log the manager's and returns it, or
 * NULL with errno when the build failed (its directory is removed then).
 * log_mgr_new_discard drops a built log nobody wants any more (its topic
 * was deleted meanwhile) and removes its directory. prepare returns 0, or
 * -1 with errno (EEXIST: the manager has the partition already). */
typedef struct log_mgr_new_s {
    int dir;
    char *dirpath, *pdir, *topic;
    int32_t partition;
    uint8_t topic_id[16];
    int has_topic_id;
    log_config_t cfg;
    int64_t now_ms;
    int32_t leader_epoch; /* >= 0: recorded in the new log's epoch cache (its
                             leader-epoch-checkpoint written on the worker too) */
    log_t *log;
    int err;
} log_mgr_new_t;

int log_mgr_new_prepare(log_mgr_t *mgr, int dir, const char *topic, int32_t partition,
                        const uint8_t topic_id[16], const log_config_t *cfg, int64_t now_ms,
                        log_mgr_new_t *n);
void log_mgr_new_build(log_mgr_new_t *n);
log_t *log_mgr_new_adopt(log_mgr_t *mgr, log_mgr_new_t *n);
void log_mgr_new_discard(log_mgr_new_t *n);

/* Deletes a partition: closes its log and renames its directory to
 * "<topic>-<p>.<uuid hex>-delete"; the files are removed by log_mgr_purge()
 * after file.delete.delay.ms. Returns 0, or -1 with errno (ENOENT if the
 * partition is not here). */
int log_mgr_delete(log_mgr_t *mgr, const char *topic, int32_t partition,
                   int64_t now_ms);

/* Moves a partition's log aside, as Kafka does with a stray replica: closes
 * it and renames its directory to "<topic>-<p>.<uuid hex>-stray", which is
 * kept (never opened, never removed: an operator's to inspect or delete).
 * Returns 0, or -1 with errno (ENOENT if the partition is not here). */
int log_mgr_set_aside(log_mgr_t *mgr, const char *topic, int32_t partition);

/* Removes the deleted directories whose delay has passed. Returns the
 * number removed. */
int log_mgr_purge(log_mgr_t *mgr, int64_t now_ms);
/* The same in three steps, so that the files are removed on a worker:
 * take (loop) the directories due, run (any thread) removes them, back
 * (loop) keeps those that could not be removed for the next purge and
 * frees pg; it returns the number removed. */
typedef struct log_mgr_purge_s {
    struct {
        char *path;
        int64_t due_ms;
        int failed;
    } *v;
    int n;
} log_mgr_purge_t;
void log_mgr_purge_take(log_mgr_t *mgr, int64_t now_ms, log_mgr_purge_t *pg);
void log_mgr_purge_run(log_mgr_purge_t *pg);
int log_mgr_purge_back(log_mgr_t *mgr, log_mgr_purge_t *pg);

/* Calls fn for every open log, in no particular order. fn must not create
 * or delete partitions. */
void log_mgr_foreach(log_mgr_t *mgr, void (*fn)(log_t *log, void *opaque),
                     void *opaque);
int log_mgr_count(const log_mgr_t *mgr);

/* Writes recovery-point-offset-checkpoint, log-start-offset-checkpoint and
 * replication-offset-checkpoint of every log dir (tmp, fsync, rename,
 * fsync dir). Returns 0 or -1 with errno. */
int log_mgr_checkpoint(log_mgr_t *mgr);

/* The same in three steps, so that the files are written and fsynced on a
 * worker: begin (loop) renders every file's text, run (any thread: it
 * touches only ck) writes them, end (loop) logs what failed and frees ck.
 * end returns 0 or -1. */
typedef struct log_mgr_ckpt_s {
    struct log_mgr_ckpt_file_s {
        char *path;
        buf_t data;
        int rc;
        int err;
    } *files;
    int nfiles;
} log_mgr_ckpt_t;
void log_mgr_checkpoint_begin(log_mgr_t *mgr, log_mgr_ckpt_t *ck);
void log_mgr_checkpoint_run(log_mgr_ckpt_t *ck);
int log_mgr_checkpoint_end(log_mgr_ckpt_t *ck);

/* Housekeeping step for the caller's timer: retention and producer-id
 * expiry on every log. Returns the number of segments deleted. */
int log_mgr_retention(log_mgr_t *mgr, int64_t now_ms);

#endif
