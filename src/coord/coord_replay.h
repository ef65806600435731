/* The replay of a coordinator's internal topic (__consumer_offsets,
 * __transaction_state): a partition's records read back from its log, a
 * slice at a time, for a coordinator to rebuild its state when it becomes
 * the partition's leader. Control batches (transaction markers) are
 * passed to the batch callback, the records of the others one by one. */
#ifndef STRAND_COORD_COORD_REPLAY_H
#define STRAND_COORD_COORD_REPLAY_H

#include <stdint.h>

#include "log/log_batch.h"
#include "partition/part.h"

typedef struct coord_replay_s {
    const char *topic; /* for the log lines */
    int32_t part;
    int64_t next;      /* the next offset to apply */
    int64_t end;       /* the log end when the replay began */
    int64_t records;   /* applied so far */
    void *ctx;
    /* One record at or after next (value NULL, value_len -1: a
     * tombstone), of the batch whose header is h. */
    void (*record)(void *ctx, int32_t part, const log_batch_hdr_t *h, const log_record_t *rec);
    /* A control batch (h, and its bytes); NULL: skipped. */
    void (*control)(void *ctx, int32_t part, const log_batch_hdr_t *h, const uint8_t *batch,
                    size_t len);
} coord_replay_t;

/* Starts r over part's log, from its start to its end now. */
void coord_replay_begin(coord_replay_t *r, part_t *part);
/* Reads up to about budget bytes. Returns the bytes read, or -1 when the
 * partition is done (its end reached, or an error that ends it: logged). */
int64_t coord_replay_some(coord_replay_t *r, part_t *part, int64_t budget);

#endif
