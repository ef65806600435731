/* unit_fworld: the world of the log fault tests (test_log_fault,
 * test_log_fault_mgr): a log with small segments and a model of what it
 * acknowledged, the operations that keep the two in step, and the checks
 * that compare them (offsets, bytes, timestamps, both indexes, the epoch
 * checkpoint, snapshot files, producer state). A helper file because both
 * programs build batches and configs this way, and the checks are the
 * heart of the fault loop: one copy, so a check added is made everywhere. */
#ifndef STRAND_TESTS_UNIT_FWORLD_H
#define STRAND_TESTS_UNIT_FWORLD_H

#include <stddef.h>
#include <stdint.h>

#include "log/log.h"

#define FW_NOW 1700000000000LL
#define FW_PID 4242
#define FW_MAX_BATCHES 64
#define FW_MAX_RUNS 2000 /* a scenario making more calls than this is a bug */

/* One acknowledged batch of the model. */
typedef struct fw_mbatch_s {
    int64_t base, last;
    int64_t first_ts;
    int32_t epoch;
    int32_t last_seq; /* -1: not a producer batch */
    uint8_t *bytes;   /* as stored, base offset and epoch set */
    size_t len;
} fw_mbatch_t;

typedef struct fw_world_s {
    char dir[320];
    log_config_t cfg;
    log_t *log;
    fw_mbatch_t m[FW_MAX_BATCHES];
    int n;
    int64_t lso;      /* expected log start offset */
    int64_t leo;      /* expected log end offset */
    int next_id;
    int64_t next_ts;
    int32_t next_seq; /* of producer FW_PID */
} fw_world_t;

/* Makes the program's scratch root, on tmpfs (/dev/shm) when there is one,
 * else under /tmp (name in its path); 0 or -1. The root is this file's one
 * static, set once by main before the tests run; fw_root() is its path,
 * fw_root_remove() removes it and all below. */
int fw_root_init(const char *name);
const char *fw_root(void);
void fw_root_remove(void);

/* A v2 batch of nrec records (values "b<id>r<k>" padded to 40 bytes,
 * timestamps ts, ts+1, ...), base offset 0, of producer FW_PID at
 * sequence seq unless seq < 0. Caller frees; *len gets the size. */
uint8_t *fw_mkbatch(int id, int nrec, int64_t ts, int32_t seq, size_t *len);
/* Segments of about three batches, an index entry for nearly every
 * batch, 4 KiB index files, no retention by time. */
log_config_t fw_small_cfg(void);
/* Open arguments of partition t-0 with these checkpointed offsets. */
log_open_args_t fw_open_args(int64_t rp, int64_t lso, int clean);
/* The bytes a read result points at (asserting a full read); caller
 * frees, the fd stays open. */
uint8_t *fw_read_region(const log_read_result_t *r);

/* A new empty log in a fresh directory under the root, and its model;
 * fw_done() frees both and removes the directory. */
void fw_init(fw_world_t *w);
void fw_done(fw_world_t *w);
/* Drops the model's batches wholly below lso or at or above end. */
void fw_model_trim(fw_world_t *w, int64_t lso, int64_t end);
/* The producer's next sequence after the model's batches. */
void fw_resync_seq(fw_world_t *w);
/* Appends a batch of nrec records at epoch (producer batch if prod). On
 * success the model gains it; on failure the error must be
 * KAFKA_STORAGE_ERROR and the log unchanged (or offline). Returns the
 * error. */
int16_t fw_append(fw_world_t *w, int nrec, int32_t epoch, int prod);

/* The leader-epoch-checkpoint file says what the cache says, once the
 * entries below the log start are trimmed from it as the next open does. */
void fw_check_epoch_file(log_t *log);
/* The log holds exactly the model: offsets, bytes, timestamps, indexes,
 * epoch file, snapshot files (faults paused while it looks). */
void fw_check_log(fw_world_t *w);
/* Epochs and producer state after a reopen agree with the model. */
void fw_check_state(fw_world_t *w);
/* After the fault is gone: a log that is not offline must take appends
 * again; an offline one must refuse everything. */
void fw_check_alive(fw_world_t *w);
/* Reopens the log as the log manager would after a clean close, or after
 * a crash (crash != 0: nothing written, the checkpointed offsets as they
 * were), and checks it holds exactly what was acknowledged. */
void fw_reopen(fw_world_t *w, int crash);

#endif
