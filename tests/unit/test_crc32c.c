/* CRC-32C: known check values and agreement of the hardware and table
 * paths on every length and alignment the interleaving code branches on. */
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"
#include "util/crc32c.h"

static void test_check_value(void)
{
    CU_ASSERT_EQUAL(crc32c(0, "123456789", 9), 0xE3069283u);
    CU_ASSERT_EQUAL(crc32c_sw(0, "123456789", 9), 0xE3069283u);
    CU_ASSERT_EQUAL(crc32c(0, "", 0), 0u);
}

/* RFC 3720 (iSCSI) appendix B.4 vectors. */
static void test_rfc3720(void)
{
    uint8_t buf[32];
    memset(buf, 0, sizeof(buf));
    CU_ASSERT_EQUAL(crc32c(0, buf, 32), 0x8A9136AAu);
    memset(buf, 0xff, sizeof(buf));
    CU_ASSERT_EQUAL(crc32c(0, buf, 32), 0x62A8AB43u);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)i;
    CU_ASSERT_EQUAL(crc32c(0, buf, 32), 0x46DD794Eu);
    for (int i = 0; i < 32; i++)
        buf[i] = (uint8_t)(31 - i);
    CU_ASSERT_EQUAL(crc32c(0, buf, 32), 0x113FDB5Cu);
}

static void test_continuation(void)
{
    const char *s = "123456789";
    for (size_t cut = 0; cut <= 9; cut++)
        CU_ASSERT_EQUAL(crc32c(crc32c(0, s, cut), s + cut, 9 - cut), 0xE3069283u);
}

static void test_hw_matches_sw_small(void)
{
    if (!crc32c_hw_available()) {
        printf("(no SSE4.2: hardware path not tested) ");
        return;
    }
    uint8_t buf[300 + 16];
    srand(42);
    for (size_t i = 0; i < sizeof(buf); i++)
        buf[i] = (uint8_t)rand();
    int bad = 0;
    for (size_t off = 0; off < 8; off++)
        for (size_t n = 0; n <= 300; n++)
            if (crc32c_hw(0, buf + off, n) != crc32c_sw(0, buf + off, n))
                bad++;
    CU_ASSERT_EQUAL(bad, 0);
}

/* Lengths around the SHORT (3 x 256) and LONG (3 x 8192) rounds. */
static void test_hw_matches_sw_big(void)
{
    if (!crc32c_hw_available())
        return;
    size_t max = 3 * 8192 * 2 + 3 * 256 * 3 + 64;
    uint8_t *buf = malloc(max + 8);
    srand(7);
    for (size_t i = 0; i < max + 8; i++)
        buf[i] = (uint8_t)rand();
    size_t lens[] = {767, 768, 769, 1535, 1536, 1600, 24575, 24576, 24577, 24576 + 768 + 5,
                     49152, 49152 + 2304 + 63, max};
    int bad = 0;
    for (size_t k = 0; k < sizeof(lens) / sizeof(lens[0]); k++)
        for (size_t off = 0; off < 3; off++)
            if (crc32c_hw(0x12345678u, buf + off, lens[k]) != crc32c_sw(0x12345678u, buf + off, lens[k]))
                bad++;
    CU_ASSERT_EQUAL(bad, 0);
    free(buf);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("crc32c", NULL, NULL);
    CU_add_test(s, "check value", test_check_value);
    CU_add_test(s, "rfc3720 vectors", test_rfc3720);
    CU_add_test(s, "continuation", test_continuation);
    CU_add_test(s, "hw == sw, 0..300 bytes, unaligned", test_hw_matches_sw_small);
    CU_add_test(s, "hw == sw, interleaved sizes", test_hw_matches_sw_big);
    return unit_run();
}
