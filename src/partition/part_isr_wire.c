/* The AlterPartition requests of the ISR manager (part_isr.c), as Kafka's
 * AlterPartitionManager sends them: one in flight, carrying every
 * proposal queued since the last one, at version 3 (each member with the
 * broker epoch it last fetched with, so the controller refuses a member
 * that has restarted since). The answer for each partition, as Kafka's
 * Partition handles it:
 *   - none: the ISR and partition epoch the controller wrote are taken;
 *   - OPERATION_NOT_ATTEMPTED, INELIGIBLE_REPLICA: the proposal is
 *     dropped (the ISR stays the committed one; a later fetch or check
 *     proposes again);
 *   - FENCED_LEADER_EPOCH, INVALID_UPDATE_VERSION, UNKNOWN_TOPIC_*,
 *     INVALID_REQUEST, NEW_LEADER_ELECTED: this leader's view is stale;
 *     the proposal waits for the metadata, which brings the truth (or the
 *     next shrink check drops it);
 *   - anything else, a request-level error (NOT_CONTROLLER, a stale
 *     broker epoch while re-registering) or no answer: sent again after
 *     100 ms, to the controller known then. */
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_image.h"
#include "partition/part_isr_int.h"
#include "proto/proto.h"
#include "util/kerr.h"
#include "util/logging.h"
#include "util/mem.h"

#define PISR_VERSION 3

/* An AlterPartition out: the keys it carries. */
typedef struct pisr_sent_s {
    part_isr_t *s;
    pisr_key_t *keys; /* owned */
    int n;
} pisr_sent_t;

static int64_t pisr_own_epoch(const part_reg_t *reg)
{
    const mi_broker_t *b = meta_image_broker(&reg->meta->img, reg->node_id);
    return b ? b->epoch : -1;
}

static proto_alter_partition_req_topic_data_t *pisr_topic(proto_alter_partition_req_t *r,
                                                          const uint8_t id[16], int cap,
                                                          arena_t *a)
{
    for (int i = 0; i < r->topics.n; i++)
        if (!memcmp(r->topics.v[i].topic_id.b, id, 16))
            return &r->topics.v[i];
    proto_alter_partition_req_topic_data_t *t = &r->topics.v[r->topics.n++];
    proto_alter_partition_req_topic_data_init(t);
    memcpy(t->topic_id.b, id, 16);
    t->partitions.v = arena_calloc(a, (size_t)cap + 1, sizeof(*t->partitions.v));
    return t;
}

static void pisr_add(proto_alter_partition_req_t *r, const part_reg_t *reg, part_t *part,
                     int cap, arena_t *a)
{
    proto_alter_partition_req_topic_data_t *t = pisr_topic(r, part->topic->id, cap, a);
    proto_alter_partition_req_partition_data_t *pd = &t->partitions.v[t->partitions.n++];
    proto_alter_partition_req_broker_state_t *v =
        arena_calloc(a, (size_t)part->npend + 1, sizeof(*v));

    proto_alter_partition_req_partition_data_init(pd);
    pd->partition_index = part->index;
    pd->leader_epoch = part->leader_epoch;
    pd->partition_epoch = part->partition_epoch;
    for (int32_t i = 0; i < part->npend; i++) {
        const part_replica_t *rep = part_replica_get(part, part->pend_isr[i]);
        v[i].broker_id = part->pend_isr[i];
        v[i].broker_epoch = v[i].broker_id == reg->node_id ? pisr_own_epoch(reg)
                            : rep                           ? rep->broker_epoch
                                                            : -1;
    }
    pd->new_isr_with_epochs.n = part->npend;
    pd->new_isr_with_epochs.v = v;
    part->pend_state = PART_ISR_SENT;
}

static void pisr_on_resp(net_out_t *out, const net_out_resp_t *resp, void *arg);

/* The request of what is queued; the keys it carries move to sent. */
static int pisr_build(part_isr_t *s, proto_alter_partition_req_t *r, pisr_sent_t *sent,
                      arena_t *a)
{
    proto_alter_partition_req_init(r);
    r->broker_id = s->reg->node_id;
    r->broker_epoch = pisr_own_epoch(s->reg);
    r->topics.v = arena_calloc(a, (size_t)s->nq + 1, sizeof(*r->topics.v));
    sent->keys = xcalloc((size_t)s->nq + 1, sizeof(*sent->keys));
    for (int i = 0; i < s->nq; i++) {
        part_t *part = pisr_part(s, &s->queue[i], PART_ISR_QUEUED);
        if (!part)
            continue; /* gone, led elsewhere, or replaced by a newer proposal */
        pisr_add(r, s->reg, part, s->nq, a);
        sent->keys[sent->n++] = s->queue[i];
    }
    s->nq = 0;
    return sent->n;
}

void pisr_kick(part_isr_t *s)
{
    net_out_t *out;
    pisr_sent_t *sent;
    proto_alter_partition_req_t r;
    arena_t a;
    buf_t body;

    if (s->inflight || !s->nq || !s->out || s->retry)
        return;
    if (pisr_own_epoch(s->reg) < 0 || !(out = s->out(s->ctx))) {
        pisr_retry_arm(s);
        return;
    }
    sent = xcalloc(1, sizeof(*sent));
    sent->s = s;
    arena_init(&a, 1024);
    if (!pisr_build(s, &r, sent, &a)) {
        arena_destroy(&a);
        free(sent->keys);
        free(sent);
        return;
    }
    buf_init(&body);
    proto_alter_partition_req_encode(&r, PISR_VERSION, &body);
    arena_destroy(&a);
    s->inflight = 1;
    if (net_out_send(out, PROTO_API_ALTER_PARTITION, PISR_VERSION, &body, 0, pisr_on_resp,
                     sent) < 0) {
        buf_free(&body);
        s->inflight = 0;
        pisr_on_resp(NULL, NULL, sent);
    }
}

/* One partition's answer to the proposal k. */
static void pisr_answer(part_isr_t *s, const pisr_key_t *k,
                        const proto_alter_partition_resp_partition_data_t *pd)
{
    part_t *part = pisr_part(s, k, PART_ISR_SENT);
    if (!part)
        return;
    switch (pd->error_code) {
    case KERR_NONE:
        pisr_committed(s, part, pd->isr.v, pd->isr.n > 0 ? pd->isr.n : 0, pd->leader_epoch,
                       pd->partition_epoch);
        break;
    case KERR_OPERATION_NOT_ATTEMPTED:
    case KERR_INELIGIBLE_REPLICA:
        lg_info("%s-%d: ISR change refused: %s", part->topic->name, part->index,
                kerr_name(pd->error_code));
        part_isr_clear(part);
        if (part_update_hwm(part))
            part_notify(part);
        break;
    case KERR_FENCED_LEADER_EPOCH:
    case KERR_INVALID_UPDATE_VERSION:
    case KERR_UNKNOWN_TOPIC_OR_PARTITION:
    case KERR_UNKNOWN_TOPIC_ID:
    case KERR_INVALID_REQUEST:
    case KERR_NEW_LEADER_ELECTED:
        lg_info("%s-%d: ISR change refused: %s; waiting for the metadata", part->topic->name,
                part->index, kerr_name(pd->error_code));
        part->pend_state = PART_ISR_STALE;
        break;
    default:
        pisr_requeue(s, k);
        break;
    }
}

/* The answers matched to the keys sent; a key without one goes again. */
static void pisr_match(part_isr_t *s, pisr_sent_t *sent, const proto_alter_partition_resp_t *r)
{
    for (int i = 0; i < r->topics.n; i++) {
        const proto_alter_partition_resp_topic_data_t *t = &r->topics.v[i];
        for (int j = 0; j < t->partitions.n; j++) {
            const proto_alter_partition_resp_partition_data_t *pd = &t->partitions.v[j];
            for (int x = 0; x < sent->n; x++) {
                pisr_key_t *k = &sent->keys[x];
                if (k->partition != pd->partition_index || memcmp(k->topic_id, t->topic_id.b, 16))
                    continue;
                pisr_answer(s, k, pd);
                k->partition = -1; /* answered */
                break;
            }
        }
    }
    for (int x = 0; x < sent->n; x++)
        if (sent->keys[x].partition >= 0)
            pisr_requeue(s, &sent->keys[x]);
}

static void pisr_on_resp(net_out_t *out, const net_out_resp_t *resp, void *arg)
{
    pisr_sent_t *sent = arg;
    part_isr_t *s = sent->s;
    proto_alter_partition_resp_t r;
    arena_t a;
    (void)out;

    s->inflight = 0;
    arena_init(&a, 1024);
    proto_alter_partition_resp_init(&r);
    if (!resp || resp->err ||
        proto_alter_partition_resp_decode(&r, resp->api_version, resp->body, resp->len, &a) < 0)
        r.error_code = KERR_NETWORK_EXCEPTION;
    if (r.error_code)
        r.topics.n = 0; /* every key goes again */
    pisr_match(s, sent, &r);
    arena_destroy(&a);
    free(sent->keys);
    free(sent);
    pisr_kick(s);
}
