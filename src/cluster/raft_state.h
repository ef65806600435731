/* The quorum-state file of a Raft node (`__cluster_metadata-0/quorum-state`):
 * its epoch, the epoch's leader and its vote, as Kafka's
 * FileQuorumStateStore writes them: one line of JSON, replaced atomically
 * (quorum-state.tmp, fsync, rename, fsync of the directory).
 *
 *   data_version 0 (a static quorum, controller.quorum.voters):
 *   {"clusterId":"","leaderId":1,"leaderEpoch":9,"votedId":-1,
 *    "appliedOffset":0,"currentVoters":[{"voterId":1}],"data_version":0}
 *   data_version 1 (a dynamic quorum: the voters are in the log):
 *   {"leaderId":1,"leaderEpoch":9,"votedId":-1,
 *    "votedDirectoryId":"AAAAAAAAAAAAAAAAAAAAAA","data_version":1}
 *
 * Keys are read in any order and unknown keys are passed over, as a JSON
 * reader would; a file that is not such an object is refused. */
#ifndef STRAND_CLUSTER_RAFT_STATE_H
#define STRAND_CLUSTER_RAFT_STATE_H

#include <stddef.h>
#include <stdint.h>

#include "cluster/raft.h"

#define RAFT_STATE_FILE "quorum-state"

typedef struct raft_qstate_s {
    int version;               /* data_version: 0 or 1 */
    int32_t epoch, leader_id, voted_id;
    uint8_t voted_dir[16];     /* version 1: the voted replica's directory id */
    int32_t voters[RAFT_MAX_VOTERS]; /* version 0: currentVoters */
    int nvoters;
} raft_qstate_t;

/* The state of a node that has never written one: epoch 0, no leader, no
 * vote. */
void raft_qstate_init(raft_qstate_t *st, int version);
/* Encodes st as the file's one line into out (NUL-terminated). Returns
 * its length, or -1 when cap is too small. */
int raft_qstate_encode(const raft_qstate_t *st, char *out, size_t cap);
/* Decodes a file's text. Returns 0, or -1 with Kafka-like words in err
 * when it is not a quorum state. */
int raft_qstate_decode(const char *text, raft_qstate_t *st, char *err, size_t errlen);
/* Reads dir/quorum-state: 0 and st filled; 1 when the file is missing
 * (st is then raft_qstate_init's, version 0); -1 with err when it cannot
 * be read or is malformed. */
int raft_qstate_read(const char *dir, raft_qstate_t *st, char *err, size_t errlen);
/* Replaces dir/quorum-state durably. Blocks on the disk: run it on a
 * worker, never on the event loop. Returns 0 or -1 with errno. */
int raft_qstate_write(const char *dir, const raft_qstate_t *st);

#endif
