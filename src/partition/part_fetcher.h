/* The follower fetchers of a quorum's broker, as Kafka's
 * ReplicaFetcherManager runs them: num.replica.fetchers fetchers per
 * leader broker (a partition goes to fetcher (31 * topic hash +
 * partition) mod n, as Kafka's getFetcherId), each one outbound
 * connection (net_out) to the leader's inter-broker listener, on the
 * event loop. A fetcher keeps one Fetch in flight for its partitions
 * (replica.fetch.wait.max.ms, replica.fetch.min.bytes,
 * replica.fetch.max.bytes per partition, replica.fetch.response.max.bytes
 * in all), appends what comes as it is (log_append_replica: offsets and
 * epochs kept, CRCs checked, the epoch cache following the batches),
 * takes the leader's high watermark and log start, truncates on a
 * diverging epoch and handles OFFSET_OUT_OF_RANGE with ListOffsets as
 * Kafka's follower does (part_fetcher_oor.c). A partition in error waits
 * replica.fetch.backoff.ms. */
#ifndef STRAND_PARTITION_PART_FETCHER_H
#define STRAND_PARTITION_PART_FETCHER_H

#include "partition/part.h"

typedef struct part_fetchers_s part_fetchers_t;

/* The fetchers of reg (its loop set, part_attach), following every
 * partition reg has as a follower. Owned by the caller
 * (part_fetchers_free). */
part_fetchers_t *part_fetchers_new(part_reg_t *reg);
/* Stops every fetcher (requests in flight are dropped). NULL is ignored. */
void part_fetchers_free(part_fetchers_t *fs);

/* part fetches from part->leader from now on (moved from the fetcher of
 * a former leader). Before part_attach: nothing, the fetchers pick it up
 * when they start. */
void part_fetcher_follow(part_reg_t *reg, part_t *part);
/* part is not fetched any more (led here, leaderless, or going). */
void part_fetcher_unfollow(part_reg_t *reg, part_t *part);

/* Where a follower's log is truncated when the leader answers with a
 * diverging epoch (epoch, end): Kafka's getOffsetTruncationState. To the
 * end of that epoch here when we have it (never past the leader's end of
 * it); when we do not, to the end of the largest epoch below it (the next
 * fetch then settles the rest); with no epoch at or below it, to the
 * leader's end. Never past our log end; the high watermark when the
 * leader knows no such epoch either. */
int64_t part_fetcher_truncation(const log_t *log, int32_t epoch, int64_t end);

#endif
