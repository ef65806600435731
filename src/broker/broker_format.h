/* `strand format` and `strand random-uuid`: Kafka 4.4's kafka-storage
 * format and random-uuid, with its options, checks, messages and exit
 * codes, on the same files. */
#ifndef STRAND_BROKER_FORMAT_H
#define STRAND_BROKER_FORMAT_H

/* strand format -t CLUSTER_ID -c FILE [--standalone |
 * --initial-controllers ID@HOST:PORT:DIRID,... | --no-initial-controllers]
 * [--ignore-formatted] [--release-version VERSION]
 * (argv[0] is "format"). Writes meta.properties into every log dir (and
 * metadata.log.dir) and, on a controller, the bootstrap checkpoint into
 * the metadata log dir (broker_boot.h). Returns the exit code: 0, or 1
 * after printing why on stderr (as kafka-storage, also for usage). */
int broker_format_main(int argc, char **argv);
/* strand random-uuid: prints a new cluster id. Returns the exit code. */
int broker_random_uuid_main(int argc, char **argv);

#endif
