#include "util/logging.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <sys/time.h>
#include <time.h>

/* The level is process-wide (stderr is), read by every thread that logs
 * (the loop and the workers) while a broker may set it: an atomic with
 * relaxed order, a plain load on the logging path. */
static atomic_int lg_min = LG_INFO;

void lg_set_level(enum lg_level level)
{
    atomic_store_explicit(&lg_min, (int)level, memory_order_relaxed);
}

void lg_write(enum lg_level level, const char *fmt, ...)
{
    static const char *names[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};
    char line[2048], ts[32];
    struct timeval tv;
    struct tm tm;
    va_list ap;
    int n;

    if ((int)level < atomic_load_explicit(&lg_min, memory_order_relaxed))
        return;
    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    n = snprintf(line, sizeof(line), "%s.%03dZ %s ", ts, (int)(tv.tv_usec / 1000),
                 names[level]);
    va_start(ap, fmt);
    if (n > 0 && (size_t)n < sizeof(line))
        vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    va_end(ap);
    /* One fprintf per line keeps lines whole when stderr is shared. */
    fprintf(stderr, "%s\n", line);
}
