/* The aborted-transaction index of one segment, <base>.txnindex, byte for
 * byte as Kafka's (protocol/FORMATS.md §7.4): one 34-byte entry per
 * transaction whose ABORT marker lies in the segment, in marker order.
 * The file exists only once the segment has one (Kafka creates it on the
 * first entry too). Entries are read into memory the first time they are
 * needed and kept: an aborted transaction costs 32 bytes of memory per
 * partition that holds its marker. Internal to the log module. */
#ifndef STRAND_LOG_LOG_TXNIDX_H
#define STRAND_LOG_LOG_TXNIDX_H

#include <stdint.h>

#include "log/log.h"

#define LOG_TXNIDX_ENTRY 34

typedef struct log_txnidx_s {
    char *path;       /* owned */
    log_aborted_t *v; /* owned; valid once loaded */
    int n;
    int cap;
    int loaded;
    int dirty;        /* written since the last flush began */
} log_txnidx_t;

/* Takes ownership of path. Touches no file. */
void log_txnidx_init(log_txnidx_t *ti, char *path);
void log_txnidx_free(log_txnidx_t *ti);

/* Appends an entry unless one with a last offset >= a->last_offset is
 * there already (a replay of the log meets markers the index has).
 * Returns 1 when the file was created by it, 0 otherwise, -1 with errno
 * when the write failed (nothing is added then). */
int log_txnidx_append(log_txnidx_t *ti, const log_aborted_t *a);
/* Removes the entries whose marker is at or above offset. Returns 0 or -1
 * with errno (the entries in memory are cut all the same: a file longer
 * than them is cut at the next open's recovery). */
int log_txnidx_truncate(log_txnidx_t *ti, int64_t offset);
/* Adds to out the entries with last_offset >= from and first_offset <
 * upper, as Kafka's collectAbortedTxns. Returns 1 when an entry's last
 * stable offset reaches upper (no later segment can add one), 0 when the
 * next segment must be searched too, -1 with errno when the file could
 * not be read. */
int log_txnidx_collect(log_txnidx_t *ti, int64_t from, int64_t upper, log_aborted_list_t *out);
/* fdatasync of the file if it was written since the last flush began.
 * Returns 0 or -1 with errno. */
int log_txnidx_flush(log_txnidx_t *ti);
/* Deletes the file. Returns 0, or -1 with errno (ENOENT is no error). */
int log_txnidx_remove(log_txnidx_t *ti);
/* The entries (loading them). Returns the count, or -1 with errno. */
int log_txnidx_entries(log_txnidx_t *ti, const log_aborted_t **v);

#endif
