/* Commands from a test (tools.h). */
#include "testlib/tools.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "testlib/testlib.h"

char *tl_cmd_output(const char *cmd)
{
    FILE *f = popen(cmd, "r");
    size_t len = 0, cap = 1 << 16;
    char *out = malloc(cap);
    TL_ASSERT(f && out, "popen %s", cmd);
    for (size_t n; (n = fread(out + len, 1, cap - len - 1, f)) > 0;) {
        len += n;
        if (cap - len < 4096)
            out = realloc(out, cap *= 2);
        TL_ASSERT(out, "out of memory");
    }
    out[len] = 0;
    int rc = pclose(f);
    if (rc != 0) {
        fprintf(stderr, "%s\n", out);
        tl_fail("'%s' exited with status %d", cmd, rc);
    }
    return out;
}

int tl_kafka_classpath(char *out, size_t cap)
{
    const char *src = getenv("STRAND_SRCDIR");
    char cmd[4096];
    if (!src || system("command -v java >/dev/null 2>&1") != 0)
        return -1;
    snprintf(cmd, sizeof(cmd), "'%s/scripts/kafka-ref.sh' classpath 2>/dev/null", src);
    FILE *f = popen(cmd, "r");
    *out = 0;
    int ok = f && fgets(out, (int)cap, f) != NULL;
    if (f && pclose(f) != 0)
        ok = 0;
    out[strcspn(out, "\n")] = 0;
    return ok && *out ? 0 : -1;
}
