/* DescribeQuorum (key 55): the KRaft quorum of the metadata log, which on
 * a single node is a quorum of one: this node leads it and is its only
 * voter, with no observers, as Kafka 4.4 describes a combined single node.
 *
 * Leader epoch: the metadata log's, bumped at each start as a lone voter
 * bumps it by electing itself. High watermark: the metadata log's (every
 * committed change). The voter's log end offset is the log's end, which
 * is past the high watermark only while a change is being synced; its
 * fetch and caught-up times are now, as Kafka reports them for the
 * leader itself, and its directory id is zero, as for a voter of a static
 * quorum (kraft.version 0). Nodes (v2) gives this node's controller
 * listeners as configured (they are not opened: there is no other voter
 * to talk to).
 *
 * A dynamic quorum (kraft.version 1) shows directory ids as Kafka does:
 * a voter's from its VotersRecord entry, an observer's the one it fetches
 * with; Nodes gives the voters with their VotersRecord endpoints.
 *
 * A request for anything but __cluster_metadata-0, alone, is answered as
 * Kafka answers it: every partition named, with UNKNOWN_TOPIC_OR_PARTITION
 * and nothing else. */
#include <string.h>

#include "api/api_admin.h"
#include "cluster/ctl.h"
#include "cluster/raft_node.h"
#include "cluster/raft_voters.h"
#include "util/kerr.h"

typedef proto_describe_quorum_resp_t api_dq_resp_t;

static int api_dq_valid(const proto_describe_quorum_req_t *r)
{
    size_t n = strlen(META_LOG_TOPIC);
    return r->topics.n == 1 && r->topics.v[0].topic_name.len == (int32_t)n &&
           !memcmp(r->topics.v[0].topic_name.p, META_LOG_TOPIC, n) &&
           r->topics.v[0].partitions.n == 1 && r->topics.v[0].partitions.v[0].partition_index == 0;
}

static void api_dq_refuse(api_req_t *req, const proto_describe_quorum_req_t *r, api_dq_resp_t *resp)
{
    int32_t nt = r->topics.n > 0 ? r->topics.n : 0;
    resp->topics.n = nt;
    resp->topics.v = arena_calloc(req->arena, (size_t)nt + 1, sizeof(*resp->topics.v));
    for (int32_t i = 0; i < nt; i++) {
        proto_describe_quorum_resp_topic_data_t *t = &resp->topics.v[i];
        int32_t np = r->topics.v[i].partitions.n > 0 ? r->topics.v[i].partitions.n : 0;
        proto_describe_quorum_resp_topic_data_init(t);
        t->topic_name = r->topics.v[i].topic_name;
        t->partitions.n = np;
        t->partitions.v = arena_calloc(req->arena, (size_t)np + 1, sizeof(*t->partitions.v));
        for (int32_t j = 0; j < np; j++) {
            proto_describe_quorum_resp_partition_data_t *p = &t->partitions.v[j];
            proto_describe_quorum_resp_partition_data_init(p);
            p->partition_index = r->topics.v[i].partitions.v[j].partition_index;
            p->error_code = KERR_UNKNOWN_TOPIC_OR_PARTITION;
            p->error_message = PROTO_STR("This server does not host this topic-partition.");
        }
    }
}

/* 1 when name is one of the comma-separated names of list. */
static int api_dq_named(const char *list, const char *name)
{
    size_t n = strlen(name);
    for (const char *p = list; *p;) {
        const char *e = strchr(p, ',');
        size_t len = e ? (size_t)(e - p) : strlen(p);
        while (len && *p == ' ')
            p++, len--;
        while (len && p[len - 1] == ' ')
            len--;
        if (len == n && !memcmp(p, name, n))
            return 1;
        if (!e)
            break;
        p = e + 1;
    }
    return 0;
}

/* A static quorum's voters at the addresses controller.quorum.voters
 * gives, under the first controller listener's name. */
static void api_dq_voter_nodes(api_req_t *req, api_dq_resp_t *resp)
{
    const broker_config_t *cfg = &req->b->cfg;
    const char *names = cfg->controller_listener_names ? cfg->controller_listener_names : "";
    int32_t nlen = (int32_t)strcspn(names, ",");
    int n = cfg->quorum.nvoters;
    proto_describe_quorum_resp_node_t *nodes = arena_calloc(req->arena, (size_t)n + 1, sizeof(*nodes));
    for (int i = 0; i < n; i++) {
        const bcfg_voter_t *v = &cfg->quorum.voters[i];
        proto_describe_quorum_resp_listener_t *ls = arena_calloc(req->arena, 1, sizeof(*ls));
        proto_describe_quorum_resp_node_init(&nodes[i]);
        nodes[i].node_id = v->id;
        ls->name = (proto_str_t){names, nlen};
        ls->host = (proto_str_t){v->host, (int32_t)strlen(v->host)};
        ls->port = (uint16_t)v->port;
        nodes[i].listeners.n = 1;
        nodes[i].listeners.v = ls;
    }
    resp->nodes.n = n;
    resp->nodes.v = nodes;
}

/* A dynamic quorum's voters with every endpoint of their VotersRecord
 * entry. */
static void api_dq_dynamic_nodes(api_req_t *req, api_dq_resp_t *resp)
{
    const raft_voters_entry_t *e = raft_voters_hist_last(req->b->voters);
    int n = e ? e->set.n : 0;
    proto_describe_quorum_resp_node_t *nodes = arena_calloc(req->arena, (size_t)n + 1, sizeof(*nodes));

    for (int i = 0; i < n; i++) {
        const raft_voter_t *v = &e->set.v[i];
        proto_describe_quorum_resp_listener_t *ls =
            arena_calloc(req->arena, (size_t)v->neps + 1, sizeof(*ls));
        proto_describe_quorum_resp_node_init(&nodes[i]);
        nodes[i].node_id = v->id;
        for (int j = 0; j < v->neps; j++) {
            ls[j].name = (proto_str_t){v->eps[j].name, (int32_t)strlen(v->eps[j].name)};
            ls[j].host = (proto_str_t){v->eps[j].host, (int32_t)strlen(v->eps[j].host)};
            ls[j].port = v->eps[j].port;
        }
        nodes[i].listeners.n = v->neps;
        nodes[i].listeners.v = ls;
    }
    resp->nodes.n = n;
    resp->nodes.v = nodes;
}

static void api_dq_nodes(api_req_t *req, api_dq_resp_t *resp)
{
    if (req->b->raft && req->b->voters) {
        api_dq_dynamic_nodes(req, resp);
        return;
    }
    if (req->b->raft) {
        api_dq_voter_nodes(req, resp);
        return;
    }
    const broker_config_t *cfg = &req->b->cfg;
    proto_describe_quorum_resp_node_t *node = arena_calloc(req->arena, 1, sizeof(*node));
    int n = 0;

    proto_describe_quorum_resp_node_init(node);
    node->node_id = cfg->node_id;
    node->listeners.v = arena_calloc(req->arena, (size_t)cfg->nlisteners + 1,
                                     sizeof(*node->listeners.v));
    for (int i = 0; i < cfg->nlisteners; i++) {
        const bcfg_listener_t *l = &cfg->listeners[i];
        if (!api_dq_named(cfg->controller_listener_names, l->name))
            continue;
        proto_describe_quorum_resp_listener_t *ls = &node->listeners.v[n++];
        const char *host = *l->host ? l->host : req->b->hostname;
        ls->name = (proto_str_t){l->name, (int32_t)strlen(l->name)};
        ls->host = (proto_str_t){host, (int32_t)strlen(host)};
        ls->port = (uint16_t)l->port;
    }
    node->listeners.n = n;
    resp->nodes.n = 1;
    resp->nodes.v = node;
}

/* A replica's directory id on a dynamic quorum: a voter's is its
 * VotersRecord entry's, an observer's the one it fetches with (zero on a
 * static quorum, as Kafka shows kraft.version 0). */
static void api_dq_dir(api_req_t *req, raft_t *raft, int32_t id, uint8_t out[16])
{
    const raft_voters_entry_t *e = req->b->voters ? raft_voters_hist_last(req->b->voters) : NULL;
    const raft_voter_t *v = e ? raft_voters_find(&e->set, id) : NULL;

    memset(out, 0, 16);
    if (v)
        memcpy(out, v->dir_id, 16);
    else if (req->b->voters)
        (void)raft_replica_dir(raft, id, out);
}

/* One replica as the Raft leader sees it: its fetched end offset and
 * when it last fetched and was last caught up (the leader itself: its
 * log end, now). */
static void api_dq_replica(api_req_t *req, raft_t *raft, int32_t id,
                           proto_describe_quorum_resp_replica_state_t *v)
{
    int64_t end = -1, fetch = -1, caught = -1;
    proto_describe_quorum_resp_replica_state_init(v);
    v->replica_id = id;
    raft_replica_state(raft, id, &end, &fetch, &caught);
    if (id == req->b->cfg.node_id)
        fetch = caught = req->now_ms;
    v->log_end_offset = end;
    v->last_fetch_timestamp = fetch;
    v->last_caught_up_timestamp = caught;
    api_dq_dir(req, raft, id, v->replica_directory_id.b);
}

/* The quorum of a Raft node: only its leader describes it; another node
 * answers NOT_LEADER_OR_FOLLOWER with Kafka's words for it and nothing
 * else (leader, epoch and high watermark 0), as Kafka 4.4's does. */
static void api_dq_raft(api_req_t *req, proto_describe_quorum_resp_partition_data_t *p)
{
    raft_t *raft = raft_node_core(req->b->raft);
    int32_t ids[RAFT_MAX_VOTERS + RAFT_MAX_OBSERVERS];
    int voter[RAFT_MAX_VOTERS + RAFT_MAX_OBSERVERS];
    int n = raft_replicas(raft, ids, voter, RAFT_MAX_VOTERS + RAFT_MAX_OBSERVERS), nv = 0, no = 0;

    if (raft_role(raft) != RAFT_LEADER) {
        p->error_code = KERR_NOT_LEADER_OR_FOLLOWER;
        p->error_message = PROTO_STR(
            "For requests intended only for the leader, this error indicates that the broker is "
            "not the current leader. For requests intended for any replica, this error "
            "indicates that the broker is not a replica of the topic partition.");
        return;
    }
    p->leader_id = raft_leader(raft);
    p->leader_epoch = raft_epoch(raft);
    /* a new leader knows no high watermark until a majority has fetched
     * past its epoch's start: -1, as Kafka shows it */
    p->high_watermark = raft_hw(raft) > raft_epoch_start(raft) ? raft_hw(raft) : -1;
    p->current_voters.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*p->current_voters.v));
    p->observers.v = arena_calloc(req->arena, (size_t)n + 1, sizeof(*p->observers.v));
    for (int i = 0; i < n; i++) {
        if (voter[i])
            api_dq_replica(req, raft, ids[i], &p->current_voters.v[nv++]);
        else
            api_dq_replica(req, raft, ids[i], &p->observers.v[no++]);
    }
    p->current_voters.n = nv;
    p->observers.n = no;
}

static void api_dq_describe(api_req_t *req, api_dq_resp_t *resp)
{
    const meta_log_t *ml = ctl_meta(req->b->ctl);
    proto_describe_quorum_resp_topic_data_t *t = arena_calloc(req->arena, 1, sizeof(*t));
    proto_describe_quorum_resp_partition_data_t *p = arena_calloc(req->arena, 1, sizeof(*p));
    proto_describe_quorum_resp_replica_state_t *v = arena_calloc(req->arena, 1, sizeof(*v));

    proto_describe_quorum_resp_replica_state_init(v);
    v->replica_id = req->b->cfg.node_id;
    v->log_end_offset = meta_log_end_offset(ml);
    v->last_fetch_timestamp = req->now_ms;
    v->last_caught_up_timestamp = req->now_ms;
    proto_describe_quorum_resp_partition_data_init(p);
    p->error_message = PROTO_STR("");
    if (req->b->raft) {
        api_dq_raft(req, p);
    } else {
        p->leader_id = req->b->cfg.node_id;
        p->leader_epoch = ml->epoch;
        p->high_watermark = meta_log_high_watermark(ml);
        p->current_voters.n = 1;
        p->current_voters.v = v;
    }
    proto_describe_quorum_resp_topic_data_init(t);
    t->topic_name = PROTO_STR(META_LOG_TOPIC);
    t->partitions.n = 1;
    t->partitions.v = p;
    resp->topics.n = 1;
    resp->topics.v = t;
    api_dq_nodes(req, resp);
}

void api_describe_quorum(api_req_t *req)
{
    proto_describe_quorum_req_t r;
    api_dq_resp_t resp;

    proto_describe_quorum_req_init(&r);
    if (proto_describe_quorum_req_decode(&r, req->hdr.api_version, req->body, req->body_len,
                                         req->arena) < 0) {
        api_close(req, "malformed DescribeQuorum request");
        return;
    }
    proto_describe_quorum_resp_init(&resp);
    if (req->refuse_err) {
        /* forwarded, no active controller in time: the top-level error
         * alone, as Kafka's broker answers */
        resp.error_code = req->refuse_err;
        resp.error_message = PROTO_STR("The request timed out.");
        API_REPLY(req, describe_quorum, &resp);
        return;
    }
    resp.error_message = PROTO_STR("");
    if (api_dq_valid(&r))
        api_dq_describe(req, &resp);
    else
        api_dq_refuse(req, &r, &resp);
    API_REPLY(req, describe_quorum, &resp);
}
