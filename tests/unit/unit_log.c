/* unit_log: see unit_log.h. The batch layout is Kafka's (protocol/FORMATS.md),
 * written field by field. */
#include "tests/unit/unit_log.h"

#include <fcntl.h>
#include <ftw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "util/crc32c.h"

static int64_t unit_batch_ts(const unit_batch_t *b, int i)
{
    return b->ts ? b->ts[i] : b->ts0 + i * b->dts;
}

/* The records: attributes, timestamp and offset deltas, a null key, the
 * value, no headers; each behind its varint length. */
static void unit_batch_records(const unit_batch_t *b, buf_t *out)
{
    int64_t first = unit_batch_ts(b, 0);
    for (int i = 0; i < b->n; i++) {
        buf_t one, val;
        buf_init(&one);
        buf_init(&val);
        b->value(&val, i, b->arg);
        buf_put_i8(&one, 0);
        buf_put_varlong(&one, unit_batch_ts(b, i) - first);
        buf_put_varint(&one, i);
        buf_put_varint(&one, -1);
        buf_put_varint(&one, (int32_t)val.len);
        buf_put(&one, val.p, val.len);
        buf_put_varint(&one, 0);
        buf_put_varint(out, (int32_t)one.len);
        buf_put(out, one.p, one.len);
        buf_free(&one);
        buf_free(&val);
    }
}

uint8_t *unit_batch(const unit_batch_t *b, size_t *len)
{
    buf_t out, recs;
    int64_t maxts = -1;
    uint8_t *bytes;

    buf_init(&out);
    buf_init(&recs);
    unit_batch_records(b, &recs);
    for (int i = 0; i < b->n; i++)
        if (unit_batch_ts(b, i) > maxts)
            maxts = unit_batch_ts(b, i);
    buf_put_i64(&out, 0);                          /* baseOffset */
    buf_put_i32(&out, (int32_t)(49 + recs.len));   /* batchLength */
    buf_put_i32(&out, -1);                         /* partitionLeaderEpoch */
    buf_put_i8(&out, 2);                           /* magic */
    buf_put_u32(&out, 0);                          /* crc, below */
    buf_put_i16(&out, 0);                          /* attributes */
    buf_put_i32(&out, b->n - 1);                   /* lastOffsetDelta */
    buf_put_i64(&out, unit_batch_ts(b, 0));        /* baseTimestamp */
    buf_put_i64(&out, maxts);                      /* maxTimestamp */
    buf_put_i64(&out, b->pid);
    buf_put_i16(&out, b->pepoch);
    buf_put_i32(&out, b->seq);
    buf_put_i32(&out, b->n);                       /* records count */
    buf_put(&out, recs.p, recs.len);
    uint32_t crc = crc32c(0, out.p + 21, out.len - 21);
    out.p[17] = (uint8_t)(crc >> 24);
    out.p[18] = (uint8_t)(crc >> 16);
    out.p[19] = (uint8_t)(crc >> 8);
    out.p[20] = (uint8_t)crc;
    bytes = malloc(out.len);
    memcpy(bytes, out.p, out.len);
    *len = out.len;
    buf_free(&out);
    buf_free(&recs);
    return bytes;
}

static int unit_rm_cb(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st;
    (void)flag;
    (void)ftw;
    return remove(path);
}

void unit_rm_rf(const char *path)
{
    nftw(path, unit_rm_cb, 16, FTW_DEPTH | FTW_PHYS);
}

char *unit_slurp(const char *path)
{
    int fd = open(path, O_RDONLY);
    char *p = calloc(1, 65536);

    if (fd < 0) {
        free(p);
        return NULL;
    }
    if (read(fd, p, 65535) < 0)
        p[0] = '\0';
    close(fd);
    return p;
}
