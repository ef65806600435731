/* The file descriptor budget: see fdb.h. */
#include "util/fdb.h"

#include <dirent.h>
#include <stdio.h>
#include <sys/resource.h>

/* Open descriptors, from /proc/self/fd (less the one reading it); -1 if
 * it cannot be read. */
static int64_t fdb_open_count(void)
{
    DIR *d = opendir("/proc/self/fd");
    int64_t n = 0;

    if (!d)
        return -1;
    while (readdir(d))
        n++;
    closedir(d);
    return n - 3; /* ".", "..", and the directory's own descriptor */
}

static int64_t fdb_reserve(int64_t limit)
{
    return limit / 10 > FDB_RESERVE_MIN ? limit / 10 : FDB_RESERVE_MIN;
}

int64_t fdb_available(void)
{
    struct rlimit rl;
    int64_t open, left;

    if (getrlimit(RLIMIT_NOFILE, &rl) < 0 || rl.rlim_cur == RLIM_INFINITY)
        return INT64_MAX;
    if ((open = fdb_open_count()) < 0)
        return INT64_MAX; /* no way to tell: let the opens say */
    left = (int64_t)rl.rlim_cur - open - fdb_reserve((int64_t)rl.rlim_cur);
    return left > 0 ? left : 0;
}

int fdb_check(int64_t more, const char *what, char *msg, size_t cap)
{
    struct rlimit rl;

    if (more <= fdb_available())
        return 0;
    getrlimit(RLIMIT_NOFILE, &rl);
    snprintf(msg, cap,
             "Not enough file descriptors: %s needs %lld more open files; this broker may open "
             "%lld (RLIMIT_NOFILE) and has %lld open, keeping %lld for connections. Raise the "
             "limit (ulimit -n) or create fewer partitions.",
             what, (long long)more, (long long)rl.rlim_cur, (long long)fdb_open_count(),
             (long long)fdb_reserve((int64_t)rl.rlim_cur));
    return -1;
}
