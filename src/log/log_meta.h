/* meta.properties, the file at the root of every log dir that says which
 * cluster and node the dir belongs to (protocol/FORMATS.md §7.6). Read and
 * written here for the log manager (at start-up) and for `strand format`
 * (before any start), which both need it without the other. */
#ifndef STRAND_LOG_META_H
#define STRAND_LOG_META_H

#include <stddef.h>
#include <stdint.h>

#include "util/uuid.h"

/* The longest cluster.id Strand keeps (Kafka's format takes any string;
 * its random-uuid, as ours, gives 22 characters). */
#define LOG_META_CLUSTER_MAX UUID_STR_LEN

typedef struct log_meta_s {
    int present;                           /* the file exists */
    char cluster_id[LOG_META_CLUSTER_MAX + 1];
    int32_t node_id;
    uint8_t dir_id[16];                    /* zero when the file has none */
} log_meta_t;

/* Reads dir/meta.properties into m. Returns 0 (m->present says whether the
 * file exists), or -1 with the reason in err: unreadable, not version 1,
 * no cluster.id or node.id, a bad node.id or directory.id. */
int log_meta_read(const char *dir, log_meta_t *m, char *err, size_t errlen);
/* Writes dir/meta.properties (version 1) from m, replacing any (written
 * aside, fsynced, renamed). Returns 0, or -1 with errno. */
int log_meta_write(const char *dir, const log_meta_t *m);

#endif
