/* logfiles: see logfiles.h. */
#include "testlib/logfiles.h"

#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "testlib/testlib.h"

/* The whole of a file (caller frees), its length in *len; NULL if none. */
static char *tl_logfiles_slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    char *buf = NULL;
    size_t cap = 0, n = 0, r;
    if (!f)
        return NULL;
    do {
        if (n == cap)
            buf = realloc(buf, cap = cap ? 2 * cap : 65536);
        r = fread(buf + n, 1, cap - n, f);
        n += r;
    } while (r > 0);
    fclose(f);
    *len = n;
    return buf;
}

/* The first node with the broker role (the others have no partitions). */
static int tl_logfiles_first(tl_cluster *c)
{
    for (int id = 1; id <= tl_cluster_size(c); id++)
        if (tl_cluster_node(c, id)->roles & TL_ROLE_BROKER)
            return id;
    tl_fail("no broker");
}

int tl_logfiles_same(tl_cluster *c, const char *topic, int32_t p, char *why, size_t cap)
{
    char dir[PATH_MAX + 64], path[PATH_MAX + 400];
    int first = tl_logfiles_first(c);
    snprintf(dir, sizeof(dir), "%s/data/%s-%d", tl_cluster_node(c, first)->dir, topic, (int)p);
    DIR *d = opendir(dir);
    struct dirent *e;
    int ok = 1, nlog = 0;
    TL_ASSERT(d != NULL, "no %s", dir);
    while (ok && (e = readdir(d))) {
        size_t l = strlen(e->d_name);
        if (l < 5 || strcmp(e->d_name + l - 4, ".log"))
            continue;
        nlog++;
        size_t len1, len;
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        char *one = tl_logfiles_slurp(path, &len1);
        ok = one && len1 > 0;
        for (int id = first + 1; ok && id <= tl_cluster_size(c); id++) {
            if (!(tl_cluster_node(c, id)->roles & TL_ROLE_BROKER))
                continue;
            snprintf(path, sizeof(path), "%s/data/%s-%d/%s", tl_cluster_node(c, id)->dir, topic,
                     (int)p, e->d_name);
            char *other = tl_logfiles_slurp(path, &len);
            ok = other && len == len1 && !memcmp(one, other, len);
            if (!ok)
                snprintf(why, cap, "%s: %zu bytes on node %d, %zu on node %d", e->d_name, len1,
                         first, other ? len : 0, id);
            free(other);
        }
        free(one);
    }
    closedir(d);
    return ok && nlog > 0;
}

void tl_logfiles_wait_same(tl_cluster *c, const char *topic, int32_t nparts, double timeout_s)
{
    char why[512] = "";
    double t0 = tl_now();
    for (int32_t p = 0; p < nparts; p++) {
        while (!tl_logfiles_same(c, topic, p, why, sizeof(why)) && tl_now() < t0 + timeout_s)
            usleep(200000);
        TL_ASSERT(tl_logfiles_same(c, topic, p, why, sizeof(why)), "%s-%d differs: %s", topic,
                  (int)p, why);
    }
    tl_log("the segment files of %d partitions are the same bytes on every broker (%.0f ms)",
           (int)nparts, (tl_now() - t0) * 1000);
}

