/* DescribeProducers (key 61): the idempotent and transactional producers
 * each partition keeps state for (src/log's producer state), as Kafka's
 * KafkaApis and Partition.activeProducerState answer it: a topic name
 * Kafka would refuse gets INVALID_TOPIC_EXCEPTION with the reason, an
 * unknown topic UNKNOWN_TOPIC_OR_PARTITION with that error's text, on
 * every partition asked; an unknown partition of a known topic (or an
 * offline one: KAFKA_STORAGE_ERROR) gets the code alone. This is what
 * `kafka-transactions.sh describe-producers` shows. */
#include <stdio.h>
#include <string.h>

#include "api/api_tools.h"
#include "api/api_util.h"
#include "partition/part_read.h"
#include "util/kerr.h"

/* Errors.UNKNOWN_TOPIC_OR_PARTITION.message(). */
static const char api_dp_unknown_msg[] = "This server does not host this topic-partition.";

typedef struct api_dp_list_s {
    api_req_t *req;
    proto_describe_producers_resp_producer_state_t *v;
    int32_t n, cap;
} api_dp_list_t;

static void api_dp_add(void *arg, const log_producer_info_t *p)
{
    api_dp_list_t *l = arg;
    if (l->n == l->cap) {
        int32_t cap = l->cap ? l->cap * 2 : 8;
        void *v = arena_alloc(l->req->arena, (size_t)cap * sizeof(*l->v));
        if (l->n)
            memcpy(v, l->v, (size_t)l->n * sizeof(*l->v));
        l->v = v;
        l->cap = cap;
    }
    proto_describe_producers_resp_producer_state_t *ps = &l->v[l->n++];
    proto_describe_producers_resp_producer_state_init(ps);
    ps->producer_id = p->producer_id;
    ps->producer_epoch = p->epoch;
    ps->last_sequence = p->last_sequence;
    ps->last_timestamp = p->last_timestamp;
    ps->coordinator_epoch = p->coordinator_epoch;
    ps->current_txn_start_offset = p->current_txn_first_offset;
}

/* One partition; topic_err/topic_msg: the topic's own error, if any. */
static void api_dp_partition(api_req_t *req, topic_t *topic, int32_t index, int16_t topic_err,
                             proto_str_t topic_msg,
                             proto_describe_producers_resp_partition_response_t *pr)
{
    part_t *part;
    proto_describe_producers_resp_partition_response_init(pr);
    pr->partition_index = index;
    if (topic_err) {
        pr->error_code = topic_err;
        pr->error_message = topic_msg;
        return;
    }
    if ((pr->error_code = part_find(topic, index, &part)))
        return;
    api_dp_list_t l = {req, NULL, 0, 0};
    part_producers(part, api_dp_add, &l);
    pr->active_producers.n = l.n;
    pr->active_producers.v = l.v;
}

static void api_dp_topic(api_req_t *req, const proto_describe_producers_req_topic_request_t *tq,
                         proto_describe_producers_resp_topic_response_t *tr)
{
    char why[400];
    proto_str_t msg = PROTO_STR_NULL;
    topic_t *topic = NULL;
    int16_t err;

    proto_describe_producers_resp_topic_response_init(tr);
    tr->name = tq->name;
    size_t len = tq->name.len < 0 ? 0 : (size_t)tq->name.len;
    if ((err = ctl_topic_name_check(tq->name.p ? tq->name.p : "", len, why, sizeof(why)))) {
        msg.p = arena_strndup(req->arena, why, strlen(why));
        msg.len = (int32_t)strlen(why);
    } else if (!(topic = part_topic_get(req->b->reg, tq->name.p, len))) {
        err = KERR_UNKNOWN_TOPIC_OR_PARTITION;
        msg = PROTO_STR(api_dp_unknown_msg);
    }
    int32_t n = tq->partition_indexes.n < 0 ? 0 : tq->partition_indexes.n;
    tr->partitions.n = n;
    tr->partitions.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*tr->partitions.v));
    for (int32_t i = 0; i < n; i++)
        api_dp_partition(req, topic, tq->partition_indexes.v[i], err, msg, &tr->partitions.v[i]);
}

void api_describe_producers(api_req_t *req)
{
    proto_describe_producers_req_t r;
    proto_describe_producers_resp_t resp;

    proto_describe_producers_req_init(&r);
    if (proto_describe_producers_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                            req->arena) < 0) {
        api_close(req, "malformed DescribeProducers request");
        return;
    }
    proto_describe_producers_resp_init(&resp);
    int32_t n = r.topics.n < 0 ? 0 : r.topics.n;
    resp.topics.n = n;
    resp.topics.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp.topics.v));
    for (int32_t i = 0; i < n; i++)
        api_dp_topic(req, &r.topics.v[i], &resp.topics.v[i]);
    API_REPLY(req, describe_producers, &resp);
}
