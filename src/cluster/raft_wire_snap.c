/* FetchSnapshot on the wire (raft_wire_snap.h). */
#include <string.h>

#include "cluster/meta_log.h"
#include "cluster/raft_wire_snap.h"
#include "proto/proto.h"
#include "util/kerr.h"

static int snap_is_topic(proto_str_t s)
{
    size_t n = strlen(META_LOG_TOPIC);
    return s.len == (int32_t)n && memcmp(s.p, META_LOG_TOPIC, n) == 0;
}

void raft_wire_snap_req(const raft_wire_t *w, const raft_snap_req_t *r, int16_t version,
                        buf_t *out)
{
    proto_fetch_snapshot_req_t q;
    proto_fetch_snapshot_req_topic_snapshot_t t;
    proto_fetch_snapshot_req_partition_snapshot_t p;
    proto_fetch_snapshot_req_init(&q);
    proto_fetch_snapshot_req_topic_snapshot_init(&t);
    proto_fetch_snapshot_req_partition_snapshot_init(&p);
    if (w->cluster_id)
        q.cluster_id = (proto_str_t){w->cluster_id, (int32_t)strlen(w->cluster_id)};
    q.replica_id = r->replica_id;
    q.max_bytes = r->max_bytes;
    p.partition = 0;
    p.current_leader_epoch = r->leader_epoch;
    p.snapshot_id.end_offset = r->end_offset;
    p.snapshot_id.epoch = r->epoch;
    p.position = r->position;
    memcpy(p.replica_directory_id.b, w->dir_id, 16);
    t.name = PROTO_STR(META_LOG_TOPIC);
    t.partitions.n = 1;
    t.partitions.v = &p;
    q.topics.n = 1;
    q.topics.v = &t;
    proto_fetch_snapshot_req_encode(&q, version, out);
}

int raft_wire_snap_req_decode(const raft_wire_t *w, int16_t version, const uint8_t *body,
                              size_t len, arena_t *arena, raft_snap_req_t *r, int *other)
{
    proto_fetch_snapshot_req_t q;
    proto_fetch_snapshot_req_init(&q);
    memset(r, 0, sizeof(*r));
    *other = 0;
    if (proto_fetch_snapshot_req_decode(&q, version, body, len, arena) < 0)
        return -1;
    if (q.cluster_id.len >= 0 && w->cluster_id &&
        (q.cluster_id.len != (int32_t)strlen(w->cluster_id) ||
         memcmp(q.cluster_id.p, w->cluster_id, (size_t)q.cluster_id.len) != 0))
        return KERR_INCONSISTENT_CLUSTER_ID;
    if (q.topics.n != 1 || q.topics.v[0].partitions.n != 1)
        return KERR_INVALID_REQUEST;
    const proto_fetch_snapshot_req_partition_snapshot_t *p = &q.topics.v[0].partitions.v[0];
    *other = !snap_is_topic(q.topics.v[0].name) || p->partition != 0;
    r->replica_id = q.replica_id;
    r->max_bytes = q.max_bytes;
    r->leader_epoch = p->current_leader_epoch;
    r->end_offset = p->snapshot_id.end_offset;
    r->epoch = p->snapshot_id.epoch;
    r->position = p->position;
    return 0;
}

void raft_wire_snap_resp(const raft_wire_t *w, const raft_snap_resp_t *r, int16_t version,
                         buf_t *out)
{
    proto_fetch_snapshot_resp_t s;
    proto_fetch_snapshot_resp_topic_snapshot_t t;
    proto_fetch_snapshot_resp_partition_snapshot_t p;
    proto_fetch_snapshot_resp_node_endpoint_t ep;
    proto_fetch_snapshot_resp_init(&s);
    proto_fetch_snapshot_resp_topic_snapshot_init(&t);
    proto_fetch_snapshot_resp_partition_snapshot_init(&p);
    proto_fetch_snapshot_resp_node_endpoint_init(&ep);
    p.index = 0;
    p.error_code = r->err;
    p.current_leader.leader_id = r->leader_id;
    p.current_leader.leader_epoch = r->leader_epoch;
    p.snapshot_id.end_offset = r->end_offset;
    p.snapshot_id.epoch = r->epoch;
    p.size = r->size;
    p.position = r->position;
    p.unaligned_records.p = r->bytes;
    p.unaligned_records.len = (int32_t)r->len;
    p.unaligned_records.fd = -1;
    t.name = PROTO_STR(META_LOG_TOPIC);
    t.partitions.n = 1;
    t.partitions.v = &p;
    s.topics.n = 1;
    s.topics.v = &t;
    if (r->leader_id >= 0 && r->leader_id == w->node_id && w->host) {
        ep.node_id = w->node_id;
        ep.host = (proto_str_t){w->host, (int32_t)strlen(w->host)};
        ep.port = w->port;
        s.node_endpoints.n = 1;
        s.node_endpoints.v = &ep;
    }
    proto_fetch_snapshot_resp_encode(&s, version, out);
}

void raft_wire_snap_error(int16_t version, int16_t err, buf_t *out)
{
    proto_fetch_snapshot_resp_t s;
    proto_fetch_snapshot_resp_init(&s);
    s.error_code = err;
    proto_fetch_snapshot_resp_encode(&s, version, out);
}

int raft_wire_snap_resp_decode(int16_t version, const uint8_t *body, size_t len, arena_t *arena,
                               raft_snap_resp_t *r)
{
    proto_fetch_snapshot_resp_t s;
    proto_fetch_snapshot_resp_init(&s);
    memset(r, 0, sizeof(*r));
    r->leader_id = -1;
    if (proto_fetch_snapshot_resp_decode(&s, version, body, len, arena) < 0)
        return -1;
    r->err = s.error_code;
    if (s.error_code)
        return 0;
    if (s.topics.n != 1 || s.topics.v[0].partitions.n != 1)
        return -1;
    const proto_fetch_snapshot_resp_partition_snapshot_t *p = &s.topics.v[0].partitions.v[0];
    r->err = p->error_code;
    r->leader_id = p->current_leader.leader_id;
    r->leader_epoch = p->current_leader.leader_epoch;
    r->end_offset = p->snapshot_id.end_offset;
    r->epoch = p->snapshot_id.epoch;
    r->size = p->size;
    r->position = p->position;
    r->bytes = p->unaligned_records.len > 0 ? p->unaligned_records.p : NULL;
    r->len = p->unaligned_records.len > 0 ? (size_t)p->unaligned_records.len : 0;
    return 0;
}
