/* A fetch across partitions with long polling, as Kafka's
 * ReplicaManager.fetchMessages and its DelayedFetch: every partition is
 * read (part_read); when the answer holds fewer than min_bytes and no
 * partition is in error, the fetch waits, up to max_wait_ms, for one of
 * its partitions to change, and reads again. Fetch sessions and the
 * shape of the answer are the caller's. */
#ifndef STRAND_PARTITION_PART_FETCH_H
#define STRAND_PARTITION_PART_FETCH_H

#include <stdint.h>

#include "partition/part.h"
#include "partition/part_read.h"

typedef struct part_fetch_item_s {
    /* in: the partition, by topic name or (by_id) id */
    const char *topic;
    int32_t topic_len; /* < 0: null */
    uint8_t topic_id[16];
    int by_id;
    int32_t partition;
    part_read_t rd; /* its inputs set by the caller; the results by the layer */
} part_fetch_item_t;

typedef struct part_fetch_s part_fetch_t;
struct part_fetch_s {
    /* in */
    part_reg_t *reg;
    int32_t max_wait_ms;
    int32_t min_bytes;
    int32_t max_bytes;
    /* A follower's fetch (ReplicaId / ReplicaState): replica set, its
     * node id and broker epoch. Zeroed: a consumer's. */
    int replica;
    int32_t replica_id;
    int64_t replica_epoch;
    /* A consumer's Fetch v11+ (KIP-392): followers serve it too, and a
     * leader may name a replica in the client's rack (rack, rack_len: its
     * rack id, borrowed; empty: none) to read from instead. */
    int any_replica;
    const char *rack;
    int32_t rack_len;
    part_fetch_item_t *items;
    int nitems;
    /* Runs once, on the loop, with every item's results; the regions'
     * descriptors are then the caller's to send or close. */
    void (*done)(part_fetch_t *f);
    void *udata;
    /* the layer's */
    struct part_delay_s *delay;
    int finished;
};

/* Starts f; f must stay valid until done ran or it was cancelled. done
 * may run before part_fetch returns. */
void part_fetch(part_fetch_t *f);
/* The fetcher went away: done will not run. */
void part_fetch_cancel(part_fetch_t *f);
/* Shutting down: answers now with what there is. */
void part_fetch_expire(part_fetch_t *f);

#endif
