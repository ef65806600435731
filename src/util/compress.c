/* Kafka's compression codecs over zlib, snappy, lz4 and zstd (the stream
 * formats are described in compress.h).
 *
 * Snappy-java ("xerial") stream layout, written by compress_compress():
 *   0   8  magic 82 53 4E 41 50 50 59 00  ("\x82SNAPPY\0")
 *   8   4  version int32 BE = 1
 *   12  4  compatible version int32 BE = 1
 *   16  …  chunks: [int32 BE compressed length][raw snappy block], each
 *          block the compression of up to 32 KiB of input
 * A reader also skips a repeated 16-byte header between chunks
 * (concatenated streams), as snappy-java does.
 *
 * Decompression appends to a growing buf_t and never lets the output pass
 * max_out: the decoders get an output window clipped to max_out + 1 bytes,
 * so one byte too many is enough to detect a bomb without decoding it. */
#include "util/compress.h"

#include <limits.h>
#include <lz4frame.h>
#include <snappy-c.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#include <zstd.h>

#include "util/mem.h"

#define CZ_SNAPPY_BLOCK (32 * 1024)
#define CZ_SNAPPY_HDR 16
#define CZ_MIN_GROW (64 * 1024)

static const uint8_t cz_xerial_magic[8] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0};

/* Decoder contexts cached per thread: creating a zstd or zlib context
 * costs more than decoding a small batch. */
static __thread z_stream *cz_inflate;
static __thread LZ4F_dctx *cz_lz4d;
static __thread ZSTD_DCtx *cz_zstdd;
static __thread ZSTD_CCtx *cz_zstdc;

/* One decompression in progress. */
typedef struct cz_out_s {
    buf_t *out;
    size_t start;   /* out->len when the call began */
    size_t max_out;
    int over;       /* set when the output hit max_out */
} cz_out_t;

static size_t cz_produced(const cz_out_t *o)
{
    return o->out->len - o->start;
}

/* Returns the next output window, *avail bytes, at least min(hint, room)
 * where room keeps the total at most max_out + 1. *avail is 0 only when
 * that limit is reached. */
static uint8_t *cz_window(cz_out_t *o, size_t hint, size_t *avail)
{
    size_t produced = cz_produced(o);
    size_t limit = o->max_out == SIZE_MAX ? SIZE_MAX : o->max_out + 1;
    size_t room = limit - produced;
    size_t want = produced > hint ? produced : hint;
    if (want < CZ_MIN_GROW)
        want = CZ_MIN_GROW;
    if (want > room)
        want = room;
    if (!room) {
        o->over = 1;
        *avail = 0;
        return NULL;
    }
    uint8_t *w = buf_reserve(o->out, want);
    *avail = o->out->cap - o->out->len;
    if (*avail > room)
        *avail = room;
    return w;
}

static int cz_check_max(cz_out_t *o)
{
    if (cz_produced(o) <= o->max_out)
        return 0;
    o->over = 1;
    return -1;
}

static int cz_gunzip(cz_out_t *o, const uint8_t *in, size_t len)
{
    if (len > UINT_MAX)
        return -1;
    if (!cz_inflate) {
        cz_inflate = xcalloc(1, sizeof(*cz_inflate));
        if (inflateInit2(cz_inflate, 16 + MAX_WBITS) != Z_OK) {
            free(cz_inflate);
            cz_inflate = NULL;
            return -1;
        }
    } else if (inflateReset(cz_inflate) != Z_OK) {
        return -1;
    }
    z_stream *zs = cz_inflate;
    zs->next_in = (Bytef *)in;
    zs->avail_in = (uInt)len;
    for (;;) {
        size_t avail;
        uint8_t *w = cz_window(o, len * 4, &avail);
        if (!avail)
            return -1;
        zs->next_out = w;
        zs->avail_out = avail > UINT_MAX ? UINT_MAX : (uInt)avail;
        uInt before = zs->avail_out;
        int r = inflate(zs, Z_NO_FLUSH);
        o->out->len += before - zs->avail_out;
        if (r == Z_STREAM_END) {
            /* Another gzip member follows: Java's GZIPInputStream reads
             * it; anything else after the end is ignored, as there. */
            if (zs->avail_in >= 2 && zs->next_in[0] == 0x1f && zs->next_in[1] == 0x8b) {
                if (inflateReset(zs) != Z_OK)
                    return -1;
                continue;
            }
            break;
        }
        if (r != Z_OK && r != Z_BUF_ERROR)
            return -1;
        if (zs->avail_in == 0 && zs->avail_out > 0)
            return -1; /* truncated */
    }
    return cz_check_max(o);
}

static int cz_unsnappy_block(cz_out_t *o, const uint8_t *in, size_t len)
{
    size_t ulen;
    if (snappy_uncompressed_length((const char *)in, len, &ulen) != SNAPPY_OK)
        return -1;
    if (ulen > o->max_out - cz_produced(o)) {
        o->over = 1;
        return -1;
    }
    uint8_t *w = buf_reserve(o->out, ulen ? ulen : 1);
    size_t got = ulen;
    if (snappy_uncompress((const char *)in, len, (char *)w, &got) != SNAPPY_OK || got != ulen)
        return -1;
    o->out->len += ulen;
    return 0;
}

static int cz_unsnappy(cz_out_t *o, const uint8_t *in, size_t len)
{
    if (len < CZ_SNAPPY_HDR || memcmp(in, cz_xerial_magic, sizeof(cz_xerial_magic)) != 0)
        return cz_unsnappy_block(o, in, len); /* raw block (librdkafka) */
    size_t pos = CZ_SNAPPY_HDR;
    while (pos < len) {
        size_t left = len - pos;
        if (left >= sizeof(cz_xerial_magic) &&
            memcmp(in + pos, cz_xerial_magic, sizeof(cz_xerial_magic)) == 0) {
            if (left < CZ_SNAPPY_HDR)
                return -1;
            pos += CZ_SNAPPY_HDR;
            continue;
        }
        if (left < 4)
            return -1;
        uint32_t clen = ((uint32_t)in[pos] << 24) | ((uint32_t)in[pos + 1] << 16) |
                        ((uint32_t)in[pos + 2] << 8) | in[pos + 3];
        pos += 4;
        if (clen == 0 || clen > len - pos)
            return -1;
        if (cz_unsnappy_block(o, in + pos, clen) < 0)
            return -1;
        pos += clen;
    }
    return 0;
}

static int cz_unlz4_frame(cz_out_t *o, const uint8_t *in, size_t len)
{
    /* Kafka reads only frames of independent blocks (FLG bit 5) and
     * rejects the rest; accepting them would store batches that Kafka's
     * own clients cannot read back. */
    if (len >= 5 && in[0] == 0x04 && in[1] == 0x22 && in[2] == 0x4d && in[3] == 0x18 &&
        !(in[4] & 0x20))
        return -1;
    if (!cz_lz4d) {
        if (LZ4F_isError(LZ4F_createDecompressionContext(&cz_lz4d, LZ4F_VERSION))) {
            cz_lz4d = NULL;
            return -1;
        }
    } else {
        LZ4F_resetDecompressionContext(cz_lz4d);
    }
    size_t pos = 0, r = 1;
    for (;;) {
        size_t avail;
        uint8_t *w = cz_window(o, len * 4, &avail);
        if (!avail)
            return -1;
        size_t dst = avail, src = len - pos;
        r = LZ4F_decompress(cz_lz4d, w, &dst, in + pos, &src, NULL);
        if (LZ4F_isError(r))
            return -1;
        pos += src;
        o->out->len += dst;
        if (pos == len && r == 0)
            break; /* frame complete and flushed, no more input */
        /* The decoder may hold whole blocks of consumed input, so only a
         * call that moves nothing means the input is truncated. */
        if (src == 0 && dst == 0)
            return -1;
    }
    return cz_check_max(o);
}

/* A context that failed on a frame is dropped, not reset: liblz4 1.9.4's
 * LZ4F_resetDecompressionContext keeps the content size of a frame that
 * stopped after its header, and every later frame then fails with
 * frameSize_wrong, so one bad batch would break LZ4 for all producers. */
static int cz_unlz4(cz_out_t *o, const uint8_t *in, size_t len)
{
    if (cz_unlz4_frame(o, in, len) == 0)
        return 0;
    if (cz_lz4d) {
        LZ4F_freeDecompressionContext(cz_lz4d);
        cz_lz4d = NULL;
    }
    return -1;
}

static int cz_unzstd(cz_out_t *o, const uint8_t *in, size_t len)
{
    if (!cz_zstdd) {
        cz_zstdd = ZSTD_createDCtx();
        if (!cz_zstdd)
            return -1;
    } else {
        ZSTD_DCtx_reset(cz_zstdd, ZSTD_reset_session_only);
    }
    size_t hint = len * 4;
    unsigned long long csize = ZSTD_getFrameContentSize(in, len);
    /* Trust a declared content size only as far as is plausible, so a tiny
     * frame cannot make us reserve max_out up front. */
    if (csize != ZSTD_CONTENTSIZE_UNKNOWN && csize != ZSTD_CONTENTSIZE_ERROR &&
        csize < (unsigned long long)len * 256)
        hint = (size_t)csize;
    ZSTD_inBuffer ib = {in, len, 0};
    for (;;) {
        size_t avail;
        uint8_t *w = cz_window(o, hint, &avail);
        if (!avail)
            return -1;
        ZSTD_outBuffer ob = {w, avail, 0};
        size_t in_before = ib.pos;
        size_t r = ZSTD_decompressStream(cz_zstdd, &ob, &ib);
        if (ZSTD_isError(r))
            return -1;
        o->out->len += ob.pos;
        if (ib.pos == ib.size && r == 0)
            break;
        if (ib.pos == in_before && ob.pos == 0)
            return -1; /* no progress: truncated */
    }
    return cz_check_max(o);
}

int compress_decompress(int codec, const uint8_t *in, size_t len, buf_t *out, size_t max_out)
{
    return compress_decompress_ex(codec, in, len, out, max_out, NULL);
}

int compress_decompress_ex(int codec, const uint8_t *in, size_t len, buf_t *out, size_t max_out,
                           int *over_limit)
{
    cz_out_t o = {out, out->len, max_out, 0};
    int r;
    if (over_limit)
        *over_limit = 0;
    switch (codec) {
    case COMPRESS_NONE:
        if (len > max_out) {
            if (over_limit)
                *over_limit = 1;
            return -1;
        }
        buf_put(out, in, len);
        return 0;
    case COMPRESS_GZIP:
        r = cz_gunzip(&o, in, len);
        break;
    case COMPRESS_SNAPPY:
        r = cz_unsnappy(&o, in, len);
        break;
    case COMPRESS_LZ4:
        r = cz_unlz4(&o, in, len);
        break;
    case COMPRESS_ZSTD:
        r = cz_unzstd(&o, in, len);
        break;
    default:
        return -1;
    }
    if (r < 0) {
        out->len = o.start;
        if (over_limit)
            *over_limit = o.over;
    }
    return r;
}

static int cz_gzip(int level, const uint8_t *in, size_t len, buf_t *out)
{
    z_stream zs;
    memset(&zs, 0, sizeof(zs));
    if (len > UINT_MAX)
        return -1;
    if (deflateInit2(&zs, level ? level : Z_DEFAULT_COMPRESSION, Z_DEFLATED, 16 + MAX_WBITS, 8,
                     Z_DEFAULT_STRATEGY) != Z_OK)
        return -1;
    uLong bound = deflateBound(&zs, (uLong)len) + 32;
    uint8_t *w = buf_reserve(out, bound);
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)len;
    zs.next_out = w;
    zs.avail_out = bound > UINT_MAX ? UINT_MAX : (uInt)bound;
    int r = deflate(&zs, Z_FINISH);
    size_t n = zs.total_out;
    deflateEnd(&zs);
    if (r != Z_STREAM_END)
        return -1;
    out->len += n;
    return 0;
}

static int cz_snappy(const uint8_t *in, size_t len, buf_t *out)
{
    uint8_t hdr[CZ_SNAPPY_HDR] = {0x82, 'S', 'N', 'A', 'P', 'P', 'Y', 0, 0, 0, 0, 1, 0, 0, 0, 1};
    buf_put(out, hdr, sizeof(hdr));
    for (size_t pos = 0; pos < len; pos += CZ_SNAPPY_BLOCK) {
        size_t n = len - pos < CZ_SNAPPY_BLOCK ? len - pos : CZ_SNAPPY_BLOCK;
        size_t clen = snappy_max_compressed_length(n);
        size_t at = out->len;
        uint8_t *w = buf_reserve(out, 4 + clen);
        if (snappy_compress((const char *)in + pos, n, (char *)w + 4, &clen) != SNAPPY_OK)
            return -1;
        out->len += 4 + clen;
        buf_set_i32(out, at, (int32_t)clen);
    }
    return 0;
}

static int cz_lz4(int level, const uint8_t *in, size_t len, buf_t *out)
{
    LZ4F_preferences_t prefs;
    memset(&prefs, 0, sizeof(prefs));
    prefs.frameInfo.blockMode = LZ4F_blockIndependent;
    prefs.frameInfo.blockSizeID = LZ4F_max64KB;
    prefs.compressionLevel = level;
    size_t bound = LZ4F_compressFrameBound(len, &prefs);
    uint8_t *w = buf_reserve(out, bound);
    size_t n = LZ4F_compressFrame(w, bound, in, len, &prefs);
    if (LZ4F_isError(n))
        return -1;
    out->len += n;
    return 0;
}

static int cz_zstd(int level, const uint8_t *in, size_t len, buf_t *out)
{
    if (!cz_zstdc && !(cz_zstdc = ZSTD_createCCtx()))
        return -1;
    size_t bound = ZSTD_compressBound(len);
    uint8_t *w = buf_reserve(out, bound);
    size_t n = ZSTD_compressCCtx(cz_zstdc, w, bound, in, len, level ? level : ZSTD_CLEVEL_DEFAULT);
    if (ZSTD_isError(n))
        return -1;
    out->len += n;
    return 0;
}

int compress_compress(int codec, int level, const uint8_t *in, size_t len, buf_t *out)
{
    size_t start = out->len;
    int r;
    switch (codec) {
    case COMPRESS_NONE:
        buf_put(out, in, len);
        return 0;
    case COMPRESS_GZIP:
        r = cz_gzip(level, in, len, out);
        break;
    case COMPRESS_SNAPPY:
        r = cz_snappy(in, len, out);
        break;
    case COMPRESS_LZ4:
        r = cz_lz4(level, in, len, out);
        break;
    case COMPRESS_ZSTD:
        r = cz_zstd(level, in, len, out);
        break;
    default:
        return -1;
    }
    if (r < 0)
        out->len = start;
    return r;
}

void compress_thread_cleanup(void)
{
    if (cz_inflate) {
        inflateEnd(cz_inflate);
        free(cz_inflate);
        cz_inflate = NULL;
    }
    if (cz_lz4d) {
        LZ4F_freeDecompressionContext(cz_lz4d);
        cz_lz4d = NULL;
    }
    ZSTD_freeDCtx(cz_zstdd);
    cz_zstdd = NULL;
    ZSTD_freeCCtx(cz_zstdc);
    cz_zstdc = NULL;
}
