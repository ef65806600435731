/* Mutators. The site walker mirrors the generic decoder of
 * src/proto/proto_codec.c (same wire rules: classic int16/int32 lengths,
 * compact uvarint(n+1) forms in flexible versions, a tagged-field section
 * after every struct), but records where things are instead of values.
 * It only ever runs on bodies the encoder has just written. */
#include "fuzz/fuzz_mut.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/mem.h"
#include "util/rd.h"

typedef struct {
    int16_t v;
    int flex;
    const uint8_t *base;
    fuzz_sites_t *sites;
} walk_t;

static int in_range(int16_t v, int16_t lo, int16_t hi)
{
    return v >= lo && v <= hi;
}

static void site_add(walk_t *w, const uint8_t *at, int kind, int width, int varint)
{
    if (w->sites->n >= (int)(sizeof(w->sites->v) / sizeof(w->sites->v[0])))
        return;
    fuzz_site_t *s = &w->sites->v[w->sites->n++];
    s->off = (uint32_t)(at - w->base);
    s->kind = (uint8_t)kind;
    s->width = (uint8_t)width;
    s->varint = (uint8_t)varint;
}

/* A length or count: returns n (-1 null) and records the site. */
static int64_t walk_len(walk_t *w, rd_t *rd, int compact, int wide, int kind)
{
    const uint8_t *at = rd->p;
    int64_t n = compact ? (int64_t)rd_uvarint(rd) - 1 : wide ? rd_i32(rd) : rd_i16(rd);
    if (rd->err)
        return -2;
    site_add(w, at, kind, (int)(rd->p - at), compact);
    return n;
}

static int walk_struct(walk_t *w, const proto_struct_t *st, rd_t *rd);

static int walk_value(walk_t *w, const proto_field_t *f, rd_t *rd)
{
    int compact = w->flex && !f->noflex;
    const uint8_t *at = rd->p;
    int64_t n;
    switch (f->type) {
    case PROTO_T_BOOL: case PROTO_T_INT8: rd_take(rd, 1); break;
    case PROTO_T_INT16: case PROTO_T_UINT16: rd_take(rd, 2); break;
    case PROTO_T_INT32: case PROTO_T_UINT32: rd_take(rd, 4); break;
    case PROTO_T_INT64: case PROTO_T_FLOAT64: rd_take(rd, 8); break;
    case PROTO_T_UUID: rd_take(rd, 16); return rd->err ? -1 : 0;
    case PROTO_T_STRING: case PROTO_T_BYTES: case PROTO_T_RECORDS:
        n = walk_len(w, rd, compact, f->type != PROTO_T_STRING, FUZZ_SITE_LEN);
        if (n < -1 || (n > 0 && !rd_take(rd, (size_t)n)))
            return -1;
        return 0;
    case PROTO_T_STRUCT:
        return walk_struct(w, f->sub, rd);
    }
    if (rd->err)
        return -1;
    if (f->type != PROTO_T_FLOAT64)
        site_add(w, at, FUZZ_SITE_INT, (int)(rd->p - at), 0);
    return 0;
}

static int walk_field(walk_t *w, const proto_field_t *f, rd_t *rd)
{
    if (!f->array)
        return walk_value(w, f, rd);
    if (f->array == 2) { /* nullable struct: int8 -1 or 1, then the struct */
        int8_t present = rd_i8(rd);
        if (rd->err)
            return -1;
        return present < 0 ? 0 : walk_value(w, f, rd);
    }
    int64_t n = walk_len(w, rd, w->flex, 1, FUZZ_SITE_COUNT);
    if (n < -1 || n > (int64_t)rd_remain(rd))
        return -1;
    for (int64_t i = 0; i < n; i++)
        if (walk_value(w, f, rd))
            return -1;
    return 0;
}

static int walk_tagged(walk_t *w, const proto_struct_t *st, rd_t *rd)
{
    const uint8_t *at = rd->p;
    uint32_t count = rd_uvarint(rd);
    if (rd->err)
        return -1;
    site_add(w, at, FUZZ_SITE_TAGS, (int)(rd->p - at), 1);
    for (uint32_t i = 0; i < count && !rd->err; i++) {
        uint32_t tag = rd_uvarint(rd);
        uint32_t size = rd_uvarint(rd);
        const uint8_t *data = rd_take(rd, size);
        if (!data)
            return -1;
        for (uint16_t k = 0; k < st->nfields; k++) {
            const proto_field_t *f = &st->fields[k];
            if (f->tag != (int32_t)tag || !in_range(w->v, f->tmin, f->tmax))
                continue;
            rd_t sub;
            rd_init(&sub, data, size);
            if (walk_field(w, f, &sub))
                return -1;
            break;
        }
    }
    return rd->err ? -1 : 0;
}

static int walk_struct(walk_t *w, const proto_struct_t *st, rd_t *rd)
{
    for (uint16_t i = 0; i < st->nfields; i++) {
        const proto_field_t *f = &st->fields[i];
        if (!in_range(w->v, f->vmin, f->vmax) || in_range(w->v, f->tmin, f->tmax))
            continue;
        if (walk_field(w, f, rd))
            return -1;
    }
    if (w->flex)
        return walk_tagged(w, st, rd);
    return rd->err ? -1 : 0;
}

int fuzz_sites_find(const proto_msg_t *msg, int16_t version, const uint8_t *body, size_t len,
                    fuzz_sites_t *sites)
{
    walk_t w = { version, msg->flex_min >= 0 && version >= msg->flex_min, body, sites };
    rd_t rd;
    sites->n = 0;
    rd_init(&rd, body, len);
    return walk_struct(&w, msg->st, &rd);
}

/* ---- byte strings ---- */

void fuzz_bytes_set(fuzz_bytes_t *b, const void *p, size_t len)
{
    if (b->cap < len + 1) {
        b->cap = len + 64;
        b->p = xrealloc(b->p, b->cap);
    }
    if (len)
        memcpy(b->p, p, len);
    b->len = len;
}

void fuzz_bytes_free(fuzz_bytes_t *b)
{
    free(b->p);
    memset(b, 0, sizeof(*b));
}

/* Replaces [off, off+dlen) by ins[0..ilen). */
static void bytes_replace(fuzz_bytes_t *b, size_t off, size_t dlen, const uint8_t *ins, size_t ilen)
{
    if (off > b->len)
        off = b->len;
    if (dlen > b->len - off)
        dlen = b->len - off;
    size_t nlen = b->len - dlen + ilen;
    if (nlen + 1 > b->cap) {
        b->cap = nlen + 64;
        b->p = xrealloc(b->p, b->cap);
    }
    memmove(b->p + off + ilen, b->p + off + dlen, b->len - off - dlen);
    if (ilen)
        memcpy(b->p + off, ins, ilen);
    b->len = nlen;
}

int fuzz_put_uvarint(uint8_t *out, uint32_t v)
{
    int n = 0;
    while (v >= 0x80) {
        out[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    out[n++] = (uint8_t)v;
    return n;
}

static void put_be(uint8_t *p, int width, int64_t v)
{
    for (int i = width - 1; i >= 0; i--) {
        p[i] = (uint8_t)v;
        v >>= 8;
    }
}

static int64_t get_be(const uint8_t *p, int width)
{
    uint64_t v = 0;
    for (int i = 0; i < width; i++)
        v = (v << 8) | p[i];
    if (width < 8 && (v >> (8 * width - 1)) & 1) /* sign-extend */
        v |= ~0ULL << (8 * width);
    return (int64_t)v;
}

/* ---- the mutations ---- */

/* A length or count that lies: null, empty, one off, huge. */
static int64_t lying_len(fuzz_gen_t *g, int64_t cur)
{
    static const int64_t v[] = { -1, 0, 1, -2, 0x7fff, 0x8000, 0xffff, 0x7fffffff,
                                 0x80000000LL, 0xffffffffLL, 1000000 };
    uint32_t x = fuzz_below(&g->rng, 100);
    if (x < 30)
        return cur + 1 + (int64_t)fuzz_below(&g->rng, 3);
    if (x < 45)
        return cur - 1;
    return v[fuzz_below(&g->rng, sizeof(v) / sizeof(v[0]))];
}

/* Rewrites the site s to value n (uvarint sites are written as n+1 for
 * lengths and counts, as is; the tag count as n). */
static void site_write(fuzz_bytes_t *b, const fuzz_site_t *s, int64_t n)
{
    uint8_t tmp[8];
    if (s->off + s->width > b->len)
        return;
    if (s->varint) {
        uint32_t u = (uint32_t)(s->kind == FUZZ_SITE_TAGS ? n : n + 1);
        int k = fuzz_put_uvarint(tmp, u);
        bytes_replace(b, s->off, s->width, tmp, (size_t)k);
    } else {
        put_be(b->p + s->off, s->width, n);
    }
}

static int64_t site_read(const fuzz_bytes_t *b, const fuzz_site_t *s)
{
    if (s->off + s->width > b->len)
        return 0;
    if (s->varint) {
        rd_t rd;
        rd_init(&rd, b->p + s->off, s->width);
        int64_t u = rd_uvarint(&rd);
        return s->kind == FUZZ_SITE_TAGS ? u : u - 1;
    }
    return get_be(b->p + s->off, s->width);
}

/* Picks a site of one of the kinds in mask (bit per kind), or NULL. */
static const fuzz_site_t *site_pick(fuzz_gen_t *g, const fuzz_sites_t *sites, unsigned mask)
{
    int idx[512], n = 0;
    if (!sites)
        return NULL;
    for (int i = 0; i < sites->n; i++)
        if (mask & (1u << sites->v[i].kind))
            idx[n++] = i;
    return n ? &sites->v[idx[fuzz_below(&g->rng, (uint32_t)n)]] : NULL;
}

/* Adds 1-3 tagged fields of random tags and contents to a tagged section;
 * or makes the section's count or a field's size lie. */
static void mut_tags(fuzz_gen_t *g, fuzz_bytes_t *b, const fuzz_site_t *s, char *d, size_t dl)
{
    uint8_t tmp[128];
    int64_t count = site_read(b, s);
    int add = 1 + (int)fuzz_below(&g->rng, 3), k = 0;
    for (int i = 0; i < add; i++) {
        static const uint32_t tags[] = { 0, 1, 2, 3, 7, 100, 0x7fffffff, 0xffffffff };
        uint32_t tag = tags[fuzz_below(&g->rng, sizeof(tags) / sizeof(tags[0]))];
        uint32_t size = fuzz_below(&g->rng, 20);
        int lie = fuzz_chance(&g->rng, 20);
        k += fuzz_put_uvarint(tmp + k, tag);
        k += fuzz_put_uvarint(tmp + k, lie ? size + 1000 : size);
        for (uint32_t j = 0; j < size; j++)
            tmp[k++] = (uint8_t)fuzz_rand(&g->rng);
    }
    size_t at = s->off + s->width;
    bytes_replace(b, at, 0, tmp, (size_t)k);
    site_write(b, s, fuzz_chance(&g->rng, 85) ? count + add : lying_len(g, count));
    snprintf(d, dl, "tags+%d@%u", add, s->off);
}

static void mut_site(fuzz_gen_t *g, fuzz_bytes_t *b, const fuzz_sites_t *sites, char *d, size_t dl)
{
    uint32_t x = fuzz_below(&g->rng, 100);
    const fuzz_site_t *s;
    if (x < 35 && (s = site_pick(g, sites, 1u << FUZZ_SITE_INT))) {
        int64_t v = fuzz_gen_interesting(g, s->width);
        site_write(b, s, v);
        snprintf(d, dl, "int@%u=%lld", s->off, (long long)v);
    } else if (x < 60 && (s = site_pick(g, sites, 1u << FUZZ_SITE_COUNT))) {
        int64_t v = lying_len(g, site_read(b, s));
        site_write(b, s, v);
        snprintf(d, dl, "count@%u=%lld", s->off, (long long)v);
    } else if (x < 85 && (s = site_pick(g, sites, 1u << FUZZ_SITE_LEN))) {
        int64_t v = lying_len(g, site_read(b, s));
        site_write(b, s, v);
        snprintf(d, dl, "len@%u=%lld", s->off, (long long)v);
    } else if ((s = site_pick(g, sites, 1u << FUZZ_SITE_TAGS))) {
        mut_tags(g, b, s, d, dl);
    } else if ((s = site_pick(g, sites, ~0u))) {
        size_t at = s->off;
        bytes_replace(b, at, b->len - at, NULL, 0);
        snprintf(d, dl, "cut@%zu", at);
    } else {
        snprintf(d, dl, "none");
    }
}

static void mut_blind(fuzz_gen_t *g, fuzz_bytes_t *b, const uint8_t *other, size_t olen, char *d,
                      size_t dl)
{
    uint8_t tmp[64];
    size_t len = b->len, at = len ? fuzz_below(&g->rng, (uint32_t)len) : 0;
    switch (fuzz_below(&g->rng, 8)) {
    case 0: /* flip 1-8 bits */
        if (!len)
            break;
        for (int i = 1 + (int)fuzz_below(&g->rng, 8); i > 0; i--)
            b->p[fuzz_below(&g->rng, (uint32_t)len)] ^= (uint8_t)(1u << fuzz_below(&g->rng, 8));
        snprintf(d, dl, "flip");
        return;
    case 1: { /* set a byte to a boundary value */
        static const uint8_t v[] = { 0x00, 0xff, 0x7f, 0x80, 0x01, 0xfe };
        if (len)
            b->p[at] = v[fuzz_below(&g->rng, sizeof(v))];
        snprintf(d, dl, "byte@%zu", at);
        return;
    }
    case 2: { /* insert random bytes */
        size_t n = 1 + fuzz_below(&g->rng, sizeof(tmp));
        for (size_t i = 0; i < n; i++)
            tmp[i] = (uint8_t)fuzz_rand(&g->rng);
        bytes_replace(b, at, 0, tmp, n);
        snprintf(d, dl, "ins%zu@%zu", n, at);
        return;
    }
    case 3: { /* delete a range */
        size_t n = 1 + fuzz_below(&g->rng, 16);
        bytes_replace(b, at, n, NULL, 0);
        snprintf(d, dl, "del%zu@%zu", n, at);
        return;
    }
    case 4: { /* duplicate a range in place */
        size_t n = 1 + fuzz_below(&g->rng, 32);
        if (n > len - at)
            n = len - at;
        if (n > sizeof(tmp))
            n = sizeof(tmp);
        memcpy(tmp, b->p + at, n);
        bytes_replace(b, at, 0, tmp, n);
        snprintf(d, dl, "dup%zu@%zu", n, at);
        return;
    }
    case 5: /* truncate */
        b->len = at;
        snprintf(d, dl, "trunc@%zu", at);
        return;
    case 6: /* splice: our head, the other request's tail */
        if (other && olen) {
            size_t from = fuzz_below(&g->rng, (uint32_t)olen);
            bytes_replace(b, at, len - at, other + from, olen - from);
            snprintf(d, dl, "splice@%zu+%zu", at, from);
            return;
        }
        /* fall through */
    default: { /* trailing garbage */
        size_t n = 1 + fuzz_below(&g->rng, 16);
        for (size_t i = 0; i < n; i++)
            tmp[i] = (uint8_t)fuzz_rand(&g->rng);
        bytes_replace(b, len, 0, tmp, n);
        snprintf(d, dl, "tail+%zu", n);
        return;
    }
    }
    snprintf(d, dl, "nop");
}

void fuzz_mutate(fuzz_gen_t *g, fuzz_bytes_t *body, const fuzz_sites_t *sites,
                 const uint8_t *other, size_t other_len, char *desc, size_t desclen)
{
    int n = fuzz_chance(&g->rng, 70) ? 1 : 2 + (int)fuzz_below(&g->rng, 2);
    size_t used = 0;
    desc[0] = 0;
    /* Site mutations first, at most one, while the sites still match. */
    for (int i = 0; i < n && used + 1 < desclen; i++) {
        char d[96];
        if (i == 0 && sites && sites->n && fuzz_chance(&g->rng, 60))
            mut_site(g, body, sites, d, sizeof(d));
        else
            mut_blind(g, body, other, other_len, d, sizeof(d));
        int k = snprintf(desc + used, desclen - used, "%s%s", i ? "," : "", d);
        if (k < 0 || (size_t)k >= desclen - used)
            break;
        used += (size_t)k;
    }
}
