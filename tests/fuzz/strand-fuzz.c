/* strand-fuzz: the socket fuzzer as a command (tests/fuzz/README.md).
 *
 *   strand-fuzz --bootstrap HOST:PORT [--seed N] [--requests N] [--seconds S]
 *               [--batch N] [--valid-pct P] [--protect TOPIC] [--only KEYS]
 *               [--skip KEYS] [--topics-out FILE] [--crash-out FILE] [--strict]
 *               [-v|-vv]
 *   strand-fuzz --bootstrap HOST:PORT --replay FILE [-v]
 *
 * Exit status: 0 the broker survived with no finding, 1 findings, 2 the
 * broker died or hung, 3 usage or setup error. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz/fuzz_run.h"

static void usage(void)
{
    fprintf(stderr,
            "usage: strand-fuzz --bootstrap HOST:PORT [--seed N] [--requests N] [--seconds S]\n"
            "                   [--batch N] [--valid-pct P] [--protect TOPIC] [--only KEYS] [--skip KEYS]\n"
            "                   [--topics-out FILE] [--crash-out FILE] [--strict] [-v|-vv]\n"
            "       strand-fuzz --bootstrap HOST:PORT --replay FILE [-v]\n");
    exit(3);
}

int main(int argc, char **argv)
{
    fuzz_opts_t o = { .seed = 1, .requests = 10000, .batch = 100, .valid_pct = 20,
                      .crash_out = "strand-fuzz-crash.txt" };
    fuzz_stats_t st;
    const char *replay = NULL;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i], *v = i + 1 < argc ? argv[i + 1] : NULL;
        if (!strcmp(a, "-v"))
            o.verbose = 1;
        else if (!strcmp(a, "-vv"))
            o.verbose = 2;
        else if (!strcmp(a, "--strict"))
            o.strict = 1;
        else if (!v)
            usage();
        else if (!strcmp(a, "--bootstrap"))
            o.bootstrap = v;
        else if (!strcmp(a, "--seed"))
            o.seed = strtoull(v, NULL, 0);
        else if (!strcmp(a, "--requests"))
            o.requests = strtol(v, NULL, 0);
        else if (!strcmp(a, "--seconds"))
            o.seconds = strtod(v, NULL);
        else if (!strcmp(a, "--batch"))
            o.batch = atoi(v);
        else if (!strcmp(a, "--valid-pct"))
            o.valid_pct = atoi(v);
        else if (!strcmp(a, "--protect"))
            o.protect = v;
        else if (!strcmp(a, "--only"))
            o.only = v;
        else if (!strcmp(a, "--skip"))
            o.skip = v;
        else if (!strcmp(a, "--topics-out"))
            o.topics_out = v;
        else if (!strcmp(a, "--crash-out"))
            o.crash_out = v;
        else if (!strcmp(a, "--replay"))
            replay = v;
        else
            usage();
        if (strcmp(a, "-v") && strcmp(a, "-vv") && strcmp(a, "--strict"))
            i++;
    }
    if (!o.bootstrap)
        usage();
    if (replay)
        return fuzz_replay(o.bootstrap, replay, o.verbose);
    return fuzz_run(&o, &st);
}
