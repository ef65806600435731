/* The coordinator on a running broker: its timers on the event loop, its
 * state in the internal topic __consumer_offsets (created on first use,
 * like Kafka's, cleanup.policy=compact without retention) written through
 * the partition layer's append path, and the replay of that topic when it
 * starts. Replay runs in slices on the loop, so a
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

struct meta_image_s;

typedef struct grp_log_config_s {
    grp_config_t grp;
    /* A quorum's broker: the cluster's image, whose leaders say which
     * partitions are this node's (node_id); NULL: a single node, which
     * leads every partition it has. */
    const struct meta_image_s *img;
    int32_t node_id;
    int64_t segment_bytes; /* offsets.topic.segment.bytes, 104857600 */
    int32_t commit_timeout_ms; /* offsets.commit.timeout.ms, 5000 */
} grp_log_config_t;

/* The config __consumer_offsets is created with: base (the topic
 * defaults) compacted, without retention, with offsets.topic.segment.bytes. */
void grp_log_topic_config(const topic_cfg_t *base, const grp_log_config_t *cfg, topic_cfg_t *t);
/* Opens the coordinator on __consumer_offsets (which the caller creates
 * first, with cfg->grp.num_partitions partitions and
 * grp_log_topic_config: an existing topic keeps its count, on a quorum
 * the image's) and starts replaying the partitions it has here. It
 * serves the groups of the partitions it leads: the others are treated
 * as offline (grp.h): NOT_COORDINATOR, not listed, not written. Returns
 * a coordinator owned by the caller (grp_log_close), or NULL when the
 * topic does not exist (here, or in cfg->img). */
grp_coord_t *grp_log_open(net_loop_t *loop, part_reg_t *reg, const grp_log_config_t *cfg);
/* Stops the replay and the timers and frees the coordinator. */
void grp_log_close(grp_coord_t *c);

/* Runs cb(udata, err) once everything the coordinator has written so far
 * to partitions parts[0..n) of __consumer_offsets is committed (err 0:
 * appended, flushed as the flush policy asks, below the high watermark),
 * or failed (KAFKA_STORAGE_ERROR: the partition went offline;
 * REQUEST_TIMED_OUT after offsets.commit.timeout.ms). In the call when
 * nothing is pending, which is the common case. A coordinator applies a
 * change as soon as its records are placed; its answers wait for this,
 * so that no client is told of a change that a crash could lose. */
typedef void grp_log_committed_fn(void *udata, int16_t err);
void grp_log_when_committed(grp_coord_t *c, const int32_t *parts, int n,
                            grp_log_committed_fn *cb, void *udata);
/* On a quorum's broker, follows the image's leaders: a partition it no
 * longer leads is unloaded (grp_unload), one it has become the leader of
 * is loaded from its log. The host does it every second; a caller about
 * to serve a request does it first, so that no request sees a partition
 * led but not loaded. No-op on a single node. */
void grp_log_follow(grp_coord_t *c);
/* The partition of __consumer_offsets that holds a group. */
int32_t grp_log_partition(const grp_coord_t *c, const char *group_id);

#endif
