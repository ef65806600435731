/* The coordinator's host (grp_log.c: timers, replay, open and close;
 * grp_log_write.c: writes through the partition layer, the wait for
 * their commit, and the rewrites that keep __consumer_offsets small),
 * shared by those two files only. */
#ifndef STRAND_COORD_GRP_LOG_INT_H
#define STRAND_COORD_GRP_LOG_INT_H

#include "coord/coord_replay.h"
#include "coord/grp_log.h"

typedef struct grp_log_s {
    net_loop_t *loop;
    part_reg_t *reg;
    const struct meta_image_s *img; /* grp_log_config_t's */
    int32_t node_id;
    grp_coord_t *coord;
    int32_t nparts;
    /* The coordinator's timers: a min-heap on due time, served by one
     * loop timer (tick_id) armed for the earliest (tick_due; INT64_MAX:
     * none). */
    grp_timer_t **heap;
    int32_t nheap, capheap;
    int64_t tick_due;
    net_timer_id_t tick_id;
    uint64_t next_id;
    /* Writes: where each partition's last write ends (what a reply must
     * see committed), and how long to wait for that. */
    int64_t *written_end;
    int32_t commit_timeout_ms;
    /* Rewrites (compaction) due, run from their own timer. */
    grp_timer_t compact_timer;
    bool *compact_due;
    bool *compacting;    /* a rewrite waits for its flush */
    int64_t *compact_at; /* log size that triggers the next rewrite */
    int64_t compact_min;
    /* Leadership (grp_log_lead.c): the partitions led here as last seen,
     * checked again by follow_timer. */
    bool *led;
    grp_timer_t follow_timer;
    /* Replay: the partitions still to load, the one being read (-1:
     * none) and where, up to which end. */
    bool *load_want;
    grp_timer_t load_timer;
    int32_t load_part;
    coord_replay_t load;
    int64_t load_start_ms;
} grp_log_t;

/* The smallest size a partition must reach before a rewrite (see
 * grp_log_write.c). */
#define GRP_LOG_COMPACT_MIN (16 << 20)

/* The partition of __consumer_offsets, or NULL. */
part_t *grp_log_part(grp_log_t *h, int32_t p);
/* true when this node leads partition p: a single node leads every one
 * it has; a quorum's broker those whose leader in the image is itself. */
bool grp_log_leads(const grp_log_t *h, int32_t p);
/* Reads partition part from its log start again (load_part's). */
void grp_log_load_from_start(grp_log_t *h, part_t *part);
/* Arms follow_timer on a quorum's broker (grp_log_lead.c). */
void grp_log_follow_start(grp_log_t *h);
/* (Re)arms one of the host's own timers. */
void grp_log_arm(grp_log_t *h, grp_timer_t *t, int64_t ms);
/* grp_env_t.store: appends recs to partition p through the partition
 * layer, placed at once. */
int16_t grp_log_store(void *ctx, int32_t p, const grp_recs_t *recs);
/* The compaction timer's callback. */
void grp_log_compact_step(grp_timer_t *t);

#endif
