/* Transactions in the partition log: the last stable offset as batches of
 * open transactions, their markers and the high watermark move it; the
 * aborted-transaction index, byte for byte as Kafka writes it
 * (<base>.txnindex, protocol/FORMATS.md §7.4), in the segment of each
 * ABORT marker; the aborted list a read_committed read is given and its
 * upper bound; the index after a clean reopen, after a crash (rebuilt by
 * the replay), after truncation and after the segment is deleted. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_batch.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_tlog.h"
#include "util/buf.h"
#include "util/logging.h"

#define TXNIDX0 "00000000000000000000.txnindex"

static int32_t seqs[16]; /* next sequence per producer id */

/* n records of producer pid in its transaction (leader append). */
static int64_t txn_data(log_t *log, int64_t pid, int n)
{
    tl_tb_t t = tl_tb(n, TL_NOW);
    log_append_result_t res;
    size_t len;
    uint8_t *b;
    int16_t err;

    t.pid = pid;
    t.pepoch = 0;
    t.seq = seqs[pid];
    seqs[pid] += n;
    b = tl_mkbatch(&t, &len);
    b[22] |= LOG_BATCH_ATTR_TRANSACTIONAL; /* attributes, low byte */
    log_batch_update_crc(b, len);
    err = log_append(log, b, len, 0, TL_NOW, &res);
    free(b);
    CU_ASSERT_EQUAL(err, 0);
    return err ? -1 : res.base_offset;
}

/* pid's COMMIT or ABORT marker at the log end, as a replica appends it. */
static int64_t txn_marker(log_t *log, int64_t pid, int commit)
{
    buf_t b;
    int64_t at = log_end_offset(log);

    buf_init(&b);
    log_batch_build_txn_marker(&b, pid, 0, commit, 3, TL_NOW);
    for (int i = 0; i < 8; i++) /* base offset: not covered by the CRC */
        b.p[i] = (uint8_t)((uint64_t)at >> (56 - 8 * i));
    CU_ASSERT_EQUAL(log_append_replica(log, b.p, b.len, TL_NOW), 0);
    buf_free(&b);
    return at;
}

static void plain(log_t *log, int n)
{
    tl_tb_t t = tl_tb(n, TL_NOW);
    tl_append(log, &t, 0);
}

/* The entry at index i of a .txnindex file's bytes. */
static void check_entry(const uint8_t *p, int64_t pid, int64_t first, int64_t last, int64_t lso)
{
    CU_ASSERT_EQUAL(p[0], 0);
    CU_ASSERT_EQUAL(p[1], 0);
    CU_ASSERT_EQUAL(tl_be64(p + 2), pid);
    CU_ASSERT_EQUAL(tl_be64(p + 10), first);
    CU_ASSERT_EQUAL(tl_be64(p + 18), last);
    CU_ASSERT_EQUAL(tl_be64(p + 26), lso);
}

static void hw_to_end(log_t *log)
{
    log_set_high_watermark(log, log_end_offset(log));
}

static void test_lso(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);

    memset(seqs, 0, sizeof(seqs));
    CU_ASSERT_EQUAL(txn_data(log, 1, 2), 0); /* 0-1 */
    hw_to_end(log);
    CU_ASSERT_EQUAL(log_high_watermark(log), 2);
    CU_ASSERT_EQUAL(log_last_stable_offset(log), 0);
    plain(log, 2);                           /* 2-3 */
    CU_ASSERT_EQUAL(txn_data(log, 2, 1), 4); /* 4 */
    CU_ASSERT_EQUAL(txn_marker(log, 1, 1), 5);
    /* committed, but the marker is not replicated yet */
    log_set_high_watermark(log, 5);
    CU_ASSERT_EQUAL(log_last_stable_offset(log), 0);
    log_set_high_watermark(log, 6);
    CU_ASSERT_EQUAL(log_last_stable_offset(log), 4);
    CU_ASSERT_EQUAL(txn_marker(log, 2, 0), 6);
    CU_ASSERT_EQUAL(log_last_stable_offset(log), 4);
    hw_to_end(log);
    CU_ASSERT_EQUAL(log_last_stable_offset(log), 7);
    /* an empty transaction's marker */
    CU_ASSERT_EQUAL(txn_marker(log, 3, 0), 7);
    hw_to_end(log);
    CU_ASSERT_EQUAL(log_last_stable_offset(log), 8);
    log_close(log);
}

static void test_index_bytes_and_reopen(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    log_aborted_list_t l = {0};
    uint8_t *f;
    size_t len;

    memset(seqs, 0, sizeof(seqs));
    CU_ASSERT_EQUAL(txn_data(log, 1, 2), 0);   /* 0-1 */
    CU_ASSERT_EQUAL(txn_data(log, 2, 1), 2);   /* 2 */
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, TXNIDX0)), -1);
    CU_ASSERT_EQUAL(txn_marker(log, 2, 0), 3); /* pid 1 still open at 0 */
    CU_ASSERT_EQUAL(txn_marker(log, 1, 1), 4); /* a commit is not indexed */
    CU_ASSERT_EQUAL(txn_data(log, 1, 1), 5);
    CU_ASSERT_EQUAL(txn_marker(log, 1, 0), 6); /* nothing else open */
    f = tl_read_all(tl_path_in(dir, TXNIDX0), &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(len, 68);
    check_entry(f, 2, 2, 3, 0);
    check_entry(f + 34, 1, 5, 6, 7);
    free(f);
    hw_to_end(log);
    CU_ASSERT_EQUAL(log_aborted_txns(log, 0, 7, &l), 0);
    CU_ASSERT_EQUAL_FATAL(l.n, 2);
    CU_ASSERT_EQUAL(l.v[0].producer_id, 2);
    CU_ASSERT_EQUAL(l.v[1].first_offset, 5);
    l.n = 0;
    /* from 4 on only the second; below upper 5 only the first */
    CU_ASSERT_EQUAL(log_aborted_txns(log, 4, 7, &l), 0);
    CU_ASSERT(l.n == 1 && l.v[0].producer_id == 1);
    l.n = 0;
    CU_ASSERT_EQUAL(log_aborted_txns(log, 0, 5, &l), 0);
    CU_ASSERT(l.n == 1 && l.v[0].producer_id == 2);
    l.n = 0;
    CU_ASSERT_EQUAL(txn_data(log, 3, 1), 7); /* open over the reopen */
    CU_ASSERT_EQUAL(log_close(log), 0);

    /* clean: the file as it was, the open transaction from the snapshot */
    log = tl_open_log(dir, &cfg, 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    hw_to_end(log);
    CU_ASSERT_EQUAL(log_last_stable_offset(log), 7);
    CU_ASSERT_EQUAL(log_aborted_txns(log, 0, 8, &l), 0);
    CU_ASSERT_EQUAL(l.n, 2);
    l.n = 0;
    log_free(log); /* crash */
    /* a crash's recovery empties the index and the replay refills it */
    log = tl_open_log(dir, &cfg, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(log);
    f = tl_read_all(tl_path_in(dir, TXNIDX0), &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    CU_ASSERT_EQUAL_FATAL(len, 68);
    check_entry(f, 2, 2, 3, 0);
    check_entry(f + 34, 1, 5, 6, 7);
    free(f);
    hw_to_end(log);
    CU_ASSERT_EQUAL(log_last_stable_offset(log), 7);
    /* truncation takes the entries of the markers it removes */
    CU_ASSERT_EQUAL(log_truncate_to(log, 6), 0);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, TXNIDX0)), 34);
    /* pid 1's transaction from 5 is open again, pid 3's is gone */
    hw_to_end(log);
    CU_ASSERT_EQUAL(log_last_stable_offset(log), 5);
    CU_ASSERT_EQUAL(log_truncate_to(log, 3), 0);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, TXNIDX0)), -1);
    hw_to_end(log);
    CU_ASSERT_EQUAL(log_last_stable_offset(log), 0);
    log_aborted_list_free(&l);
    log_close(log);
}

/* The marker's segment holds the entry; the read's upper bound is the
 * next segment's base (or the LEO), and the search goes on past segments
 * whose entries do not reach it. */
static void test_segments(void)
{
    const char *dir = tl_fresh_dir();
    log_config_t cfg = tl_small_cfg();
    log_t *log = tl_open_log(dir, &cfg, 0);
    log_aborted_list_t l = {0};
    log_read_result_t r;
    char name[64];

    memset(seqs, 0, sizeof(seqs));
    CU_ASSERT_EQUAL(txn_data(log, 1, 2), 0);
    plain(log, 1); /* 2 */
    CU_ASSERT_EQUAL(log_roll(log, TL_NOW), 0);
    CU_ASSERT_EQUAL(txn_marker(log, 1, 0), 3);
    plain(log, 1); /* 4 */
    hw_to_end(log);
    snprintf(name, sizeof(name), "%020d.txnindex", 3);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, name)), 34);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, TXNIDX0)), -1);
    CU_ASSERT_EQUAL(log_read(log, 0, 1 << 20, 1, log_last_stable_offset(log), &r), 0);
    CU_ASSERT(r.len > 0);
    CU_ASSERT_EQUAL(log_read_upper_offset(log, &r), 3);
    CU_ASSERT_EQUAL(log_aborted_txns(log, 0, log_read_upper_offset(log, &r), &l), 0);
    CU_ASSERT(l.n == 1 && l.v[0].first_offset == 0 && l.v[0].last_offset == 3);
    close(r.fd);
    CU_ASSERT_EQUAL(log_read(log, 3, 1 << 20, 1, log_last_stable_offset(log), &r), 0);
    CU_ASSERT_EQUAL(log_read_upper_offset(log, &r), 5);
    close(r.fd);
    /* the segment goes, and its index with it */
    CU_ASSERT_EQUAL(log_delete_records(log, 4), 0);
    CU_ASSERT_EQUAL(log_roll(log, TL_NOW), 0);
    CU_ASSERT_EQUAL(log_delete_records(log, 5), 0);
    CU_ASSERT_EQUAL(tl_file_size(tl_path_in(dir, name)), -1);
    log_aborted_list_free(&l);
    log_close(log);
}

int main(void)
{
    if (tl_root_init("test-log-txn") < 0)
        return 1;
    lg_set_level(LG_ERROR);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("log transactions", NULL, NULL);
    CU_add_test(s, "last stable offset", test_lso);
    CU_add_test(s, "txnindex bytes, reopen, crash, truncation", test_index_bytes_and_reopen);
    CU_add_test(s, "txnindex per segment, read upper bound", test_segments);
    int rc = unit_run();
    tl_root_remove();
    return rc;
}
