/* Produce, shared by its request steps (api_produce.c) and the write
 * queue (api_wq.c): the in-flight request and its partitions. */
#ifndef STRAND_API_PRODUCE_H
#define STRAND_API_PRODUCE_H

#include "api/api.h"
#include "api/api_flush.h"
#include "log/log.h"
#include "net/net_pool.h"

/* A partition of the answer that waits for the flush round. */
typedef struct api_produce_flushed_s {
    proto_produce_resp_partition_produce_response_t *pr;
    uint8_t topic_id[16];
    int32_t partition;
} api_produce_flushed_t;

/* One partition's batch through the steps. */
typedef struct api_produce_ent_s {
    proto_str_t topic;
    uint8_t topic_id[16]; /* the topic found at step 1 (all zero: none) */
    proto_produce_req_partition_produce_data_t *pd;
    proto_produce_resp_partition_produce_response_t *pr;
    log_batch_limits_t lim;
    log_batch_hdr_t hdr;
    log_batch_vinfo_t info;
    int16_t err;      /* the partition's answer so far (checks, validation, append) */
    int16_t verr;     /* from validation */
    log_write_t wr;   /* a placed batch: the write to run (wr.fd >= 0) */
    uint64_t log_uid; /* the log it was placed in */
    buf_t rebuilt;    /* the batch recompressed to the topic's codec */
} api_produce_ent_t;

/* A Produce request in flight, in the request's arena. While a job holds
 * it (validation or writes on a worker), the worker owns the batches it
 * reads; the loop changes nothing they point to. */
typedef struct api_produce_s {
    api_flush_waiter_t w; /* first: the flush waiter is the request */
    net_job_t job;        /* validation on a worker */
    api_req_t *req;
    int16_t acks;
    int held;      /* holds its connection (net_conn_hold) */
    int cancelled; /* the connection closed: no answer */
    proto_produce_resp_t resp;
    api_produce_ent_t *ents;
    int nents;
    int nplaced; /* ents [0, nplaced) are placed or final (write queue) */
    api_produce_flushed_t *ent; /* answers waiting for the flush round */
    int nent, capent;
    struct api_produce_s *wq_next; /* write queue link */
} api_produce_t;

/* Places ent's batch in its log (log_append_place). Returns
 * LOG_APPEND_AGAIN (nothing done: retry after the pending writes are
 * committed) or 0: the ent is final (ent->err), or has a write to run. */
int api_produce_place(api_produce_t *ap, api_produce_ent_t *ent);
/* Commits ent's written batch (the log is looked up again and must be
 * the one it was placed in), then wakes readers. */
void api_produce_commit(api_produce_t *ap, api_produce_ent_t *ent);
/* Answers (unless the connection closed) and lets the connection go. The
 * request is gone afterwards. */
void api_produce_answer(api_produce_t *ap);

/* The write queue: requests whose batches are written on the pool, one
 * job of writes at a time, in arrival order. */
/* Queues ap (validated; its connection held) for placing and writing. */
void api_wq_add(broker_t *b, api_produce_t *ap);
/* Nothing queued or being written: a request may append on the loop. */
int api_wq_idle(broker_t *b);
/* Shutdown, after the pool is gone: frees the queue state. */
void api_wq_free(broker_t *b);

#endif
