/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of
 * Kafka's v2 record batches. Computed with the SSE4.2 crc32 instruction
 * when the CPU has it (checked once at startup), else with slicing-by-8
 * tables. */
#ifndef STRAND_UTIL_CRC32C_H
#define STRAND_UTIL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Extends crc (the result of an earlier call, 0 to start) with n bytes:
 * crc32c(crc32c(0, a, na), b, nb) == crc32c(0, a||b, na+nb), and
 * crc32c(0, batch + 21, len - 21) is the batch CRC as Kafka computes it. */
uint32_t crc32c(uint32_t crc, const void *p, size_t n);

/* The two implementations, exposed so tests can compare them.
 * crc32c_hw() may only be called when crc32c_hw_available(). */
uint32_t crc32c_sw(uint32_t crc, const void *p, size_t n);
uint32_t crc32c_hw(uint32_t crc, const void *p, size_t n);
int crc32c_hw_available(void);

#endif
