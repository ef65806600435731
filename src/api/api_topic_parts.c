/* DescribeTopicPartitions (key 75): topics and their partitions, a page
 * at a time, as Kafka 4.4's DescribeTopicPartitionsRequestHandler and
 * KRaftMetadataCache.describeTopicResponse answer it (the Java admin
 * client's describeTopics uses it, so kafka-topics.sh --describe does).
 *
 * The topics asked for (all of them when the list is empty), from the
 * cursor's topic on, sorted by name without repeats, fill the page until
 * ResponsePartitionLimit partitions (at most Kafka's default
 * max.request.partition.size.limit, 2000, at least 1) are in; where a
 * topic does not fit whole, NextCursor names its next partition, and a
 * topic reached with the page already full is named by NextCursor at
 * partition 0. Unknown and invalid names are answered as errors only
 * when asked for by name. A cursor whose topic is not in a given list, or
 * with a negative partition, makes the whole answer INVALID_REQUEST for
 * every topic asked (Kafka's error response). Partition errors are always
 * 0: an offline partition shows no leader and the replica offline, as in
 * Metadata. */
#include <stdlib.h>
#include <string.h>

#include "api/api_pview.h"
#include "api/api_tools.h"
#include "api/api_util.h"
#include "cluster/ctl.h"
#include "util/kerr.h"

#define API_DTP_MAX_PARTITIONS 2000 /* max.request.partition.size.limit */

typedef proto_describe_topic_partitions_resp_describe_topic_partitions_response_topic_t api_dtp_topic_t;
typedef proto_describe_topic_partitions_resp_describe_topic_partitions_response_partition_t
    api_dtp_part_t;

/* Java's String.compareTo for the names Kafka allows (ASCII). */
static int api_dtp_cmp_str(proto_str_t a, proto_str_t b)
{
    size_t n = (size_t)(a.len < b.len ? a.len : b.len);
    int c = n ? memcmp(a.p, b.p, n) : 0;
    return c ? c : (a.len > b.len) - (a.len < b.len);
}

static int api_dtp_cmp(const void *a, const void *b)
{
    return api_dtp_cmp_str(*(const proto_str_t *)a, *(const proto_str_t *)b);
}

static int api_dtp_eq(proto_str_t a, proto_str_t b)
{
    return a.len == b.len && (!a.len || !memcmp(a.p, b.p, (size_t)a.len));
}

/* The names to describe, sorted, unique, none before the cursor's topic;
 * *n gets their count. NULL names (not allowed here) are skipped. */
static proto_str_t *api_dtp_names(api_req_t *req, const proto_describe_topic_partitions_req_t *r,
                                  proto_str_t from, int32_t *n)
{
    int32_t cap = r->topics.n > 0 ? r->topics.n : (int32_t)req->b->reg->by_name.count;
    proto_str_t *v = arena_calloc(req->arena, (size_t)cap + 1, sizeof(*v));
    int32_t k = 0;
    if (r->topics.n > 0) {
        for (int32_t i = 0; i < r->topics.n; i++)
            if (r->topics.v[i].name.len >= 0 && api_dtp_cmp_str(r->topics.v[i].name, from) >= 0)
                v[k++] = r->topics.v[i].name;
    } else {
        size_t pos = 0;
        topic_t *t;
        while ((t = part_topic_next(req->b->reg, &pos)) && k < cap) {
            proto_str_t s = {t->name, (int32_t)t->name_len};
            if (api_dtp_cmp_str(s, from) >= 0)
                v[k++] = s;
        }
    }
    qsort(v, (size_t)k, sizeof(*v), api_dtp_cmp);
    int32_t u = 0;
    for (int32_t i = 0; i < k; i++)
        if (!u || !api_dtp_eq(v[u - 1], v[i]))
            v[u++] = v[i];
    *n = u;
    return v;
}

/* Partitions [start, start + max) of topic into t; returns the index of
 * the first one left out, or -1 when the topic ended. */
static int32_t api_dtp_fill_topic(api_req_t *req, api_dtp_topic_t *t, topic_t *topic,
                                  int32_t start, int32_t max)
{
    api_pview_t v;
    const mi_topic_t *mt = req->b->raft ? meta_image_topic_by_id(ctl_image(req->b->ctl), topic->id)
                                        : NULL;
    /* a quorum's broker hosts some partitions; the image has them all */
    int32_t nparts = mt ? mt->nparts : topic->nparts;
    int32_t upper = nparts < start + (int64_t)max ? nparts : start + max;
    int32_t n = upper > start ? upper - start : 0;
    t->name.p = topic->name;
    t->name.len = (int32_t)topic->name_len;
    memcpy(t->topic_id.b, topic->id, 16);
    t->is_internal = api_internal_topic(t->name);
    t->topic_authorized_operations = API_TOPIC_AUTHORIZED_OPS;
    t->partitions.n = n;
    t->partitions.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*t->partitions.v));
    for (int32_t i = 0; i < n; i++) {
        proto_describe_topic_partitions_resp_describe_topic_partitions_response_partition_init(
            &t->partitions.v[i]);
        api_dtp_part_t *p = &t->partitions.v[i];
        p->partition_index = start + i;
        if (api_pview_get(req, topic, mt, start + i, &v)) { /* its error code not shown */
            API_PVIEW_SET(p, &v);
            API_PVIEW_SET_ELR(p, &v);
        }
    }
    return upper < nparts ? upper : -1;
}

static void api_dtp_cursor(api_req_t *req, proto_describe_topic_partitions_resp_t *resp,
                           proto_str_t name, int32_t partition)
{
    resp->next_cursor.n = 1;
    resp->next_cursor.v = arena_calloc(req->arena, 1, sizeof(*resp->next_cursor.v));
    proto_describe_topic_partitions_resp_cursor_init(resp->next_cursor.v);
    resp->next_cursor.v->topic_name = name;
    resp->next_cursor.v->partition_index = partition;
}

/* An unknown or invalid name asked for explicitly. */
static void api_dtp_missing(api_dtp_topic_t *t, proto_str_t name)
{
    t->name = name;
    t->error_code = ctl_topic_name_check(name.p, (size_t)name.len, NULL, 0);
    if (!t->error_code)
        t->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
    t->is_internal = api_internal_topic(name);
    t->topic_authorized_operations = API_TOPIC_AUTHORIZED_OPS;
}

/* KRaftMetadataCache.describeTopicResponse over the sorted names. */
static void api_dtp_page(api_req_t *req, proto_describe_topic_partitions_resp_t *resp,
                         const proto_str_t *names, int32_t n, int by_name, proto_str_t cur,
                         int32_t cur_part, int32_t limit)
{
    int32_t remaining = limit, k = 0;
    resp->topics.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp->topics.v));
    for (int32_t i = 0; i < n; i++) {
        if (remaining <= 0) {
            api_dtp_cursor(req, resp, names[i], 0);
            break;
        }
        api_dtp_topic_t *t = &resp->topics.v[k];
        proto_describe_topic_partitions_resp_describe_topic_partitions_response_topic_init(t);
        topic_t *topic = part_topic_get(req->b->reg, names[i].p, (size_t)names[i].len);
        if (!topic) {
            if (by_name) {
                api_dtp_missing(t, names[i]);
                k++;
            }
            continue;
        }
        int32_t start = api_dtp_eq(names[i], cur) ? cur_part : 0;
        int32_t next = api_dtp_fill_topic(req, t, topic, start, remaining);
        k++;
        if (next >= 0) {
            api_dtp_cursor(req, resp, t->name, next);
            break;
        }
        remaining -= t->partitions.n;
    }
    resp->topics.n = k;
}

/* Kafka's error response: every topic asked, with err and no details. */
static void api_dtp_error(api_req_t *req, const proto_describe_topic_partitions_req_t *r,
                          proto_describe_topic_partitions_resp_t *resp, int16_t err)
{
    int32_t n = r->topics.n < 0 ? 0 : r->topics.n;
    resp->topics.n = n;
    resp->topics.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*resp->topics.v));
    for (int32_t i = 0; i < n; i++) {
        api_dtp_topic_t *t = &resp->topics.v[i];
        proto_describe_topic_partitions_resp_describe_topic_partitions_response_topic_init(t);
        t->name = r->topics.v[i].name;
        t->error_code = err;
    }
}

void api_describe_topic_partitions(api_req_t *req)
{
    proto_describe_topic_partitions_req_t r;
    proto_describe_topic_partitions_resp_t resp;
    int32_t n;

    proto_describe_topic_partitions_req_init(&r);
    if (proto_describe_topic_partitions_req_decode(&r, req->hdr.api_version, req->body,
                                                   req->body_len, req->arena) < 0) {
        api_close(req, "malformed DescribeTopicPartitions request");
        return;
    }
    proto_describe_topic_partitions_resp_init(&resp);
    const proto_describe_topic_partitions_req_cursor_t *c = r.cursor.n > 0 ? r.cursor.v : NULL;
    proto_str_t from = c ? c->topic_name : PROTO_STR("");
    int by_name = r.topics.n > 0;
    const proto_str_t *names = api_dtp_names(req, &r, from, &n);
    int cursor_listed = !c || !by_name;
    for (int32_t i = 0; !cursor_listed && i < n; i++)
        cursor_listed = api_dtp_eq(names[i], c->topic_name);
    if (!cursor_listed || (c && c->partition_index < 0)) {
        api_dtp_error(req, &r, &resp, KERR_INVALID_REQUEST);
        API_REPLY(req, describe_topic_partitions, &resp);
        return;
    }
    int32_t limit = r.response_partition_limit < API_DTP_MAX_PARTITIONS
                        ? r.response_partition_limit : API_DTP_MAX_PARTITIONS;
    api_dtp_page(req, &resp, names, n, by_name, from, c ? c->partition_index : 0,
                 limit < 1 ? 1 : limit);
    API_REPLY(req, describe_topic_partitions, &resp);
}
