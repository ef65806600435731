/* unit_tlog: what the partition-log test programs split out of one
 * (test_log, test_log_recover, test_log_retain, test_log_pstate,
 * test_log_async) share: the batch they describe by a few numbers, a
 * scratch root with a fresh partition directory per test, small-index
 * configs and the file readers their byte checks use. A helper file
 * rather than a copy in each program, so that every program builds its
 * batches and directories the same way and a fix lands once; it builds on
 * unit_log's hand-encoded batches (no batch encoder). */
#ifndef STRAND_TESTS_UNIT_TLOG_H
#define STRAND_TESTS_UNIT_TLOG_H

#include <stddef.h>
#include <stdint.h>

#include "log/log.h"

#define TL_NOW 1700000000000LL

/* One batch to append: records with values of vsize letters each. */
typedef struct tl_tb_s {
    int n;             /* records */
    int64_t ts0;       /* first record's timestamp */
    int64_t dts;       /* timestamp step between records */
    int64_t pid;       /* -1 none */
    int16_t pepoch;
    int32_t seq;
    size_t vsize;      /* value bytes per record */
    const int64_t *ts; /* explicit timestamps, or NULL */
} tl_tb_t;

/* n records from ts0 on, 1 ms apart, 10-byte values, no producer. */
tl_tb_t tl_tb(int n, int64_t ts0);
/* An uncompressed v2 batch, base offset 0, leader epoch -1, record i's
 * value vsize letters from 'a' + i on. Caller frees; *len gets the size. */
uint8_t *tl_mkbatch(const tl_tb_t *t, size_t *len);

/* Makes the program's scratch root under /tmp (name in its path); 0 or -1.
 * The root is this file's one static, set once by main before the tests
 * run; tl_root_remove() removes it and all below. */
int tl_root_init(const char *name);
void tl_root_remove(void);
/* A new partition directory under the root, not created yet; the string
 * is static, valid until the next call. */
const char *tl_fresh_dir(void);

/* Open arguments of partition t-0, no checkpoints, clean or not. */
log_open_args_t tl_args_clean(int clean);
/* The defaults with 4 KiB index files. */
log_config_t tl_small_cfg(void);
/* Opens dir as tl_args_clean(clean) says; NULL on failure. */
log_t *tl_open_log(const char *dir, const log_config_t *cfg, int clean);
/* Appends a batch at epoch; returns its base offset (asserting success,
 * -1 on failure). */
int64_t tl_append(log_t *log, const tl_tb_t *t, int32_t epoch);

/* dir/name in a static buffer, valid until the next call. */
char *tl_path_in(const char *dir, const char *name);
/* The whole file; caller frees; *len gets its size. NULL when it cannot
 * be opened. */
uint8_t *tl_read_all(const char *path, size_t *len);
/* The file's size, or -1 when it does not exist. */
int64_t tl_file_size(const char *path);
/* The bytes a read result points at (asserting a full read); caller
 * frees, the fd stays open. */
uint8_t *tl_read_region(const log_read_result_t *r);
/* Big-endian integers as files and batches store them. */
int64_t tl_be64(const uint8_t *p);
int32_t tl_be32(const uint8_t *p);

#endif
