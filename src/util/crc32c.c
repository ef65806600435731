/* CRC-32C. Every produced batch is checksummed once on arrival (and again
 * when the broker rewrites its timestamp), so this sits on the produce hot
 * path. The hardware path runs three independent crc32 instruction chains
 * over three adjacent blocks, hiding the instruction's 3-cycle latency, and
 * then merges the three partial CRCs with "shift by a block of zeros"
 * operators precomputed as tables. The table fallback is slicing-by-8.
 *
 * All arithmetic is on the raw CRC register (the value before the final
 * inversion); it is linear: reg(c, A||B) = shift(reg(c, A), |B|) ^
 * reg(0, B), which is what makes the interleaving possible. */
#include "util/crc32c.h"

#include <string.h>

#define CRC32C_POLY 0x82F63B78u

/* Interleaved block sizes of the hardware path: three LONG blocks per
 * round while at least 3*LONG bytes remain, then SHORT ones. */
#define CRC32C_LONG 8192
#define CRC32C_SHORT 256

static uint32_t crc32c_table[8][256];
static uint32_t crc32c_long_op[4][256];
static uint32_t crc32c_short_op[4][256];
static int crc32c_have_hw;

static inline uint64_t crc32c_load64(const uint8_t *p)
{
    uint64_t v;
    memcpy(&v, p, sizeof(v));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
    v = __builtin_bswap64(v);
#endif
    return v;
}

static uint32_t crc32c_sw_reg(uint32_t c, const uint8_t *p, size_t n)
{
    while (n && ((uintptr_t)p & 7)) {
        c = crc32c_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
        n--;
    }
    while (n >= 8) {
        uint64_t v = crc32c_load64(p) ^ c;
        c = crc32c_table[7][v & 0xff] ^ crc32c_table[6][(v >> 8) & 0xff] ^
            crc32c_table[5][(v >> 16) & 0xff] ^ crc32c_table[4][(v >> 24) & 0xff] ^
            crc32c_table[3][(v >> 32) & 0xff] ^ crc32c_table[2][(v >> 40) & 0xff] ^
            crc32c_table[1][(v >> 48) & 0xff] ^ crc32c_table[0][v >> 56];
        p += 8;
        n -= 8;
    }
    while (n--)
        c = crc32c_table[0][(c ^ *p++) & 0xff] ^ (c >> 8);
    return c;
}

uint32_t crc32c_sw(uint32_t crc, const void *p, size_t n)
{
    return ~crc32c_sw_reg(~crc, p, n);
}

/* Applies a precomputed shift operator: the register after appending the
 * operator's number of zero bytes. */
static inline uint32_t crc32c_shift(uint32_t op[4][256], uint32_t c)
{
    return op[0][c & 0xff] ^ op[1][(c >> 8) & 0xff] ^ op[2][(c >> 16) & 0xff] ^
           op[3][c >> 24];
}

/* Builds the operator for nbytes zero bytes: the image of each register
 * bit, found by running the bit through nbytes table steps, then tables
 * that XOR the images of the bits of each byte. Costs 32 * nbytes table
 * steps once at startup (well under a millisecond for LONG). */
static void crc32c_build_op(uint32_t op[4][256], size_t nbytes)
{
    uint32_t img[32];
    for (int bit = 0; bit < 32; bit++) {
        uint32_t c = 1u << bit;
        for (size_t i = 0; i < nbytes; i++)
            c = crc32c_table[0][c & 0xff] ^ (c >> 8);
        img[bit] = c;
    }
    for (int k = 0; k < 4; k++) {
        for (int b = 0; b < 256; b++) {
            uint32_t v = 0;
            for (int j = 0; j < 8; j++)
                if (b & (1 << j))
                    v ^= img[8 * k + j];
            op[k][b] = v;
        }
    }
}

#if defined(__x86_64__)
#include <nmmintrin.h>

#define CRC32C_HW __attribute__((target("sse4.2")))

CRC32C_HW static inline uint32_t crc32c_hw_bytes(uint32_t c, const uint8_t *p, size_t n)
{
    while (n--)
        c = _mm_crc32_u8(c, *p++);
    return c;
}

/* One interleaved round over 3 * blk bytes. */
CRC32C_HW static inline uint32_t crc32c_hw_round(uint32_t c, const uint8_t *p, size_t blk,
                                                 uint32_t op[4][256])
{
    uint64_t c0 = c, c1 = 0, c2 = 0;
    const uint8_t *end = p + blk;
    while (p < end) {
        c0 = _mm_crc32_u64(c0, crc32c_load64(p));
        c1 = _mm_crc32_u64(c1, crc32c_load64(p + blk));
        c2 = _mm_crc32_u64(c2, crc32c_load64(p + 2 * blk));
        p += 8;
    }
    c = crc32c_shift(op, (uint32_t)c0) ^ (uint32_t)c1;
    return crc32c_shift(op, c) ^ (uint32_t)c2;
}

CRC32C_HW uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    uint32_t c = ~crc;
    size_t head = (8 - ((uintptr_t)p & 7)) & 7;
    if (head > n)
        head = n;
    c = crc32c_hw_bytes(c, p, head);
    p += head;
    n -= head;
    while (n >= 3 * CRC32C_LONG) {
        c = crc32c_hw_round(c, p, CRC32C_LONG, crc32c_long_op);
        p += 3 * CRC32C_LONG;
        n -= 3 * CRC32C_LONG;
    }
    while (n >= 3 * CRC32C_SHORT) {
        c = crc32c_hw_round(c, p, CRC32C_SHORT, crc32c_short_op);
        p += 3 * CRC32C_SHORT;
        n -= 3 * CRC32C_SHORT;
    }
    uint64_t c64 = c;
    while (n >= 8) {
        c64 = _mm_crc32_u64(c64, crc32c_load64(p));
        p += 8;
        n -= 8;
    }
    return ~crc32c_hw_bytes((uint32_t)c64, p, n);
}

static int crc32c_detect_hw(void)
{
    __builtin_cpu_init();
    return __builtin_cpu_supports("sse4.2");
}
#else
uint32_t crc32c_hw(uint32_t crc, const void *buf, size_t n)
{
    return crc32c_sw(crc, buf, n);
}

static int crc32c_detect_hw(void)
{
    return 0;
}
#endif

/* Runs before main() so the hot path never checks for initialisation
 * and no thread can race on the tables. */
__attribute__((constructor)) static void crc32c_init(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c & 1) ? (c >> 1) ^ CRC32C_POLY : c >> 1;
        crc32c_table[0][i] = c;
    }
    for (int t = 1; t < 8; t++)
        for (int i = 0; i < 256; i++)
            crc32c_table[t][i] = (crc32c_table[t - 1][i] >> 8) ^
                                 crc32c_table[0][crc32c_table[t - 1][i] & 0xff];
    crc32c_have_hw = crc32c_detect_hw();
    if (crc32c_have_hw) {
        crc32c_build_op(crc32c_long_op, CRC32C_LONG);
        crc32c_build_op(crc32c_short_op, CRC32C_SHORT);
    }
}

int crc32c_hw_available(void)
{
    return crc32c_have_hw;
}

uint32_t crc32c(uint32_t crc, const void *p, size_t n)
{
    return crc32c_have_hw ? crc32c_hw(crc, p, n) : crc32c_sw(crc, p, n);
}
