/* The generic codec: walks the descriptor tables of proto_gen.c.
 *
 * Wire rules it implements (Kafka's, see protocol/README.md):
 *   classic versions   string = int16 len + bytes (-1 null); bytes and
 *                      records = int32 len + bytes (-1 null); array =
 *                      int32 count + elements (-1 null); nullable
 *                      struct = int8 -1 (null) or 1 + the struct
 *   flexible versions  the same with a uvarint of len+1 (0 = null)
 *                      ("compact" forms), except fields marked noflex;
 *                      every struct ends with a tagged-field section:
 *                      uvarint count, then per field uvarint tag, uvarint
 *                      size, size bytes (the field in its flexible form)
 *   fixed-width ints are big-endian; bool is one byte; uuid 16 bytes.
 * Tagged fields are written in ascending tag order and only when they
 * differ from their default; unknown tags are skipped on read. */
#include <string.h>

#include "proto/proto_desc.h"
#include "util/rd.h"

_Static_assert(sizeof(proto_array_t) == sizeof(struct { int32_t n; int64_t *v; }),
               "generated arrays must match proto_array_t");

#define STR_MAX 0x7fff

typedef struct {
    int16_t v;
    int flex;
    arena_t *arena;
} pctx_t;

static inline int in_range(int16_t v, int16_t lo, int16_t hi)
{
    return v >= lo && v <= hi;
}

/* ---- init and defaults ---- */

void proto_int_store(uint8_t type, void *p, int64_t v)
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

int64_t proto_int_load(uint8_t type, const void *p)
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

static void init_field(const proto_field_t *f, void *p)
{
    if (f->array) {
        ((proto_array_t *)p)->n = f->def_null ? -1 : 0;
        return;
    }
    switch (f->type) {
    case PROTO_T_FLOAT64:
        *(double *)p = f->def_f;
        break;
    case PROTO_T_UUID:
        break;
    case PROTO_T_STRING: {
        proto_str_t *s = p;
        if (f->def_null)
            s->len = -1;
        else if (f->def_s)
            *s = (proto_str_t){ f->def_s, (int32_t)strlen(f->def_s) };
        break;
    }
    case PROTO_T_BYTES:
        ((proto_bytes_t *)p)->len = f->def_null ? -1 : 0;
        break;
    case PROTO_T_RECORDS:
        ((proto_records_t *)p)->len = f->def_null ? -1 : 0;
        ((proto_records_t *)p)->fd = -1;
        break;
    case PROTO_T_STRUCT:
        proto_struct_init(f->sub, p);
        break;
    default:
        proto_int_store(f->type, p, f->def_i);
    }
}

void proto_struct_init(const proto_struct_t *st, void *m)
{
    memset(m, 0, st->size);
    for (uint16_t i = 0; i < st->nfields; i++)
        init_field(&st->fields[i], (char *)m + st->fields[i].off);
}

int proto_field_is_default(const proto_field_t *f, const void *p)
{
    if (f->array)
        return ((const proto_array_t *)p)->n == (f->def_null ? -1 : 0);
    switch (f->type) {
    case PROTO_T_FLOAT64:
        return *(const double *)p == f->def_f;
    case PROTO_T_UUID: {
        static const proto_uuid_t zero;
        return !memcmp(p, &zero, sizeof(zero));
    }
    case PROTO_T_STRING: {
        const proto_str_t *s = p;
        if (f->def_null)
            return s->len == -1;
        size_t dl = f->def_s ? strlen(f->def_s) : 0;
        return s->len == (int32_t)dl && (!dl || !memcmp(s->p, f->def_s, dl));
    }
    case PROTO_T_BYTES:
        return ((const proto_bytes_t *)p)->len == (f->def_null ? -1 : 0);
    case PROTO_T_RECORDS:
        return ((const proto_records_t *)p)->fd < 0 &&
               ((const proto_records_t *)p)->len == (f->def_null ? -1 : 0);
    case PROTO_T_STRUCT:
        for (uint16_t i = 0; i < f->sub->nfields; i++) {
            const proto_field_t *g = &f->sub->fields[i];
            if (!proto_field_is_default(g, (const char *)p + g->off))
                return 0;
        }
        return 1;
    default:
        return proto_int_load(f->type, p) == f->def_i;
    }
}

/* ---- decoding ---- */

static int dec_struct(const pctx_t *c, const proto_struct_t *st, void *m,
                      rd_t *rd);

/* Fewest bytes one instance of st can take in this version: bounds an
 * array count by the bytes left, so a lying count cannot make us reserve
 * much more memory than the frame is long. */
static size_t min_wire_size(const pctx_t *c, const proto_struct_t *st)
{
    size_t n = c->flex ? 1 : 0;
    for (uint16_t i = 0; i < st->nfields; i++) {
        const proto_field_t *f = &st->fields[i];
        int compact = c->flex && !f->noflex;
        if (!in_range(c->v, f->vmin, f->vmax) || in_range(c->v, f->tmin, f->tmax))
            continue;
        if (f->array) {
            n += f->array == 2 ? 1 : compact ? 1 : 4;
            continue;
        }
        switch (f->type) {
        case PROTO_T_BOOL: case PROTO_T_INT8: n += 1; break;
        case PROTO_T_INT16: case PROTO_T_UINT16: n += 2; break;
        case PROTO_T_INT32: case PROTO_T_UINT32: n += 4; break;
        case PROTO_T_INT64: case PROTO_T_FLOAT64: n += 8; break;
        case PROTO_T_UUID: n += 16; break;
        case PROTO_T_STRING: n += compact ? 1 : 2; break;
        case PROTO_T_BYTES: case PROTO_T_RECORDS: n += compact ? 1 : 4; break;
        case PROTO_T_STRUCT: n += min_wire_size(c, f->sub); break;
        }
    }
    return n;
}

/* A length or count: classic int16/int32, or compact uvarint of n+1.
 * Returns -1 for null, < -1 when malformed (or when null is not allowed).
 * Any negative length means null, as Kafka reads it: -2 in a nullable
 * field is a null there, and an error only where null is not allowed. */
static int64_t dec_len(rd_t *rd, int compact, int wide, int nullable)
{
    int64_t n = compact ? (int64_t)rd_uvarint(rd) - 1
                        : (wide ? rd_i32(rd) : rd_i16(rd));
    if (rd->err || (n < 0 && !nullable))
        return -2;
    return n < 0 ? -1 : n;
}

static int dec_slice(rd_t *rd, int compact, int wide, int nullable,
                     const void **p, int32_t *len)
{
    int64_t n = dec_len(rd, compact, wide, nullable);
    if (n < -1 || n > (wide ? INT32_MAX : STR_MAX))
        return -1;
    *len = (int32_t)n;
    *p = NULL;
    /* an empty value still gets a valid pointer, so memcmp(p, x, 0) is fine */
    if (n >= 0 && !(*p = rd_take(rd, (size_t)n)))
        return -1;
    return 0;
}

/* One value of f's (element) type at p. */
static int dec_value(const pctx_t *c, const proto_field_t *f, void *p,
                     rd_t *rd, int nullable)
{
    int compact = c->flex && !f->noflex;
    const uint8_t *q;
    switch (f->type) {
    case PROTO_T_BOOL: *(bool *)p = rd_i8(rd) != 0; break;
    case PROTO_T_INT8: *(int8_t *)p = rd_i8(rd); break;
    case PROTO_T_INT16: *(int16_t *)p = rd_i16(rd); break;
    case PROTO_T_UINT16: *(uint16_t *)p = (uint16_t)rd_i16(rd); break;
    case PROTO_T_INT32: *(int32_t *)p = rd_i32(rd); break;
    case PROTO_T_UINT32: *(uint32_t *)p = rd_u32(rd); break;
    case PROTO_T_INT64: *(int64_t *)p = rd_i64(rd); break;
    case PROTO_T_FLOAT64: *(double *)p = rd_f64(rd); break;
    case PROTO_T_UUID:
        if ((q = rd_take(rd, 16)))
            memcpy(p, q, 16);
        break;
    case PROTO_T_STRING: {
        proto_str_t *s = p;
        return dec_slice(rd, compact, 0, nullable, (const void **)&s->p, &s->len);
    }
    case PROTO_T_BYTES: {
        proto_bytes_t *b = p;
        return dec_slice(rd, compact, 1, nullable, (const void **)&b->p, &b->len);
    }
    case PROTO_T_RECORDS: {
        proto_records_t *r = p;
        r->fd = -1;
        r->file_pos = 0;
        return dec_slice(rd, compact, 1, nullable, (const void **)&r->p, &r->len);
    }
    case PROTO_T_STRUCT:
        proto_struct_init(f->sub, p);
        return dec_struct(c, f->sub, p, rd);
    }
    return rd->err ? -1 : 0;
}

static int dec_array(const pctx_t *c, const proto_field_t *f, proto_array_t *a,
                     rd_t *rd)
{
    int nullable = in_range(c->v, f->nmin, f->nmax);
    int64_t n = dec_len(rd, c->flex, 1, nullable);
    if (n < -1)
        return -1;
    a->n = (int32_t)n;
    a->v = NULL;
    if (n <= 0)
        return 0;
    size_t min = 1;
    if (f->type == PROTO_T_STRUCT) {
        min = min_wire_size(c, f->sub);
        min = min ? min : 1;
    }
    if ((uint64_t)n > rd_remain(rd) / min)
        return -1;
    a->v = arena_alloc(c->arena, (size_t)n * f->elem_size);
    for (int64_t i = 0; i < n; i++)
        if (dec_value(c, f, (char *)a->v + (size_t)i * f->elem_size, rd, 0))
            return -1;
    return 0;
}

static int dec_opt(const pctx_t *c, const proto_field_t *f, proto_array_t *a, rd_t *rd)
{
    int8_t present = rd_i8(rd);
    a->n = -1;
    a->v = NULL;
    if (rd->err)
        return -1;
    if (present < 0)
        return 0;
    a->n = 1;
    a->v = arena_alloc(c->arena, f->elem_size);
    return dec_value(c, f, a->v, rd, 0);
}

static int dec_field(const pctx_t *c, const proto_field_t *f, void *p, rd_t *rd)
{
    if (f->array == 2)
        return dec_opt(c, f, p, rd);
    if (f->array)
        return dec_array(c, f, p, rd);
    return dec_value(c, f, p, rd, in_range(c->v, f->nmin, f->nmax));
}

static int dec_tagged(const pctx_t *c, const proto_struct_t *st, void *m,
                      rd_t *rd)
{
    uint32_t count = rd_uvarint(rd);
    for (uint32_t i = 0; i < count && !rd->err; i++) {
        uint32_t tag = rd_uvarint(rd);
        uint32_t size = rd_uvarint(rd);
        const uint8_t *data = rd_take(rd, size);
        if (!data) /* also a tag or size cut short: the sticky error */
            return -1;
        for (uint16_t k = 0; k < st->nfields; k++) {
            const proto_field_t *f = &st->fields[k];
            if (f->tag != (int32_t)tag || !in_range(c->v, f->tmin, f->tmax))
                continue;
            rd_t sub;
            rd_init(&sub, data, size);
            if (dec_field(c, f, (char *)m + f->off, &sub) || sub.err)
                return -1;
            break;
        }
    }
    return rd->err ? -1 : 0;
}

static int dec_struct(const pctx_t *c, const proto_struct_t *st, void *m,
                      rd_t *rd)
{
    for (uint16_t i = 0; i < st->nfields; i++) {
        const proto_field_t *f = &st->fields[i];
        if (!in_range(c->v, f->vmin, f->vmax) || in_range(c->v, f->tmin, f->tmax))
            continue;
        if (dec_field(c, f, (char *)m + f->off, rd))
            return -1;
    }
    if (c->flex)
        return dec_tagged(c, st, m, rd);
    return rd->err ? -1 : 0;
}

int proto_msg_decode(const proto_msg_t *msg, void *m, int16_t version,
                     const uint8_t *buf, size_t len, arena_t *arena,
                     size_t *used)
{
    pctx_t c = { version, msg->flex_min >= 0 && version >= msg->flex_min, arena };
    rd_t rd;
    proto_struct_init(msg->st, m);
    if (!in_range(version, msg->vmin, msg->vmax))
        return -1;
    rd_init(&rd, buf, len);
    if (dec_struct(&c, msg->st, m, &rd))
        return -1;
    if (used)
        *used = (size_t)(rd.p - (const uint8_t *)buf);
    return 0;
}

/* ---- encoding ---- */

static void enc_struct(const pctx_t *c, const proto_struct_t *st,
                       const void *m, buf_t *out);

static void enc_len(buf_t *out, int compact, int wide, int32_t n)
{
    if (compact)
        buf_put_uvarint(out, (uint32_t)n + 1);
    else if (wide)
        buf_put_i32(out, n);
    else
        buf_put_i16(out, (int16_t)n);
}

/* A null where the version allows none goes out empty: encode cannot
 * fail, and the peer would reject a null it did not expect. */
static void enc_slice(buf_t *out, int compact, int wide, int nullable,
                      const void *p, int32_t len)
{
    if (len < 0 && !nullable)
        len = 0;
    enc_len(out, compact, wide, len);
    if (len > 0)
        buf_put(out, p, (size_t)len);
}

static void enc_records(buf_t *out, int compact, int nullable,
                        const proto_records_t *r)
{
    if (r->fd < 0) {
        enc_slice(out, compact, 1, nullable, r->p, r->len);
        return;
    }
    int32_t len = r->len < 0 ? 0 : r->len;
    enc_len(out, compact, 1, len);
    buf_put_file(out, r->fd, r->file_pos, (size_t)len);
}

static void enc_value(const pctx_t *c, const proto_field_t *f, const void *p,
                      buf_t *out, int nullable)
{
    int compact = c->flex && !f->noflex;
    switch (f->type) {
    case PROTO_T_BOOL: buf_put_i8(out, *(const bool *)p ? 1 : 0); break;
    case PROTO_T_INT8: buf_put_i8(out, *(const int8_t *)p); break;
    case PROTO_T_INT16: buf_put_i16(out, *(const int16_t *)p); break;
    case PROTO_T_UINT16: buf_put_i16(out, (int16_t)*(const uint16_t *)p); break;
    case PROTO_T_INT32: buf_put_i32(out, *(const int32_t *)p); break;
    case PROTO_T_UINT32: buf_put_u32(out, *(const uint32_t *)p); break;
    case PROTO_T_INT64: buf_put_i64(out, *(const int64_t *)p); break;
    case PROTO_T_FLOAT64: buf_put_f64(out, *(const double *)p); break;
    case PROTO_T_UUID: buf_put(out, p, 16); break;
    case PROTO_T_STRING: {
        const proto_str_t *s = p;
        enc_slice(out, compact, 0, nullable, s->p, s->len);
        break;
    }
    case PROTO_T_BYTES: {
        const proto_bytes_t *b = p;
        enc_slice(out, compact, 1, nullable, b->p, b->len);
        break;
    }
    case PROTO_T_RECORDS:
        enc_records(out, compact, nullable, p);
        break;
    case PROTO_T_STRUCT:
        enc_struct(c, f->sub, p, out);
        break;
    }
}

static void enc_field(const pctx_t *c, const proto_field_t *f, const void *p,
                      buf_t *out)
{
    int nullable = in_range(c->v, f->nmin, f->nmax);
    if (!f->array) {
        enc_value(c, f, p, out, nullable);
        return;
    }
    const proto_array_t *a = p;
    if (f->array == 2) {
        buf_put_i8(out, a->n > 0 ? 1 : -1);
        if (a->n > 0)
            enc_value(c, f, a->v, out, 0);
        return;
    }
    int32_t n = a->n < 0 && !nullable ? 0 : a->n;
    enc_len(out, c->flex, 1, n);
    for (int32_t i = 0; i < n; i++)
        enc_value(c, f, (const char *)a->v + (size_t)i * f->elem_size, out, 0);
}

/* Writes the field after its tag, then slides it right to make room for
 * its size: no scratch buffer, and tagged fields are small and rare. */
static void enc_tagged_one(const pctx_t *c, const proto_field_t *f,
                           const void *p, buf_t *out)
{
    buf_put_uvarint(out, (uint32_t)f->tag);
    size_t start = out->len, spl0 = out->spl_bytes;
    int nspl0 = out->nspl;
    enc_field(c, f, p, out);
    size_t mem = out->len - start;
    uint32_t size = (uint32_t)(mem + (out->spl_bytes - spl0));
    size_t k = buf_uvarint_size(size);
    buf_reserve(out, k);
    memmove(out->p + start + k, out->p + start, mem);
    uint8_t *w = out->p + start;
    while (size >= 0x80) {
        *w++ = (uint8_t)(size | 0x80);
        size >>= 7;
    }
    *w = (uint8_t)size;
    out->len += k;
    for (int i = nspl0; i < out->nspl; i++)
        out->spl[i].mem_pos += k;
}

static void enc_struct(const pctx_t *c, const proto_struct_t *st,
                       const void *m, buf_t *out)
{
    uint32_t ntag = 0;
    for (uint16_t i = 0; i < st->nfields; i++) {
        const proto_field_t *f = &st->fields[i];
        const void *p = (const char *)m + f->off;
        if (!in_range(c->v, f->vmin, f->vmax))
            continue;
        if (!in_range(c->v, f->tmin, f->tmax))
            enc_field(c, f, p, out);
        else if (!proto_field_is_default(f, p))
            ntag++;
    }
    if (!c->flex)
        return;
    buf_put_uvarint(out, ntag);
    for (uint16_t i = 0; i < st->nfields && ntag; i++) {
        const proto_field_t *f = &st->fields[i];
        const void *p = (const char *)m + f->off;
        if (in_range(c->v, f->vmin, f->vmax) && in_range(c->v, f->tmin, f->tmax) &&
            !proto_field_is_default(f, p))
            enc_tagged_one(c, f, p, out);
    }
}

void proto_msg_encode(const proto_msg_t *msg, const void *m, int16_t version,
                      buf_t *out)
{
    pctx_t c = { version, msg->flex_min >= 0 && version >= msg->flex_min, NULL };
    enc_struct(&c, msg->st, m, out);
}
