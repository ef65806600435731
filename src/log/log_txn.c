/* The log's side of transactions: each appended batch goes through the
 * producer state, and a transaction it aborts into the aborted-transaction
 * index of the segment holding the marker; the last stable offset; the
 * aborted transactions a read_committed fetch is told of. */
#include "log/log_int.h"

#include <string.h>

#include "util/logging.h"

int log_track_batch(log_t *log, log_segment_t *seg, const log_batch_hdr_t *h,
                    const uint8_t *batch, size_t len)
{
    log_aborted_t ab;
    int r;

    if (!log_pstate_update(&log->pstate, h, batch, len, &ab))
        return 0;
    r = log_txnidx_append(&seg->txn, &ab);
    if (r < 0) {
        lg_error("log %s: cannot write the transaction index: %s", log->dir, strerror(errno));
        return -1;
    }
    if (r > 0)
        log->dir_dirty = 1;
    return 0;
}

int64_t log_last_stable_offset(const log_t *log)
{
    int64_t first = log_pstate_first_unstable(&log->pstate);

    return first >= 0 && first < log->hwm ? first : log->hwm;
}

int16_t log_aborted_txns(log_t *log, int64_t offset, int64_t upper, log_aborted_list_t *out)
{
    if (log_is_down(log))
        return KERR_KAFKA_STORAGE_ERROR;
    for (int i = log_seg_floor(log, offset); i < log->nsegs; i++) {
        int r = log_txnidx_collect(&log->segs[i]->txn, offset, upper, out);
        if (r < 0)
            return KERR_KAFKA_STORAGE_ERROR;
        if (r == 1)
            break;
    }
    return KERR_NONE;
}

int64_t log_read_upper_offset(log_t *log, const log_read_result_t *r)
{
    int i = log_seg_floor(log, r->first_offset); /* the segment log_read read */
    int64_t off;

    if (log_oidx_first_from(&log->segs[i]->oidx, r->file_pos + r->len, &off))
        return off;
    return i + 1 < log->nsegs ? log->segs[i + 1]->base_offset : log_end_offset(log);
}
