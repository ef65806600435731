/* Edge cases: the valid request with one field changed. Every field the
 * version has gets the variants of its type (empty and null arrays and
 * strings, duplicate entries, the limits of integers, zero and unknown
 * uuids, bad records), and some fields get more by what they mean: names
 * of 249 and 250 characters and invalid names where a topic goes, an
 * unknown partition, Kafka's special values of an enum-like field. A
 * case is named after the field's path and the variant
 * ("TopicData[0].Name=len250"), the same at every version, so that the
 * report groups a difference over the versions that show it. */
#include "diff/diff.h"

#include <stdio.h>
#include <string.h>

enum { E_STR, E_INT, E_NULL, E_EMPTY, E_DUP, E_UUID, E_BYTES, E_REC };

typedef struct {
    char name[24];
    uint8_t op;
    int64_t i;         /* E_INT value, E_UUID token (-1 zero, -2 random) */
    const char *s;     /* E_STR value; E_REC kind */
} diff_var_t;

typedef struct {
    diff_corpus_t *cp;
    const proto_msg_t *msg;
    int16_t ver;
    const void *tmpl;
    uint16_t idx[16];
    int depth;
    char path[256];
    diff_var_t v[24];
    int nv;
} diff_edge_t;

/* splitmix64: the corpus's bytes are a function of the seed alone. */
static uint64_t diff_rand(uint64_t *s)
{
    uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

static int diff_in(int16_t v, int16_t lo, int16_t hi)
{
    return v >= lo && v <= hi;
}

static void diff_var(diff_edge_t *e, const char *name, uint8_t op, int64_t i, const char *s)
{
    if (e->nv >= (int)(sizeof(e->v) / sizeof(e->v[0])))
        return;
    for (int k = 0; k < e->nv; k++)
        if (!strcmp(e->v[k].name, name))
            return;
    diff_var_t *v = &e->v[e->nv++];
    snprintf(v->name, sizeof(v->name), "%s", name);
    v->op = op;
    v->i = i;
    v->s = s;
}

/* ---- the variants of a field ---- */

static const char diff_long[] =
    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz"
    "zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz";

static int diff_is(const proto_str_t *s, const char *lit)
{
    return s->len == (int32_t)strlen(lit) && !memcmp(s->p, lit, (size_t)s->len);
}

static void diff_str_vars(diff_edge_t *e, const proto_struct_t *st, const proto_field_t *f,
                          const proto_str_t *cur, int nullable)
{
    if (cur->len < 0) {
        diff_var(e, "empty", E_STR, 0, "");
        diff_var(e, "set", E_STR, 0, "diff-x");
        return;
    }
    if (cur->len > 0)
        diff_var(e, "empty", E_STR, 0, "");
    if (nullable)
        diff_var(e, "null", E_NULL, 0, NULL);
    if (diff_is(cur, "@topic") || diff_is(cur, "@topic2") || diff_is(cur, "@newtopic") ||
        diff_is(cur, "@deltopic")) {
        diff_var(e, "len249", E_STR, 0, "@len249");
        diff_var(e, "len250", E_STR, 0, "@len250");
        diff_var(e, "bad-chars", E_STR, 0, "diff/a b");
        diff_var(e, "dot", E_STR, 0, ".");
        diff_var(e, "dotdot", E_STR, 0, "..");
        diff_var(e, "unknown", E_STR, 0, "@unknowntopic");
        /* Both brokers delete __consumer_offsets when asked: every later
         * group case would be about that. */
        if (e->msg->key != PROTO_API_DELETE_TOPICS)
            diff_var(e, "internal", E_STR, 0, "__consumer_offsets");
    } else if (diff_is(cur, "@group") || diff_is(cur, "@newgroup") || diff_is(cur, "@emptygroup")) {
        diff_var(e, "unknown", E_STR, 0, "@unknowngroup");
        diff_var(e, "long", E_STR, 0, "@longgroup");
    } else if (diff_is(cur, "@member")) {
        diff_var(e, "unknown", E_STR, 0, "diff-nomember");
    } else if (strstr(st->name, "Config") && !strcmp(f->name, "Name")) {
        diff_var(e, "unknown", E_STR, 0, "diff.no.such.config");
    } else if (strstr(st->name, "Config") && !strcmp(f->name, "Value")) {
        diff_var(e, "bad", E_STR, 0, "not-a-number");
    } else if (strstr(f->name, "ClientSoftware")) {
        diff_var(e, "bad", E_STR, 0, "-bad name!");
    } else {
        diff_var(e, "long", E_STR, 0, diff_long);
    }
}

static void diff_int_limits(diff_edge_t *e, uint8_t type)
{
    static const struct {
        uint8_t type;
        int64_t lo, hi;
    } lim[] = {
        {PROTO_T_INT8, INT8_MIN, INT8_MAX},
        {PROTO_T_INT16, INT16_MIN, INT16_MAX},
        {PROTO_T_UINT16, 0, UINT16_MAX},
        {PROTO_T_INT32, INT32_MIN, INT32_MAX},
        {PROTO_T_UINT32, 0, UINT32_MAX},
        {PROTO_T_INT64, INT64_MIN, INT64_MAX},
    };
    for (size_t i = 0; i < sizeof(lim) / sizeof(lim[0]); i++)
        if (lim[i].type == type) {
            diff_var(e, "min", E_INT, lim[i].lo, NULL);
            diff_var(e, "max", E_INT, lim[i].hi, NULL);
        }
}

/* Values with a meaning in Kafka, by field name (and API). */
static void diff_int_extras(diff_edge_t *e, const proto_field_t *f)
{
    static const struct {
        int16_t key;
        const char *field;
        int64_t v[4];
        int n;
    } ex[] = {
        {-1, "Acks", {0, 1, 2}, 3},
        {-1, "ResourceType", {4, 8, 99}, 3},
        {-1, "ConfigOperation", {1, 2, 3}, 3},
        {-1, "IsolationLevel", {1, 2}, 2},
        {-1, "KeyType", {1, 2}, 2},
        {2, "Timestamp", {-2, -3, -4, -5}, 4},
        {2, "Timestamp", {-6, -7}, 2},
        {-1, "EndpointType", {2}, 1},
        {-1, "PartitionIndex", {99}, 1},
        {-1, "Partition", {99}, 1},
        {-1, "Index", {99}, 1},
        {-1, "Partitions", {99}, 1},
        {-1, "PartitionIndexes", {99}, 1},
        {-1, "ReplicationFactor", {2}, 1},
        {-1, "Count", {1}, 1},
        {-1, "CurrentLeaderEpoch", {0, 5}, 2},
        {-1, "LeaderEpoch", {5}, 1},
        {-1, "FetchOffset", {99}, 1},
        {-1, "SessionTimeoutMs", {1}, 1},
        {-1, "GenerationId", {99}, 1},
        {-1, "ReplicaId", {1, -2}, 2},
    };
    char name[24];
    for (size_t i = 0; i < sizeof(ex) / sizeof(ex[0]); i++) {
        if (strcmp(ex[i].field, f->name) || (ex[i].key >= 0 && ex[i].key != e->msg->key))
            continue;
        for (int k = 0; k < ex[i].n; k++) {
            snprintf(name, sizeof(name), "%lld", (long long)ex[i].v[k]);
            diff_var(e, name, E_INT, ex[i].v[k], NULL);
        }
    }
}

static void diff_int_vars(diff_edge_t *e, const proto_field_t *f, const void *p)
{
    if (f->type == PROTO_T_BOOL) {
        diff_var(e, proto_int_load(f->type, p) ? "false" : "true", E_INT,
                 !proto_int_load(f->type, p), NULL);
        return;
    }
    diff_int_limits(e, f->type);
    if (f->type != PROTO_T_UINT16 && f->type != PROTO_T_UINT32)
        diff_var(e, "-1", E_INT, -1, NULL);
    diff_var(e, "0", E_INT, 0, NULL);
    diff_int_extras(e, f);
    /* An IncrementalAlterConfigs operation Kafka does not know (not 0-3)
     * makes Kafka 4.4's quorum controller fail (a NullPointerException)
     * and resign, which stalls every controller request for seconds: that
     * case would test Kafka's recovery, and the cases after it would
     * differ by timing. */
    if (!strcmp(f->name, "ConfigOperation"))
        for (int k = 0; k < e->nv; k++)
            if (e->v[k].op == E_INT && (e->v[k].i < 0 || e->v[k].i > 3))
                e->v[k--] = e->v[--e->nv];
    /* The valid value itself is no variant. */
    int64_t cur = proto_int_load(f->type, p);
    for (int k = 0; k < e->nv; k++)
        if (e->v[k].op == E_INT && e->v[k].i == cur)
            e->v[k--] = e->v[--e->nv];
}

static void diff_value_vars(diff_edge_t *e, const proto_struct_t *st, const proto_field_t *f,
                            const void *p, int nullable)
{
    switch (f->type) {
    case PROTO_T_STRING:
        diff_str_vars(e, st, f, p, nullable);
        break;
    case PROTO_T_UUID: {
        static const proto_uuid_t zero;
        int t = diff_uuid_tok(p);
        if (memcmp(p, &zero, sizeof(zero)))
            diff_var(e, "zero", E_UUID, -1, NULL);
        diff_var(e, "unknown", E_UUID, -2, NULL);
        /* A zero id made known: the case's own topic, so that a delete by
         * id takes nothing another case needs. */
        if (t == DIFF_TOK_TOPIC)
            diff_var(e, "other", E_UUID, DIFF_TOK_TOPIC2, NULL);
        else if (t < 0)
            diff_var(e, "known", E_UUID, DIFF_TOK_DELTOPIC, NULL);
        break;
    }
    case PROTO_T_BYTES:
        diff_var(e, "empty", E_BYTES, 0, NULL);
        if (nullable)
            diff_var(e, "null", E_NULL, 0, NULL);
        diff_var(e, "garbage", E_BYTES, 1, NULL);
        break;
    case PROTO_T_RECORDS:
        if (nullable)
            diff_var(e, "null", E_NULL, 0, NULL);
        diff_var(e, "empty", E_REC, 0, "empty");
        diff_var(e, "garbage", E_REC, 0, "garbage");
        diff_var(e, "bad-crc", E_REC, 0, "bad-crc");
        diff_var(e, "magic1", E_REC, 0, "magic1");
        diff_var(e, "two-batches", E_REC, 0, "two-batches");
        break;
    case PROTO_T_STRUCT:
        break;
    default:
        diff_int_vars(e, f, p);
    }
}

static void diff_array_vars(diff_edge_t *e, const proto_field_t *f, const proto_array_t *a,
                            int nullable)
{
    if (a->n != 0)
        diff_var(e, "empty", E_EMPTY, 0, NULL);
    if (nullable && a->n >= 0)
        diff_var(e, "null", E_NULL, 0, NULL);
    if (a->n == 1)
        diff_var(e, "dup", E_DUP, 0, NULL);
}

/* ---- applying a variant to a copy of the template ---- */

/* The field at e's path in m, and the struct holding it. */
static void *diff_locate(const diff_edge_t *e, void *m, const proto_field_t **fout)
{
    const proto_struct_t *st = e->msg->st;
    for (int i = 0;; i++) {
        const proto_field_t *f = &st->fields[e->idx[i]];
        char *p = (char *)m + f->off;
        if (i == e->depth - 1) {
            *fout = f;
            return p;
        }
        m = f->array ? ((proto_array_t *)p)->v : p;
        st = f->sub;
    }
}

static void diff_rand_bytes(diff_corpus_t *cp, uint64_t *rng, size_t n, const uint8_t **p,
                            int32_t *len)
{
    uint8_t *q = arena_alloc(&cp->arena, n + 1);
    for (size_t i = 0; i < n; i++)
        q[i] = (uint8_t)diff_rand(rng);
    *p = q;
    *len = (int32_t)n;
}

static void diff_set_records(diff_corpus_t *cp, uint64_t *rng, const char *kind,
                             proto_records_t *r)
{
    buf_t b;
    r->fd = -1;
    if (!strcmp(kind, "empty")) {
        r->len = 0;
        return;
    }
    if (!strcmp(kind, "garbage")) {
        diff_rand_bytes(cp, rng, 16, &r->p, &r->len);
        return;
    }
    buf_init(&b);
    diff_gen_batch(&b, 11);
    if (!strcmp(kind, "two-batches"))
        diff_gen_batch(&b, 12);
    else if (!strcmp(kind, "bad-crc"))
        b.p[b.len - 1] ^= 0x55;
    else if (!strcmp(kind, "magic1"))
        b.p[16] = 1;
    uint8_t *q = arena_alloc(&cp->arena, b.len + 1);
    memcpy(q, b.p, b.len);
    r->p = q;
    r->len = (int32_t)b.len;
    buf_free(&b);
}

static void diff_set_null(const proto_field_t *f, void *p)
{
    if (f->array)
        ((proto_array_t *)p)->n = -1;
    else if (f->type == PROTO_T_STRING)
        ((proto_str_t *)p)->len = -1;
    else if (f->type == PROTO_T_BYTES)
        ((proto_bytes_t *)p)->len = -1;
    else if (f->type == PROTO_T_RECORDS)
        ((proto_records_t *)p)->len = -1;
}

static void diff_dup(diff_corpus_t *cp, const proto_field_t *f, proto_array_t *a)
{
    char *v = arena_alloc(&cp->arena, 2 * f->elem_size);
    memcpy(v, a->v, f->elem_size);
    memcpy(v + f->elem_size, a->v, f->elem_size);
    a->v = v;
    a->n = 2;
}

static void diff_store(uint8_t type, void *p, int64_t v)
{
    switch (type) {
    case PROTO_T_BOOL: *(bool *)p = v != 0; break;
    case PROTO_T_INT8: *(int8_t *)p = (int8_t)v; break;
    case PROTO_T_INT16: *(int16_t *)p = (int16_t)v; break;
    case PROTO_T_UINT16: *(uint16_t *)p = (uint16_t)v; break;
    case PROTO_T_INT32: *(int32_t *)p = (int32_t)v; break;
    case PROTO_T_UINT32: *(uint32_t *)p = (uint32_t)v; break;
    case PROTO_T_INT64: *(int64_t *)p = v; break;
    default: break;
    }
}

static void diff_apply(diff_corpus_t *cp, uint64_t *rng, const diff_var_t *v,
                       const proto_field_t *f, void *p)
{
    switch (v->op) {
    case E_STR: *(proto_str_t *)p = (proto_str_t){v->s, (int32_t)strlen(v->s)}; break;
    case E_INT: diff_store(f->type, p, v->i); break;
    case E_NULL: diff_set_null(f, p); break;
    case E_EMPTY: ((proto_array_t *)p)->n = 0; break;
    case E_DUP: diff_dup(cp, f, p); break;
    case E_UUID: {
        proto_uuid_t *u = p;
        if (v->i == -1)
            memset(u, 0, sizeof(*u));
        else if (v->i == -2)
            for (int k = 0; k < 16; k++)
                u->b[k] = (uint8_t)diff_rand(rng);
        else
            *u = diff_tok_uuid((int)v->i);
        break;
    }
    case E_BYTES: {
        proto_bytes_t *b = p;
        if (v->i)
            diff_rand_bytes(cp, rng, 8, &b->p, &b->len);
        else
            b->len = 0;
        break;
    }
    case E_REC: diff_set_records(cp, rng, v->s, p); break;
    }
}

/* One case per collected variant; elem: the variant is of element 0 of
 * the primitive array at the path. */
static void diff_emit(diff_edge_t *e, int elem)
{
    for (int k = 0; k < e->nv; k++) {
        const proto_field_t *f;
        void *m = diff_copy(e->msg, e->tmpl, e->ver, &e->cp->arena);
        char name[160];
        if (!m)
            continue;
        void *p = diff_locate(e, m, &f);
        if (elem)
            p = ((proto_array_t *)p)->v;
        uint64_t rng = e->cp->seed ^ ((uint64_t)e->cp->n << 20);
        diff_apply(e->cp, &rng, &e->v[k], elem ? &(proto_field_t){.type = f->type} : f, p);
        snprintf(name, sizeof(name), "%.120s%s=%s", e->path, elem ? "[0]" : "", e->v[k].name);
        diff_case_t *c = diff_corpus_add(e->cp, e->msg->key, e->ver, name);
        c->msg = e->msg;
        c->req = m;
        c->uses = diff_fix_uses(e->msg, m);
    }
    e->nv = 0;
}

static void diff_edge_struct(diff_edge_t *e, const proto_struct_t *st, const void *m);

static void diff_edge_field(diff_edge_t *e, const proto_struct_t *st, const proto_field_t *f,
                            const void *p)
{
    int nullable = diff_in(e->ver, f->nmin, f->nmax);
    if (!f->array && f->type == PROTO_T_STRUCT) {
        diff_edge_struct(e, f->sub, p);
        return;
    }
    if (!f->array) {
        diff_value_vars(e, st, f, p, nullable);
        diff_emit(e, 0);
        return;
    }
    const proto_array_t *a = p;
    diff_array_vars(e, f, a, nullable);
    diff_emit(e, 0);
    if (a->n <= 0)
        return;
    if (f->type == PROTO_T_STRUCT) {
        size_t plen = strlen(e->path);
        snprintf(e->path + plen, sizeof(e->path) - plen, "[0]");
        diff_edge_struct(e, f->sub, a->v);
        e->path[plen] = 0;
        return;
    }
    diff_value_vars(e, st, f, a->v, 0);
    diff_emit(e, 1);
}

static void diff_edge_struct(diff_edge_t *e, const proto_struct_t *st, const void *m)
{
    for (uint16_t i = 0; i < st->nfields && e->depth < 16; i++) {
        const proto_field_t *f = &st->fields[i];
        if (!diff_in(e->ver, f->vmin, f->vmax))
            continue;
        size_t plen = strlen(e->path);
        snprintf(e->path + plen, sizeof(e->path) - plen, "%s%s", plen ? "." : "", f->name);
        e->idx[e->depth++] = i;
        diff_edge_field(e, st, f, (const char *)m + f->off);
        e->depth--;
        e->path[plen] = 0;
    }
}

void diff_edge_add(diff_corpus_t *cp, const proto_msg_t *msg, int16_t ver, const void *tmpl)
{
    diff_edge_t e;
    memset(&e, 0, sizeof(e));
    e.cp = cp;
    e.msg = msg;
    e.ver = ver;
    e.tmpl = tmpl;
    diff_edge_struct(&e, msg->st, tmpl);
}
