/* Internals shared by the coordinator's files (grp.c: groups, members,
 * timers, waiters, offsets in memory; grp_store.c: records and writes;
 * grp_load.c: replay; grp_join.c: the rebalance protocol; grp_offsets.c:
 * offset APIs, expiry and the admin operations). */
#ifndef STRAND_COORD_GRP_INT_H
#define STRAND_COORD_GRP_INT_H

#include <stddef.h>

#include "coord/grp.h"

#define GRP_CONTAINER(ptr, type, member) ((type *)(void *)((char *)(ptr) - offsetof(type, member)))

struct grp_coord_s {
    grp_config_t cfg;
    grp_env_t env;
    smap_t groups;  /* id -> grp_t */
    bool *loading;  /* per partition */
    int nloading;   /* partitions still loading */
    grp_timer_t expire_timer;
    /* The waiter of the request being handled: lets grp_join/grp_sync
     * tell whether it was answered without touching it afterwards (the
     * answer may have freed it). */
    grp_waiter_t *cur_w;
    bool cur_answered;
    uint64_t offset_seq;   /* the last commit's order (grp_offset_t.seq) */
    int32_t *txn_pending;  /* per partition: offsets of undecided transactions */
};

/* ---- grp.c ---- */

int64_t grp_now(grp_coord_t *c);
int64_t grp_wall(grp_coord_t *c);
void grp_timer_arm(grp_coord_t *c, grp_timer_t *t, int64_t ms);
void grp_timer_stop(grp_coord_t *c, grp_timer_t *t);

grp_t *grp_get(grp_coord_t *c, const char *id);
grp_t *grp_create(grp_coord_t *c, const char *id);
/* grp_txn.c: frees a group's pending transactional offsets. */
void grp_txn_offs_free(grp_coord_t *c, grp_t *g);
/* Adds (or, for the same producer and partition, replaces) a pending
 * offset of producer pid's transaction. */
void grp_txn_put(grp_coord_t *c, grp_t *g, int64_t pid, const char *topic, size_t topic_len,
                 int32_t partition, int64_t offset, int32_t epoch, const char *md, size_t md_len,
                 int64_t commit_ts);
/* grp_offsets.c: OffsetCommit (pid -1) and TxnOffsetCommit (the
 * producer's id and epoch): the checks, the records, then the offsets. */
void grp_commit_as(grp_coord_t *c, grp_commit_req_t *req, int64_t pid, int16_t epoch);
/* grp_offsets.c: OffsetCommit's and TxnOffsetCommit's group and checks. */
int16_t grp_commit_group(grp_coord_t *c, grp_commit_req_t *req, bool txn, grp_t **out);
/* Unlinks and frees a group; its members must have no waiters left. */
void grp_destroy(grp_coord_t *c, grp_t *g);
void grp_transition(grp_coord_t *c, grp_t *g, grp_state_t to);
/* INVALID_GROUP_ID for NULL (or, unless allow_empty, ""), then
 * NOT_COORDINATOR while the group's partition is offline, then
 * COORDINATOR_LOAD_IN_PROGRESS while it loads. */
int16_t grp_validate_id(grp_coord_t *c, const char *id, bool allow_empty);

/* A copy owned by the caller (free()), never NULL even for len 0. */
uint8_t *grp_memdup(const void *p, int32_t len);
grp_member_t *grp_member_get(grp_t *g, const char *id);
grp_member_t *grp_member_new(grp_t *g, const grp_join_req_t *req, const char *member_id);
/* Removes a member from the group and frees it (Kafka's group.remove);
 * any waiter it still has is answered with UNKNOWN_MEMBER_ID. */
void grp_member_remove(grp_coord_t *c, grp_member_t *m);
void grp_member_set_protocols(grp_member_t *m, const grp_protocol_t *p, int n);
/* Kafka's completeAndScheduleNextExpiration. */
void grp_hb_schedule(grp_coord_t *c, grp_member_t *m, int64_t timeout);
int32_t grp_rebalance_timeout(const grp_t *g);
/* Recomputes the subscribed topics (consumer protocol). */
void grp_subscribed_update(grp_t *g);
bool grp_subscribed_to(const grp_t *g, const char *topic, size_t len);

/* Answering waiters. */
void grp_reply_join(grp_coord_t *c, grp_waiter_t *w, const grp_join_result_t *res);
void grp_reply_sync(grp_coord_t *c, grp_waiter_t *w, const grp_sync_result_t *res);
/* Kafka's maybeInvokeJoinCallback / maybeInvokeSyncCallback: returns
 * true when the member was awaiting. */
bool grp_member_join_done(grp_coord_t *c, grp_member_t *m, const grp_join_result_t *res);
bool grp_member_sync_done(grp_coord_t *c, grp_member_t *m, const grp_sync_result_t *res);

/* Persistence: the GroupMetadata record of g (with each member's
 * assignment, or none when assign is 0) and offset/group tombstones. */
void grp_recs_group(grp_recs_t *recs, grp_t *g, bool with_assignment, int64_t now_wall);
/* Records the key at [key_off, val_off) of recs->data and the value from
 * val_off to the end (or a tombstone), both encoded there by the caller. */
void grp_recs_done(grp_recs_t *recs, size_t key_off, size_t val_off, int tombstone);
void grp_recs_group_tombstone(grp_recs_t *recs, const grp_t *g);
void grp_recs_offset_tombstone(grp_recs_t *recs, const grp_t *g, const grp_offset_t *o);
/* Sets the group's remembered GroupMetadata value (NULL: none). */
void grp_meta_rec_set(grp_t *g, const uint8_t *v, int32_t len);
/* Appends to the group's partition; maps the log's error as Kafka maps
 * it for group writes (for_offsets 0) or offset commits (1). */
int16_t grp_store(grp_coord_t *c, grp_t *g, const grp_recs_t *recs, int for_offsets);

void grp_offset_put(grp_t *g, const char *topic, size_t topic_len, int32_t partition,
                    int64_t offset, int32_t epoch, const char *md, size_t md_len,
                    int64_t commit_ts, int64_t expire_ts);
void grp_offset_del(grp_t *g, const grp_offset_t *o);
void grp_offsets_free(grp_t *g);

/* ---- grp_join.c ---- */

void grp_maybe_prepare_rebalance(grp_coord_t *c, grp_t *g, const char *reason);
void grp_prepare_rebalance(grp_coord_t *c, grp_t *g, const char *reason);
/* Kafka's removeMemberAndUpdateGroup. */
void grp_member_leave(grp_coord_t *c, grp_member_t *m, const char *reason);
/* Completes the join phase if every member has joined. */
void grp_join_check(grp_coord_t *c, grp_t *g);
void grp_join_timer_cb(grp_timer_t *t);
void grp_sync_timer_cb(grp_timer_t *t);
void grp_pending_timer_cb(grp_timer_t *t);
void grp_hb_timer_cb(grp_timer_t *t);
/* Kafka's validateCurrentMember. */
int16_t grp_validate_member(grp_t *g, const char *member_id, const char *instance_id);

/* ---- grp_offsets.c ---- */

void grp_expire_timer_cb(grp_timer_t *t);

#endif
