/* The tools family's dispatch table. */
#include "api/api_tools.h"

/* Version ranges: what Kafka 4.4 accepts (API-TABLE.md). */
const api_entry_t api_tools_entries[API_TOOLS_NENTRIES] = {
    {29, 1, 3, 1, api_describe_acls},
    {30, 1, 3, 1, api_create_acls},
    {31, 1, 3, 1, api_delete_acls},
    {61, 0, 0, 0, api_describe_producers},
    {74, 0, 1, 0, api_list_config_resources},
    {75, 0, 0, 0, api_describe_topic_partitions},
};
