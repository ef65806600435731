/* DeleteRecords (21) and DescribeLogDirs (35). */
#include <string.h>
#include <sys/statvfs.h>

#include "api/api_admin.h"
#include "api/api_util.h"
#include "partition/part_read.h"

/* ---- DeleteRecords ---- */

/* One partition: Kafka never deletes records of an internal topic
 * (INVALID_TOPIC_EXCEPTION), whose records are a coordinator's state. */
static void api_dr_part(api_req_t *req, topic_t *topic,
                        const proto_delete_records_req_delete_records_partition_t *rp,
                        proto_delete_records_resp_delete_records_partition_result_t *pr)
{
    part_t *part;
    proto_delete_records_resp_delete_records_partition_result_init(pr);
    pr->partition_index = rp->partition_index;
    pr->low_watermark = -1;
    pr->error_code = part_find(topic, rp->partition_index, &part);
    if (part && topic->internal)
        pr->error_code = KERR_INVALID_TOPIC_EXCEPTION;
    else if (part) /* offset -1: up to the high watermark, as in Kafka */
        pr->error_code = part_delete_records(part, rp->offset, &pr->low_watermark);
}

/* A topic asked with no partitions gets no entry, as in Kafka's answer. */
void api_delete_records(api_req_t *req)
{
    proto_delete_records_req_t r;
    proto_delete_records_resp_t resp;

    proto_delete_records_req_init(&r);
    if (proto_delete_records_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                        req->arena) < 0) {
        api_close(req, "malformed DeleteRecords request");
        return;
    }
    int32_t nt = r.topics.n > 0 ? r.topics.n : 0;
    proto_delete_records_resp_init(&resp);
    resp.topics.v = arena_calloc(req->arena, (size_t)nt + 1, sizeof(*resp.topics.v));
    for (int32_t i = 0; i < nt; i++) {
        const proto_delete_records_req_delete_records_topic_t *rt = &r.topics.v[i];
        if (rt->partitions.n <= 0)
            continue;
        proto_delete_records_resp_delete_records_topic_result_t *tr =
            &resp.topics.v[resp.topics.n++];
        topic_t *topic = rt->name.len >= 0
                             ? part_topic_get(req->b->reg, rt->name.p, (size_t)rt->name.len)
                             : NULL;
        proto_delete_records_resp_delete_records_topic_result_init(tr);
        tr->name = rt->name;
        tr->partitions.n = rt->partitions.n;
        tr->partitions.v =
            arena_calloc(req->arena, (size_t)tr->partitions.n + 1, sizeof(*tr->partitions.v));
        for (int32_t j = 0; j < tr->partitions.n; j++)
            api_dr_part(req, topic, &rt->partitions.v[j], &tr->partitions.v[j]);
    }
    API_REPLY(req, delete_records, &resp);
}

/* ---- DescribeLogDirs ---- */

typedef proto_describe_log_dirs_resp_describe_log_dirs_result_t api_ld_res_t;
typedef proto_describe_log_dirs_resp_describe_log_dirs_topic_t api_ld_topic_t;

/* 1 when the request names this partition (topics null = all). */
static int api_ld_wanted(const proto_describe_log_dirs_req_t *r, const topic_t *topic, int32_t p)
{
    if (r->topics.n < 0)
        return 1;
    for (int32_t i = 0; i < r->topics.n; i++) {
        const proto_describe_log_dirs_req_describable_log_dir_topic_t *t = &r->topics.v[i];
        if (t->topic.len != (int32_t)topic->name_len || memcmp(t->topic.p, topic->name,
                                                               topic->name_len))
            continue;
        for (int32_t j = 0; j < t->partitions.n; j++)
            if (t->partitions.v[j] == p)
                return 1;
    }
    return 0;
}

/* The partitions of one log dir, grouped by topic. An offline log is left
 * out: Kafka lists only the logs it can serve (an offline log dir of its
 * own is answered KAFKA_STORAGE_ERROR with no topics). Strand takes a
 * single log offline, not its dir, so the dir and its other partitions
 * are still described. */
static void api_ld_dir(api_req_t *req, const proto_describe_log_dirs_req_t *r, int d,
                       api_ld_res_t *res)
{
    part_reg_t *reg = req->b->reg;
    size_t pos = 0;
    topic_t *topic;

    res->topics.v = arena_calloc(req->arena, reg->by_name.count + 1, sizeof(*res->topics.v));
    while ((topic = part_topic_next(reg, &pos))) {
        api_ld_topic_t *t = &res->topics.v[res->topics.n];
        proto_describe_log_dirs_resp_describe_log_dirs_topic_init(t);
        t->name.p = topic->name;
        t->name.len = (int32_t)topic->name_len;
        t->partitions.v = arena_calloc(req->arena, (size_t)topic->nparts + 1,
                                       sizeof(*t->partitions.v));
        for (int32_t p = 0; p < topic->nparts; p++) {
            part_t *part = topic->parts[p];
            if (part_offline(part) || part_dir(reg, part) != d ||
                !api_ld_wanted(r, topic, p))
                continue;
            proto_describe_log_dirs_resp_describe_log_dirs_partition_t *pp =
                &t->partitions.v[t->partitions.n++];
            proto_describe_log_dirs_resp_describe_log_dirs_partition_init(pp);
            pp->partition_index = p;
            pp->partition_size = part_size_bytes(part);
            pp->offset_lag = 0;
            pp->is_future_key = false;
        }
        if (t->partitions.n > 0)
            res->topics.n++;
    }
}

void api_describe_log_dirs(api_req_t *req)
{
    proto_describe_log_dirs_req_t r;
    proto_describe_log_dirs_resp_t resp;
    part_reg_t *reg = req->b->reg;

    proto_describe_log_dirs_req_init(&r);
    if (proto_describe_log_dirs_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                           req->arena) < 0) {
        api_close(req, "malformed DescribeLogDirs request");
        return;
    }
    proto_describe_log_dirs_resp_init(&resp);
    resp.results.n = part_ndirs(reg);
    resp.results.v = arena_calloc(req->arena, (size_t)resp.results.n + 1, sizeof(*resp.results.v));
    for (int d = 0; d < resp.results.n; d++) {
        api_ld_res_t *res = &resp.results.v[d];
        const char *path = part_dir_path(reg, d);
        struct statvfs st;
        proto_describe_log_dirs_resp_describe_log_dirs_result_init(res);
        res->log_dir.p = path;
        res->log_dir.len = (int32_t)strlen(path);
        if (statvfs(path, &st) == 0) {
            res->total_bytes = (int64_t)st.f_blocks * (int64_t)st.f_frsize;
            res->usable_bytes = (int64_t)st.f_bavail * (int64_t)st.f_frsize;
        }
        /* v5's IsCordoned stays false: Strand places new partitions in
         * every log dir (it does not act on cordoned.log.dirs). */
        api_ld_dir(req, &r, d, res);
    }
    API_REPLY(req, describe_log_dirs, &resp);
}
