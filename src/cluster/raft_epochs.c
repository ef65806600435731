/* The log's epochs as the Raft core keeps them: the first offset of each
 * epoch present in the log, ascending (Kafka's leader-epoch cache of the
 * metadata log). They answer the two questions of KRaft's log checks: a
 * candidate's last epoch (is its log as up to date as ours?) and where a
 * fetcher's last epoch ends in our log (has it diverged?). */
#include <string.h>

#include "cluster/raft_int.h"

int32_t raft_last_epoch(const raft_t *raft)
{
    if (raft->nepochs == 0)
        return raft->snap_epoch;
    return raft->epochs[raft->nepochs - 1].epoch;
}

/* Records of epoch from offset base on; a newer epoch than the last
 * starts a new entry. When the table is full the oldest entry goes: a
 * fetcher whose last epoch is older than every one we know is told to
 * truncate to the start of the oldest we know, more than it needs, never
 * less. (A snapshot normally trims the table long before.) */
void raft_epoch_append(raft_t *raft, int32_t epoch, int64_t base)
{
    if (raft->nepochs > 0 && raft->epochs[raft->nepochs - 1].epoch >= epoch)
        return;
    if (raft->nepochs == RAFT_MAX_EPOCHS) {
        memmove(&raft->epochs[0], &raft->epochs[1],
                (RAFT_MAX_EPOCHS - 1) * sizeof(raft->epochs[0]));
        raft->nepochs--;
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
