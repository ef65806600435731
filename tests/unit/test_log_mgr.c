/* The log manager and Kafka UUIDs: meta.properties (creation, refusal on
 * a node.id or cluster.id mismatch), partition directories and
 * partition.metadata, deletion and purge, checkpoint files and the clean
 * shutdown marker, byte for byte. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log/log.h"
#include "log/log_mgr.h"
#include "tests/unit/unit.h"
#include "tests/unit/unit_log.h"
#include "util/buf.h"
#include "util/logging.h"
#include "util/uuid.h"

#define NOW 1700000000000LL

static char tmpdir[256];

static char *pth(const char *a, const char *b)
{
    static char buf[4][600];
    static int k;
    char *p = buf[k++ % 4];
    snprintf(p, 600, "%s/%s", a, b);
    return p;
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

static void abcd(buf_t *out, int i, const void *arg)
{
    (void)i;
    (void)arg;
    buf_put(out, "abcd", 4);
}

/* An uncompressed v2 batch of n records with 4-byte values. */
static uint8_t *mkbatch(int n, size_t *len)
{
    unit_batch_t b = {n, NULL, NOW, 0, -1, -1, -1, abcd, NULL};
    return unit_batch(&b, len);
}

static void append_n(log_t *log, int n)
{
    size_t len;
    uint8_t *b = mkbatch(n, &len);
    log_append_result_t res;
    CU_ASSERT_EQUAL(log_append(log, b, len, 0, NOW, &res), 0);
    free(b);
}

/* ---- uuid ---- */

static void test_uuid_base64(void)
{
    uint8_t id[16], back[16];
    char s[UUID_STR_LEN + 1];

    for (int i = 0; i < 16; i++)
        id[i] = (uint8_t)i;
    uuid_to_base64(id, s);
    CU_ASSERT_STRING_EQUAL(s, "AAECAwQFBgcICQoLDA0ODw");
    CU_ASSERT_EQUAL(uuid_from_base64(s, back), 0);
    CU_ASSERT(memcmp(id, back, 16) == 0);
    memset(id, 0xff, 16);
    uuid_to_base64(id, s);
    CU_ASSERT_STRING_EQUAL(s, "_____________________w");
    CU_ASSERT_EQUAL(uuid_from_base64(s, back), 0);
    CU_ASSERT(memcmp(id, back, 16) == 0);
    CU_ASSERT_EQUAL(uuid_from_base64("AAECAwQFBgcICQoLDA0OD", back), -1);
    CU_ASSERT_EQUAL(uuid_from_base64("AAECAwQFBgcICQoLDA0ODw=", back), -1);
    CU_ASSERT_EQUAL(uuid_from_base64("AAECAwQFBgcICQoLDA0OD+", back), -1);
    memset(id, 0, 16);
    CU_ASSERT(uuid_is_zero(id));
}

static void test_uuid_generate(void)
{
    uint8_t a[16], b[16];
    char s[UUID_STR_LEN + 1];

    for (int i = 0; i < 200; i++) {
        CU_ASSERT_EQUAL(uuid_generate(a), 0);
        CU_ASSERT_EQUAL(a[6] >> 4, 4);
        CU_ASSERT_EQUAL(a[8] >> 6, 2);
        uuid_to_base64(a, s);
        CU_ASSERT(s[0] != '-');
        CU_ASSERT_EQUAL(strlen(s), 22);
    }
    uuid_generate(b);
    CU_ASSERT(memcmp(a, b, 16) != 0);
}

/* ---- meta.properties ---- */

static log_mgr_config_t mcfg(const char *const *dirs, int n, int32_t node, const char *cid)
{
    log_mgr_config_t c;
    memset(&c, 0, sizeof(c));
    c.dirs = dirs;
    c.ndirs = n;
    c.node_id = node;
    c.cluster_id = cid;
    log_config_defaults(&c.defaults);
    c.defaults.segment_index_bytes = 4096;
    return c;
}

static const char *prop(const char *text, const char *key, char *out)
{
    const char *p = strstr(text, key);
    size_t n;
    if (!p || p[strlen(key)] != '=')
        return NULL;
    p += strlen(key) + 1;
    n = strcspn(p, "\n");
    memcpy(out, p, n);
    out[n] = '\0';
    return out;
}

static void test_meta_properties(void)
{
    char d1[300], d2[300], err[256], v[128], cid[64], did1[64];
    const char *dirs[2];
    log_mgr_config_t c;
    log_mgr_t *mgr;
    uint8_t id[16], id2[16];
    char *text;

    snprintf(d1, sizeof(d1), "%s/meta1", tmpdir);
    snprintf(d2, sizeof(d2), "%s/meta2", tmpdir);
    dirs[0] = d1;
    dirs[1] = d2;
    c = mcfg(dirs, 2, 3, NULL);
    mgr = log_mgr_open(&c, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mgr);
    CU_ASSERT_EQUAL(strlen(log_mgr_cluster_id(mgr)), 22);
    snprintf(cid, sizeof(cid), "%s", log_mgr_cluster_id(mgr));
    CU_ASSERT_EQUAL(log_mgr_prev_broker_epoch(mgr), -1);
    text = unit_slurp(pth(d1, "meta.properties"));
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_STRING_EQUAL(prop(text, "version", v), "1");
    CU_ASSERT_STRING_EQUAL(prop(text, "node.id", v), "3");
    CU_ASSERT_STRING_EQUAL(prop(text, "cluster.id", v), cid);
    CU_ASSERT_PTR_NOT_NULL(prop(text, "directory.id", did1));
    CU_ASSERT_EQUAL(uuid_from_base64(did1, id), 0);
    log_mgr_dir_id(mgr, 0, id2);
    CU_ASSERT(memcmp(id, id2, 16) == 0);
    log_mgr_dir_id(mgr, 1, id2);
    CU_ASSERT(memcmp(id, id2, 16) != 0);
    free(text);
    text = unit_slurp(pth(d2, "meta.properties"));
    CU_ASSERT_STRING_EQUAL(prop(text, "cluster.id", v), cid);
    free(text);
    CU_ASSERT_EQUAL(log_mgr_close(mgr, 9), 0);
    text = unit_slurp(pth(d1, ".kafka_cleanshutdown"));
    CU_ASSERT_STRING_EQUAL(text, "{\"version\":0,\"brokerEpoch\":9}");
    free(text);

    /* same node: same ids; the clean marker is read and removed */
    mgr = log_mgr_open(&c, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mgr);
    CU_ASSERT_STRING_EQUAL(log_mgr_cluster_id(mgr), cid);
    CU_ASSERT_EQUAL(log_mgr_prev_broker_epoch(mgr), 9);
    CU_ASSERT(!exists(pth(d1, ".kafka_cleanshutdown")));
    log_mgr_dir_id(mgr, 0, id2);
    CU_ASSERT(memcmp(id, id2, 16) == 0);
    log_mgr_free(mgr);

    /* another node.id: refused, with Kafka 4.4's message */
    c = mcfg(dirs, 2, 4, NULL);
    mgr = log_mgr_open(&c, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NULL(mgr);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "Stored node id 3 doesn't match previous node id 4 in "));
    /* another cluster.id: refused */
    c = mcfg(dirs, 2, 3, "AAECAwQFBgcICQoLDA0ODw");
    mgr = log_mgr_open(&c, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NULL(mgr);
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "Invalid cluster.id in: "));
    CU_ASSERT_PTR_NOT_NULL(strstr(err, "Expected AAECAwQFBgcICQoLDA0ODw, but read "));
    /* the configured one: accepted */
    c = mcfg(dirs, 2, 3, cid);
    mgr = log_mgr_open(&c, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL(mgr);
    log_mgr_free(mgr);
    /* a dir added later joins the cluster of the others */
    {
        char d3[300];
        const char *dirs3[3] = {d1, d2, d3};
        snprintf(d3, sizeof(d3), "%s/meta3", tmpdir);
        c = mcfg(dirs3, 3, 3, NULL);
        mgr = log_mgr_open(&c, NOW, err, sizeof(err));
        CU_ASSERT_PTR_NOT_NULL_FATAL(mgr);
        log_mgr_free(mgr);
        text = unit_slurp(pth(d3, "meta.properties"));
        CU_ASSERT_STRING_EQUAL(prop(text, "cluster.id", v), cid);
        free(text);
    }
    /* a broken meta.properties is refused */
    {
        int fd = open(pth(d2, "meta.properties"), O_WRONLY | O_TRUNC);
        CU_ASSERT(write(fd, "version=0\nbroker.id=3\n", 22) == 22);
        close(fd);
        c = mcfg(dirs, 2, 3, NULL);
        mgr = log_mgr_open(&c, NOW, err, sizeof(err));
        CU_ASSERT_PTR_NULL(mgr);
        CU_ASSERT_PTR_NOT_NULL(strstr(err, "version"));
    }
}

/* ---- partitions ---- */

static const uint8_t TOPIC_ID[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

static void test_partitions_and_checkpoints(void)
{
    char d1[300], d2[300], err[256], *text;
    const char *dirs[2];
    log_mgr_config_t c;
    log_mgr_t *mgr;
    log_t *a0, *a1, *b0, *l;
    uint8_t id[16], other[16];

    snprintf(d1, sizeof(d1), "%s/parts1", tmpdir);
    snprintf(d2, sizeof(d2), "%s/parts2", tmpdir);
    dirs[0] = d1;
    dirs[1] = d2;
    c = mcfg(dirs, 2, 1, NULL);
    mgr = log_mgr_open(&c, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mgr);
    a0 = log_mgr_create(mgr, "orders", 0, TOPIC_ID, NULL, NOW);
    a1 = log_mgr_create(mgr, "orders", 1, TOPIC_ID, NULL, NOW);
    b0 = log_mgr_create(mgr, "bad/name", 0, NULL, NULL, NOW);
    CU_ASSERT_PTR_NULL(b0);
    b0 = log_mgr_create(mgr, "audit.log-x", 0, NULL, NULL, NOW);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(a1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(b0);
    CU_ASSERT_EQUAL(log_mgr_count(mgr), 3);
    /* spread over the dirs by partition count */
    CU_ASSERT_EQUAL(log_mgr_dir_of(mgr, "orders", 0), 0);
    CU_ASSERT_EQUAL(log_mgr_dir_of(mgr, "orders", 1), 1);
    CU_ASSERT_EQUAL(log_mgr_dir_of(mgr, "audit.log-x", 0), 0);
    CU_ASSERT(exists(pth(d1, "orders-0/00000000000000000000.log")));
    CU_ASSERT(exists(pth(d2, "orders-1/00000000000000000000.index")));
    text = unit_slurp(pth(d1, "orders-0/partition.metadata"));
    CU_ASSERT_STRING_EQUAL(text, "version: 0\ntopic_id: AAECAwQFBgcICQoLDA0ODw\n");
    free(text);
    CU_ASSERT(!exists(pth(d1, "audit.log-x-0/partition.metadata")));
    /* create again: the same log; another topic id: refused */
    CU_ASSERT_PTR_EQUAL(log_mgr_create(mgr, "orders", 0, TOPIC_ID, NULL, NOW), a0);
    memset(other, 7, 16);
    errno = 0;
    CU_ASSERT_PTR_NULL(log_mgr_create(mgr, "orders", 0, other, NULL, NOW));
    CU_ASSERT_EQUAL(errno, EEXIST);
    CU_ASSERT_EQUAL(log_mgr_topic_id(mgr, "orders", 1, id), 1);
    CU_ASSERT(memcmp(id, TOPIC_ID, 16) == 0);
    CU_ASSERT_EQUAL(log_mgr_topic_id(mgr, "audit.log-x", 0, id), 0);
    CU_ASSERT_PTR_EQUAL(log_mgr_get(mgr, "orders", 1), a1);
    CU_ASSERT_PTR_NULL(log_mgr_get(mgr, "orders", 2));

    /* data: orders-0 gets 5 records, hwm 5, start offset 2 (DeleteRecords);
     * orders-1 gets 3, hwm 1; audit.log-x nothing */
    append_n(a0, 2);
    append_n(a0, 3);
    append_n(a1, 3);
    log_set_high_watermark(a0, 5);
    log_set_high_watermark(a1, 1);
    CU_ASSERT_EQUAL(log_delete_records(a0, 2), 0);
    CU_ASSERT_EQUAL(log_flush(a1, NOW), 0);
    CU_ASSERT_EQUAL(log_mgr_checkpoint(mgr), 0);
    text = unit_slurp(pth(d1, "recovery-point-offset-checkpoint"));
    CU_ASSERT_STRING_EQUAL(text, "0\n2\naudit.log-x 0 0\norders 0 2\n");
    free(text);
    text = unit_slurp(pth(d2, "recovery-point-offset-checkpoint"));
    CU_ASSERT_STRING_EQUAL(text, "0\n1\norders 1 3\n");
    free(text);
    text = unit_slurp(pth(d1, "log-start-offset-checkpoint"));
    CU_ASSERT_STRING_EQUAL(text, "0\n1\norders 0 2\n");
    free(text);
    text = unit_slurp(pth(d2, "log-start-offset-checkpoint"));
    CU_ASSERT_STRING_EQUAL(text, "0\n0\n");
    free(text);
    text = unit_slurp(pth(d1, "replication-offset-checkpoint"));
    CU_ASSERT_STRING_EQUAL(text, "0\n2\naudit.log-x 0 0\norders 0 5\n");
    free(text);
    text = unit_slurp(pth(d2, "replication-offset-checkpoint"));
    CU_ASSERT_STRING_EQUAL(text, "0\n1\norders 1 1\n");
    free(text);
    CU_ASSERT(!exists(pth(d1, "replication-offset-checkpoint.tmp")));

    /* clean close and reopen: offsets come back from the checkpoints */
    CU_ASSERT_EQUAL(log_mgr_close(mgr, 4), 0);
    text = unit_slurp(pth(d1, "recovery-point-offset-checkpoint"));
    CU_ASSERT_STRING_EQUAL(text, "0\n2\naudit.log-x 0 0\norders 0 5\n");
    free(text);
    mgr = log_mgr_open(&c, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mgr);
    CU_ASSERT_EQUAL(log_mgr_count(mgr), 3);
    l = log_mgr_get(mgr, "orders", 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(log_end_offset(l), 5);
    CU_ASSERT_EQUAL(log_start_offset(l), 2);
    CU_ASSERT_EQUAL(log_high_watermark(l), 5);
    CU_ASSERT_EQUAL(log_recovery_point(l), 5);
    CU_ASSERT_EQUAL(log_mgr_topic_id(mgr, "orders", 0, id), 1);
    CU_ASSERT(memcmp(id, TOPIC_ID, 16) == 0);
    l = log_mgr_get(mgr, "orders", 1);
    CU_ASSERT_EQUAL(log_high_watermark(l), 1);
    CU_ASSERT_EQUAL(log_end_offset(l), 3);
    CU_ASSERT_EQUAL(log_mgr_dir_of(mgr, "orders", 1), 1);

    /* a crash (no close): recovered from the recovery points */
    append_n(l, 4);
    log_mgr_free(mgr);
    mgr = log_mgr_open(&c, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mgr);
    CU_ASSERT_EQUAL(log_mgr_prev_broker_epoch(mgr), -1);
    l = log_mgr_get(mgr, "orders", 1);
    CU_ASSERT_EQUAL(log_end_offset(l), 7);
    log_mgr_free(mgr);
}

/* Entries of dir named "orders-<p>.<32 hex><suffix>". */
static int count_suffix_dirs(const char *dir, const char *suffix)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    size_t m = strlen(suffix);
    int n = 0;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        n += len == 9 + 32 + m && !strncmp(de->d_name, "orders-", 7) &&
             !strcmp(de->d_name + len - m, suffix);
    }
    closedir(d);
    return n;
}

static int count_delete_dirs(const char *dir)
{
    DIR *d = opendir(dir);
    struct dirent *de;
    int n = 0;
    while ((de = readdir(d)) != NULL) {
        size_t len = strlen(de->d_name);
        if (len > 7 && strcmp(de->d_name + len - 7, "-delete") == 0) {
            /* orders-0.<32 hex>-delete */
            if (strncmp(de->d_name, "orders-0.", 9) == 0 && len == 9 + 32 + 7)
                n++;
            else
                n += 100;
        }
    }
    closedir(d);
    return n;
}

static void test_delete_and_purge(void)
{
    char d1[300], err[256];
    const char *dirs[1];
    log_mgr_config_t c;
    log_mgr_t *mgr;
    log_t *l;

    snprintf(d1, sizeof(d1), "%s/del1", tmpdir);
    dirs[0] = d1;
    c = mcfg(dirs, 1, 1, NULL);
    mgr = log_mgr_open(&c, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mgr);
    l = log_mgr_create(mgr, "orders", 0, TOPIC_ID, NULL, NOW);
    append_n(l, 3);
    CU_ASSERT_EQUAL(log_mgr_delete(mgr, "orders", 0, NOW), 0);
    CU_ASSERT_EQUAL(log_mgr_delete(mgr, "orders", 0, NOW), -1);
    CU_ASSERT_EQUAL(errno, ENOENT);
    CU_ASSERT_PTR_NULL(log_mgr_get(mgr, "orders", 0));
    CU_ASSERT(!exists(pth(d1, "orders-0")));
    CU_ASSERT_EQUAL(count_delete_dirs(d1), 1);
    /* a new partition of that name right away, empty */
    l = log_mgr_create(mgr, "orders", 0, NULL, NULL, NOW);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    CU_ASSERT_EQUAL(log_end_offset(l), 0);
    /* purged after file.delete.delay.ms */
    CU_ASSERT_EQUAL(log_mgr_purge(mgr, NOW + 59999), 0);
    CU_ASSERT_EQUAL(log_mgr_purge(mgr, NOW + 60000), 1);
    CU_ASSERT_EQUAL(count_delete_dirs(d1), 0);
    CU_ASSERT_EQUAL(log_mgr_delete(mgr, "orders", 0, NOW), 0);
    /* set aside: renamed -stray, never purged */
    l = log_mgr_create(mgr, "orders", 1, NULL, NULL, NOW);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    append_n(l, 2);
    CU_ASSERT_EQUAL(log_mgr_set_aside(mgr, "orders", 1), 0);
    CU_ASSERT_EQUAL(log_mgr_set_aside(mgr, "orders", 1), -1);
    CU_ASSERT_PTR_NULL(log_mgr_get(mgr, "orders", 1));
    CU_ASSERT(!exists(pth(d1, "orders-1")));
    CU_ASSERT_EQUAL(count_suffix_dirs(d1, "-stray"), 1);
    log_mgr_free(mgr);

    /* at startup: leftovers of deletion are purged, other names ignored */
    mkdir(pth(d1, "orders-0.future-future"), 0755);
    mkdir(pth(d1, "orders-3.0123-stray"), 0755);
    mkdir(pth(d1, "lost+found"), 0755);
    close(open(pth(d1, "some-file-0"), O_CREAT | O_WRONLY, 0644));
    mgr = log_mgr_open(&c, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mgr);
    CU_ASSERT_EQUAL(log_mgr_count(mgr), 0);
    CU_ASSERT_EQUAL(count_delete_dirs(d1), 1);
    CU_ASSERT_EQUAL(log_mgr_purge(mgr, NOW), 1);
    CU_ASSERT_EQUAL(count_delete_dirs(d1), 0);
    CU_ASSERT(exists(pth(d1, "orders-0.future-future")));
    CU_ASSERT_EQUAL(count_suffix_dirs(d1, "-stray"), 1); /* kept, not opened */
    CU_ASSERT(exists(pth(d1, "orders-3.0123-stray")));
    log_mgr_free(mgr);
}

static void count_fn(log_t *log, void *opaque)
{
    (void)log;
    (*(int *)opaque)++;
}

static void test_retention_step(void)
{
    char d1[300], err[256];
    const char *dirs[1];
    log_mgr_config_t c;
    log_mgr_t *mgr;
    log_config_t lc;
    log_t *l;
    int n = 0;

    snprintf(d1, sizeof(d1), "%s/ret1", tmpdir);
    dirs[0] = d1;
    c = mcfg(dirs, 1, 1, NULL);
    mgr = log_mgr_open(&c, NOW, err, sizeof(err));
    CU_ASSERT_PTR_NOT_NULL_FATAL(mgr);
    log_config_defaults(&lc);
    lc.retention_ms = 1000;
    l = log_mgr_create(mgr, "t", 0, NULL, &lc, NOW);
    append_n(l, 1);
    log_roll(l, NOW);
    append_n(l, 1);
    log_set_high_watermark(l, 2);
    CU_ASSERT_EQUAL(log_mgr_retention(mgr, NOW + 1000), 0);
    CU_ASSERT_EQUAL(log_mgr_retention(mgr, NOW + 1001), 1);
    CU_ASSERT_EQUAL(log_start_offset(l), 1);
    CU_ASSERT_EQUAL(log_recovery_point(l), 1);
    log_mgr_foreach(mgr, count_fn, &n);
    CU_ASSERT_EQUAL(n, 1);
    CU_ASSERT_EQUAL(log_mgr_close(mgr, -1), 0);
}

int main(void)
{
    snprintf(tmpdir, sizeof(tmpdir), "/tmp/strand-test-logmgr-XXXXXX");
    if (!mkdtemp(tmpdir))
        return 1;
    lg_set_level(LG_ERROR);
    if (CU_initialize_registry() != CUE_SUCCESS)
        return 1;
    CU_pSuite s = CU_add_suite("uuid", NULL, NULL);
    CU_add_test(s, "base64 form", test_uuid_base64);
    CU_add_test(s, "generate", test_uuid_generate);
    s = CU_add_suite("log_mgr", NULL, NULL);
    CU_add_test(s, "meta.properties", test_meta_properties);
    CU_add_test(s, "partitions and checkpoints", test_partitions_and_checkpoints);
    CU_add_test(s, "delete and purge", test_delete_and_purge);
    CU_add_test(s, "retention step", test_retention_step);
    int rc = unit_run();
    unit_rm_rf(tmpdir);
    return rc;
}
