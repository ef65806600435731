/* Shared by part_fetcher.c and part_fetcher_oor.c only. */
#ifndef STRAND_PARTITION_PART_FETCHER_INT_H
#define STRAND_PARTITION_PART_FETCHER_INT_H

#include "net/net_loop.h"
#include "net/net_out.h"
#include "partition/part_fetcher.h"

/* One partition a fetcher follows. */
typedef struct pf_key_s {
    uint8_t topic_id[16];
    int32_t partition;
    int32_t req_epoch;    /* the leader epoch of the fetch in flight */
    int64_t delay_until;  /* backing off until then (monotonic ms) */
    int oor;              /* an OFFSET_OUT_OF_RANGE being resolved */
} pf_key_t;

typedef struct part_fetcher_s part_fetcher_t;
struct part_fetcher_s {
    part_fetchers_t *fs;
    int32_t leader;
    int slot;
    net_out_t *out;       /* NULL until the leader's endpoint is known */
    char *host;           /* owned */
    int port;
    pf_key_t *keys;       /* owned */
    int nkeys, cap;
    int inflight;         /* requests on the connection (fetch, ListOffsets) */
    int fetching;         /* a Fetch among them */
    net_timer_id_t timer; /* the next try when every partition backs off */
    part_fetcher_t *next;
};

struct part_fetchers_s {
    part_reg_t *reg;
    part_fetcher_t *list;
    int per_leader;        /* num.replica.fetchers */
    int32_t max_bytes;     /* replica.fetch.max.bytes */
    int32_t min_bytes;     /* replica.fetch.min.bytes */
    int32_t wait_ms;       /* replica.fetch.wait.max.ms */
    int32_t resp_max_bytes;/* replica.fetch.response.max.bytes */
    int32_t backoff_ms;    /* replica.fetch.backoff.ms */
    int32_t timeout_ms;    /* replica.socket.timeout.ms */
};

part_t *pf_part(const part_fetcher_t *f, const pf_key_t *k);
pf_key_t *pf_key_find(part_fetcher_t *f, const uint8_t id[16], int32_t partition);
/* k waits replica.fetch.backoff.ms before its next fetch. */
void pf_backoff(part_fetcher_t *f, pf_key_t *k);
/* The next Fetch, or a timer for the earliest backed-off partition. */
void pf_kick(part_fetcher_t *f);
/* A request of f's ended: the next one, or f goes when it follows
 * nothing any more. */
void pf_request_done(part_fetcher_t *f);
/* OFFSET_OUT_OF_RANGE for k: ListOffsets of the leader (latest, then
 * earliest), then truncate or start again at the leader's log start. */
void pf_out_of_range(part_fetcher_t *f, pf_key_t *k);

#endif
