/* leader-epoch-checkpoint (protocol/FORMATS.md §7.6), Kafka's text checkpoint format:
 *
 *   0\n                      version
 *   N\n                      entry count
 *   <epoch> <startOffset>\n  N times, both ascending
 *
 * Rewritten whole (tmp, rename) whenever the cache changes, which happens
 * once per leader change, not per append, and without an fsync: that
 * would stall the event loop once per partition at every leader change
 * (every start of a node). The log's next flush fsyncs it before its
 * recovery point passes the batches it covers, so after a crash an entry
 * can only be missing for batches past the recovery point, which the
 * recovery reads and puts back; a file cut short (malformed) makes the
 * open recover the whole log. */
#include "log/log_ecache.h"

#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log/log_ckpt.h"
#include "util/buf.h"
#include "util/logging.h"
#include "util/mem.h"

static void epoch_push(log_ecache_t *ec, int32_t epoch, int64_t start)
{
    if (ec->n == ec->cap) {
        ec->cap = ec->cap ? ec->cap * 2 : 8;
        ec->v = xrealloc(ec->v, sizeof(*ec->v) * (size_t)ec->cap);
    }
    ec->v[ec->n].epoch = epoch;
    ec->v[ec->n].start_offset = start;
    ec->n++;
}

static int epoch_parse_line(void *opaque, char **f)
{
    log_ecache_t *ec = opaque;
    char *e1, *e2;
    long long epoch, start;

    errno = 0;
    epoch = strtoll(f[0], &e1, 10);
    start = strtoll(f[1], &e2, 10);
    if (errno || *e1 || *e2 || epoch < 0 || epoch > INT32_MAX || start < 0)
        return -1;
    if (ec->n && (epoch <= ec->v[ec->n - 1].epoch || start < ec->v[ec->n - 1].start_offset))
        return -1;
    epoch_push(ec, (int32_t)epoch, start);
    return 0;
}

int log_ecache_init(log_ecache_t *ec, const char *dir)
{
    size_t n = strlen(dir) + 32;
    char *text;

    memset(ec, 0, sizeof(*ec));
    ec->path = xmalloc(n);
    snprintf(ec->path, n, "%s/leader-epoch-checkpoint", dir);
    text = log_ckpt_read_file(ec->path, NULL);
    if (!text)
        return errno == ENOENT ? 0 : -1;
    if (log_ckpt_parse(text, 2, epoch_parse_line, ec) < 0) {
        lg_warn("%s is malformed; rebuilding the leader epoch cache from the log", ec->path);
        ec->n = 0;
        ec->broken = 1;
    }
    free(text);
    return 0;
}

void log_ecache_free(log_ecache_t *ec)
{
    free(ec->v);
    free(ec->path);
    memset(ec, 0, sizeof(*ec));
}

int log_ecache_flush(log_ecache_t *ec)
{
    char line[64];
    buf_t b;
    int rc;

    buf_init(&b);
    snprintf(line, sizeof(line), "0\n%d\n", ec->n);
    buf_put(&b, line, strlen(line));
    for (int i = 0; i < ec->n; i++) {
        snprintf(line, sizeof(line), "%" PRId32 " %" PRId64 "\n", ec->v[i].epoch,
                 ec->v[i].start_offset);
        buf_put(&b, line, strlen(line));
    }
    rc = log_ckpt_write_unsynced(ec->path, b.p, b.len);
    buf_free(&b);
    if (rc == 0)
        ec->unsynced = 1;
    return rc;
}

int log_ecache_assign(log_ecache_t *ec, int32_t epoch, int64_t start_offset)
{
    if (epoch < 0 || start_offset < 0)
        return 0;
    if (ec->n) {
        const log_ecache_entry_t *last = &ec->v[ec->n - 1];
        if (last->epoch == epoch && start_offset >= last->start_offset)
            return 0;
    }
    while (ec->n && (ec->v[ec->n - 1].epoch >= epoch ||
                     ec->v[ec->n - 1].start_offset >= start_offset))
        ec->n--;
    epoch_push(ec, epoch, start_offset);
    return 1;
}

/* The cache and its file must agree: if the file was not rewritten, the
 * cache is put back as it was, so that a retry (or the next epoch) writes
 * the change again. A copy is only made when the cache would change, i.e.
 * once per leader epoch, not per append. */
int log_ecache_assign_save(log_ecache_t *ec, int32_t epoch, int64_t start_offset)
{
    log_ecache_entry_t *saved;
    int n = ec->n, e;

    if (epoch < 0 || start_offset < 0)
        return 0;
    if (n && ec->v[n - 1].epoch == epoch && start_offset >= ec->v[n - 1].start_offset)
        return 0;
    saved = xmalloc(sizeof(*saved) * (size_t)(n + 1));
    if (n)
        memcpy(saved, ec->v, sizeof(*saved) * (size_t)n);
    log_ecache_assign(ec, epoch, start_offset);
    if (log_ecache_flush(ec) == 0) {
        free(saved);
        return 0;
    }
    e = errno;
    if (n)
        memcpy(ec->v, saved, sizeof(*saved) * (size_t)n); /* cap >= n: it only grows */
    ec->n = n;
    free(saved);
    errno = e;
    return -1;
}

int32_t log_ecache_latest(const log_ecache_t *ec)
{
    return ec->n ? ec->v[ec->n - 1].epoch : -1;
}

int log_ecache_truncate_end(log_ecache_t *ec, int64_t end_offset)
{
    int n = ec->n;

    while (ec->n && ec->v[ec->n - 1].start_offset >= end_offset)
        ec->n--;
    return n != ec->n;
}

int log_ecache_truncate_start(log_ecache_t *ec, int64_t start_offset)
{
    int i = 0;

    /* i = number of entries that start below start_offset */
    while (i < ec->n && ec->v[i].start_offset < start_offset)
        i++;
    if (i == 0)
        return 0;
    ec->v[i - 1].start_offset = start_offset;
    if (i > 1) {
        memmove(ec->v, ec->v + i - 1, sizeof(*ec->v) * (size_t)(ec->n - i + 1));
        ec->n -= i - 1;
    }
    return 1;
}

void log_ecache_end_offset(const log_ecache_t *ec, int32_t epoch, int64_t leo, int64_t *end_offset,
                          int32_t *epoch_out)
{
    int i;

    *end_offset = -1;
    *epoch_out = -1;
    if (epoch < 0 || ec->n == 0)
        return;
    if (ec->v[ec->n - 1].epoch == epoch) {
        *epoch_out = epoch;
        *end_offset = leo;
        return;
    }
    /* i: the first entry with a larger epoch */
    for (i = 0; i < ec->n && ec->v[i].epoch <= epoch; i++)
        ;
    if (i == ec->n)
        return; /* newer than anything we know */
    *end_offset = ec->v[i].start_offset;
    /* older than everything we kept: Kafka answers with the requested
     * epoch and the first known start, so a follower truncates to it */
    *epoch_out = i == 0 ? epoch : ec->v[i - 1].epoch;
}

int32_t log_ecache_for_offset(const log_ecache_t *ec, int64_t offset)
{
    int32_t epoch = -1;

    for (int i = 0; i < ec->n && ec->v[i].start_offset <= offset; i++)
        epoch = ec->v[i].epoch;
    return epoch;
}
