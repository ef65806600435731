/* The ISR of the partitions led here, as Kafka's Partition keeps it:
 * the leader proposes each change to the controller (AlterPartition,
 * part_isr_wire.c) and takes it only once committed; the controller
 * never changes an ISR on its own, except when it fences a broker.
 *   - Shrink: every replica.lag.time.max.ms / 2, an ISR member that has
 *     not been caught up to the leader's log end for longer than
 *     replica.lag.time.max.ms (and is not at that log end now) is
 *     proposed out, as Kafka's maybeShrinkIsr does.
 *   - Expand: a follower out of the ISR whose fetch reaches the high
 *     watermark and the start of the leader's epoch, on a broker that is
 *     registered with that epoch, unfenced and not shutting down, is
 *     proposed in, as Kafka's maybeExpandIsr does.
 * One proposal at a time per partition. While it is pending, the high
 * watermark waits for the members of both the ISR and the proposal
 * (Kafka's maximal ISR: an expand counts the new member at once, a shrink
 * the old ones until committed), so what it passes is on every replica
 * either ISR may elect. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_image.h"
#include "partition/part_isr_int.h"
#include "util/logging.h"
#include "util/mem.h"

#define PISR_LAG_DEFAULT_MS 30000

static bool pisr_in(const int32_t *v, int32_t n, int32_t id)
{
    for (int32_t i = 0; i < n; i++)
        if (v[i] == id)
            return true;
    return false;
}

int32_t part_isr_maximal(const part_t *part)
{
    int32_t n = part->nisr;
    for (int32_t i = 0; i < part->npend; i++)
        n += !pisr_in(part->isr, part->nisr, part->pend_isr[i]);
    return n;
}

void part_isr_clear(part_t *part)
{
    free(part->pend_isr);
    part->pend_isr = NULL;
    part->npend = 0;
    part->pend_state = PART_ISR_NONE;
}

part_t *pisr_part(part_isr_t *s, const pisr_key_t *k, uint8_t state)
{
    topic_t *t = part_topic_by_id(s->reg, k->topic_id);
    part_t *part = t ? part_get(t, k->partition) : NULL;
    if (!part || !part_is_leader(part) || part->pend_state != state || part->pend_seq != k->seq)
        return NULL;
    return part;
}

static void pisr_fmt(const int32_t *v, int32_t n, char *out, size_t cap)
{
    size_t len = 0;
    out[0] = 0;
    for (int32_t i = 0; i < n && len + 12 < cap; i++)
        len += (size_t)snprintf(out + len, cap - len, "%s%d", i ? "," : "", (int)v[i]);
}

static void pisr_enqueue(part_isr_t *s, const pisr_key_t *k)
{
    if (s->nq == s->cap) {
        s->cap = s->cap ? s->cap * 2 : 16;
        s->queue = xrealloc(s->queue, (size_t)s->cap * sizeof(*s->queue));
    }
    s->queue[s->nq++] = *k;
}

/* Proposes isr (n members, copied) for part: queued for the next
 * AlterPartition. */
static void pisr_propose(part_isr_t *s, part_t *part, const int32_t *isr, int32_t n,
                         const char *why)
{
    char from[96], to[96];
    pisr_key_t k;

    part_isr_clear(part);
    part->pend_isr = xcalloc((size_t)n + 1, sizeof(*isr));
    memcpy(part->pend_isr, isr, (size_t)n * sizeof(*isr));
    part->npend = n;
    part->pend_state = PART_ISR_QUEUED;
    part->pend_seq++;
    pisr_fmt(part->isr, part->nisr, from, sizeof(from));
    pisr_fmt(isr, n, to, sizeof(to));
    lg_info("%s-%d: ISR [%s] -> [%s] proposed (%s)", part->topic->name, part->index, from, to,
            why);
    memcpy(k.topic_id, part->topic->id, 16);
    k.partition = part->index;
    k.seq = part->pend_seq;
    pisr_enqueue(s, &k);
    pisr_kick(s);
}

static void pisr_retry_timer(net_loop_t *loop, void *arg)
{
    part_isr_t *s = arg;
    (void)loop;
    s->retry = 0;
    pisr_kick(s);
}

void pisr_retry_arm(part_isr_t *s)
{
    if (!s->retry && s->reg->loop)
        s->retry = net_timer_add(s->reg->loop, 100, pisr_retry_timer, s);
}

void pisr_requeue(part_isr_t *s, const pisr_key_t *k)
{
    part_t *part = pisr_part(s, k, PART_ISR_SENT);
    if (!part)
        return;
    part->pend_state = PART_ISR_QUEUED;
    pisr_enqueue(s, k);
    pisr_retry_arm(s);
}

void pisr_committed(part_isr_t *s, part_t *part, const int32_t *isr, int32_t nisr,
                    int32_t leader_epoch, int32_t partition_epoch)
{
    char to[96];
    (void)s;
    /* The metadata may have brought it already (or something newer). */
    if (leader_epoch == part->leader_epoch && partition_epoch > part->partition_epoch) {
        int32_t *v = xcalloc((size_t)nisr + 1, sizeof(*v));
        memcpy(v, isr, (size_t)nisr * sizeof(*v));
        free(part->isr);
        part->isr = v;
        part->nisr = nisr;
        part->partition_epoch = partition_epoch;
    }
    part_isr_clear(part);
    pisr_fmt(part->isr, part->nisr, to, sizeof(to));
    lg_info("%s-%d: ISR is [%s] at partition epoch %d", part->topic->name, part->index, to,
            part->partition_epoch);
    /* A shrink lets the high watermark pass what the one that left lacks. */
    if (part_update_hwm(part))
        part_notify(part);
}

/* Kafka's isReplicaIsrEligible: registered with the epoch it fetched
 * with (-1: a fetch that named none), unfenced, not shutting down. */
static bool pisr_eligible(const part_reg_t *reg, int32_t id, int64_t fetch_epoch)
{
    const mi_broker_t *b = meta_image_broker(&reg->meta->img, id);
    return b && !b->fenced && !b->in_controlled_shutdown &&
           (fetch_epoch == -1 || fetch_epoch == b->epoch);
}

void part_isr_fetched(part_reg_t *reg, part_t *part, const part_replica_t *r)
{
    part_isr_t *s = reg->isr_mgr;
    int32_t isr[64];

    if (!s || !part_is_leader(part) || part->pend_state != PART_ISR_NONE ||
        pisr_in(part->isr, part->nisr, r->node_id) || part->nisr >= 63)
        return;
    if (r->log_end_offset < part_hwm(part) || r->log_end_offset < part->epoch_start ||
        !pisr_eligible(reg, r->node_id, r->broker_epoch))
        return;
    memcpy(isr, part->isr, (size_t)part->nisr * sizeof(*isr));
    isr[part->nisr] = r->node_id;
    pisr_propose(s, part, isr, part->nisr + 1, "a follower caught up");
}

/* Kafka's getOutOfSyncReplicas: members other than the leader that are
 * neither at the log end nor caught up within the lag. */
static void pisr_shrink(part_isr_t *s, part_t *part, int64_t now)
{
    int64_t leo = log_end_offset(part->log);
    int32_t keep[64], nk = 0;

    if (part->nisr > 64)
        return;
    for (int32_t i = 0; i < part->nisr; i++) {
        int32_t id = part->isr[i];
        const part_replica_t *r = part_replica_get(part, id);
        if (id == part->node_id || !r || r->log_end_offset == leo ||
            now - r->last_caught_up_ms <= s->lag_ms)
            keep[nk++] = id;
    }
    if (nk < part->nisr)
        pisr_propose(s, part, keep, nk, "a follower lagged");
}

static void pisr_check_one(part_isr_t *s, part_t *part, int64_t now)
{
    if (part_offline(part) || !part_is_leader(part))
        return;
    if (part->pend_state == PART_ISR_STALE)
        part_isr_clear(part); /* no newer metadata came: propose again */
    if (part->pend_state == PART_ISR_NONE)
        pisr_shrink(s, part, now);
}

static void pisr_check(net_loop_t *loop, void *arg)
{
    part_isr_t *s = arg;
    int64_t now = net_now_wall_ms();
    size_t pos = 0;
    topic_t *t;

    s->check = 0;
    while ((t = part_topic_next(s->reg, &pos)))
        for (int32_t i = 0; i < t->nparts; i++)
            if (t->parts[i])
                pisr_check_one(s, t->parts[i], now);
    s->check = net_timer_add(loop, s->lag_ms / 2 > 0 ? s->lag_ms / 2 : 1, pisr_check, s);
}

void part_isr_new(part_reg_t *reg)
{
    part_isr_t *s = xcalloc(1, sizeof(*s));
    const char *v = reg->props ? props_get((props_t *)reg->props, "replica.lag.time.max.ms") : NULL;

    s->reg = reg;
    s->lag_ms = v ? strtoll(v, NULL, 10) : PISR_LAG_DEFAULT_MS;
    if (s->lag_ms <= 0)
        s->lag_ms = PISR_LAG_DEFAULT_MS;
    reg->isr_mgr = s;
    s->check = net_timer_add(reg->loop, s->lag_ms / 2 > 0 ? s->lag_ms / 2 : 1, pisr_check, s);
}

void part_isr_free(part_reg_t *reg)
{
    part_isr_t *s = reg->isr_mgr;
    if (!s)
        return;
    if (s->check)
        net_timer_cancel(reg->loop, s->check);
    if (s->retry)
        net_timer_cancel(reg->loop, s->retry);
    free(s->queue);
    free(s);
    reg->isr_mgr = NULL;
}

void part_use_controller(part_reg_t *reg, net_out_t *(*out)(void *ctx), void *ctx)
{
    part_isr_t *s = reg->isr_mgr;
    if (!s)
        return;
    s->out = out;
    s->ctx = ctx;
    pisr_kick(s);
}
