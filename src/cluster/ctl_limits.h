/* Limits the controller puts on one metadata operation, as Kafka 4.4's
 * controller does: one operation writes at most CTL_MAX_RECORDS records
 * (a topic record, a record per partition, a record per config), and
 * requests that would write more are refused with POLICY_VIOLATION before
 * anything else is checked, so that no single request stalls the quorum
 * (or, here, the event loop) or creates half of what it asked for. */
#ifndef STRAND_CLUSTER_CTL_LIMITS_H
#define STRAND_CLUSTER_CTL_LIMITS_H

#include <stdint.h>

#define CTL_MAX_RECORDS 10000

/* CreateTopics: partitions over all topics of the request (a topic asking
 * for the default counts as that many), and the records creating them
 * would write (per topic 1 + partitions + configs). Returns 0, or
 * POLICY_VIOLATION with Kafka's message in *msg (for every topic of the
 * request). */
int16_t ctl_check_create_topics(int64_t partitions, int64_t records, const char **msg);

/* CreatePartitions: the partitions added over all topics of the request.
 * Returns 0, or POLICY_VIOLATION with Kafka's message in *msg. */
int16_t ctl_check_add_partitions(int64_t added, const char **msg);

#endif
