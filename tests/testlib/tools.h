/* tools: running commands from a test, Kafka's own tools above all (the
 * jars scripts/kafka-ref.sh fetches), and reading what they print. */
#ifndef STRAND_TESTLIB_TOOLS_H
#define STRAND_TESTLIB_TOOLS_H

#include <stddef.h>

/* Everything cmd prints (stdout, and stderr when cmd redirects it); fails
 * the test when it does not exit 0. The caller frees. */
char *tl_cmd_output(const char *cmd);
/* Kafka's jars as a java -cp argument into out: 0, or -1 when there is no
 * java, STRAND_SRCDIR is not set, or the jars are not to be had (the
 * caller skips what needs them). */
int tl_kafka_classpath(char *out, size_t cap);

#endif
