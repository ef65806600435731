/* txn: helpers of the transaction tests (0800-0802): a producer whose
 * every delivery report lands in a slot the test named, a consumer at an
 * isolation level that records what it got partition by partition and
 * where each partition's end was reported, and raw ListOffsets, Fetch and
 * OffsetFetch at an isolation level (librdkafka's watermark query is
 * read_uncommitted only and shows neither the last stable offset nor the
 * aborted transactions of a Fetch answer).
 *
 * The raw requests go to the address given, which must lead the
 * partition (and coordinate the group): these tests run on one broker. A
 * test that calls them links libstrand_batch.a, libstrand_proto.a and
 * libstrand_util.a (see mk/txn_tests.am). Like the rest of testlib, every
 * helper fails the test itself when it cannot do its job. */
#ifndef STRAND_TESTLIB_TXN_H
#define STRAND_TESTLIB_TXN_H

#include <stdint.h>

#include "testlib/testlib.h"

#define TL_READ_UNCOMMITTED 0
#define TL_READ_COMMITTED 1

/* Kafka error codes the transaction tests meet. */
#define TL_ERR_INVALID_PRODUCER_EPOCH 47
#define TL_ERR_UNSTABLE_OFFSET_COMMIT 88
#define TL_ERR_PRODUCER_FENCED 90

/* ---- producing with per-message delivery reports ---- */

/* Where one message's delivery report goes. */
typedef struct tl_txn_slot {
    int done;                /* 1 once the report came */
    rd_kafka_resp_err_t err; /* its error */
    int64_t offset;          /* its offset (-1 on error) */
} tl_txn_slot;

/* tl_conf(bootstrap) with the delivery report callback that fills the
 * slots of tl_txn_send. Caller owns it (or gives it to tl_new). */
rd_kafka_conf_t *tl_txn_conf(const char *bootstrap);
/* Produces value (a string, copied) to topic-p with rk, made from
 * tl_txn_conf; its report goes to *slot (cleared here), which must live
 * until then. Fails the test if the message is not even queued. */
void tl_txn_send(rd_kafka_t *rk, const char *topic, int32_t p, const char *value,
                 tl_txn_slot *slot);
/* The same, returning the error of produce() instead of failing on it. */
rd_kafka_resp_err_t tl_txn_try_send(rd_kafka_t *rk, const char *topic, int32_t p,
                                    const char *value, tl_txn_slot *slot);

/* ---- consuming at an isolation level ---- */

typedef struct tl_txn_msg {
    int64_t offset;
    char *value; /* NUL-terminated copy (a null value: NULL) */
    size_t len;
} tl_txn_msg;

typedef struct tl_txn_part {
    tl_txn_msg *v;
    int n, cap;
    int64_t eof; /* offset of the last end of partition reported, -1 none */
    int eofs;    /* how many were reported */
} tl_txn_part;

/* An assigned consumer (no group membership: group.id is set only for
 * librdkafka's sake, nothing is committed) reading partitions
 * 0..nparts-1 of topic from their start at isolation level iso, with
 * enable.partition.eof so that it tells where each partition ends at
 * that level (the last stable offset for read_committed). */
typedef struct tl_txn_reader {
    rd_kafka_t *rk;
    char *topic;
    int nparts;
    int iso;
    tl_txn_part *parts;
} tl_txn_reader;

/* Caller owns the reader (tl_txn_reader_free). */
tl_txn_reader *tl_txn_reader_new(const char *bootstrap, const char *topic, int nparts, int iso);
/* Polls for at most secs, recording every message (each must come
 * without error, at offsets that only grow) and every end of partition.
 * Returns 1 as soon as every partition p has reported its end at an
 * offset >= until[p] (until NULL: has reported an end again, at any
 * offset, since this call began), 0 when secs ran out. An end is
 * reported once each time the consumer reaches it, so a poll with until
 * NULL on partitions already read to their end lasts secs (or until new
 * data came and was read). */
int tl_txn_reader_poll(tl_txn_reader *r, const int64_t *until, double secs);
/* Total messages recorded over all partitions. */
int tl_txn_reader_count(const tl_txn_reader *r);
/* Checks that partition p holds exactly the n messages given, in that
 * order: offsets[i] with the value values[i] byte for byte. what names
 * the reading in failure messages. */
void tl_txn_reader_expect(const tl_txn_reader *r, int p, int n, const int64_t *offsets,
                          char *const *values, const char *what);
void tl_txn_reader_free(tl_txn_reader *r);

/* ---- raw requests at an isolation level ---- */

/* ListOffsets v`ver` (2+: IsolationLevel) of topic-p at timestamp ts (-1
 * latest, -2 earliest): the offset. Fails on an error code. */
int64_t tl_txn_list_offset(const char *bootstrap, const char *topic, int32_t p, int iso,
                           int64_t ts, int16_t ver);
/* Latest offsets of topic-p at both levels (ListOffsets v7). */
void tl_txn_latest(const char *bootstrap, const char *topic, int32_t p, int64_t *committed,
                   int64_t *uncommitted);

/* One record batch of a Fetch answer, its records' values copied. */
typedef struct tl_txn_batch {
    int64_t base_offset;
    int32_t last_offset_delta;
    int16_t attributes;
    int64_t producer_id;
    int16_t producer_epoch;
    int32_t base_sequence;
    int transactional, control;
    int nrec;
    int64_t *offsets;  /* nrec each */
    char **values;     /* NUL-terminated copies (NULL: a null value) */
    size_t *value_len;
    char **keys;
    size_t *key_len;
    int ctrl_type;     /* control batches: the key's type (0 abort, 1 commit), else -1 */
    int32_t ctrl_coordinator_epoch; /* and the value's coordinator epoch */
} tl_txn_batch;

/* Room for this many aborted transactions in one Fetch answer (0803's
 * long runs abort about one transaction per round in every partition). */
#define TL_TXN_MAX_ABORTED 1024

typedef struct tl_txn_fetch {
    int16_t error;
    int64_t high_watermark, last_stable_offset, log_start_offset;
    int n_aborted;     /* -1: the list was null */
    int64_t aborted_pid[TL_TXN_MAX_ABORTED], aborted_first[TL_TXN_MAX_ABORTED];
    int nbatch;
    tl_txn_batch *batches;
} tl_txn_fetch;

/* Fetch v`ver` (4+) of topic-p from offset at isolation level iso (max
 * wait 100 ms, 1 MB at most), its batches walked (CRCs checked) and
 * decoded. Caller frees with tl_txn_fetch_free. */
void tl_txn_fetch_raw(const char *bootstrap, const char *topic, int32_t p, int64_t offset,
                      int iso, int16_t ver, tl_txn_fetch *out);
void tl_txn_fetch_free(tl_txn_fetch *f);

/* OffsetFetch v7 of group for topic partitions 0..nparts-1, RequireStable
 * as asked: each partition's offset, error and metadata (a NUL-terminated
 * copy, caller frees; may be NULL when metadata is not wanted). The
 * top-level error must be 0. */
void tl_txn_offset_fetch(const char *bootstrap, const char *group, const char *topic,
                         int nparts, int require_stable, int64_t *offsets, int16_t *errors,
                         char **metadata);

/* EndTxn v`ver` (0-3: v3 flexible) for transactional id txn_id, producer
 * id and epoch, commit or abort, sent to the coordinator at bootstrap:
 * the answer's error code. Encoded by hand (the generated codecs have no
 * EndTxn yet), for the answers to a fenced producer. */
int16_t tl_txn_end_txn_raw(const char *bootstrap, const char *txn_id, int64_t pid,
                           int16_t epoch, int commit, int16_t ver);

#endif
