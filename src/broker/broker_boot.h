/* The bootstrap metadata `strand format` leaves in a controller's metadata
 * log dir: the feature levels the cluster starts at and, for a dynamic
 * quorum, its kraft.version and initial voters. */
#ifndef STRAND_BROKER_BOOT_H
#define STRAND_BROKER_BOOT_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/raft_voters.h"
#include "util/buf.h"

/* One initial voter of a dynamic quorum (--standalone or
 * --initial-controllers): its id, its controller endpoint and the
 * directory id of its metadata log dir. */
typedef struct broker_boot_voter_s {
    int32_t id;
    char host[256];
    int port;
    char listener[64]; /* the controller listener's name (upper case) */
    uint8_t dir_id[16];
} broker_boot_voter_t;

typedef struct broker_boot_s {
    int16_t metadata_version; /* the metadata.version level */
    /* 1 for a controller of a dynamic quorum (no controller.quorum.voters),
     * with or without initial voters; 0 for a static quorum */
    int16_t kraft_version;
    broker_boot_voter_t *voters; /* owned by the caller; none for a static quorum */
    int nvoters;
    int16_t elr_version;      /* eligible.leader.replicas.version (0: off) */
} broker_boot_t;

/* The bootstrap checkpoint's name in __cluster_metadata-0 (snapshot id
 * 0-0, which a node's own snapshots never take). */
#define BROKER_BOOT_FILE "00000000000000000000-0000000000.checkpoint"

/* The checkpoint's bytes, appended to out: a metadata snapshot (id 0-0,
 * meta_snap.h) whose header batch holds the SnapshotHeaderRecord
 * (lastContainedLogTimestamp last_ts) and, with kraft.version 1, a
 * KRaftVersionRecord and, with voters, a VotersRecord (each voter's
 * endpoint under its listener name, kraft.version 0-1); then the
 * FeatureLevelRecord of metadata.version; then the footer. now_ms is the
 * batches' CreateTime. */
void broker_boot_build(const broker_boot_t *boot, int64_t last_ts, int64_t now_ms, buf_t *out);

/* Writes boot into the metadata log dir meta_dir as Kafka 4.4's format
 * does: __cluster_metadata-0/00000000000000000000-0000000000.checkpoint
 * (broker_boot_build at the current time). Returns 0, or -1 with the
 * reason in err. */
int broker_boot_write(const char *meta_dir, const broker_boot_t *boot, char *err, size_t errlen);

/* What a node reads of the checkpoint at start-up. */
typedef struct broker_boot_state_s {
    int present;              /* 0: no checkpoint (not formatted, or a broker) */
    int16_t metadata_version; /* 0 when the checkpoint finalizes none */
    int16_t elr_version;      /* eligible.leader.replicas.version, 0: none */
    int16_t kraft_version;    /* 0 without a KRaftVersionRecord */
    int has_voters;           /* a VotersRecord was there */
    raft_voters_t voters;     /* owned: broker_boot_state_free */
} broker_boot_state_t;

/* Reads meta_dir's bootstrap checkpoint into st. Returns 0 (st->present
 * 0 when there is none), or -1 with the reason in err (a checkpoint that
 * does not parse). */
int broker_boot_read(const char *meta_dir, broker_boot_state_t *st, char *err, size_t errlen);
void broker_boot_state_free(broker_boot_state_t *st);

#endif
