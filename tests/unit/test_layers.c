/* The layering, checked rather than claimed: every #include "<dir>/..."
 * of a file under src/<layer>/ names the same layer or one below it, in
 * the order of the README's Layout section:
 *
 *   util < proto < net < log < cluster < partition < coord < api < broker
 *
 * (src/main.c is the program itself, above them all). A lower layer that
 * includes an upper one's header is the only way it could call it, since
 * implicit declarations are errors here; so the include graph is the call
 * graph's upper bound. Also: nothing under src/ includes tests/. */
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tests/unit/unit.h"

static const char *const layers[] = {"util",    "proto",     "net",   "log", "cluster",
                                     "partition", "coord", "api",   "broker"};
#define NLAYERS ((int)(sizeof(layers) / sizeof(layers[0])))

static int layer_rank(const char *name, size_t len)
{
    for (int i = 0; i < NLAYERS; i++)
        if (strlen(layers[i]) == len && !strncmp(layers[i], name, len))
            return i;
    return -1;
}

static const char *srcdir(void)
{
    const char *d = getenv("STRAND_SRCDIR");
    return d && *d ? d : STRAND_TOP_SRCDIR;
}

static int nviolations;

/* Checks one file's includes against its layer's rank. */
static void check_file(const char *path, const char *layer, int rank)
{
    FILE *fp = fopen(path, "r");
    char line[1024];
    int n = 0;

    CU_ASSERT_PTR_NOT_NULL_FATAL(fp);
    while (fgets(line, sizeof(line), fp)) {
        n++;
        const char *p = line;
        while (*p == ' ' || *p == '\t')
            p++;
        if (strncmp(p, "#include \"", 10))
            continue;
        p += 10;
        const char *slash = strchr(p, '/');
        const char *quote = strchr(p, '"');
        if (!slash || !quote || slash > quote)
            continue;
        int to = layer_rank(p, (size_t)(slash - p));
        int bad = (to > rank) || !strncmp(p, "tests/", 6);
        if (bad) {
            fprintf(stderr, "%s:%d: layer %s includes %.*s\n", path, n, layer,
                    (int)(quote - p), p);
            nviolations++;
        }
    }
    fclose(fp);
}

static void check_layer(int rank)
{
    char dir[4096];
    DIR *d;
    struct dirent *e;
    int files = 0;

    snprintf(dir, sizeof(dir), "%s/src/%s", srcdir(), layers[rank]);
    d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    while ((e = readdir(d))) {
        size_t len = strlen(e->d_name);
        if (len < 3 || e->d_name[len - 2] != '.' ||
            (e->d_name[len - 1] != 'c' && e->d_name[len - 1] != 'h'))
            continue;
        char path[8192];
        snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
        check_file(path, layers[rank], rank);
        files++;
    }
    closedir(d);
    CU_ASSERT(files > 0);
}

static void test_layers(void)
{
    nviolations = 0;
    for (int i = 0; i < NLAYERS; i++)
        check_layer(i);
    CU_ASSERT_EQUAL(nviolations, 0);
}

/* The check can fail: an upward include is found. */
static void test_detects(void)
{
    char path[] = "/tmp/strand-test-layers-XXXXXX";
    int fd = mkstemp(path);
    CU_ASSERT_FATAL(fd >= 0);
    FILE *fp = fdopen(fd, "w");
    fputs("#include \"util/mem.h\"\n#include \"api/api.h\"\n", fp);
    fclose(fp);
    nviolations = 0;
    check_file(path, "log", layer_rank("log", 3));
    CU_ASSERT_EQUAL(nviolations, 1);
    remove(path);
}

int main(void)
{
    CU_initialize_registry();
    CU_pSuite s = CU_add_suite("layers", NULL, NULL);
    CU_add_test(s, "no layer includes one above it", test_layers);
    CU_add_test(s, "an upward include is reported", test_detects);
    return unit_run();
}
