/* The Raft core's messages on the wire (raft_wire.h). One function pair
 * per API; each request and response names the single partition
 * __cluster_metadata-0. */
#include <string.h>
#include <strings.h>

#include "cluster/meta_log.h"
#include "cluster/raft_wire.h"
#include "cluster/raft_wire_snap.h"
#include "proto/proto.h"
#include "util/kerr.h"

/* Kafka's fixed id of the metadata topic (Fetch v13+ names topics by id). */
static const proto_uuid_t meta_topic_id = {{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1}};

int16_t raft_wire_api_key(int type)
{
    switch (type) {
    case RAFT_VOTE_REQ:
    case RAFT_VOTE_RESP:
        return PROTO_API_VOTE;
    case RAFT_BEGIN_REQ:
    case RAFT_BEGIN_RESP:
        return PROTO_API_BEGIN_QUORUM_EPOCH;
    case RAFT_END_REQ:
    case RAFT_END_RESP:
        return PROTO_API_END_QUORUM_EPOCH;
    default:
        return PROTO_API_FETCH;
    }
}

static proto_str_t topic_name(void)
{
    return PROTO_STR(META_LOG_TOPIC);
}

static int is_topic(proto_str_t s)
{
    size_t n = strlen(META_LOG_TOPIC);
    return s.len == (int32_t)n && memcmp(s.p, META_LOG_TOPIC, n) == 0;
}

static proto_str_t cluster_str(const raft_wire_t *w)
{
    if (!w->cluster_id)
        return PROTO_STR_NULL;
    return (proto_str_t){w->cluster_id, (int32_t)strlen(w->cluster_id)};
}

/* KRaft's check: a null cluster id passes; another must be ours. */
static int16_t check_cluster(const raft_wire_t *w, proto_str_t id)
{
    if (id.len < 0 || !w->cluster_id)
        return 0;
    if (id.len == (int32_t)strlen(w->cluster_id) && memcmp(id.p, w->cluster_id, (size_t)id.len) == 0)
        return 0;
    return KERR_INCONSISTENT_CLUSTER_ID;
}

/* The voter key a Vote or BeginQuorumEpoch names: none (id -1), or this
 * node's id with a zero or this node's directory id. */
static int8_t other_voter(const raft_wire_t *w, int32_t voter_id, const proto_uuid_t *dir)
{
    static const uint8_t zero[16];
    if (voter_id < 0)
        return 0;
    if (voter_id != w->node_id)
        return 1;
    return memcmp(dir->b, zero, 16) != 0 && memcmp(dir->b, w->dir_id, 16) != 0;
}

/* A request naming __cluster_metadata-0 alone, as KRaft's must (Vote,
 * BeginQuorumEpoch and EndQuorumEpoch share the shape). */
#define ONE_META_PARTITION(r)                                                                    \
    ((r).topics.n == 1 && is_topic((r).topics.v[0].topic_name) &&                                \
     (r).topics.v[0].partitions.n == 1 && (r).topics.v[0].partitions.v[0].partition_index == 0)

static void msg_init(raft_msg_t *m, int type)
{
    memset(m, 0, sizeof(*m));
    m->type = type;
    m->leader_id = -1;
    m->div_end = -1;
    m->snap_end = -1;
    m->snap_epoch = -1;
}

/* KRaft's NodeEndpoints: where the leader a response names is reached
 * on the controller listener (Vote, BeginQuorumEpoch and EndQuorumEpoch
 * v1+, Fetch v17+, a tagged field the codec leaves out below those).
 * This node's own endpoint when it leads; another leader's as the driver
 * put it in m (where this node reaches it); none when unknown. */
static int leader_endpoint(const raft_wire_t *w, const raft_msg_t *m, proto_str_t *host,
                           int32_t *port)
{
    if (m->leader_id < 0)
        return 0;
    if (m->leader_id == w->node_id) {
        if (!w->host || !w->port)
            return 0;
        *host = (proto_str_t){w->host, (int32_t)strlen(w->host)};
        *port = w->port;
        return 1;
    }
    if (!m->leader_host || m->leader_host_len <= 0 || m->leader_port <= 0 ||
        m->leader_port > 65535)
        return 0;
    *host = (proto_str_t){m->leader_host, m->leader_host_len};
    *port = m->leader_port;
    return 1;
}

/* Sets a response's NodeEndpoints (r: a decoded or to be encoded
 * response struct, ep: one entry of its element type) to the leader's. */
#define SET_LEADER_EP(w, m, r, ep)                                                                 \
    do {                                                                                           \
        proto_str_t lhost_;                                                                        \
        int32_t lport_;                                                                            \
        memset(&(ep), 0, sizeof(ep));                                                              \
        if (leader_endpoint((w), (m), &lhost_, &lport_)) {                                         \
            (ep).node_id = (m)->leader_id;                                                         \
            (ep).host = lhost_;                                                                    \
            (ep).port = lport_; /* uint16 in the KRaft messages, int32 in Fetch */                 \
            (r).node_endpoints.n = 1;                                                              \
            (r).node_endpoints.v = &(ep);                                                          \
        }                                                                                          \
    } while (0)

/* The NodeEndpoints entry of the leader a decoded response names into m
 * (its host points into the decoded strings). */
#define GET_LEADER_EP(r, m)                                                                        \
    do {                                                                                           \
        for (int32_t i_ = 0; i_ < (r).node_endpoints.n; i_++) {                                    \
            if ((r).node_endpoints.v[i_].node_id != (m)->leader_id ||                              \
                (r).node_endpoints.v[i_].host.len <= 0)                                            \
                continue;                                                                          \
            (m)->leader_host = (r).node_endpoints.v[i_].host.p;                                    \
            (m)->leader_host_len = (r).node_endpoints.v[i_].host.len;                              \
            (m)->leader_port = (r).node_endpoints.v[i_].port;                                      \
        }                                                                                          \
    } while (0)

/* The LeaderEndpoints entry of this node's controller listener in a
 * BeginQuorumEpoch or EndQuorumEpoch request (the first without a name
 * of ours) into m: where the sender, the leader, is reached. */
#define GET_REQ_LEADER_EP(w, r, m)                                                                 \
    do {                                                                                           \
        for (int32_t i_ = 0; i_ < (r).leader_endpoints.n && !(m)->leader_host; i_++) {             \
            proto_str_t n_ = (r).leader_endpoints.v[i_].name;                                      \
            if ((w)->listener && (n_.len != (int32_t)strlen((w)->listener) ||                      \
                                  strncasecmp(n_.p, (w)->listener, (size_t)n_.len)))               \
                continue;                                                                          \
            if ((r).leader_endpoints.v[i_].host.len <= 0)                                          \
                continue;                                                                          \
            (m)->leader_host = (r).leader_endpoints.v[i_].host.p;                                  \
            (m)->leader_host_len = (r).leader_endpoints.v[i_].host.len;                            \
            (m)->leader_port = (r).leader_endpoints.v[i_].port;                                    \
        }                                                                                          \
    } while (0)

/* This node's controller listener as a request's LeaderEndpoints entry. */
#define SET_REQ_LEADER_EP(w, r, ep)                                                                \
    do {                                                                                           \
        if ((w)->listener && (w)->host) {                                                          \
            (ep).name = (proto_str_t){(w)->listener, (int32_t)strlen((w)->listener)};              \
            (ep).host = (proto_str_t){(w)->host, (int32_t)strlen((w)->host)};                      \
            (ep).port = (w)->port;                                                                 \
            (r).leader_endpoints.n = 1;                                                            \
            (r).leader_endpoints.v = &(ep);                                                        \
        }                                                                                          \
    } while (0)

/* Vote */

static void vote_req(const raft_wire_t *w, const raft_msg_t *m, int16_t v, buf_t *out)
{
    proto_vote_req_t r;
    proto_vote_req_topic_data_t t;
    proto_vote_req_partition_data_t p;
    proto_vote_req_init(&r);
    proto_vote_req_topic_data_init(&t);
    proto_vote_req_partition_data_init(&p);
    r.cluster_id = cluster_str(w);
    r.voter_id = m->dst;
    p.replica_epoch = m->epoch;
    p.replica_id = w->node_id;
    memcpy(p.replica_directory_id.b, w->dir_id, 16);
    p.last_offset_epoch = m->last_epoch;
    p.last_offset = m->last_offset;
    p.pre_vote = m->prevote != 0;
    t.topic_name = topic_name();
    t.partitions.n = 1;
    t.partitions.v = &p;
    r.topics.n = 1;
    r.topics.v = &t;
    proto_vote_req_encode(&r, v, out);
}

static int vote_req_decode(const raft_wire_t *w, int16_t v, const uint8_t *b, size_t len,
                           arena_t *a, raft_msg_t *m)
{
    proto_vote_req_t r;
    proto_vote_req_init(&r);
    if (proto_vote_req_decode(&r, v, b, len, a) < 0)
        return -1;
    int16_t err = check_cluster(w, r.cluster_id);
    if (err)
        return err;
    if (!ONE_META_PARTITION(r))
        return KERR_INVALID_REQUEST;
    const proto_vote_req_partition_data_t *p = &r.topics.v[0].partitions.v[0];
    msg_init(m, RAFT_VOTE_REQ);
    m->other_voter = other_voter(w, r.voter_id, &p->voter_directory_id);
    m->src = p->replica_id;
    m->epoch = p->replica_epoch;
    m->last_epoch = p->last_offset_epoch;
    m->last_offset = p->last_offset;
    m->prevote = p->pre_vote;
    return 0;
}

static void vote_resp(const raft_wire_t *w, const raft_msg_t *m, int16_t v, buf_t *out)
{
    proto_vote_resp_t r;
    proto_vote_resp_topic_data_t t;
    proto_vote_resp_partition_data_t p;
    proto_vote_resp_node_endpoint_t ep;
    proto_vote_resp_init(&r);
    proto_vote_resp_topic_data_init(&t);
    proto_vote_resp_partition_data_init(&p);
    p.error_code = m->err;
    p.leader_id = m->leader_id;
    p.leader_epoch = m->epoch;
    p.vote_granted = m->granted != 0;
    t.topic_name = topic_name();
    t.partitions.n = 1;
    t.partitions.v = &p;
    r.topics.n = 1;
    r.topics.v = &t;
    SET_LEADER_EP(w, m, r, ep);
    proto_vote_resp_encode(&r, v, out);
}

static int vote_resp_decode(int16_t v, const uint8_t *b, size_t len, arena_t *a, raft_msg_t *m)
{
    proto_vote_resp_t r;
    proto_vote_resp_init(&r);
    if (proto_vote_resp_decode(&r, v, b, len, a) < 0)
        return -1;
    m->err = r.error_code;
    if (r.error_code || r.topics.n < 1 || r.topics.v[0].partitions.n < 1)
        return m->err ? 0 : -1;
    const proto_vote_resp_partition_data_t *p = &r.topics.v[0].partitions.v[0];
    m->err = p->error_code;
    m->leader_id = p->leader_id;
    m->epoch = p->leader_epoch;
    m->granted = p->vote_granted;
    GET_LEADER_EP(r, m);
    return 0;
}

/* BeginQuorumEpoch */

static void begin_req(const raft_wire_t *w, const raft_msg_t *m, int16_t v, buf_t *out)
{
    proto_begin_quorum_epoch_req_t r;
    proto_begin_quorum_epoch_req_topic_data_t t;
    proto_begin_quorum_epoch_req_partition_data_t p;
    proto_begin_quorum_epoch_req_leader_endpoint_t ep;
    proto_begin_quorum_epoch_req_init(&r);
    proto_begin_quorum_epoch_req_topic_data_init(&t);
    proto_begin_quorum_epoch_req_partition_data_init(&p);
    r.cluster_id = cluster_str(w);
    r.voter_id = m->dst;
    p.leader_id = w->node_id;
    p.leader_epoch = m->epoch;
    t.topic_name = topic_name();
    t.partitions.n = 1;
    t.partitions.v = &p;
    r.topics.n = 1;
    r.topics.v = &t;
    SET_REQ_LEADER_EP(w, r, ep);
    proto_begin_quorum_epoch_req_encode(&r, v, out);
}

static int begin_req_decode(const raft_wire_t *w, int16_t v, const uint8_t *b, size_t len,
                            arena_t *a, raft_msg_t *m)
{
    proto_begin_quorum_epoch_req_t r;
    proto_begin_quorum_epoch_req_init(&r);
    if (proto_begin_quorum_epoch_req_decode(&r, v, b, len, a) < 0)
        return -1;
    int16_t err = check_cluster(w, r.cluster_id);
    if (err)
        return err;
    if (!ONE_META_PARTITION(r))
        return KERR_INVALID_REQUEST;
    msg_init(m, RAFT_BEGIN_REQ);
    m->other_voter =
        other_voter(w, r.voter_id, &r.topics.v[0].partitions.v[0].voter_directory_id);
    m->src = r.topics.v[0].partitions.v[0].leader_id;
    m->epoch = r.topics.v[0].partitions.v[0].leader_epoch;
    GET_REQ_LEADER_EP(w, r, m);
    return 0;
}

/* BeginQuorumEpoch's and EndQuorumEpoch's responses have one shape. */
#define QUORUM_RESP(api, w, m, ver_, out)                                                            \
    do {                                                                                          \
        proto_##api##_resp_t r_;                                                                  \
        proto_##api##_resp_topic_data_t t_;                                                       \
        proto_##api##_resp_partition_data_t p_;                                                   \
        proto_##api##_resp_node_endpoint_t ep_;                                                   \
        proto_##api##_resp_init(&r_);                                                             \
        proto_##api##_resp_topic_data_init(&t_);                                                  \
        proto_##api##_resp_partition_data_init(&p_);                                              \
        p_.error_code = (m)->err;                                                                 \
        p_.leader_id = (m)->leader_id;                                                            \
        p_.leader_epoch = (m)->epoch;                                                             \
        t_.topic_name = topic_name();                                                             \
        t_.partitions.n = 1;                                                                      \
        t_.partitions.v = &p_;                                                                    \
        r_.topics.n = 1;                                                                          \
        r_.topics.v = &t_;                                                                        \
        SET_LEADER_EP((w), (m), r_, ep_);                                                         \
        proto_##api##_resp_encode(&r_, (ver_), (out));                                               \
    } while (0)

#define QUORUM_RESP_DECODE(api, ver_, b, len, a, m, rc)                                              \
    do {                                                                                          \
        proto_##api##_resp_t r_;                                                                  \
        proto_##api##_resp_init(&r_);                                                             \
        (rc) = proto_##api##_resp_decode(&r_, (ver_), (b), (len), (a)) < 0 ? -1 : 0;                \
        if ((rc) == 0) {                                                                          \
            (m)->err = r_.error_code;                                                             \
            if (!r_.error_code && r_.topics.n > 0 && r_.topics.v[0].partitions.n > 0) {           \
                (m)->err = r_.topics.v[0].partitions.v[0].error_code;                             \
                (m)->leader_id = r_.topics.v[0].partitions.v[0].leader_id;                        \
                (m)->epoch = r_.topics.v[0].partitions.v[0].leader_epoch;                         \
                GET_LEADER_EP(r_, (m));                                                           \
            } else if (!r_.error_code) {                                                          \
                (rc) = -1;                                                                        \
            }                                                                                     \
        }                                                                                         \
    } while (0)

/* EndQuorumEpoch */

static void end_req(const raft_wire_t *w, const raft_msg_t *m, int16_t v, buf_t *out)
{
    proto_end_quorum_epoch_req_t r;
    proto_end_quorum_epoch_req_topic_data_t t;
    proto_end_quorum_epoch_req_partition_data_t p;
    proto_end_quorum_epoch_req_replica_info_t cands[RAFT_MAX_VOTERS];
    proto_end_quorum_epoch_req_leader_endpoint_t ep;
    int32_t succ[RAFT_MAX_VOTERS];
    proto_end_quorum_epoch_req_init(&r);
    proto_end_quorum_epoch_req_topic_data_init(&t);
    proto_end_quorum_epoch_req_partition_data_init(&p);
    r.cluster_id = cluster_str(w);
    p.leader_id = w->node_id;
    p.leader_epoch = m->epoch;
    for (int i = 0; i < m->nsuccessors; i++) {
        succ[i] = m->successors[i];
        memset(&cands[i], 0, sizeof(cands[i]));
        cands[i].candidate_id = m->successors[i];
    }
    p.preferred_successors.n = m->nsuccessors;
    p.preferred_successors.v = succ;
    p.preferred_candidates.n = m->nsuccessors;
    p.preferred_candidates.v = cands;
    t.topic_name = topic_name();
    t.partitions.n = 1;
    t.partitions.v = &p;
    r.topics.n = 1;
    r.topics.v = &t;
    SET_REQ_LEADER_EP(w, r, ep);
    proto_end_quorum_epoch_req_encode(&r, v, out);
}

static int end_req_decode(const raft_wire_t *w, int16_t v, const uint8_t *b, size_t len,
                          arena_t *a, raft_msg_t *m)
{
    proto_end_quorum_epoch_req_t r;
    proto_end_quorum_epoch_req_init(&r);
    if (proto_end_quorum_epoch_req_decode(&r, v, b, len, a) < 0)
        return -1;
    int16_t err = check_cluster(w, r.cluster_id);
    if (err)
        return err;
    if (!ONE_META_PARTITION(r))
        return KERR_INVALID_REQUEST;
    const proto_end_quorum_epoch_req_partition_data_t *p = &r.topics.v[0].partitions.v[0];
    msg_init(m, RAFT_END_REQ);
    m->src = p->leader_id;
    m->epoch = p->leader_epoch;
    GET_REQ_LEADER_EP(w, r, m);
    if (v == 0) {
        for (int32_t i = 0; i < p->preferred_successors.n && m->nsuccessors < RAFT_MAX_VOTERS; i++)
            m->successors[m->nsuccessors++] = p->preferred_successors.v[i];
    } else {
        for (int32_t i = 0; i < p->preferred_candidates.n && m->nsuccessors < RAFT_MAX_VOTERS; i++)
            m->successors[m->nsuccessors++] = p->preferred_candidates.v[i].candidate_id;
    }
    return 0;
}

/* Fetch */

static void fetch_req(const raft_wire_t *w, const raft_msg_t *m, int16_t v, buf_t *out)
{
    proto_fetch_req_t r;
    proto_fetch_req_fetch_topic_t t;
    proto_fetch_req_fetch_partition_t p;
    proto_fetch_req_init(&r);
    proto_fetch_req_fetch_topic_init(&t);
    proto_fetch_req_fetch_partition_init(&p);
    r.cluster_id = cluster_str(w);
    r.replica_id = w->node_id;
    r.replica_state.replica_id = w->node_id;
    r.replica_state.replica_epoch = -1;
    r.max_wait_ms = m->max_wait_ms;
    r.min_bytes = 0;
    r.max_bytes = w->max_bytes;
    p.partition = 0;
    p.current_leader_epoch = m->epoch;
    p.fetch_offset = m->fetch_offset;
    p.last_fetched_epoch = m->last_fetched_epoch;
    p.log_start_offset = -1;
    p.partition_max_bytes = w->max_bytes;
    p.high_watermark = m->hw;
    memcpy(p.replica_directory_id.b, w->dir_id, 16);
    t.topic = topic_name();
    t.topic_id = meta_topic_id;
    t.partitions.n = 1;
    t.partitions.v = &p;
    r.topics.n = 1;
    r.topics.v = &t;
    proto_fetch_req_encode(&r, v, out);
}

static int fetch_topic_ok(const proto_fetch_req_fetch_topic_t *t, int16_t v)
{
    if (v >= 13)
        return memcmp(t->topic_id.b, meta_topic_id.b, 16) == 0;
    return is_topic(t->topic);
}

static int fetch_req_decode(const raft_wire_t *w, int16_t v, const uint8_t *b, size_t len,
                            arena_t *a, raft_msg_t *m)
{
    proto_fetch_req_t r;
    proto_fetch_req_init(&r);
    if (proto_fetch_req_decode(&r, v, b, len, a) < 0)
        return -1;
    int16_t err = check_cluster(w, r.cluster_id);
    if (err)
        return err;
    if (r.topics.n != 1 || !fetch_topic_ok(&r.topics.v[0], v) || r.topics.v[0].partitions.n != 1 ||
        r.topics.v[0].partitions.v[0].partition != 0)
        return KERR_INVALID_REQUEST;
    const proto_fetch_req_fetch_partition_t *p = &r.topics.v[0].partitions.v[0];
    msg_init(m, RAFT_FETCH_REQ);
    m->src = v >= 15 ? r.replica_state.replica_id : r.replica_id;
    m->epoch = p->current_leader_epoch;
    m->fetch_offset = p->fetch_offset;
    m->last_fetched_epoch = p->last_fetched_epoch;
    m->max_wait_ms = r.max_wait_ms;
    m->hw = p->high_watermark; /* INT64_MAX before v18 */
    memcpy(m->dir_id, p->replica_directory_id.b, 16);
    return 0;
}

static void fetch_resp(const raft_wire_t *w, const raft_msg_t *m, int16_t v, const uint8_t *rec,
                       size_t rec_len, buf_t *out)
{
    proto_fetch_resp_t r;
    proto_fetch_resp_fetchable_topic_response_t t;
    proto_fetch_resp_partition_data_t p;
    proto_fetch_resp_node_endpoint_t ep;
    proto_fetch_resp_init(&r);
    proto_fetch_resp_fetchable_topic_response_init(&t);
    proto_fetch_resp_partition_data_init(&p);
    p.partition_index = 0;
    p.error_code = m->err;
    p.high_watermark = m->hw;
    p.log_start_offset = m->log_start;
    p.current_leader.leader_id = m->leader_id;
    p.current_leader.leader_epoch = m->epoch;
    if (m->div_end >= 0) {
        p.diverging_epoch.epoch = m->div_epoch;
        p.diverging_epoch.end_offset = m->div_end;
    }
    if (m->snap_end >= 0) {
        p.snapshot_id.end_offset = m->snap_end;
        p.snapshot_id.epoch = m->snap_epoch;
    }
    p.records.p = rec;
    p.records.len = (int32_t)rec_len;
    p.records.fd = -1;
    t.topic = topic_name();
    t.topic_id = meta_topic_id;
    t.partitions.n = 1;
    t.partitions.v = &p;
    r.responses.n = 1;
    r.responses.v = &t;
    SET_LEADER_EP(w, m, r, ep);
    ep.rack = PROTO_STR_NULL;
    proto_fetch_resp_encode(&r, v, out);
}

static int fetch_resp_decode(int16_t v, const uint8_t *b, size_t len, arena_t *a, raft_msg_t *m,
                             const uint8_t **rec, size_t *rec_len)
{
    proto_fetch_resp_t r;
    proto_fetch_resp_init(&r);
    if (proto_fetch_resp_decode(&r, v, b, len, a) < 0)
        return -1;
    m->err = r.error_code;
    if (r.error_code)
        return 0;
    if (r.responses.n < 1 || r.responses.v[0].partitions.n < 1)
        return -1;
    const proto_fetch_resp_partition_data_t *p = &r.responses.v[0].partitions.v[0];
    m->err = p->error_code;
    m->hw = p->high_watermark;
    m->log_start = p->log_start_offset;
    m->leader_id = p->current_leader.leader_id;
    m->epoch = p->current_leader.leader_epoch;
    m->div_epoch = p->diverging_epoch.epoch;
    m->div_end = p->diverging_epoch.end_offset;
    m->snap_end = p->snapshot_id.end_offset;
    m->snap_epoch = p->snapshot_id.epoch;
    GET_LEADER_EP(r, m);
    *rec = p->records.len > 0 ? p->records.p : NULL;
    *rec_len = p->records.len > 0 ? (size_t)p->records.len : 0;
    return 0;
}

/* The entry points. */

void raft_wire_encode_req(const raft_wire_t *w, const raft_msg_t *msg, int16_t version, buf_t *out)
{
    switch (msg->type) {
    case RAFT_VOTE_REQ:
        vote_req(w, msg, version, out);
        break;
    case RAFT_BEGIN_REQ:
        begin_req(w, msg, version, out);
        break;
    case RAFT_END_REQ:
        end_req(w, msg, version, out);
        break;
    default:
        fetch_req(w, msg, version, out);
        break;
    }
}

int raft_wire_decode_req(const raft_wire_t *w, int16_t api_key, int16_t version,
                         const uint8_t *body, size_t len, arena_t *arena, raft_msg_t *msg)
{
    int rc;
    switch (api_key) {
    case PROTO_API_VOTE:
        rc = vote_req_decode(w, version, body, len, arena, msg);
        break;
    case PROTO_API_BEGIN_QUORUM_EPOCH:
        rc = begin_req_decode(w, version, body, len, arena, msg);
        break;
    case PROTO_API_END_QUORUM_EPOCH:
        rc = end_req_decode(w, version, body, len, arena, msg);
        break;
    case PROTO_API_FETCH:
        rc = fetch_req_decode(w, version, body, len, arena, msg);
        break;
    default:
        return -1;
    }
    if (rc == 0)
        msg->dst = w->node_id;
    return rc;
}

void raft_wire_encode_resp(const raft_wire_t *w, const raft_msg_t *msg, int16_t version,
                           const uint8_t *records, size_t rec_len, buf_t *out)
{
    switch (msg->type) {
    case RAFT_VOTE_RESP:
        vote_resp(w, msg, version, out);
        break;
    case RAFT_BEGIN_RESP:
        QUORUM_RESP(begin_quorum_epoch, w, msg, version, out);
        break;
    case RAFT_END_RESP:
        QUORUM_RESP(end_quorum_epoch, w, msg, version, out);
        break;
    default:
        fetch_resp(w, msg, version, records, rec_len, out);
        break;
    }
}

void raft_wire_encode_error(int16_t api_key, int16_t version, int16_t err, buf_t *out)
{
    raft_msg_t m;
    msg_init(&m, 0);
    m.err = err;
    switch (api_key) {
    case PROTO_API_VOTE: {
        proto_vote_resp_t r;
        proto_vote_resp_init(&r);
        r.error_code = err;
        proto_vote_resp_encode(&r, version, out);
        break;
    }
    case PROTO_API_BEGIN_QUORUM_EPOCH: {
        proto_begin_quorum_epoch_resp_t r;
        proto_begin_quorum_epoch_resp_init(&r);
        r.error_code = err;
        proto_begin_quorum_epoch_resp_encode(&r, version, out);
        break;
    }
    case PROTO_API_END_QUORUM_EPOCH: {
        proto_end_quorum_epoch_resp_t r;
        proto_end_quorum_epoch_resp_init(&r);
        r.error_code = err;
        proto_end_quorum_epoch_resp_encode(&r, version, out);
        break;
    }
    case PROTO_API_FETCH_SNAPSHOT:
        raft_wire_snap_error(version, err, out);
        break;
    default: {
        proto_fetch_resp_t r;
        proto_fetch_resp_init(&r);
        r.error_code = err;
        proto_fetch_resp_encode(&r, version, out);
        break;
    }
    }
}

int raft_wire_decode_resp(const raft_msg_t *req, int16_t version, const uint8_t *body, size_t len,
                          arena_t *arena, raft_msg_t *msg, const uint8_t **records,
                          size_t *rec_len)
{
    int rc;
    msg_init(msg, req->type + 1);
    msg->src = req->dst;
    msg->dst = req->src;
    msg->epoch = req->epoch;
    msg->prevote = req->prevote;
    msg->fetch_offset = req->fetch_offset;
    msg->last_fetched_epoch = req->last_fetched_epoch;
    *records = NULL;
    *rec_len = 0;
    switch (req->type) {
    case RAFT_VOTE_REQ:
        rc = vote_resp_decode(version, body, len, arena, msg);
        break;
    case RAFT_BEGIN_REQ:
        QUORUM_RESP_DECODE(begin_quorum_epoch, version, body, len, arena, msg, rc);
        break;
    case RAFT_END_REQ:
        QUORUM_RESP_DECODE(end_quorum_epoch, version, body, len, arena, msg, rc);
        break;
    default:
        rc = fetch_resp_decode(version, body, len, arena, msg, records, rec_len);
        break;
    }
    return rc;
}

static uint32_t be32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static uint64_t be64(const uint8_t *p)
{
    return (uint64_t)be32(p) << 32 | be32(p + 4);
}

/* v2 batch header: baseOffset int64 @0, batchLength int32 @8,
 * partitionLeaderEpoch int32 @12, magic int8 @16, crc @17, attributes
 * int16 @21, lastOffsetDelta int32 @23; the batch is 12 + batchLength. */
int raft_wire_batches(const uint8_t *records, size_t len, raft_batch_t *out, int cap)
{
    int n = 0;
    size_t pos = 0;
    while (n < cap && len - pos >= 61) {
        const uint8_t *b = records + pos;
        uint32_t blen = be32(b + 8);
        if (b[16] != 2 || blen < 49)
            return -1;
        if (len - pos < 12 + (size_t)blen)
            break;
        out[n].base = (int64_t)be64(b);
        out[n].last = out[n].base + (int32_t)be32(b + 23);
        out[n].epoch = (int32_t)be32(b + 12);
        n++;
        pos += 12 + (size_t)blen;
    }
    return n;
}
