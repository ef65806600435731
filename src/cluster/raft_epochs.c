/* The log's epochs as the Raft core keeps them: the first offset of each
 * epoch present in the log, ascending (Kafka's leader-epoch cache of the
 * metadata log). They answer the two questions of KRaft's log checks: a
 * candidate's last epoch (is its log as up to date as ours?) and where a
 * fetcher's last epoch ends in our log (has it diverged?). */
#include <stdlib.h>
#include <string.h>

#include "cluster/raft_int.h"

int32_t raft_last_epoch(const raft_t *raft)
{
    if (raft->nepochs == 0)
        return raft->snap_epoch;
    return raft->epochs[raft->nepochs - 1].epoch;
}

/* Records of epoch from offset base on; a newer epoch than the last
 * starts a new entry. Every epoch of the log is kept (as Kafka's
 * leader-epoch cache keeps them): forgetting one would send a follower
 * whose last epoch it was back further than it diverged, below the high
 * watermark. A snapshot trims the ones before it. */
void raft_epoch_append(raft_t *raft, int32_t epoch, int64_t base)
{
    if (raft->nepochs > 0 && raft->epochs[raft->nepochs - 1].epoch >= epoch)
        return;
    if (raft->nepochs == raft->capepochs) {
        raft->capepochs = raft->capepochs ? 2 * raft->capepochs : 16;
        raft->epochs = realloc(raft->epochs, (size_t)raft->capepochs * sizeof(raft->epochs[0]));
        if (!raft->epochs)
            abort(); /* a few bytes per election */
    }
    raft->epochs[raft->nepochs].epoch = epoch;
    raft->epochs[raft->nepochs].base = base;
    raft->nepochs++;
}

/* The log ends before offset now: epochs starting there or later go. */
void raft_epoch_truncate(raft_t *raft, int64_t offset)
{
    while (raft->nepochs > 0 && raft->epochs[raft->nepochs - 1].base >= offset)
        raft->nepochs--;
}

int64_t raft_epoch_end(const raft_t *raft, int32_t epoch, int32_t *found_epoch)
{
    for (int i = raft->nepochs - 1; i >= 0; i--) {
        if (raft->epochs[i].epoch > epoch)
            continue;
        *found_epoch = raft->epochs[i].epoch;
        return i + 1 < raft->nepochs ? raft->epochs[i + 1].base : raft->end;
    }
    if (raft->snap_epoch <= epoch && raft->log_start > 0) {
        *found_epoch = raft->snap_epoch;
        return raft->nepochs > 0 ? raft->epochs[0].base : raft->end;
    }
    *found_epoch = -1;
    return raft->nepochs > 0 ? raft->epochs[0].base : raft->log_start;
}
