/* Valid requests, from the descriptor tables: every field starts at its
 * default, arrays get one element, and a table of rules by API, struct
 * and field name gives the values that make the request valid and about
 * the fixtures (diff_fix.c): a topic that exists, a partition it has, a
 * group of the case's own, a timeout that does not make the run wait.
 * A new API or version needs no code here unless its defaults are not a
 * valid request; a field no rule names keeps its default. */
#include "diff/diff.h"

#include <stdio.h>
#include <string.h>

#include "log/log_batch.h"

enum { R_STR, R_INT, R_UUID, R_COUNT, R_BYTES, R_BATCH, R_NULL };

typedef struct {
    int16_t key;       /* -1: every API */
    const char *st;    /* a part of the struct's name; NULL: any */
    const char *field; /* the field's name */
    uint8_t kind;
    int64_t i; /* R_INT value, R_COUNT count, R_UUID token (-1: zero) */
    const char *s; /* R_STR value, R_BYTES "subscription" or "assignment" */
} diff_rule_t;

#define S(k, st, f, v) {k, st, f, R_STR, 0, v}
#define I(k, st, f, v) {k, st, f, R_INT, v, NULL}
#define N(k, st, f, v) {k, st, f, R_COUNT, v, NULL}

/* The first matching row wins: config rows first (their structs are
 * named *TopicConfig*), then per API, then for every API. */
static const diff_rule_t diff_rules[] = {
    S(-1, "Config", "Name", "retention.ms"),
    S(-1, "Config", "Value", "86400000"),
    /* Produce, Fetch, ListOffsets, Metadata */
    I(0, NULL, "Acks", -1),
    I(1, NULL, "MaxWaitMs", 0),
    I(1, NULL, "MinBytes", 0),
    I(1, NULL, "PartitionMaxBytes", 1 << 20),
    I(1, NULL, "ReplicaId", -1),
    N(1, NULL, "ForgottenTopicsData", 0),
    I(2, NULL, "ReplicaId", -1),
    I(2, NULL, "Timestamp", -1),
    {3, NULL, "TopicId", R_UUID, -1, NULL},
    /* groups */
    S(8, NULL, "GroupId", "@emptygroup"),
    S(8, NULL, "MemberId", ""),
    I(8, NULL, "GenerationIdOrMemberEpoch", -1),
    I(8, NULL, "CommittedOffset", 1),
    S(8, NULL, "CommittedMetadata", "m"),
    S(9, NULL, "GroupId", "@emptygroup"),
    {9, NULL, "MemberId", R_NULL, 0, NULL},
    S(10, NULL, "Key", "@newgroup"),
    S(10, NULL, "CoordinatorKeys", "@newgroup"),
    S(11, NULL, "GroupId", "@newgroup"),
    S(11, NULL, "MemberId", ""),
    {14, NULL, "Assignment", R_BYTES, 0, "assignment"},
    S(15, NULL, "Groups", "@group"),
    N(16, NULL, "StatesFilter", 0),
    N(16, NULL, "TypesFilter", 0),
    S(42, NULL, "GroupsNames", "@emptygroup"),
    S(47, NULL, "GroupId", "@emptygroup"),
    /* admin */
    S(19, "Topic", "Name", "@newtopic"),
    N(19, NULL, "Assignments", 0),
    S(20, NULL, "TopicNames", "@deltopic"),
    S(20, "DeleteTopicState", "Name", "@deltopic"),
    {20, NULL, "TopicId", R_UUID, -1, NULL},
    I(21, NULL, "Offset", 0),
    {22, NULL, "TransactionalId", R_NULL, 0, NULL},
    I(22, NULL, "TransactionTimeoutMs", 60000),
    I(23, NULL, "ReplicaId", -1),
    I(23, NULL, "LeaderEpoch", 0),
    N(32, NULL, "ConfigurationKeys", -1),
    S(33, NULL, "ResourceName", "@topic2"),
    S(37, "Topic", "Name", "@deltopic"),
    I(37, NULL, "Count", 2),
    N(37, NULL, "Assignments", -1),
    S(44, NULL, "ResourceName", "@topic2"),
    /* every API */
    S(-1, NULL, "ResourceName", "@topic"),
    I(-1, NULL, "ResourceType", 2),
    S(-1, "Protocol", "Name", "range"),
    {-1, "Protocol", "Metadata", R_BYTES, 0, "subscription"},
    S(-1, NULL, "ProtocolType", "consumer"),
    S(-1, NULL, "ProtocolName", "range"),
    S(-1, NULL, "Topic", "@topic"),
    S(-1, NULL, "TopicNames", "@topic"),
    S(-1, "Topic", "Name", "@topic"),
    {-1, NULL, "TopicId", R_UUID, DIFF_TOK_TOPIC, NULL},
    I(-1, NULL, "PartitionIndex", 0),
    I(-1, NULL, "Partition", 0),
    I(-1, NULL, "Index", 0),
    I(-1, NULL, "Partitions", 0),
    I(-1, NULL, "PartitionIndexes", 0),
    I(-1, NULL, "BrokerIds", 1),
    I(-1, NULL, "NumPartitions", 1),
    I(-1, NULL, "ReplicationFactor", 1),
    {-1, NULL, "Records", R_BATCH, 0, NULL},
    I(-1, NULL, "TimeoutMs", 10000),
    I(-1, NULL, "SessionTimeoutMs", 45000),
    I(-1, NULL, "RebalanceTimeoutMs", 30000),
    S(-1, NULL, "GroupId", "@group"),
    S(-1, NULL, "MemberId", "@member"),
    I(-1, NULL, "GenerationId", DIFF_GEN_MAGIC),
    S(-1, NULL, "ClientSoftwareName", "strand-diff"),
    S(-1, NULL, "ClientSoftwareVersion", "1.0"),
};

#undef S
#undef I
#undef N

typedef struct {
    diff_corpus_t *cp;
    int16_t key, ver;
} diff_gen_t;

static const diff_rule_t *diff_rule(int16_t key, const char *st, const char *field)
{
    for (size_t i = 0; i < sizeof(diff_rules) / sizeof(diff_rules[0]); i++) {
        const diff_rule_t *r = &diff_rules[i];
        if ((r->key < 0 || r->key == key) && !strcmp(r->field, field) &&
            (!r->st || strstr(st, r->st)))
            return r;
    }
    return NULL;
}

static int diff_in(int16_t v, int16_t lo, int16_t hi)
{
    return v >= lo && v <= hi;
}

void diff_gen_batch(buf_t *out, int n)
{
    log_batch_build_t opt;
    log_record_t recs[2];
    char key[2][16], val[2][32];
    log_batch_build_init(&opt);
    for (int i = 0; i < 2; i++) {
        int kl = snprintf(key[i], sizeof(key[i]), "k%d-%d", n, i);
        int vl = snprintf(val[i], sizeof(val[i]), "value %d of batch %d", i, n);
        memset(&recs[i], 0, sizeof(recs[i]));
        recs[i].timestamp = 1700000000000LL + n * 1000 + i;
        recs[i].key = (const uint8_t *)key[i];
        recs[i].key_len = kl;
        recs[i].value = (const uint8_t *)val[i];
        recs[i].value_len = vl;
    }
    log_batch_build(out, &opt, recs, 2);
}

static void diff_put_str(buf_t *out, const char *s)
{
    buf_put_i16(out, (int16_t)strlen(s));
    buf_put(out, s, strlen(s));
}

void diff_gen_subscription(buf_t *out)
{
    buf_put_i16(out, 0);
    buf_put_i32(out, 1);
    diff_put_str(out, "diff-a");
    buf_put_i32(out, -1);
}

void diff_gen_assignment(buf_t *out)
{
    buf_put_i16(out, 0);
    buf_put_i32(out, 1);
    diff_put_str(out, "diff-a");
    buf_put_i32(out, 1);
    buf_put_i32(out, 0);
    buf_put_i32(out, -1);
}

/* A copy of b's bytes in the corpus arena; frees b. */
static const uint8_t *diff_keep(diff_gen_t *g, buf_t *b, int32_t *len)
{
    uint8_t *p = arena_alloc(&g->cp->arena, b->len + 1);
    if (b->len)
        memcpy(p, b->p, b->len);
    *len = (int32_t)b->len;
    buf_free(b);
    return p;
}

/* A primitive value (or one array element) as the rule says. */
static void diff_gen_prim(diff_gen_t *g, const proto_field_t *f, const diff_rule_t *r, void *p)
{
    buf_t b;
    buf_init(&b);
    switch (r->kind) {
    case R_STR:
        *(proto_str_t *)p = (proto_str_t){r->s, (int32_t)strlen(r->s)};
        break;
    case R_NULL:
        if (f->type == PROTO_T_STRING)
            *(proto_str_t *)p = PROTO_STR_NULL;
        break;
    case R_UUID:
        if (r->i >= 0)
            *(proto_uuid_t *)p = diff_tok_uuid((int)r->i);
        break;
    case R_BYTES: {
        proto_bytes_t *bp = p;
        if (!strcmp(r->s, "subscription"))
            diff_gen_subscription(&b);
        else
            diff_gen_assignment(&b);
        bp->p = diff_keep(g, &b, &bp->len);
        break;
    }
    case R_BATCH: {
        proto_records_t *rp = p;
        diff_gen_batch(&b, 10);
        rp->p = diff_keep(g, &b, &rp->len);
        rp->fd = -1;
        break;
    }
    default:
        proto_int_store(f->type, p, r->i);
    }
    buf_free(&b);
}

static void diff_gen_struct(diff_gen_t *g, const proto_struct_t *st, void *m);

static void diff_gen_array(diff_gen_t *g, const proto_field_t *f, const diff_rule_t *r,
                           proto_array_t *a)
{
    if (r && r->kind == R_COUNT) {
        a->n = r->i < 0 && !diff_in(g->ver, f->nmin, f->nmax) ? 0 : (int32_t)r->i;
        return;
    }
    if (f->type != PROTO_T_STRUCT && !r) {
        a->n = 0;
        return;
    }
    a->n = 1;
    a->v = arena_calloc(&g->cp->arena, 1, f->elem_size);
    if (f->type == PROTO_T_STRUCT)
        diff_gen_struct(g, f->sub, a->v);
    else
        diff_gen_prim(g, f, r, a->v);
}

static void diff_gen_struct(diff_gen_t *g, const proto_struct_t *st, void *m)
{
    proto_struct_init(st, m);
    for (uint16_t i = 0; i < st->nfields; i++) {
        const proto_field_t *f = &st->fields[i];
        void *p = (char *)m + f->off;
        if (!diff_in(g->ver, f->vmin, f->vmax))
            continue;
        const diff_rule_t *r = diff_rule(g->key, st->name, f->name);
        if (f->array)
            diff_gen_array(g, f, r, p);
        else if (f->type == PROTO_T_STRUCT)
            diff_gen_struct(g, f->sub, p);
        else if (r)
            diff_gen_prim(g, f, r, p);
    }
}

void *diff_gen_valid(diff_corpus_t *cp, const proto_msg_t *msg, int16_t ver)
{
    diff_gen_t g = {cp, msg->key, ver};
    void *m = arena_calloc(&cp->arena, 1, msg->st->size);
    diff_gen_struct(&g, msg->st, m);
    return m;
}

void *diff_copy(const proto_msg_t *msg, const void *m, int16_t ver, arena_t *arena)
{
    buf_t b;
    buf_init(&b);
    proto_msg_encode(msg, m, ver, &b);
    uint8_t *bytes = arena_alloc(arena, b.len + 1);
    if (b.len) /* an empty body (ApiVersions v0) has no bytes at all */
        memcpy(bytes, b.p, b.len);
    void *copy = arena_calloc(arena, 1, msg->st->size);
    int rc = proto_msg_decode(msg, copy, ver, bytes, b.len, arena, NULL);
    buf_free(&b);
    return rc < 0 ? NULL : copy;
}
