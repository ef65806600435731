/* The log manager: the partition logs of this node across its log dirs.
 * Partition directories are "<topic>-<partition>" (protocol/FORMATS.md §7.1), each
 * with a partition.metadata file of two lines:
 *
 *   version: 0
 *   topic_id: <22-char base64 uuid>
 *
 * A deleted partition's directory is renamed at once to
 * "<topic>-<p>.<32 hex digits>-delete" (so a new partition of that name
 * can be created right away) and removed by log_mgr_purge() once
 * file.delete.delay.ms has passed. */
#include "log/log_mgr_int.h"

#include <dirent.h>
#include <errno.h>
#include <ftw.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log_ckpt.h"
#include "util/fault.h"
#include "util/logging.h"
#include "util/mem.h"

static void part_key(char *key, size_t n, const char *topic, int32_t partition)
{
    snprintf(key, n, "%s-%" PRId32, topic, partition);
}

static mgr_part_t *mgr_find(const log_mgr_t *mgr, const char *topic, int32_t partition)
{
    char key[512];

    part_key(key, sizeof(key), topic, partition);
    return smap_get(&mgr->parts, key, strlen(key));
}

/* Kafka's topic name rule: 1-249 of [a-zA-Z0-9._-], not "." or "..". */
static int topic_valid(const char *t)
{
    size_t n = strlen(t);

    if (n == 0 || n > 249 || !strcmp(t, ".") || !strcmp(t, ".."))
        return 0;
    for (size_t i = 0; i < n; i++) {
        char c = t[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '.' || c == '_' || c == '-'))
            return 0;
    }
    return 1;
}

/* "<topic>-<partition>" -> topic (copied into topic) and partition. */
static int parse_part_dir(const char *name, char *topic, size_t tn, int32_t *partition)
{
    const char *dash = strrchr(name, '-');
    char *end;
    long p;

    if (!dash || dash == name || !dash[1] || (size_t)(dash - name) >= tn)
        return 0;
    errno = 0;
    p = strtol(dash + 1, &end, 10);
    if (errno || *end || p < 0 || p > INT32_MAX || dash[1] < '0' || dash[1] > '9')
        return 0;
    memcpy(topic, name, (size_t)(dash - name));
    topic[dash - name] = '\0';
    *partition = (int32_t)p;
    return topic_valid(topic);
}

static char *join(const char *a, const char *b)
{
    size_t n = strlen(a) + strlen(b) + 2;
    char *p = xmalloc(n);

    snprintf(p, n, "%s/%s", a, b);
    return p;
}

/* ---- partition.metadata ---- */

/* 1 with the topic id, 0 if there is none, -1 if the file exists but
 * cannot be read. */
static int pmeta_read(const char *pdir, uint8_t id[16])
{
    char *path = join(pdir, "partition.metadata");
    char *text = log_ckpt_read_file(path, NULL), *p;
    int ok = !text && errno != ENOENT ? -1 : 0;

    if (text && (p = strstr(text, "topic_id:")) != NULL) {
        char s[UUID_STR_LEN + 1];
        p += strlen("topic_id:");
        while (*p == ' ')
            p++;
        memcpy(s, p, UUID_STR_LEN);
        s[UUID_STR_LEN] = '\0';
        ok = strlen(p) >= UUID_STR_LEN && uuid_from_base64(s, id) == 0;
    }
    free(text);
    free(path);
    return ok;
}

static int pmeta_write(const char *pdir, const uint8_t id[16])
{
    char *path = join(pdir, "partition.metadata");
    char s[UUID_STR_LEN + 1], text[64];
    int rc;

    uuid_to_base64(id, s);
    snprintf(text, sizeof(text), "version: 0\ntopic_id: %s\n", s);
    rc = log_ckpt_write_file(path, text, strlen(text));
    free(path);
    return rc;
}

/* ---- open ---- */

static void mgr_add_part(log_mgr_t *mgr, log_t *log, int d, const uint8_t *topic_id)
{
    mgr_part_t *part = xcalloc(1, sizeof(*part));
    char key[512];

    part->log = log;
    part->dir = d;
    if (topic_id && !uuid_is_zero(topic_id)) {
        memcpy(part->topic_id, topic_id, 16);
        part->has_topic_id = 1;
    }
    part_key(key, sizeof(key), log_topic(log), log_partition(log));
    smap_put(&mgr->parts, key, strlen(key), part);
    mgr->dirs[d].nparts++;
}

static void mgr_schedule_delete(log_mgr_t *mgr, char *path, int64_t due_ms)
{
    mgr->dels = xrealloc(mgr->dels, sizeof(*mgr->dels) * (size_t)(mgr->ndels + 1));
    mgr->dels[mgr->ndels].path = path;
    mgr->dels[mgr->ndels].due_ms = due_ms;
    mgr->ndels++;
}

static int has_suffix(const char *s, const char *suffix)
{
    size_t n = strlen(s), m = strlen(suffix);
    return n >= m && strcmp(s + n - m, suffix) == 0;
}

static int mgr_open_part(log_mgr_t *mgr, int d, const char *name, const mgr_ckpt_t *ck,
                         int64_t now_ms, char *err, size_t errlen)
{
    char topic[256], key[512], *pdir;
    int32_t partition;
    log_open_args_t a;
    uint8_t id[16];
    log_t *log;
    int has_id;

    if (!parse_part_dir(name, topic, sizeof(topic), &partition)) {
        lg_warn("%s/%s is not a partition directory; ignoring it", mgr->dirs[d].path, name);
        return 0;
    }
    if (mgr_find(mgr, topic, partition)) {
        snprintf(err, errlen, "partition %s is in two log dirs (the second is %s)", name,
                 mgr->dirs[d].path);
        return -1;
    }
    part_key(key, sizeof(key), topic, partition);
    memset(&a, 0, sizeof(a));
    a.topic = topic;
    a.partition = partition;
    a.recovery_point = log_mgr_ckpt_get(&ck->recovery, key, 0);
    a.log_start_offset = log_mgr_ckpt_get(&ck->start, key, -1);
    a.high_watermark = log_mgr_ckpt_get(&ck->hwm, key, -1);
    a.clean_shutdown = mgr->dirs[d].clean;
    a.now_ms = now_ms;
    pdir = join(mgr->dirs[d].path, name);
    log = log_open(pdir, &mgr->defaults, &a);
    if (!log) {
        snprintf(err, errlen, "cannot open the log in %s: %s", pdir, strerror(errno));
        free(pdir);
        return -1;
    }
    has_id = pmeta_read(pdir, id);
    if (has_id < 0) {
        snprintf(err, errlen, "%s/partition.metadata: cannot read: %s", pdir, strerror(errno));
        log_free(log);
        free(pdir);
        return -1;
    }
    mgr_add_part(mgr, log, d, has_id ? id : NULL);
    free(pdir);
    return 0;
}

static int mgr_open_dir(log_mgr_t *mgr, int d, int64_t now_ms, char *err, size_t errlen)
{
    const char *path = mgr->dirs[d].path;
    struct dirent *de;
    mgr_ckpt_t ck;
    DIR *dir;
    int rc = 0;

    log_mgr_shutdown_marker_load(mgr, d);
    if (log_mgr_ckpt_load(mgr, d, &ck) < 0) {
        snprintf(err, errlen, "%s: cannot read the checkpoint files: %s", path, strerror(errno));
        log_mgr_ckpt_free(&ck);
        return -1;
    }
    dir = fault_opendir(path);
    if (!dir) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        log_mgr_ckpt_free(&ck);
        return -1;
    }
    while (rc == 0 && (de = readdir(dir)) != NULL) {
        char *sub;
        struct stat st;
        if (de->d_name[0] == '.')
            continue;
        sub = join(path, de->d_name);
        if (has_suffix(de->d_name, ".tmp")) {
            /* a checkpoint write that failed and could not clean up */
            if (fault_unlink(sub) < 0)
                lg_warn("cannot remove leftover %s: %s", sub, strerror(errno));
            free(sub);
            continue;
        }
        if (stat(sub, &st) < 0 || !S_ISDIR(st.st_mode)) {
            free(sub);
            continue;
        }
        if (has_suffix(de->d_name, "-delete")) {
            mgr_schedule_delete(mgr, sub, now_ms);
            continue;
        }
        free(sub);
        if (has_suffix(de->d_name, "-future") || has_suffix(de->d_name, "-stray"))
            continue;
        rc = mgr_open_part(mgr, d, de->d_name, &ck, now_ms, err, errlen);
    }
    closedir(dir);
    log_mgr_ckpt_free(&ck);
    return rc;
}

/* The marker must go before anything is appended: a crash from now on is
 * an unclean shutdown. */
static int mgr_remove_marker(log_mgr_t *mgr, int d)
{
    char *path = join(mgr->dirs[d].path, ".kafka_cleanshutdown");
    int rc = 0;

    if (fault_unlink(path) == 0)
        rc = log_ckpt_fsync_dir(mgr->dirs[d].path);
    else if (errno != ENOENT)
        rc = -1;
    free(path);
    return rc;
}

log_mgr_t *log_mgr_open(const log_mgr_config_t *cfg, int64_t now_ms, char *err, size_t errlen)
{
    log_mgr_t *mgr = xcalloc(1, sizeof(*mgr));

    snprintf(err, errlen, "no error");
    if (fault_env_load(err, errlen) < 0)
        return NULL;
    mgr->node_id = cfg->node_id;
    mgr->defaults = cfg->defaults;
    mgr->prev_broker_epoch = -1;
    smap_init(&mgr->parts);
    if (cfg->ndirs < 1) {
        snprintf(err, errlen, "log.dirs is empty");
        goto err;
    }
    mgr->dirs = xcalloc((size_t)cfg->ndirs, sizeof(*mgr->dirs));
    mgr->ndirs = cfg->ndirs;
    for (int i = 0; i < cfg->ndirs; i++) {
        mgr->dirs[i].path = xstrdup(cfg->dirs[i]);
        if (fault_mkdir(cfg->dirs[i], 0755) < 0 && errno != EEXIST) {
            snprintf(err, errlen, "cannot create log dir %s: %s", cfg->dirs[i], strerror(errno));
            goto err;
        }
    }
    if (log_mgr_meta_load(mgr, cfg->cluster_id, err, errlen) < 0)
        goto err;
    for (int i = 0; i < mgr->ndirs; i++)
        if (mgr_open_dir(mgr, i, now_ms, err, errlen) < 0)
            goto err;
    for (int i = 0; i < mgr->ndirs; i++) {
        if (mgr_remove_marker(mgr, i) < 0) {
            snprintf(err, errlen, "%s/.kafka_cleanshutdown: cannot remove: %s", mgr->dirs[i].path,
                     strerror(errno));
            goto err;
        }
    }
    return mgr;
err:
    log_mgr_free(mgr);
    return NULL;
}

/* ---- close ---- */

void log_mgr_free(log_mgr_t *mgr)
{
    size_t pos = 0, klen;
    const void *key;
    void *val;

    if (!mgr)
        return;
    while (smap_next(&mgr->parts, &pos, &key, &klen, &val)) {
        mgr_part_t *part = val;
        log_free(part->log);
        free(part);
    }
    smap_free(&mgr->parts);
    for (int i = 0; i < mgr->ndirs; i++)
        free(mgr->dirs[i].path);
    free(mgr->dirs);
    for (int i = 0; i < mgr->ndels; i++)
        free(mgr->dels[i].path);
    free(mgr->dels);
    free(mgr);
}

/* Kafka's order: flush every log, checkpoint the (now final) recovery
 * points, close the logs, and only then mark the shutdown clean. A log
 * dir where anything failed (or that holds an offline log) gets no marker,
 * so that its logs are recovered at the next start. */
int log_mgr_close(log_mgr_t *mgr, int64_t broker_epoch)
{
    size_t pos = 0, klen;
    const void *key;
    void *val;
    int rc = 0;

    while (smap_next(&mgr->parts, &pos, &key, &klen, &val)) {
        mgr_part_t *part = val;
        if (log_flush(part->log, log_last_flush_ms(part->log)) < 0)
            mgr->dirs[part->dir].failed = 1;
    }
    for (int i = 0; i < mgr->ndirs; i++)
        if (log_mgr_ckpt_write_dir(mgr, i) < 0)
            mgr->dirs[i].failed = 1;
    pos = 0;
    while (smap_next(&mgr->parts, &pos, &key, &klen, &val)) {
        mgr_part_t *part = val;
        if (log_close(part->log) < 0)
            mgr->dirs[part->dir].failed = 1;
        part->log = NULL;
        free(part);
    }
    smap_free(&mgr->parts);
    smap_init(&mgr->parts);
    for (int i = 0; i < mgr->ndirs; i++) {
        if (!mgr->dirs[i].failed && log_mgr_shutdown_marker_write(mgr, i, broker_epoch) < 0)
            mgr->dirs[i].failed = 1;
        if (mgr->dirs[i].failed) {
            lg_error("log dir %s: unclean close; its logs will be recovered at the next start",
                     mgr->dirs[i].path);
            rc = -1;
        }
    }
    log_mgr_free(mgr);
    if (rc)
        errno = EIO;
    return rc;
}

/* ---- accessors ---- */

const char *log_mgr_cluster_id(const log_mgr_t *mgr)
{
    return mgr->cluster_id;
}

int64_t log_mgr_prev_broker_epoch(const log_mgr_t *mgr)
{
    return mgr->prev_broker_epoch;
}

int log_mgr_ndirs(const log_mgr_t *mgr)
{
    return mgr->ndirs;
}

const char *log_mgr_dir_path(const log_mgr_t *mgr, int i)
{
    return mgr->dirs[i].path;
}

void log_mgr_dir_id(const log_mgr_t *mgr, int i, uint8_t out[16])
{
    memcpy(out, mgr->dirs[i].dir_id, 16);
}

log_t *log_mgr_get(log_mgr_t *mgr, const char *topic, int32_t partition)
{
    mgr_part_t *part = mgr_find(mgr, topic, partition);
    return part ? part->log : NULL;
}

int log_mgr_dir_of(const log_mgr_t *mgr, const char *topic, int32_t partition)
{
    mgr_part_t *part = mgr_find(mgr, topic, partition);
    return part ? part->dir : -1;
}

int log_mgr_topic_id(const log_mgr_t *mgr, const char *topic, int32_t partition, uint8_t out[16])
{
    mgr_part_t *part = mgr_find(mgr, topic, partition);

    if (!part || !part->has_topic_id)
        return 0;
    memcpy(out, part->topic_id, 16);
    return 1;
}

int log_mgr_count(const log_mgr_t *mgr)
{
    return (int)mgr->parts.count;
}

void log_mgr_foreach(log_mgr_t *mgr, void (*fn)(log_t *log, void *opaque), void *opaque)
{
    size_t pos = 0, klen;
    const void *key;
    void *val;

    while (smap_next(&mgr->parts, &pos, &key, &klen, &val))
        fn(((mgr_part_t *)val)->log, opaque);
}

/* ---- create and delete ---- */

static int mgr_set_topic_id(mgr_part_t *part, const uint8_t topic_id[16])
{
    if (!topic_id || uuid_is_zero(topic_id))
        return 0;
    if (part->has_topic_id) {
        if (memcmp(part->topic_id, topic_id, 16) == 0)
            return 0;
        errno = EEXIST;
        return -1;
    }
    if (pmeta_write(log_dir(part->log), topic_id) < 0)
        return -1;
    memcpy(part->topic_id, topic_id, 16);
    part->has_topic_id = 1;
    return 0;
}

static int mgr_least_loaded(const log_mgr_t *mgr)
{
    int best = 0;

    for (int i = 1; i < mgr->ndirs; i++)
        if (mgr->dirs[i].nparts < mgr->dirs[best].nparts)
            best = i;
    return best;
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw);

static void mgr_remove_tree(const char *path)
{
    if (nftw(path, rm_cb, 16, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT)
        lg_warn("cannot remove %s: %s", path, strerror(errno));
}

/* A partition created here must survive a crash once it is announced, so
 * its directory entry is fsynced in the log dir; when that (or opening it,
 * or writing partition.metadata) fails, the new directory is removed again
 * and the creation fails. Every partition directory on disk was opened at
 * start, so the one removed can only be this call's. */
log_t *log_mgr_create(log_mgr_t *mgr, const char *topic, int32_t partition,
                      const uint8_t topic_id[16], const log_config_t *cfg, int64_t now_ms)
{
    return log_mgr_create_in(mgr, -1, topic, partition, topic_id, cfg, now_ms);
}

int log_mgr_dir_nparts(const log_mgr_t *mgr, int i)
{
    return i >= 0 && i < mgr->ndirs ? mgr->dirs[i].nparts : 0;
}

int log_mgr_dir_index(const log_mgr_t *mgr, const uint8_t id[16])
{
    uint8_t mine[16];
    for (int i = 0; i < mgr->ndirs; i++) {
        log_mgr_dir_id(mgr, i, mine);
        if (!memcmp(mine, id, 16))
            return i;
    }
    return -1;
}

log_t *log_mgr_create_in(log_mgr_t *mgr, int dir, const char *topic, int32_t partition,
                         const uint8_t topic_id[16], const log_config_t *cfg, int64_t now_ms)
{
    mgr_part_t *part = mgr_find(mgr, topic, partition);
    char name[512], *pdir;
    log_open_args_t a;
    log_t *log;
    int d, e;

    if (part) {
        if (mgr_set_topic_id(part, topic_id) < 0)
            return NULL;
        if (cfg)
            log_set_config(part->log, cfg);
        return part->log;
    }
    if (!topic_valid(topic) || partition < 0) {
        errno = EINVAL;
        return NULL;
    }
    d = dir >= 0 && dir < mgr->ndirs ? dir : mgr_least_loaded(mgr);
    part_key(name, sizeof(name), topic, partition);
    pdir = join(mgr->dirs[d].path, name);
    memset(&a, 0, sizeof(a));
    a.topic = topic;
    a.partition = partition;
    a.log_start_offset = -1;
    a.high_watermark = -1;
    a.clean_shutdown = 1;
    a.now_ms = now_ms;
    log = log_open(pdir, cfg ? cfg : &mgr->defaults, &a);
    if (!log || (topic_id && !uuid_is_zero(topic_id) && pmeta_write(pdir, topic_id) < 0) ||
        log_ckpt_fsync_dir(mgr->dirs[d].path) < 0) {
        e = errno;
        lg_error("%s: cannot create: %s", pdir, strerror(e));
        log_free(log);
        log = NULL;
        mgr_remove_tree(pdir);
        errno = e;
    }
    free(pdir);
    if (!log)
        return NULL;
    mgr_add_part(mgr, log, d, topic_id);
    return log;
}

/* ---- creation off the loop ---- */

int log_mgr_new_prepare(log_mgr_t *mgr, int dir, const char *topic, int32_t partition,
                        const uint8_t topic_id[16], const log_config_t *cfg, int64_t now_ms,
                        log_mgr_new_t *n)
{
    char name[512];

    memset(n, 0, sizeof(*n));
    if (mgr_find(mgr, topic, partition) || !topic_valid(topic) || partition < 0) {
        errno = mgr_find(mgr, topic, partition) ? EEXIST : EINVAL;
        return -1;
    }
    n->dir = dir >= 0 && dir < mgr->ndirs ? dir : mgr_least_loaded(mgr);
    part_key(name, sizeof(name), topic, partition);
    n->dirpath = xstrdup(mgr->dirs[n->dir].path);
    n->pdir = join(n->dirpath, name);
    n->topic = xstrdup(topic);
    n->partition = partition;
    if (topic_id && !uuid_is_zero(topic_id)) {
        memcpy(n->topic_id, topic_id, 16);
        n->has_topic_id = 1;
    }
    n->cfg = cfg ? *cfg : mgr->defaults;
    n->now_ms = now_ms;
    n->leader_epoch = -1;
    return 0;
}

void log_mgr_new_build(log_mgr_new_t *n)
{
    log_open_args_t a;
    memset(&a, 0, sizeof(a));
    a.topic = n->topic;
    a.partition = n->partition;
    a.log_start_offset = -1;
    a.high_watermark = -1;
    a.clean_shutdown = 1;
    a.now_ms = n->now_ms;
    n->log = log_open(n->pdir, &n->cfg, &a);
    if (!n->log || (n->has_topic_id && pmeta_write(n->pdir, n->topic_id) < 0) ||
        (n->leader_epoch >= 0 && log_epoch_assign(n->log, n->leader_epoch, 0) < 0) ||
        log_ckpt_fsync_dir(n->dirpath) < 0) {
        n->err = errno ? errno : EIO;
        log_free(n->log);
        n->log = NULL;
        mgr_remove_tree(n->pdir);
    }
}

static void log_mgr_new_free(log_mgr_new_t *n)
{
    free(n->dirpath);
    free(n->pdir);
    free(n->topic);
    memset(n, 0, sizeof(*n));
}

log_t *log_mgr_new_adopt(log_mgr_t *mgr, log_mgr_new_t *n)
{
    log_t *log = n->log;
    if (!log) {
        int e = n->err ? n->err : EIO;
        lg_error("%s: cannot create: %s", n->pdir, strerror(e));
        log_mgr_new_free(n);
        errno = e;
        return NULL;
    }
    if (mgr_find(mgr, n->topic, n->partition)) {
        lg_error("%s: created twice", n->pdir);
        log_mgr_new_discard(n);
        errno = EEXIST;
        return NULL;
    }
    mgr_add_part(mgr, log, n->dir, n->has_topic_id ? n->topic_id : NULL);
    log_mgr_new_free(n);
    return log;
}

void log_mgr_new_discard(log_mgr_new_t *n)
{
    if (n->log) {
        log_free(n->log);
        n->log = NULL;
        mgr_remove_tree(n->pdir);
    }
    log_mgr_new_free(n);
}

/* Renames a partition's directory to "<topic>-<p>.<uuid hex><suffix>",
 * closes its log and forgets it. Returns the new path (the caller's), or
 * NULL with errno (ENOENT if the partition is not here). */
static char *mgr_move_away(log_mgr_t *mgr, const char *topic, int32_t partition,
                           const char *tag, int64_t *delay_ms)
{
    mgr_part_t *part = mgr_find(mgr, topic, partition);
    char key[512], suffix[80], *to;
    uint8_t id[16];
    size_t tlen, n;
    int d;

    if (!part) {
        errno = ENOENT;
        return NULL;
    }
    if (uuid_generate(id) < 0)
        return NULL;
    snprintf(suffix, sizeof(suffix), "-%" PRId32 ".", partition);
    for (int i = 0; i < 16; i++)
        snprintf(suffix + strlen(suffix), 3, "%02x", id[i]);
    strcat(suffix, tag);
    /* as Kafka: the topic part is cut so the name fits 255 bytes */
    tlen = strlen(topic);
    if (tlen > 255 - strlen(suffix))
        tlen = 255 - strlen(suffix);
    d = part->dir;
    n = strlen(mgr->dirs[d].path) + tlen + strlen(suffix) + 2;
    to = xmalloc(n);
    snprintf(to, n, "%s/%.*s%s", mgr->dirs[d].path, (int)tlen, topic, suffix);
    if (fault_rename(log_dir(part->log), to) < 0) {
        int e = errno;
        free(to);
        errno = e;
        return NULL;
    }
    *delay_ms = log_config(part->log)->file_delete_delay_ms;
    log_free(part->log);
    part_key(key, sizeof(key), topic, partition);
    smap_del(&mgr->parts, key, strlen(key));
    free(part);
    mgr->dirs[d].nparts--;
    return to;
}

int log_mgr_delete(log_mgr_t *mgr, const char *topic, int32_t partition, int64_t now_ms)
{
    int64_t delay;
    /* The rename is not fsynced here (deleting a large topic would cost
     * one fsync per partition on the caller's thread): the next
     * checkpoint's rename fsyncs the log dir, and should a crash come
     * first, the directory is back under its old name and found again as
     * a stray at the next start. */
    char *to = mgr_move_away(mgr, topic, partition, "-delete", &delay);
    if (!to)
        return -1;
    /* file.delete.delay.ms may be INT64_MAX: saturate instead of wrapping. */
    mgr_schedule_delete(mgr, to, delay > INT64_MAX - now_ms ? INT64_MAX : now_ms + delay);
    return 0;
}

int log_mgr_set_aside(log_mgr_t *mgr, const char *topic, int32_t partition)
{
    int64_t delay;
    char *to = mgr_move_away(mgr, topic, partition, "-stray", &delay);
    if (!to)
        return -1;
    lg_warn("partition %s-%d is not this node's in the metadata log: its log is set aside as %s",
            topic, partition, to);
    free(to);
    return 0;
}

static int rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return fault_remove(path);
}

int log_mgr_purge(log_mgr_t *mgr, int64_t now_ms)
{
    log_mgr_purge_t pg;
    log_mgr_purge_take(mgr, now_ms, &pg);
    log_mgr_purge_run(&pg);
    return log_mgr_purge_back(mgr, &pg);
}

void log_mgr_purge_take(log_mgr_t *mgr, int64_t now_ms, log_mgr_purge_t *pg)
{
    memset(pg, 0, sizeof(*pg));
    for (int i = 0; i < mgr->ndels;) {
        if (mgr->dels[i].due_ms > now_ms) {
            i++;
            continue;
        }
        pg->v = xrealloc(pg->v, (size_t)(pg->n + 1) * sizeof(*pg->v));
        pg->v[pg->n].path = mgr->dels[i].path;
        pg->v[pg->n].due_ms = mgr->dels[i].due_ms;
        pg->v[pg->n++].failed = 0;
        mgr->dels[i] = mgr->dels[--mgr->ndels];
    }
}

void log_mgr_purge_run(log_mgr_purge_t *pg)
{
    for (int i = 0; i < pg->n; i++)
        if (nftw(pg->v[i].path, rm_cb, 16, FTW_DEPTH | FTW_PHYS) < 0 && errno != ENOENT)
            pg->v[i].failed = errno ? errno : EIO;
}

int log_mgr_purge_back(log_mgr_t *mgr, log_mgr_purge_t *pg)
{
    int n = 0;
    for (int i = 0; i < pg->n; i++) {
        if (pg->v[i].failed) {
            /* kept, and tried again at the next purge */
            lg_warn("cannot remove %s: %s", pg->v[i].path, strerror(pg->v[i].failed));
            mgr_schedule_delete(mgr, pg->v[i].path, pg->v[i].due_ms);
            continue;
        }
        free(pg->v[i].path);
        n++;
    }
    free(pg->v);
    memset(pg, 0, sizeof(*pg));
    return n;
}

/* ---- periodic work ---- */

int log_mgr_checkpoint(log_mgr_t *mgr)
{
    log_mgr_ckpt_t ck;
    log_mgr_checkpoint_begin(mgr, &ck);
    log_mgr_checkpoint_run(&ck);
    return log_mgr_checkpoint_end(&ck);
}

int log_mgr_retention(log_mgr_t *mgr, int64_t now_ms)
{
    size_t pos = 0, klen;
    const void *key;
    void *val;
    int n = 0;

    while (smap_next(&mgr->parts, &pos, &key, &klen, &val)) {
        log_t *log = ((mgr_part_t *)val)->log;
        int r = log_retention(log, now_ms);
        if (r > 0)
            n += r;
        log_expire_producers(log, now_ms);
    }
    return n;
}
