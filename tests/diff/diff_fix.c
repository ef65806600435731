/* Fixtures: what the requests refer to, made the same way on both
 * brokers. The shared ones (two topics with records, a loaded group
 * coordinator) are made once; a case that deletes a topic, rebalances a
 * group or deletes one gets its own, named after its corpus index, so
 * that no case sees what an earlier one did to a shared fixture.
 *
 * The shared topics keep their records (retention.ms=-1): the records'
 * timestamps are fixed, so that both brokers get the same bytes on every
 * run, and a broker's retention would otherwise delete them mid-run.
 *
 * Requests carry placeholders ("@topic", the uuid of @topic, "@member")
 * for the values that differ by broker (topic ids, member ids) or by case
 * (the names of its own fixtures); diff_fix_apply puts one broker's
 * values in, diff_fix_unapply takes them out of its answer again. */
#include "diff/diff.h"

#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "testlib/testlib.h"
#include "util/kerr.h"

static const char *const diff_toks[DIFF_TOK_N] = {
    "@topic",      "@topic2",       "@newtopic",   "@deltopic",  "@group",
    "@member",     "@newgroup",     "@emptygroup", "@unknowntopic", "@unknowngroup",
    "@longgroup",  "@len249",       "@len250",
};

const char *diff_tok_name(int tok)
{
    return tok >= 0 && tok < DIFF_TOK_N ? diff_toks[tok] : NULL;
}

/* "diff-place" then the token: no broker makes such an id (version 4
 * random uuids have other bits there), and it prints as what it is. */
proto_uuid_t diff_tok_uuid(int tok)
{
    proto_uuid_t u = {{'d', 'i', 'f', 'f', '-', 'p', 'l', 'a', 'c', 'e', 0, 0, 0, 0, 0, 0}};
    u.b[15] = (uint8_t)(tok + 1);
    return u;
}

int diff_uuid_tok(const proto_uuid_t *u)
{
    proto_uuid_t p = diff_tok_uuid(0);
    if (memcmp(u->b, p.b, 15) != 0 || u->b[15] == 0 || u->b[15] > DIFF_TOK_N)
        return -1;
    return u->b[15] - 1;
}

/* ---- walking the strings and uuids of a message ---- */

typedef void (*diff_visit_fn)(void *ctx, uint8_t type, void *p);

static void diff_walk(const proto_struct_t *st, void *m, diff_visit_fn fn, void *ctx);

static void diff_walk_value(const proto_field_t *f, void *p, diff_visit_fn fn, void *ctx)
{
    if (f->type == PROTO_T_STRUCT)
        diff_walk(f->sub, p, fn, ctx);
    else if (f->type == PROTO_T_STRING || f->type == PROTO_T_UUID || f->type == PROTO_T_INT32)
        fn(ctx, f->type, p);
}

static void diff_walk(const proto_struct_t *st, void *m, diff_visit_fn fn, void *ctx)
{
    for (uint16_t i = 0; i < st->nfields; i++) {
        const proto_field_t *f = &st->fields[i];
        char *p = (char *)m + f->off;
        if (!f->array) {
            diff_walk_value(f, p, fn, ctx);
            continue;
        }
        proto_array_t *a = (proto_array_t *)p;
        for (int32_t k = 0; k < a->n; k++)
            diff_walk_value(f, (char *)a->v + (size_t)k * f->elem_size, fn, ctx);
    }
}

static int diff_str_tok(const proto_str_t *s)
{
    if (s->len < 2 || s->p[0] != '@')
        return -1;
    for (int t = 0; t < DIFF_TOK_N; t++)
        if ((size_t)s->len == strlen(diff_toks[t]) && !memcmp(s->p, diff_toks[t], (size_t)s->len))
            return t;
    return -1;
}

/* The token a string, uuid or int32 stands for, or -1. */
static int diff_value_tok(uint8_t type, const void *p)
{
    if (type == PROTO_T_INT32)
        return *(const int32_t *)p == DIFF_GEN_MAGIC ? DIFF_TOK_GROUP : -1;
    return type == PROTO_T_STRING ? diff_str_tok(p) : diff_uuid_tok(p);
}

static void diff_visit_uses(void *ctx, uint8_t type, void *p)
{
    uint32_t *uses = ctx;
    int t = diff_value_tok(type, p);
    if (t >= 0)
        *uses |= 1u << t;
}

uint32_t diff_fix_uses(const proto_msg_t *msg, void *m)
{
    uint32_t uses = 0;
    diff_walk(msg->st, m, diff_visit_uses, &uses);
    if (uses & (1u << DIFF_TOK_MEMBER))
        uses |= 1u << DIFF_TOK_GROUP;
    return uses;
}

static void diff_visit_apply(void *ctx, uint8_t type, void *p)
{
    const diff_fix_t *fix = ctx;
    if (type == PROTO_T_INT32) {
        if (*(int32_t *)p == DIFF_GEN_MAGIC)
            *(int32_t *)p = fix->generation;
        return;
    }
    if (type == PROTO_T_STRING) {
        int t = diff_str_tok(p);
        if (t >= 0)
            *(proto_str_t *)p = (proto_str_t){fix->name[t], (int32_t)strlen(fix->name[t])};
        return;
    }
    int t = diff_uuid_tok(p);
    if (t >= 0)
        *(proto_uuid_t *)p = fix->id[t];
}

void diff_fix_apply(const diff_fix_t *fix, const proto_msg_t *msg, void *m)
{
    diff_walk(msg->st, m, diff_visit_apply, (void *)fix);
}

static void diff_visit_unapply(void *ctx, uint8_t type, void *p)
{
    static const proto_uuid_t zero;
    const diff_fix_t *fix = ctx;
    if (type == PROTO_T_INT32)
        return;
    for (int t = 0; t < DIFF_TOK_N; t++) {
        if (type == PROTO_T_STRING) {
            proto_str_t *s = p;
            size_t n = strlen(fix->name[t]);
            if (n && s->len == (int32_t)n && !memcmp(s->p, fix->name[t], n)) {
                *s = (proto_str_t){diff_toks[t], (int32_t)strlen(diff_toks[t])};
                return;
            }
        } else if (memcmp(&fix->id[t], &zero, sizeof(zero)) &&
                   !memcmp(p, &fix->id[t], sizeof(zero))) {
            *(proto_uuid_t *)p = diff_tok_uuid(t);
            return;
        }
    }
}

void diff_fix_unapply(const diff_fix_t *fix, const proto_msg_t *msg, void *m)
{
    diff_walk(msg->st, m, diff_visit_unapply, (void *)fix);
}

/* ---- the shared fixtures ---- */

/* keep: retention off, so that the fixtures' records (timestamps of
 * 2023, the same on every run) are not deleted while the run goes on. */
static int diff_create_topic(diff_broker_t *b, const char *name, int32_t parts, int keep,
                             proto_uuid_t *id)
{
    proto_create_topics_req_t req;
    proto_create_topics_req_creatable_topic_t t;
    proto_create_topics_req_creatable_topic_config_t cfg;
    proto_create_topics_resp_t resp;
    proto_create_topics_req_init(&req);
    proto_create_topics_req_creatable_topic_init(&t);
    proto_create_topics_req_creatable_topic_config_init(&cfg);
    t.name = (proto_str_t){name, (int32_t)strlen(name)};
    t.num_partitions = parts;
    t.replication_factor = 1;
    cfg.name = PROTO_STR("retention.ms");
    cfg.value = PROTO_STR("-1");
    t.configs = (typeof(t.configs)){keep ? 1 : 0, &cfg};
    req.topics.n = 1;
    req.topics.v = &t;
    req.timeout_ms = 30000;
    if (diff_broker_call(b, PROTO_API_CREATE_TOPICS, 7, &req, &resp) < 0 || resp.topics.n != 1)
        return -1;
    int16_t err = resp.topics.v[0].error_code;
    if (err && err != KERR_TOPIC_ALREADY_EXISTS) {
        tl_log("%s: creating %s: %s", b->label, name, kerr_name(err));
        return -1;
    }
    if (id)
        *id = resp.topics.v[0].topic_id;
    return 0;
}

/* 1 when Metadata shows the topic with a leader for every partition. */
static int diff_topic_ready(diff_broker_t *b, const char *name, proto_uuid_t *id)
{
    proto_metadata_req_t req;
    proto_metadata_req_metadata_request_topic_t t;
    proto_metadata_resp_t resp;
    proto_metadata_req_init(&req);
    proto_metadata_req_metadata_request_topic_init(&t);
    t.name = (proto_str_t){name, (int32_t)strlen(name)};
    req.topics.n = 1;
    req.topics.v = &t;
    req.allow_auto_topic_creation = false;
    if (diff_broker_call(b, PROTO_API_METADATA, 12, &req, &resp) < 0 || resp.topics.n != 1 ||
        resp.topics.v[0].error_code || resp.topics.v[0].partitions.n == 0)
        return 0;
    for (int i = 0; i < resp.topics.v[0].partitions.n; i++)
        if (resp.topics.v[0].partitions.v[i].leader_id < 0)
            return 0;
    *id = resp.topics.v[0].topic_id;
    return 1;
}

static int diff_wait_topic(diff_broker_t *b, const char *name, proto_uuid_t *id)
{
    double deadline = tl_now() + 60;
    while (!diff_topic_ready(b, name, id)) {
        if (tl_now() > deadline) {
            tl_log("%s: %s has no leaders after 60 s", b->label, name);
            return -1;
        }
        usleep(100 * 1000);
    }
    return 0;
}

/* Four records in each partition of diff-a: two produce requests of a
 * batch of two records per partition, the same bytes on both brokers. */
static int diff_fill_topic(diff_broker_t *b)
{
    for (int round = 0; round < 2; round++) {
        proto_produce_req_t req;
        proto_produce_req_topic_produce_data_t t;
        proto_produce_req_partition_produce_data_t p[3];
        proto_produce_resp_t resp;
        buf_t batch[3];
        proto_produce_req_init(&req);
        proto_produce_req_topic_produce_data_init(&t);
        req.acks = -1;
        req.timeout_ms = 30000;
        t.name = PROTO_STR("diff-a");
        for (int i = 0; i < 3; i++) {
            proto_produce_req_partition_produce_data_init(&p[i]);
            buf_init(&batch[i]);
            diff_gen_batch(&batch[i], round * 3 + i);
            p[i].index = i;
            p[i].records = (proto_records_t){batch[i].p, (int32_t)batch[i].len, -1, 0};
        }
        t.partition_data.n = 3;
        t.partition_data.v = p;
        req.topic_data.n = 1;
        req.topic_data.v = &t;
        int rc = diff_broker_call(b, PROTO_API_PRODUCE, 8, &req, &resp);
        for (int i = 0; i < 3; i++)
            buf_free(&batch[i]);
        if (rc < 0 || resp.responses.n != 1 || resp.responses.v[0].partition_responses.n != 3)
            return -1;
        for (int i = 0; i < 3; i++)
            if (resp.responses.v[0].partition_responses.v[i].error_code)
                return -1;
    }
    return 0;
}

static int diff_commit(diff_broker_t *b, const char *group)
{
    proto_offset_commit_req_t req;
    proto_offset_commit_req_offset_commit_request_topic_t t;
    proto_offset_commit_req_offset_commit_request_partition_t p;
    proto_offset_commit_resp_t resp;
    proto_offset_commit_req_init(&req);
    proto_offset_commit_req_offset_commit_request_topic_init(&t);
    proto_offset_commit_req_offset_commit_request_partition_init(&p);
    req.group_id = (proto_str_t){group, (int32_t)strlen(group)};
    p.committed_offset = 1;
    p.committed_metadata = PROTO_STR("m");
    t.name = PROTO_STR("diff-a");
    t.partitions = (typeof(t.partitions)){1, &p};
    req.topics = (typeof(req.topics)){1, &t};
    if (diff_broker_call(b, PROTO_API_OFFSET_COMMIT, 7, &req, &resp) < 0 || resp.topics.n != 1 ||
        resp.topics.v[0].partitions.n != 1)
        return -1;
    return resp.topics.v[0].partitions.v[0].error_code;
}

/* The group coordinator answers at once from now on: Kafka makes
 * __consumer_offsets on the first FindCoordinator and loads it. */
static int diff_warm_groups(diff_broker_t *b)
{
    double deadline = tl_now() + 60;
    int rc;
    while ((rc = diff_commit(b, "diff-warm")) != 0) {
        if (rc < 0 || tl_now() > deadline) {
            tl_log("%s: the group coordinator is not ready after 60 s", b->label);
            return -1;
        }
        usleep(200 * 1000);
    }
    return 0;
}

static int diff_find_coordinator(diff_broker_t *b, const char *group)
{
    proto_find_coordinator_req_t req;
    proto_find_coordinator_resp_t resp;
    proto_find_coordinator_req_init(&req);
    req.key = (proto_str_t){group, (int32_t)strlen(group)};
    if (diff_broker_call(b, PROTO_API_FIND_COORDINATOR, 3, &req, &resp) < 0)
        return -1;
    return resp.error_code;
}

/* Kafka allocates producer ids in blocks from its controller: the first
 * InitProducerId after start-up may answer COORDINATOR_LOAD_IN_PROGRESS. */
static int diff_warm_producer_ids(diff_broker_t *b)
{
    double deadline = tl_now() + 60;
    for (;;) {
        proto_init_producer_id_req_t req;
        proto_init_producer_id_resp_t resp;
        proto_init_producer_id_req_init(&req);
        req.transactional_id = PROTO_STR_NULL;
        req.transaction_timeout_ms = 60000;
        if (diff_broker_call(b, PROTO_API_INIT_PRODUCER_ID, 2, &req, &resp) < 0)
            return -1;
        if (resp.error_code == 0)
            return 0;
        if (tl_now() > deadline) {
            tl_log("%s: InitProducerId still %s after 60 s", b->label, kerr_name(resp.error_code));
            return -1;
        }
        usleep(200 * 1000);
    }
}

int diff_fix_setup(diff_broker_t *b)
{
    double deadline = tl_now() + 60;
    if (diff_broker_versions(b) < 0 || diff_create_topic(b, "diff-a", 3, 1, NULL) < 0 ||
        diff_create_topic(b, "diff-b", 1, 1, NULL) < 0 ||
        diff_wait_topic(b, "diff-a", &b->topic_id[0]) < 0 ||
        diff_wait_topic(b, "diff-b", &b->topic_id[1]) < 0 || diff_fill_topic(b) < 0)
        return -1;
    while (diff_find_coordinator(b, "diff-warm") != 0) {
        if (tl_now() > deadline)
            return -1;
        usleep(200 * 1000);
    }
    return diff_warm_groups(b) < 0 ? -1 : diff_warm_producer_ids(b);
}

/* ---- the fixtures of one case ---- */

static int diff_join(diff_broker_t *b, const char *group, const char *member,
                     proto_join_group_resp_t *resp)
{
    proto_join_group_req_t req;
    proto_join_group_req_join_group_request_protocol_t pr;
    buf_t sub;
    buf_init(&sub);
    diff_gen_subscription(&sub);
    proto_join_group_req_init(&req);
    proto_join_group_req_join_group_request_protocol_init(&pr);
    req.group_id = (proto_str_t){group, (int32_t)strlen(group)};
    req.member_id = (proto_str_t){member, (int32_t)strlen(member)};
    req.session_timeout_ms = 45000;
    req.rebalance_timeout_ms = 30000;
    req.protocol_type = PROTO_STR("consumer");
    pr.name = PROTO_STR("range");
    pr.metadata = (proto_bytes_t){sub.p, (int32_t)sub.len};
    req.protocols = (typeof(req.protocols)){1, &pr};
    int rc = diff_broker_call(b, PROTO_API_JOIN_GROUP, 5, &req, resp);
    buf_free(&sub);
    return rc;
}

/* A stable group of one member: join (the member id comes back with
 * MEMBER_ID_REQUIRED), join again with it, and sync as the leader. */
static int diff_make_group(diff_broker_t *b)
{
    diff_fix_t *fix = &b->fix;
    proto_join_group_resp_t jr;
    if (diff_join(b, fix->name[DIFF_TOK_GROUP], "", &jr) < 0 || jr.member_id.len <= 0 ||
        jr.member_id.len >= DIFF_NAME_MAX)
        return -1;
    snprintf(fix->name[DIFF_TOK_MEMBER], DIFF_NAME_MAX, "%.*s", (int)jr.member_id.len,
             jr.member_id.p);
    if (diff_join(b, fix->name[DIFF_TOK_GROUP], fix->name[DIFF_TOK_MEMBER], &jr) < 0 ||
        jr.error_code)
        return -1;
    fix->generation = jr.generation_id;

    proto_sync_group_req_t req;
    proto_sync_group_req_sync_group_request_assignment_t as;
    proto_sync_group_resp_t sr;
    buf_t asg;
    buf_init(&asg);
    diff_gen_assignment(&asg);
    proto_sync_group_req_init(&req);
    proto_sync_group_req_sync_group_request_assignment_init(&as);
    req.group_id = (proto_str_t){fix->name[DIFF_TOK_GROUP], (int32_t)strlen(fix->name[DIFF_TOK_GROUP])};
    req.generation_id = fix->generation;
    req.member_id = jr.member_id;
    as.member_id = jr.member_id;
    as.assignment = (proto_bytes_t){asg.p, (int32_t)asg.len};
    req.assignments = (typeof(req.assignments)){1, &as};
    int rc = diff_broker_call(b, PROTO_API_SYNC_GROUP, 3, &req, &sr);
    buf_free(&asg);
    return rc < 0 || sr.error_code ? -1 : 0;
}

/* name padded with c to len characters. */
static void diff_pad(char *name, size_t len, char c)
{
    size_t n = strlen(name);
    if (n < len) {
        memset(name + n, c, len - n);
        name[len] = 0;
    }
}

static void diff_fix_names(diff_broker_t *b, int id)
{
    static const char *const fmt[DIFF_TOK_N] = {
        "diff-a",    "diff-b",    "diff-c%d",  "diff-d%d",  "diff-g%d",  "",          "diff-n%d",
        "diff-e%d",  "diff-u%d",  "diff-v%d",  "diff-w%d-", "diff-x%d-", "diff-y%d-",
    };
    memset(&b->fix, 0, sizeof(b->fix));
    for (int t = 0; t < DIFF_TOK_N; t++)
        snprintf(b->fix.name[t], DIFF_NAME_MAX, fmt[t], id);
    diff_pad(b->fix.name[DIFF_TOK_LONGGROUP], 300, 'w');
    diff_pad(b->fix.name[DIFF_TOK_LEN249], 249, 'x');
    diff_pad(b->fix.name[DIFF_TOK_LEN250], 250, 'y');
    b->fix.id[DIFF_TOK_TOPIC] = b->topic_id[0];
    b->fix.id[DIFF_TOK_TOPIC2] = b->topic_id[1];
    b->fix.generation = -1;
}

int diff_fix_case(diff_broker_t *b, const diff_case_t *c)
{
    diff_fix_names(b, c->id);
    if ((c->uses & (1u << DIFF_TOK_DELTOPIC)) &&
        diff_create_topic(b, b->fix.name[DIFF_TOK_DELTOPIC], 1, 0, &b->fix.id[DIFF_TOK_DELTOPIC]) < 0)
        return -1;
    if ((c->uses & (1u << DIFF_TOK_GROUP)) && diff_make_group(b) < 0)
        return -1;
    if ((c->uses & (1u << DIFF_TOK_EMPTYGROUP)) && diff_commit(b, b->fix.name[DIFF_TOK_EMPTYGROUP]))
        return -1;
    return 0;
}
