/* The APIs that admin tools call and a single node answers completely
 * (kafka-acls.sh, kafka-transactions.sh describe-producers, the Java
 * admin client's describeTopics and listConfigResources): the ACL APIs
 * without an authorizer, DescribeProducers, DescribeTopicPartitions,
 * ListConfigResources. */
#ifndef STRAND_API_TOOLS_H
#define STRAND_API_TOOLS_H

#include "api/api.h"

#define API_TOOLS_NENTRIES 6
/* The family's dispatch table (for api_families[] in api.c). */
extern const api_entry_t api_tools_entries[API_TOOLS_NENTRIES];

void api_describe_acls(api_req_t *req);
void api_create_acls(api_req_t *req);
void api_delete_acls(api_req_t *req);
void api_describe_producers(api_req_t *req);
void api_describe_topic_partitions(api_req_t *req);
void api_list_config_resources(api_req_t *req);

#endif
