/* Kafka UUIDs (topic ids, cluster.id, directory.id): 16 random bytes with
 * the version-4 bits Java's UUID.randomUUID() sets, written as Kafka's
 * Uuid.toString() does: 22 characters of URL-safe base64 without padding. */
#ifndef STRAND_UTIL_UUID_H
#define STRAND_UTIL_UUID_H

#include <stdint.h>

#define UUID_STR_LEN 22 /* characters, without the NUL */

/* Fills out with a random version-4 UUID. Like Kafka's Uuid.randomUuid()
 * it never returns the reserved all-zero and 0...01 ids, nor one whose
 * string form starts with '-' (which would read as a command-line flag).
 * Returns 0, or -1 with errno if the kernel has no randomness to give. */
int uuid_generate(uint8_t out[16]);

/* Writes the 22-character string and a NUL into out. */
void uuid_to_base64(const uint8_t id[16], char out[UUID_STR_LEN + 1]);

/* Parses a 22-character URL-safe base64 string (surrounding text not
 * allowed). Returns 0, or -1 if s is not such a string. */
int uuid_from_base64(const char *s, uint8_t out[16]);

/* 1 if all 16 bytes are zero (Kafka's Uuid.ZERO_UUID, "no id"). */
int uuid_is_zero(const uint8_t id[16]);

#endif
