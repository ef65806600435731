/* The controller's periodic elections, as Kafka 4.4's active controller
 * runs them among its periodic tasks: with auto.leader.rebalance.enable
 * (true by default), every leader.imbalance.check.interval.seconds (300)
 * a round of preferred elections over every partition its first replica
 * does not lead (bkr_elect_rebalance: the first replica takes over when
 * it is in the ISR and active), at most 1,000 records a round, the next
 * round at once when a round stopped there. The clock starts when this
 * node becomes the active controller. Kafka 4.x has no per-broker
 * threshold (leader.imbalance.per.broker.percentage went with ZooKeeper,
 * KAFKA-18743): any imbalanced partition is taken, and that key is no
 * Kafka 4.4 broker key, so Strand has none either. */
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

void ctl_elect_init(ctl_t *ctl, const props_t *props)
{
    char buf[32];
    bool on = false;
    int64_t secs = 0;
    const char *v = ctl_elect_prop(props, "auto.leader.rebalance.enable");
    if (v)
        cfg_val_bool(cfg_val_trim(v, buf, sizeof(buf)), &on);
    v = ctl_elect_prop(props, "leader.imbalance.check.interval.seconds");
    if (v)
        cfg_val_long(cfg_val_trim(v, buf, sizeof(buf)), &secs);
    ctl->rebalance_ms = on && secs > 0 ? secs * 1000 : 0;
}

void ctl_elect_activate(ctl_t *ctl, int64_t now_ms)
{
    ctl->rebalance_at = now_ms + ctl->rebalance_ms;
    ctl->rebalance_more = 0;
}

static void ctl_rebalance_done(ctl_op_t *op)
{
    ctl_t *ctl = op->udata;
    ctl->rebalance_busy = 0;
    if (op->err)
        lg_warn("preferred leader elections: %s", op->msg);
}

void ctl_elect_tick(ctl_t *ctl, int64_t now_ms)
{
    if (ctl->rebalance_ms <= 0 || ctl->rebalance_busy || now_ms < ctl->rebalance_at)
        return;
    ctl->rebalance_busy = 1;
    memset(&ctl->rebalance_op, 0, sizeof(ctl->rebalance_op));
    ctl->rebalance_op.kind = CTL_REBALANCE;
    ctl->rebalance_op.nassign = -1;
    ctl->rebalance_op.now_ms = now_ms;
    ctl->rebalance_op.done = ctl_rebalance_done;
    ctl->rebalance_op.udata = ctl;
    ctl_submit(ctl, &ctl->rebalance_op);
}

int16_t ctl_plan_rebalance(ctl_t *ctl, ctl_op_t *op, ctl_batch_t *b)
{
    bkr_out_reset(&ctl->bout);
    ctl->rebalance_more = bkr_elect_rebalance(&ctl->meta->img, CTL_ELECT_MAX_PER_ROUND, &ctl->bout);
    ctl->rebalance_at = op->now_ms + (ctl->rebalance_more ? 0 : ctl->rebalance_ms);
    if (ctl->bout.n)
        lg_info("preferred leader elections: %d partition(s) given back to their first replica%s",
                ctl->bout.n, ctl->rebalance_more ? " (more next round)" : "");
    /* encoded at submit, while bout still holds what the records name */
    for (int i = 0; i < ctl->bout.n; i++)
        *ctl_batch_add(b, ctl->bout.v[i].type) = ctl->bout.v[i];
    return 0;
}
