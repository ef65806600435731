/* The log manager's structures, shared by log_mgr.c and log_mgr_meta.c. */
#ifndef STRAND_LOG_LOG_MGR_INT_H
#define STRAND_LOG_LOG_MGR_INT_H

#include "log/log_mgr.h"
#include "util/smap.h"
#include "util/uuid.h"

typedef struct mgr_dir_s {
    char *path;
    uint8_t dir_id[16];
    int nparts;
    int clean;                /* .kafka_cleanshutdown was present */
    int failed;               /* log_mgr_close: something failed here */
} mgr_dir_t;

typedef struct mgr_part_s {
    log_t *log;
    int dir;
    int has_topic_id;
    uint8_t topic_id[16];
} mgr_part_t;

typedef struct mgr_del_s {
    char *path;
    int64_t due_ms;
} mgr_del_t;

/* Offsets read from a log dir's checkpoint files, keyed "topic-p". */
typedef struct mgr_ckpt_s {
    smap_t recovery;
    smap_t start;
    smap_t hwm;
} mgr_ckpt_t;

struct log_mgr_s {
    mgr_dir_t *dirs;
    int ndirs;
    int32_t node_id;
    char cluster_id[UUID_STR_LEN + 1];
    log_config_t defaults;
    smap_t parts;             /* "topic-p" -> mgr_part_t (owned) */
    mgr_del_t *dels;
    int ndels;
    int64_t prev_broker_epoch;
};

/* meta.properties of every dir: read, check, write the missing ones.
 * Returns 0, or -1 with a reason in err. */
int log_mgr_meta_load(log_mgr_t *mgr, const char *want_cluster_id, char *err, size_t errlen);
/* Reads and removes .kafka_cleanshutdown of dir i. */
void log_mgr_shutdown_marker_load(log_mgr_t *mgr, int i);
int log_mgr_shutdown_marker_write(log_mgr_t *mgr, int i, int64_t broker_epoch);
/* Checkpoint files of dir i (missing ones are empty). Returns 0, or -1
 * with errno if one cannot be read (free ck all the same). */
int log_mgr_ckpt_load(log_mgr_t *mgr, int i, mgr_ckpt_t *ck);
void log_mgr_ckpt_free(mgr_ckpt_t *ck);
/* Offset stored under key, or dflt. */
int64_t log_mgr_ckpt_get(const smap_t *m, const char *key, int64_t dflt);
int log_mgr_ckpt_write_dir(log_mgr_t *mgr, int i);

#endif
