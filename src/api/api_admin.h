/* The admin API family: topics (CreateTopics, DeleteTopics,
 * CreatePartitions), configs (DescribeConfigs, AlterConfigs,
 * IncrementalAlterConfigs), log maintenance (DeleteRecords,
 * DescribeLogDirs), feature levels (UpdateFeatures) and the metadata
 * quorum (DescribeQuorum), at every version Kafka 4.x accepts. The handlers
 * check the request's shape, hand metadata changes to the controller
 * (cluster/ctl.h), which checks them as Kafka's controller does and
 * commits them to the metadata log, and answer once every change of the
 * request is committed or refused, as a delayed operation. */
#ifndef STRAND_API_ADMIN_H
#define STRAND_API_ADMIN_H

#include "api/api.h"
#include "cluster/cfg_def.h"
#include "cluster/ctl.h"

#define API_ADMIN_NENTRIES 10
/* The family's dispatch table (for api_families[] in api.c). */
extern const api_entry_t api_admin_entries[API_ADMIN_NENTRIES];

void api_create_topics(api_req_t *req);
void api_delete_topics(api_req_t *req);
void api_create_partitions(api_req_t *req);
void api_describe_configs(api_req_t *req);
void api_alter_configs(api_req_t *req);
void api_incremental_alter_configs(api_req_t *req);
void api_delete_records(api_req_t *req);
void api_describe_log_dirs(api_req_t *req);
void api_describe_quorum(api_req_t *req);
void api_update_features(api_req_t *req);

/* ConfigResource types. */
enum {
    API_RES_TOPIC = 2,
    API_RES_BROKER = 4,
    API_RES_BROKER_LOGGER = 8,
};

/* Shared by the admin files. */

/* A request that waits for its metadata changes before it is answered:
 * its connection is held meanwhile (muted, as for any request out). */
typedef struct api_admin_wait_s api_admin_wait_t;
struct api_admin_wait_s {
    api_req_t *req;
    int pending;    /* changes submitted and not done */
    int submitting; /* still adding changes */
    int held;
    void (*answer)(api_admin_wait_t *w); /* encodes and replies */
};
void api_admin_wait_init(api_admin_wait_t *w, api_req_t *req,
                         void (*answer)(api_admin_wait_t *w));
/* Submits op on w's behalf; op->done must end with api_admin_wait_done. */
void api_admin_submit(api_admin_wait_t *w, ctl_op_t *op);
void api_admin_wait_done(api_admin_wait_t *w);
/* After the last submit: answers now if nothing is out, else when the
 * last change is done. */
void api_admin_wait_end(api_admin_wait_t *w);

/* An error message copied into the request arena (NULL = null). */
proto_str_t api_admin_msg(api_req_t *req, const char *msg);
/* The message of a refused change: op->msg, or NULL (null on the wire)
 * for a forwarded request that timed out, as Kafka's broker answers it
 * (its TimeoutException carries none). */
const char *api_admin_op_text(const ctl_op_t *op);
/* Kafka's controller refuses a change whose deadline (now + timeout) has
 * passed before it starts: with a timeout of 0 or less nothing is done,
 * and every entry is answered REQUEST_TIMED_OUT (with a null message). */
int api_admin_timed_out(int32_t timeout_ms);
/* op refused so, unsubmitted: api_admin_op_text then gives NULL. */
void api_admin_op_timed_out(ctl_op_t *op);
/* The node id as the string BROKER resources are named by. */
const char *api_admin_node_name(api_req_t *req);
/* A copy of r in the arena (scaled values point into r itself). */
cfg_resolved_t *api_admin_keep(api_req_t *req, const cfg_resolved_t *r);

#endif
