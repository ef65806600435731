/* The files at the root of each log dir (protocol/FORMATS.md §7.6, §7.7):
 *
 *   meta.properties   see log_meta.c
 *   .kafka_cleanshutdown            {"version":0,"brokerEpoch":<long>}
 *   recovery-point-offset-checkpoint  text checkpoint, version 0, lines
 *   log-start-offset-checkpoint       "<topic> <partition> <offset>",
 *   replication-offset-checkpoint     see log_ckpt.c
 *
 * We write checkpoint lines sorted by topic and partition. As Kafka, the
 * log-start-offset file lists only partitions whose start offset lies
 * inside their first segment (DeleteRecords); for the others the first
 * segment's base offset says it. */
#include "log/log_mgr_int.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log/log_ckpt.h"
#include "log/log_int.h"
#include "log/log_meta.h"
#include "util/buf.h"
#include "util/fault.h"
#include "util/logging.h"
#include "util/mem.h"
#include "util/props.h"

static char *mgr_path(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = xmalloc(n);

    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

/* ---- meta.properties (log_meta.c) ---- */

/* Reads dir's meta.properties, which must be this node's. 0 (present or
 * not), -1 with err. */
static int meta_read(log_mgr_t *mgr, const char *dir, log_meta_t *m, char *err, size_t errlen)
{
    if (log_meta_read(dir, m, err, errlen) < 0)
        return -1;
    if (m->present && m->node_id != mgr->node_id) {
        /* Kafka 4.4's words: "previous" is the configured id */
        snprintf(err, errlen,
                 "Stored node id %" PRId32 " doesn't match previous node id %" PRId32
                 " in %s/meta.properties. If you moved your data, make sure your configured node "
                 "id matches. If you intend to create a new node, you should remove all data in "
                 "your data directories.",
                 m->node_id, mgr->node_id, dir);
        return -1;
    }
    return 0;
}

static int meta_write(log_mgr_t *mgr, int i)
{
    log_meta_t m;

    memset(&m, 0, sizeof(m));
    snprintf(m.cluster_id, sizeof(m.cluster_id), "%s", mgr->cluster_id);
    m.node_id = mgr->node_id;
    memcpy(m.dir_id, mgr->dirs[i].dir_id, 16);
    return log_meta_write(mgr->dirs[i].path, &m);
}

/* The cluster id all present files agree on (and the configured one). */
static int meta_cluster_id(log_mgr_t *mgr, const log_meta_t *m, const char *want, char *err,
                           size_t errlen)
{
    const char *cid = want && *want ? want : NULL;

    for (int i = 0; i < mgr->ndirs; i++) {
        if (!m[i].present)
            continue;
        if (cid && strcmp(cid, m[i].cluster_id) != 0) {
            /* Kafka 4.4's words */
            snprintf(err, errlen, "Invalid cluster.id in: %s/meta.properties. Expected %s, but "
                     "read %s", mgr->dirs[i].path, cid, m[i].cluster_id);
            return -1;
        }
        cid = m[i].cluster_id;
    }
    if (cid) {
        snprintf(mgr->cluster_id, sizeof(mgr->cluster_id), "%s", cid);
    } else {
        uint8_t id[16];
        if (uuid_generate(id) < 0) {
            snprintf(err, errlen, "cannot generate a cluster id: %s", strerror(errno));
            return -1;
        }
        uuid_to_base64(id, mgr->cluster_id);
        lg_info("formatting new log dirs with cluster.id %s", mgr->cluster_id);
    }
    return 0;
}

int log_mgr_meta_load(log_mgr_t *mgr, const char *want_cluster_id, char *err, size_t errlen)
{
    log_meta_t *m = xcalloc((size_t)mgr->ndirs, sizeof(*m));
    int rc = -1;

    for (int i = 0; i < mgr->ndirs; i++)
        if (meta_read(mgr, mgr->dirs[i].path, &m[i], err, errlen) < 0)
            goto out;
    if (meta_cluster_id(mgr, m, want_cluster_id, err, errlen) < 0)
        goto out;
    for (int i = 0; i < mgr->ndirs; i++) {
        if (m[i].present && !uuid_is_zero(m[i].dir_id)) {
            memcpy(mgr->dirs[i].dir_id, m[i].dir_id, 16);
            for (int j = 0; j < i; j++)
                if (memcmp(mgr->dirs[j].dir_id, m[i].dir_id, 16) == 0) {
                    snprintf(err, errlen, "%s and %s have the same directory.id",
                             mgr->dirs[j].path, mgr->dirs[i].path);
                    goto out;
                }
            continue;
        }
        if (uuid_generate(mgr->dirs[i].dir_id) < 0 || meta_write(mgr, i) < 0) {
            snprintf(err, errlen, "%s/meta.properties: cannot write: %s", mgr->dirs[i].path,
                     strerror(errno));
            goto out;
        }
    }
    rc = 0;
out:
    free(m);
    return rc;
}

/* ---- clean shutdown marker ---- */

/* A marker that cannot be read counts as absent: the logs of that dir are
 * recovered, which is always safe. */
void log_mgr_shutdown_marker_load(log_mgr_t *mgr, int i)
{
    char *path = mgr_path(mgr->dirs[i].path, ".kafka_cleanshutdown");
    char *text = log_ckpt_read_file(path, NULL);
    const char *p;

    mgr->dirs[i].clean = text != NULL;
    if (text && (p = strstr(text, "\"brokerEpoch\"")) != NULL && (p = strchr(p, ':')) != NULL)
        mgr->prev_broker_epoch = strtoll(p + 1, NULL, 10);
    free(text);
    free(path);
}

int log_mgr_shutdown_marker_write(log_mgr_t *mgr, int i, int64_t broker_epoch)
{
    char *path = mgr_path(mgr->dirs[i].path, ".kafka_cleanshutdown");
    char text[80];
    int rc;

    snprintf(text, sizeof(text), "{\"version\":0,\"brokerEpoch\":%" PRId64 "}", broker_epoch);
    rc = log_ckpt_write_file(path, text, strlen(text));
    free(path);
    return rc;
}

/* ---- checkpoints ---- */

typedef struct ckpt_ctx_s {
    smap_t *m;
} ckpt_ctx_t;

static int ckpt_line(void *opaque, char **f)
{
    ckpt_ctx_t *c = opaque;
    char key[512], *e1, *e2;
    long long part, off;
    int64_t *v;

    errno = 0;
    part = strtoll(f[1], &e1, 10);
    off = strtoll(f[2], &e2, 10);
    if (errno || *e1 || *e2 || part < 0 || part > INT32_MAX)
        return -1;
    snprintf(key, sizeof(key), "%s-%lld", f[0], part);
    v = xmalloc(sizeof(*v));
    *v = off;
    free(smap_get(c->m, key, strlen(key)));
    smap_put(c->m, key, strlen(key), v);
    return 0;
}

static void ckpt_map_free(smap_t *m)
{
    size_t pos = 0, klen;
    const void *key;
    void *val;

    while (smap_next(m, &pos, &key, &klen, &val))
        free(val);
    smap_free(m);
}

/* A missing or malformed file is no error (the logs are then recovered
 * from their start); one that exists but cannot be read is. */
static int ckpt_read(const char *dir, const char *name, smap_t *m)
{
    char *path = mgr_path(dir, name);
    char *text = log_ckpt_read_file(path, NULL);
    ckpt_ctx_t c = {m};
    int rc = 0;

    if (!text && errno != ENOENT) {
        lg_error("%s: cannot read: %s", path, strerror(errno));
        rc = -1;
    } else if (text && log_ckpt_parse(text, 3, ckpt_line, &c) < 0) {
        lg_warn("%s is malformed; ignoring it", path);
        ckpt_map_free(m);
        smap_init(m);
    }
    free(text);
    free(path);
    return rc;
}

int log_mgr_ckpt_load(log_mgr_t *mgr, int i, mgr_ckpt_t *ck)
{
    smap_init(&ck->recovery);
    smap_init(&ck->start);
    smap_init(&ck->hwm);
    if (ckpt_read(mgr->dirs[i].path, "recovery-point-offset-checkpoint", &ck->recovery) < 0 ||
        ckpt_read(mgr->dirs[i].path, "log-start-offset-checkpoint", &ck->start) < 0 ||
        ckpt_read(mgr->dirs[i].path, "replication-offset-checkpoint", &ck->hwm) < 0)
        return -1;
    return 0;
}

void log_mgr_ckpt_free(mgr_ckpt_t *ck)
{
    ckpt_map_free(&ck->recovery);
    ckpt_map_free(&ck->start);
    ckpt_map_free(&ck->hwm);
}

int64_t log_mgr_ckpt_get(const smap_t *m, const char *key, int64_t dflt)
{
    const int64_t *v = smap_get(m, key, strlen(key));
    return v ? *v : dflt;
}

static int cmp_log(const void *a, const void *b)
{
    const log_t *x = *(log_t *const *)a, *y = *(log_t *const *)b;
    int c = strcmp(log_topic(x), log_topic(y));
    return c ? c : (log_partition(x) > log_partition(y)) - (log_partition(x) < log_partition(y));
}

enum { CK_RECOVERY, CK_START, CK_HWM };

/* One checkpoint file's text, into out. */
static void ckpt_render(log_t **logs, int n, int which, buf_t *out)
{
    char line[400];
    int count = 0;
    buf_t body;

    buf_init(&body);
    for (int i = 0; i < n; i++) {
        int64_t v = which == CK_RECOVERY ? log_recovery_point(logs[i])
                    : which == CK_HWM   ? log_high_watermark(logs[i])
                                        : log_start_offset(logs[i]);
        if (which == CK_START && v <= logs[i]->segs[0]->base_offset)
            continue;
        snprintf(line, sizeof(line), "%s %" PRId32 " %" PRId64 "\n", log_topic(logs[i]),
                 log_partition(logs[i]), v);
        buf_put(&body, line, strlen(line));
        count++;
    }
    buf_init(out);
    snprintf(line, sizeof(line), "0\n%d\n", count);
    buf_put(out, line, strlen(line));
    buf_put(out, body.p, body.len);
    buf_free(&body);
}

static const char *const ckpt_names[3] = {"recovery-point-offset-checkpoint",
                                          "log-start-offset-checkpoint",
                                          "replication-offset-checkpoint"};

/* The three files of log dir d, rendered into ck. */
static void ckpt_render_dir(log_mgr_t *mgr, int d, log_mgr_ckpt_t *ck)
{
    log_t **logs = xmalloc(sizeof(*logs) * (mgr->parts.count + 1));
    size_t pos = 0, klen;
    const void *key;
    void *val;
    int n = 0;

    while (smap_next(&mgr->parts, &pos, &key, &klen, &val)) {
        mgr_part_t *part = val;
        if (part->dir == d)
            logs[n++] = part->log;
    }
    if (n > 0)
        qsort(logs, (size_t)n, sizeof(*logs), cmp_log);
    ck->files = xrealloc(ck->files, (size_t)(ck->nfiles + 3) * sizeof(*ck->files));
    for (int which = CK_RECOVERY; which <= CK_HWM; which++) {
        struct log_mgr_ckpt_file_s *f = &ck->files[ck->nfiles++];
        f->path = mgr_path(mgr->dirs[d].path, ckpt_names[which]);
        f->rc = 0;
        f->err = 0;
        ckpt_render(logs, n, which, &f->data);
    }
    free(logs);
}

void log_mgr_checkpoint_begin(log_mgr_t *mgr, log_mgr_ckpt_t *ck)
{
    memset(ck, 0, sizeof(*ck));
    for (int i = 0; i < mgr->ndirs; i++)
        ckpt_render_dir(mgr, i, ck);
}

void log_mgr_checkpoint_run(log_mgr_ckpt_t *ck)
{
    for (int i = 0; i < ck->nfiles; i++) {
        ck->files[i].rc = log_ckpt_write_file(ck->files[i].path, ck->files[i].data.p,
                                              ck->files[i].data.len);
        ck->files[i].err = errno;
    }
}

int log_mgr_checkpoint_end(log_mgr_ckpt_t *ck)
{
    int rc = 0;
    for (int i = 0; i < ck->nfiles; i++) {
        if (ck->files[i].rc < 0) {
            lg_error("%s: cannot write: %s", ck->files[i].path, strerror(ck->files[i].err));
            rc = -1;
        }
        free(ck->files[i].path);
        buf_free(&ck->files[i].data);
    }
    free(ck->files);
    memset(ck, 0, sizeof(*ck));
    return rc;
}

int log_mgr_ckpt_write_dir(log_mgr_t *mgr, int d)
{
    log_mgr_ckpt_t ck;
    memset(&ck, 0, sizeof(ck));
    ckpt_render_dir(mgr, d, &ck);
    log_mgr_checkpoint_run(&ck);
    return log_mgr_checkpoint_end(&ck);
}
