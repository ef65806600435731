/* strand: a broker that speaks the Apache Kafka protocol.
 *
 *   strand [path/to/server.properties] [--override key=value]...
 *   strand format -t CLUSTER_ID -c path/to/server.properties [options]
 *   strand random-uuid
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "broker/broker.h"
#include "broker/broker_format.h"
#include "util/logging.h"

static void main_usage(void)
{
    fprintf(stderr, "usage: strand [server.properties] [--override key=value]...\n"
                    "       strand format -t CLUSTER_ID -c server.properties [--standalone | "
                    "--initial-controllers ID@HOST:PORT:DIRID,... | --no-initial-controllers] "
                    "[--ignore-formatted] [--release-version VERSION]\n"
                    "       strand random-uuid\n");
}

int main(int argc, char **argv)
{
    const char *path = NULL;
    char **overrides;
    int noverrides = 0;
    broker_config_t cfg;
    static broker_t broker; /* the one broker context */

    /* The storage tool's commands, as Kafka's kafka-storage has them. */
    if (argc > 1 && !strcmp(argv[1], "format"))
        return broker_format_main(argc - 1, argv + 1);
    if (argc > 1 && !strcmp(argv[1], "random-uuid"))
        return broker_random_uuid_main(argc - 1, argv + 1);
    overrides = calloc((size_t)argc, sizeof(char *));

    for (int i = 1; i < argc; i++) {
        if (!strcmp(argv[i], "--override") && i + 1 < argc) {
            overrides[noverrides++] = argv[++i];
        } else if (!strncmp(argv[i], "--override=", 11)) {
            overrides[noverrides++] = argv[i] + 11;
        } else if (!strcmp(argv[i], "-h") || !strcmp(argv[i], "--help")) {
            main_usage();
            free(overrides);
            return 0;
        } else if (argv[i][0] != '-' && !path) {
            path = argv[i];
        } else {
            main_usage();
            free(overrides);
            return 2;
        }
    }
    int rc = broker_config_load(&cfg, path, overrides, noverrides);
    free(overrides);
    if (rc < 0) {
        broker_config_free(&cfg);
        return 2;
    }
    if (broker_start(&broker, &cfg) < 0)
        return 1;
    return broker_run(&broker);
}
