/* The admin API family: topics (CreateTopics, DeleteTopics,
 * CreatePartitions), configs (DescribeConfigs, AlterConfigs,
 * IncrementalAlterConfigs) and log maintenance (DeleteRecords,
 * DescribeLogDirs), at every version Kafka 4.x accepts. The handlers
 * validate as Kafka's controller does and change state through the
 * partition registry (partition/part.h), which persists every change in
 * the metadata log. */
#ifndef STRAND_API_ADMIN_H
#define STRAND_API_ADMIN_H

#include "api/api.h"
#include "cluster/cfg_def.h"

#define API_ADMIN_NENTRIES 8
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

/* Error codes of the family beyond kerr.h. */
enum {
    API_ADMIN_ERR_INVALID_REPLICA_ASSIGNMENT = 39,
    API_ADMIN_ERR_INVALID_CONFIG = 40,
    API_ADMIN_ERR_POLICY_VIOLATION = 44,
    API_ADMIN_ERR_TOPIC_DELETION_DISABLED = 73,
};

/* ConfigResource types. */
enum {
    API_RES_TOPIC = 2,
    API_RES_BROKER = 4,
    API_RES_BROKER_LOGGER = 8,
};

/* Shared by the admin files. */

/* An error message copied into the request arena (NULL = null). */
proto_str_t api_admin_msg(api_req_t *req, const char *msg);
/* The node id as the string BROKER resources are named by. */
const char *api_admin_node_name(api_req_t *req);
/* A copy of r in the arena (scaled values point into r itself). */
cfg_resolved_t *api_admin_keep(api_req_t *req, const cfg_resolved_t *r);

#endif
