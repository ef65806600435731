/* The record_errors of a Produce answer (api_produce_err.c). */
#ifndef STRAND_API_PRODUCE_ERR_H
#define STRAND_API_PRODUCE_ERR_H

#include "api/api.h"
#include "partition/part_append.h"

/* Fills pr's record_errors, error message and log start offset as Kafka
 * does when the per-record checks rejected records of ent's batch (every
 * one listed, in req's arena); returns 1, or 0 when validation failed
 * otherwise (pr is then untouched). */
int api_produce_record_errors(api_req_t *req, const part_append_ent_t *ent,
                              proto_produce_resp_partition_produce_response_t *pr);

#endif
