/* Malformed frames: the valid request of a version, encoded for the
 * broker, then broken on the wire: cut short, with bytes after it, with
 * the first array count or string length lying (too big, negative, an
 * over-long varint), with a tagged section that claims more than there
 * is; a header whose client id lies or is null; a size prefix of 0, -1 or
 * over socket.request.max.bytes. Kafka closes the connection on what it
 * cannot parse; what matters is that both brokers do the same.
 *
 * The positions of the first array count and string length come from a
 * walk of the encoded body along the descriptor tables (the generic
 * decoder's walk, keeping offsets instead of values). */
#include "diff/diff.h"

#include <stdio.h>
#include <string.h>

#include "util/rd.h"

typedef struct {
    size_t off, len; /* where the length is and how many bytes it takes */
    int found;
} diff_spot_t;

typedef struct {
    rd_t rd;
    const uint8_t *base;
    int16_t ver;
    int flex;
    diff_spot_t arr, str;
} diff_scan_t;

static int diff_in(int16_t v, int16_t lo, int16_t hi)
{
    return v >= lo && v <= hi;
}

/* Reads a length (classic int16/int32 or compact uvarint), noting the
 * first one of its kind in spot. */
static int64_t diff_scan_len(diff_scan_t *s, int compact, int wide, diff_spot_t *spot)
{
    size_t at = (size_t)(s->rd.p - s->base);
    int64_t n = compact ? (int64_t)rd_uvarint(&s->rd) - 1
                        : (wide ? rd_i32(&s->rd) : rd_i16(&s->rd));
    if (spot && !spot->found && !s->rd.err) {
        spot->off = at;
        spot->len = (size_t)(s->rd.p - s->base) - at;
        spot->found = 1;
    }
    return n;
}

static void diff_scan_struct(diff_scan_t *s, const proto_struct_t *st);

static void diff_scan_value(diff_scan_t *s, const proto_field_t *f)
{
    static const uint8_t width[] = {
        [PROTO_T_BOOL] = 1, [PROTO_T_INT8] = 1, [PROTO_T_INT16] = 2, [PROTO_T_UINT16] = 2,
        [PROTO_T_INT32] = 4, [PROTO_T_UINT32] = 4, [PROTO_T_INT64] = 8, [PROTO_T_FLOAT64] = 8,
        [PROTO_T_UUID] = 16,
    };
    int compact = s->flex && !f->noflex;
    if (f->type == PROTO_T_STRUCT) {
        diff_scan_struct(s, f->sub);
    } else if (f->type == PROTO_T_STRING || f->type == PROTO_T_BYTES ||
               f->type == PROTO_T_RECORDS) {
        int str = f->type == PROTO_T_STRING;
        int64_t n = diff_scan_len(s, compact, !str, str ? &s->str : NULL);
        if (n > 0)
            rd_take(&s->rd, (size_t)n);
    } else {
        rd_take(&s->rd, width[f->type]);
    }
}

static void diff_scan_field(diff_scan_t *s, const proto_field_t *f)
{
    if (!f->array) {
        diff_scan_value(s, f);
        return;
    }
    int64_t n = diff_scan_len(s, s->flex, 1, &s->arr);
    for (int64_t i = 0; i < n && !s->rd.err; i++)
        diff_scan_value(s, f);
}

static void diff_scan_struct(diff_scan_t *s, const proto_struct_t *st)
{
    for (uint16_t i = 0; i < st->nfields && !s->rd.err; i++) {
        const proto_field_t *f = &st->fields[i];
        if (diff_in(s->ver, f->vmin, f->vmax) && !diff_in(s->ver, f->tmin, f->tmax))
            diff_scan_field(s, f);
    }
    if (!s->flex)
        return;
    uint32_t count = rd_uvarint(&s->rd);
    for (uint32_t i = 0; i < count && !s->rd.err; i++) {
        rd_uvarint(&s->rd);
        rd_take(&s->rd, rd_uvarint(&s->rd));
    }
}

/* Replaces spot's bytes in body with len bytes of p. */
static void diff_splice(buf_t *body, const diff_spot_t *spot, const uint8_t *p, size_t len)
{
    buf_t out;
    buf_init(&out);
    buf_put(&out, body->p, spot->off);
    buf_put(&out, p, len);
    buf_put(&out, body->p + spot->off + spot->len, body->len - spot->off - spot->len);
    buf_free(body);
    *body = out;
}

static void diff_splice_len(buf_t *body, const diff_spot_t *spot, int compact, int width,
                            int64_t n)
{
    buf_t v;
    buf_init(&v);
    if (compact)
        buf_put_uvarint(&v, (uint32_t)(n + 1));
    else if (width == 4)
        buf_put_i32(&v, (int32_t)n);
    else
        buf_put_i16(&v, (int16_t)n);
    diff_splice(body, spot, v.p, v.len);
    buf_free(&v);
}

static int diff_mal_len(int mal, const diff_scan_t *s, buf_t *body)
{
    static const uint8_t overlong[] = {0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01};
    const diff_spot_t *a = &s->arr, *str = &s->str;
    switch (mal) {
    case DIFF_MAL_ARRAY_HUGE:
        if (!a->found)
            return -1;
        diff_splice_len(body, a, s->flex, 4, s->flex ? INT32_MAX - 1 : INT32_MAX);
        return 0;
    case DIFF_MAL_ARRAY_NEG:
        if (!a->found || s->flex)
            return -1;
        diff_splice_len(body, a, 0, 4, -2);
        return 0;
    case DIFF_MAL_STRING_OVER: {
        if (!str->found)
            return -1;
        int64_t n = (int64_t)(body->len - str->off) + 100;
        diff_splice_len(body, str, s->flex, 2, n > INT16_MAX ? INT16_MAX : n);
        return 0;
    }
    case DIFF_MAL_STRING_NEG:
        if (!str->found || s->flex)
            return -1;
        diff_splice_len(body, str, 0, 2, -2);
        return 0;
    case DIFF_MAL_VARINT_LONG: {
        if (!s->flex || (!a->found && !str->found))
            return -1;
        const diff_spot_t *first = !str->found || (a->found && a->off < str->off) ? a : str;
        diff_splice(body, first, overlong, sizeof(overlong));
        return 0;
    }
    }
    return -1;
}

int diff_mal_apply(int mal, const proto_msg_t *msg, int16_t ver, buf_t *body)
{
    static const uint8_t tail[] = {0x01, 0x02, 0x03}, lie[] = {0x01, 0x00, 0x7f};
    diff_scan_t s;
    memset(&s, 0, sizeof(s));
    switch (mal) {
    case DIFF_MAL_TRUNC_HALF:
    case DIFF_MAL_TRUNC_ONE:
        if (body->len < 2)
            return -1;
        body->len = mal == DIFF_MAL_TRUNC_ONE ? body->len - 1 : body->len / 2;
        return 0;
    case DIFF_MAL_TRAILING:
        buf_put(body, tail, sizeof(tail));
        return 0;
    case DIFF_MAL_TAGS_LIE: {
        /* The body ends with its top-level tagged section: count 0. */
        if (msg->flex_min < 0 || ver < msg->flex_min || !body->len || body->p[body->len - 1])
            return -1;
        diff_spot_t end = {body->len - 1, 1, 1};
        diff_splice(body, &end, lie, sizeof(lie));
        return 0;
    }
    }
    rd_init(&s.rd, body->p, body->len);
    s.base = body->p;
    s.ver = ver;
    s.flex = msg->flex_min >= 0 && ver >= msg->flex_min;
    diff_scan_struct(&s, msg->st);
    return diff_mal_len(mal, &s, body);
}

/* ---- the malformed cases of a version, and the cases of no API ---- */

static const struct {
    int mal;
    const char *name;
} diff_mals[] = {
    {DIFF_MAL_TRUNC_HALF, "mal:truncated-half"},
    {DIFF_MAL_TRUNC_ONE, "mal:truncated-one"},
    {DIFF_MAL_TRAILING, "mal:trailing-bytes"},
    {DIFF_MAL_ARRAY_HUGE, "mal:array-count-huge"},
    {DIFF_MAL_ARRAY_NEG, "mal:array-count-negative"},
    {DIFF_MAL_STRING_OVER, "mal:string-length-over"},
    {DIFF_MAL_STRING_NEG, "mal:string-length-negative"},
    {DIFF_MAL_VARINT_LONG, "mal:varint-overlong"},
    {DIFF_MAL_TAGS_LIE, "mal:tagged-field-lies"},
};

void diff_mal_add(diff_corpus_t *cp, const proto_msg_t *msg, int16_t ver, const void *tmpl)
{
    for (size_t i = 0; i < sizeof(diff_mals) / sizeof(diff_mals[0]); i++) {
        /* Only where the mutation has something to change. */
        buf_t b;
        buf_init(&b);
        proto_msg_encode(msg, tmpl, ver, &b);
        int ok = diff_mal_apply(diff_mals[i].mal, msg, ver, &b) == 0;
        buf_free(&b);
        if (!ok)
            continue;
        diff_case_t *c = diff_corpus_add(cp, msg->key, ver, diff_mals[i].name);
        c->msg = msg;
        c->req = (void *)tmpl;
        c->mal = diff_mals[i].mal;
        c->uses = diff_fix_uses(msg, c->req);
    }
}

void diff_corpus_global(diff_corpus_t *cp)
{
    static const int16_t keys[] = {-1, 4, 7, 95, 1000, 32767};
    static const struct {
        int mal;
        const char *name;
    } frames[] = {
        {DIFF_MAL_SIZE_ZERO, "frame:size-zero"},
        {DIFF_MAL_SIZE_NEG, "frame:size-negative"},
        {DIFF_MAL_SIZE_HUGE, "frame:size-over-max"},
    };
    char name[64];
    for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++) {
        snprintf(name, sizeof(name), "unknown-key:%d", keys[i]);
        diff_corpus_add(cp, -1, 0, name)->hdr_key = keys[i];
    }
    for (size_t i = 0; i < sizeof(frames) / sizeof(frames[0]); i++)
        diff_corpus_add(cp, -1, 0, frames[i].name)->mal = frames[i].mal;
}

/* The frame of a case's body as its header and mal say. Returns whether
 * a marker may follow (not after a size prefix that lies). */
int diff_mal_frame(const diff_case_t *c, int32_t corr, const buf_t *body, buf_t *frame)
{
    switch (c->mal) {
    case DIFF_MAL_SIZE_ZERO:
    case DIFF_MAL_SIZE_NEG:
    case DIFF_MAL_SIZE_HUGE:
        buf_put_i32(frame, c->mal == DIFF_MAL_SIZE_ZERO  ? 0
                           : c->mal == DIFF_MAL_SIZE_NEG ? -1
                                                         : 104857600 + 1);
        return c->mal == DIFF_MAL_SIZE_ZERO;
    case DIFF_MAL_CLIENT_NULL:
        diff_frame(frame, c->hdr_key, c->hdr_ver, corr, NULL, body->p, body->len);
        return 1;
    case DIFF_MAL_CLIENT_LONG:
        diff_frame(frame, c->hdr_key, c->hdr_ver, corr, "strand-diff", body->p, body->len);
        /* The length of "strand-diff" at offset 12, made to exceed the frame. */
        frame->p[12] = 0x7f;
        frame->p[13] = 0xff;
        return 1;
    }
    diff_frame(frame, c->hdr_key, c->hdr_ver, corr, "strand-diff", body->p, body->len);
    return 1;
}
