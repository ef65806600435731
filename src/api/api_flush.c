#include "api/api_flush.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "util/logging.h"
#include "util/mem.h"

/* Partitions are kept by topic id and index, not by pointer: a topic can
 * be deleted between the append and the round. */
typedef struct api_flush_s {
    api_flush_fail_t *parts;
    int nparts, cap;
    api_flush_waiter_t waiters; /* list head */
    int scheduled;
} api_flush_t;

static api_flush_t *api_flush_state(broker_t *b)
{
    if (!b->flush) {
        api_flush_t *fl = xcalloc(1, sizeof(*fl));
        fl->waiters.next = fl->waiters.prev = &fl->waiters;
        b->flush = fl;
    }
    return b->flush;
}

static void api_flush_deferred(net_loop_t *loop, void *data)
{
    (void)loop;
    api_flush_run(data);
}

static void api_flush_schedule(broker_t *b, api_flush_t *fl)
{
    if (fl->scheduled)
        return;
    fl->scheduled = 1;
    net_loop_defer(b->loop, api_flush_deferred, b);
}

void api_flush_add(broker_t *b, part_t *part)
{
    api_flush_t *fl = api_flush_state(b);
    for (int i = 0; i < fl->nparts; i++)
        if (fl->parts[i].partition == part->index &&
            !memcmp(fl->parts[i].topic_id, part->topic->id, 16))
            return;
    if (fl->nparts == fl->cap) {
        fl->cap = fl->cap ? fl->cap * 2 : 16;
        fl->parts = xrealloc(fl->parts, (size_t)fl->cap * sizeof(*fl->parts));
    }
    memcpy(fl->parts[fl->nparts].topic_id, part->topic->id, 16);
    fl->parts[fl->nparts].partition = part->index;
    fl->nparts++;
    api_flush_schedule(b, fl);
}

void api_flush_wait(broker_t *b, api_flush_waiter_t *w)
{
    api_flush_t *fl = api_flush_state(b);
    w->next = &fl->waiters;
    w->prev = fl->waiters.prev;
    fl->waiters.prev->next = w;
    fl->waiters.prev = w;
    api_flush_schedule(b, fl);
}

void api_flush_unwait(api_flush_waiter_t *w)
{
    if (!w->next)
        return;
    w->prev->next = w->next;
    w->next->prev = w->prev;
    w->next = w->prev = NULL;
}

void api_flush_run(broker_t *b)
{
    api_flush_t *fl = api_flush_state(b);
    api_flush_fail_t *failed = NULL;
    int nfailed = 0;
    int64_t now = net_now_wall_ms();

    fl->scheduled = 0;
    for (int i = 0; i < fl->nparts; i++) {
        topic_t *topic = part_topic_by_id(b->reg, fl->parts[i].topic_id);
        part_t *part = topic ? part_get(topic, fl->parts[i].partition) : NULL;
        if (!part || log_flush(part->log, now) == 0)
            continue;
        lg_error("%s-%d: flush failed: %s", topic->name, part->index, strerror(errno));
        part_notify(part); /* now offline: waiting fetches answer at once */
        failed = xrealloc(failed, (size_t)(nfailed + 1) * sizeof(*failed));
        failed[nfailed++] = fl->parts[i];
    }
    fl->nparts = 0;
    /* Detach first: done() answers, which may start new rounds. */
    api_flush_waiter_t head = fl->waiters;
    if (head.next != &fl->waiters) {
        head.next->prev = &head;
        head.prev->next = &head;
        fl->waiters.next = fl->waiters.prev = &fl->waiters;
        while (head.next != &head) {
            api_flush_waiter_t *w = head.next;
            api_flush_unwait(w);
            w->done(w, failed, nfailed);
        }
    }
    free(failed);
}

void api_flush_free(broker_t *b)
{
    api_flush_t *fl = b->flush;
    if (!fl)
        return;
    free(fl->parts);
    free(fl);
    b->flush = NULL;
}
