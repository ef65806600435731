/* Process log lines on stderr: "2026-11-30T03:40:00.123Z INFO  message".
 * Prefix lg_ (the log_ prefix belongs to the partition log layer). */
#ifndef STRAND_UTIL_LOGGING_H
#define STRAND_UTIL_LOGGING_H

enum lg_level { LG_DEBUG = 0, LG_INFO, LG_WARN, LG_ERROR };

/* Lines below this level are dropped; default LG_INFO. */
void lg_set_level(enum lg_level level);
void lg_write(enum lg_level level, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define lg_debug(...) lg_write(LG_DEBUG, __VA_ARGS__)
#define lg_info(...) lg_write(LG_INFO, __VA_ARGS__)
#define lg_warn(...) lg_write(LG_WARN, __VA_ARGS__)
#define lg_error(...) lg_write(LG_ERROR, __VA_ARGS__)

#endif
