/* The tools family's dispatch table. */
#include "api/api_tools.h"

/* Version ranges: what Kafka 4.4 accepts (API-TABLE.md). */
const api_entry_t api_tools_entries[API_TOOLS_NENTRIES] = {
    {29, 1, 3, 1, api_describe_acls, API_L_BOTH},
    {30, 1, 3, 1, api_create_acls, API_L_BOTH},
    {31, 1, 3, 1, api_delete_acls, API_L_BOTH},
    {61, 0, 0, 0, api_describe_producers, API_L_BROKER},
    {74, 0, 1, 0, api_list_config_resources, API_L_BROKER},
    {75, 0, 0, 0, api_describe_topic_partitions, API_L_BROKER},
};
