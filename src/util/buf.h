/* Output buffer: one growable memory area plus "splices", regions of files
 * that belong at given points of the byte stream. A Fetch response is built
 * here with its record bytes left in the segment files, so the network layer
 * can send them with sendfile() and the data never passes through user
 * space. Writers append big-endian Kafka primitives; all appends abort on
 * out-of-memory (see util/mem.h). */
#ifndef STRAND_UTIL_BUF_H
#define STRAND_UTIL_BUF_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef struct buf_splice_s {
    size_t mem_pos;  /* memory bytes that precede this splice */
    int fd;          /* owned by the buffer; closed by buf_free() */
    int64_t off;     /* file offset of the first byte */
    size_t len;
} buf_splice_t;

typedef struct buf_s {
    uint8_t *p;
    size_t len;
    size_t cap;
    buf_splice_t *spl;
    int nspl;
    int capspl;
    size_t spl_bytes; /* sum of splice lengths */
} buf_t;

void buf_init(buf_t *b);
/* Releases memory and closes the splice fds. The buffer may be reused
 * after buf_init(). */
void buf_free(buf_t *b);
/* Total logical length: memory plus spliced file bytes. */
static inline size_t buf_total(const buf_t *b)
{
    return b->len + b->spl_bytes;
}
/* Guarantees room for n more memory bytes; returns the write pointer. */
uint8_t *buf_reserve(buf_t *b, size_t n);
void buf_put(buf_t *b, const void *data, size_t n);
void buf_put_i8(buf_t *b, int8_t v);
void buf_put_i16(buf_t *b, int16_t v);
void buf_put_i32(buf_t *b, int32_t v);
void buf_put_u32(buf_t *b, uint32_t v);
void buf_put_i64(buf_t *b, int64_t v);
void buf_put_f64(buf_t *b, double v);
void buf_put_uvarint(buf_t *b, uint32_t v);
void buf_put_varint(buf_t *b, int32_t v);
void buf_put_varlong(buf_t *b, int64_t v);
/* Overwrites 4 bytes at memory position pos (for length prefixes written
 * after the fact). pos is a memory position, i.e. a value of b->len. */
void buf_set_i32(buf_t *b, size_t pos, int32_t v);
/* Appends len bytes of file fd from off. Takes ownership of fd. */
void buf_put_file(buf_t *b, int fd, int64_t off, size_t len);

/* Encoded size of a uvarint, for length computations. */
size_t buf_uvarint_size(uint32_t v);

#endif
