/* Bounds-checked reader over a byte slice. Errors are sticky: the first
 * short read sets rd->err and every later read returns 0, so a decoder
 * reads a whole structure and checks rd->err once at the end (the
 * single "err:" path the house style asks for). A short or lying frame
 * can never make a read go past rd->end. */
#ifndef STRAND_UTIL_RD_H
#define STRAND_UTIL_RD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

typedef struct rd_s {
    const uint8_t *p;
    const uint8_t *end;
    int err;
} rd_t;

static inline void rd_init(rd_t *rd, const void *p, size_t len)
{
    rd->p = p;
    rd->end = rd->p + len;
    rd->err = 0;
}

static inline size_t rd_remain(const rd_t *rd)
{
    return rd->err ? 0 : (size_t)(rd->end - rd->p);
}

/* Returns a pointer to the next n bytes and advances, or NULL (and sets
 * err) when fewer remain. */
static inline const uint8_t *rd_take(rd_t *rd, size_t n)
{
    if (rd->err || (size_t)(rd->end - rd->p) < n) {
        rd->err = 1;
        return NULL;
    }
    const uint8_t *q = rd->p;
    rd->p += n;
    return q;
}

static inline int8_t rd_i8(rd_t *rd)
{
    const uint8_t *q = rd_take(rd, 1);
    return q ? (int8_t)q[0] : 0;
}

static inline int16_t rd_i16(rd_t *rd)
{
    const uint8_t *q = rd_take(rd, 2);
    return q ? (int16_t)(((uint16_t)q[0] << 8) | q[1]) : 0;
}

static inline uint32_t rd_u32(rd_t *rd)
{
    const uint8_t *q = rd_take(rd, 4);
    return q ? ((uint32_t)q[0] << 24) | ((uint32_t)q[1] << 16) |
                   ((uint32_t)q[2] << 8) | q[3]
             : 0;
}

static inline int32_t rd_i32(rd_t *rd)
{
    return (int32_t)rd_u32(rd);
}

static inline int64_t rd_i64(rd_t *rd)
{
    uint64_t hi = rd_u32(rd);
    uint64_t lo = rd_u32(rd);
    return (int64_t)((hi << 32) | lo);
}

static inline double rd_f64(rd_t *rd)
{
    uint64_t u = (uint64_t)rd_i64(rd);
    double d;
    memcpy(&d, &u, sizeof(d));
    return d;
}

/* Unsigned varint of at most maxbytes bytes (5 for 32-bit, 10 for 64). */
static inline uint64_t rd_uvarint_n(rd_t *rd, int maxbytes)
{
    uint64_t v = 0;
    /* Most varints in records are one byte (small lengths and deltas). */
    if (!rd->err && rd->p < rd->end && !(rd->p[0] & 0x80))
        return *rd->p++;
    for (int i = 0; i < maxbytes; i++) {
        const uint8_t *q = rd_take(rd, 1);
        if (!q)
            return 0;
        v |= (uint64_t)(q[0] & 0x7f) << (7 * i);
        if (!(q[0] & 0x80))
            return v;
    }
    rd->err = 1;
    return 0;
}

static inline uint32_t rd_uvarint(rd_t *rd)
{
    uint64_t v = rd_uvarint_n(rd, 5);
    if (v > UINT32_MAX) {
        rd->err = 1;
        return 0;
    }
    return (uint32_t)v;
}

static inline int32_t rd_varint(rd_t *rd)
{
    uint32_t u = rd_uvarint(rd);
    return (int32_t)((u >> 1) ^ (~(u & 1) + 1));
}

static inline int64_t rd_varlong(rd_t *rd)
{
    uint64_t u = rd_uvarint_n(rd, 10);
    return (int64_t)((u >> 1) ^ (~(u & 1) + 1));
}

#endif
