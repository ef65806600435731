/* What a topic's configs do to a produced batch before it is appended. */
#include <stdlib.h>
#include <string.h>

#include "log/log_batch.h"
#include "partition/part_int.h"
#include "util/kerr.h"
#include "util/mem.h"


static int part_codec_level(const topic_cfg_t *cfg, int codec)
{
    switch (codec) {
    case LOG_BATCH_CODEC_GZIP: return cfg->gzip_level < 0 ? 0 : cfg->gzip_level;
    case LOG_BATCH_CODEC_LZ4: return cfg->lz4_level;
    case LOG_BATCH_CODEC_ZSTD: return cfg->zstd_level;
    default: return 0;
    }
}

/* Kafka's LogValidator rewrites a batch whose codec is not the topic's
 * compression.type (unless that is "producer"): same records, timestamps,
 * headers, producer id, epoch and sequence, new codec. */
int16_t part_recompress(const part_t *part, const uint8_t *batch, size_t len, buf_t *out,
                        int *rewritten)
{
    const topic_cfg_t *cfg = &part->topic->cfg;
    log_batch_hdr_t h;
    log_batch_build_t opt;
    log_batch_iter_t *it;
    log_record_t *recs;
    int n = 0, r = 0;

    *rewritten = 0;
    if (cfg->compression == TOPIC_COMPRESSION_PRODUCER)
        return 0;
    if (log_batch_hdr_parse(batch, len, &h) < 0 || h.records_count < 0)
        return KERR_CORRUPT_MESSAGE;
    if (LOG_BATCH_ATTR_CODEC(h.attributes) == cfg->compression)
        return 0;
    if (!(it = log_batch_iter_new(batch, len)))
        return KERR_CORRUPT_MESSAGE;
    recs = xmalloc(((size_t)h.records_count + 1) * sizeof(*recs));
    while (n <= h.records_count && (r = log_batch_iter_next(it, &recs[n])) == 1)
        n++;
    log_batch_build_init(&opt);
    opt.leader_epoch = h.leader_epoch;
    opt.attributes = (int16_t)((h.attributes & ~LOG_BATCH_ATTR_CODEC_MASK) | cfg->compression);
    opt.level = part_codec_level(cfg, cfg->compression);
    opt.producer_id = h.producer_id;
    opt.producer_epoch = h.producer_epoch;
    opt.base_sequence = h.base_sequence;
    opt.log_append_time = h.max_timestamp;
    int16_t err = 0;
    if (r < 0 || n != h.records_count)
        err = KERR_CORRUPT_MESSAGE;
    else if (log_batch_build(out, &opt, recs, n) < 0)
        err = KERR_UNKNOWN_SERVER_ERROR;
    else
        *rewritten = 1;
    log_batch_iter_free(it);
    free(recs);
    return err;
}
