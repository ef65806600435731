/* A follower's fetch offset out of range at its leader, handled as
 * Kafka's AbstractFetcherThread.fetchOffsetAndTruncate does: ask the
 * leader its log end (ListOffsets LATEST as a replica, which answers the
 * log end, not the high watermark); a leader that ends below us (an
 * unclean election) has us truncate to its end; otherwise ask its log
 * start (EARLIEST), and a follower whose log ends below it starts again,
 * empty, at the leader's log start. Fetching resumes after either. */
#include <stdlib.h>
#include <string.h>

#include "partition/part_fetcher_int.h"
#include "partition/part_int.h"
#include "partition/part_read.h"
#include "proto/proto_gen.h"
#include "util/arena.h"
#include "util/logging.h"
#include "util/mem.h"

#define PF_LIST_OFFSETS_VERSION 7

typedef struct pf_oor_s {
    part_fetcher_t *f;
    uint8_t topic_id[16];
    int32_t partition;
    int64_t ts; /* PART_OFFSET_LATEST, then PART_OFFSET_EARLIEST */
} pf_oor_t;

static void pf_oor_on_resp(net_out_t *out, const net_out_resp_t *resp, void *arg);

/* Takes ownership of o. */
static void pf_oor_send(pf_oor_t *o, part_t *part)
{
    part_fetcher_t *f = o->f;
    proto_list_offsets_req_t r;
    proto_list_offsets_req_list_offsets_topic_t t;
    proto_list_offsets_req_list_offsets_partition_t p;
    buf_t body;

    proto_list_offsets_req_init(&r);
    proto_list_offsets_req_list_offsets_topic_init(&t);
    proto_list_offsets_req_list_offsets_partition_init(&p);
    r.replica_id = f->fs->reg->node_id;
    r.topics.n = 1;
    r.topics.v = &t;
    t.name.p = part->topic->name;
    t.name.len = (int32_t)part->topic->name_len;
    t.partitions.n = 1;
    t.partitions.v = &p;
    p.partition_index = part->index;
    p.current_leader_epoch = part->leader_epoch;
    p.timestamp = o->ts;
    buf_init(&body);
    proto_list_offsets_req_encode(&r, PF_LIST_OFFSETS_VERSION, &body);
    if (net_out_send(f->out, 2, PF_LIST_OFFSETS_VERSION, &body, 0, pf_oor_on_resp, o) < 0) {
        buf_free(&body);
        free(o);
        pf_key_t *k = pf_key_find(f, part->topic->id, part->index);
        if (k) {
            k->oor = 0;
            pf_backoff(f, k);
        }
        return;
    }
    f->inflight++;
}

void pf_out_of_range(part_fetcher_t *f, pf_key_t *k)
{
    part_t *part = pf_part(f, k);
    if (!part || !f->out)
        return;
    pf_oor_t *o = xcalloc(1, sizeof(*o));
    o->f = f;
    memcpy(o->topic_id, k->topic_id, 16);
    o->partition = k->partition;
    o->ts = PART_OFFSET_LATEST;
    k->oor = 1;
    pf_oor_send(o, part);
}

/* The leader's offset for o->ts; 0, or -1 when it did not give one. */
static int pf_oor_offset(const net_out_resp_t *resp, int64_t *offset)
{
    arena_t a;
    proto_list_offsets_resp_t r;
    int rc = -1;

    arena_init(&a, 1024);
    proto_list_offsets_resp_init(&r);
    if (!resp->err &&
        proto_list_offsets_resp_decode(&r, resp->api_version, resp->body, resp->len, &a) == 0 &&
        r.topics.n == 1 && r.topics.v[0].partitions.n == 1 &&
        !r.topics.v[0].partitions.v[0].error_code) {
        *offset = r.topics.v[0].partitions.v[0].offset;
        rc = *offset >= 0 ? 0 : -1;
    }
    arena_destroy(&a);
    return rc;
}

/* What the leader's offset makes of our log. Returns 1 when the earliest
 * offset is to be asked next. */
static int pf_oor_apply(pf_oor_t *o, part_t *part, int64_t offset)
{
    int64_t leo = log_end_offset(part->log);
    if (o->ts == PART_OFFSET_LATEST) {
        if (offset >= leo)
            return 1;
        lg_warn("%s-%d: leader %d ends at %lld, below us (%lld): truncating", part->topic->name,
                part->index, o->f->leader, (long long)offset, (long long)leo);
        if (log_truncate_to(part->log, offset) < 0)
            lg_error("%s-%d: truncation failed", part->topic->name, part->index);
        return 0;
    }
    if (offset > leo) {
        lg_warn("%s-%d: leader %d starts at %lld, past our end %lld: starting there",
                part->topic->name, part->index, o->f->leader, (long long)offset, (long long)leo);
        if (log_reset_to(part->log, offset, net_now_wall_ms()) < 0)
            lg_error("%s-%d: reset failed", part->topic->name, part->index);
    }
    return 0;
}

static void pf_oor_on_resp(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    pf_oor_t *o = arg;
    part_fetcher_t *f = o->f;
    int64_t offset = -1;
    (void)out;
    if (!f->fs) { /* being freed */
        free(o);
        return;
    }
    f->inflight--;
    pf_key_t *k = pf_key_find(f, o->topic_id, o->partition);
    part_t *part = k ? pf_part(f, k) : NULL;
    if (part && pf_oor_offset(resp, &offset) < 0) {
        pf_backoff(f, k);
    } else if (part && pf_oor_apply(o, part, offset)) {
        o->ts = PART_OFFSET_EARLIEST;
        pf_oor_send(o, part);
        pf_request_done(f);
        return;
    }
    if (k)
        k->oor = 0;
    free(o);
    pf_request_done(f);
}
