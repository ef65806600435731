/* A libFuzzer target over the same decoders as tests/unit/test_fuzz_decoders
 * (coverage-guided, where that test is random): clang only, built and run
 * by tests/fuzz/libfuzzer.sh, never by make.
 *
 * Input layout: byte 0 picks the decoder, byte 1 a message and byte 2 a
 * version where that applies, the rest is the input:
 *   0  a generated message (request or response): decode, and what
 *      decodes must encode to a fixed point
 *   1  a request header
 *   2  a record batch: validate and iterate; what validates must iterate
 *      to its record count
 *   3  a decompressor (byte 1 picks the codec)
 *   4  a server.properties text
 *   5  a metadata log record: what decodes must re-encode and decode
 * Built with -DFUZZ_SEED_MAIN it is instead a program that writes a seed
 * corpus of valid inputs (from tests/fuzz/fuzz_gen.c) to a directory. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cluster/meta_rec.h"
#include "fuzz/fuzz_gen.h"
#include "log/log_batch.h"
#include "proto/proto.h"
#include "proto/proto_desc.h"
#include "util/compress.h"
#include "util/props.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static arena_t fz_arena;

static int fz_nmsg(void)
{
    int n = 0;
    while (proto_msg_all[n])
        n++;
    return n;
}

static void fz_proto(const proto_msg_t *msg, int16_t v, const uint8_t *p, size_t n)
{
    void *m = arena_alloc(&fz_arena, msg->st->size);
    buf_t e1, e2;
    if (proto_msg_decode(msg, m, v, p, n, &fz_arena, NULL) < 0)
        return;
    buf_init(&e1);
    proto_msg_encode(msg, m, v, &e1);
    m = arena_alloc(&fz_arena, msg->st->size);
    /* an empty buf has no memory: give the decoder a real pointer */
    if (proto_msg_decode(msg, m, v, e1.len ? e1.p : (const uint8_t *)"", e1.len, &fz_arena, NULL) < 0)
        abort(); /* what we encode must decode */
    buf_init(&e2);
    proto_msg_encode(msg, m, v, &e2);
    if (e1.len != e2.len || (e1.len && memcmp(e1.p, e2.p, e1.len)))
        abort(); /* and reach a fixed point */
    buf_free(&e1);
    buf_free(&e2);
}

static void fz_batch(const uint8_t *p, size_t n)
{
    log_batch_limits_t lim;
    log_batch_hdr_t h;
    log_record_t rec;
    memset(&lim, 0, sizeof(lim));
    lim.ts_before_max_ms = INT64_MAX;
    lim.ts_after_max_ms = INT64_MAX;
    lim.now_ms = 1700000000000LL;
    int16_t e = log_batch_validate(p, n, &lim, &h);
    log_batch_iter_t *it = log_batch_iter_new(p, n);
    int count = 0, rc = -1;
    while (it && (rc = log_batch_iter_next(it, &rec)) == 1)
        count++;
    if (it)
        log_batch_iter_free(it);
    if (e == 0 && (rc != 0 || count != h.records_count))
        abort(); /* the validator and the iterator disagree */
}

static void fz_meta(const uint8_t *p, size_t n)
{
    meta_rec_t rec;
    buf_t again;
    if (meta_rec_decode(&rec, p, n, &fz_arena) != 0)
        return;
    buf_init(&again);
    meta_rec_encode(&rec, &again);
    if (meta_rec_decode(&rec, again.len ? again.p : (const uint8_t *)"", again.len, &fz_arena) != 0)
        abort();
    buf_free(&again);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static int nmsg;
    if (!nmsg) {
        arena_init(&fz_arena, 64 << 10);
        nmsg = fz_nmsg();
    }
    if (size < 3)
        return 0;
    const uint8_t *p = data + 3;
    size_t n = size - 3;
    arena_reset(&fz_arena);
    switch (data[0] % 6) {
    case 0: {
        const proto_msg_t *msg = proto_msg_all[data[1] % nmsg];
        fz_proto(msg, (int16_t)(msg->vmin + data[2] % (msg->vmax - msg->vmin + 1)), p, n);
        break;
    }
    case 1: {
        proto_req_header_t h;
        size_t hl;
        if (proto_req_header_decode(&h, p, n, &hl) == 0 && hl > n)
            abort();
        break;
    }
    case 2:
        fz_batch(p, n);
        break;
    case 3: {
        buf_t out;
        buf_init(&out);
        compress_decompress(1 + data[1] % 4, p, n, &out, 1 << 22);
        buf_free(&out);
        break;
    }
    case 4: {
        props_t props;
        int line;
        props_init(&props);
        props_parse(&props, (const char *)p, n, &line);
        props_free(&props);
        break;
    }
    default:
        fz_meta(p, n);
        break;
    }
    return 0;
}

#ifdef FUZZ_SEED_MAIN
/* Writes one seed file: the 3 selector bytes, then the input. */
static void fz_seed(const char *dir, int *k, uint8_t sel, uint8_t a, uint8_t b, const buf_t *in)
{
    char path[4096];
    snprintf(path, sizeof(path), "%s/seed-%05d", dir, (*k)++);
    FILE *f = fopen(path, "wb");
    if (!f) {
        perror(path);
        exit(1);
    }
    uint8_t hdr[3] = { sel, a, b };
    fwrite(hdr, 1, 3, f);
    fwrite(in->p, 1, in->len, f);
    fclose(f);
}

int main(int argc, char **argv)
{
    fuzz_gen_t g;
    int k = 0, nmsg = fz_nmsg();
    if (argc != 2) {
        fprintf(stderr, "usage: %s CORPUS_DIR\n", argv[0]);
        return 2;
    }
    arena_init(&fz_arena, 64 << 10);
    fuzz_gen_init(&g, 1, &fz_arena);
    for (int i = 0; i < nmsg; i++) {
        const proto_msg_t *msg = proto_msg_all[i];
        for (int16_t v = msg->vmin; v <= msg->vmax; v++) {
            buf_t b;
            buf_init(&b);
            proto_msg_encode(msg, fuzz_gen_msg(&g, msg, v), v, &b);
            fz_seed(argv[1], &k, 0, (uint8_t)i, (uint8_t)(v - msg->vmin), &b);
            buf_free(&b);
            arena_reset(&fz_arena);
        }
    }
    for (int i = 0; i < 40; i++) {
        buf_t b, c;
        buf_init(&b);
        fuzz_gen_batch(&g, &b);
        fz_seed(argv[1], &k, 2, 0, 0, &b);
        buf_init(&c);
        if (compress_compress(1 + i % 4, 0, b.p, b.len, &c) == 0)
            fz_seed(argv[1], &k, 3, (uint8_t)(i % 4), 0, &c);
        buf_free(&b);
        buf_free(&c);
        arena_reset(&fz_arena);
    }
    printf("%d seeds in %s\n", k, argv[1]);
    return 0;
}
#endif
