/* Replay of an internal topic's partition (coord_replay.h). */
#include "coord/coord_replay.h"

#include <stdlib.h>
#include <unistd.h>

#include "partition/part_read.h"
#include "util/logging.h"
#include "util/mem.h"

#define COORD_REPLAY_READ (1 << 20)

void coord_replay_begin(coord_replay_t *r, part_t *part)
{
    r->next = part_log_start(part);
    r->end = part_log_end(part);
}

/* Applies the records of one batch at or after r->next. */
static void coord_replay_batch(coord_replay_t *r, const uint8_t *p, size_t len)
{
    log_batch_hdr_t hdr;
    log_record_t rec;
    int n;

    if (log_batch_hdr_parse(p, len, &hdr) < 0)
        return;
    if (LOG_BATCH_ATTR_IS_CONTROL(hdr.attributes)) {
        if (r->control)
            r->control(r->ctx, r->part, &hdr, p, len);
        return;
    }
    log_batch_iter_t *it = log_batch_iter_new(p, len);
    if (!it) {
        lg_error("%s-%d: unreadable batch at offset %lld skipped", r->topic, r->part,
                 (long long)hdr.base_offset);
        return;
    }
    while ((n = log_batch_iter_next(it, &rec)) == 1) {
        if (rec.offset < r->next)
            continue;
        r->records++;
        r->record(r->ctx, r->part, &hdr, &rec);
    }
    if (n < 0)
        lg_error("%s-%d: corrupt batch at offset %lld", r->topic, r->part,
                 (long long)hdr.base_offset);
    log_batch_iter_free(it);
}

/* Applies the whole batches of buf, moving r->next past each. */
static void coord_replay_buf(coord_replay_t *r, const uint8_t *buf, size_t got)
{
    size_t pos = 0;

    while (pos + LOG_BATCH_LOG_OVERHEAD <= got) {
        int64_t sz = log_batch_total_size(buf + pos, got - pos);
        log_batch_hdr_t hdr;
        if (sz < LOG_BATCH_HDR_SIZE || (size_t)sz > got - pos ||
            log_batch_hdr_parse(buf + pos, (size_t)sz, &hdr) < 0)
            break;
        coord_replay_batch(r, buf + pos, (size_t)sz);
        int64_t next = hdr.base_offset + hdr.last_offset_delta + 1;
        if (next > r->next)
            r->next = next;
        pos += (size_t)sz;
    }
}

int64_t coord_replay_some(coord_replay_t *r, part_t *part, int64_t budget)
{
    int64_t done = 0;

    while (done < budget && r->next < r->end) {
        int fd;
        int64_t file_pos;
        int32_t len;
        int16_t err = part_read_local(part, r->next, COORD_REPLAY_READ, r->end, &fd, &file_pos,
                                      &len);
        if (err == KERR_OFFSET_OUT_OF_RANGE && r->next < part_log_start(part)) {
            r->next = part_log_start(part); /* retention moved the start */
            continue;
        }
        if (err || len <= 0) {
            if (err)
                lg_error("%s-%d: replay stopped at offset %lld: %s", r->topic, r->part,
                         (long long)r->next, kerr_name(err));
            if (fd >= 0)
                close(fd);
            return -1;
        }
        uint8_t *buf = xmalloc((size_t)len);
        ssize_t got = pread(fd, buf, (size_t)len, file_pos);
        close(fd);
        int64_t before = r->next;
        if (got > 0)
            coord_replay_buf(r, buf, (size_t)got);
        free(buf);
        done += len;
        if (r->next == before)
            return -1; /* no progress: a gap or a bad read; the rest is lost */
    }
    return r->next < r->end ? done : -1;
}
