/* Codecs: round trips, fixed vectors made by independent encoders (the
 * gzip, zstd and lz4 command-line tools and python's gzip module; snappy
 * blocks written by hand from the format description), corrupt input and
 * the max_out bound. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "util/compress.h"

#include <lz4frame.h>

static const char vec_plain[] = "strand vector: kafka kafka kafka kafka kafka!\n";
#define VEC_LEN 46

/* python3 gzip.compress(vec_plain, mtime=0) */
static const uint8_t vec_gzip[] = {
    0x1f, 0x8b, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x02, 0x03, 0x2b, 0x2e, 0x29, 0x4a, 0xcc,
    0x4b, 0x51, 0x28, 0x4b, 0x4d, 0x2e, 0xc9, 0x2f, 0xb2, 0x52, 0xc8, 0x4e, 0x4c, 0xcb, 0x4e,
    0xc4, 0x45, 0x2a, 0x72, 0x01, 0x00, 0x77, 0xee, 0xca, 0x78, 0x2e, 0x00, 0x00, 0x00};
/* zstd --no-check (single segment, content size present) */
static const uint8_t vec_zstd[] = {
    0x28, 0xb5, 0x2f, 0xfd, 0x20, 0x2e, 0xe5, 0x00, 0x00, 0xb0, 0x73, 0x74, 0x72,
    0x61, 0x6e, 0x64, 0x20, 0x76, 0x65, 0x63, 0x74, 0x6f, 0x72, 0x3a, 0x20, 0x6b,
    0x61, 0x66, 0x6b, 0x61, 0x21, 0x0a, 0x01, 0x00, 0x02, 0x16, 0x26};
/* zstd from a pipe: no content size, with checksum, as streaming writers do */
static const uint8_t vec_zstd_stream[] = {
    0x28, 0xb5, 0x2f, 0xfd, 0x04, 0x58, 0xe5, 0x00, 0x00, 0xb0, 0x73, 0x74, 0x72, 0x61,
    0x6e, 0x64, 0x20, 0x76, 0x65, 0x63, 0x74, 0x6f, 0x72, 0x3a, 0x20, 0x6b, 0x61, 0x66,
    0x6b, 0x61, 0x21, 0x0a, 0x01, 0x00, 0x02, 0x16, 0x26, 0x12, 0xed, 0x96, 0xb5};
/* lz4 -BD -B4: independent 64 KiB blocks, content checksum */
static const uint8_t vec_lz4[] = {
    0x04, 0x22, 0x4d, 0x18, 0x64, 0x40, 0xa7, 0x1f, 0x00, 0x00, 0x00, 0xff, 0x05,
    0x73, 0x74, 0x72, 0x61, 0x6e, 0x64, 0x20, 0x76, 0x65, 0x63, 0x74, 0x6f, 0x72,
    0x3a, 0x20, 0x6b, 0x61, 0x66, 0x6b, 0x61, 0x06, 0x00, 0x02, 0x50, 0x66, 0x6b,
    0x61, 0x21, 0x0a, 0x00, 0x00, 0x00, 0x00, 0x16, 0x88, 0xf2, 0x1a};
/* lz4 --content-size -BX: content size in the frame header */
static const uint8_t vec_lz4_cs[] = {
    0x04, 0x22, 0x4d, 0x18, 0x7c, 0x40, 0x2e, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00,
    0x00, 0xd7, 0x1f, 0x00, 0x00, 0x00, 0xff, 0x05, 0x73, 0x74, 0x72, 0x61, 0x6e,
    0x64, 0x20, 0x76, 0x65, 0x63, 0x74, 0x6f, 0x72, 0x3a, 0x20, 0x6b, 0x61, 0x66,
    0x6b, 0x61, 0x06, 0x00, 0x02, 0x50, 0x66, 0x6b, 0x61, 0x21, 0x0a, 0xdd, 0x7f,
    0x08, 0x9c, 0x00, 0x00, 0x00, 0x00, 0x16, 0x88, 0xf2, 0x1a};
/* Raw snappy, by hand: length 46; literal "strand vector: kafka" (20);
 * copy-2 of 24 bytes at offset 6; literal "!\n". */
#define SNAPPY_BLOCK                                                                       \
    0x2e, 0x4c, 's', 't', 'r', 'a', 'n', 'd', ' ', 'v', 'e', 'c', 't', 'o', 'r', ':', ' ', \
        'k', 'a', 'f', 'k', 'a', 0x5e, 0x06, 0x00, 0x04, '!', '\n'
static const uint8_t vec_snappy_raw[] = {SNAPPY_BLOCK};
static const uint8_t vec_snappy_xerial[] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1,
                                            0,    0,   0,   1,   0,   0,   0,   28, SNAPPY_BLOCK};
/* Two concatenated xerial streams (snappy-java reads them as one). */
static const uint8_t vec_snappy_xerial2[] = {
    0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 28, SNAPPY_BLOCK,
    0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 28, SNAPPY_BLOCK};

static size_t be32(const uint8_t *p)
{
    return ((size_t)p[0] << 24) | ((size_t)p[1] << 16) | ((size_t)p[2] << 8) | p[3];
}

static int decomp_eq(int codec, const uint8_t *in, size_t len, const void *want, size_t wlen)
{
    buf_t out;
    buf_init(&out);
    buf_put(&out, "pre", 3); /* output is appended */
    int r = compress_decompress(codec, in, len, &out, 1 << 20);
    int ok = r == 0 && out.len == wlen + 3 && memcmp(out.p, "pre", 3) == 0 &&
             memcmp(out.p + 3, want, wlen) == 0;
    buf_free(&out);
    return ok;
}

static void test_vectors(void)
{
    CU_ASSERT(decomp_eq(COMPRESS_GZIP, vec_gzip, sizeof(vec_gzip), vec_plain, VEC_LEN));
    CU_ASSERT(decomp_eq(COMPRESS_ZSTD, vec_zstd, sizeof(vec_zstd), vec_plain, VEC_LEN));
    CU_ASSERT(decomp_eq(COMPRESS_ZSTD, vec_zstd_stream, sizeof(vec_zstd_stream), vec_plain, VEC_LEN));
    CU_ASSERT(decomp_eq(COMPRESS_LZ4, vec_lz4, sizeof(vec_lz4), vec_plain, VEC_LEN));
    CU_ASSERT(decomp_eq(COMPRESS_LZ4, vec_lz4_cs, sizeof(vec_lz4_cs), vec_plain, VEC_LEN));
    CU_ASSERT(decomp_eq(COMPRESS_SNAPPY, vec_snappy_raw, sizeof(vec_snappy_raw), vec_plain, VEC_LEN));
    CU_ASSERT(decomp_eq(COMPRESS_SNAPPY, vec_snappy_xerial, sizeof(vec_snappy_xerial), vec_plain, VEC_LEN));
    CU_ASSERT(decomp_eq(COMPRESS_NONE, (const uint8_t *)vec_plain, VEC_LEN, vec_plain, VEC_LEN));
}

static void test_concatenated(void)
{
    char twice[2 * VEC_LEN];
    memcpy(twice, vec_plain, VEC_LEN);
    memcpy(twice + VEC_LEN, vec_plain, VEC_LEN);
    uint8_t gz2[2 * sizeof(vec_gzip)];
    memcpy(gz2, vec_gzip, sizeof(vec_gzip));
    memcpy(gz2 + sizeof(vec_gzip), vec_gzip, sizeof(vec_gzip));
    CU_ASSERT(decomp_eq(COMPRESS_GZIP, gz2, sizeof(gz2), twice, sizeof(twice)));
    CU_ASSERT(decomp_eq(COMPRESS_SNAPPY, vec_snappy_xerial2, sizeof(vec_snappy_xerial2), twice,
                        sizeof(twice)));
    uint8_t zs2[2 * sizeof(vec_zstd_stream)];
    memcpy(zs2, vec_zstd_stream, sizeof(vec_zstd_stream));
    memcpy(zs2 + sizeof(vec_zstd_stream), vec_zstd_stream, sizeof(vec_zstd_stream));
    CU_ASSERT(decomp_eq(COMPRESS_ZSTD, zs2, sizeof(zs2), twice, sizeof(twice)));
    uint8_t lz2[2 * sizeof(vec_lz4)];
    memcpy(lz2, vec_lz4, sizeof(vec_lz4));
    memcpy(lz2 + sizeof(vec_lz4), vec_lz4, sizeof(vec_lz4));
    CU_ASSERT(decomp_eq(COMPRESS_LZ4, lz2, sizeof(lz2), twice, sizeof(twice)));
}

/* Half compressible text, half noise, so every codec has real work. */
static uint8_t *make_data(size_t n)
{
    uint8_t *d = malloc(n ? n : 1);
    uint32_t x = 12345;
    for (size_t i = 0; i < n; i++) {
        x = x * 1103515245u + 12345u;
        d[i] = (i / 4096) % 2 ? (uint8_t)(x >> 16) : (uint8_t)("kafka strand "[i % 13]);
    }
    return d;
}

static void test_round_trips(void)
{
    size_t sizes[] = {0, 1, 1000, 1 << 20};
    int codecs[] = {COMPRESS_NONE, COMPRESS_GZIP, COMPRESS_SNAPPY, COMPRESS_LZ4, COMPRESS_ZSTD};
    for (size_t si = 0; si < 4; si++) {
        uint8_t *d = make_data(sizes[si]);
        for (size_t ci = 0; ci < 5; ci++) {
            buf_t c, u;
            buf_init(&c);
            buf_init(&u);
            CU_ASSERT_EQUAL_FATAL(compress_compress(codecs[ci], 0, d, sizes[si], &c), 0);
            int r = compress_decompress(codecs[ci], c.p, c.len, &u, sizes[si]);
            CU_ASSERT_EQUAL(r, 0);
            CU_ASSERT_EQUAL(u.len, sizes[si]);
            CU_ASSERT(u.len == sizes[si] && (!sizes[si] || memcmp(u.p, d, sizes[si]) == 0));
            if (sizes[si] == 1 << 20 && codecs[ci] != COMPRESS_NONE)
                CU_ASSERT(c.len < sizes[si] * 3 / 4);
            buf_free(&c);
            buf_free(&u);
        }
        free(d);
    }
}

/* The exact framing bytes Kafka's readers expect. */
static void test_written_framing(void)
{
    buf_t c;
    buf_init(&c);
    CU_ASSERT_EQUAL(compress_compress(COMPRESS_SNAPPY, 0, (const uint8_t *)vec_plain, VEC_LEN, &c), 0);
    static const uint8_t hdr[16] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
    CU_ASSERT(c.len > 20 && memcmp(c.p, hdr, 16) == 0);
    CU_ASSERT_EQUAL(be32(c.p + 16), c.len - 20);
    c.len = 0;
    CU_ASSERT_EQUAL(compress_compress(COMPRESS_LZ4, 0, (const uint8_t *)vec_plain, VEC_LEN, &c), 0);
    CU_ASSERT(c.len > 7 && c.p[0] == 0x04 && c.p[1] == 0x22 && c.p[2] == 0x4d && c.p[3] == 0x18);
    CU_ASSERT_EQUAL(c.p[4] & 0xc0, 0x40); /* version 01 */
    CU_ASSERT_EQUAL(c.p[4] & 0x20, 0x20); /* independent blocks */
    CU_ASSERT_EQUAL(c.p[5], 0x40);        /* 64 KiB max block */
    c.len = 0;
    CU_ASSERT_EQUAL(compress_compress(COMPRESS_GZIP, 0, (const uint8_t *)vec_plain, VEC_LEN, &c), 0);
    CU_ASSERT(c.len > 18 && c.p[0] == 0x1f && c.p[1] == 0x8b && c.p[2] == 8);
    c.len = 0;
    CU_ASSERT_EQUAL(compress_compress(COMPRESS_ZSTD, 0, (const uint8_t *)vec_plain, VEC_LEN, &c), 0);
    CU_ASSERT(c.len > 4 && c.p[0] == 0x28 && c.p[1] == 0xb5 && c.p[2] == 0x2f && c.p[3] == 0xfd);
    /* Snappy chunks hold at most 32 KiB of input each. */
    uint8_t *d = make_data(100000);
    c.len = 0;
    CU_ASSERT_EQUAL(compress_compress(COMPRESS_SNAPPY, 0, d, 100000, &c), 0);
    size_t pos = 16, chunks = 0;
    while (pos + 4 <= c.len) {
        size_t n = be32(c.p + pos);
        pos += 4 + n;
        chunks++;
    }
    CU_ASSERT_EQUAL(pos, c.len);
    CU_ASSERT_EQUAL(chunks, 4);
    free(d);
    buf_free(&c);
}

static int decomp_fails(int codec, const uint8_t *in, size_t len)
{
    buf_t out;
    buf_init(&out);
    buf_put(&out, "pre", 3);
    int r = compress_decompress(codec, in, len, &out, 1 << 20);
    int ok = r == -1 && out.len == 3;
    buf_free(&out);
    return ok;
}

static void test_corrupt(void)
{
    struct {
        int codec;
        const uint8_t *p;
        size_t n;
    } v[] = {
        {COMPRESS_GZIP, vec_gzip, sizeof(vec_gzip)},
        {COMPRESS_ZSTD, vec_zstd_stream, sizeof(vec_zstd_stream)},
        {COMPRESS_LZ4, vec_lz4, sizeof(vec_lz4)},
        {COMPRESS_SNAPPY, vec_snappy_xerial, sizeof(vec_snappy_xerial)},
        {COMPRESS_SNAPPY, vec_snappy_raw, sizeof(vec_snappy_raw)},
    };
    for (size_t i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
        /* every truncation fails cleanly */
        int bad = 0;
        for (size_t n = 0; n < v[i].n; n++) {
            if (v[i].p == vec_snappy_xerial && n == 16)
                continue; /* a bare header is a valid empty stream */
            if (!decomp_fails(v[i].codec, v[i].p, n))
                bad++;
        }
        CU_ASSERT_EQUAL(bad, 0);
        /* damaged checksums / headers / length fields */
        uint8_t tmp[256];
        memcpy(tmp, v[i].p, v[i].n);
        tmp[v[i].n - 1] ^= 0x55;
        if (v[i].codec != COMPRESS_SNAPPY) /* snappy has no checksum */
            CU_ASSERT(decomp_fails(v[i].codec, tmp, v[i].n));
        memcpy(tmp, v[i].p, v[i].n);
        tmp[0] ^= 0xff;
        if (v[i].p != vec_snappy_xerial) /* a damaged magic reads as a raw block */
            CU_ASSERT(decomp_fails(v[i].codec, tmp, v[i].n));
    }
    /* xerial chunk length larger than the data */
    uint8_t tmp[sizeof(vec_snappy_xerial)];
    memcpy(tmp, vec_snappy_xerial, sizeof(tmp));
    tmp[19] = 29;
    CU_ASSERT(decomp_fails(COMPRESS_SNAPPY, tmp, sizeof(tmp)));
    CU_ASSERT(decomp_fails(7, vec_gzip, sizeof(vec_gzip)));
    CU_ASSERT(decomp_fails(COMPRESS_GZIP, (const uint8_t *)"garbage!", 8));
    CU_ASSERT(decomp_fails(COMPRESS_ZSTD, (const uint8_t *)"garbage!", 8));
    CU_ASSERT(decomp_fails(COMPRESS_LZ4, (const uint8_t *)"garbage!", 8));
    CU_ASSERT(decomp_fails(COMPRESS_SNAPPY, (const uint8_t *)"\xff\xff\xff\xff\x0f", 5));
}

/* 8 MiB of zeros compresses to a few KiB: max_out must stop it. */
/* Kafka reads only LZ4 frames of independent blocks; a frame of linked
 * blocks (what lz4js writes) must be refused, not stored. */
static void test_lz4_dependent_blocks(void)
{
    LZ4F_preferences_t prefs;
    static uint8_t src[200000], dst[220000];
    buf_t out;

    /* Several 64 KiB blocks: a one-block frame is always marked independent. */
    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockMode = LZ4F_blockLinked;
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    for (size_t i = 0; i < sizeof(src); i++)
        src[i] = (uint8_t)(i * 7 % 251);
    size_t n = LZ4F_compressFrame(dst, sizeof(dst), src, sizeof(src), &prefs);
    CU_ASSERT_FATAL(!LZ4F_isError(n));
    CU_ASSERT_EQUAL(dst[4] & 0x20, 0);
    buf_init(&out);
    CU_ASSERT_EQUAL(compress_decompress(COMPRESS_LZ4, dst, n, &out, 1 << 20), -1);
    CU_ASSERT_EQUAL(out.len, 0);
    /* The same data in independent blocks is fine. */
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    n = LZ4F_compressFrame(dst, sizeof(dst), src, sizeof(src), &prefs);
    CU_ASSERT_EQUAL(compress_decompress(COMPRESS_LZ4, dst, n, &out, 1 << 20), 0);
    CU_ASSERT_EQUAL(out.len, sizeof(src));
    CU_ASSERT(out.len == sizeof(src) && !memcmp(out.p, src, sizeof(src)));
    buf_free(&out);
}

static void test_max_out(void)
{
    size_t n = 8 << 20;
    uint8_t *z = calloc(1, n);
    int codecs[] = {COMPRESS_NONE, COMPRESS_GZIP, COMPRESS_SNAPPY, COMPRESS_LZ4, COMPRESS_ZSTD};
    for (size_t ci = 0; ci < 5; ci++) {
        buf_t c, u;
        buf_init(&c);
        buf_init(&u);
        CU_ASSERT_EQUAL_FATAL(compress_compress(codecs[ci], 0, z, n, &c), 0);
        int over = -1;
        CU_ASSERT_EQUAL(compress_decompress_ex(codecs[ci], c.p, c.len, &u, 1 << 20, &over), -1);
        CU_ASSERT_EQUAL(over, 1);
        CU_ASSERT_EQUAL(u.len, 0);
        CU_ASSERT(u.cap <= (2u << 20)); /* never decoded much past the bound */
        CU_ASSERT_EQUAL(compress_decompress(codecs[ci], c.p, c.len, &u, n - 1), -1);
        CU_ASSERT_EQUAL(compress_decompress_ex(codecs[ci], c.p, c.len, &u, n, &over), 0);
        CU_ASSERT_EQUAL(over, 0);
        CU_ASSERT_EQUAL(u.len, n);
        buf_free(&c);
        buf_free(&u);
    }
    int over = -1;
    buf_t u;
    buf_init(&u);
    CU_ASSERT_EQUAL(compress_decompress_ex(COMPRESS_GZIP, (const uint8_t *)"junk", 4, &u, 10, &over), -1);
    CU_ASSERT_EQUAL(over, 0);
    buf_free(&u);
    free(z);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("compress", NULL, NULL);
    CU_add_test(s, "fixed vectors", test_vectors);
    CU_add_test(s, "concatenated streams", test_concatenated);
    CU_add_test(s, "round trips 0/1/1000/1M", test_round_trips);
    CU_add_test(s, "written framing bytes", test_written_framing);
    CU_add_test(s, "corrupt and truncated input", test_corrupt);
    CU_add_test(s, "max_out bound", test_max_out);
    CU_add_test(s, "lz4 dependent blocks refused", test_lz4_dependent_blocks);
    int r = unit_run();
    compress_thread_cleanup();
    return r;
}
