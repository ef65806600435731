#include "util/logging.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>

/* The loggers: root, then one per layer (the folders under src/). */
static const char *const lg_names[] = {"root",          "strand.util",    "strand.net",
                                       "strand.proto",  "strand.batch",   "strand.log",
                                       "strand.cluster", "strand.partition", "strand.coord",
                                       "strand.api",    "strand.broker",  NULL};
#define LG_NLOGGERS ((int)(sizeof(lg_names) / sizeof(lg_names[0])) - 1)
#define LG_UNSET (-100)

/* Levels are process-wide (stderr is), read by every thread that logs
 * (the loop and the workers) while a broker may set them: atomics with
 * relaxed order, a plain load on the logging path. lg_floor is the lowest
 * level any logger lets through, so that a line below it (most debug
 * lines) costs one load. */
static atomic_int lg_levels[LG_NLOGGERS] = {LG_INFO, LG_UNSET, LG_UNSET, LG_UNSET, LG_UNSET,
                                            LG_UNSET, LG_UNSET, LG_UNSET, LG_UNSET, LG_UNSET,
                                            LG_UNSET};
static atomic_int lg_floor = LG_INFO;

static int lg_load(int i)
{
    return atomic_load_explicit(&lg_levels[i], memory_order_relaxed);
}

static void lg_refloor(void)
{
    int floor = lg_load(0);
    for (int i = 1; i < LG_NLOGGERS; i++)
        if (lg_load(i) != LG_UNSET && lg_load(i) < floor)
            floor = lg_load(i);
    atomic_store_explicit(&lg_floor, floor, memory_order_relaxed);
}

void lg_set_level(enum lg_level level)
{
    atomic_store_explicit(&lg_levels[0], (int)level, memory_order_relaxed);
    lg_refloor();
}

const char *lg_logger_name(int i)
{
    return i >= 0 && i < LG_NLOGGERS ? lg_names[i] : NULL;
}

int lg_logger_find(const char *name)
{
    for (int i = 0; i < LG_NLOGGERS; i++)
        if (!strcmp(lg_names[i], name))
            return i;
    return -1;
}

enum lg_level lg_logger_level(int i)
{
    int l = i > 0 && i < LG_NLOGGERS ? lg_load(i) : LG_UNSET;
    return (enum lg_level)(l == LG_UNSET ? lg_load(0) : l);
}

void lg_logger_set(int i, bool set, enum lg_level level)
{
    if (i < 0 || i >= LG_NLOGGERS || (i == 0 && !set))
        return;
    atomic_store_explicit(&lg_levels[i], set ? (int)level : LG_UNSET, memory_order_relaxed);
    lg_refloor();
}

static const char *const lg_level_names[] = {"TRACE", "DEBUG", "INFO", "WARN", "ERROR", "FATAL"};

const char *lg_level_name(enum lg_level level)
{
    int i = (int)level - LG_TRACE;
    return i >= 0 && i < 6 ? lg_level_names[i] : "INFO";
}

int lg_level_parse(const char *name)
{
    for (int i = 0; i < 6; i++)
        if (!strcmp(lg_level_names[i], name))
            return i + LG_TRACE;
    return -2;
}

/* The logger of a source file: the folder after the last "src/" of its
 * path. Only called for lines that may be written. */
static int lg_logger_of(const char *file)
{
    const char *p = file, *q;
    while ((q = strstr(p, "src/")))
        p = q + 4;
    if (p == file)
        return 0;
    size_t n = strcspn(p, "/");
    for (int i = 1; i < LG_NLOGGERS; i++)
        if (strlen(lg_names[i]) == n + 7 && !strncmp(lg_names[i] + 7, p, n))
            return i;
    return 0;
}

static void lg_vwrite(enum lg_level level, const char *fmt, va_list ap)
{
    static const char *names[] = {"DEBUG", "INFO ", "WARN ", "ERROR"};
    char line[2048], ts[32];
    struct timeval tv;
    struct tm tm;
    int n;

    gettimeofday(&tv, NULL);
    gmtime_r(&tv.tv_sec, &tm);
    strftime(ts, sizeof(ts), "%Y-%m-%dT%H:%M:%S", &tm);
    n = snprintf(line, sizeof(line), "%s.%03dZ %s ", ts, (int)(tv.tv_usec / 1000),
                 names[level < LG_DEBUG ? 0 : level > LG_ERROR ? 3 : level]);
    if (n > 0 && (size_t)n < sizeof(line))
        vsnprintf(line + n, sizeof(line) - (size_t)n, fmt, ap);
    /* One fprintf per line keeps lines whole when stderr is shared. */
    fprintf(stderr, "%s\n", line);
}

void lg_write(enum lg_level level, const char *fmt, ...)
{
    va_list ap;

    if ((int)level < lg_load(0))
        return;
    va_start(ap, fmt);
    lg_vwrite(level, fmt, ap);
    va_end(ap);
}

void lg_write_at(enum lg_level level, const char *file, const char *fmt, ...)
{
    va_list ap;

    if ((int)level < atomic_load_explicit(&lg_floor, memory_order_relaxed) ||
        level < lg_logger_level(lg_logger_of(file)))
        return;
    va_start(ap, fmt);
    lg_vwrite(level, fmt, ap);
    va_end(ap);
}
