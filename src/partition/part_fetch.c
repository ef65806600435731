/* Fetches with long polling (part_fetch.h). Each try reads every
 * partition again, so that an answer never holds regions older than the
 * try that sends it; a try that does not complete gives its descriptors
 * back at once. */
#include "partition/part_fetch.h"

#include <unistd.h>

#include "net/net_loop.h"
#include "partition/part_delay.h"
#include "partition/part_int.h"
#include "partition/part_select.h"
#include "util/kerr.h"

static topic_t *part_fetch_topic(const part_fetch_t *f, const part_fetch_item_t *it)
{
    if (it->by_id)
        return part_topic_by_id(f->reg, it->topic_id);
    return it->topic_len >= 0 ? part_topic_get(f->reg, it->topic, (size_t)it->topic_len) : NULL;
}

/* A follower's read tells the leader where the follower is, as Kafka
 * updates the follower's fetch state after the read, unless it diverged;
 * a stale broker epoch turns the read into its error. */
static void part_fetch_replica(part_fetch_t *f, part_t *part, part_read_t *rd)
{
    if (!rd->replica || rd->err || rd->diverging_epoch >= 0)
        return;
    int16_t err = part_replica_fetched(f->reg, part, f->replica_id, f->replica_epoch,
                                       rd->fetch_offset, rd->replica_log_start,
                                       net_now_wall_ms());
    if (!err)
        return;
    if (rd->fd >= 0)
        close(rd->fd);
    part_read_error(rd, err);
}

/* A consumer's read the leader sends to a replica in the client's rack
 * (Kafka skips the read then): the offsets without records. */
static int part_fetch_elsewhere(part_fetch_t *f, part_t *part, part_read_t *rd)
{
    int32_t to;
    if (f->replica || !f->any_replica || !part_is_leader(part) ||
        (to = part_select_replica(f->reg, part, f->rack, f->rack_len, rd->fetch_offset,
                                  net_now_wall_ms())) < 0 ||
        part_check_epoch(part, rd->current_leader_epoch))
        return 0;
    int64_t none = 0;
    rd->max_bytes = 0;
    part_read(part, rd, &none, 0);
    rd->preferred_read_replica = to;
    return 1;
}

static void part_fetch_one(part_fetch_t *f, part_fetch_item_t *it, int64_t *budget,
                           size_t *bytes)
{
    topic_t *topic = part_fetch_topic(f, it);
    part_t *part;
    int16_t err = f->any_replica && !f->replica ? part_find_local(topic, it->partition, &part)
                                                : part_find(topic, it->partition, &part);

    it->rd.diverging_epoch = -1;
    it->rd.diverging_end_offset = -1;
    if (!topic && it->by_id) {
        part_read_error(&it->rd, KERR_UNKNOWN_TOPIC_ID);
    } else if (err || (f->replica &&
                       (err = part_read_replica_check(part, f->replica_id,
                                                      it->rd.current_leader_epoch)))) {
        part_read_error(&it->rd, err);
    } else if (!part_fetch_elsewhere(f, part, &it->rd)) {
        it->rd.replica = f->replica;
        part_read(part, &it->rd, budget, *bytes == 0);
        part_fetch_replica(f, part, &it->rd);
        *bytes += (size_t)it->rd.len;
    }
}

static void part_fetch_close_fds(part_fetch_t *f)
{
    for (int i = 0; i < f->nitems; i++)
        part_read_release(&f->items[i].rd);
}

/* A partition the metadata does not know (its topic deleted, say). As
 * Kafka's broker sets such partitions aside before it reads, they do not
 * end the wait for the others: a consumer of a deleted topic and a live
 * one long-polls on the live one instead of spinning on the error. */
static int part_fetch_unknown(int16_t err)
{
    return err == KERR_UNKNOWN_TOPIC_ID || err == KERR_UNKNOWN_TOPIC_OR_PARTITION;
}

/* Reads everything; completes when there is enough, an error or a
 * divergence to report (which a client acts on at once), or final; or
 * at once when every partition is unknown (nothing to wait for). */
static int part_fetch_try(void *owner, int final)
{
    part_fetch_t *f = owner;
    int64_t budget = f->max_bytes;
    size_t bytes = 0;
    int news = 0, known = 0;

    for (int i = 0; i < f->nitems; i++) {
        const part_read_t *rd = &f->items[i].rd;
        part_fetch_one(f, &f->items[i], &budget, &bytes);
        if (part_fetch_unknown(rd->err))
            continue;
        known++;
        news |= rd->err != 0 || rd->diverging_epoch >= 0;
    }
    if (!known && f->nitems > 0)
        news = 1;
    if (!final && !news && (int64_t)bytes < f->min_bytes) {
        part_fetch_close_fds(f);
        return 0;
    }
    f->finished = 1;
    f->delay = NULL;
    f->done(f);
    return 1;
}

void part_fetch(part_fetch_t *f)
{
    f->finished = 0;
    f->delay = NULL;
    for (int i = 0; i < f->nitems; i++)
        f->items[i].rd.fd = -1;
    if (part_fetch_try(f, f->max_wait_ms <= 0))
        return;
    f->delay = part_delay_new(f->reg, f->max_wait_ms, part_fetch_try, f);
    for (int i = 0; i < f->nitems; i++) {
        topic_t *topic = part_fetch_topic(f, &f->items[i]);
        if (topic)
            part_delay_watch(f->delay, topic->id, f->items[i].partition);
    }
    part_delay_arm(f->delay);
}

void part_fetch_cancel(part_fetch_t *f)
{
    if (f->finished)
        return;
    f->finished = 1;
    part_delay_cancel(f->delay);
    f->delay = NULL;
    part_fetch_close_fds(f);
}

void part_fetch_expire(part_fetch_t *f)
{
    if (!f->finished)
        part_delay_expire(f->delay);
}
