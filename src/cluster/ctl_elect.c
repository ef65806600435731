/* The controller's periodic elections, as Kafka 4.4's active controller
 * runs them among its periodic tasks.
 *
 * Preferred: with auto.leader.rebalance.enable
 * (true by default), every leader.imbalance.check.interval.seconds (300)
 * a round of preferred elections over every partition its first replica
 * does not lead (bkr_elect_rebalance: the first replica takes over when
 * it is in the ISR and active), at most 1,000 records a round, the next
 * round at once when a round stopped there. The clock starts when this
 * node becomes the active controller. Kafka 4.x has no per-broker
 * threshold (leader.imbalance.per.broker.percentage went with ZooKeeper,
 * KAFKA-18743): any imbalanced partition is taken, and that key is no
 * Kafka 4.4 broker key, so Strand has none either.
 *
 * Unclean: every unclean.leader.election.interval.ms (Kafka's internal
 * key, 5 minutes) the partitions without a leader whose topic has
 * unclean.leader.election.enable (its own, else the broker config's) get
 * an unclean election (bkr_elect_unclean_all), 1,000 a round. It catches
 * what the broker changes do not: a topic whose key was turned on after
 * its partition lost its leader. A broker fenced, shutting down or
 * unfenced makes its own unclean elections at once (bkr_isr.c). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/cfg_broker.h"
#include "cluster/cfg_val.h"
#include "cluster/ctl_int.h"
#include "util/logging.h"

/* Kafka's MAX_ELECTIONS_PER_IMBALANCE. */
#define CTL_ELECT_MAX_PER_ROUND 1000

/* A key of server.properties, or Kafka's default (the parser checked
 * the value against the key's type). */
static const char *ctl_elect_prop(const props_t *props, const char *key)
{
    const char *v = props ? props_get((props_t *)props, key) : NULL;
    return v ? v : cfg_broker_default(key);
}

/* Kafka's default of unclean.leader.election.interval.ms. */
#define CTL_UNCLEAN_INTERVAL_MS 300000

static int64_t ctl_elect_long(const props_t *props, const char *key, int64_t dflt)
{
    char buf[32];
    int64_t n;
    const char *v = ctl_elect_prop(props, key);
    if (!v || cfg_val_long(cfg_val_trim(v, buf, sizeof(buf)), &n) < 0)
        return dflt;
    return n;
}

void ctl_elect_init(ctl_t *ctl, const props_t *props)
{
    char buf[32];
    bool on = false;
    const char *v = ctl_elect_prop(props, "auto.leader.rebalance.enable");
    if (v)
        cfg_val_bool(cfg_val_trim(v, buf, sizeof(buf)), &on);
    int64_t secs = ctl_elect_long(props, "leader.imbalance.check.interval.seconds", 300);
    ctl->rebalance_ms = on && secs > 0 ? secs * 1000 : 0;
    /* an internal key of Kafka's: not in the table, read as given */
    ctl->unclean_ms =
        ctl_elect_long(props, "unclean.leader.election.interval.ms", CTL_UNCLEAN_INTERVAL_MS);
}

void ctl_elect_defaults(ctl_t *ctl, const cfg_bview_t *bv)
{
    char buf[16];
    bool on = false;
    const char *v = cfg_bview_get(bv, "unclean.leader.election.enable");
    if (v)
        cfg_val_bool(cfg_val_trim(v, buf, sizeof(buf)), &on);
    ctl->bkr.unclean_default = on;
    int64_t n = 1;
    if ((v = cfg_bview_get(bv, "min.insync.replicas")))
        cfg_val_long(cfg_val_trim(v, buf, sizeof(buf)), &n);
    ctl->bkr.min_isr_default = n >= 1 && n <= INT32_MAX ? (int32_t)n : 1;
}

void ctl_elect_activate(ctl_t *ctl, int64_t now_ms)
{
    ctl->rebalance_at = now_ms + ctl->rebalance_ms;
    ctl->rebalance_more = 0;
    ctl->unclean_at = now_ms + ctl->unclean_ms;
    ctl->unclean_more = 0;
}

static void ctl_rebalance_done(ctl_op_t *op)
{
    ctl_t *ctl = op->udata;
    ctl->rebalance_busy = 0;
    if (op->err)
        lg_warn("preferred leader elections: %s", op->msg);
}

static void ctl_unclean_done(ctl_op_t *op)
{
    ctl_t *ctl = op->udata;
    ctl->unclean_busy = 0;
    if (op->err)
        lg_warn("unclean leader elections: %s", op->msg);
}

static void ctl_elect_submit(ctl_t *ctl, ctl_op_t *op, int kind, int64_t now_ms,
                             void (*done)(ctl_op_t *op))
{
    memset(op, 0, sizeof(*op));
    op->kind = kind;
    op->nassign = -1;
    op->now_ms = now_ms;
    op->done = done;
    op->udata = ctl;
    ctl_submit(ctl, op);
}

void ctl_elect_tick(ctl_t *ctl, int64_t now_ms)
{
    if (ctl->rebalance_ms > 0 && !ctl->rebalance_busy && now_ms >= ctl->rebalance_at) {
        ctl->rebalance_busy = 1;
        ctl_elect_submit(ctl, &ctl->rebalance_op, CTL_REBALANCE, now_ms, ctl_rebalance_done);
    }
    if (ctl->unclean_ms > 0 && !ctl->unclean_busy && now_ms >= ctl->unclean_at) {
        ctl->unclean_busy = 1;
        ctl_elect_submit(ctl, &ctl->unclean_op, CTL_UNCLEAN_ELECT, now_ms, ctl_unclean_done);
    }
}

int16_t ctl_plan_rebalance(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    bkr_out_reset(&ctl->bout);
    ctl->rebalance_more = bkr_elect_rebalance(&ctl->bkr, &ctl->meta->img, CTL_ELECT_MAX_PER_ROUND,
                                              &ctl->bout);
    ctl->rebalance_at = op->now_ms + (ctl->rebalance_more ? 0 : ctl->rebalance_ms);
    if (ctl->bout.n)
        lg_info("preferred leader elections: %d partition(s) given back to their first replica%s",
                ctl->bout.n, ctl->rebalance_more ? " (more next round)" : "");
    /* encoded at submit, while bout still holds what the records name */
    for (int i = 0; i < ctl->bout.n; i++)
        *ctl_batch_add(b, ctl->bout.v[i].type) = ctl->bout.v[i];
    return 0;
}

int16_t ctl_plan_unclean(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    bkr_out_reset(&ctl->bout);
    ctl->unclean_more =
        bkr_elect_unclean_all(&ctl->bkr, &ctl->meta->img, CTL_ELECT_MAX_PER_ROUND, &ctl->bout);
    ctl->unclean_at = op->now_ms + (ctl->unclean_more ? 0 : ctl->unclean_ms);
    if (ctl->bout.n)
        lg_warn("unclean leader elections: %d partition(s) without a leader get one outside "
                "their ISR; what only the old ISR had may be lost",
                ctl->bout.n);
    for (int i = 0; i < ctl->bout.n; i++)
        *ctl_batch_add(b, ctl->bout.v[i].type) = ctl->bout.v[i];
    return 0;
}
