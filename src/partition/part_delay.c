/* Delayed operations: watches on partitions plus a timer. A wake-up only
 * marks the operation and defers the retry, so a change (an append that
 * wakes a hundred fetches) stays cheap and finishes before anyone reacts
 * to it. The deferred retry holds a reference on the handle, which is why
 * the handle is the layer's and not the owner's: the owner may be gone by
 * the time the retry runs. */
#include "partition/part_delay.h"

#include <stdlib.h>
#include <string.h>

#include "net/net_loop.h"
#include "util/mem.h"

typedef struct part_delay_key_s {
    uint8_t topic_id[16];
    int32_t index;
} part_delay_key_t;

struct part_delay_s {
    part_reg_t *reg;
    part_delay_try_fn *try;
    void *owner;
    part_delay_key_t *keys;
    part_watch_t *watches;
    int nkeys, nwatch;
    net_timer_id_t timer;
    int refs;  /* 1 while active, +1 per deferred retry */
    int woken;
    int done;
};

static void part_delay_unref(part_delay_t *d)
{
    if (--d->refs > 0)
        return;
    free(d->keys);
    free(d->watches);
    free(d);
}

static void part_delay_unwatch(part_delay_t *d)
{
    for (int i = 0; i < d->nwatch; i++)
        part_watch_del(&d->watches[i]);
    d->nwatch = 0;
}

static void part_delay_wake(part_watch_t *w);

static void part_delay_rewatch(part_delay_t *d)
{
    part_delay_unwatch(d);
    for (int i = 0; i < d->nkeys; i++) {
        topic_t *topic = part_topic_by_id(d->reg, d->keys[i].topic_id);
        part_t *part = topic ? part_get(topic, d->keys[i].index) : NULL;
        if (!part)
            continue;
        part_watch_t *w = &d->watches[d->nwatch++];
        w->cb = part_delay_wake;
        w->data = d;
        part_watch_add(part, w);
    }
}

/* Completed or cancelled: nothing of the owner is touched any more. */
static void part_delay_end(part_delay_t *d)
{
    d->done = 1;
    part_delay_unwatch(d);
    if (d->timer)
        net_timer_cancel(d->reg->loop, d->timer);
    d->timer = 0;
    part_delay_unref(d);
}

static void part_delay_retry(net_loop_t *loop, void *data)
{
    part_delay_t *d = data;
    (void)loop;
    if (!d->done) {
        d->woken = 0;
        if (d->try(d->owner, 0))
            part_delay_end(d);
        else
            part_delay_rewatch(d);
    }
    part_delay_unref(d);
}

static void part_delay_wake(part_watch_t *w)
{
    part_delay_t *d = w->data;
    if (d->woken || d->done)
        return;
    d->woken = 1;
    d->refs++;
    net_loop_defer(d->reg->loop, part_delay_retry, d);
}

static void part_delay_timeout(net_loop_t *loop, void *data)
{
    part_delay_t *d = data;
    (void)loop;
    d->timer = 0;
    if (d->done)
        return;
    d->try(d->owner, 1);
    part_delay_end(d);
}

part_delay_t *part_delay_new(part_reg_t *reg, int64_t timeout_ms, part_delay_try_fn *try,
                             void *owner)
{
    part_delay_t *d = xcalloc(1, sizeof(*d));
    d->reg = reg;
    d->try = try;
    d->owner = owner;
    d->refs = 1;
    if (timeout_ms >= 0)
        d->timer = net_timer_add(reg->loop, timeout_ms, part_delay_timeout, d);
    return d;
}

void part_delay_watch(part_delay_t *d, const uint8_t topic_id[16], int32_t index)
{
    part_delay_unwatch(d); /* the nodes move when the arrays grow */
    d->keys = xrealloc(d->keys, (size_t)(d->nkeys + 1) * sizeof(*d->keys));
    d->watches = xrealloc(d->watches, (size_t)(d->nkeys + 1) * sizeof(*d->watches));
    memcpy(d->keys[d->nkeys].topic_id, topic_id, 16);
    d->keys[d->nkeys++].index = index;
}

void part_delay_arm(part_delay_t *d)
{
    if (!d->done)
        part_delay_rewatch(d);
}

void part_delay_cancel(part_delay_t *d)
{
    if (d && !d->done)
        part_delay_end(d);
}

void part_delay_expire(part_delay_t *d)
{
    if (!d || d->done)
        return;
    d->try(d->owner, 1);
    part_delay_end(d);
}
