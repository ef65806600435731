/* Metadata snapshots: the image at a committed offset of the metadata log,
 * in Kafka's snapshot files (`<end offset, 20 digits>-<epoch, 10
 * digits>.checkpoint` in __cluster_metadata-0; byte layout in
 * meta_snap.c), so that a node starts from the latest one and replays only
 * the log after it, the log before it can be deleted, and a node far
 * behind can be sent one (FetchSnapshot reads a snapshot's bytes by
 * position).
 *
 * The snapshot id is Kafka's OffsetAndEpoch: end_offset is the offset
 * after the last record the snapshot contains (the first one a reader
 * replays from the log), epoch the leader epoch of that last record.
 *
 * Steps, so that the event loop does only what needs the image:
 * meta_snap_collect() encodes the image's records (on the loop, the
 * image's owner), meta_snap_frame() makes the batches and
 * meta_snap_write() writes the file atomically (any thread: a worker),
 * and the loop then records the new snapshot and cleans what it replaces
 * (meta_log.h, "snapshots"). */
#ifndef STRAND_CLUSTER_META_SNAP_H
#define STRAND_CLUSTER_META_SNAP_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "cluster/meta_image.h"
#include "util/buf.h"

typedef struct meta_snap_id_s {
    int64_t end_offset;
    int32_t epoch;
} meta_snap_id_t;

/* A control record the writer puts after the SnapshotHeaderRecord, in the
 * header's batch, as Kafka does with KRaftVersionRecord and VotersRecord
 * when kraft.version is 1 (the format command and the Raft layer pass
 * them). value: the record's value (proto_rec_<R>_write), borrowed. */
typedef struct meta_snap_ctl_s {
    int16_t type; /* PROTO_REC_K_RAFT_VERSION_RECORD, PROTO_REC_VOTERS_RECORD */
    const uint8_t *value;
    size_t len;
} meta_snap_ctl_t;

/* What a snapshot said besides the image. */
typedef struct meta_snap_info_s {
    int64_t last_ts;  /* SnapshotHeaderRecord.lastContainedLogTimestamp */
    int64_t records;  /* metadata records in the data batches */
    /* Called (when not NULL) for each control record of the header batch
     * after the header: the Raft layer takes KRaftVersion and Voters. */
    void (*on_ctl)(void *arg, int16_t type, const uint8_t *value, size_t len);
    void *arg;
} meta_snap_info_t;

/* The data batches hold at most this many records each (Kafka's image
 * writer hands its snapshot writer 1024 records at a time). */
#define META_SNAP_BATCH_RECORDS 1024

/* ---- the format ---- */

/* The image's records, encoded (values back to back in vals, record i
 * ending at ends[i]): what a snapshot needs of the image, taken on the
 * loop that owns it, so that the batches can be framed on a worker. */
typedef struct meta_snap_recs_s {
    buf_t vals;
    size_t *ends; /* owned */
    int n, cap;
} meta_snap_recs_t;

void meta_snap_recs_init(meta_snap_recs_t *recs);
void meta_snap_recs_free(meta_snap_recs_t *recs);
/* Appends the records of img (meta_image_records) to recs. */
void meta_snap_collect(meta_snap_recs_t *recs, const meta_image_t *img);
/* Appends the snapshot's bytes to out: the header control batch (header,
 * then ctl[0..nctl)), recs in data batches, the footer control batch.
 * last_ts is the timestamp of the last record the snapshot contains;
 * now_ms the batches' CreateTime. Any thread. */
void meta_snap_frame(buf_t *out, meta_snap_id_t id, const meta_snap_recs_t *recs,
                     int64_t last_ts, const meta_snap_ctl_t *ctl, int nctl, int64_t now_ms);

/* meta_snap_collect and meta_snap_frame in one call. */
void meta_snap_build(buf_t *out, meta_snap_id_t id, const meta_image_t *img, int64_t last_ts,
                     const meta_snap_ctl_t *ctl, int nctl, int64_t now_ms);

/* Checks the bytes of a snapshot (every batch's CRC and framing, offsets
 * from 0 without gaps, the header first, the footer last and nothing
 * after it, every record decodable and fitting the image) and applies its
 * records to img, an empty image. info may be NULL. Returns 0, or -1 with
 * the reason in err (img is then partly filled: free it). */
int meta_snap_parse(const uint8_t *p, size_t len, meta_image_t *img, meta_snap_info_t *info,
                    char *err, size_t errlen);

/* The header's lastContainedLogTimestamp from the first batch of a
 * snapshot's bytes p[0..len). Returns 0, or -1 when it is not a valid
 * header batch. */
int meta_snap_header_ts_of(const uint8_t *p, size_t len, int64_t *ts);
/* The same, and the control records after the header (KRaftVersion and
 * Voters) to info->on_ctl, info->last_ts set. Returns 0, or -1. */
int meta_snap_header_ctl_of(const uint8_t *p, size_t len, meta_snap_info_t *info);

/* ---- files ---- */

/* The file name of a snapshot ("00000000000000000155-0000000001.checkpoint")
 * into out (at least 48 bytes). */
void meta_snap_name(meta_snap_id_t id, char *out, size_t cap);
/* Parses a file name; 1 for a snapshot's, 0 otherwise. */
int meta_snap_parse_name(const char *name, meta_snap_id_t *id);

/* Writes the file of snapshot id in dir as Kafka does: the bytes into
 * `<name>.checkpoint.part`, fsync, rename to `<name>.checkpoint`, fsync
 * the directory. Blocking: call on a worker. Returns 0, or -1 with errno
 * (the .part file removed). */
int meta_snap_write(const char *dir, meta_snap_id_t id, const uint8_t *p, size_t len);

/* The snapshots in dir, oldest first, into *ids (owned by the caller:
 * free). Returns their number, or -1 with errno. */
int meta_snap_list(const char *dir, meta_snap_id_t **ids);
/* The latest snapshot in dir: 1 (with *id), 0 when there is none, -1 with
 * errno. */
int meta_snap_latest(const char *dir, meta_snap_id_t *id);
/* Removes the file of snapshot id and fsyncs dir. 0 or -1 with errno. */
int meta_snap_remove(const char *dir, meta_snap_id_t id);

/* Reads and parses the file of snapshot id into img (empty). Returns 0,
 * or -1 with the reason in err (errno set: EBADMSG for a corrupt file). */
int meta_snap_load(const char *dir, meta_snap_id_t id, meta_image_t *img,
                   meta_snap_info_t *info, char *err, size_t errlen);

/* The SnapshotHeaderRecord's lastContainedLogTimestamp of snapshot id
 * (reads only its first batch: the age Kafka's retention goes by).
 * Returns 0, or -1 with errno (EBADMSG: no valid header). */
int meta_snap_header_ts(const char *dir, meta_snap_id_t id, int64_t *ts);
/* The control records of snapshot id's header batch to info->on_ctl (the
 * voters of a dynamic quorum), reading only that batch. Returns 0, or -1
 * with errno (EBADMSG: no valid header). */
int meta_snap_header_ctl(const char *dir, meta_snap_id_t id, meta_snap_info_t *info);

/* Start-up: removes the `.checkpoint.part` files a crash left, then loads
 * the latest snapshot that parses, among those with an end offset within
 * [min_end, max_end] (the log must hold what follows it), into img
 * (empty); snapshots that do not parse are logged and removed. Id 0-0 is
 * passed over: it is the bootstrap checkpoint `strand format` writes
 * (read by src/broker/broker_boot.c), as Kafka's loader passes over it.
 * Returns 1
 * with *id, 0 when none qualifies (img untouched), -1 with errno. */
int meta_snap_recover(const char *dir, int64_t min_end, int64_t max_end, meta_image_t *img,
                      meta_snap_id_t *id, meta_snap_info_t *info);

/* ---- raw access (what FetchSnapshot sends) ---- */

typedef struct meta_snap_reader_s {
    int fd;
    int64_t size;
    meta_snap_id_t id;
} meta_snap_reader_t;

/* Opens the file of snapshot id for reading. Returns 0 (close with
 * meta_snap_reader_close), or -1 with errno (ENOENT: no such snapshot). */
int meta_snap_reader_open(meta_snap_reader_t *rd, const char *dir, meta_snap_id_t id);
/* Up to n bytes from position pos into p. Returns the count (0 at the
 * end), or -1 with errno. rd->fd and a position also serve sendfile. */
ssize_t meta_snap_reader_read(const meta_snap_reader_t *rd, int64_t pos, uint8_t *p, size_t n);
void meta_snap_reader_close(meta_snap_reader_t *rd);

#endif
