/* meta.properties (protocol/FORMATS.md §7.6): Java properties, version 1
 * (KRaft), as Kafka 4.4 writes it:
 *
 *   #
 *   #<comment line>
 *   node.id=<int>
 *   directory.id=<22-char base64 uuid>
 *   version=1
 *   cluster.id=<string, 22-char base64 uuid when generated>
 *
 * Readers take the keys in any order; directory.id is optional (files of
 * older versions lack it). */
#include "log/log_meta.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/log_ckpt.h"
#include "util/mem.h"
#include "util/props.h"

static char *meta_path(const char *dir)
{
    size_t n = strlen(dir) + sizeof("/meta.properties");
    char *p = xmalloc(n);

    snprintf(p, n, "%s/meta.properties", dir);
    return p;
}

/* The keys of a loaded file into m; -1 with err on a bad one. */
static int meta_parse(props_t *props, const char *path, log_meta_t *m, char *err,
                      size_t errlen)
{
    const char *version = props_get(props, "version"), *cid = props_get(props, "cluster.id");
    const char *nid = props_get(props, "node.id"), *did = props_get(props, "directory.id");
    char *end;
    long id;

    if (!version || strcmp(version, "1") != 0)
        return snprintf(err, errlen, "%s: version %s is not supported (KRaft needs version=1)",
                        path, version ? version : "(missing)"), -1;
    if (!cid || !*cid || !nid)
        return snprintf(err, errlen, "%s: cluster.id or node.id missing", path), -1;
    if (strlen(cid) > LOG_META_CLUSTER_MAX)
        return snprintf(err, errlen, "%s: cluster.id '%s' is too long", path, cid), -1;
    errno = 0;
    id = strtol(nid, &end, 10);
    if (errno || *end || end == nid || id < 0 || id > INT32_MAX)
        return snprintf(err, errlen, "%s: node.id '%s' is not a node id", path, nid), -1;
    if (did && uuid_from_base64(did, m->dir_id) < 0)
        return snprintf(err, errlen, "%s: directory.id '%s' is not a uuid", path, did), -1;
    snprintf(m->cluster_id, sizeof(m->cluster_id), "%s", cid);
    m->node_id = (int32_t)id;
    m->present = 1;
    return 0;
}

int log_meta_read(const char *dir, log_meta_t *m, char *err, size_t errlen)
{
    char *path = meta_path(dir);
    props_t props;
    int errline = 0, rc = 0;

    memset(m, 0, sizeof(*m));
    props_init(&props);
    if (props_load(&props, path, &errline) < 0) {
        if (errno != ENOENT) {
            snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
            rc = -1;
        }
    } else {
        rc = meta_parse(&props, path, m, err, errlen);
    }
    props_free(&props);
    free(path);
    return rc;
}

int log_meta_write(const char *dir, const log_meta_t *m)
{
    char *path = meta_path(dir);
    char did[UUID_STR_LEN + 1], text[512];
    int rc;

    uuid_to_base64(m->dir_id, did);
    snprintf(text, sizeof(text),
             "#\n#Written by strand\nnode.id=%" PRId32 "\ndirectory.id=%s\nversion=1\n"
             "cluster.id=%s\n",
             m->node_id, did, m->cluster_id);
    rc = log_ckpt_write_file(path, text, strlen(text)) < 0 ? -1 : 0;
    free(path);
    return rc;
}
