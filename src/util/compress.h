/* Compression codecs of Kafka record batches, by their attribute id, in
 * exactly the stream formats Kafka's clients write and read:
 *   1 gzip   a gzip stream (RFC 1952); concatenated members are accepted
 *   2 snappy snappy-java ("xerial") framing: 8-byte magic 82 'SNAPPY' 00,
 *            int32 version 1, int32 compatible version 1, then chunks of
 *            [int32 compressed length][raw snappy block of <= 32 KiB input].
 *            A raw snappy block with no framing is also accepted, since
 *            librdkafka producers write that.
 *   3 lz4    the LZ4 frame format, independent 64 KiB blocks, no checksums
 *            written (Kafka's Java reader rejects linked blocks)
 *   4 zstd   standard zstd frames, read by streaming so a frame without a
 *            content size (as the Java client writes) works
 * Decoder contexts are cached per thread; call compress_thread_cleanup()
 * before a thread that used this module exits. */
#ifndef STRAND_UTIL_COMPRESS_H
#define STRAND_UTIL_COMPRESS_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

#define COMPRESS_NONE 0
#define COMPRESS_GZIP 1
#define COMPRESS_SNAPPY 2
#define COMPRESS_LZ4 3
#define COMPRESS_ZSTD 4

/* Appends the decompressed form of in[0..len) to out (the caller's
 * buffer). Returns 0, or -1 if the codec is unknown, the input is corrupt
 * or truncated, or the output would exceed max_out bytes (the guard
 * against decompression bombs); out is then left as it was. Codec 0
 * copies. */
int compress_decompress(int codec, const uint8_t *in, size_t len, buf_t *out, size_t max_out);

/* The same; on failure also sets *over_limit (may be NULL) to 1 if the
 * cause was max_out, 0 if the input was bad. */
int compress_decompress_ex(int codec, const uint8_t *in, size_t len, buf_t *out, size_t max_out,
                           int *over_limit);

/* Appends the compressed form of in[0..len) to out. level 0 means the
 * codec's default. Returns 0, or -1 for an unknown codec or a library
 * failure (out then left as it was). Codec 0 copies. */
int compress_compress(int codec, int level, const uint8_t *in, size_t len, buf_t *out);

/* Frees this thread's cached decoder contexts. */
void compress_thread_cleanup(void);

#endif
