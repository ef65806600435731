/* Process log lines on stderr: "2026-11-30T03:40:00.123Z INFO  message".
 * Prefix lg_ (the log_ prefix belongs to the partition log layer).
 *
 * Lines go through named loggers, as a Kafka broker's log4j loggers,
 * which DescribeConfigs and IncrementalAlterConfigs show and change as
 * BROKER_LOGGER resources: "root", and one per layer ("strand.net",
 * "strand.log", ...; a line's logger is its source file's layer). A
 * logger's level is its own once set, else root's. Levels are Kafka's:
 * TRACE (Strand writes nothing finer than DEBUG), DEBUG, INFO, WARN,
 * ERROR, FATAL (Strand has no fatal lines: nothing is written). */
#ifndef STRAND_UTIL_LOGGING_H
#define STRAND_UTIL_LOGGING_H

#include <stdbool.h>

enum lg_level { LG_TRACE = -1, LG_DEBUG = 0, LG_INFO, LG_WARN, LG_ERROR, LG_FATAL };

/* Lines below this level are dropped by root, and by every logger whose
 * level is not set; default LG_INFO. */
void lg_set_level(enum lg_level level);
/* A line of the root logger. */
void lg_write(enum lg_level level, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A line of the logger of source file `file` (its layer's). */
void lg_write_at(enum lg_level level, const char *file, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#define lg_debug(...) lg_write_at(LG_DEBUG, __FILE__, __VA_ARGS__)
#define lg_info(...) lg_write_at(LG_INFO, __FILE__, __VA_ARGS__)
#define lg_warn(...) lg_write_at(LG_WARN, __FILE__, __VA_ARGS__)
#define lg_error(...) lg_write_at(LG_ERROR, __FILE__, __VA_ARGS__)

/* ---- the loggers ---- */

/* The i-th logger's name (0 is "root"), NULL past the last. */
const char *lg_logger_name(int i);
/* The index of a logger by name, or -1. */
int lg_logger_find(const char *name);
/* Its level: its own, or root's when not set. */
enum lg_level lg_logger_level(int i);
/* Sets its level; unset (back to root's) when !set. Root is always set. */
void lg_logger_set(int i, bool set, enum lg_level level);
/* Kafka's name of a level ("TRACE" ... "FATAL"), and the level of a name
 * (exact, upper case, as log4j's names); -2 when it is none. */
const char *lg_level_name(enum lg_level level);
int lg_level_parse(const char *name);

#endif
