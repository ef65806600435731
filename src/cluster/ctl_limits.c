/* The controller's limit on one operation: see ctl_limits.h. */
#include "cluster/ctl_limits.h"

#include "util/kerr.h"

int16_t ctl_check_create_topics(int64_t partitions, int64_t records, const char **msg)
{
    if (partitions > CTL_MAX_RECORDS) {
        *msg = "Excessively large number of partitions per request.";
        return KERR_POLICY_VIOLATION;
    }
    if (records > CTL_MAX_RECORDS) {
        *msg = "Unable to perform excessively large batch operation.";
        return KERR_POLICY_VIOLATION;
    }
    return 0;
}

int16_t ctl_check_add_partitions(int64_t added, const char **msg)
{
    if (added > CTL_MAX_RECORDS) {
        *msg = "Excessively large number of additional partitions per request.";
        return KERR_POLICY_VIOLATION;
    }
    return 0;
}
