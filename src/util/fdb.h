/* The process's file descriptor budget: RLIMIT_NOFILE against the
 * descriptors open now. Every partition keeps its segments' .log files
 * open and every connection a socket, so a change that creates partitions
 * checks first that their files fit, keeping room for connections, instead
 * of running out half way (a topic with only some of its partitions, or a
 * broker that can no longer accept a connection). */
#ifndef STRAND_UTIL_FDB_H
#define STRAND_UTIL_FDB_H

#include <stddef.h>
#include <stdint.h>

/* Descriptors kept for connections and short-lived files: at least this
 * many, or a tenth of the limit. */
#define FDB_RESERVE_MIN 256

/* How many more descriptors the process may open and keep the reserve;
 * INT64_MAX without a limit. Counts /proc/self/fd (milliseconds for tens
 * of thousands): for admin requests, not per message. */
int64_t fdb_available(void);

/* 0 when `more` descriptors fit the budget; else -1 with the reason in
 * msg (what would be needed, the limit, what is open, the reserve). what:
 * the change, for the message ("creating 500 partitions"). */
int fdb_check(int64_t more, const char *what, char *msg, size_t cap);

#endif
