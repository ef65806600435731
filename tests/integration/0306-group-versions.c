/* 0306-group-versions: every version of every group API we advertise, on
 * the wire, encoded and decoded with the generated codecs (proto/): one
 * group per JoinGroup version (0-9) goes through FindCoordinator 0-6,
 * JoinGroup (MEMBER_ID_REQUIRED from v4), SyncGroup 0-5, Heartbeat 0-4,
 * OffsetCommit 2-10, OffsetFetch 1-10 (several groups at once from v8;
 * v10 names topics by id: a commit by id is seen by name and the other
 * way round, an unknown id is UNKNOWN_TOPIC_ID), DescribeGroups 0-6 (v6:
 * GROUP_ID_NOT_FOUND with Kafka's message for a missing group),
 * ListGroups 0-5 (state filter v4, type filter v5), LeaveGroup 0-5,
 * OffsetDelete 0 and DeleteGroups 0-3 (v3: no message for its errors, as
 * Kafka 4.4), and each answer must decode at its version and say what
 * Kafka says. */
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/wire.h"
#include "util/kerr.h"

#define NJOIN 10

static arena_t arena;
static char *topic;
static uint8_t topic_id[16];
static char groups[NJOIN][128];
static char members[NJOIN][128];

#define CALL(fd, api, key, ver, reqp, respp) TL_WIRE_CALL(fd, &arena, api, key, ver, reqp, respp)

static proto_str_t S(const char *s)
{
    proto_str_t p = {s, s ? (int32_t)strlen(s) : -1};
    return p;
}

static int eq(proto_str_t a, const char *b)
{
    return a.len >= 0 && (size_t)a.len == strlen(b) && !memcmp(a.p, b, (size_t)a.len);
}

static char *cstr(proto_str_t s)
{
    char *p = arena_alloc(&arena, (size_t)(s.len < 0 ? 0 : s.len) + 1);
    memcpy(p, s.p, (size_t)(s.len < 0 ? 0 : s.len));
    p[s.len < 0 ? 0 : s.len] = 0;
    return p;
}

/* ---- the APIs ---- */

/* __consumer_offsets is created on a group's first use: until its creation
 * is committed FindCoordinator answers COORDINATOR_NOT_AVAILABLE (Kafka
 * too), and clients retry, as this does. */
static void wait_coordinator(int fd)
{
    double deadline = tl_now() + 30;
    for (;;) {
        proto_find_coordinator_req_t r;
        proto_find_coordinator_resp_t resp;
        proto_find_coordinator_req_init(&r);
        r.key = S(groups[0]);
        CALL(fd, find_coordinator, 10, 3, &r, &resp);
        if (resp.error_code != KERR_COORDINATOR_NOT_AVAILABLE || tl_now() > deadline)
            return;
        usleep(100 * 1000);
    }
}

static void find_coordinators(int fd, int port)
{
    wait_coordinator(fd);
    for (int16_t v = 0; v <= 6; v++) {
        proto_find_coordinator_req_t r;
        proto_find_coordinator_resp_t resp;
        proto_find_coordinator_req_init(&r);
        r.key = S(groups[0]);
        r.coordinator_keys.n = 1;
        r.coordinator_keys.v = &r.key;
        CALL(fd, find_coordinator, 10, v, &r, &resp);
        if (v < 4) {
            TL_ASSERT(resp.error_code == 0 && resp.port == port, "FindCoordinator v%d: error %d "
                      "port %d", v, resp.error_code, resp.port);
            if (v >= 1)
                TL_ASSERT(eq(resp.error_message, "NONE"), "v%d message", v);
        } else {
            TL_ASSERT_EQ(resp.coordinators.n, 1);
            TL_ASSERT(eq(resp.coordinators.v[0].key, groups[0]), "v%d key", v);
            TL_ASSERT_EQ(resp.coordinators.v[0].error_code, 0);
            TL_ASSERT_EQ(resp.coordinators.v[0].port, port);
        }
    }
}

static proto_join_group_req_join_group_request_protocol_t join_proto = {{"range", 5},
                                                                        {(const uint8_t *)"M", 1}};

static int32_t join_send(int fd, int16_t v, const char *member)
{
    proto_join_group_req_t r;
    buf_t b;
    proto_join_group_req_init(&r);
    r.group_id = S(groups[v]);
    r.session_timeout_ms = 10000;
    r.rebalance_timeout_ms = 10000;
    r.member_id = S(member);
    r.protocol_type = S("consumer");
    r.protocols.n = 1;
    r.protocols.v = &join_proto;
    buf_init(&b);
    proto_join_group_req_encode(&r, v, &b);
    return tl_wire_send(fd, 11, v, &b);
}

static void join_recv(int fd, int16_t v, int32_t c, proto_join_group_resp_t *resp)
{
    size_t l;
    const uint8_t *p = tl_wire_recv(fd, 11, v, c, &arena, &l);
    proto_join_group_resp_init(resp);
    TL_ASSERT(proto_join_group_resp_decode(resp, v, p, l, &arena) == 0, "JoinGroup v%d", v);
}

/* All versions join at once, on their own connections, so that the
 * broker's initial rebalance delay is waited for once. */
static void join_all(int fds[NJOIN])
{
    int32_t c[NJOIN];
    proto_join_group_resp_t resp;
    for (int16_t v = 0; v < NJOIN; v++) {
        if (v >= 4) {
            join_recv(fds[v], v, join_send(fds[v], v, ""), &resp);
            TL_ASSERT(resp.error_code == 79 && resp.member_id.len > 0,
                      "JoinGroup v%d: error %d, wanted MEMBER_ID_REQUIRED", v, resp.error_code);
            snprintf(members[v], sizeof(members[v]), "%s", cstr(resp.member_id));
        }
        c[v] = join_send(fds[v], v, v >= 4 ? members[v] : "");
    }
    for (int16_t v = 0; v < NJOIN; v++) {
        join_recv(fds[v], v, c[v], &resp);
        TL_ASSERT(resp.error_code == 0 && resp.generation_id == 1, "JoinGroup v%d: error %d gen %d",
                  v, resp.error_code, resp.generation_id);
        TL_ASSERT(eq(resp.protocol_name, "range"), "JoinGroup v%d protocol", v);
        if (v >= 7)
            TL_ASSERT(eq(resp.protocol_type, "consumer"), "JoinGroup v%d protocol type", v);
        TL_ASSERT(resp.members.n == 1 && eq(resp.leader, cstr(resp.member_id)), "v%d leader", v);
        TL_ASSERT(resp.members.v[0].metadata.len == 1, "v%d metadata", v);
        TL_ASSERT(!resp.skip_assignment, "v%d skip", v);
        snprintf(members[v], sizeof(members[v]), "%s", cstr(resp.member_id));
    }
}

static void sync_all(int fds[NJOIN])
{
    for (int16_t g = 0; g < NJOIN; g++) {
        int16_t v = g < 5 ? g : 5;
        proto_sync_group_req_t r;
        proto_sync_group_resp_t resp;
        proto_sync_group_req_sync_group_request_assignment_t a = {S(members[g]),
                                                                 {(const uint8_t *)"AS", 2}};
        proto_sync_group_req_init(&r);
        r.group_id = S(groups[g]);
        r.generation_id = 1;
        r.member_id = S(members[g]);
        if (v >= 5) {
            r.protocol_type = S("consumer");
            r.protocol_name = S("range");
        }
        r.assignments.n = 1;
        r.assignments.v = &a;
        CALL(fds[g], sync_group, 14, v, &r, &resp);
        TL_ASSERT(resp.error_code == 0 && resp.assignment.len == 2, "SyncGroup v%d: %d", v,
                  resp.error_code);
        if (v >= 5)
            TL_ASSERT(eq(resp.protocol_type, "consumer") && eq(resp.protocol_name, "range"),
                      "SyncGroup v5 protocol");
    }
}

static void heartbeats(int fd)
{
    for (int16_t v = 0; v <= 4; v++) {
        proto_heartbeat_req_t r;
        proto_heartbeat_resp_t resp;
        proto_heartbeat_req_init(&r);
        r.group_id = S(groups[v]);
        r.generation_id = 1;
        r.member_id = S(members[v]);
        CALL(fd, heartbeat, 12, v, &r, &resp);
        TL_ASSERT(resp.error_code == 0, "Heartbeat v%d: %d", v, resp.error_code);
        r.generation_id = 2;
        CALL(fd, heartbeat, 12, v, &r, &resp);
        TL_ASSERT(resp.error_code == 22, "Heartbeat v%d: %d, wanted ILLEGAL_GENERATION", v,
                  resp.error_code);
    }
}

static void commits(int fd)
{
    for (int16_t v = 2; v <= 9; v++) {
        proto_offset_commit_req_t r;
        proto_offset_commit_resp_t resp;
        proto_offset_commit_req_offset_commit_request_topic_t t;
        proto_offset_commit_req_offset_commit_request_partition_t p;
        proto_offset_commit_req_init(&r);
        proto_offset_commit_req_offset_commit_request_topic_init(&t);
        proto_offset_commit_req_offset_commit_request_partition_init(&p);
        r.group_id = S(groups[v]);
        r.generation_id_or_member_epoch = 1;
        r.member_id = S(members[v]);
        t.name = S(topic);
        t.partitions.n = 1;
        t.partitions.v = &p;
        p.partition_index = 0;
        p.committed_offset = 100 + v;
        p.committed_leader_epoch = 3;
        p.committed_metadata = S("md");
        r.topics.n = 1;
        r.topics.v = &t;
        CALL(fd, offset_commit, 8, v, &r, &resp);
        TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == 1 &&
                      resp.topics.v[0].partitions.v[0].error_code == 0,
                  "OffsetCommit v%d", v);
    }
}

static void fetches(int fd)
{
    for (int16_t v = 1; v <= 7; v++) {
        int g = v < 2 ? 2 : v;
        proto_offset_fetch_req_t r;
        proto_offset_fetch_resp_t resp;
        proto_offset_fetch_req_offset_fetch_request_topic_t t;
        int32_t part = 0;
        proto_offset_fetch_req_init(&r);
        proto_offset_fetch_req_offset_fetch_request_topic_init(&t);
        r.group_id = S(groups[g]);
        t.name = S(topic);
        t.partition_indexes.n = 1;
        t.partition_indexes.v = &part;
        r.topics.n = 1;
        r.topics.v = &t;
        CALL(fd, offset_fetch, 9, v, &r, &resp);
        TL_ASSERT(resp.error_code == 0 && resp.topics.n == 1 &&
                      resp.topics.v[0].partitions.n == 1,
                  "OffsetFetch v%d", v);
        proto_offset_fetch_resp_offset_fetch_response_partition_t *p =
            &resp.topics.v[0].partitions.v[0];
        TL_ASSERT(p->committed_offset == 100 + g && eq(p->metadata, "md") && !p->error_code,
                  "OffsetFetch v%d: offset %" PRId64, v, p->committed_offset);
        if (v >= 5) /* OffsetCommit carries the epoch from v6 */
            TL_ASSERT_EQ(p->committed_leader_epoch, g >= 6 ? 3 : -1);
        if (v >= 2) { /* all topics */
            r.topics.n = -1;
            CALL(fd, offset_fetch, 9, v, &r, &resp);
            TL_ASSERT(resp.topics.n == 1 && eq(resp.topics.v[0].name, topic), "v%d all", v);
        }
    }
    for (int16_t v = 8; v <= 9; v++) {
        proto_offset_fetch_req_t r;
        proto_offset_fetch_resp_t resp;
        proto_offset_fetch_req_offset_fetch_request_group_t gs[3];
        proto_offset_fetch_req_offset_fetch_request_topics_t t;
        int32_t part = 0;
        proto_offset_fetch_req_init(&r);
        proto_offset_fetch_req_offset_fetch_request_topics_init(&t);
        t.name = S(topic);
        t.partition_indexes.n = 1;
        t.partition_indexes.v = &part;
        for (int i = 0; i < 3; i++) {
            proto_offset_fetch_req_offset_fetch_request_group_init(&gs[i]);
            gs[i].group_id = S(i < 2 ? groups[8 + i] : "no-such-group-0306");
            gs[i].topics.n = i == 1 ? -1 : 1;
            gs[i].topics.v = &t;
        }
        r.groups.n = 3;
        r.groups.v = gs;
        CALL(fd, offset_fetch, 9, v, &r, &resp);
        TL_ASSERT_EQ(resp.groups.n, 3);
        for (int i = 0; i < 3; i++) {
            proto_offset_fetch_resp_offset_fetch_response_group_t *g = &resp.groups.v[i];
            TL_ASSERT(!g->error_code && g->topics.n == 1 && g->topics.v[0].partitions.n == 1,
                      "OffsetFetch v%d group %d", v, i);
            int64_t want = eq(g->group_id, groups[8]) ? 108 : eq(g->group_id, groups[9]) ? 109 : -1;
            TL_ASSERT_EQ(g->topics.v[0].partitions.v[0].committed_offset, want);
        }
    }
}

/* v10 names topics by id: a commit by id is the offset a fetch by name
 * sees and the other way round; an unknown id is UNKNOWN_TOPIC_ID. */
static proto_offset_commit_resp_offset_commit_response_partition_t *
commit_by_id(int fd, const uint8_t *id, int32_t partition, int64_t offset)
{
    proto_offset_commit_req_t r;
    proto_offset_commit_resp_t resp;
    proto_offset_commit_req_offset_commit_request_topic_t t;
    proto_offset_commit_req_offset_commit_request_partition_t p;
    proto_offset_commit_req_init(&r);
    proto_offset_commit_req_offset_commit_request_topic_init(&t);
    proto_offset_commit_req_offset_commit_request_partition_init(&p);
    r.group_id = S(groups[9]);
    r.generation_id_or_member_epoch = 1;
    r.member_id = S(members[9]);
    memcpy(t.topic_id.b, id, 16);
    t.partitions.n = 1;
    t.partitions.v = &p;
    p.partition_index = partition;
    p.committed_offset = offset;
    p.committed_leader_epoch = 4;
    p.committed_metadata = S("by id");
    r.topics.n = 1;
    r.topics.v = &t;
    CALL(fd, offset_commit, 8, 10, &r, &resp);
    TL_ASSERT(resp.topics.n == 1 && resp.topics.v[0].partitions.n == 1 &&
                  !memcmp(resp.topics.v[0].topic_id.b, id, 16),
              "OffsetCommit v10: %d topics", resp.topics.n);
    TL_ASSERT_EQ(resp.topics.v[0].partitions.v[0].partition_index, partition);
    return &resp.topics.v[0].partitions.v[0];
}

static proto_offset_fetch_resp_offset_fetch_response_group_t *
fetch_by_id(int fd, const char *group, const uint8_t *id, proto_offset_fetch_resp_t *resp)
{
    proto_offset_fetch_req_t r;
    proto_offset_fetch_req_offset_fetch_request_group_t g;
    proto_offset_fetch_req_offset_fetch_request_topics_t t;
    int32_t part = 0;
    proto_offset_fetch_req_init(&r);
    proto_offset_fetch_req_offset_fetch_request_group_init(&g);
    proto_offset_fetch_req_offset_fetch_request_topics_init(&t);
    g.group_id = S(group);
    if (id) {
        memcpy(t.topic_id.b, id, 16);
        t.partition_indexes.n = 1;
        t.partition_indexes.v = &part;
        g.topics.n = 1;
        g.topics.v = &t;
    } else {
        g.topics.n = -1; /* all */
    }
    r.groups.n = 1;
    r.groups.v = &g;
    CALL(fd, offset_fetch, 9, 10, &r, resp);
    TL_ASSERT(resp->groups.n == 1 && eq(resp->groups.v[0].group_id, group),
              "OffsetFetch v10: %d groups", resp->groups.n);
    return &resp->groups.v[0];
}

static void by_topic_id(int fd)
{
    proto_offset_fetch_resp_t resp;
    proto_offset_fetch_resp_offset_fetch_response_group_t *g;
    proto_offset_commit_resp_offset_commit_response_partition_t *cp;
    uint8_t unknown[16];

    for (int i = 0; i < 16; i++)
        unknown[i] = (uint8_t)(topic_id[i] ^ 0x3c);
    cp = commit_by_id(fd, topic_id, 0, 209);
    TL_ASSERT(!cp->error_code, "OffsetCommit v10 by id: %d", cp->error_code);
    cp = commit_by_id(fd, unknown, 0, 1);
    TL_ASSERT(cp->error_code == 100, "OffsetCommit v10, unknown id: %d", cp->error_code);
    cp = commit_by_id(fd, topic_id, 3, 1);
    TL_ASSERT(cp->error_code == 3, "OffsetCommit v10, partition 3 of 1: %d", cp->error_code);

    for (int k = 8; k <= 9; k++) {
        g = fetch_by_id(fd, groups[k], topic_id, &resp);
        TL_ASSERT(!g->error_code && g->topics.n == 1 && g->topics.v[0].partitions.n == 1 &&
                      !memcmp(g->topics.v[0].topic_id.b, topic_id, 16),
                  "OffsetFetch v10 of group %d: error %d", k, g->error_code);
        proto_offset_fetch_resp_offset_fetch_response_partitions_t *p =
            &g->topics.v[0].partitions.v[0];
        /* group 8's commit was by name (v8), group 9's last by id */
        TL_ASSERT(!p->error_code && p->committed_offset == (k == 8 ? 108 : 209) &&
                      p->committed_leader_epoch == (k == 8 ? 3 : 4) &&
                      eq(p->metadata, k == 8 ? "md" : "by id"),
                  "OffsetFetch v10 of group %d: error %d offset %" PRId64, k, p->error_code,
                  p->committed_offset);
        g = fetch_by_id(fd, groups[k], NULL, &resp);
        TL_ASSERT(!g->error_code && g->topics.n == 1 &&
                      !memcmp(g->topics.v[0].topic_id.b, topic_id, 16) &&
                      g->topics.v[0].partitions.n == 1,
                  "OffsetFetch v10 of all topics of group %d: %d topics", k, g->topics.n);
    }
    g = fetch_by_id(fd, groups[9], unknown, &resp);
    TL_ASSERT(g->topics.n == 1 && g->topics.v[0].partitions.n == 1, "unknown id: %d topics",
              g->topics.n);
    proto_offset_fetch_resp_offset_fetch_response_partitions_t *up = &g->topics.v[0].partitions.v[0];
    TL_ASSERT(!g->error_code && up->error_code == 100 && up->committed_offset == -1 &&
                  up->committed_leader_epoch == -1 && eq(up->metadata, "") &&
                  !memcmp(g->topics.v[0].topic_id.b, unknown, 16),
              "OffsetFetch v10, unknown id: group error %d, partition error %d offset %" PRId64,
              g->error_code, up->error_code, up->committed_offset);

    /* v9 by name sees the commit by id */
    proto_offset_fetch_req_t r;
    proto_offset_fetch_req_offset_fetch_request_group_t rg;
    proto_offset_fetch_req_offset_fetch_request_topics_t t;
    int32_t part = 0;
    proto_offset_fetch_req_init(&r);
    proto_offset_fetch_req_offset_fetch_request_group_init(&rg);
    proto_offset_fetch_req_offset_fetch_request_topics_init(&t);
    t.name = S(topic);
    t.partition_indexes.n = 1;
    t.partition_indexes.v = &part;
    rg.group_id = S(groups[9]);
    rg.topics.n = 1;
    rg.topics.v = &t;
    r.groups.n = 1;
    r.groups.v = &rg;
    CALL(fd, offset_fetch, 9, 9, &r, &resp);
    TL_ASSERT(resp.groups.n == 1 && resp.groups.v[0].topics.n == 1 &&
                  resp.groups.v[0].topics.v[0].partitions.v[0].committed_offset == 209,
              "OffsetFetch v9 by name after a commit by id");
}

static void describes(int fd)
{
    for (int16_t v = 0; v <= 6; v++) {
        proto_describe_groups_req_t r;
        proto_describe_groups_resp_t resp;
        proto_str_t ids[2] = {S(groups[v]), S("no-such-group-0306")};
        proto_describe_groups_req_init(&r);
        r.groups.n = 2;
        r.groups.v = ids;
        r.include_authorized_operations = true;
        CALL(fd, describe_groups, 15, v, &r, &resp);
        TL_ASSERT_EQ(resp.groups.n, 2);
        /* Kafka answers in its own order (by coordinator shard). */
        int k = eq(resp.groups.v[0].group_id, groups[v]) ? 0 : 1;
        proto_describe_groups_resp_described_group_t *d = &resp.groups.v[k];
        TL_ASSERT(!d->error_code && eq(d->group_state, "Stable") && eq(d->protocol_type, "consumer")
                      && eq(d->protocol_data, "range") && d->members.n == 1,
                  "DescribeGroups v%d: error %d state %s type %s data %s members %d", v,
                  d->error_code, cstr(d->group_state), cstr(d->protocol_type),
                  cstr(d->protocol_data), d->members.n);
        TL_ASSERT(d->members.v[0].member_assignment.len == 2 &&
                      d->members.v[0].member_metadata.len == 1 &&
                      eq(d->members.v[0].member_id, members[v]) &&
                      eq(d->members.v[0].client_id, "v0306"),
                  "DescribeGroups v%d member", v);
        if (v >= 3)
            TL_ASSERT_EQ(d->authorized_operations, 3400);
        proto_describe_groups_resp_described_group_t *m = &resp.groups.v[1 - k];
        if (v < 6) {
            TL_ASSERT(eq(m->group_state, "Dead") && !m->error_code,
                      "DescribeGroups v%d of a missing group", v);
            TL_ASSERT_EQ(m->authorized_operations, v >= 3 ? 3400 : INT32_MIN);
            continue;
        }
        /* v6: GROUP_ID_NOT_FOUND with its message, no operations. */
        TL_ASSERT(d->error_message.len < 0, "DescribeGroups v6: a message without an error");
        TL_ASSERT(m->error_code == 69 && eq(m->error_message, "Group no-such-group-0306 not found.")
                      && eq(m->group_state, "Dead") && eq(m->protocol_type, "") &&
                      eq(m->protocol_data, "") && m->members.n == 0 &&
                      m->authorized_operations == INT32_MIN,
                  "DescribeGroups v6 of a missing group: error %d message '%s' state '%s' ops %d",
                  m->error_code, cstr(m->error_message), cstr(m->group_state),
                  m->authorized_operations);
    }
}

static int listed(proto_list_groups_resp_t *resp, const char *g)
{
    for (int32_t i = 0; i < resp->groups.n; i++)
        if (eq(resp->groups.v[i].group_id, g))
            return 1;
    return 0;
}

static void lists(int fd)
{
    for (int16_t v = 0; v <= 5; v++) {
        proto_list_groups_req_t r;
        proto_list_groups_resp_t resp;
        proto_list_groups_req_init(&r);
        CALL(fd, list_groups, 16, v, &r, &resp);
        TL_ASSERT(!resp.error_code && listed(&resp, groups[0]), "ListGroups v%d", v);
        if (v >= 4) {
            proto_str_t st = S("STABLE"); /* filters ignore case */
            r.states_filter.n = 1;
            r.states_filter.v = &st;
            CALL(fd, list_groups, 16, v, &r, &resp);
            TL_ASSERT(listed(&resp, groups[0]), "ListGroups v%d state filter", v);
            for (int32_t i = 0; i < resp.groups.n; i++)
                TL_ASSERT(eq(resp.groups.v[i].group_state, "Stable"), "v%d filter", v);
            st = S("Empty");
            CALL(fd, list_groups, 16, v, &r, &resp);
            TL_ASSERT(!listed(&resp, groups[0]), "ListGroups v%d listed a Stable group", v);
            r.states_filter.n = 0;
        }
        if (v >= 5) {
            proto_str_t ty = S("classic");
            r.types_filter.n = 1;
            r.types_filter.v = &ty;
            CALL(fd, list_groups, 16, v, &r, &resp);
            TL_ASSERT(listed(&resp, groups[0]) && eq(resp.groups.v[0].group_type, "classic"),
                      "ListGroups v5 type filter");
            ty = S("consumer");
            CALL(fd, list_groups, 16, v, &r, &resp);
            TL_ASSERT(!listed(&resp, groups[0]), "ListGroups v5: a classic group as consumer");
        }
    }
}

static void leaves(int fd)
{
    for (int16_t v = 0; v <= 5; v++) {
        proto_leave_group_req_t r;
        proto_leave_group_resp_t resp;
        proto_leave_group_req_member_identity_t m;
        proto_leave_group_req_init(&r);
        proto_leave_group_req_member_identity_init(&m);
        r.group_id = S(groups[v]);
        r.member_id = S(members[v]);
        m.member_id = S(members[v]);
        m.reason = S("done");
        r.members.n = 1;
        r.members.v = &m;
        CALL(fd, leave_group, 13, v, &r, &resp);
        TL_ASSERT(!resp.error_code, "LeaveGroup v%d: %d", v, resp.error_code);
        if (v >= 3)
            TL_ASSERT(resp.members.n == 1 && !resp.members.v[0].error_code &&
                          eq(resp.members.v[0].member_id, members[v]),
                      "LeaveGroup v%d member", v);
        CALL(fd, leave_group, 13, v, &r, &resp);
        int16_t err = v < 3 ? resp.error_code : resp.members.v[0].error_code;
        TL_ASSERT(err == 25, "LeaveGroup v%d again: %d", v, err);
    }
}

static void deletes(int fd)
{
    proto_offset_delete_req_t od;
    proto_offset_delete_resp_t odr;
    proto_offset_delete_req_offset_delete_request_topic_t t;
    proto_offset_delete_req_offset_delete_request_partition_t p = {0};
    proto_offset_delete_req_init(&od);
    proto_offset_delete_req_offset_delete_request_topic_init(&t);
    od.group_id = S(groups[5]);
    t.name = S(topic);
    t.partitions.n = 1;
    t.partitions.v = &p;
    od.topics.n = 1;
    od.topics.v = &t;
    CALL(fd, offset_delete, 47, 0, &od, &odr);
    TL_ASSERT(!odr.error_code && odr.topics.n == 1 && !odr.topics.v[0].partitions.v[0].error_code,
              "OffsetDelete");
    od.group_id = S(groups[9]); /* still has its member */
    CALL(fd, offset_delete, 47, 0, &od, &odr);
    TL_ASSERT(!odr.error_code && odr.topics.v[0].partitions.v[0].error_code == 86,
              "OffsetDelete of a consumed topic: %d", odr.topics.v[0].partitions.v[0].error_code);

    for (int16_t v = 0; v <= 3; v++) {
        proto_delete_groups_req_t r;
        proto_delete_groups_resp_t resp;
        proto_str_t ids[3] = {S(groups[v]), S(groups[9]), S("no-such-group-0306")};
        proto_delete_groups_req_init(&r);
        r.groups_names.n = v < 3 ? 2 : 3;
        r.groups_names.v = ids;
        CALL(fd, delete_groups, 42, v, &r, &resp);
        TL_ASSERT_EQ(resp.results.n, r.groups_names.n);
        for (int32_t i = 0; i < resp.results.n; i++) {
            proto_delete_groups_resp_deletable_group_result_t *res = &resp.results.v[i];
            int16_t want = eq(res->group_id, groups[v]) ? 0 : eq(res->group_id, groups[9]) ? 68 : 69;
            TL_ASSERT(res->error_code == want, "DeleteGroups v%d of %s: %d, wanted %d", v,
                      cstr(res->group_id), res->error_code, want);
            /* Kafka 4.4 gives no message for these errors */
            if (v >= 3)
                TL_ASSERT(res->error_message.len == -1, "DeleteGroups v3 of %s: message '%s'",
                          cstr(res->group_id), cstr(res->error_message));
        }
    }
}

int main(void)
{
    const char *bs;
    int fds[NJOIN];

    tl_init("0306-group-versions");
    tl_wire_set_client_id("v0306");
    bs = tl_bootstrap();
    arena_init(&arena, 65536);
    topic = tl_topic_name("t0306");
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    TL_ASSERT_EQ(tl_create_topic(rk, topic, 1), 1);
    rd_kafka_destroy(rk);
    {
        proto_metadata_resp_t md;
        int mfd = tl_connect(bs, 20000);
        TL_ASSERT(mfd >= 0, "connect");
        tl_wire_metadata(mfd, &arena, 12, topic, 0, &md);
        TL_ASSERT(md.topics.n == 1 && !md.topics.v[0].error_code, "Metadata of %s", topic);
        memcpy(topic_id, md.topics.v[0].topic_id.b, 16);
        close(mfd);
    }
    for (int i = 0; i < NJOIN; i++) {
        snprintf(groups[i], sizeof(groups[i]), "g-%s-v%d", topic, i);
        fds[i] = tl_connect(bs, 20000);
        TL_ASSERT(fds[i] >= 0, "connect");
    }
    find_coordinators(fds[0], atoi(strrchr(bs, ':') + 1));
    join_all(fds);
    sync_all(fds);
    heartbeats(fds[0]);
    commits(fds[0]);
    fetches(fds[0]);
    by_topic_id(fds[0]);
    describes(fds[0]);
    lists(fds[0]);
    leaves(fds[0]);
    deletes(fds[0]);
    for (int i = 0; i < NJOIN; i++)
        close(fds[i]);
    arena_destroy(&arena);
    free(topic);
    return tl_done();
}
