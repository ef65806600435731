#include "util/buf.h"

#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "util/mem.h"

void buf_init(buf_t *b)
{
    memset(b, 0, sizeof(*b));
}

void buf_free(buf_t *b)
{
    for (int i = 0; i < b->nspl; i++)
        close(b->spl[i].fd);
    free(b->p);
    free(b->spl);
    memset(b, 0, sizeof(*b));
}

uint8_t *buf_reserve(buf_t *b, size_t n)
{
    if (b->cap - b->len < n) {
        size_t cap = b->cap ? b->cap : 256;
        while (cap - b->len < n)
            cap *= 2;
        b->p = xrealloc(b->p, cap);
        b->cap = cap;
    }
    return b->p + b->len;
}

void buf_put(buf_t *b, const void *data, size_t n)
{
    if (!n)
        return;
    memcpy(buf_reserve(b, n), data, n);
    b->len += n;
}

void buf_put_i8(buf_t *b, int8_t v)
{
    *buf_reserve(b, 1) = (uint8_t)v;
    b->len += 1;
}

void buf_put_i16(buf_t *b, int16_t v)
{
    uint8_t *w = buf_reserve(b, 2);
    uint16_t u = (uint16_t)v;
    w[0] = (uint8_t)(u >> 8);
    w[1] = (uint8_t)u;
    b->len += 2;
}

void buf_put_u32(buf_t *b, uint32_t v)
{
    uint8_t *w = buf_reserve(b, 4);
    w[0] = (uint8_t)(v >> 24);
    w[1] = (uint8_t)(v >> 16);
    w[2] = (uint8_t)(v >> 8);
    w[3] = (uint8_t)v;
    b->len += 4;
}

void buf_put_i32(buf_t *b, int32_t v)
{
    buf_put_u32(b, (uint32_t)v);
}

void buf_put_i64(buf_t *b, int64_t v)
{
    uint64_t u = (uint64_t)v;
    buf_put_u32(b, (uint32_t)(u >> 32));
    buf_put_u32(b, (uint32_t)u);
}

void buf_put_f64(buf_t *b, double v)
{
    uint64_t u;
    memcpy(&u, &v, sizeof(u));
    buf_put_i64(b, (int64_t)u);
}

static void buf_put_uvarint64(buf_t *b, uint64_t v)
{
    uint8_t *w = buf_reserve(b, 10);
    size_t n = 0;
    while (v >= 0x80) {
        w[n++] = (uint8_t)(v | 0x80);
        v >>= 7;
    }
    w[n++] = (uint8_t)v;
    b->len += n;
}

void buf_put_uvarint(buf_t *b, uint32_t v)
{
    buf_put_uvarint64(b, v);
}

void buf_put_varint(buf_t *b, int32_t v)
{
    buf_put_uvarint64(b, ((uint32_t)v << 1) ^ (uint32_t)(v >> 31));
}

void buf_put_varlong(buf_t *b, int64_t v)
{
    buf_put_uvarint64(b, ((uint64_t)v << 1) ^ (uint64_t)(v >> 63));
}

void buf_set_i32(buf_t *b, size_t pos, int32_t v)
{
    uint32_t u = (uint32_t)v;
    b->p[pos] = (uint8_t)(u >> 24);
    b->p[pos + 1] = (uint8_t)(u >> 16);
    b->p[pos + 2] = (uint8_t)(u >> 8);
    b->p[pos + 3] = (uint8_t)u;
}

void buf_put_file(buf_t *b, int fd, int64_t off, size_t len)
{
    if (b->nspl == b->capspl) {
        b->capspl = b->capspl ? b->capspl * 2 : 4;
        b->spl = xrealloc(b->spl, (size_t)b->capspl * sizeof(*b->spl));
    }
    buf_splice_t *s = &b->spl[b->nspl++];
    s->mem_pos = b->len;
    s->fd = fd;
    s->off = off;
    s->len = len;
    b->spl_bytes += len;
}

size_t buf_uvarint_size(uint32_t v)
{
    size_t n = 1;
    while (v >= 0x80) {
        v >>= 7;
        n++;
    }
    return n;
}
