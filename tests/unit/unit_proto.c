/* unit_proto: see unit_proto.h. */
#include "tests/unit/unit_proto.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void unit_fill_init(unit_fill_t *fl, uint32_t seed, arena_t *arena)
{
    fl->rng = seed ? seed : 12345;
    fl->arena = arena;
}

uint32_t unit_fill_rnd(unit_fill_t *fl)
{
    fl->rng ^= fl->rng << 13;
    fl->rng ^= fl->rng >> 17;
    fl->rng ^= fl->rng << 5;
    return fl->rng;
}

static int in_v(int16_t v, int16_t lo, int16_t hi)
{
    return v >= lo && v <= hi;
}

static const char text[] = "abcdefghijklmnopqrstuvwxyz0123456789";

static void fill_struct(unit_fill_t *fl, const proto_struct_t *st, void *m, int16_t v,
                        int depth);

static void fill_value(unit_fill_t *fl, const proto_field_t *f, void *p, int16_t v,
                       int nullable, int depth)
{
    uint64_t x = ((uint64_t)unit_fill_rnd(fl) << 32) | unit_fill_rnd(fl);
    switch (f->type) {
    case PROTO_T_BOOL: *(bool *)p = x & 1; break;
    case PROTO_T_INT8: *(int8_t *)p = (int8_t)x; break;
    case PROTO_T_INT16: *(int16_t *)p = (int16_t)x; break;
    case PROTO_T_UINT16: *(uint16_t *)p = (uint16_t)x; break;
    case PROTO_T_INT32: *(int32_t *)p = (int32_t)x; break;
    case PROTO_T_UINT32: *(uint32_t *)p = (uint32_t)x; break;
    case PROTO_T_INT64: *(int64_t *)p = (int64_t)x; break;
    case PROTO_T_FLOAT64: *(double *)p = (double)(int32_t)x / 7.0; break;
    case PROTO_T_UUID:
        for (int i = 0; i < 16; i++)
            ((uint8_t *)p)[i] = (uint8_t)unit_fill_rnd(fl);
        break;
    case PROTO_T_STRING: {
        proto_str_t *s = p;
        if (nullable && x % 4 == 0)
            *s = PROTO_STR_NULL;
        else
            *s = (proto_str_t){ text + (x >> 8) % 10, (int32_t)((x >> 16) % 7) };
        break;
    }
    case PROTO_T_BYTES:
    case PROTO_T_RECORDS: {
        proto_bytes_t *b = p; /* records start with the same two members */
        if (nullable && x % 4 == 0)
            *b = (proto_bytes_t){ NULL, -1 };
        else
            *b = (proto_bytes_t){ (const uint8_t *)text + (x >> 8) % 10,
                                  (int32_t)((x >> 16) % 9) };
        break;
    }
    case PROTO_T_STRUCT:
        fill_struct(fl, f->sub, p, v, depth + 1);
        break;
    }
}

static void fill_field(unit_fill_t *fl, const proto_field_t *f, void *p, int16_t v,
                       int depth)
{
    int nullable = in_v(v, f->nmin, f->nmax);
    if (!f->array) {
        fill_value(fl, f, p, v, nullable, depth);
        return;
    }
    proto_array_t *a = p;
    uint32_t x = unit_fill_rnd(fl);
    if (nullable && x % (f->array == 2 ? 2 : 5) == 0) {
        a->n = -1;
        a->v = NULL;
        return;
    }
    /* a nullable struct (array 2) is one element or null */
    a->n = f->array == 2 ? 1 : (int32_t)((x >> 8) % (depth < 3 ? 3 : 2));
    a->v = arena_calloc(fl->arena, (size_t)a->n + 1, f->elem_size);
    for (int32_t i = 0; i < a->n; i++)
        fill_value(fl, f, (char *)a->v + (size_t)i * f->elem_size, v, 0, depth);
}

static void fill_struct(unit_fill_t *fl, const proto_struct_t *st, void *m, int16_t v,
                        int depth)
{
    proto_struct_init(st, m);
    for (uint16_t i = 0; i < st->nfields; i++) {
        const proto_field_t *f = &st->fields[i];
        if (in_v(v, f->vmin, f->vmax))
            fill_field(fl, f, (char *)m + f->off, v, depth);
    }
}

static int same_value(const proto_field_t *f, const void *a, const void *b,
                      int16_t v)
{
    switch (f->type) {
    case PROTO_T_BOOL: return *(const bool *)a == *(const bool *)b;
    case PROTO_T_INT8: return *(const int8_t *)a == *(const int8_t *)b;
    case PROTO_T_INT16: return *(const int16_t *)a == *(const int16_t *)b;
    case PROTO_T_UINT16: return *(const uint16_t *)a == *(const uint16_t *)b;
    case PROTO_T_INT32: return *(const int32_t *)a == *(const int32_t *)b;
    case PROTO_T_UINT32: return *(const uint32_t *)a == *(const uint32_t *)b;
    case PROTO_T_INT64: return *(const int64_t *)a == *(const int64_t *)b;
    case PROTO_T_FLOAT64: return !memcmp(a, b, sizeof(double));
    case PROTO_T_UUID: return !memcmp(a, b, 16);
    case PROTO_T_STRING: {
        const proto_str_t *x = a, *y = b;
        return x->len == y->len && (x->len <= 0 || !memcmp(x->p, y->p, (size_t)x->len));
    }
    case PROTO_T_BYTES: {
        const proto_bytes_t *x = a, *y = b;
        return x->len == y->len && (x->len <= 0 || !memcmp(x->p, y->p, (size_t)x->len));
    }
    case PROTO_T_RECORDS: {
        const proto_records_t *x = a, *y = b;
        return x->len == y->len && y->fd == -1 &&
               (x->len <= 0 || !memcmp(x->p, y->p, (size_t)x->len));
    }
    case PROTO_T_STRUCT:
        return unit_same_struct(f->sub, a, b, v);
    }
    return 0;
}

int unit_same_struct(const proto_struct_t *st, const void *a, const void *b, int16_t v)
{
    for (uint16_t i = 0; i < st->nfields; i++) {
        const proto_field_t *f = &st->fields[i];
        const char *pa = (const char *)a + f->off, *pb = (const char *)b + f->off;
        int ok = 1;
        if (!in_v(v, f->vmin, f->vmax)) {
            ok = proto_field_is_default(f, pb);
        } else if (!f->array) {
            ok = same_value(f, pa, pb, v);
        } else {
            const proto_array_t *x = (const void *)pa, *y = (const void *)pb;
            ok = x->n == y->n;
            for (int32_t k = 0; ok && k < x->n; k++)
                ok = same_value(f, (const char *)x->v + (size_t)k * f->elem_size,
                                (const char *)y->v + (size_t)k * f->elem_size, v);
        }
        if (!ok) {
            fprintf(stderr, "\n  %s.%s differs (v%d)", st->name, f->name, v);
            return 0;
        }
    }
    return 1;
}

void unit_fill_struct(unit_fill_t *fl, const proto_struct_t *st, void *m, int16_t v)
{
    fill_struct(fl, st, m, v, 0);
}

int unit_bytes_eq(const uint8_t *got, size_t gotlen, const uint8_t *exp, size_t explen)
{
    if (gotlen == explen && !memcmp(got, exp, explen))
        return 1;
    fprintf(stderr, "\n  expected %zu bytes:", explen);
    for (size_t i = 0; i < explen; i++)
        fprintf(stderr, " %02x", exp[i]);
    fprintf(stderr, "\n  got      %zu bytes:", gotlen);
    for (size_t i = 0; i < gotlen; i++)
        fprintf(stderr, " %02x", got[i]);
    fprintf(stderr, "\n");
    return 0;
}

int unit_str_is(proto_str_t s, const char *c)
{
    return s.len == (int32_t)strlen(c) && !memcmp(s.p, c, (size_t)s.len);
}

/* Encodes a filled message, decodes it from an exactly sized heap copy,
 * compares, re-encodes and compares the bytes; then every truncation of
 * the encoding must fail (ASan catches any read past the copy's end). */
int unit_round_trip(const proto_msg_t *msg, int16_t v, int seed, arena_t *arena)
{
    int ok = 1;
    void *m = arena_calloc(arena, 1, msg->st->size);
    void *d = arena_calloc(arena, 1, msg->st->size);
    buf_t b1, b2;
    size_t used = 0;
    unit_fill_t fl;
    unit_fill_init(&fl, 2654435761u * (uint32_t)(seed + 1), arena);
    unit_fill_struct(&fl, msg->st, m, v);
    buf_init(&b1);
    buf_init(&b2);
    proto_msg_encode(msg, m, v, &b1);
    uint8_t *copy = malloc(b1.len ? b1.len : 1);
    if (b1.len)
        memcpy(copy, b1.p, b1.len);
    if (proto_msg_decode(msg, d, v, copy, b1.len, arena, &used) || used != b1.len) {
        fprintf(stderr, "\n  decode failed");
        ok = 0;
    } else if (!unit_same_struct(msg->st, m, d, v)) {
        ok = 0;
    } else {
        proto_msg_encode(msg, d, v, &b2);
        ok = b1.len == b2.len && (!b1.len || !memcmp(b1.p, b2.p, b1.len));
    }
    for (size_t n = 0; ok && n < b1.len; n++) {
        uint8_t *cut = malloc(n ? n : 1);
        memcpy(cut, b1.p, n);
        if (proto_msg_decode(msg, d, v, cut, n, arena, NULL) != -1) {
            fprintf(stderr, "\n  truncation to %zu of %zu bytes accepted", n, b1.len);
            ok = 0;
        }
        free(cut);
    }
    if (!ok)
        fprintf(stderr, "\n  %s v%d seed %d: round trip failed\n", msg->name, v, seed);
    free(copy);
    buf_free(&b1);
    buf_free(&b2);
    return ok;
}
