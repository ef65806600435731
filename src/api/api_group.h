/* The group APIs (classic protocol): FindCoordinator, JoinGroup,
 * SyncGroup, Heartbeat, LeaveGroup (api_group.c), OffsetCommit,
 * OffsetFetch, OffsetDelete (api_group_offsets.c), DescribeGroups,
 * ListGroups, DeleteGroups (api_group_admin.c). They decode, call the
 * coordinator (coord/grp.h) and encode; JoinGroup and SyncGroup park on
 * their connection until the coordinator answers. */
#ifndef STRAND_API_GROUP_H
#define STRAND_API_GROUP_H

#include "api/api.h"
#include "coord/grp.h"

#define API_GROUP_NENTRIES 11
/* Our api_entry_t table, ordered by key, for api_families[] in api.c. */
extern const api_entry_t api_group_entries[API_GROUP_NENTRIES];

/* The broker's group coordinator (b->grp), opened with __consumer_offsets
 * created and replayed at start-up, or on first use if that failed. NULL
 * when the topic cannot be created. Freed by api_group_shutdown(). */
grp_coord_t *api_group_coord(api_node_t *b);
/* For DeleteTopics: removes the topic's committed offsets from every
 * group (no-op while the coordinator is not open). */
void api_group_topic_deleted(api_node_t *b, const char *topic, size_t len);
/* Frees the coordinator: call once the connections are closed (parked
 * requests hold waiters) and before the partition registry goes. */
void api_group_shutdown(api_node_t *b);

void api_find_coordinator(api_req_t *req);
void api_join_group(api_req_t *req);
void api_sync_group(api_req_t *req);
void api_heartbeat(api_req_t *req);
void api_leave_group(api_req_t *req);
void api_offset_commit(api_req_t *req);
void api_offset_fetch(api_req_t *req);
void api_offset_delete(api_req_t *req);
void api_describe_groups(api_req_t *req);
void api_list_groups(api_req_t *req);
void api_delete_groups(api_req_t *req);

/* Answers after the commit. The coordinator applies a change as soon as
 * its records are placed in __consumer_offsets; an answer that could
 * tell of it waits until those records are committed (flushed as the
 * flush policy asks, replicated as the high watermark says), as Kafka's
 * coordinator holds its answers until its writes are committed.
 * api_group_send sends out (a framed answer, API_ENCODE; taken) once
 * everything written so far to the partitions of groups[0..n) is
 * committed; when that fails, fail(req, arg, err) answers instead, err
 * being what Kafka answers for such a failed write (for_offsets: as for
 * offset commits). With c NULL or nothing pending: at once. */
typedef void api_group_fail_fn(api_req_t *req, void *arg, int16_t err);
void api_group_send(api_req_t *req, grp_coord_t *c, const char *const *groups, int n,
                    buf_t *out, api_group_fail_fn *fail, void *arg, int for_offsets);
/* api_group_send for one group. */
void api_group_send1(api_req_t *req, grp_coord_t *c, const char *group, buf_t *out,
                     api_group_fail_fn *fail, void *arg, int for_offsets);

/* A C string of the coordinator (see api_cstr) as the protocol string it
 * stands for, in req's arena when it differs; NULL gives the null string. */
proto_str_t api_group_str(api_req_t *req, const char *s);
/* A commit's partition as Kafka checks it, in its metadata only:
 * UNKNOWN_TOPIC_OR_PARTITION, or 0 (api_group_offsets.c). */
int16_t api_group_part_check(api_req_t *req, proto_str_t topic, int32_t partition);
/* The name of a topic named by id (copied into the arena), or
 * UNKNOWN_TOPIC_ID. */
int16_t api_group_topic_by_id(api_req_t *req, proto_uuid_t id, proto_str_t *name);

#endif
