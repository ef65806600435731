/* ListOffsets (key 2) and OffsetForLeaderEpoch (key 23): where a consumer
 * starts, and how it checks its position after a leader change. */
#include <string.h>

#include "api/api_util.h"

#define LO_LATEST -1
#define LO_EARLIEST -2
#define LO_MAX_TIMESTAMP -3
#define LO_EARLIEST_LOCAL -4
#define LO_LATEST_TIERED -5
#define LO_EARLIEST_PENDING_UPLOAD -6

/* Each special timestamp is known from the version that brought it (max
 * timestamp v7, earliest local v8, latest tiered v9, earliest pending
 * upload v11); before that, and for any other negative timestamp, Kafka
 * answers UNSUPPORTED_VERSION, before it looks at the partition. */
static int16_t api_lo_ts_check(int16_t ver, int64_t ts)
{
    static const int16_t since[] = {7, 8, 9, 11}; /* for -3, -4, -5, -6 */
    if (ts >= LO_EARLIEST)
        return KERR_NONE;
    if (ts < LO_EARLIEST_PENDING_UPLOAD || ver < since[LO_MAX_TIMESTAMP - ts])
        return KERR_UNSUPPORTED_VERSION;
    return KERR_NONE;
}

static void api_lo_part(api_req_t *req, part_t *part, int8_t isolation,
                        proto_list_offsets_req_list_offsets_partition_t *rp,
                        proto_list_offsets_resp_list_offsets_partition_response_t *pr)
{
    log_ts_offset_t ts;
    int16_t err = api_check_epoch(part, rp->current_leader_epoch);
    (void)isolation; /* no transactions yet: the last stable offset is the high watermark */

    if (err) {
        pr->error_code = err;
        return;
    }
    pr->timestamp = -1;
    pr->leader_epoch = part->leader_epoch;
    switch (rp->timestamp) {
    case LO_LATEST:
        pr->offset = part_hwm(part);
        break;
    case LO_EARLIEST:
    case LO_EARLIEST_LOCAL:
        pr->offset = log_start_offset(part->log);
        break;
    case LO_LATEST_TIERED:
    case LO_EARLIEST_PENDING_UPLOAD:
        /* Nothing is tiered: Kafka answers -1 then. */
        pr->offset = -1;
        pr->leader_epoch = -1;
        break;
    case LO_MAX_TIMESTAMP:
        err = log_max_timestamp(part->log, &ts);
        if (err == 0) {
            pr->offset = ts.offset;
            pr->timestamp = ts.timestamp;
            pr->leader_epoch = ts.leader_epoch;
        } else if (err == 1) {
            pr->offset = -1;
            pr->leader_epoch = -1;
        } else {
            pr->error_code = err;
        }
        break;
    default: /* a timestamp >= 0 (api_lo_ts_check refused the others) */
        err = log_offset_for_timestamp(part->log, rp->timestamp, &ts);
        if (err == 0 && ts.offset < part_hwm(part)) {
            pr->offset = ts.offset;
            pr->timestamp = ts.timestamp;
            pr->leader_epoch = ts.leader_epoch;
        } else if (err == 0 || err == 1) {
            pr->offset = -1;
            pr->leader_epoch = -1;
        } else {
            pr->error_code = err;
        }
    }
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
            /* An error leaves offset, timestamp and epoch at -1, as Kafka. */
            pr->error_code = api_lo_ts_check(req->hdr.api_version, rp->timestamp);
            if (!pr->error_code)
                pr->error_code =
                    api_part_online_by_name(req, rt->name, rp->partition_index, &part);
            else
                part = NULL;
            if (part)
                api_lo_part(req, part, r.isolation_level, rp, pr);
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
            pr->error_code = api_part_online_by_name(req, rt->topic, rp->partition, &part);
            if (!part)
                continue;
            pr->error_code = api_check_epoch(part, rp->current_leader_epoch);
            if (!pr->error_code)
                log_epoch_end_offset(part->log, rp->leader_epoch, &pr->end_offset,
                                     &pr->leader_epoch);
        }
    }
    API_REPLY(req, offset_for_leader_epoch, &resp);
}
