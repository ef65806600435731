/* The voter set of a dynamic metadata quorum (kraft.version 1) and the
 * control records that carry it, as KRaft keeps them:
 *
 *   KRaftVersionRecord (control type 5), value: int16 version 0 | int16
 *     kraft.version | tagged fields;
 *   VotersRecord (control type 6), value: int16 version 0 | compact array
 *     of voters: int32 id | uuid directory id | compact array of
 *     endpoints (compact string listener name | compact string host |
 *     uint16 port | tagged fields) | kraft.version range (int16 min |
 *     int16 max | tagged fields) | tagged fields | tagged fields.
 *
 * They stand after the SnapshotHeaderRecord of a snapshot (the bootstrap
 * checkpoint `strand format` writes among them) and as control batches in
 * the log, where each VotersRecord replaces the set from its offset on.
 * raft_voters_hist_t keeps those sets by offset: the set in force at any
 * offset, and a truncation of the log that removes a VotersRecord brings
 * back the set before it. Pure data: no disk, no clock. */
#ifndef STRAND_CLUSTER_RAFT_VOTERS_H
#define STRAND_CLUSTER_RAFT_VOTERS_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/meta_snap.h"
#include "util/buf.h"

#define RAFT_VOTER_MAX_ENDPOINTS 8

typedef struct raft_endpoint_s {
    char name[64];  /* the controller listener's name */
    char host[256];
    uint16_t port;
} raft_endpoint_t;

typedef struct raft_voter_s {
    int32_t id;
    uint8_t dir_id[16];
    raft_endpoint_t eps[RAFT_VOTER_MAX_ENDPOINTS];
    int neps;
    int16_t kv_min, kv_max; /* the kraft.version range the voter supports */
} raft_voter_t;

/* A voter set: plain values, copied by assignment of its array. */
typedef struct raft_voters_s {
    raft_voter_t *v; /* owned: raft_voters_free */
    int n;
} raft_voters_t;

void raft_voters_init(raft_voters_t *vs);
void raft_voters_free(raft_voters_t *vs);
/* dst becomes a copy of src (dst's old set freed). */
void raft_voters_copy(raft_voters_t *dst, const raft_voters_t *src);
/* Appends a copy of v. */
void raft_voters_add(raft_voters_t *vs, const raft_voter_t *v);
/* The voter with this id, or NULL. */
const raft_voter_t *raft_voters_find(const raft_voters_t *vs, int32_t id);
/* Whether two sets hold the same voters, endpoints and ranges, in order. */
int raft_voters_equal(const raft_voters_t *a, const raft_voters_t *b);

/* Appends the VotersRecord value of vs (version 0) to out, as a control
 * record's value (the form meta_snap_ctl_t and the log's control batches
 * carry). */
void raft_voters_encode(const raft_voters_t *vs, buf_t *out);
/* Decodes a VotersRecord value into vs (empty). Returns 0, or -1 when it
 * is not one (vs then empty). */
int raft_voters_decode(raft_voters_t *vs, const uint8_t *p, size_t len);
/* Appends the KRaftVersionRecord value of kraft.version level to out. */
void raft_kraft_version_encode(int16_t level, buf_t *out);
/* Decodes a KRaftVersionRecord value. Returns the level, or -1. */
int raft_kraft_version_decode(const uint8_t *p, size_t len);

/* ---- the sets by offset ---- */

typedef struct raft_voters_entry_s {
    int64_t offset; /* the record's offset (-1: the snapshot's, before the log) */
    int16_t kraft_version;
    int has_set; /* 0: kraft.version 1 with no voters yet (--no-initial-controllers) */
    raft_voters_t set;
} raft_voters_entry_t;

typedef struct raft_voters_hist_s {
    raft_voters_entry_t *e; /* owned, by offset ascending */
    int n, cap;
} raft_voters_hist_t;

void raft_voters_hist_init(raft_voters_hist_t *h);
void raft_voters_hist_free(raft_voters_hist_t *h);
/* Records that from offset on, kraft.version is kv and the voters are vs
 * (copied; vs NULL keeps the set in force before offset). An entry at or
 * past offset is replaced (a log rewritten from there). */
void raft_voters_hist_put(raft_voters_hist_t *h, int64_t offset, int16_t kv,
                          const raft_voters_t *vs);
/* The entry in force at offset (the last at or before it), or NULL when
 * none is (a static quorum, or no voters known yet). Borrowed: valid
 * until the next put or truncate. */
const raft_voters_entry_t *raft_voters_hist_at(const raft_voters_hist_t *h, int64_t offset);
/* The latest entry, or NULL. */
const raft_voters_entry_t *raft_voters_hist_last(const raft_voters_hist_t *h);
/* The log was truncated to end_offset (records at and past it removed):
 * so are their entries, and the set before them is in force again. */
void raft_voters_hist_truncate(raft_voters_hist_t *h, int64_t end_offset);
/* The log before start_offset was deleted (a snapshot covers it): entries
 * older than the one in force at start_offset are dropped. */
void raft_voters_hist_trim(raft_voters_hist_t *h, int64_t start_offset);

/* What a snapshot ending at end_offset (records before it) holds after
 * its header on a kraft.version 1 quorum: the KRaftVersionRecord and the
 * VotersRecord in force at end_offset - 1, as ctl[0..2) whose values are
 * encoded into scratch (ctl borrows scratch: keep it until the snapshot is
 * framed). Returns the number of control records: 0 when no entry is in
 * force (kraft.version 0: the header alone), 1 (kraft.version without a
 * voter set yet) or 2. */
int raft_voters_hist_ctl(const raft_voters_hist_t *h, int64_t end_offset, meta_snap_ctl_t ctl[2],
                         buf_t *scratch);

/* Adds the KRaftVersion and Voters records of the control batches among
 * whole batches p[0..len) (as the log holds them) to h. Returns the
 * offset after the last batch read (from when there was none). */
int64_t raft_voters_hist_scan(raft_voters_hist_t *h, const uint8_t *p, size_t len, int64_t from);

struct log_s;
/* Adds the KRaftVersion and Voters records of the log's control batches
 * from offset from to its end, in order (start-up: after the snapshot's
 * or the bootstrap checkpoint's entry). Reads the disk: for start-up.
 * Returns 0, or -1 with errno. */
int raft_voters_hist_load(raft_voters_hist_t *h, struct log_s *log, int64_t from);

#endif
