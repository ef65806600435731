/* Comparing two answers: whether each broker answered, closed or kept
 * silent; then both answers decoded at the version asked and walked
 * together along the descriptor tables, field by field. Arrays whose
 * elements carry a key (a name, a partition index, an API key) are
 * matched by it, so a missing, extra or reordered entry is one
 * difference rather than a cascade; other arrays pair by position.
 *
 * What legitimately differs between two brokers is normalized: a
 * broker's own values were taken out of the answer already
 * (diff_fix_unapply); throttle times and ports are not compared; of
 * messages, hosts, cluster and member ids, producer and session ids,
 * sizes and record bytes only the class is (null, empty or a value;
 * negative, zero or positive); a uuid compares as zero, a placeholder or
 * "some id". Error codes print as Kafka's names. */
#include "diff/diff.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/kerr.h"

enum { C_EXACT, C_IGNORE, C_CLASS };

static const struct {
    const char *field;
    int how;
} diff_norms[] = {
    {"ThrottleTimeMs", C_IGNORE}, {"Port", C_IGNORE},
    {"ErrorMessage", C_CLASS},    {"BatchIndexErrorMessage", C_CLASS},
    {"ClusterId", C_CLASS},       {"Host", C_CLASS},
    {"ClientHost", C_CLASS},      {"LogDir", C_CLASS},
    {"Documentation", C_CLASS},   {"MemberId", C_CLASS},
    {"Leader", C_CLASS},          {"ProducerId", C_CLASS},
    {"SessionId", C_CLASS},       {"FinalizedFeaturesEpoch", C_CLASS},
    {"TotalBytes", C_CLASS},      {"UsableBytes", C_CLASS},
    {"PartitionSize", C_CLASS},   {"Records", C_CLASS},
    /* Offsets move with every produce: after a case one broker took and
     * the other refused, all later ones would differ. */
    {"BaseOffset", C_CLASS},      {"LogStartOffset", C_CLASS},
    {"HighWatermark", C_CLASS},   {"LastStableOffset", C_CLASS},
    {"Offset", C_CLASS},          {"EndOffset", C_CLASS},
    {"LowWatermark", C_CLASS},    {"FirstOffset", C_CLASS},
};

/* Fields that identify an array's element, most telling first. */
static const char *const diff_keys[] = {
    "ApiKey", "Name", "Topic", "TopicId", "ResourceName", "GroupId", "Key",
    "PartitionIndex", "Partition", "Index", "BrokerId", "NodeId", "BatchIndex",
};

typedef struct {
    diff_sink_t *s;
    const diff_case_t *c;
    int16_t ver;
    char path[512];
} diff_cmp_t;

static int diff_in(int16_t v, int16_t lo, int16_t hi)
{
    return v >= lo && v <= hi;
}

static int diff_norm(const char *field)
{
    for (size_t i = 0; i < sizeof(diff_norms) / sizeof(diff_norms[0]); i++)
        if (!strcmp(diff_norms[i].field, field))
            return diff_norms[i].how;
    return C_EXACT;
}

static void diff_emit(diff_cmp_t *x, const char *what)
{
    diff_sink_add(x->s, x->c->key, x->c->ver, x->c->name, x->path[0] ? x->path : ".", what);
}

/* ---- rendering one value (no spaces: the report and allow list split on them) ---- */

static void diff_render_str(char *out, size_t n, const proto_str_t *s, int how)
{
    if (s->len < 0) {
        snprintf(out, n, "null");
    } else if (s->len == 0) {
        snprintf(out, n, "empty");
    } else if (how == C_CLASS) {
        snprintf(out, n, "text");
    } else {
        size_t k = 0, max = n > 48 ? 40 : n - 8;
        out[k++] = '"';
        for (int32_t i = 0; i < s->len && k < max; i++)
            out[k++] = s->p[i] == ' ' || s->p[i] == '\t' || s->p[i] == '\n' ? '_' : s->p[i];
        if ((size_t)s->len > max - 1)
            out[k++] = '~';
        snprintf(out + k, n - k, "\"");
    }
}

static int64_t diff_int(uint8_t type, const void *p)
{
    switch (type) {
    case PROTO_T_BOOL: return *(const bool *)p;
    case PROTO_T_INT8: return *(const int8_t *)p;
    case PROTO_T_INT16: return *(const int16_t *)p;
    case PROTO_T_UINT16: return *(const uint16_t *)p;
    case PROTO_T_INT32: return *(const int32_t *)p;
    case PROTO_T_UINT32: return *(const uint32_t *)p;
    case PROTO_T_INT64: return *(const int64_t *)p;
    default: return 0;
    }
}

static void diff_render_bytes(char *out, size_t n, const uint8_t *p, int32_t len, int how)
{
    uint32_t h = 2166136261u;
    if (len < 0) {
        snprintf(out, n, "null");
        return;
    }
    if (len == 0 || how == C_CLASS) {
        snprintf(out, n, len ? "bytes" : "empty");
        return;
    }
    for (int32_t i = 0; i < len; i++)
        h = (h ^ p[i]) * 16777619u;
    snprintf(out, n, "bytes:%d:%08x", (int)len, (unsigned)h);
}

static void diff_render(char *out, size_t n, const proto_field_t *f, const void *p)
{
    int how = diff_norm(f->name);
    switch (f->type) {
    case PROTO_T_STRING: diff_render_str(out, n, p, how); return;
    case PROTO_T_BYTES: {
        const proto_bytes_t *b = p;
        diff_render_bytes(out, n, b->p, b->len, how);
        return;
    }
    case PROTO_T_RECORDS: {
        const proto_records_t *r = p;
        diff_render_bytes(out, n, r->p, r->len, how);
        return;
    }
    case PROTO_T_UUID: {
        static const proto_uuid_t zero;
        int t = diff_uuid_tok(p);
        snprintf(out, n, "%s", t >= 0 ? diff_tok_name(t) : memcmp(p, &zero, 16) ? "id" : "zero");
        return;
    }
    case PROTO_T_FLOAT64: snprintf(out, n, "%g", *(const double *)p); return;
    case PROTO_T_BOOL: snprintf(out, n, "%s", *(const bool *)p ? "true" : "false"); return;
    }
    int64_t v = diff_int(f->type, p);
    if (f->type == PROTO_T_INT16 && strstr(f->name, "ErrorCode"))
        snprintf(out, n, "%s", kerr_name((int16_t)v));
    else if (how == C_CLASS && v >= 0)
        snprintf(out, n, "%s", v ? "positive" : "0");
    else
        snprintf(out, n, "%lld", (long long)v);
}

/* A primitive array as "[a,b,...]". */
static void diff_render_list(char *out, size_t n, const proto_field_t *f, const proto_array_t *a)
{
    size_t k = 0;
    char one[64];
    if (a->n < 0) {
        snprintf(out, n, "null");
        return;
    }
    k += (size_t)snprintf(out, n, "[");
    for (int32_t i = 0; i < a->n && k + 8 < n; i++) {
        diff_render(one, sizeof(one), f, (const char *)a->v + (size_t)i * f->elem_size);
        k += (size_t)snprintf(out + k, n - k, "%s%s", i ? "," : "", one);
    }
    snprintf(out + k, n - k, "]");
}

/* ---- walking two answers together ---- */

static void diff_cmp_struct(diff_cmp_t *x, const proto_struct_t *st, const void *a, const void *b);

static void diff_push(diff_cmp_t *x, size_t *save, const char *fmt, const char *s)
{
    *save = strlen(x->path);
    snprintf(x->path + *save, sizeof(x->path) - *save, fmt, s);
}

static void diff_cmp_value(diff_cmp_t *x, const proto_field_t *f, const void *a, const void *b)
{
    char ra[96], rb[96], what[200];
    if (f->type == PROTO_T_STRUCT) {
        diff_cmp_struct(x, f->sub, a, b);
        return;
    }
    diff_render(ra, sizeof(ra), f, a);
    diff_render(rb, sizeof(rb), f, b);
    if (strcmp(ra, rb)) {
        snprintf(what, sizeof(what), "%s/%s", ra, rb);
        diff_emit(x, what);
    }
}

/* The key field of an array's elements at this version, or -1. */
static int diff_key_field(const diff_cmp_t *x, const proto_struct_t *st)
{
    for (size_t k = 0; k < sizeof(diff_keys) / sizeof(diff_keys[0]); k++)
        for (uint16_t i = 0; i < st->nfields; i++) {
            const proto_field_t *f = &st->fields[i];
            if (!f->array && !strcmp(f->name, diff_keys[k]) && diff_in(x->ver, f->vmin, f->vmax))
                return i;
        }
    return -1;
}

/* keys[i] = element i's key, "#2" appended to a repeated one. */
static void diff_keys_of(const proto_field_t *f, const proto_array_t *arr, int kf,
                         char (*keys)[48])
{
    const proto_field_t *kd = &f->sub->fields[kf];
    for (int32_t i = 0; i < arr->n; i++) {
        const char *e = (const char *)arr->v + (size_t)i * f->elem_size;
        char one[96];
        int rep = 1;
        diff_render(one, sizeof(one), kd, e + kd->off);
        /* A key in a path needs no quotes. */
        if (one[0] == '"') {
            size_t n = strlen(one);
            memmove(one, one + 1, n);
            if (n > 1 && one[n - 2] == '"')
                one[n - 2] = 0;
        }
        for (int32_t j = 0; j < i; j++)
            if (!strncmp(keys[j], one, strlen(one)) &&
                (keys[j][strlen(one)] == 0 || keys[j][strlen(one)] == '#'))
                rep++;
        if (rep > 1)
            snprintf(keys[i], 48, "%.36s#%d", one, rep);
        else
            snprintf(keys[i], 48, "%.46s", one);
    }
}

/* A fixture of another case ("diff-c123"; a case's own are placeholders
 * by now): listings of every topic or group show them, but when the
 * other case made them is no business of this one (Kafka lists an
 * auto-created topic some milliseconds after Strand does). */
static int diff_foreign(const char *k)
{
    return !strncmp(k, "diff-", 5) && k[5] >= 'c' && k[5] <= 'y' && k[6] >= '0' && k[6] <= '9';
}

static int diff_find(char (*keys)[48], int32_t n, const char *k)
{
    for (int32_t i = 0; i < n; i++)
        if (!strcmp(keys[i], k))
            return i;
    return -1;
}

/* "extra:k1,k2" for keys of a not in b. */
static void diff_list_missing(char *out, size_t n, const char *label, char (*ka)[48],
                              int32_t na, char (*kb)[48], int32_t nb)
{
    size_t k = (size_t)snprintf(out, n, "%s:", label);
    int more = 0, any = 0;
    for (int32_t i = 0; i < na; i++) {
        if (diff_find(kb, nb, ka[i]) >= 0 || diff_foreign(ka[i]))
            continue;
        if (k + strlen(ka[i]) + 8 >= n) {
            more++;
            continue;
        }
        k += (size_t)snprintf(out + k, n - k, "%s%s", any++ ? "," : "", ka[i]);
    }
    if (more)
        snprintf(out + k, n - k, ",+%d", more);
    if (!any && !more)
        out[0] = 0;
}

static void diff_cmp_keyed(diff_cmp_t *x, const proto_field_t *f, const proto_array_t *a,
                           const proto_array_t *b, int kf)
{
    char(*ka)[48] = calloc((size_t)a->n + 1, 48), (*kb)[48] = calloc((size_t)b->n + 1, 48);
    char what[400];
    diff_keys_of(f, a, kf, ka);
    diff_keys_of(f, b, kf, kb);
    diff_list_missing(what, sizeof(what), "extra", ka, a->n, kb, b->n);
    if (what[0])
        diff_emit(x, what);
    diff_list_missing(what, sizeof(what), "missing", kb, b->n, ka, a->n);
    if (what[0])
        diff_emit(x, what);
    int32_t last = -1, ordered = 1;
    for (int32_t i = 0; i < a->n; i++) {
        int32_t j = diff_find(kb, b->n, ka[i]);
        if (j < 0 || diff_foreign(ka[i]))
            continue;
        ordered &= j > last;
        last = j;
        size_t save;
        diff_push(x, &save, "[%s]", ka[i]);
        diff_cmp_struct(x, f->sub, (const char *)a->v + (size_t)i * f->elem_size,
                        (const char *)b->v + (size_t)j * f->elem_size);
        x->path[save] = 0;
    }
    if (!ordered)
        diff_emit(x, "order");
    free(ka);
    free(kb);
}

static void diff_cmp_array(diff_cmp_t *x, const proto_field_t *f, const proto_array_t *a,
                           const proto_array_t *b)
{
    char ra[400], rb[400], what[820];
    if (f->type != PROTO_T_STRUCT) {
        diff_render_list(ra, sizeof(ra), f, a);
        diff_render_list(rb, sizeof(rb), f, b);
        if (strcmp(ra, rb)) {
            snprintf(what, sizeof(what), "%s/%s", ra, rb);
            diff_emit(x, what);
        }
        return;
    }
    if (a->n < 0 || b->n < 0 || (a->n == 0) != (b->n == 0)) {
        if (a->n != b->n) {
            snprintf(what, sizeof(what), "%s/%s", a->n < 0 ? "null" : a->n ? "entries" : "empty",
                     b->n < 0 ? "null" : b->n ? "entries" : "empty");
            diff_emit(x, what);
        }
        return;
    }
    int kf = diff_key_field(x, f->sub);
    if (kf >= 0) {
        diff_cmp_keyed(x, f, a, b, kf);
        return;
    }
    if (a->n != b->n) {
        snprintf(what, sizeof(what), "len=%d/len=%d", (int)a->n, (int)b->n);
        diff_emit(x, what);
    }
    for (int32_t i = 0; i < a->n && i < b->n; i++) {
        size_t save;
        char idx[16];
        snprintf(idx, sizeof(idx), "%d", (int)i);
        diff_push(x, &save, "[%s]", idx);
        diff_cmp_struct(x, f->sub, (const char *)a->v + (size_t)i * f->elem_size,
                        (const char *)b->v + (size_t)i * f->elem_size);
        x->path[save] = 0;
    }
}

static void diff_cmp_struct(diff_cmp_t *x, const proto_struct_t *st, const void *a, const void *b)
{
    for (uint16_t i = 0; i < st->nfields; i++) {
        const proto_field_t *f = &st->fields[i];
        if (!diff_in(x->ver, f->vmin, f->vmax) || diff_norm(f->name) == C_IGNORE)
            continue;
        size_t save;
        diff_push(x, &save, ".%s", f->name);
        const char *pa = (const char *)a + f->off, *pb = (const char *)b + f->off;
        if (f->array)
            diff_cmp_array(x, f, (const proto_array_t *)pa, (const proto_array_t *)pb);
        else
            diff_cmp_value(x, f, pa, pb);
        x->path[save] = 0;
    }
}

/* ---- the answers as a whole ---- */

static const char *diff_outcome_name(int o)
{
    static const char *const names[] = {"answered", "no-answer", "closed", "timeout", "wrong-id"};
    return o >= 0 && o <= DIFF_WRONGID ? names[o] : "?";
}

/* Decodes an answer: the version asked, or v0 for an ApiVersions answer
 * that says UNSUPPORTED_VERSION (Kafka's fallback). 0, -1 undecodable,
 * 1 decodes but leaves bytes over. */
static int diff_decode(const proto_msg_t *rs, int16_t ver, diff_broker_t *br,
                       const diff_answer_t *ans, void *m, int16_t *used_ver)
{
    size_t used = 0;
    *used_ver = ver;
    if (rs->key == PROTO_API_API_VERSIONS && ans->len >= 2 && ans->body[0] == 0 &&
        ans->body[1] == KERR_UNSUPPORTED_VERSION)
        *used_ver = 0;
    if (*used_ver < rs->vmin || *used_ver > rs->vmax ||
        proto_msg_decode(rs, m, *used_ver, ans->body, ans->len, &br->arena, &used) < 0)
        return -1;
    return used == ans->len ? 0 : 1;
}

static void diff_cmp_bodies(diff_cmp_t *x, diff_broker_t *a, const diff_answer_t *aa,
                            diff_broker_t *b, const diff_answer_t *ab)
{
    const proto_msg_t *rs = proto_msg_lookup(x->c->hdr_key, 1);
    char what[64];
    if (!rs) {
        if (aa->len != ab->len || (aa->len && memcmp(aa->body, ab->body, aa->len)))
            diff_emit(x, "bytes/other-bytes");
        return;
    }
    void *ma = arena_calloc(&a->arena, 1, rs->st->size), *mb = arena_calloc(&b->arena, 1, rs->st->size);
    int16_t va, vb;
    int ra = diff_decode(rs, x->c->hdr_ver, a, aa, ma, &va);
    int rb = diff_decode(rs, x->c->hdr_ver, b, ab, mb, &vb);
    if (ra || rb || va != vb) {
        static const char *const st[] = {"undecodable", "decodes", "bytes-left-over"};
        snprintf(what, sizeof(what), "%s-v%d/%s-v%d", st[ra + 1], va, st[rb + 1], vb);
        snprintf(x->path, sizeof(x->path), "(decode)");
        diff_emit(x, what);
        if (ra < 0 || rb < 0 || va != vb)
            return;
        x->path[0] = 0;
    }
    diff_fix_unapply(&a->fix, rs, ma);
    diff_fix_unapply(&b->fix, rs, mb);
    x->ver = va;
    diff_cmp_struct(x, rs->st, ma, mb);
}

void diff_cmp_answers(diff_sink_t *s, const diff_case_t *c, diff_broker_t *a,
                      const diff_answer_t *aa, diff_broker_t *b, const diff_answer_t *ab)
{
    diff_cmp_t x = {s, c, c->hdr_ver, ""};
    char what[64];
    if (aa->outcome != ab->outcome) {
        snprintf(what, sizeof(what), "%s/%s", diff_outcome_name(aa->outcome),
                 diff_outcome_name(ab->outcome));
        snprintf(x.path, sizeof(x.path), "(outcome)");
        diff_emit(&x, what);
        return;
    }
    if (aa->outcome == DIFF_ANSWERED)
        diff_cmp_bodies(&x, a, aa, b, ab);
}
