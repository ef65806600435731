/* A quorum's partition as leader or follower, and what its leader knows
 * of the followers (part.h, "roles and replicas"). The metadata image is
 * the truth for roles: the controller writes leader, epochs, replicas
 * and ISR in PartitionRecords and PartitionChangeRecords, and every
 * replica takes its role from them, as a KRaft broker's ReplicaManager
 * applies a TopicsDelta (makeLeader / makeFollower). The leader learns
 * each follower's log end from its fetches and moves the high watermark
 * to the smallest log end of the ISR, which completes acks=all produces
 * (part_append.c's delayed produce watches the partition). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_image.h"
#include "partition/part_fetcher.h"
#include "partition/part_int.h"
#include "util/logging.h"
#include "util/mem.h"

static bool part_role_in(const int32_t *v, int32_t n, int32_t id)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == id)
            return true;
    return false;
}

/* The image's replica list; what was known of a follower is kept unless
 * reset (a new leadership, which knows nothing yet, as Kafka's
 * resetReplicaState): then its log end is unknown (-1, which holds the
 * high watermark until it fetches) and an ISR member counts as caught up
 * now. */
static void part_role_replicas(part_t *part, const mi_part_t *mp, int64_t now_ms, bool reset)
{
    int32_t n = mp->nreplicas;
    part_replica_t *v = xcalloc(n > 0 ? (size_t)n : 1, sizeof(*v));

    for (int32_t i = 0; i < n; i++) {
        const part_replica_t *old = part_replica_get(part, mp->replicas[i]);
        if (old && !reset) {
            v[i] = *old;
            continue;
        }
        v[i].node_id = mp->replicas[i];
        v[i].log_end_offset = -1;
        v[i].last_fetch_leo = -1;
        v[i].broker_epoch = -1;
        v[i].log_start_offset = -1;
        if (part_role_in(mp->isr, mp->nisr, mp->replicas[i]))
            v[i].last_caught_up_ms = now_ms;
    }
    free(part->replicas);
    part->replicas = v;
    part->nreplicas = n;
}

static void part_role_isr(part_t *part, const mi_part_t *mp)
{
    int32_t *isr = xcalloc(mp->nisr > 0 ? (size_t)mp->nisr : 1, sizeof(*isr));
    if (mp->nisr > 0)
        memcpy(isr, mp->isr, (size_t)mp->nisr * sizeof(*isr));
    free(part->isr);
    part->isr = isr;
    part->nisr = mp->nisr;
}

/* A new leadership: its epoch starts at the log end, as Kafka's
 * Partition.makeLeader assigns it before the first append. */
static void part_role_lead(part_t *part)
{
    if (part->leader_epoch > log_latest_epoch(part->log) &&
        log_epoch_assign(part->log, part->leader_epoch, log_end_offset(part->log)) < 0)
        lg_warn("%s-%d: cannot write leader-epoch-checkpoint: %s", part->topic->name,
                part->index, strerror(errno));
}

void part_set_role(part_reg_t *reg, part_t *part, const mi_part_t *mp, int64_t now_ms)
{
    int32_t epoch = mp->leader_epoch < 0 ? 0 : mp->leader_epoch;
    bool held = reg->quorum && !reg->caught_up;
    int32_t leader = held ? -1 : mp->leader;
    bool lead = leader == part->node_id;
    bool reset = lead && (!part_is_leader(part) || epoch != part->leader_epoch);

    /* A new leadership or partition epoch: what this node proposed is
     * answered by the image, or no longer its to propose. */
    if (!lead || reset || mp->partition_epoch != part->partition_epoch)
        part_isr_clear(part);
    part_role_replicas(part, mp, now_ms, reset);
    part_role_isr(part, mp);
    part->leader = leader;
    part->leader_epoch = epoch;
    part->partition_epoch = mp->partition_epoch;
    if (reset)
        lg_info("%s-%d: leader at epoch %d", part->topic->name, part->index, epoch);
    if (lead)
        part_role_lead(part);
    if (reset)
        part->epoch_start = log_end_offset(part->log);
    if (lead || leader < 0)
        part_fetcher_unfollow(reg, part);
    else
        part_fetcher_follow(reg, part);
    part_update_hwm(part);
    part_notify(part);
}

/* Kafka's Replica.updateFetchStateOrThrow: caught up when the fetch
 * reached the leader's log end of now, or of the previous fetch. */
static void part_replica_caught_up(part_replica_t *r, int64_t fetch_offset, int64_t leo,
                                   int64_t now_ms)
{
    if (fetch_offset >= leo) {
        if (now_ms > r->last_caught_up_ms)
            r->last_caught_up_ms = now_ms;
    } else if (r->last_fetch_leo >= 0 && fetch_offset >= r->last_fetch_leo &&
               r->last_fetch_ms > r->last_caught_up_ms) {
        r->last_caught_up_ms = r->last_fetch_ms;
    }
    r->last_fetch_leo = leo;
    r->last_fetch_ms = now_ms;
}

int16_t part_replica_fetched(part_reg_t *reg, part_t *part, int32_t replica_id,
                             int64_t broker_epoch, int64_t fetch_offset, int64_t log_start,
                             int64_t now_ms)
{
    part_replica_t *r = part_replica_get(part, replica_id);
    int64_t leo = log_end_offset(part->log);

    if (!r)
        return KERR_UNKNOWN_LEADER_EPOCH;
    if (broker_epoch != -1 && broker_epoch < r->broker_epoch)
        return KERR_NOT_LEADER_OR_FOLLOWER;
    if (broker_epoch != -1)
        r->broker_epoch = broker_epoch;
    part_replica_caught_up(r, fetch_offset, leo, now_ms);
    r->log_end_offset = fetch_offset > leo ? leo : fetch_offset;
    r->log_start_offset = log_start;
    if (part_update_hwm(part))
        part_notify(part);
    part_isr_fetched(reg, part, r);
    return KERR_NONE;
}
