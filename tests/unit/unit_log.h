/* Helpers of the log module's unit tests (tests/unit/test_log*.c): record
 * batches encoded by hand, so that those tests do not depend on the batch
 * encoder, and scratch files. */
#ifndef STRAND_TESTS_UNIT_LOG_H
#define STRAND_TESTS_UNIT_LOG_H

#include <stddef.h>
#include <stdint.h>

#include "util/buf.h"

/* One batch: magic 2, uncompressed, base offset 0, partition leader
 * epoch -1, CreateTime, no keys or headers. */
typedef struct unit_batch_s {
    int n;             /* records */
    const int64_t *ts; /* record i's timestamp, or NULL: ts0 + i * dts */
    int64_t ts0;
    int64_t dts;
    int64_t pid;       /* producer id, epoch, base sequence; -1: none */
    int16_t pepoch;
    int32_t seq;
    /* Appends record i's value to out. */
    void (*value)(buf_t *out, int i, const void *arg);
    const void *arg;
} unit_batch_t;

/* The batch's bytes, CRC-32C set: baseTimestamp is record 0's,
 * maxTimestamp the largest. Caller frees; *len gets the size. */
uint8_t *unit_batch(const unit_batch_t *b, size_t *len);

/* Removes path and everything below it. */
void unit_rm_rf(const char *path);
/* The first 64 KiB of a file, NUL-terminated; caller frees. NULL when it
 * cannot be opened. */
char *unit_slurp(const char *path);

#endif
