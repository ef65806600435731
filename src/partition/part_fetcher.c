/* The follower fetchers (part_fetcher.h): who fetches what, the Fetch
 * requests and what their answers do to the follower's logs. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_image.h"
#include "log/log_batch.h"
#include "partition/part_fetcher_int.h"
#include "partition/part_int.h"
#include "proto/proto_gen.h"
#include "util/arena.h"
#include "util/logging.h"
#include "util/mem.h"

#define PF_FETCH_VERSION 17 /* Kafka 4.4's followers' */

static int32_t pf_prop(part_reg_t *reg, const char *key, int32_t dflt)
{
    const char *v = reg->props ? props_get((props_t *)reg->props, key) : NULL;
    return v ? (int32_t)strtol(v, NULL, 10) : dflt;
}

/* Kafka's getFetcherId: (31 * topic.hashCode + partition) mod n, with
 * Java's String.hashCode. */
static int pf_slot(const part_fetchers_t *fs, const part_t *part)
{
    int32_t h = 0;
    for (size_t i = 0; i < part->topic->name_len; i++)
        h = (int32_t)((uint32_t)h * 31u + (uint8_t)part->topic->name[i]);
    int64_t v = (int64_t)(int32_t)((uint32_t)h * 31u + (uint32_t)part->index);
    return (int)((v < 0 ? -v : v) % fs->per_leader);
}

part_t *pf_part(const part_fetcher_t *f, const pf_key_t *k)
{
    topic_t *topic = part_topic_by_id(f->fs->reg, k->topic_id);
    part_t *part = topic ? part_get(topic, k->partition) : NULL;
    return part && !part_offline(part) && part->fetching == f->leader ? part : NULL;
}

pf_key_t *pf_key_find(part_fetcher_t *f, const uint8_t id[16], int32_t partition)
{
    for (int i = 0; i < f->nkeys; i++)
        if (f->keys[i].partition == partition && !memcmp(f->keys[i].topic_id, id, 16))
            return &f->keys[i];
    return NULL;
}

void pf_backoff(part_fetcher_t *f, pf_key_t *k)
{
    k->delay_until = net_loop_now_mono(f->fs->reg->loop) + f->fs->backoff_ms;
}

/* The leader's inter-broker endpoint from the image; 0 when it has one. */
static int pf_endpoint(part_fetcher_t *f)
{
    part_reg_t *reg = f->fs->reg;
    const mi_broker_t *b = meta_image_broker(&reg->meta->img, f->leader);
    const char *name = reg->inter_broker ? reg->inter_broker : "PLAINTEXT";
    for (int i = 0; b && i < b->nendpoints; i++)
        if (!strcmp(b->endpoints[i].name, name)) {
            f->host = xstrdup(b->endpoints[i].host);
            f->port = b->endpoints[i].port;
            return 0;
        }
    return -1;
}

static net_out_t *pf_conn(part_fetcher_t *f)
{
    char cid[64];
    net_out_config_t cfg;
    if (f->out)
        return f->out;
    if (pf_endpoint(f) < 0)
        return NULL;
    net_out_config_init(&cfg);
    snprintf(cid, sizeof(cid), "broker-%d-fetcher-%d", f->fs->reg->node_id, f->slot);
    cfg.host = f->host;
    cfg.port = f->port;
    cfg.client_id = cid;
    cfg.request_timeout_ms = f->fs->timeout_ms;
    cfg.max_response_bytes = f->fs->resp_max_bytes + (1 << 20);
    f->out = net_out_new(f->fs->reg->loop, &cfg);
    return f->out;
}

/* ---- the request ---- */

static int64_t pf_broker_epoch(part_reg_t *reg)
{
    const mi_broker_t *b = meta_image_broker(&reg->meta->img, reg->node_id);
    return b ? b->epoch : -1;
}

static void pf_add_part(part_fetcher_t *f, pf_key_t *k, part_t *part, proto_fetch_req_t *r,
                        arena_t *a)
{
    proto_fetch_req_fetch_topic_t *t = &r->topics.v[r->topics.n++];
    proto_fetch_req_fetch_partition_t *p = arena_calloc(a, 1, sizeof(*p));

    proto_fetch_req_fetch_topic_init(t);
    memcpy(t->topic_id.b, k->topic_id, 16);
    t->partitions.n = 1;
    t->partitions.v = p;
    proto_fetch_req_fetch_partition_init(p);
    p->partition = k->partition;
    p->current_leader_epoch = part->leader_epoch;
    p->fetch_offset = log_end_offset(part->log);
    p->last_fetched_epoch = log_latest_epoch(part->log);
    p->log_start_offset = log_start_offset(part->log);
    p->partition_max_bytes = f->fs->max_bytes;
    k->req_epoch = part->leader_epoch;
}

static void pf_on_fetch(net_out_t *out, const net_out_resp_t *resp, void *arg);

/* Builds the Fetch of every partition not backing off; 0 when none. */
static int pf_build(part_fetcher_t *f, proto_fetch_req_t *r, arena_t *a, int64_t now,
                    int64_t *next)
{
    part_reg_t *reg = f->fs->reg;
    proto_fetch_req_init(r);
    r->replica_state.replica_id = reg->node_id;
    r->replica_state.replica_epoch = pf_broker_epoch(reg);
    r->max_wait_ms = f->fs->wait_ms;
    r->min_bytes = f->fs->min_bytes;
    r->max_bytes = f->fs->resp_max_bytes;
    r->topics.v = arena_calloc(a, (size_t)f->nkeys + 1, sizeof(*r->topics.v));
    for (int i = 0; i < f->nkeys; i++) {
        pf_key_t *k = &f->keys[i];
        part_t *part = pf_part(f, k);
        if (!part || k->oor)
            continue;
        if (k->delay_until > now) {
            if (k->delay_until < *next)
                *next = k->delay_until;
            continue;
        }
        pf_add_part(f, k, part, r, a);
    }
    return r->topics.n;
}

static void pf_timer(net_loop_t *loop, void *data)
{
    part_fetcher_t *f = data;
    (void)loop;
    f->timer = 0;
    pf_kick(f);
}

static void pf_arm(part_fetcher_t *f, int64_t at, int64_t now)
{
    if (f->timer || at == INT64_MAX)
        return;
    f->timer = net_timer_add(f->fs->reg->loop, at > now ? at - now : 1, pf_timer, f);
}

void pf_kick(part_fetcher_t *f)
{
    arena_t a;
    proto_fetch_req_t r;
    buf_t body;
    int64_t now = net_loop_now_mono(f->fs->reg->loop), next = INT64_MAX;

    if (f->fetching || !f->nkeys)
        return;
    arena_init(&a, 4096);
    if (!pf_build(f, &r, &a, now, &next) || !pf_conn(f)) {
        if (next == INT64_MAX && !f->out) /* no endpoint yet: look again later */
            next = now + f->fs->backoff_ms;
        pf_arm(f, next, now);
        arena_destroy(&a);
        return;
    }
    buf_init(&body);
    proto_fetch_req_encode(&r, PF_FETCH_VERSION, &body);
    arena_destroy(&a);
    int64_t timeout = (int64_t)f->fs->wait_ms + f->fs->timeout_ms;
    if (net_out_send(f->out, 1, PF_FETCH_VERSION, &body, timeout, pf_on_fetch, f) < 0) {
        buf_free(&body);
        pf_arm(f, now + f->fs->backoff_ms, now);
        return;
    }
    f->fetching = 1;
    f->inflight++;
}

/* ---- the answer ---- */

int64_t part_fetcher_truncation(const log_t *log, int32_t epoch, int64_t end)
{
    int64_t mine, leo = log_end_offset(log), to;
    int32_t got;
    log_epoch_end_offset(log, epoch, &mine, &got);
    if (got < 0)
        to = end;
    else if (got != epoch)
        to = mine;
    else
        to = mine < end ? mine : end;
    if (to > leo)
        to = leo;
    return to < 0 ? log_high_watermark(log) : to;
}

static void pf_truncate(part_t *part, int32_t epoch, int64_t end)
{
    int64_t to = part_fetcher_truncation(part->log, epoch, end);
    lg_info("%s-%d: diverging epoch %d (leader's end %lld): truncating to %lld",
            part->topic->name, part->index, epoch, (long long)end, (long long)to);
    if (log_truncate_to(part->log, to) < 0)
        lg_error("%s-%d: truncation failed; the log is offline", part->topic->name, part->index);
}

/* The follower takes the leader's high watermark (not past its own log
 * end) and log start (not past that high watermark). */
static void pf_offsets(part_t *part, const proto_fetch_resp_partition_data_t *pd)
{
    int64_t leo = log_end_offset(part->log);
    int64_t hw = pd->high_watermark < leo ? pd->high_watermark : leo;
    if (hw > log_high_watermark(part->log))
        log_set_high_watermark(part->log, hw);
    if (pd->log_start_offset > log_start_offset(part->log) &&
        pd->log_start_offset <= log_high_watermark(part->log))
        log_delete_records(part->log, pd->log_start_offset);
}

/* An empty log (just begun at the leader's log start) whose first batch
 * starts below its end: the leader's log start fell inside that batch
 * (DeleteRecords). As Kafka's follower, the log begins again at the
 * batch's base offset; the leader's log start is taken after the append.
 * Returns 1 when the log was begun again. */
static int pf_realign(part_t *part, const uint8_t *p, size_t len)
{
    log_batch_hdr_t h;
    int64_t leo = log_end_offset(part->log);
    if (leo != log_start_offset(part->log) || log_batch_hdr_parse(p, len, &h) < 0 ||
        h.base_offset >= leo || h.base_offset + h.last_offset_delta < leo)
        return 0;
    lg_info("%s-%d: the leader's first batch starts at %lld, below our empty log's %lld: "
            "beginning there", part->topic->name, part->index, (long long)h.base_offset,
            (long long)leo);
    return log_reset_to(part->log, h.base_offset, net_now_wall_ms()) == 0;
}

static void pf_records(part_fetcher_t *f, pf_key_t *k, part_t *part,
                       const proto_fetch_resp_partition_data_t *pd)
{
    int16_t err = KERR_NONE;
    const uint8_t *p = pd->records.p;
    size_t len = pd->records.len > 0 ? (size_t)pd->records.len : 0;
    if (len > 0 && p)
        err = log_append_replica(part->log, p, len, net_now_wall_ms());
    if (err == KERR_OFFSET_OUT_OF_RANGE && pf_realign(part, p, len))
        err = log_append_replica(part->log, p, len, net_now_wall_ms());
    if (err) {
        lg_warn("%s-%d: appending from leader %d: error %d", part->topic->name, part->index,
                f->leader, err);
        pf_backoff(f, k);
        return;
    }
    pf_offsets(part, pd);
}

static void pf_partition(part_fetcher_t *f, const uint8_t id[16],
                         const proto_fetch_resp_partition_data_t *pd)
{
    pf_key_t *k = pf_key_find(f, id, pd->partition_index);
    part_t *part = k ? pf_part(f, k) : NULL;

    if (!part || part->leader_epoch != k->req_epoch || k->oor)
        return; /* moved on since the request left */
    if (log_pending_writes(part->log)) { /* a former leadership's writes still out */
        pf_backoff(f, k);
        return;
    }
    switch (pd->error_code) {
    case KERR_NONE:
        if (pd->diverging_epoch.epoch >= 0 || pd->diverging_epoch.end_offset >= 0)
            pf_truncate(part, pd->diverging_epoch.epoch, pd->diverging_epoch.end_offset);
        else
            pf_records(f, k, part, pd);
        break;
    case KERR_OFFSET_OUT_OF_RANGE: pf_out_of_range(f, k); break;
    default: pf_backoff(f, k); break;
    }
}

static void pf_answer(part_fetcher_t *f, const net_out_resp_t *resp)
{
    arena_t a;
    proto_fetch_resp_t r;

    arena_init(&a, 4096);
    proto_fetch_resp_init(&r);
    int bad = proto_fetch_resp_decode(&r, resp->api_version, resp->body, resp->len, &a) < 0;
    if (bad || r.error_code) {
        lg_warn("fetch from broker %d: %s %d", f->leader, bad ? "malformed answer" : "error",
                bad ? 0 : r.error_code);
        for (int i = 0; i < f->nkeys; i++)
            pf_backoff(f, &f->keys[i]);
    }
    for (int32_t i = 0; !bad && !r.error_code && i < r.responses.n; i++)
        for (int32_t j = 0; j < r.responses.v[i].partitions.n; j++)
            pf_partition(f, r.responses.v[i].topic_id.b, &r.responses.v[i].partitions.v[j]);
    arena_destroy(&a);
}

static void pf_free(part_fetcher_t *f)
{
    part_fetcher_t **pp = &f->fs->list;
    while (*pp != f)
        pp = &(*pp)->next;
    *pp = f->next;
    if (f->timer)
        net_timer_cancel(f->fs->reg->loop, f->timer);
    f->fs = NULL; /* callbacks from the free below see it gone */
    net_out_free(f->out);
    free(f->keys);
    free(f->host);
    free(f);
}

void pf_request_done(part_fetcher_t *f)
{
    if (!f->nkeys && !f->inflight)
        pf_free(f);
    else
        pf_kick(f);
}

static void pf_on_fetch(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    part_fetcher_t *f = arg;
    (void)out;
    if (!f->fs)
        return; /* being freed */
    f->fetching = 0;
    f->inflight--;
    if (resp->err) {
        for (int i = 0; i < f->nkeys; i++)
            pf_backoff(f, &f->keys[i]);
    } else {
        pf_answer(f, resp);
    }
    pf_request_done(f);
}

/* ---- who fetches what ---- */

static part_fetcher_t *pf_get(part_fetchers_t *fs, int32_t leader, int slot)
{
    part_fetcher_t *f;
    for (f = fs->list; f; f = f->next)
        if (f->leader == leader && f->slot == slot)
            return f;
    f = xcalloc(1, sizeof(*f));
    f->fs = fs;
    f->leader = leader;
    f->slot = slot;
    f->next = fs->list;
    fs->list = f;
    return f;
}

static void pf_key_add(part_fetcher_t *f, const part_t *part)
{
    if (f->nkeys == f->cap) {
        f->cap = f->cap ? 2 * f->cap : 8;
        f->keys = xrealloc(f->keys, (size_t)f->cap * sizeof(*f->keys));
    }
    pf_key_t *k = &f->keys[f->nkeys++];
    memset(k, 0, sizeof(*k));
    memcpy(k->topic_id, part->topic->id, 16);
    k->partition = part->index;
    k->req_epoch = -1;
}

void part_fetcher_unfollow(part_reg_t *reg, part_t *part)
{
    part_fetchers_t *fs = reg->fetchers;
    int32_t leader = part->fetching;

    part->fetching = -1;
    if (!fs || leader < 0)
        return;
    part_fetcher_t *f = pf_get(fs, leader, pf_slot(fs, part));
    pf_key_t *k = pf_key_find(f, part->topic->id, part->index);
    if (k)
        *k = f->keys[--f->nkeys];
    if (!f->nkeys && !f->inflight)
        pf_free(f);
}

void part_fetcher_follow(part_reg_t *reg, part_t *part)
{
    part_fetchers_t *fs = reg->fetchers;
    if (part->fetching == part->leader)
        return;
    part_fetcher_unfollow(reg, part);
    part->fetching = part->leader;
    if (!fs)
        return;
    part_fetcher_t *f = pf_get(fs, part->leader, pf_slot(fs, part));
    pf_key_add(f, part);
    lg_info("%s-%d: following leader %d at epoch %d from offset %lld", part->topic->name,
            part->index, part->leader, part->leader_epoch, (long long)log_end_offset(part->log));
    pf_kick(f);
}

/* ---- the set ---- */

static void pf_config(part_fetchers_t *fs, part_reg_t *reg)
{
    fs->per_leader = pf_prop(reg, "num.replica.fetchers", 1);
    if (fs->per_leader < 1)
        fs->per_leader = 1;
    fs->max_bytes = pf_prop(reg, "replica.fetch.max.bytes", 1048576);
    fs->min_bytes = pf_prop(reg, "replica.fetch.min.bytes", 1);
    fs->wait_ms = pf_prop(reg, "replica.fetch.wait.max.ms", 500);
    fs->resp_max_bytes = pf_prop(reg, "replica.fetch.response.max.bytes", 10485760);
    fs->backoff_ms = pf_prop(reg, "replica.fetch.backoff.ms", 1000);
    fs->timeout_ms = pf_prop(reg, "replica.socket.timeout.ms", 30000);
}

part_fetchers_t *part_fetchers_new(part_reg_t *reg)
{
    part_fetchers_t *fs = xcalloc(1, sizeof(*fs));
    size_t pos = 0;
    topic_t *topic;

    fs->reg = reg;
    pf_config(fs, reg);
    reg->fetchers = fs;
    while ((topic = part_topic_next(reg, &pos)))
        for (int32_t i = 0; i < topic->nparts; i++) {
            part_t *part = topic->parts[i];
            if (part && part->fetching >= 0) {
                part->fetching = -1;
                part_fetcher_follow(reg, part);
            }
        }
    return fs;
}

void part_fetchers_free(part_fetchers_t *fs)
{
    if (!fs)
        return;
    fs->reg->fetchers = NULL;
    while (fs->list)
        pf_free(fs->list);
    free(fs);
}
