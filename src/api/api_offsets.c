/* ListOffsets (key 2) and OffsetForLeaderEpoch (key 23): where a consumer
 * starts, and how it checks its position after a leader change. */
#include <string.h>

#include "api/api_util.h"
#include "util/kerr.h"
#include "partition/part_read.h"

/* Each special timestamp is known from the version that brought it (max
 * timestamp v7, earliest local v8, latest tiered v9, earliest pending
 * upload v11); before that, and for any other negative timestamp, Kafka
 * answers UNSUPPORTED_VERSION, before it looks at the partition. */
static int16_t api_lo_ts_check(int16_t ver, int64_t ts)
{
    static const int16_t since[] = {7, 8, 9, 11}; /* for -3, -4, -5, -6 */
    if (ts >= PART_OFFSET_EARLIEST)
        return KERR_NONE;
    if (ts < PART_OFFSET_EARLIEST_PENDING_UPLOAD || ver < since[PART_OFFSET_MAX_TIMESTAMP - ts])
        return KERR_UNSUPPORTED_VERSION;
    return KERR_NONE;
}

/* An error leaves offset, timestamp and epoch at -1, as Kafka. */
static void api_lo_part(part_t *part, const proto_list_offsets_req_list_offsets_partition_t *rp,
                        int replica, int8_t isolation,
                        proto_list_offsets_resp_list_offsets_partition_response_t *pr)
{
    part_offset_t o;
    /* Kafka checks a current leader epoch unless it is -1 (none): one
     * below is older than any of ours. */
    pr->error_code = rp->current_leader_epoch < -1
                         ? KERR_FENCED_LEADER_EPOCH
                         : part_list_offset(part, rp->timestamp, rp->current_leader_epoch,
                                            isolation, &o);
    if (pr->error_code)
        return;
    /* A follower (replica id >= 0) asking the latest offset gets the log
     * end, as Kafka answers a replica, not the high watermark. */
    pr->offset = replica && rp->timestamp == PART_OFFSET_LATEST ? part_log_end(part) : o.offset;
    pr->timestamp = o.timestamp;
    pr->leader_epoch = o.leader_epoch;
}

void api_list_offsets(api_req_t *req)
{
    proto_list_offsets_req_t r;
    proto_list_offsets_resp_t resp;

    proto_list_offsets_req_init(&r);
    if (proto_list_offsets_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                      req->arena) < 0) {
        api_close(req, "malformed ListOffsets request");
        return;
    }
    proto_list_offsets_resp_init(&resp);
    resp.topics.n = r.topics.n < 0 ? 0 : r.topics.n;
    resp.topics.v = arena_calloc(req->arena, (size_t)resp.topics.n + 1, sizeof(*resp.topics.v));
    for (int32_t i = 0; i < resp.topics.n; i++) {
        proto_list_offsets_req_list_offsets_topic_t *rt = &r.topics.v[i];
        proto_list_offsets_resp_list_offsets_topic_response_t *tr = &resp.topics.v[i];
        proto_list_offsets_resp_list_offsets_topic_response_init(tr);
        tr->name = rt->name;
        tr->partitions.n = rt->partitions.n < 0 ? 0 : rt->partitions.n;
        tr->partitions.v = arena_calloc(req->arena, (size_t)tr->partitions.n + 1,
                                        sizeof(*tr->partitions.v));
        for (int32_t j = 0; j < tr->partitions.n; j++) {
            proto_list_offsets_req_list_offsets_partition_t *rp = &rt->partitions.v[j];
            proto_list_offsets_resp_list_offsets_partition_response_t *pr = &tr->partitions.v[j];
            part_t *part;
            proto_list_offsets_resp_list_offsets_partition_response_init(pr);
            pr->partition_index = rp->partition_index;
            part = NULL;
            pr->error_code = api_lo_ts_check(req->hdr.api_version, rp->timestamp);
            if (!pr->error_code)
                pr->error_code = part_find_by_name(req->b->reg, rt->name.p, rt->name.len,
                                                   rp->partition_index, &part);
            if (part)
                api_lo_part(part, rp, r.replica_id >= 0, r.isolation_level, pr);
        }
    }
    API_REPLY(req, list_offsets, &resp);
}

void api_offset_for_leader_epoch(api_req_t *req)
{
    proto_offset_for_leader_epoch_req_t r;
    proto_offset_for_leader_epoch_resp_t resp;

    proto_offset_for_leader_epoch_req_init(&r);
    if (proto_offset_for_leader_epoch_req_decode(&r, req->hdr.api_version, req->body,
                                                 req->body_len, req->arena) < 0) {
        api_close(req, "malformed OffsetForLeaderEpoch request");
        return;
    }
    proto_offset_for_leader_epoch_resp_init(&resp);
    resp.topics.n = r.topics.n < 0 ? 0 : r.topics.n;
    resp.topics.v = arena_calloc(req->arena, (size_t)resp.topics.n + 1, sizeof(*resp.topics.v));
    for (int32_t i = 0; i < resp.topics.n; i++) {
        proto_offset_for_leader_epoch_req_offset_for_leader_topic_t *rt = &r.topics.v[i];
        proto_offset_for_leader_epoch_resp_offset_for_leader_topic_result_t *tr =
            &resp.topics.v[i];
        proto_offset_for_leader_epoch_resp_offset_for_leader_topic_result_init(tr);
        tr->topic = rt->topic;
        tr->partitions.n = rt->partitions.n < 0 ? 0 : rt->partitions.n;
        tr->partitions.v = arena_calloc(req->arena, (size_t)tr->partitions.n + 1,
                                        sizeof(*tr->partitions.v));
        for (int32_t j = 0; j < tr->partitions.n; j++) {
            proto_offset_for_leader_epoch_req_offset_for_leader_partition_t *rp =
                &rt->partitions.v[j];
            proto_offset_for_leader_epoch_resp_epoch_end_offset_t *pr = &tr->partitions.v[j];
            part_t *part;
            proto_offset_for_leader_epoch_resp_epoch_end_offset_init(pr);
            pr->partition = rp->partition;
            pr->error_code =
                part_find_by_name(req->b->reg, rt->topic.p, rt->topic.len, rp->partition, &part);
            if (part && rp->current_leader_epoch < -1) /* as in ListOffsets */
                pr->error_code = KERR_FENCED_LEADER_EPOCH;
            else if (part)
                pr->error_code = part_epoch_end(part, rp->current_leader_epoch, rp->leader_epoch,
                                                &pr->end_offset, &pr->leader_epoch);
        }
    }
    API_REPLY(req, offset_for_leader_epoch, &resp);
}
