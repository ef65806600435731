/* The bootstrap metadata `strand format` leaves in a controller's metadata
 * log dir: the feature levels the cluster starts at and, for a dynamic
 * quorum, its initial voters. */
#ifndef STRAND_BROKER_BOOT_H
#define STRAND_BROKER_BOOT_H

#include <stddef.h>
#include <stdint.h>

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
    int16_t kraft_version;    /* 1 for a dynamic quorum with initial voters, else 0 */
    broker_boot_voter_t *voters; /* owned by the caller; none for a static quorum */
    int nvoters;
} broker_boot_t;

/* Writes boot into the metadata log dir meta_dir as Kafka 4.4's format
 * does: __cluster_metadata-0/00000000000000000000-0000000000.checkpoint, a
 * snapshot holding the FeatureLevelRecords and, with voters, the
 * KRaftVersion and Voters control records. Returns 0, or -1 with the
 * reason in err.
 * The snapshot writer is the metadata snapshot module's (cluster layer);
 * until it exists this writes nothing and the controller bootstraps at its
 * default level on its first start, as before (see broker_boot.c). */
int broker_boot_write(const char *meta_dir, const broker_boot_t *boot, char *err, size_t errlen);

#endif
