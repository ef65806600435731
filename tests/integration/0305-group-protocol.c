/* 0305-group-protocol: the group APIs on the wire, with the error codes
 * Kafka gives. Two raw connections play two members of one group:
 * FindCoordinator (single and batched keys), JoinGroup v5 (INVALID_GROUP_ID,
 * INVALID_SESSION_TIMEOUT, MEMBER_ID_REQUIRED, UNKNOWN_MEMBER_ID,
 * INCONSISTENT_GROUP_PROTOCOL, a parked join answered when the group
 * completes), SyncGroup v3 (ILLEGAL_GENERATION, UNKNOWN_MEMBER_ID, the
 * leader's assignment handed to the follower), Heartbeat v3
 * (REBALANCE_IN_PROGRESS during a rebalance), OffsetCommit v7 (only
 * members commit to a live group, UNKNOWN_TOPIC_OR_PARTITION), OffsetFetch
 * v5, DeleteGroups v1 (NON_EMPTY_GROUP, GROUP_ID_NOT_FOUND), LeaveGroup v3,
 * DescribeGroups v3 states, and static members fenced (FENCED_INSTANCE_ID). */
#include "testlib/testlib.h"

#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static int32_t corr = 1;

/* ---- encoding and decoding ---- */

static void put_str(tl_req *r, const char *s)
{
    if (!s) {
        tl_req_i16(r, -1);
        return;
    }
    tl_req_i16(r, (int16_t)strlen(s));
    tl_req_bytes(r, s, strlen(s));
}

static void put_bytes(tl_req *r, const void *p, int32_t n)
{
    tl_req_i32(r, n);
    tl_req_bytes(r, p, (size_t)n);
}

typedef struct rd_s {
    uint8_t *buf, *p, *end;
} rdr_t;

static int16_t g16(rdr_t *d)
{
    TL_ASSERT(d->end - d->p >= 2, "short response");
    int16_t v = tl_get_i16(d->p);
    d->p += 2;
    return v;
}

static int32_t g32(rdr_t *d)
{
    TL_ASSERT(d->end - d->p >= 4, "short response");
    int32_t v = tl_get_i32(d->p);
    d->p += 4;
    return v;
}

/* A string into out (NULL-terminated, "(null)" for null). */
static void gstr(rdr_t *d, char *out, size_t cap)
{
    int16_t n = g16(d);
    if (n < 0) {
        snprintf(out, cap, "(null)");
        return;
    }
    TL_ASSERT(d->end - d->p >= n && (size_t)n < cap, "bad string");
    memcpy(out, d->p, (size_t)n);
    out[n] = 0;
    d->p += n;
}

static void gskip_bytes(rdr_t *d)
{
    int32_t n = g32(d);
    if (n > 0)
        d->p += n;
}

static void send_req(int fd, tl_req *r)
{
    tl_req_finish(r);
    TL_ASSERT(tl_send_all(fd, r->data, r->len) == 0, "send");
}

/* Reads the answer to request c (timeout ms); flexible: response header v1. */
static rdr_t recv_resp(int fd, int32_t c, int flexible, int timeout_ms)
{
    rdr_t d;
    int n = tl_recv_frame(fd, &d.buf, timeout_ms);
    TL_ASSERT(n > 4, "no response to request %d", c);
    d.p = d.buf;
    d.end = d.buf + n;
    TL_ASSERT_EQ(g32(&d), c);
    if (flexible)
        d.p++;
    return d;
}

/* ---- requests ---- */

typedef struct join_s {
    int16_t err;
    int32_t gen;
    char proto[64], leader[128], member[128];
    int nmembers;
} join_t;

static int32_t join_send(int fd, const char *group, int32_t session, const char *member,
                         const char *instance, const char *ptype)
{
    tl_req r;
    int32_t c = corr++;
    tl_req_header(&r, 11, 5, c, "cli");
    put_str(&r, group);
    tl_req_i32(&r, session);
    tl_req_i32(&r, 30000);
    put_str(&r, member);
    put_str(&r, instance);
    put_str(&r, ptype);
    tl_req_i32(&r, 1);
    put_str(&r, "range");
    put_bytes(&r, "META", 4);
    send_req(fd, &r);
    return c;
}

static join_t join_recv(int fd, int32_t c, int timeout_ms)
{
    join_t j;
    rdr_t d = recv_resp(fd, c, 0, timeout_ms);
    g32(&d);
    j.err = g16(&d);
    j.gen = g32(&d);
    gstr(&d, j.proto, sizeof(j.proto));
    gstr(&d, j.leader, sizeof(j.leader));
    gstr(&d, j.member, sizeof(j.member));
    j.nmembers = g32(&d);
    for (int i = 0; i < j.nmembers; i++) {
        char tmp[128];
        gstr(&d, tmp, sizeof(tmp));
        gstr(&d, tmp, sizeof(tmp));
        TL_ASSERT_EQ(g32(&d), 4);
        TL_ASSERT(!memcmp(d.p, "META", 4), "member metadata");
        d.p += 4;
    }
    free(d.buf);
    return j;
}

static join_t join(int fd, const char *group, int32_t session, const char *member,
                   const char *instance, const char *ptype)
{
    return join_recv(fd, join_send(fd, group, session, member, instance, ptype), 15000);
}

static int32_t sync_send(int fd, const char *group, int32_t gen, const char *member,
                         const char *assign_to, const char *assignment)
{
    tl_req r;
    int32_t c = corr++;
    tl_req_header(&r, 14, 3, c, "cli");
    put_str(&r, group);
    tl_req_i32(&r, gen);
    put_str(&r, member);
    put_str(&r, NULL);
    tl_req_i32(&r, assign_to ? 1 : 0);
    if (assign_to) {
        put_str(&r, assign_to);
        put_bytes(&r, assignment, (int32_t)strlen(assignment));
    }
    send_req(fd, &r);
    return c;
}

/* Returns the error; the assignment goes into out. */
static int16_t sync_recv(int fd, int32_t c, char *out, size_t cap)
{
    rdr_t d = recv_resp(fd, c, 0, 15000);
    g32(&d);
    int16_t err = g16(&d);
    int32_t n = g32(&d);
    TL_ASSERT(n >= 0 && (size_t)n < cap && d.end - d.p >= n, "assignment");
    memcpy(out, d.p, (size_t)n);
    out[n] = 0;
    free(d.buf);
    return err;
}

static int16_t heartbeat(int fd, const char *group, int32_t gen, const char *member,
                         const char *instance)
{
    tl_req r;
    int32_t c = corr++;
    tl_req_header(&r, 12, 3, c, "cli");
    put_str(&r, group);
    tl_req_i32(&r, gen);
    put_str(&r, member);
    put_str(&r, instance);
    send_req(fd, &r);
    rdr_t d = recv_resp(fd, c, 0, 10000);
    g32(&d);
    int16_t err = g16(&d);
    free(d.buf);
    return err;
}

static int16_t commit(int fd, const char *group, int32_t gen, const char *member,
                      const char *topic, int64_t offset)
{
    tl_req r;
    int32_t c = corr++;
    tl_req_header(&r, 8, 7, c, "cli");
    put_str(&r, group);
    tl_req_i32(&r, gen);
    put_str(&r, member);
    put_str(&r, NULL);
    tl_req_i32(&r, 1);
    put_str(&r, topic);
    tl_req_i32(&r, 1);
    tl_req_i32(&r, 0);
    tl_req_i32(&r, (int32_t)(offset >> 32));
    tl_req_i32(&r, (int32_t)offset);
    tl_req_i32(&r, 7); /* leader epoch */
    put_str(&r, "md");
    send_req(fd, &r);
    rdr_t d = recv_resp(fd, c, 0, 10000);
    g32(&d);
    TL_ASSERT_EQ(g32(&d), 1);
    char name[256];
    gstr(&d, name, sizeof(name));
    TL_ASSERT(!strcmp(name, topic), "topic %s", name);
    TL_ASSERT_EQ(g32(&d), 1);
    TL_ASSERT_EQ(g32(&d), 0);
    int16_t err = g16(&d);
    free(d.buf);
    return err;
}

/* OffsetFetch v5 of partition 0: returns the offset, checks epoch/metadata. */
static int64_t fetch_offset(int fd, const char *group, const char *topic, int32_t *epoch,
                            char *md, size_t mdcap)
{
    tl_req r;
    int32_t c = corr++;
    tl_req_header(&r, 9, 5, c, "cli");
    put_str(&r, group);
    tl_req_i32(&r, 1);
    put_str(&r, topic);
    tl_req_i32(&r, 1);
    tl_req_i32(&r, 0);
    send_req(fd, &r);
    rdr_t d = recv_resp(fd, c, 0, 10000);
    char name[256];
    g32(&d);
    TL_ASSERT_EQ(g32(&d), 1);
    gstr(&d, name, sizeof(name));
    TL_ASSERT_EQ(g32(&d), 1);
    TL_ASSERT_EQ(g32(&d), 0);
    int64_t hi = (uint32_t)g32(&d), lo = (uint32_t)g32(&d);
    *epoch = g32(&d);
    gstr(&d, md, mdcap);
    TL_ASSERT_EQ(g16(&d), 0);
    TL_ASSERT_EQ(g16(&d), 0);
    free(d.buf);
    return (int64_t)((uint64_t)hi << 32 | (uint64_t)lo);
}

static int16_t delete_group(int fd, const char *group)
{
    tl_req r;
    int32_t c = corr++;
    tl_req_header(&r, 42, 1, c, "cli");
    tl_req_i32(&r, 1);
    put_str(&r, group);
    send_req(fd, &r);
    rdr_t d = recv_resp(fd, c, 0, 10000);
    char name[256];
    g32(&d);
    TL_ASSERT_EQ(g32(&d), 1);
    gstr(&d, name, sizeof(name));
    int16_t err = g16(&d);
    free(d.buf);
    return err;
}

static void describe_state(int fd, const char *group, char *state, size_t cap, int *members)
{
    tl_req r;
    int32_t c = corr++;
    tl_req_header(&r, 15, 3, c, "cli");
    tl_req_i32(&r, 1);
    put_str(&r, group);
    tl_req_i8(&r, 1);
    send_req(fd, &r);
    rdr_t d = recv_resp(fd, c, 0, 10000);
    char tmp[256];
    g32(&d);
    TL_ASSERT_EQ(g32(&d), 1);
    TL_ASSERT_EQ(g16(&d), 0);
    gstr(&d, tmp, sizeof(tmp));
    gstr(&d, state, cap);
    gstr(&d, tmp, sizeof(tmp)); /* protocol type */
    gstr(&d, tmp, sizeof(tmp)); /* protocol */
    *members = g32(&d);
    for (int i = 0; i < *members; i++) {
        for (int k = 0; k < 3; k++)
            gstr(&d, tmp, sizeof(tmp));
        gskip_bytes(&d);
        gskip_bytes(&d);
    }
    /* READ, DELETE, DESCRIBE, DESCRIBE_CONFIGS, ALTER_CONFIGS */
    TL_ASSERT_EQ(g32(&d), 3400);
    free(d.buf);
}

static int16_t leave(int fd, const char *group, const char *member)
{
    tl_req r;
    int32_t c = corr++;
    tl_req_header(&r, 13, 3, c, "cli");
    put_str(&r, group);
    tl_req_i32(&r, 1);
    put_str(&r, member);
    put_str(&r, NULL);
    send_req(fd, &r);
    rdr_t d = recv_resp(fd, c, 0, 10000);
    char tmp[256];
    g32(&d);
    TL_ASSERT_EQ(g16(&d), 0);
    TL_ASSERT_EQ(g32(&d), 1);
    gstr(&d, tmp, sizeof(tmp));
    gstr(&d, tmp, sizeof(tmp));
    int16_t err = g16(&d);
    free(d.buf);
    return err;
}

/* FindCoordinator v4 (flexible), two group keys. */
static void find_batched(int fd, const char *k1, const char *k2, int32_t port)
{
    tl_req r;
    int32_t c = corr++;
    tl_req_header(&r, 10, 4, c, "cli");
    tl_req_i8(&r, 0);            /* header tags */
    tl_req_i8(&r, 0);            /* key type: group */
    tl_req_i8(&r, 3);            /* two keys */
    tl_req_i8(&r, (int8_t)(strlen(k1) + 1));
    tl_req_bytes(&r, k1, strlen(k1));
    tl_req_i8(&r, (int8_t)(strlen(k2) + 1));
    tl_req_bytes(&r, k2, strlen(k2));
    tl_req_i8(&r, 0);
    send_req(fd, &r);
    rdr_t d = recv_resp(fd, c, 1, 10000);
    g32(&d);
    TL_ASSERT_EQ(*d.p++, 3);
    for (int i = 0; i < 2; i++) {
        int n = *d.p++ - 1;
        TL_ASSERT(n == (int)strlen(i ? k2 : k1) && !memcmp(d.p, i ? k2 : k1, (size_t)n), "key");
        d.p += n;
        g32(&d);         /* node id */
        d.p += *d.p;     /* host: compact length + 1 */
        TL_ASSERT_EQ(g32(&d), port);
        TL_ASSERT_EQ(g16(&d), 0);
        TL_ASSERT_EQ(*d.p, 1); /* error message "" */
        d.p += 2;               /* message and tags */
    }
    free(d.buf);
}

/* ---- the scenario ---- */

int main(void)
{
    const char *bs;
    char *topic, group[256], m1[128], m2[128], got[128];

    tl_init("0305-group-protocol");
    bs = tl_bootstrap();
    topic = tl_topic_name("t0305");
    snprintf(group, sizeof(group), "g-%s", topic);
    rd_kafka_t *rk = tl_new(RD_KAFKA_PRODUCER, tl_conf(bs));
    TL_ASSERT_EQ(tl_create_topic(rk, topic, 1), 1);
    rd_kafka_destroy(rk);
    int fd1 = tl_connect(bs, 20000), fd2 = tl_connect(bs, 20000);
    TL_ASSERT(fd1 >= 0 && fd2 >= 0, "connect to %s", bs);
    find_batched(fd1, group, "other", atoi(strrchr(bs, ':') + 1));

    join_t j = join(fd1, "", 10000, "", NULL, "consumer");
    TL_ASSERT_EQ(j.err, 24); /* INVALID_GROUP_ID */
    j = join(fd1, group, 1000, "", NULL, "consumer");
    TL_ASSERT_EQ(j.err, 26); /* INVALID_SESSION_TIMEOUT */
    j = join(fd1, group, 10000, "nobody", NULL, "consumer");
    TL_ASSERT_EQ(j.err, 25); /* UNKNOWN_MEMBER_ID: the group does not exist */
    j = join(fd1, group, 10000, "", NULL, "consumer");
    TL_ASSERT_EQ(j.err, 79); /* MEMBER_ID_REQUIRED */
    TL_ASSERT_EQ(j.gen, -1);
    TL_ASSERT(!strncmp(j.member, "cli-", 4) && strlen(j.member) == 40, "member id %s", j.member);
    snprintf(m1, sizeof(m1), "%s", j.member);
    j = join(fd1, group, 10000, m1, NULL, "consumer");
    TL_ASSERT_EQ(j.err, 0);
    TL_ASSERT_EQ(j.gen, 1);
    TL_ASSERT(!strcmp(j.leader, m1) && !strcmp(j.member, m1), "leader %s", j.leader);
    TL_ASSERT(!strcmp(j.proto, "range"), "protocol %s", j.proto);
    TL_ASSERT_EQ(j.nmembers, 1);

    TL_ASSERT_EQ(heartbeat(fd1, group, 1, m1, NULL), 0);
    TL_ASSERT_EQ(sync_recv(fd1, sync_send(fd1, group, 2, m1, NULL, ""), got, sizeof(got)), 22);
    TL_ASSERT_EQ(sync_recv(fd1, sync_send(fd1, group, 1, "nobody", NULL, ""), got, sizeof(got)),
                 25);
    TL_ASSERT_EQ(commit(fd1, group, 1, m1, topic, 5), 27); /* not synced yet */
    TL_ASSERT_EQ(sync_recv(fd1, sync_send(fd1, group, 1, m1, m1, "A1"), got, sizeof(got)), 0);
    TL_ASSERT(!strcmp(got, "A1"), "assignment %s", got);
    TL_ASSERT_EQ(heartbeat(fd1, group, 1, m1, NULL), 0);
    TL_ASSERT_EQ(heartbeat(fd1, group, 0, m1, NULL), 22); /* ILLEGAL_GENERATION */
    TL_ASSERT_EQ(heartbeat(fd1, group, 1, "x", NULL), 25);

    j = join(fd2, group, 10000, "", NULL, "other");
    TL_ASSERT_EQ(j.err, 23); /* INCONSISTENT_GROUP_PROTOCOL */
    j = join(fd2, group, 10000, "", NULL, "consumer");
    TL_ASSERT_EQ(j.err, 79);
    snprintf(m2, sizeof(m2), "%s", j.member);
    /* The second member's join waits for the first to rejoin. */
    int32_t c2 = join_send(fd2, group, 10000, m2, NULL, "consumer");
    usleep(300 * 1000);
    TL_ASSERT_EQ(heartbeat(fd1, group, 1, m1, NULL), 27); /* REBALANCE_IN_PROGRESS */
    TL_ASSERT_EQ(commit(fd1, group, 1, m1, topic, 3), 0);  /* allowed while preparing */
    j = join(fd1, group, 10000, m1, NULL, "consumer");
    join_t j2 = join_recv(fd2, c2, 15000);
    TL_ASSERT(j.err == 0 && j2.err == 0, "joins: %d %d", j.err, j2.err);
    TL_ASSERT(j.gen == 2 && j2.gen == 2, "generations %d %d", j.gen, j2.gen);
    TL_ASSERT(!strcmp(j.leader, m1) && !strcmp(j2.leader, m1), "leader");
    TL_ASSERT(j.nmembers == 2 && j2.nmembers == 0, "member lists %d %d", j.nmembers, j2.nmembers);
    /* Follower first: it waits for the leader's assignment. */
    int32_t s2 = sync_send(fd2, group, 2, m2, NULL, "");
    usleep(200 * 1000);
    TL_ASSERT_EQ(sync_recv(fd1, sync_send(fd1, group, 2, m1, m2, "B2"), got, sizeof(got)), 0);
    TL_ASSERT(!strcmp(got, ""), "leader's assignment %s", got);
    TL_ASSERT_EQ(sync_recv(fd2, s2, got, sizeof(got)), 0);
    TL_ASSERT(!strcmp(got, "B2"), "follower's assignment %s", got);

    TL_ASSERT_EQ(commit(fd1, group, 2, m1, topic, 42), 0);
    TL_ASSERT_EQ(commit(fd1, group, -1, "", topic, 43), 25); /* not a member of a live group */
    TL_ASSERT_EQ(commit(fd1, group, 2, m1, "no-such-topic-0305", 1), 3);
    int32_t epoch;
    char md[64];
    TL_ASSERT_EQ(fetch_offset(fd1, group, topic, &epoch, md, sizeof(md)), 42);
    TL_ASSERT_EQ(epoch, 7);
    TL_ASSERT(!strcmp(md, "md"), "metadata %s", md);
    TL_ASSERT_EQ(delete_group(fd1, group), 68); /* NON_EMPTY_GROUP */
    int members;
    char state[64];
    describe_state(fd1, group, state, sizeof(state), &members);
    TL_ASSERT(!strcmp(state, "Stable") && members == 2, "%s with %d", state, members);

    TL_ASSERT_EQ(leave(fd2, group, m2), 0);
    TL_ASSERT_EQ(leave(fd2, group, m2), 25);
    TL_ASSERT_EQ(leave(fd1, group, m1), 0);
    describe_state(fd1, group, state, sizeof(state), &members);
    TL_ASSERT(!strcmp(state, "Empty") && members == 0, "%s with %d", state, members);
    TL_ASSERT_EQ(commit(fd1, group, -1, "", topic, 44), 0); /* admin commit, empty group */
    TL_ASSERT_EQ(fetch_offset(fd1, group, topic, &epoch, md, sizeof(md)), 44);
    TL_ASSERT_EQ(delete_group(fd1, group), 0);
    TL_ASSERT_EQ(delete_group(fd1, group), 69); /* GROUP_ID_NOT_FOUND */
    describe_state(fd1, group, state, sizeof(state), &members);
    TL_ASSERT(!strcmp(state, "Dead"), "%s", state);
    TL_ASSERT_EQ(fetch_offset(fd1, group, topic, &epoch, md, sizeof(md)), -1);

    /* Static members: no member id round trip; a wrong id is fenced. */
    char sgroup[300];
    snprintf(sgroup, sizeof(sgroup), "%s-static", group);
    j = join(fd1, sgroup, 10000, "", "inst", "consumer");
    TL_ASSERT_EQ(j.err, 0);
    TL_ASSERT(!strncmp(j.member, "inst-", 5), "static member id %s", j.member);
    TL_ASSERT_EQ(heartbeat(fd1, sgroup, j.gen, "inst-x", "inst"), 82); /* FENCED_INSTANCE_ID */
    TL_ASSERT_EQ(heartbeat(fd1, sgroup, j.gen, j.member, "inst"), 0);
    TL_ASSERT_EQ(heartbeat(fd1, sgroup, j.gen, j.member, "other"), 25);
    j2 = join(fd2, sgroup, 10000, "inst-x", "inst", "consumer");
    TL_ASSERT_EQ(j2.err, 82);
    close(fd1);
    close(fd2);
    free(topic);
    return tl_done();
}
