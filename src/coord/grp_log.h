/* The coordinator on a running broker: its timers on the event loop, its
 * state in the internal topic __consumer_offsets (created on first use,
 * like Kafka's, cleanup.policy=compact without retention), and the replay
 * of that topic when it starts. Replay runs in slices on the loop, so a
 * large topic delays nothing else; groups of a partition still loading
 * answer COORDINATOR_LOAD_IN_PROGRESS. Until the log layer compacts, a
 * partition that grows to four times its live state (and at least
 * min(16 MiB, offsets.topic.segment.bytes)) is rewritten from the live
 * state and its older records deleted, which keeps the topic and the
 * replay small. */
#ifndef STRAND_COORD_GRP_LOG_H
#define STRAND_COORD_GRP_LOG_H

#include "coord/grp.h"
#include "net/net_loop.h"
#include "partition/part.h"

#define GRP_LOG_TOPIC "__consumer_offsets"

typedef struct grp_log_config_s {
    grp_config_t grp;
    int64_t segment_bytes; /* offsets.topic.segment.bytes, 104857600 */
} grp_log_config_t;

/* Opens the coordinator: finds or creates __consumer_offsets (with
 * cfg->grp.num_partitions partitions when it is new; an existing topic
 * keeps its count) and starts replaying it. Returns a coordinator owned
 * by the caller (grp_log_close), or NULL after logging why the topic
 * cannot be created. */
grp_coord_t *grp_log_open(net_loop_t *loop, part_reg_t *reg, const grp_log_config_t *cfg);
/* Stops the replay and the timers and frees the coordinator. */
void grp_log_close(grp_coord_t *c);

#endif
